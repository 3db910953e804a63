package host

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/transport/stdio"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// paths counts what a connection did on the fast paths its transport
// offers: answers read by the goroutine that called (stdio, through
// jsonrpc.ReadInterrupter), requests answered on their own POST
// (jsonrpc.Requester) and answers whose memory went back to the
// transport (jsonrpc.Recycler).
type paths struct {
	callerReads, requests, recycles atomic.Int64
}

func (p *paths) String() string {
	return fmt.Sprintf("caller reads %d, direct requests %d, recycles %d",
		p.callerReads.Load(), p.requests.Load(), p.recycles.Load())
}

// countedStdio is a stdio client stream that counts the answers read on
// a client call's own goroutine. Embedding keeps the stream's methods,
// InterruptRead among them.
type countedStdio struct {
	*stdio.ClientStream
	p *paths
}

func (s countedStdio) Read() (*jsonrpc.Message, error) {
	m, err := s.ClientStream.Read()
	if m != nil && m.IsResponse() && onCallersStack() {
		s.p.callerReads.Add(1)
	}
	return m, err
}

// onCallersStack reports whether the goroutine runs a client call (the
// caller reads its answer) rather than being a reader of the connection.
func onCallersStack() bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "ferry/client.(*Client)") {
			return true
		}
		if !more {
			return false
		}
	}
}

// countedHTTP is a Streamable HTTP client stream that counts its direct
// answers and the answers given back.
type countedHTTP struct {
	jsonrpc.Stream
	p *paths
}

func (s countedHTTP) Request(ctx context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
	s.p.requests.Add(1)
	return s.Stream.(jsonrpc.Requester).Request(ctx, m)
}

func (s countedHTTP) Recycle(m *jsonrpc.Message) {
	s.p.recycles.Add(1)
	s.Stream.(jsonrpc.Recycler).Recycle(m)
}

func (s countedHTTP) MirrorsHeaders() bool {
	return s.Stream.(jsonrpc.HeaderMirror).MirrorsHeaders()
}

// TestTraceKeepsPaths: a host with tracing on (ferry --trace) takes the
// same paths as without: over stdio calls read their own answers, over
// Streamable HTTP requests are answered on their POST and borrowed
// answers go back to the transport.
func TestTraceKeepsPaths(t *testing.T) {
	bin := exampleServer(t)
	srv := httptest.NewServer(streamablehandler.New(testServer("web"), nil))
	defer srv.Close()
	open := map[string]func(ctx context.Context, p *paths) (jsonrpc.Stream, error){
		"stdio": func(ctx context.Context, p *paths) (jsonrpc.Stream, error) {
			cs, err := (&stdio.Command{Path: bin}).Connect(ctx)
			if err != nil {
				return nil, err
			}
			return countedStdio{cs, p}, nil
		},
		"http": func(ctx context.Context, p *paths) (jsonrpc.Stream, error) {
			s, err := (&streamable.Transport{URL: srv.URL}).Open(ctx)
			if err != nil {
				return nil, err
			}
			return countedHTTP{s, p}, nil
		},
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			plain := runPaths(t, name, open, false)
			traced := runPaths(t, name, open, true)
			t.Logf("plain: %v; traced: %v", plain, traced)
			type cell struct {
				what          string
				plain, traced int64
			}
			for _, c := range []cell{
				{"answers read by their caller", plain.callerReads.Load(), traced.callerReads.Load()},
				{"requests answered on their POST", plain.requests.Load(), traced.requests.Load()},
				{"answers given back", plain.recycles.Load(), traced.recycles.Load()},
			} {
				if (c.plain > 0) != (c.traced > 0) {
					t.Errorf("%s: %d without tracing, %d with it", c.what, c.plain, c.traced)
				}
			}
			if name == "stdio" && plain.callerReads.Load() == 0 || name == "http" && (plain.requests.Load() == 0 || plain.recycles.Load() == 0) {
				t.Errorf("the fast paths were not taken at all: %v", plain)
			}
		})
	}
}

// runPaths calls a server 20 times through a host, with or without
// tracing, and returns what the connection did.
func runPaths(t *testing.T, name string, open func(context.Context, *paths) (jsonrpc.Stream, error), trace bool) *paths {
	p := &paths{}
	var events atomic.Int64
	opts := &Options{Transport: func(ctx context.Context, _ *config.Server) (jsonrpc.Stream, error) { return open(ctx, p) }}
	if trace {
		opts.Trace = func(*TraceEvent) { events.Add(1) }
	}
	h, err := New([]*config.Server{{Name: name, Transport: config.Stdio, Command: name}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, err := h.Server(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		var release func()
		r, err := c.Call(t.Context(), "echo", map[string]string{"message": fmt.Sprint(i)}, client.Lend(&release))
		if err == nil && (len(r.Content) != 1 || !strings.HasSuffix(r.Content[0].Text, fmt.Sprint(i))) {
			err = fmt.Errorf("echo %d: %+v", i, r.Content)
		}
		release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if trace && events.Load() < 40 {
		t.Errorf("traced %d events for 20 calls", events.Load())
	}
	return p
}
