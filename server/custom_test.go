package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// TestCustomNotification: a custom method's handler also serves its
// notifications, behind the middleware.
func TestCustomNotification(t *testing.T) {
	var seen []string
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{
		func(next intercept.Handler) intercept.Handler {
			return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
				seen = append(seen, "middleware "+req.Method)
				return next(ctx, req)
			}
		}}})
	s.HandleMethod("acme/ping", func(ctx context.Context, req *server.Request) (any, error) {
		seen = append(seen, fmt.Sprintf("handler %s id valid %v params %s", req.Method, req.ID.IsValid(), req.Params()))
		return nil, nil
	})
	m, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","method":"acme/ping","params":{"n":1}}`), jsonrpc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	handle(s, context.Background(), m, nil, nil)
	if got, want := strings.Join(seen, ";"), `middleware acme/ping;handler acme/ping id valid false params {"n":1}`; got != want {
		t.Errorf("saw %q, want %q", got, want)
	}
}

// TestHandleMethodPanics: the methods MCP defines that the server serves
// cannot be taken over, as http.Handle refuses a bad pattern.
func TestHandleMethodPanics(t *testing.T) {
	h := func(ctx context.Context, req *server.Request) (any, error) { return nil, nil }
	for _, tc := range []struct {
		method string
		h      server.MethodHandler
		panic  string
	}{
		{protocol.MethodToolsCall, h, `HandleMethod("tools/call"): only methods MCP does not define`},
		{protocol.MethodInitialize, h, "only methods MCP does not define"},
		{"", h, "only methods MCP does not define"},
		{"acme/x", nil, `method "acme/x": nil handler`},
		{"acme/x", h, ""},
	} {
		got := func() (msg string) {
			defer func() {
				if p := recover(); p != nil {
					msg = fmt.Sprint(p)
				}
			}()
			newServer().HandleMethod(tc.method, tc.h)
			return ""
		}()
		if tc.panic == "" && got != "" || !strings.Contains(got, tc.panic) {
			t.Errorf("HandleMethod(%q): panic %q, want %q", tc.method, got, tc.panic)
		}
	}
}
