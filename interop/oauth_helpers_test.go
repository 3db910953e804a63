package interop

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/auth/resourceserver"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// startOIDCProvider runs oidc-provider (testdata/oidc-provider.mjs) on a
// free loopback port and returns its issuer.
func startOIDCProvider(t *testing.T) string {
	t.Helper()
	requireNode(t)
	nodePackageBin(t, "oidc-provider", "lib/index.js")
	script, _ := filepath.Abs(filepath.Join("testdata", "oidc-provider.mjs"))
	return startReady(t, "oidc-provider", exec.Command(nodeBin, script, nodeModules, fmt.Sprint(freePort(t))))
}

// startZitadel builds and runs zitadel's example OpenID Provider
// (zitadelop, a module of its own) on a free loopback port, with the
// given redirect URIs registered for its clients, and returns its issuer.
func startZitadel(t *testing.T, redirects ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(t.TempDir(), "zitadelop")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(filepath.Dir(file), "zitadelop")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building zitadelop: %v\n%s", err, out)
	}
	return startReady(t, "zitadelop", exec.Command(bin, fmt.Sprint(freePort(t)), strings.Join(redirects, ",")))
}

// startReady starts cmd and returns what follows "listening on " in its
// output; the process is stopped when the test ends.
func startReady(t *testing.T, name string, cmd *exec.Cmd) string {
	t.Helper()
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, buf.String())
		}
	})
	re := regexp.MustCompile(`listening on (\S+)`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := re.FindStringSubmatch(buf.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start:\n%s", name, buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// protectedServer serves ferry's MCP server with three tools behind the
// resource server middleware: whoami (says who calls, with what scopes),
// read (mcp:read, as every request) and write (mcp:write besides). It
// returns the MCP endpoint's URL.
func protectedServer(t *testing.T, issuer string, verifier resourceserver.Verifier, scopes []string) string {
	t.Helper()
	s := server.New(protocol.Implementation{Name: "protected", Version: "1"}, nil)
	whoami := func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		c, ok := intercept.CallerFrom(ctx)
		if !ok {
			return "", fmt.Errorf("no caller")
		}
		return fmt.Sprintf("%s %s", c.Subject, strings.Join(c.Scopes, " ")), nil
	}
	server.AddTool(s, &protocol.Tool{Name: "whoami"}, whoami)
	server.AddTool(s, &protocol.Tool{Name: "write"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "written", nil
	})
	h := streamablehandler.New(s, nil)
	t.Cleanup(func() { h.Close() })
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	rs := &resourceserver.Config{
		Resource:             srv.URL + "/mcp",
		AuthorizationServers: []string{issuer},
		Verifier:             verifier,
		Scopes:               scopes,
		ToolScopes:           map[string][]string{"write": {"mcp:write"}},
	}
	rs.Mount(mux, "/mcp", h)
	return rs.Resource
}

// browser plays the user's browser and the user: it follows the
// authorization server's redirects, fills in its login form (any field
// named login, username or password) and submits its consent form, until
// the authorization server redirects to redirectPrefix; it returns that
// URL without fetching it (the client's loopback listener, or a script,
// gets it). With deny, the user aborts at the consent page.
type browser struct {
	user, password string
	deny           bool
	hc             *http.Client
}

func newBrowser(user, password string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{user: user, password: password, hc: &http.Client{
		Jar:           jar,
		Timeout:       20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

var (
	formRE   = regexp.MustCompile(`(?is)<form[^>]*>.*?</form>`)
	actionRE = regexp.MustCompile(`(?i)action="([^"]*)"`)
	inputRE  = regexp.MustCompile(`(?i)<input[^>]*>`)
	attrRE   = regexp.MustCompile(`(?i)(name|value)="([^"]*)"`)
	abortRE  = regexp.MustCompile(`(?i)href="([^"]*abort[^"]*)"`)
)

func (b *browser) authorize(t *testing.T, authURL, redirectPrefix string) string {
	t.Helper()
	next, method, form := authURL, "GET", url.Values(nil)
	for step := 0; step < 20; step++ {
		var req *http.Request
		if method == "POST" {
			req, _ = http.NewRequest("POST", next, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			req, _ = http.NewRequest("GET", next, nil)
		}
		resp, err := b.hc.Do(req)
		if err != nil {
			t.Fatalf("browser: %s %s: %v", method, next, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		base := resp.Request.URL
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			u, _ := base.Parse(loc)
			if strings.HasPrefix(u.String(), redirectPrefix) {
				return u.String()
			}
			next, method = u.String(), "GET"
			continue
		}
		if resp.StatusCode != 200 {
			t.Fatalf("browser: %s %s answered %s: %s", method, next, resp.Status, body)
		}
		f := formRE.Find(body)
		if f == nil {
			t.Fatalf("browser: no form at %s:\n%s", next, body)
		}
		if b.deny && !regexp.MustCompile(`(?i)name="(login|username|password)"`).Match(f) {
			if m := abortRE.FindSubmatch(body); m != nil {
				u, _ := base.Parse(string(m[1]))
				next, method = u.String(), "GET"
				continue
			}
		}
		action := ""
		if m := actionRE.FindSubmatch(f); m != nil {
			action = string(m[1])
		}
		u, _ := base.Parse(action)
		form = url.Values{}
		for _, in := range inputRE.FindAll(f, -1) {
			var name, value string
			for _, a := range attrRE.FindAllSubmatch(in, -1) {
				if strings.EqualFold(string(a[1]), "name") {
					name = string(a[2])
				} else {
					value = string(a[2])
				}
			}
			switch name {
			case "":
				continue
			case "login", "username":
				value = b.user
			case "password":
				value = b.password
			}
			form.Set(name, value)
		}
		next, method = u.String(), "POST"
	}
	t.Fatal("browser: too many steps")
	return ""
}

// ferryLogin runs "ferry login" with --no-browser, plays the browser at
// the URL it prints, and delivers the final redirect to its loopback
// listener; it returns ferry's result.
func (e *e2e) ferryLogin(t *testing.T, b *browser, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ferryBin, append(args, "--no-browser")...)
	cmd.Env = os.Environ()
	for k, v := range e.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.WaitDelay = 5 * time.Second
	var out syncBuffer
	cmd.Stdout = &out
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	var mu sync.Mutex
	urls := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			errOut.WriteString(line + "\n")
			mu.Unlock()
			if s := strings.TrimSpace(line); strings.HasPrefix(s, "http") {
				select {
				case urls <- s:
				default:
				}
			}
		}
	}()
	select {
	case authURL := <-urls:
		u, _ := url.Parse(authURL)
		redirect := u.Query().Get("redirect_uri")
		back := b.authorize(t, authURL, redirect)
		resp, err := http.Get(back) // the browser lands on ferry's listener
		if err != nil {
			t.Fatalf("delivering the redirect to ferry: %v", err)
		}
		resp.Body.Close()
	case <-done:
	case <-ctx.Done():
	}
	<-done
	err := cmd.Wait()
	mu.Lock()
	r := result{stdout: out.String(), stderr: errOut.String()}
	mu.Unlock()
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ferry login: %v\n%s", err, r.stderr)
	}
	return r
}
