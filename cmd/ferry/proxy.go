package main

import (
	"context"
	"log/slog"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/stdio"
)

var proxyCommand = &command{
	name:    "proxy",
	args:    "URL|NAME",
	summary: "a stdio MCP server that forwards to one server",
	help: `Serves one server over stdio until stdin ends: the server at the URL
argument (with --header and --sse), or the server NAME of the configuration.
Nothing but MCP messages is written on stdout; -v logs on stderr.`,
	example:    "ferry proxy https://example.com/mcp --header 'Authorization: Bearer TOKEN'",
	setup:      noFlags(func(_ context.Context, o *cli) error { return cmdProxy(o) }),
	ownSignals: true,
}

// cmdProxy serves one server over stdio, a stdio MCP server in front of a
// remote one, until stdin ends: the server at the URL argument (with
// --header and --sse), or the server NAME of the configuration. Both
// sides speak whichever protocol revision they speak. Nothing but MCP
// messages is written on stdout; -v logs on stderr.
func cmdProxy(o *cli) error {
	ctx := context.Background()
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	var target *config.Server
	switch {
	case len(servers) == 1 && servers[0].Source == "command line":
		target = servers[0]
	case len(o.args) == 1:
		for _, s := range servers {
			if s.Name == o.args[0] {
				target = s
			}
		}
		if target == nil {
			return usageErrorf("no server named %q (configured: %s)", o.args[0], serverNames(servers))
		}
	default:
		return usageErrorf("ferry proxy needs one URL or one server NAME")
	}
	if target.Err != nil {
		return target.Err
	}
	target.Disabled = false
	log := slog.New(slog.DiscardHandler)
	if o.verbose {
		log = slog.New(slog.NewTextHandler(o.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	g, err := gateway.New([]*config.Server{target}, &gateway.Options{
		Info:   protocol.Implementation{Name: "ferry-proxy", Version: version},
		Prefix: host.PrefixNever,
		Host: host.Options{
			ConnectTimeout:    o.connectTO,
			RequestTimeout:    negIfZero(o.timeout),
			MaxRequestTimeout: negIfZero(o.maxTimeout),
			Logger:            log,
			InheritEnv:        o.inheritEnv,
			Dialers:           dialers(),
		},
		Logger: log,
	})
	if err != nil {
		return err
	}
	defer g.Close(context.WithoutCancel(ctx))
	return g.Server(target.Name).Run(ctx, stdio.ServerStream())
}
