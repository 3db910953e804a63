package server_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/racecheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// rawSession serves s on a memory pipe and returns the client's end, a
// bare JSON-RPC connection, after initialize with capabilities caps (raw
// JSON) and the initialized notification; err is initialize's.
func rawSession(t *testing.T, s *server.Server, caps string) (*jsonrpc2.Conn, error) {
	t.Helper()
	a, b := memory.NewPipe(jsonrpc.Limits{MaxSize: 64 << 20})
	ctx, cancel := context.WithCancel(context.Background())
	srv := s.Connect(ctx, a)
	c := jsonrpc2.NewConn(ctx, b, nil)
	t.Cleanup(func() {
		c.Close()
		srv.Close()
		cancel()
	})
	params := `{"protocolVersion":"2025-11-25","clientInfo":{"name":"t","version":"1"},"capabilities":` + caps + `}`
	if _, err := c.Call(ctx, "initialize", jsontext.Value(params)); err != nil {
		return c, err
	}
	return c, c.Notify(ctx, "notifications/initialized", nil)
}

func heapInUse() int64 {
	// Twice: what a sync.Pool held survives one collection (its victim
	// cache), so a pooled 1 MiB buffer counted as held by the session.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestSessionKeepsLittle: a legacy session keeps its client's info and
// capabilities for its whole life, so their size is bounded: 20 sessions
// whose initialize declares 1 MiB of experimental capabilities are
// refused, and the server holds nothing for them (on a12c33f each was
// kept: 20 sessions held some 100 MiB).
func TestSessionKeepsLittle(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	var b strings.Builder
	b.WriteString(`{"experimental":{`)
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, `"x%d":{"a":[1,2,3]},`, i)
	}
	b.WriteString(`"end":{}}}`)
	before := heapInUse()
	refused := 0
	for range 20 {
		if _, err := rawSession(t, s, b.String()); err != nil {
			refused++
		}
	}
	held := heapInUse() - before
	t.Logf("20 initialize of 1 MiB: %d refused, %d KiB held", refused, held>>10)
	if refused != 20 || held > 4<<20 && !racecheck.Enabled {
		t.Errorf("20 initialize of 1 MiB: %d refused, %d KiB held", refused, held>>10)
	}
	// A usual initialize, a few hundred bytes, is served.
	if _, err := rawSession(t, s, `{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}}}`); err != nil {
		t.Errorf("a usual initialize: %v", err)
	}
}

// TestSubscribeBounds: what resources/subscribe makes a session keep is
// bounded in count and size, and a server without resources keeps
// nothing (on a12c33f a session kept every URI of any size, on a server
// with no resources too: 2,000 URIs of 4 KiB and one of 1 MiB, some
// 10 MiB).
func TestSubscribeBounds(t *testing.T) {
	withResources := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	withResources.AddResource(&protocol.Resource{URI: "file:///a", Name: "a"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{}, nil
	})
	without := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	for _, tt := range []struct {
		name     string
		s        *server.Server
		accepted int // of 2,000 URIs of 4 KiB
	}{{"with resources", withResources, 1024}, {"without resources", without, 0}} {
		c, err := rawSession(t, tt.s, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		before := heapInUse()
		ctx := context.Background()
		accepted := 0
		var last error
		for i := range 2000 {
			uri := fmt.Sprintf("file:///%d/%s", i, strings.Repeat("u", 4<<10))
			if _, err := c.Call(ctx, "resources/subscribe", map[string]string{"uri": uri}); err != nil {
				last = err
				continue
			}
			accepted++
		}
		_, bigErr := c.Call(ctx, "resources/subscribe", map[string]string{"uri": "file:///" + strings.Repeat("u", 1<<20)})
		held := heapInUse() - before
		t.Logf("%s: %d of 2,000 subscriptions of 4 KiB accepted (then: %v), %d KiB held; a 1 MiB URI: %v", tt.name, accepted, last, held>>10, bigErr)
		if accepted != tt.accepted || bigErr == nil {
			t.Errorf("%s: %d subscriptions accepted, want %d; a 1 MiB URI: %v", tt.name, accepted, tt.accepted, bigErr)
		}
		if held > int64(tt.accepted)*4<<10*3+1<<20 && !racecheck.Enabled {
			t.Errorf("%s: the session holds %d KiB", tt.name, held>>10)
		}
	}
}

// TestListenBounds: a stateless subscriptions/listen keeps the resources
// it names for its life: their count and size are bounded too.
func TestListenBounds(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	s.AddResource(&protocol.Resource{URI: "file:///a", Name: "a"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{}, nil
	})
	a, b := memory.NewPipe(jsonrpc.Limits{MaxSize: 64 << 20})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := s.Connect(ctx, a)
	defer srv.Close()
	c := jsonrpc2.NewConn(ctx, b, nil)
	defer c.Close()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tt := range []struct {
		name string
		uris []string
	}{
		{"2,000 resources", strings.Split(strings.Repeat("file:///a,", 2000), ",")[:2000]},
		{"a URI of 1 MiB", []string{"file:///" + strings.Repeat("u", 1<<20)}},
	} {
		var sb strings.Builder
		sb.WriteByte('[')
		for i, u := range tt.uris {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "%q", u)
		}
		sb.WriteByte(']')
		list := sb.String()
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.Call(cctx, "subscriptions/listen", jsontext.Value(`{"notifications":{"resourceSubscriptions":`+list+`},`+meta+`}`))
		ccancel()
		var re *jsonrpc.Error
		if !errors.As(err, &re) || re.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: %v, want an invalid-params error", tt.name, err)
		}
	}
}
