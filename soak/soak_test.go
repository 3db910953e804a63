//go:build soak

package soak

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/httpserver"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

var (
	duration = flag.Duration("soak.duration", 3*time.Minute, "how long the peers run")
	out      = flag.String("soak.out", "", "file to write the figures to (and to the test log)")
	heapProf = flag.String("soak.heapprofile", "", "file to write a heap profile to at each sample")
)

// The server's bounds, short so that a soak of minutes sees each of them
// act many times; the test waits for them at the end.
const (
	maxSessions        = 2000
	sessionIdleTimeout = 15 * time.Second
	readHeaderTimeout  = 2 * time.Second
	bodyReadTimeout    = 3 * time.Second
	writeTimeout       = 3 * time.Second
	idleTimeout        = 5 * time.Second
	maxConns           = 400
)

const (
	legacy    = "2025-11-25"
	stateless = "2026-07-28"
	initBody  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`
	echoBody  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
)

// figures are what the peers did; every field is updated atomically.
type figures struct {
	goodCycles, goodCalls, goodFailures atomic.Int64
	goodMaxLatency                      atomic.Int64 // ns, one call
	abandoned, abandonedStreams         atomic.Int64
	bursts, burstInits, burst503        atomic.Int64
	loris, slowBodies, announced        atomic.Int64
	idlers, nonReaders, hostile         atomic.Int64
	lorisMaxHeld, slowMaxHeld           atomic.Int64 // ns a slow peer held its connection
	announcedMaxHeld, idleMaxHeld       atomic.Int64
	nonReaderMaxHeld                    atomic.Int64

	mu         sync.Mutex
	statuses   map[string]int // hostile request → status → count
	goodErrors []string
}

func storeMax(v *atomic.Int64, x int64) {
	for {
		old := v.Load()
		if x <= old || v.CompareAndSwap(old, x) {
			return
		}
	}
}

func (f *figures) status(what string, code int) {
	f.mu.Lock()
	f.statuses[fmt.Sprintf("%s %d", what, code)]++
	f.mu.Unlock()
}

type soak struct {
	t     *testing.T
	url   string
	addr  string
	h     *streamablehandler.Handler
	conns atomic.Int64
	f     figures
	http  *http.Client
	log   io.Writer
}

func soakServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "soak", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "chatty"}, func(ctx context.Context, req *server.Request, in struct {
		N int `json:"n"`
	}) (string, error) {
		n := min(in.N, 50_000)
		for i := range n {
			if err := req.Progress(ctx, float64(i+1), float64(n), ""); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	return s
}

func TestSoak(t *testing.T) {
	var logw io.Writer = io.Discard
	if *out != "" {
		fh, err := os.Create(*out)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		logw = fh
	}
	h := streamablehandler.New(soakServer(), &streamablehandler.Options{
		MaxSessions: maxSessions, SessionIdleTimeout: sessionIdleTimeout,
		ReadTimeout: bodyReadTimeout, WriteTimeout: writeTimeout, KeepAlive: 5 * time.Second,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k := &soak{t: t, h: h, addr: ln.Addr().String(), url: "http://" + ln.Addr().String() + "/mcp", log: logw,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 30 * time.Second}}
	k.f.statuses = map[string]int{}
	srv := httpserver.New(h, &httpserver.Options{ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout})
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			k.conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			k.conns.Add(-1)
		}
	}
	go srv.Serve(httpserver.LimitListener(ln, maxConns))
	defer h.Close()
	defer srv.Close()

	k.printf("soak of %v on %s, %s/%s, GOMAXPROCS %d, %s\n", *duration, k.url, runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.Version())
	k.printf("bounds: MaxSessions %d, SessionIdleTimeout %v, ReadHeaderTimeout %v, body ReadTimeout %v, WriteTimeout %v, IdleTimeout %v, MaxConns %d\n",
		maxSessions, sessionIdleTimeout, readHeaderTimeout, bodyReadTimeout, writeTimeout, idleTimeout, maxConns)

	// Warm up (pools, lazily built tables), then take the baseline.
	for _, era := range []string{legacy, stateless} {
		if err := k.goodCycle(era, 0); err != nil {
			t.Fatalf("warm-up %s: %v", era, err)
		}
	}
	hostileBodies() // the peers' own 18 MiB, counted in the start
	k.http.CloseIdleConnections()
	k.waitQuiet(time.Now().Add(30*time.Second), 1<<62)
	g0, heap0 := settle()
	start := time.Now()
	k.printf("start: goroutines %d, live heap %.1f MiB, sessions %d, connections %d, RSS %s\n", g0, mib(heap0), h.Sessions(), k.conns.Load(), rss())

	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	var wg sync.WaitGroup
	run := func(n int, f func(ctx context.Context, i int)) {
		for i := range n {
			wg.Go(func() {
				for ctx.Err() == nil {
					f(ctx, i)
				}
			})
		}
	}
	run(3, func(ctx context.Context, i int) { k.good(legacy, i) })
	run(2, func(ctx context.Context, i int) { k.good(stateless, i) })
	run(3, k.abandon)
	run(1, k.burst)
	run(40, k.loris)
	run(20, k.slowBody)
	run(20, k.announce)
	run(20, k.idle)
	run(4, k.nonReader)
	run(3, k.hostile)
	wg.Go(func() {
		tick := time.NewTicker(15 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				k.sample(start)
			}
		}
	})
	wg.Wait()
	k.sample(start)
	k.http.CloseIdleConnections()
	end := time.Now()
	k.printf("peers stopped after %v; waiting for the session idle timeout and the connections' ends\n", end.Sub(start).Round(time.Second))
	k.waitQuiet(end.Add(sessionIdleTimeout+60*time.Second), g0)
	g1, heap1 := settle()
	k.printf("end (%v after the peers stopped): goroutines %d (start %d), live heap %.1f MiB (start %.1f MiB), sessions %d, connections %d, RSS %s\n",
		time.Since(end).Round(time.Second), g1, g0, mib(heap1), mib(heap0), h.Sessions(), k.conns.Load(), rss())
	k.report()

	if n := k.f.goodFailures.Load(); n > 0 {
		t.Errorf("%d well-behaved calls failed: %v", n, k.f.goodErrors)
	}
	if k.f.goodCalls.Load() == 0 {
		t.Error("no well-behaved call was made")
	}
	if g1 > g0 {
		t.Errorf("goroutines: %d at the end, %d at the start", g1, g0)
	}
	if slack := max(heap0/10, 1<<20); heap1 > heap0+slack {
		t.Errorf("live heap: %.1f MiB at the end, %.1f MiB at the start", mib(heap1), mib(heap0))
	}
}

func (k *soak) printf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	k.t.Log(strings.TrimSuffix(s, "\n"))
	fmt.Fprint(k.log, s)
}

func (k *soak) sample(start time.Time) {
	if *heapProf != "" {
		if fh, err := os.Create(*heapProf); err == nil {
			pprof.WriteHeapProfile(fh)
			fh.Close()
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	k.printf("%4.0fs goroutines %5d heap %6.1f MiB sessions %4d conns %3d | good %d calls %d failed | abandoned %d, burst inits %d (503 %d) | loris %d slow bodies %d announced %d idle %d non-readers %d hostile %d | RSS %s\n",
		time.Since(start).Seconds(), runtime.NumGoroutine(), mib(ms.HeapAlloc), k.h.Sessions(), k.conns.Load(),
		k.f.goodCalls.Load(), k.f.goodFailures.Load(), k.f.abandoned.Load(), k.f.burstInits.Load(), k.f.burst503.Load(),
		k.f.loris.Load(), k.f.slowBodies.Load(), k.f.announced.Load(), k.f.idlers.Load(), k.f.nonReaders.Load(), k.f.hostile.Load(), rss())
}

func (k *soak) report() {
	f := &k.f
	ms := func(v *atomic.Int64) string { return time.Duration(v.Load()).Round(time.Millisecond).String() }
	k.printf("well-behaved: %d cycles, %d calls, %d failed, slowest call %s\n", f.goodCycles.Load(), f.goodCalls.Load(), f.goodFailures.Load(), ms(&f.goodMaxLatency))
	k.printf("abandoned sessions: %d (%d with a GET stream dropped); bursts %d of bare initialize: %d sent, %d got 503\n",
		f.abandoned.Load(), f.abandonedStreams.Load(), f.bursts.Load(), f.burstInits.Load(), f.burst503.Load())
	k.printf("slow peers (longest hold): %d trickled headers (%s), %d trickled bodies (%s), %d announced 16 MB bodies never sent (%s), %d idle keep-alives (%s), %d non-readers of 20,000 events (%s)\n",
		f.loris.Load(), ms(&f.lorisMaxHeld), f.slowBodies.Load(), ms(&f.slowMaxHeld), f.announced.Load(), ms(&f.announcedMaxHeld),
		f.idlers.Load(), ms(&f.idleMaxHeld), f.nonReaders.Load(), ms(&f.nonReaderMaxHeld))
	f.mu.Lock()
	keys := make([]string, 0, len(f.statuses))
	for s := range f.statuses {
		keys = append(keys, s)
	}
	sort.Strings(keys)
	for _, s := range keys {
		k.printf("hostile %s: %d\n", s, f.statuses[s])
	}
	f.mu.Unlock()
}

// waitQuiet waits until no session and no connection is left and the
// goroutines are down to g0, or until the deadline.
func (k *soak) waitQuiet(deadline time.Time, g0 int) {
	for time.Now().Before(deadline) {
		if k.h.Sessions() == 0 && k.conns.Load() == 0 && runtime.NumGoroutine() <= g0 {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// settle collects garbage (twice, so that sync.Pools empty) and returns
// the goroutines and the live heap.
func settle() (int, uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// rss is the process's resident set and its peak, from /proc.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	var cur, peak string
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			cur = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			peak = strings.TrimSpace(v)
		}
	}
	return cur + " (peak " + peak + ")"
}

// good runs one cycle of a well-behaved client, recording a failure.
func (k *soak) good(era string, i int) {
	k.f.goodCycles.Add(1)
	if err := k.goodCycle(era, i); err != nil {
		k.f.goodFailures.Add(1)
		k.f.mu.Lock()
		if len(k.f.goodErrors) < 10 {
			k.f.goodErrors = append(k.f.goodErrors, era+": "+err.Error())
		}
		k.f.mu.Unlock()
	}
}

// goodCycle connects, lists the tools, calls echo and a tool that sends
// 200 progress notifications, checks every answer, and closes. It has its
// own deadline, not the soak's: a cycle under way when the soak ends
// finishes.
func (k *soak) goodCycle(era string, i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, &streamable.Transport{URL: k.url}, &client.Options{ProtocolVersion: era})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	timed := func(f func() error) error {
		t0 := time.Now()
		err := f()
		storeMax(&k.f.goodMaxLatency, int64(time.Since(t0)))
		k.f.goodCalls.Add(1)
		return err
	}
	if err := timed(func() error {
		res, err := c.ListTools(ctx, "")
		if err == nil && len(res.Tools) != 2 {
			err = fmt.Errorf("%d tools", len(res.Tools))
		}
		return err
	}); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	msg := fmt.Sprintf("hello %d %d", i, time.Now().UnixNano())
	if err := timed(func() error {
		res, err := c.Call(ctx, "echo", map[string]any{"message": msg})
		if err == nil && (res.IsError || len(res.Content) != 1 || res.Content[0].Text != msg) {
			err = fmt.Errorf("echo answered %+v", res)
		}
		return err
	}); err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	var progress atomic.Int64
	if err := timed(func() error {
		pctx := client.WithProgress(ctx, func(*protocol.ProgressParams) { progress.Add(1) })
		res, err := c.Call(pctx, "chatty", map[string]any{"n": 200})
		if err == nil && (res.IsError || len(res.Content) != 1 || res.Content[0].Text != "done") {
			err = fmt.Errorf("chatty answered %+v", res)
		}
		if err == nil && progress.Load() != 200 {
			err = fmt.Errorf("%d progress notifications of 200", progress.Load())
		}
		return err
	}); err != nil {
		return fmt.Errorf("chatty: %w", err)
	}
	return nil
}

// post sends a JSON-RPC body with the usual headers on k's client.
func (k *soak) post(ctx context.Context, body string, header map[string]string) (*http.Response, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, k.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for name, v := range header {
		r.Header.Set(name, v)
	}
	return k.http.Do(r)
}

// initialize opens a legacy session and returns its id.
func (k *soak) initialize(ctx context.Context) (string, int) {
	res, err := k.post(ctx, initBody, nil)
	if err != nil {
		return "", 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.Header.Get("Mcp-Session-Id"), res.StatusCode
}

// abandon opens a session and forgets it; one in ten also opens its GET
// stream and drops the connection under it.
func (k *soak) abandon(ctx context.Context, i int) {
	sid, _ := k.initialize(ctx)
	if sid == "" {
		return
	}
	k.f.abandoned.Add(1)
	if k.f.abandoned.Load()%10 != 0 {
		return
	}
	gctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	r, _ := http.NewRequestWithContext(gctx, http.MethodGet, k.url, nil)
	r.Header.Set("Accept", "text/event-stream")
	r.Header.Set("Mcp-Session-Id", sid)
	r.Header.Set("MCP-Protocol-Version", legacy)
	if res, err := k.http.Do(r); err == nil {
		k.f.abandonedStreams.Add(1)
		io.Copy(io.Discard, res.Body) // until the 200 ms are up
		res.Body.Close()
	}
}

// burst sends 4,000 bare initialize requests from 16 goroutines every 20
// seconds: the lock-out of item 2.
func (k *soak) burst(ctx context.Context, _ int) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(20 * time.Second):
	}
	k.f.bursts.Add(1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 250 {
				if ctx.Err() != nil {
					return
				}
				_, code := k.initialize(ctx)
				k.f.burstInits.Add(1)
				if code == http.StatusServiceUnavailable {
					k.f.burst503.Add(1)
				}
			}
		})
	}
	wg.Wait()
}

// held dials the server, runs f on the connection and records how long the
// server kept it, up to when it closed it.
func (k *soak) held(ctx context.Context, count, longest *atomic.Int64, f func(c net.Conn)) {
	c, err := net.DialTimeout("tcp", k.addr, 5*time.Second)
	if err != nil {
		time.Sleep(100 * time.Millisecond)
		return
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	count.Add(1)
	t0 := time.Now()
	f(c)
	if ctx.Err() == nil {
		storeMax(longest, int64(time.Since(t0)))
	}
}

// drain reads c until the server closes it.
func drain(c net.Conn) {
	io.Copy(io.Discard, c)
}

// loris trickles a request's headers, a byte every 300 ms, until the
// server closes the connection.
func (k *soak) loris(ctx context.Context, _ int) {
	k.held(ctx, &k.f.loris, &k.f.lorisMaxHeld, func(c net.Conn) {
		closed := make(chan struct{})
		go func() { drain(c); close(closed) }()
		head := "POST /mcp HTTP/1.1\r\nHost: " + k.addr + "\r\nContent-Type: application/json\r\nX-Padding: " + strings.Repeat("a", 1000)
		for i := range len(head) {
			if _, err := c.Write([]byte{head[i]}); err != nil {
				break
			}
			select {
			case <-closed:
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
		<-closed
	})
}

// slowBody sends its headers at once and its body a byte every 200 ms.
func (k *soak) slowBody(ctx context.Context, _ int) {
	k.held(ctx, &k.f.slowBodies, &k.f.slowMaxHeld, func(c net.Conn) {
		closed := make(chan struct{})
		go func() { drain(c); close(closed) }()
		body := strings.Repeat(" ", 1000) + echoBody
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: %d\r\n\r\n", k.addr, stateless, len(body))
		for i := range len(body) {
			if _, err := c.Write([]byte{body[i]}); err != nil {
				break
			}
			select {
			case <-closed:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
		<-closed
	})
}

// announce announces a body of 16,000,000 bytes, sends 20, and waits.
func (k *soak) announce(ctx context.Context, _ int) {
	k.held(ctx, &k.f.announced, &k.f.announcedMaxHeld, func(c net.Conn) {
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 16000000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id", k.addr)
		drain(c)
	})
}

// idle makes one stateless call on a kept-alive connection, reads its
// answer and stays.
func (k *soak) idle(ctx context.Context, _ int) {
	k.held(ctx, &k.f.idlers, &k.f.idleMaxHeld, func(c net.Conn) {
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: %d\r\n\r\n%s", k.addr, stateless, len(echoBody), echoBody)
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		k.f.status("idle keep-alive echo", res.StatusCode)
		io.Copy(io.Discard, br) // until the server's IdleTimeout
	})
}

// nonReader opens a session, asks for 20,000 progress notifications and
// never reads them.
func (k *soak) nonReader(ctx context.Context, _ int) {
	sid, _ := k.initialize(ctx)
	if sid == "" {
		time.Sleep(100 * time.Millisecond)
		return
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":7},"name":"chatty","arguments":{"n":20000}}}`
	k.held(ctx, &k.f.nonReaders, &k.f.nonReaderMaxHeld, func(c net.Conn) {
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: %s\r\nContent-Length: %d\r\n\r\n%s", k.addr, sid, legacy, len(body), body)
		c.(*net.TCPConn).SetReadBuffer(4096)
		// Never read: wait for the server's write timeout to close the
		// connection (a write on a closed connection fails).
		for {
			time.Sleep(200 * time.Millisecond)
			if _, err := c.Write([]byte("\r\n")); err != nil || ctx.Err() != nil {
				return
			}
		}
	})
}

