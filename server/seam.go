package server

import (
	"context"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/mcpheader"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// transportHook gives ferry's transports the operations on a Server that
// are no part of its API for users (serverapi.OpsOf): embedded in Server
// under this unexported name, it adds no method a user sees, and no
// package variable or init function joins server to its transports.
type transportHook = serverapi.Hook

// transportOps is a Server as its transports see it
// (serverapi.Ops[*Session]).
type transportOps Server

func (o *transportOps) HandleMessage(ctx context.Context, m *jsonrpc.Message, sess *Session, peer serverapi.Peer) (any, error) {
	return (*Server)(o).handleMessage(ctx, m, sess, peer)
}

func (o *transportOps) ConnectSession(ctx context.Context, stream jsonrpc.Stream, id string) (*jsonrpc2.Conn, *Session) {
	return (*Server)(o).connectSession(ctx, stream, id)
}

func (o *transportOps) CheckRequestMeta(m *jsonrpc.Message) error {
	return (*Server)(o).checkRequestMeta(m)
}

func (o *transportOps) CheckVersion(v string) error { return (*Server)(o).checkVersion(v) }

func (o *transportOps) ToolHeaders(name string) ([]mcpheader.Param, bool) {
	return (*Server)(o).toolHeaders(name)
}
