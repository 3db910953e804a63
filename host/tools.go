package host

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"path"
	"slices"
	"sync"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// Tool is a tool of the aggregated list.
type Tool struct {
	// Name is the tool's name in the aggregated list (server__tool, or
	// as the prefix mode has it), within ^[a-zA-Z0-9_-]{1,64}$.
	Name string
	// Server is the name of the server that has the tool.
	Server string
	// Tool is the tool as the server describes it.
	Tool protocol.Tool
}

// maxNameLen is the longest tool name clients accept.
const maxNameLen = 64

// Allowed reports whether the server's allowedTools and blockedTools let
// the tool be used.
func (s *Server) Allowed(tool string) bool {
	return allowed(tool, s.cfg.AllowedTools, s.cfg.BlockedTools)
}

func allowed(name string, allow, deny []string) bool {
	if len(allow) > 0 && !slices.ContainsFunc(allow, func(p string) bool { return match(p, name) }) {
		return false
	}
	return !slices.ContainsFunc(deny, func(p string) bool { return match(p, name) })
}

func match(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return ok || err != nil && pattern == name
}

// Tools returns the server's tools that its entry allows, listing them
// once per connection (and again after a list change).
func (s *Server) Tools(ctx context.Context) ([]protocol.Tool, error) {
	c, err := s.Client(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.tools != nil && s.c == c {
		list := s.tools
		s.mu.Unlock()
		return list, nil
	}
	gen := s.toolsGen
	s.mu.Unlock()
	all, err := client.Collect(c.Tools(ctx))
	if err != nil {
		return nil, s.wrap(err)
	}
	list := make([]protocol.Tool, 0, len(all))
	for _, t := range all {
		if s.Allowed(t.Name) {
			list = append(list, t)
		}
	}
	s.mu.Lock()
	if gen == s.toolsGen && s.c == c {
		s.tools = list
	}
	s.mu.Unlock()
	return list, nil
}

// CallTool calls one of the server's tools (by the server's name for it).
// A tool that its entry does not allow fails with KindNotAllowed.
func (s *Server) CallTool(ctx context.Context, p *protocol.CallToolParams) (*protocol.CallToolResult, error) {
	if !s.Allowed(p.Name) {
		return nil, &Error{Server: s.cfg.Name, Kind: KindNotAllowed, Err: fmt.Errorf("tool %q is not allowed by the server's allowedTools/blockedTools", p.Name)}
	}
	c, err := s.Client(ctx)
	if err != nil {
		return nil, err
	}
	res, err := c.CallTool(ctx, p)
	return res, s.wrap(err)
}

// wrap makes a transport failure or timeout of a request an *Error with
// the server's stderr; errors the server answered stay as they are.
func (s *Server) wrap(err error) error {
	if err == nil {
		return nil
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return err
	}
	kind := KindOf(err)
	if kind == 0 && errors.Is(err, jsonrpc.ErrClosed) {
		kind = KindUnreachable
	}
	if kind == 0 {
		return err
	}
	return &Error{Server: s.cfg.Name, Kind: kind, Err: err, Stderr: tail(s.Stderr())}
}

// Tools returns the aggregated tool list of the servers that were
// started, named as the prefix mode says and filtered by the allow and
// deny lists. Servers that fail are left out and their errors joined.
func (h *Host) Tools(ctx context.Context) ([]Tool, error) {
	var list []*Server
	for _, s := range h.Servers() {
		s.mu.Lock()
		if s.started {
			list = append(list, s)
		}
		s.mu.Unlock()
	}
	lists := make([][]protocol.Tool, len(list))
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, s := range list {
		wg.Go(func() { lists[i], errs[i] = s.Tools(ctx) })
	}
	wg.Wait()
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.cfg.Name
	}
	tools := Aggregate(names, lists, h.opts.Separator, h.opts.Prefix)
	routes := make(map[string]route, len(tools))
	out := tools[:0]
	for _, t := range tools {
		if !allowed(t.Name, h.opts.Allow, h.opts.Deny) {
			continue
		}
		routes[t.Name] = route{t.Server, t.Tool.Name}
		out = append(out, t)
	}
	h.mu.Lock()
	h.names = routes
	h.mu.Unlock()
	return out, errors.Join(errs...)
}

