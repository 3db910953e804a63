package resourceserver

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// callerSeen is a server whose read tool and receiving middleware report
// the caller they see, behind a resource server with verifier v.
func callerSeen(t *testing.T, issuer string, v Verifier) (p *protected, fromMiddleware, fromTool chan *intercept.Caller) {
	fromMiddleware, fromTool = make(chan *intercept.Caller, 1), make(chan *intercept.Caller, 1)
	record := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if req.Method == protocol.MethodToolsCall {
				fromMiddleware <- req.Caller()
			}
			return next(ctx, req)
		}
	}
	s := server.New(protocol.Implementation{Name: "files", Version: "1"},
		&server.Options{Receiving: []intercept.Middleware{record}})
	server.AddTool(s, &protocol.Tool{Name: "read"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		c, _ := intercept.CallerFrom(ctx)
		fromTool <- c
		return "read", nil
	})
	return protect(t, issuer, v, s), fromMiddleware, fromTool
}

// TestOneCallerEverywhere: the caller Protect verified is the one
// intercept.Caller the server's receiving middleware (Request.Caller) and
// the tool (intercept.CallerFrom) see, named by its issuer and subject,
// with the roles its token grants.
func TestOneCallerEverywhere(t *testing.T) {
	is := newIssuer(t)
	p, fromMiddleware, fromTool := callerSeen(t, is.srv.URL, &JWT{Issuer: is.srv.URL})
	claims := is.claims(p.resource)
	claims["roles"] = []any{"reader", 7, "auditor"}
	resp, body := p.call(t, is.token(t, is.key, "k1", claims), "read", true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	mw, tool := <-fromMiddleware, <-fromTool
	if mw == nil || mw != tool {
		t.Fatalf("middleware saw %+v, the tool %+v: want one caller", mw, tool)
	}
	wantID := `"` + is.srv.URL + `" subject "alice"`
	if mw.ID != wantID || mw.Subject != "alice" || mw.ClientID != "cli" || !slices.Equal(mw.Roles, []string{"reader", "auditor"}) {
		t.Errorf("caller %+v, want ID %s and roles reader, auditor", mw, wantID)
	}
}

// fixedVerifier accepts every token as its caller (nil for none).
type fixedVerifier struct{ caller *intercept.Caller }

func (v fixedVerifier) Verify(context.Context, string, string) (*intercept.Caller, error) {
	return v.caller, nil
}

// TestVerifierCallerNamed: a caller whose Verifier gave it no ID is named
// by its issuer and subject (or client), in a copy: the Verifier's caller,
// which may be shared, is not changed. A Verifier that returns no caller
// and no error gets 503, not a panic.
func TestVerifierCallerNamed(t *testing.T) {
	tests := []struct {
		name   string
		caller *intercept.Caller
		status int
		wantID string
	}{
		{"subject", &intercept.Caller{Issuer: "https://as", Subject: "ann", Scopes: []string{"files:read"}}, 200, `"https://as" subject "ann"`},
		{"client", &intercept.Caller{Issuer: "https://as", ClientID: "bot", Scopes: []string{"files:read"}}, 200, `"https://as" client "bot"`},
		{"own ID", &intercept.Caller{ID: "ann@as", Issuer: "https://as", Subject: "ann", Scopes: []string{"files:read"}}, 200, "ann@as"},
		{"no caller", nil, http.StatusServiceUnavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var given intercept.Caller
			if tt.caller != nil {
				given = *tt.caller
			}
			p, _, fromTool := callerSeen(t, "https://as", fixedVerifier{tt.caller})
			resp, body := p.call(t, "any", "read", true)
			if resp.StatusCode != tt.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tt.status)
			}
			if tt.status != http.StatusOK {
				return
			}
			if c := <-fromTool; c.ID != tt.wantID {
				t.Errorf("the tool saw ID %q, want %q", c.ID, tt.wantID)
			}
			if tt.caller.ID != given.ID {
				t.Errorf("the Verifier's caller was changed: ID %q", tt.caller.ID)
			}
		})
	}
}
