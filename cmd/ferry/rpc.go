package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
)

var rpcCommand = &command{
	name:    "rpc",
	args:    "[SERVER] METHOD [PARAMS]",
	summary: "send any request by its method name, with raw JSON params",
	help: `Sends one JSON-RPC request to a server, by its method name, with PARAMS as
one JSON object (- reads it from stdin), and prints the result as JSON: a
method ferry has no command for (completion/complete, logging/setLevel,
resources/subscribe, a server's own methods), or one it has, with params of
your own (tools/list with a cursor). SERVER may be left out when one server
is configured. A JSON-RPC error answer exits 2 and keeps its code in the
--format json envelope.`,
	example: `ferry rpc everything tools/list '{"cursor": "Mg=="}'
ferry rpc everything completion/complete '{"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "language", "value": "g"}}'`,
	setup: noFlags(cmdRPC),
}

func cmdRPC(ctx context.Context, o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	args := o.args
	var server string
	switch {
	case len(args) >= 2 && hasServer(servers, args[0]):
		server, args = args[0], args[1:]
	case len(servers) == 1:
		server = servers[0].Name
	default:
		return usageErrorf("rpc needs a server: ferry rpc SERVER METHOD [PARAMS] (configured: %s)", serverNames(servers))
	}
	if len(args) == 0 || len(args) > 2 {
		return usageErrorf("rpc takes a method and at most one JSON object of params: ferry rpc [SERVER] METHOD [PARAMS]")
	}
	method := args[0]
	var params any
	if len(args) == 2 {
		raw := []byte(args[1])
		if args[1] == "-" {
			if raw, err = io.ReadAll(o.stdin); err != nil {
				return usageErrorf("params from stdin: %v", err)
			}
		}
		v := jsontext.Value(raw)
		if err := v.Compact(); err != nil || len(v) == 0 || v[0] != '{' {
			return usageErrorf("params must be one JSON object, not %.80q", raw)
		}
		params = v
	}
	sess, err := o.startServers(ctx, servers, server)
	if err != nil {
		return err
	}
	defer sess.Close()
	if sess.startErr != nil {
		return sess.startErr
	}
	srv, err := sess.Server(server)
	if err != nil {
		return err
	}
	var res jsontext.Value
	err = srv.Do(ctx, func(c *client.Client) error { return c.CallMethod(ctx, method, params, &res) })
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			return fmt.Errorf("server %q: %s: %w", server, method, err)
		}
		return err
	}
	return o.printJSON(res)
}
