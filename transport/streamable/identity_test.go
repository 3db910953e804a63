package streamable_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/sse"
	"github.com/ferrymcp/ferry/transport/ssehandler"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

type userKey struct{}

// authenticate is the HTTP middleware of the test: the caller named in
// X-User goes in the request's context, as a token validator's result
// would.
func authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), userKey{}, r.Header.Get("X-User"))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// identityServer answers "whoami" with what its handler and its
// middleware see of the caller.
func identityServer() *server.Server {
	seen := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if req.Method == protocol.MethodToolsCall {
				ctx = context.WithValue(ctx, middlewareKey{}, fmt.Sprint(ctx.Value(userKey{})))
			}
			return next(ctx, req)
		}
	}
	s := server.New(protocol.Implementation{Name: "identity", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{seen}})
	server.AddTool(s, &protocol.Tool{Name: "whoami"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return fmt.Sprintf("ctx=%v middleware=%v header=%v", ctx.Value(userKey{}), ctx.Value(middlewareKey{}),
			http.Header(req.Header()).Get("X-User")), nil
	})
	return s
}

type middlewareKey struct{}

// TestIdentityBothEras: what an HTTP middleware puts in the request's
// context reaches the tool handler (and the server's middleware) in
// every era and HTTP transport, and so does the request's header. On
// a12c33f a legacy session's handler saw ctx=<nil>: the POST's context
// was lost.
func TestIdentityBothEras(t *testing.T) {
	const want = "ctx=alice middleware=alice header=alice"
	header := http.Header{"X-User": {"alice"}}
	for _, v := range []string{protocol.Version20260728, protocol.Version20251125, protocol.Version20250326} {
		t.Run("streamable "+v, func(t *testing.T) {
			leakcheck.Check(t)
			h := streamablehandler.New(identityServer(), nil)
			ts := httptest.NewServer(authenticate(h))
			defer func() { h.Close(); ts.CloseClientConnections(); ts.Close() }()
			c := connectHTTP(t, ts.URL, &client.Options{ProtocolVersion: v}, &streamable.Transport{Header: header})
			res, err := c.Call(t.Context(), "whoami", nil)
			if err != nil || res.Content[0].Text != want {
				t.Fatalf("%+v %v, want %q", res, err, want)
			}
		})
	}
	t.Run("sse 2024-11-05", func(t *testing.T) {
		leakcheck.Check(t)
		h := ssehandler.New(identityServer(), nil)
		ts := httptest.NewServer(authenticate(h))
		defer func() { h.Close(); ts.CloseClientConnections(); ts.Close() }()
		c, err := client.Connect(t.Context(), &sse.Transport{URL: ts.URL + "/sse", Header: header}, &client.Options{ProtocolVersion: protocol.Version20241105})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		res, err := c.Call(t.Context(), "whoami", nil)
		if err != nil || res.Content[0].Text != want {
			t.Fatalf("%+v %v, want %q", res, err, want)
		}
	})
}
