package streamable_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/internal/pipenet"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// tickServer has a tool that reports progress, 1 KiB at a time, every
// 100 ms until it is cancelled.
func tickServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "tick", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "tick"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		for i := 0; ; i++ {
			if err := req.Progress(ctx, float64(i), 0, strings.Repeat("t", 1<<10)); err != nil {
				return "", err
			}
			select {
			case <-ctx.Done():
				return "", context.Cause(ctx)
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	return s
}

// closedWithin reads c until the server closes it, or limit passes on
// the fake clock, and returns how long that took.
func closedWithin(c net.Conn, limit time.Duration) time.Duration {
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	io.Copy(io.Discard, c)
	return time.Since(start)
}

// readsSlowly reads c a byte a second until the server closes it, stops
// writing to it (nothing comes for a minute), or limit passes, and
// returns how long the server kept writing. (A legacy request runs on
// when its stream is dropped, its events kept for a resumption: the
// server stops writing, and closes the connection once the request
// ends.)
func readsSlowly(c net.Conn, limit time.Duration) time.Duration {
	start := time.Now()
	last := start
	var b [1]byte
	for time.Since(start) < limit {
		c.SetReadDeadline(time.Now().Add(time.Minute))
		if _, err := c.Read(b[:]); err != nil {
			if os.IsTimeout(err) {
				return last.Sub(start)
			}
			break
		}
		last = time.Now()
		time.Sleep(time.Second)
	}
	return time.Since(start)
}

func rawPost(c net.Conn, headers, body string) {
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n%s", headers, len(body), body)
}

// TestHandlerBoundsSlowClients: under an http.Server that bounds only the
// headers (as ferry's examples did), the handler itself closes a request
// whose body trickles in, and drops a stream whose client reads a byte a
// second (1 KiB events), at its ReadTimeout and WriteTimeout (30 s each
// by default). On a12c33f
// both were held for as long as the client liked: still open after ten
// minutes.
func TestHandlerBoundsSlowClients(t *testing.T) {
	const limit = 10 * time.Minute
	tests := []struct {
		name string
		run  func(l *pipenet.Listener) time.Duration
	}{
		{"a body at a byte a second", func(l *pipenet.Listener) time.Duration {
			c := l.Dial()
			defer c.Close()
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 10000\r\n\r\n")
			go func() {
				for range 10000 {
					time.Sleep(time.Second)
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}()
			took := closedWithin(c, limit)
			c.Close()
			time.Sleep(2 * time.Second) // the trickle finds the connection closed
			return took
		}},
		{"a stateless progress stream not read", func(l *pipenet.Listener) time.Duration {
			c := l.Dial()
			defer c.Close()
			rawPost(c, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: tick\r\n",
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tick","_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
			if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
				return 0
			}
			return readsSlowly(c, limit)
		}},
		{"a legacy progress stream not read", func(l *pipenet.Listener) time.Duration {
			c := l.Dial()
			defer c.Close()
			br := bufio.NewReader(c)
			rawPost(c, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				return 0
			}
			io.Copy(io.Discard, resp.Body)
			sid := resp.Header.Get("Mcp-Session-Id")
			hdr := "Mcp-Session-Id: " + sid + "\r\nMCP-Protocol-Version: 2025-11-25\r\n"
			rawPost(c, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			if resp, err = http.ReadResponse(br, nil); err != nil {
				return 0
			}
			io.Copy(io.Discard, resp.Body)
			rawPost(c, hdr, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tick","_meta":{"progressToken":1}}}`)
			if _, err = http.ReadResponse(br, nil); err != nil {
				return 0
			}
			return readsSlowly(c, limit)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := streamablehandler.New(tickServer(), nil)
				srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
				l := pipenet.Listen()
				go srv.Serve(l)
				took := tt.run(l)
				t.Logf("closed after %v", took)
				if took == 0 || took >= limit {
					t.Errorf("the connection was held for %v", took)
				} else if took > 32*time.Second {
					t.Errorf("closed after %v, later than the 30 s bound", took)
				}
				h.Close()
				srv.Close()
			})
		})
	}
}
