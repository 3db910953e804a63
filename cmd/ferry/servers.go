package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

var serversCommand = &command{
	name:    "servers",
	summary: "status, era, protocol version, tools, connect time",
	help: `Starts every configured server (or the ad-hoc one) and shows how each went:
its status, transport, protocol era and revision, number of tools, connect time
and name, or why it failed (with the end of its stderr).`,
	example: `ferry servers
ferry --config .vscode/mcp.json servers --format json`,
	setup: noFlags(cmdServers),
}

// serverOut is a server in `ferry servers --format json`.
type serverOut struct {
	Name            string                   `json:"name"`
	Source          string                   `json:"source,omitempty"`
	Transport       config.Transport         `json:"transport,omitempty"`
	Target          string                   `json:"target,omitempty"` // command line or URL
	Status          string                   `json:"status"`
	Era             string                   `json:"era,omitempty"`
	ProtocolVersion string                   `json:"protocolVersion,omitempty"`
	ServerInfo      *protocol.Implementation `json:"serverInfo,omitempty"`
	Tools           *int                     `json:"tools,omitempty"`
	ConnectMS       float64                  `json:"connectMs,omitzero"`
	Restarts        int                      `json:"restarts,omitzero"`
	Pid             int                      `json:"pid,omitzero"`
	Error           string                   `json:"error,omitempty"`
	Stderr          string                   `json:"stderr,omitempty"`
}

func cmdServers(ctx context.Context, o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	if len(o.args) > 0 {
		return usageErrorf("servers takes no arguments")
	}
	sess, err := o.startServers(ctx, servers)
	if err != nil {
		return err
	}
	defer sess.Close()
	list := sess.Servers()
	counts := make([]*int, len(list))
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, s := range list {
		if s.Status().State != host.Ready {
			continue
		}
		wg.Go(func() {
			tools, err := s.Tools(ctx)
			if err == nil {
				n := len(tools)
				counts[i] = &n
			}
			errs[i] = err
		})
	}
	wg.Wait()
	var out []serverOut
	for i, s := range list {
		st := s.Status()
		so := serverOut{Name: st.Name, Source: s.Config().Source, Transport: st.Transport, Target: target(s.Config()),
			Status: st.State.String(), Tools: counts[i], Restarts: st.Restarts, Pid: st.Pid}
		if st.Version != "" {
			so.Era, so.ProtocolVersion = era(st.Stateless), st.Version
			info := st.Info
			so.ServerInfo = &info
			so.ConnectMS = float64(st.ConnectTime.Microseconds()) / 1000
		}
		if e := errors.Join(st.Err, errs[i]); e != nil {
			so.Error = e.Error()
			var he *host.Error
			if errors.As(e, &he) {
				so.Stderr = he.Stderr
			}
		}
		out = append(out, so)
	}
	if o.json {
		if err := o.printJSON(map[string]any{"servers": out}); err != nil {
			return err
		}
		return sess.startErr
	}
	t := o.table("SERVER", "STATUS", "TRANSPORT", "ERA", "VERSION", "TOOLS", "CONNECT", "INFO")
	for _, s := range out {
		tools, connect, info := "-", "-", s.Target
		if s.Tools != nil {
			tools = fmt.Sprint(*s.Tools)
		}
		if s.ConnectMS > 0 {
			connect = fmt.Sprintf("%.0f ms", s.ConnectMS)
		}
		if s.ServerInfo != nil {
			info = strings.TrimSpace(s.ServerInfo.Name + " " + s.ServerInfo.Version)
		}
		if s.Restarts > 0 {
			info += fmt.Sprintf(" (restarted %d×)", s.Restarts)
		}
		if s.Error != "" {
			info = s.Error
		}
		t.add(s.Name, s.Status, string(s.Transport), dash(s.Era), dash(s.ProtocolVersion), tools, connect, info)
	}
	t.flush()
	return sess.startErr
}

func era(stateless bool) string {
	if stateless {
		return "stateless"
	}
	return "legacy"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func target(s *config.Server) string {
	if s.Transport == config.Stdio {
		return strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " "))
	}
	return s.URL
}
