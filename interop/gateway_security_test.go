package interop

// Security issue 29 through `ferry serve` and the official
// server-everything: two clients, each with its own gateway token. A
// server's question goes only to the client whose request caused it
// (finding 1), and an isolated server gives each stateless caller a
// process of its own (finding 4).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// The tokens of the two clients of launchSecureGateway.
const (
	aliceToken = "alice-token-29"
	bobToken   = "bob-token-29"
)

// launchSecureGateway runs `ferry serve` with two bearer tokens for
// server-everything twice: "everything", one process shared by every
// client, and "isolated", with "isolation": "session". It is stopped when
// the test ends.
func launchSecureGateway(t *testing.T) string {
	t.Helper()
	bin := ferryBinary(t)
	everything := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	entry := map[string]any{"command": nodeBin, "args": []string{everything, "stdio"}}
	isolated := map[string]any{"command": nodeBin, "args": []string{everything, "stdio"}, "isolation": "session"}
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": entry, "isolated": isolated}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", cfg, "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "FERRY_GATEWAY_TOKENS="+aliceToken+","+bobToken)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &gatewayRun{cmd: cmd, dir: t.TempDir()}
	t.Cleanup(func() {
		if err := g.stop(); err != nil {
			t.Error(err)
		}
	})
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`^ferry serve: (http://[0-9.:]+)/mcp`)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			if m := re.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case g.url = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("ferry serve did not say where it listens")
	}
	waitReady(t, g.url)
	return g.url
}

// waitReady waits for the gateway's servers to be connected.
func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the servers behind ferry serve did not get ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tokenClient connects to url with token, in version's era.
func tokenClient(ctx context.Context, t *testing.T, url, version, token string, o client.Options) *client.Client {
	t.Helper()
	o.ProtocolVersion = version
	tr := &streamable.Transport{URL: url, Header: http.Header{"Authorization": {"Bearer " + token}}}
	c, err := client.Connect(ctx, tr, &o)
	if err != nil {
		t.Fatalf("connect %s (%s): %v", url, version, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestGatewayQuestionsStayWithTheirClient: while alice's long call runs
// on the shared server-everything, bob triggers an elicitation. Alice is
// never asked bob's question (on b211c63 she was, and bob got her
// answer); bob gets his own question, or an error.
func TestGatewayQuestionsStayWithTheirClient(t *testing.T) {
	url := launchSecureGateway(t)
	legacy, stateless := protocol.LatestLegacyVersion, protocol.Version20260728
	cases := []struct {
		name, path, prefix string
		alice, bob         string
		bobElicits         bool
	}{
		{"aggregated legacy", "/mcp", "everything__", legacy, legacy, false},
		{"aggregated stateless", "/mcp", "everything__", stateless, stateless, false},
		{"aggregated mixed", "/mcp", "everything__", legacy, stateless, false},
		{"aggregated bob elicits", "/mcp", "everything__", stateless, legacy, true},
		{"own endpoint legacy", "/servers/everything/mcp", "", legacy, legacy, false},
		{"own endpoint stateless bob elicits", "/servers/everything/mcp", "", stateless, stateless, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var mu sync.Mutex
			var aliceAsked []string
			alice := tokenClient(ctx, t, url+tc.path, tc.alice, aliceToken, client.Options{
				Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					mu.Lock()
					aliceAsked = append(aliceAsked, p.Message)
					mu.Unlock()
					content, err := elicitFormValues(p.RequestedSchema)
					return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: content}, err
				},
			})
			bobOpts := client.Options{}
			bobAsked := 0
			if tc.bobElicits {
				bobOpts.Elicitation = func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					mu.Lock()
					bobAsked++
					mu.Unlock()
					return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
				}
			}
			bob := tokenClient(ctx, t, url+tc.path, tc.bob, bobToken, bobOpts)
			running := make(chan struct{})
			var once sync.Once
			aliceDone := make(chan error, 1)
			go func() {
				pctx := client.WithProgress(ctx, func(*protocol.ProgressParams) { once.Do(func() { close(running) }) })
				res, err := alice.Call(pctx, tc.prefix+"trigger-long-running-operation", map[string]any{"duration": 2, "steps": 4})
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error: %+v", res.Content)
				}
				aliceDone <- err
			}()
			select {
			case <-running:
			case err := <-aliceDone:
				t.Fatalf("alice's long call ended before its first progress: %v", err)
			}
			res, err := bob.Call(ctx, tc.prefix+"trigger-elicitation-request", nil)
			if err := <-aliceDone; err != nil {
				t.Errorf("alice's long call: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(aliceAsked) > 0 {
				t.Errorf("alice was asked bob's question: %q", aliceAsked)
			}
			switch {
			case err != nil:
				t.Logf("bob: %v", err)
			case res.IsError:
				t.Logf("bob: tool error %s", joinContentText(res.Content))
			case !tc.bobElicits:
				t.Errorf("bob, who cannot answer, got a result: %s", joinContentText(res.Content))
			case bobAsked != 1:
				t.Errorf("bob got a result without being asked: %s", joinContentText(res.Content))
			default:
				t.Logf("bob answered his own question: %s", joinContentText(res.Content))
			}
		})
	}
}

// TestGatewayIsolatedStatelessCallers: on an isolated server, what one
// stateless caller stores (server-everything's session resource) another
// cannot read (on b211c63 both shared one process and bob read it); the
// caller itself reads it back.
func TestGatewayIsolatedStatelessCallers(t *testing.T) {
	url := launchSecureGateway(t) + "/servers/isolated/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	v := protocol.Version20260728
	alice := tokenClient(ctx, t, url, v, aliceToken, client.Options{})
	bob := tokenClient(ctx, t, url, v, bobToken, client.Options{})
	res, err := alice.Call(ctx, "gzip-file-as-resource", map[string]any{
		"name": "alice-note.gz", "data": "data:text/plain,alice-secret", "outputType": "resourceLink"})
	if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].URI == "" {
		t.Fatalf("alice stores a note: %+v, %v", res, err)
	}
	uri := res.Content[0].URI
	if _, err := alice.ReadResource(ctx, uri); err != nil {
		t.Errorf("alice reads her own note %s: %v", uri, err)
	}
	if got, err := bob.ReadResource(ctx, uri); err == nil {
		t.Errorf("bob read alice's note %s: %+v", uri, got)
	} else if !strings.Contains(err.Error(), "not found") {
		t.Logf("bob: %v", err)
	}
}
