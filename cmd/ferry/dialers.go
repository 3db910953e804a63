package main

import (
	"context"

	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/websocket"
)

// dialers give host the transports it does not link itself: ferry
// reaches ws:// and wss:// servers.
func dialers() map[string]host.Dialer {
	ws := func(ctx context.Context, d host.Dial) (jsonrpc.Stream, error) {
		return (&websocket.Transport{URL: d.URL, Client: d.Client, Header: d.Header, Logger: d.Logger}).Open(ctx)
	}
	return map[string]host.Dialer{"ws": ws, "wss": ws}
}
