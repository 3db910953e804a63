package httpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/internal/pipenet"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/httpserver"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

func mcpServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "bounds", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	return s
}

// closedAfter returns how long, on the fake clock, the server took to
// close c: reads until EOF or an error.
func closedAfter(c net.Conn) time.Duration {
	start := time.Now()
	io.Copy(io.Discard, c)
	return time.Since(start)
}

// serve runs a handler for s under the server New makes in a bubble.
func serve(t *testing.T, h http.Handler, opts *httpserver.Options) (*pipenet.Listener, func()) {
	l := pipenet.Listen()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- httpserver.Serve(ctx, l, h, opts) }()
	return l, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}

// TestSlowClients: a body trickled at a byte a second, headers that never
// end, and an idle kept-alive connection are each closed at their bound;
// a well-behaved request on another connection is served meanwhile.
func TestSlowClients(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := streamablehandler.New(mcpServer(), nil)
		l, stop := serve(t, h, nil)
		defer stop()
		defer h.Close()

		tests := []struct {
			name  string
			send  func(c net.Conn)
			bound time.Duration
		}{
			{"headers that never end", func(c net.Conn) {
				io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
			}, 10 * time.Second}, // ReadHeaderTimeout's default
			{"a body at a byte a second", func(c net.Conn) {
				fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", 100000)
				go func() {
					for {
						time.Sleep(time.Second)
						if _, err := c.Write([]byte(" ")); err != nil {
							return
						}
					}
				}()
			}, 30 * time.Second}, // the handler's ReadTimeout
			{"an idle kept-alive connection", func(c net.Conn) {
				fmt.Fprintf(c, "GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			}, 60 * time.Second}, // IdleTimeout's default
		}
		for _, tt := range tests {
			c := l.Dial()
			tt.send(c)
			took := closedAfter(c)
			t.Logf("%s: closed after %v", tt.name, took)
			if took > tt.bound+time.Second {
				t.Errorf("%s: closed after %v, bound %v", tt.name, took, tt.bound)
			}
			c.Close()
		}
	})
}

// TestMaxConns: beyond MaxConns, a connection waits until one closes;
// the ones accepted are served.
func TestMaxConns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := streamablehandler.New(mcpServer(), nil)
		defer h.Close()
		l, stop := serve(t, h, &httpserver.Options{MaxConns: 2, MaxConnsPerAddr: 2, IdleTimeout: -1})
		defer stop()
		request := func(c net.Conn) chan string {
			got := make(chan string, 1)
			go func() {
				fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: %d\r\n\r\n%s", len(statelessCall), statelessCall)
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					got <- err.Error()
					return
				}
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
				got <- resp.Status + " " + string(b)
			}()
			return got
		}
		dial := func() net.Conn {
			c := l.Dial()
			synctest.Wait() // accepted, or waiting for room, before the next
			return c
		}
		a, b, third := dial(), dial(), dial()
		ra, rb, rthird := request(a), request(b), request(third)
		for _, r := range []chan string{ra, rb} {
			if got := <-r; !strings.Contains(got, `"text":"hi"`) {
				t.Fatalf("answer: %s", got)
			}
		}
		synctest.Wait()
		select {
		case got := <-rthird:
			t.Fatalf("a third connection was served with two allowed: %s", got)
		default:
		}
		a.Close()
		if got := <-rthird; !strings.Contains(got, `"text":"hi"`) {
			t.Fatalf("the third connection, once the first closed: %s", got)
		}
		b.Close()
		third.Close()
	})
}

const statelessCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
