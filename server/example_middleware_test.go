package server_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// Middleware in net/http's shape: one that logs every message a client
// sends, and one that refuses a tool to read-only callers. A custom
// method is served behind them like the methods MCP defines.
func Example_middleware() {
	logMessages := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			res, err := next(ctx, req)
			fmt.Printf("%s (stateless %v) error %v\n", req.Method, req.Stateless, err != nil)
			return res, err
		}
	}
	readOnly := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			// The name as the server decodes it: a spelling with spaces or
			// escapes is the same tool.
			if req.Method == protocol.MethodToolsCall && req.Name() == "delete" {
				return intercept.Result{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "read-only: delete is not allowed")
			}
			return next(ctx, req)
		}
	}
	s := server.New(protocol.Implementation{Name: "notes", Version: "1"}, &server.Options{
		Receiving: []intercept.Middleware{logMessages, readOnly},
	})
	server.AddTool(s, &protocol.Tool{Name: "delete"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "deleted", nil
	})
	s.HandleMethod("notes/count", func(ctx context.Context, req *server.Request) (any, error) {
		return map[string]int{"notes": 3}, nil
	})

	a, b := memory.NewPipe(jsonrpc.Limits{})
	conn := s.Connect(context.Background(), a)
	defer conn.Close()
	c, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, &client.Options{ProtocolVersion: protocol.Version20260728})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = c.Call(context.Background(), "delete", nil)
	fmt.Println(err)
	var count struct {
		Notes int `json:"notes"`
	}
	if err := c.CallMethod(context.Background(), "notes/count", nil, &count); err != nil {
		log.Fatal(err)
	}
	fmt.Println("notes:", count.Notes)
	// Output:
	// server/discover (stateless true) error false
	// tools/call (stateless true) error true
	// jsonrpc error -32600: read-only: delete is not allowed
	// notes/count (stateless true) error false
	// notes: 3
}

type userKey struct{}

// The calling identity, in both eras: an HTTP middleware in front of the
// Streamable HTTP handler validates the caller and puts the result in the
// request's context; the tool handler finds it with ctx.Value whether the
// client speaks the stateless protocol or holds a legacy session, and
// sees the request's header with req.Header.
func ExampleRequest_Header() {
	s := server.New(protocol.Implementation{Name: "whoami", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "whoami"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		user, _ := ctx.Value(userKey{}).(string)
		agent := http.Header(req.Header()).Get("User-Agent")
		return fmt.Sprintf("%s (via %s)", user, agent), nil
	})
	authenticate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// A real server validates a bearer token here.
			if r.Header.Get("Authorization") != "Bearer alice-token" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			r.Header.Del("Authorization") // consumed: handlers never see it
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, "alice")))
		})
	}
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(authenticate(h))
	defer ts.Close()
	defer h.Close()

	header := http.Header{"Authorization": {"Bearer alice-token"}, "User-Agent": {"notes-app/1.0"}}
	for _, version := range []string{protocol.Version20260728, protocol.Version20251125} {
		c, err := client.Connect(context.Background(), &streamable.Transport{URL: ts.URL, Header: header},
			&client.Options{ProtocolVersion: version})
		if err != nil {
			log.Fatal(err)
		}
		res, err := c.Call(context.Background(), "whoami", nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(version, res.Content[0].Text)
		c.Close()
	}
	// Output:
	// 2026-07-28 alice (via notes-app/1.0)
	// 2025-11-25 alice (via notes-app/1.0)
}