// hostileBodies are the bodies of hostile, built once so that the
// figures show the server's memory rather than the peers'.
var hostileBodies = sync.OnceValue(func() (b struct{ big, huge, cancels string }) {
	b.big = strings.Repeat("x", 1<<20)
	b.huge = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat(b.big, 17) + `"}}`
	var cancels strings.Builder
	cancels.WriteString("[")
	for j := range 1000 {
		if j > 0 {
			cancels.WriteString(",")
		}
		fmt.Fprintf(&cancels, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, j)
	}
	cancels.WriteString("]")
	b.cancels = cancels.String()
	return b
})

// hostile sends, in turn, a request of each kind a hostile peer sends.
func (k *soak) hostile(ctx context.Context, i int) {
	sid, _ := k.initialize(ctx)
	b := hostileBodies()
	legacyH := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": legacy}
	cases := []struct {
		what, body string
		header     map[string]string
	}{
		{"initialize with a 1 MiB clientInfo", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + b.big + `","version":"1"}}}`, nil},
		{"17 MiB body", b.huge, legacyH},
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":`, legacyH},
		{"unknown session", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Session-Id": "nope", "MCP-Protocol-Version": legacy}},
		{"subscribe to 10 KB URIs", `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///` + b.big[:10<<10] + fmt.Sprint(i) + `"}}`, legacyH},
		{"1,000 cancellations in a batch", b.cancels, legacyH},
		{"foreign Origin", initBody, map[string]string{"Origin": "http://evil.example"}},
		{"unsupported version", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"MCP-Protocol-Version": "1999-01-01"}},
	}
	for _, c := range cases {
		if ctx.Err() != nil {
			return
		}
		res, err := k.post(ctx, c.body, c.header)
		k.f.hostile.Add(1)
		if err != nil {
			k.f.status(c.what+" (transport error)", 0)
			continue
		}
		answer, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		what := c.what
		if res.StatusCode == http.StatusOK && strings.Contains(string(answer), `"error":`) {
			what += " (a JSON-RPC error)"
		}
		k.f.status(what, res.StatusCode)
	}
}
