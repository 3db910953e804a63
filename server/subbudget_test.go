package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// ackPeer tells when a listen stream was acknowledged.
type ackPeer struct{ acked chan struct{} }

func (p ackPeer) Notify(ctx context.Context, method string, params any) error {
	if method == protocol.NotificationSubscriptionsAcknowledged {
		close(p.acked)
	}
	return nil
}

func (ackPeer) Call(context.Context, string, any) (*jsonrpc.Message, error) {
	return nil, errors.New("no calls")
}

// listen opens a stateless subscriptions/listen stream for uris, and
// returns nil and the function that ends it once the server acknowledged
// it, or the error it was refused with.
func listen(t *testing.T, s *server.Server, uris []string) (stop func(), err error) {
	t.Helper()
	var list strings.Builder
	for i, u := range uris {
		if i > 0 {
			list.WriteByte(',')
		}
		fmt.Fprintf(&list, "%q", u)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":[` + list.String() +
		`]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	m, err := jsonrpc.Decode([]byte(body), jsonrpc.Limits{MaxSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	peer := ackPeer{acked: make(chan struct{})}
	ended := make(chan error, 1)
	go func() {
		_, err := handle(s, ctx, m, nil, peer)
		ended <- err
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-ended
		})
	}
	t.Cleanup(stop)
	select {
	case <-peer.acked:
		return stop, nil
	case err := <-ended:
		ended <- err // for the cleanup
		return nil, err
	}
}

// TestSubscriptionsBoundedOverall: what the subscriptions of all clients
// keep is bounded (64 MiB by default), not only what one session or
// listen stream keeps: on b211c63 each took up to 1,024 URIs of 8 KiB,
// and 50 sessions held 545 MiB (the default 10,000 sessions, some
// 110 GB). Listen streams of 1,024 URIs of 8,000 bytes fill the budget,
// a session's resources/subscribe is then refused too, and what an ended
// stream kept is given back.
func TestSubscriptionsBoundedOverall(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	s.AddResource(&protocol.Resource{URI: "file:///a", Name: "a"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{}, nil
	})
	uris := func(stream int) []string {
		out := make([]string, 1024)
		for i := range out {
			out[i] = fmt.Sprintf("file:///%d/%d/", stream, i)
			out[i] += strings.Repeat("u", 8000-len(out[i]))
		}
		return out
	}
	const fit = 64 << 20 / (1024 * (8000 + 64)) // 8 streams
	var stops []func()
	var refused error
	for i := range 2 * fit {
		stop, err := listen(t, s, uris(i))
		if err != nil {
			refused = err
			break
		}
		stops = append(stops, stop)
	}
	var re *jsonrpc.Error
	if len(stops) != fit || !errors.As(refused, &re) || !strings.Contains(re.Message, "subscriptions") {
		t.Fatalf("%d listen streams of 1,024 URIs of 8,000 bytes accepted, want %d; then: %v", len(stops), fit, refused)
	}
	c, err := rawSession(t, s, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	subscribe := func(i int) error {
		uri := fmt.Sprintf("file:///s/%d/", i)
		_, err := c.Call(context.Background(), "resources/subscribe", map[string]string{"uri": uri + strings.Repeat("u", 8000-len(uri))})
		return err
	}
	accepted := 0
	for i := range 1024 {
		if err = subscribe(i); err != nil {
			break
		}
		accepted++
	}
	if left := 64<<20 - fit*1024*(8000+64); accepted != left/(8000+64) || !errors.As(err, &re) || !strings.Contains(re.Message, "subscriptions") {
		t.Errorf("a session's subscriptions in what the streams left: %d accepted (then %v), want %d", accepted, err, left/(8000+64))
	}
	stops[0]()
	if err := subscribe(accepted); err != nil {
		t.Errorf("a subscription once a stream ended: %v", err)
	}
}
