package gateway

import (
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/protocol"
)

// A configuration read again (Update, as SIGHUP calls it after putting
// its access rules in force) tells the clients of every endpoint that
// their lists may have changed: a server's own endpoint's too, though
// the server is the same, for the rules may show them another part of
// it.
func TestUpdateTellsEveryEndpoint(t *testing.T) {
	a, _ := remote(t, "a", false)
	g, url := start(t, []*config.Server{a}, &Options{Views: viewSet(t, `{"v": {"tools": {"a__echo": {}}}}`)})
	ctx := ctxT(t)
	for _, path := range []string{"/mcp", "/servers/a/mcp", "/views/v/mcp"} {
		changed := make(chan string, 10)
		connect(t, url+path, protocol.LatestLegacyVersion, &client.Options{OnListChanged: func(m string) { changed <- m }})
		if err := g.Update([]*config.Server{a}); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-changed:
			if m != protocol.NotificationToolsListChanged {
				t.Errorf("%s: first told %s", path, m)
			}
		case <-ctx.Done():
			t.Fatalf("%s: not told that its lists changed", path)
		}
	}
}
