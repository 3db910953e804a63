package websocket_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	cws "github.com/coder/websocket"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/pipenet"
	"github.com/ferrymcp/ferry/websocket"
)

// bubble serves a Handler inside a synctest bubble, on in-memory
// connections; a request's remote address is its X-Test-Addr header when
// it has one (they all come from 127.0.0.1 otherwise).
type bubble struct {
	h  *websocket.Handler
	hc *http.Client
}

func serveInBubble(t *testing.T, opts websocket.Options) *bubble {
	l := pipenet.Listen()
	// The server does not ping: on in-memory pipes, which have no buffer,
	// two peers that ping each other at the same instant of the fake
	// clock block each other's pongs (TCP's buffers prevent that). The
	// ferry clients ping it.
	opts.KeepAlive = -1
	h := websocket.NewHandler(newServer(), &opts)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("X-Test-Addr"); a != "" {
			r.RemoteAddr = a
		}
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return l.Dial(), nil }}
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		tr.CloseIdleConnections()
	})
	return &bubble{h: h, hc: &http.Client{Transport: tr}}
}

const wsURL = "ws://127.0.0.1/"

// dial opens a raw connection from addr (none: 127.0.0.1) that answers
// pings; ended is closed when the server ends it.
func (b *bubble) dial(t *testing.T, addr string) (c *cws.Conn, ended chan struct{}, err error) {
	hdr := http.Header{}
	if addr != "" {
		hdr.Set("X-Test-Addr", addr)
	}
	c, _, err = cws.Dial(context.Background(), wsURL, &cws.DialOptions{HTTPClient: b.hc, HTTPHeader: hdr, Subprotocols: []string{"mcp"}})
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { c.CloseNow() })
	ended = make(chan struct{})
	go func() {
		defer close(ended)
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	return c, ended, nil
}

// connect is a client over the bubble's connections, with header.
func (b *bubble) connect(t *testing.T, header http.Header) *client.Client {
	c, err := client.Connect(context.Background(), &websocket.Transport{URL: wsURL, Client: b.hc, Header: header}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// beginMessage sends the first size bytes of a tools/call and never the
// rest.
func beginMessage(t *testing.T, c *cws.Conn, size int) {
	w, err := c.Writer(context.Background(), cws.MessageText)
	if err != nil {
		t.Fatal(err)
	}
	start := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`
	if _, err := w.Write([]byte(start + strings.Repeat("x", size-len(start)))); err != nil {
		t.Fatal(err)
	}
}

func isClosed(ended chan struct{}) bool {
	synctest.Wait()
	select {
	case <-ended:
		return true
	default:
		return false
	}
}

// TestMessageBegunNeverFinished: a message whose first frames came but
// never its end ends the connection after the message timeout (60 s by
// default).
func TestMessageBegunNeverFinished(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := serveInBubble(t, websocket.Options{})
		c, ended, err := b.dial(t, "")
		if err != nil {
			t.Fatal(err)
		}
		beginMessage(t, c, 1<<20)
		time.Sleep(59 * time.Second)
		if isClosed(ended) {
			t.Fatal("the connection ended before the message timeout")
		}
		time.Sleep(2 * time.Second)
		if !isClosed(ended) {
			t.Fatal("a message begun 61 s ago still holds its connection")
		}
	})
}

// TestReadMemory: the messages being read share MaxReadMemory, one
// caller at most half of it: beyond it a message is dropped with an
// error answer ("server busy"); another caller is served meanwhile, and
// the memory of a message that timed out is given back.
func TestReadMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := serveInBubble(t, websocket.Options{
			MaxMessageBytes: 64 << 10,
			MaxReadMemory:   128 << 10,
			Caller:          func(r *http.Request) string { return r.Header.Get("X-Caller") },
		})
		mallory := http.Header{"X-Caller": {"mallory"}}
		m := b.connect(t, mallory)
		hold, _, err := cws.Dial(context.Background(), wsURL, &cws.DialOptions{HTTPClient: b.hc, HTTPHeader: mallory, Subprotocols: []string{"mcp"}})
		if err != nil {
			t.Fatal(err)
		}
		defer hold.CloseNow()
		go hold.Read(context.Background()) // answers pings
		beginMessage(t, hold, 60<<10)      // mallory's whole share: 64 KiB
		synctest.Wait()

		ctx := context.Background()
		if _, err := m.Call(ctx, "echo", map[string]string{"message": "hi"}); err == nil || !strings.Contains(err.Error(), "server busy") {
			t.Errorf("mallory's second message, beyond her share: %v, want server busy", err)
		}
		alice := b.connect(t, http.Header{"X-Caller": {"alice"}})
		if res, err := alice.Call(ctx, "echo", map[string]string{"message": strings.Repeat("a", 30<<10)}); err != nil || len(res.Content[0].Text) != 30<<10 {
			t.Errorf("alice meanwhile: %v", err)
		}
		time.Sleep(websocket.DefaultMessageTimeout + time.Second)
		if res, err := m.Call(ctx, "echo", map[string]string{"message": "hi"}); err != nil || res.Content[0].Text != "hi" {
			t.Errorf("mallory once her unfinished message timed out: %v", err)
		}
	})
}

// TestConnectionShares: one address holds at most half of
// MaxConnections; another is served meanwhile.
func TestConnectionShares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := serveInBubble(t, websocket.Options{MaxConnections: 4})
		for i, want := range []bool{true, true, false, false} {
			if _, _, err := b.dial(t, "192.0.2.1:4000"); (err == nil) != want {
				t.Errorf("connection %d of one address: %v, want upgraded %v", i, err, want)
			}
		}
		for i := range 2 {
			if _, _, err := b.dial(t, "198.51.100.7:4000"); err != nil {
				t.Errorf("connection %d of another address: %v", i, err)
			}
		}
	})
}

// TestConcurrentUpgrades: MaxConnections holds exactly under upgrades
// that all run at once.
func TestConcurrentUpgrades(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const max, tries = 5, 20
		b := serveInBubble(t, websocket.Options{MaxConnections: max, MaxConnectionsPerCaller: max})
		var mu sync.Mutex
		upgraded := 0
		var wg sync.WaitGroup
		for range tries {
			wg.Go(func() {
				if _, _, err := b.dial(t, ""); err == nil {
					mu.Lock()
					upgraded++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if upgraded != max {
			t.Errorf("%d of %d concurrent upgrades admitted, want MaxConnections = %d", upgraded, tries, max)
		}
	})
}

// TestIdleConnection: a connection with no message either way for the
// idle timeout is closed, though it answers pings; one whose request is
// being answered is not.
func TestIdleConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := serveInBubble(t, websocket.Options{})
		_, ended, err := b.dial(t, "")
		if err != nil {
			t.Fatal(err)
		}
		busy := b.connect(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		called := make(chan error, 1)
		go func() {
			_, err := busy.Call(ctx, "block", nil)
			called <- err
		}()
		time.Sleep(31 * time.Minute)
		if !isClosed(ended) {
			t.Error("a connection idle for 31 minutes is still open")
		}
		select {
		case err := <-called:
			t.Errorf("a call in progress ended with its idle connection: %v", err)
		default:
		}
		cancel()
		<-called
		if _, err := busy.Call(context.Background(), "echo", map[string]string{"message": "x"}); err != nil {
			t.Errorf("the connection of the call: %v", err)
		}
	})
}
