package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/auth"
	"github.com/ferrymcp/ferry/auth/metadata"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/transport/httperr"
)

// The authorization of HTTP servers (OAuth): "ferry login" runs the
// authorization code flow in the user's browser and keeps the token in
// ferry's token store (a file of mode 0600 per server, in the user's
// configuration directory); every other command sends the stored token,
// refreshed when it expired, and never starts a login by itself: a
// server that refuses is reported (exit code 3), and at a terminal ferry
// offers to log in and run the command again.

// authFlags are the flags of login.
type authFlags struct {
	noBrowser bool
	port      int
	scopes    listFlag
}

// authorizers keeps one Authorizer per server of the run.
type authorizers struct {
	mu sync.Mutex
	m  map[string]*auth.Authorizer
}

// usesOAuth reports whether ferry authorizes the requests of an entry:
// an HTTP or SSE server whose entry does not set Authorization itself.
func usesOAuth(s *config.Server) bool {
	if s.Transport == config.Stdio || s.URL == "" {
		return false
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return false
		}
	}
	return true
}

// authorizer returns the Authorizer of an HTTP server entry: its
// pre-registered client and scopes from the entry's oauth (or auth)
// member, the token store, and, when interactive, the authorization code
// grant with a loopback redirect and the browser.
func (o *cli) authorizer(s *config.Server, interactive bool) *auth.Authorizer {
	a := &auth.Authorizer{
		Server:     s.URL,
		Store:      &auth.FileStore{},
		ClientName: "ferry",
		Scopes:     o.auth.scopes,
	}
	if o.verbose {
		a.Logger = slog.New(slog.NewTextHandler(o.term.writer(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	redirect := ""
	if oc := s.OAuth; oc != nil {
		if len(a.Scopes) == 0 {
			a.Scopes = oc.Scopes
		}
		switch {
		case oc.RedirectURI != "":
			redirect = oc.RedirectURI
		case oc.CallbackPort != 0:
			// As Claude Code registers it.
			redirect = "http://localhost:" + strconv.Itoa(oc.CallbackPort) + "/callback"
		}
		if oc.ClientID != "" {
			secret := oc.ClientSecret
			if secret == "" {
				secret = os.Getenv("MCP_CLIENT_SECRET") // Claude Code's way of passing it
			}
			a.Clients = []auth.RegisteredClient{{ID: oc.ClientID, Secret: secret, RedirectURL: redirect}}
		}
	}
	if o.auth.port != 0 {
		redirect = "http://127.0.0.1:" + strconv.Itoa(o.auth.port) + "/callback"
	}
	if interactive {
		a.Grant = &auth.AuthorizationCode{RedirectURL: redirect, Authorize: auth.Loopback(o.openBrowser)}
	}
	return a
}

// wrapHTTP is the host's WrapHTTP: the requests of a server go through
// its Authorizer, which sends the stored token (without a grant: it
// never starts a login by itself).
func (o *cli) wrapHTTP(s *config.Server, rt http.RoundTripper) http.RoundTripper {
	if !usesOAuth(s) {
		return rt
	}
	o.authz.mu.Lock()
	defer o.authz.mu.Unlock()
	if o.authz.m == nil {
		o.authz.m = map[string]*auth.Authorizer{}
	}
	a := o.authz.m[s.Name]
	if a == nil {
		a = o.authorizer(s, false)
		o.authz.m[s.Name] = a
	}
	return a.RoundTripper(rt)
}

// openBrowser shows the authorization URL: always printed, and opened in
// the browser unless --no-browser (or there is none to open).
func (o *cli) openBrowser(ctx context.Context, authURL string) error {
	o.logf("To authorize ferry, open this URL in a browser:\n\n  %s\n", authURL)
	if o.auth.noBrowser {
		o.logf("Waiting for the authorization server to send the browser back...")
		return nil
	}
	if err := startBrowser(authURL); err != nil {
		o.logf("(could not open a browser: %v)", err)
	} else {
		o.logf("A browser was opened; waiting for the authorization...")
	}
	return nil
}

// startBrowser opens url with the system's opener, or $BROWSER.
func startBrowser(url string) error {
	var cmd *exec.Cmd
	switch b := os.Getenv("BROWSER"); {
	case b != "":
		cmd = exec.Command(b, url)
	case runtime.GOOS == "darwin":
		cmd = exec.Command("open", url)
	case runtime.GOOS == "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("no display")
		}
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// loginTimeout bounds a login, the user's time in the browser included.
const loginTimeout = 5 * time.Minute

var loginCommand = &command{
	name:    "login",
	args:    "SERVER|URL",
	summary: "log in to an HTTP server (OAuth) and keep the token",
	help: `Authorizes ferry with an HTTP server the way the MCP specification defines
it: discovery of the server's authorization server, client registration (the
entry's "oauth" object, else dynamic registration), a browser login with PKCE
and a loopback redirect. The token is kept (mode 0600, in ferry's
configuration directory) and sent, refreshed when it expires, by every later
command. A pre-registered client's secret can come from MCP_CLIENT_SECRET.`,
	example: `ferry login notion
ferry login https://mcp.example.com/mcp --no-browser`,
	setup: func(fs *flag.FlagSet, o *cli) runFunc {
		o.loginFlags(fs)
		return cmdLogin
	},
}

var logoutCommand = &command{
	name:    "logout",
	args:    "SERVER|URL",
	summary: "forget the token of an HTTP server",
	help: `Forgets the token ferry keeps for the server. The client registration is
kept, for the next login.`,
	example: "ferry logout notion",
	setup:   noFlags(cmdLogout),
}

var authStatusCommand = &command{
	name:    "auth status",
	args:    "[SERVER|URL]",
	summary: "who ferry is logged in as, where, until when",
	help: `Lists the HTTP servers ferry authorizes, or one: the account, the scopes,
when the token expires and the file it is kept in. Never a secret.`,
	example: "ferry auth status\nferry auth status notion --format json",
	setup:   noFlags(cmdAuthStatus),
}

// loginFlags declares the flags of login; a refused command that offers
// a login at the terminal uses their zero values.
func (o *cli) loginFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.auth.noBrowser, "no-browser", false, "print the authorization URL instead of opening a browser")
	fs.IntVar(&o.auth.port, "port", 0, "the `PORT` of the loopback redirect URI http://127.0.0.1:PORT/callback (default: the one registered before)")
	fs.Var(&o.auth.scopes, "scope", "ask for `SCOPE` instead of the server's choice (repeatable)")
}

// cmdLogin runs "ferry login NAME|URL".
func cmdLogin(ctx context.Context, o *cli) error {
	s, err := o.authTarget()
	if err != nil {
		return err
	}
	return o.login(ctx, s)
}

// login authorizes ferry with the server s and stores the token.
func (o *cli) login(ctx context.Context, s *config.Server) error {
	if !usesOAuth(s) {
		return usageErrorf("%s is not an HTTP server that ferry authorizes (a stdio server, or its entry sets Authorization)", s.Name)
	}
	ctx, stop := context.WithTimeout(ctx, loginTimeout)
	defer stop()
	a := o.authorizer(s, true)
	tok, err := a.Login(ctx)
	if err != nil {
		return &authError{server: s.Name, err: err}
	}
	if o.json {
		return o.printJSON(statusOf(s, &auth.Record{Token: tok}))
	}
	fmt.Fprintf(o.stdout, "Logged in to %s: %s\n", s.Name, tok)
	return nil
}

// cmdLogout runs "ferry logout NAME|URL": the token is forgotten (the
// client registration is kept, for the next login).
func cmdLogout(ctx context.Context, o *cli) error {
	s, err := o.authTarget()
	if err != nil {
		return err
	}
	if err := o.authorizer(s, false).Logout(ctx); err != nil {
		return err
	}
	if !o.json {
		fmt.Fprintf(o.stdout, "Logged out of %s\n", s.Name)
		return nil
	}
	return o.printJSON(map[string]any{"server": s.Name, "loggedIn": false})
}

// cmdAuthStatus runs "ferry auth status [NAME|URL]".
func cmdAuthStatus(ctx context.Context, o *cli) error {
	var servers []*config.Server
	if len(o.args) > 0 || len(o.adhoc) > 0 {
		s, err := o.authTarget()
		if err != nil {
			return err
		}
		servers = []*config.Server{s}
	} else {
		all, err := o.loadServers()
		if err != nil {
			return err
		}
		for _, s := range all {
			if usesOAuth(s) {
				servers = append(servers, s)
			}
		}
	}
	store := &auth.FileStore{}
	var out []authStatus
	for _, s := range servers {
		rec, err := store.Load(context.Background(), s.URL)
		if err != nil {
			return err
		}
		st := statusOf(s, rec)
		st.File, _ = store.Path(s.URL)
		out = append(out, st)
	}
	if o.json {
		return o.printJSON(out)
	}
	if len(out) == 0 {
		fmt.Fprintln(o.stdout, "No HTTP server in the configuration.")
	}
	for _, st := range out {
		fmt.Fprintf(o.stdout, "%s (%s): %s\n", st.Server, st.URL, st.describe())
	}
	return nil
}

// authStatus is what "ferry auth status" says of a server; never a
// secret.
type authStatus struct {
	Server      string    `json:"server"`
	URL         string    `json:"url"`
	LoggedIn    bool      `json:"loggedIn"`
	Issuer      string    `json:"issuer,omitempty"`
	ClientID    string    `json:"clientId,omitempty"`
	Scopes      []string  `json:"scopes,omitempty"`
	Expires     time.Time `json:"expires,omitzero"`
	Expired     bool      `json:"expired,omitempty"`
	Refreshable bool      `json:"refreshable,omitempty"`
	File        string    `json:"file,omitempty"`
}

func statusOf(s *config.Server, rec *auth.Record) authStatus {
	st := authStatus{Server: s.Name, URL: s.URL}
	if rec == nil || rec.Token == nil {
		return st
	}
	t := rec.Token
	st.LoggedIn, st.Issuer, st.ClientID, st.Scopes, st.Expires = true, t.Issuer, t.ClientID, t.Granted, t.Expiry
	st.Refreshable = t.RefreshToken != ""
	st.Expired = !t.Expiry.IsZero() && time.Now().After(t.Expiry)
	return st
}

func (st authStatus) describe() string {
	if !st.LoggedIn {
		return "not logged in"
	}
	s := "logged in with " + st.Issuer
	if len(st.Scopes) > 0 {
		s += ", scopes " + strings.Join(st.Scopes, " ")
	}
	switch {
	case st.Expired && st.Refreshable:
		s += ", token expired (refreshed at the next use)"
	case st.Expired:
		s += ", token expired (log in again)"
	case !st.Expires.IsZero():
		s += ", token expires " + st.Expires.Local().Format(time.RFC3339)
	}
	return s
}

// authTarget returns the server a login, logout or status names: an
// entry of the configuration, or an HTTP URL.
func (o *cli) authTarget() (*config.Server, error) {
	if len(o.args) == 0 {
		if s, err := o.adhocServer(); s != nil || err != nil {
			return s, err
		}
		return nil, usageErrorf("name a server or give its URL: ferry %s SERVER|URL", o.cmd.name)
	}
	if isURL(o.args[0]) {
		return o.adhocServer()
	}
	servers, err := o.loadServers()
	if err != nil {
		return nil, err
	}
	for _, s := range servers {
		if s.Name == o.args[0] {
			if s.Err != nil {
				return nil, s.Err
			}
			return s, nil
		}
	}
	return nil, usageErrorf("no server named %q (configured: %s)", o.args[0], serverNames(servers))
}

// authError is a login that did not give a token: the authorization
// server or the user refused it, or it failed (exit code 3).
type authError struct {
	server string
	err    error
}

func (e *authError) Error() string { return "logging in to " + e.server + ": " + e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

// refused returns the refusal (401 or 403) in err, if any.
func refused(err error) *httperr.StatusError {
	var se *httperr.StatusError
	if errors.As(err, &se) && (se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden) {
		return se
	}
	return nil
}

// offerLogin asks, at a terminal, whether to log in to a server that
// refused a command's requests; it reports whether the login succeeded
// (then the command runs again). The login asks for the scopes the
// refusal names with those granted before: a 403 insufficient_scope is
// a step-up.
func (o *cli) offerLogin(ctx context.Context, err error) bool {
	if err == nil || o.json || o.term == nil || o.cmd == loginCommand {
		return false
	}
	se := refused(err)
	if se == nil {
		return false
	}
	var s *config.Server
	var he *host.Error
	if errors.As(err, &he) {
		s = o.serverEntry(he.Server)
	}
	if s == nil {
		s = o.serverAt(se.URL)
	}
	if s == nil || !usesOAuth(s) {
		return false
	}
	if !oauthChallenge(se.WWWAuthenticate) {
		o.logf("%s refused the request (%s) and offers no OAuth login; pass the credentials it wants as a header: "+
			"--header 'Authorization: Bearer TOKEN' after its URL, or \"headers\" in its entry of the configuration.", s.Name, se.Status)
		return false
	}
	if !o.term.ask {
		return false
	}
	if len(o.auth.scopes) == 0 {
		if c, ok := metadata.FindChallenge(metadata.ParseChallenges([]string{se.WWWAuthenticate}), "Bearer"); ok && c.Param(metadata.ParamError) == metadata.ErrorInsufficientScope {
			var before []string
			if rec, _ := (&auth.FileStore{}).Load(context.Background(), s.URL); rec != nil && rec.Token != nil {
				before = rec.Token.Scopes
			}
			o.auth.scopes = append(before, c.Scopes()...)
		}
	}
	o.logf("%s refused the request (%s).", s.Name, se.Status)
	// The question goes where elicitations are asked: on the terminal
	// itself when stderr is piped (2>&1 | tee log), with the reason, as
	// the line above went to the pipe.
	if o.term.prompts != o.term.w {
		o.term.askf("%s refused the request (%s). ", s.Name, se.Status)
	}
	o.term.askf("Log in to %s now? [Y/n] ", s.Name)
	line, _ := readLine(o.term.in)
	if a := strings.ToLower(strings.TrimSpace(line)); a != "" && a != "y" && a != "yes" {
		return false
	}
	if lerr := o.login(ctx, s); lerr != nil {
		o.logf("%v", lerr)
		return false
	}
	o.authz.mu.Lock()
	o.authz.m = nil // the new token is read from the store
	o.authz.mu.Unlock()
	return true
}

// oauthChallenge reports whether a refusal's WWW-Authenticate is an MCP
// server's OAuth challenge: Bearer with the address of its protected
// resource metadata, where a login starts. A static token's Bearer
// challenge (a realm, an error) does not name it, and a login there
// would end at a registration endpoint that does not exist.
func oauthChallenge(wwwAuthenticate string) bool {
	c, ok := metadata.FindChallenge(metadata.ParseChallenges([]string{wwwAuthenticate}), "Bearer")
	return ok && c.Param(metadata.ParamResourceMetadata) != ""
}

// serverAt returns the entry whose URL is u, among those the command
// read.
func (o *cli) serverAt(u string) *config.Server {
	for _, s := range o.loaded {
		if s.URL == u {
			return s
		}
	}
	return nil
}

// serverEntry returns the entry named name among those the command
// read (an ad-hoc URL's entry cannot be read twice: reading takes the URL
// out of the arguments).
func (o *cli) serverEntry(name string) *config.Server {
	for _, s := range o.loaded {
		if s.Name == name {
			return s
		}
	}
	return nil
}
