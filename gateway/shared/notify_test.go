package shared

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// resourceServer serves one resource over Streamable HTTP, as "up".
func resourceServer(t *testing.T) (*server.Server, *config.Server) {
	s := server.New(protocol.Implementation{Name: "up", Version: "1"}, nil)
	s.AddResource(&protocol.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "r"}}}, nil
	})
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return s, &config.Server{Name: "up", Transport: config.HTTP, URL: ts.URL + "/mcp"}
}

// getsTo sends GETs (the client's GET stream) to one replica, the rest
// to others.
type getsTo struct {
	get  http.Handler
	rest http.Handler
}

func (b *getsTo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		b.get.ServeHTTP(w, r)
		return
	}
	b.rest.ServeHTTP(w, r)
}

// What an upstream tells one replica (each has an upstream of its own,
// as each has its own process of a stdio server) reaches a client whose
// GET stream sits on the other: a list changed, a resource updated.
func TestNotificationsReachGETStreamOnOtherReplica(t *testing.T) {
	url, _ := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	store := open(t, url)
	sealer := sealerOf(ctx, t, store)
	var ups []*server.Server
	lb := &roundRobin{}
	for range 2 {
		up, cfg := resourceServer(t)
		g, err := gateway.New([]*config.Server{cfg}, &gateway.Options{Replicas: &gateway.ReplicaOptions{Sealer: sealer, Store: open(t, url)}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(context.Background()) })
		if err := g.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		ups, lb.replicas = append(ups, up), append(lb.replicas, g)
	}
	ts := httptest.NewServer(&getsTo{get: lb.replicas[0], rest: lb})
	defer ts.Close()
	changed, updated := make(chan string, 16), make(chan string, 16)
	c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + "/mcp"}, &client.Options{
		ProtocolVersion: protocol.LatestLegacyVersion,
		OnListChanged:   func(m string) { changed <- m },
		OnResourceUpdated: func(uri string) {
			updated <- uri
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// Replica 1's upstream connection listens for changes a moment after
	// it is ready: the change is told until the client hears of one.
	hear(t, changed, protocol.NotificationResourcesListChanged, func() {
		ups[1].NotifyListChanged(protocol.NotificationResourcesListChanged)
	})

	res, err := c.ListResources(ctx, "")
	if err != nil || len(res.Resources) != 1 {
		t.Fatalf("resources: %+v, %v", res, err)
	}
	uri := res.Resources[0].URI
	if _, err := c.Subscribe(ctx, uri); err != nil {
		t.Fatal(err)
	}
	// The subscription reaches replica 1's upstream a moment later (by
	// pub/sub when the client subscribed through replica 0).
	hear(t, updated, uri, func() { ups[1].ResourceUpdated(ctx, "test://r") })
}

// hear calls tell until ch brings want, every 100 ms for 5 seconds at
// most.
func hear(t *testing.T, ch <-chan string, want string, tell func()) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for tell(); ; {
		select {
		case got := <-ch:
			if got == want {
				return
			}
		case <-tick.C:
			tell()
		case <-deadline:
			t.Fatalf("the client heard nothing of %s", want)
		}
	}
}