// Resolve returns the server and the server's tool name behind an
// aggregated tool name (listing the tools first if needed).
func (h *Host) Resolve(ctx context.Context, name string) (*Server, string, error) {
	for i := 0; i < 2; i++ {
		h.mu.Lock()
		r, ok := h.names[name]
		h.mu.Unlock()
		if ok {
			s, err := h.Server(r.server)
			return s, r.tool, err
		}
		if i == 0 {
			h.Tools(ctx)
		}
	}
	return nil, "", &Error{Kind: KindUnknown, Err: fmt.Errorf("no tool named %q", name)}
}

// Call calls a tool by its aggregated name with arguments given as any
// value that marshals to a JSON object.
func (h *Host) Call(ctx context.Context, name string, args any) (*protocol.CallToolResult, error) {
	s, tool, err := h.Resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	if !s.Allowed(tool) {
		return nil, &Error{Server: s.cfg.Name, Kind: KindNotAllowed, Err: fmt.Errorf("tool %q is not allowed", tool)}
	}
	c, err := s.Client(ctx)
	if err != nil {
		return nil, err
	}
	res, err := c.Call(ctx, tool, args)
	return res, s.wrap(err)
}

// Aggregate names the tools of several servers (lists[i] belongs to
// servers[i]) for one list: server + sep + tool, or the tool's own name,
// as mode says. Names are kept within ^[a-zA-Z0-9_-]{1,64}$: other
// characters become _, and a name too long, or clashing after that, is
// shortened and given a hash of the original. With PrefixNever, a tool
// whose name an earlier server already has is left out.
func Aggregate(servers []string, lists [][]protocol.Tool, sep string, mode PrefixMode) []Tool {
	owners := map[string]int{} // sanitized tool name -> number of servers with it
	for _, l := range lists {
		seen := map[string]bool{}
		for _, t := range l {
			n := sanitize(t.Name)
			if !seen[n] {
				seen[n] = true
				owners[n]++
			}
		}
	}
	used := map[string]bool{}
	var out []Tool
	for i, l := range lists {
		for _, t := range l {
			base := sanitize(t.Name)
			name := base
			if mode == PrefixAlways || mode == PrefixOnConflict && owners[base] > 1 || mode == "" {
				name = sanitize(servers[i]) + sep + base
			}
			full := servers[i] + "\x00" + t.Name
			if len(name) > maxNameLen {
				name = hashed(name, full)
			}
			if used[name] {
				if mode == PrefixNever {
					continue
				}
				name = hashed(name, full)
				if used[name] {
					continue
				}
			}
			used[name] = true
			out = append(out, Tool{Name: name, Server: servers[i], Tool: t})
		}
	}
	return out
}

// hashed shortens name to leave room for "-" and eight hex digits of a
// hash of full.
func hashed(name, full string) string {
	h := fnv.New32a()
	h.Write([]byte(full))
	const room = maxNameLen - 9
	if len(name) > room {
		name = name[:room]
	}
	return fmt.Sprintf("%s-%08x", name, h.Sum32())
}

// sanitize replaces what tool names may not contain with _.
func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	b := []byte(s)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func nameByte(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// validName reports whether s uses only the characters of tool names.
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

// Do runs f with the server's client (waiting while it starts, failing
// fast while it is down) and returns f's error, a transport failure or
// timeout of which is made an *[Error] with the server's stderr.
func (s *Server) Do(ctx context.Context, f func(c *client.Client) error) error {
	c, err := s.Client(ctx)
	if err != nil {
		return err
	}
	return s.wrap(f(c))
}
