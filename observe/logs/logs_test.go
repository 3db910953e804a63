package logs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/observe/logs"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// TestLines: a line per request on each side, at Debug when it went well
// (a tool error too: the request did), at Warn with the error when it
// failed, with the attributes Options.Attrs adds; a logger that takes
// neither level gets nothing.
func TestLines(t *testing.T) {
	var buf bytes.Buffer
	l := logs.New(&logs.Options{
		Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Attrs:  func(context.Context) []slog.Attr { return []slog.Attr{slog.String("tag", "from-attrs")} },
	})
	c := connect(t, l)
	c.Call(t.Context(), "echo", map[string]string{"message": "x"})
	c.Call(t.Context(), "fail", nil)
	c.CallMethod(t.Context(), "x/bogus", nil, nil)

	type line struct{ Level, Msg, Server, Method, Target, Outcome, Era, Error, Tag string }
	want := map[line]bool{
		{"DEBUG", "request", "s", "tools/call", "echo", "ok", "legacy", "", "from-attrs"}:                                           true,
		{"DEBUG", "call", "up", "tools/call", "echo", "ok", "", "", "from-attrs"}:                                                   true,
		{"DEBUG", "request", "s", "tools/call", "fail", "tool_error", "legacy", "", "from-attrs"}:                                   true,
		{"DEBUG", "call", "up", "tools/call", "fail", "tool_error", "", "", "from-attrs"}:                                           true,
		{"WARN", "request", "s", "x/bogus", "", "error", "legacy", "jsonrpc error -32601: method not found: x/bogus", "from-attrs"}: true,
		{"WARN", "call", "up", "x/bogus", "", "error", "", "jsonrpc error -32601: method not found: x/bogus", "from-attrs"}:         true,
	}
	dec := json.NewDecoder(&buf)
	for {
		var l line
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if l.Method == protocol.MethodInitialize || l.Method == "notifications/initialized" {
			continue
		}
		if !want[l] {
			t.Errorf("unexpected line %+v", l)
		}
		delete(want, l)
	}
	for l := range want {
		t.Errorf("no line %+v", l)
	}

	buf.Reset()
	quiet := connect(t, logs.New(&logs.Options{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError}))}))
	quiet.CallMethod(t.Context(), "x/bogus", nil, nil)
	if buf.Len() != 0 {
		t.Errorf("a logger at Error got %s", buf.Bytes())
	}
}

// connect serves the tools echo and fail, logged by l as server "s", to a
// client whose requests l logs as sent to server "up".
func connect(t *testing.T, l *logs.Log) *client.Client {
	t.Helper()
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{l.Middleware("s")}})
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "fail"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "", io.ErrUnexpectedEOF
	})
	a, b := memory.NewPipe(jsonrpc.Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.Run(ctx, a)
	c, err := client.Connect(ctx, client.StreamTransport{Stream: b}, &client.Options{
		ProtocolVersion: protocol.LatestLegacyVersion,
		Sending:         []intercept.Middleware{l.SendingMiddleware("up")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
