package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/internal/writelog"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// Tool calls that arrive together over stdio are answered in one write.
func TestStdioAnswersBatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := server.New(protocol.Implementation{Name: "batch", Version: "1"}, nil)
		server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
			Message string `json:"message"`
		}) (string, error) {
			return in.Message, nil
		})
		in, feed := net.Pipe()
		out := &writelog.Log{}
		done := make(chan error)
		go func() { done <- s.Run(context.Background(), stdio.NewServerStream(in, out, jsonrpc.Limits{})) }()
		send := func(lines ...string) {
			if _, err := feed.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		out.Take()
		var calls []string
		for i := 1; i <= 3; i++ {
			calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m%d"}}}`, i, i))
		}
		send(calls...)
		got := out.Take()
		if len(got) != 1 || strings.Count(got[0], "\n") != 3 {
			t.Fatalf("3 answers written as %q, want one write", got)
		}
		for i := 1; i <= 3; i++ {
			if !strings.Contains(got[0], fmt.Sprintf(`"id":%d,"result":{"content":[{"type":"text","text":"m%d"}]}`, i, i)) {
				t.Errorf("answer %d missing from %s", i, got[0])
			}
		}
		feed.Close()
		if err := <-done; err != nil {
			t.Errorf("Run after the client closed its side: %v, want nil", err)
		}
	})
}

// A subscriptions/listen stream ends, with its completion result, as soon
// as the client closes its side of stdio: nothing could cancel it any
// more, and the connection is not held open for the drain.
func TestStdioListenEndsWithInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := server.New(protocol.Implementation{Name: "listen", Version: "1"}, nil)
		in, feed := net.Pipe()
		out := &writelog.Log{}
		done := make(chan error)
		go func() { done <- s.Run(context.Background(), stdio.NewServerStream(in, out, jsonrpc.Limits{})) }()
		listen := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"
		if _, err := feed.Write([]byte(listen)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := strings.Join(out.Take(), ""); !strings.Contains(got, "notifications/subscriptions/acknowledged") {
			t.Fatalf("before the close: %s", got)
		}
		start := time.Now()
		feed.Close()
		<-done
		got := strings.Join(out.Take(), "")
		if !strings.Contains(got, `"id":1,"result":{`) || !strings.Contains(got, `"resultType":"complete"`) {
			t.Errorf("after the close: %s, want the listen request's completion", got)
		}
		if d := time.Since(start); d > 10*time.Millisecond {
			t.Errorf("the connection closed %v after the input, want at once", d)
		}
	})
}

// Run returns nil when the client closes its side, and the cause when the
// stream fails.
func TestRunEnd(t *testing.T) {
	broken := errors.New("disk on fire")
	for _, tc := range []struct {
		name  string
		input io.Reader
		want  error
	}{
		{"input ends", strings.NewReader(""), nil},
		{"input fails", iotest.ErrReader(broken), broken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := server.New(protocol.Implementation{Name: "end", Version: "1"}, nil)
			err := s.Run(context.Background(), stdio.NewServerStream(tc.input, io.Discard, jsonrpc.Limits{}))
			if tc.want == nil && err != nil {
				t.Errorf("Run: %v, want nil", err)
			}
			if tc.want != nil && (!errors.Is(err, tc.want) || !errors.Is(err, jsonrpc.ErrClosed)) {
				t.Errorf("Run: %v, want jsonrpc.ErrClosed and %v", err, tc.want)
			}
		})
	}
}
