package server

import (
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/internal/serverapi"
)

// init gives ferry's transports the operations that are no part of the
// server's API for users (see internal/serverapi).
func init() {
	serverapi.Set(serverapi.Server[*Server, *Session, *Request]{
		HandleMessage:    (*Server).handleMessage,
		ConnectSession:   (*Server).connectSession,
		CheckRequestMeta: (*Server).checkRequestMeta,
		CheckVersion:     (*Server).checkVersion,
		ToolHeaders:      (*Server).toolHeaders,
		Sniffed:          func(r *Request) *jsonrpcapi.Meta { return jsonrpc2.Meta(r.msg) },
	})
}
