package server

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// PromptHandler renders a prompt with the arguments the client gave.
// Required arguments are checked before it runs.
type PromptHandler func(ctx context.Context, req *Request, args map[string]string) (*protocol.GetPromptResult, error)

type promptEntry struct {
	prompt  protocol.Prompt
	handler PromptHandler
}

// AddPrompt adds (or replaces) a prompt. It panics on an empty name and on
// a nil handler.
func (s *Server) AddPrompt(p *protocol.Prompt, h PromptHandler) {
	if p.Name == "" {
		panic("server: a prompt needs a name")
	}
	mustHandler(h == nil, fmt.Sprintf("prompt %q", p.Name))
	s.mu.Lock()
	s.prompts.put(p.Name, &promptEntry{prompt: *p, handler: h})
	s.mu.Unlock()
	s.listChanged(protocol.NotificationPromptsListChanged)
}

// RemovePrompts removes prompts by name.
func (s *Server) RemovePrompts(names ...string) {
	s.mu.Lock()
	removed := s.prompts.remove(names...)
	s.mu.Unlock()
	if removed {
		s.listChanged(protocol.NotificationPromptsListChanged)
	}
}

func (s *Server) listPrompts(r *Request, params jsontext.Value) (any, error) {
	var p protocol.PaginatedParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	entries, next, err := s.prompts.page(p.Cursor, s.opts.PageSize)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	res := &protocol.ListPromptsResult{Prompts: make([]protocol.Prompt, len(entries)), NextCursor: next}
	for i, e := range entries {
		res.Prompts[i] = e.prompt
		if !protocol.AtLeast(r.ProtocolVersion, protocol.Version20250618) {
			res.Prompts[i].Title = ""
			for j := range res.Prompts[i].Arguments {
				if res.Prompts[i].Arguments[j].Title != "" {
					args := append([]protocol.PromptArgument(nil), res.Prompts[i].Arguments...)
					for k := range args {
						args[k].Title = ""
					}
					res.Prompts[i].Arguments = args
					break
				}
			}
		}
		if !protocol.AtLeast(r.ProtocolVersion, protocol.Version20251125) {
			res.Prompts[i].Icons = nil
		}
	}
	return res, nil
}

func (s *Server) getPrompt(ctx context.Context, r *Request, params jsontext.Value) (any, error) {
	var p protocol.GetPromptParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	e, ok := s.prompts.get(p.Name)
	s.mu.RUnlock()
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt %q", p.Name)
	}
	for _, a := range e.prompt.Arguments {
		if _, given := p.Arguments[a.Name]; a.Required && !given {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "prompt %q: missing required argument %q", p.Name, a.Name)
		}
	}
	if p.Arguments == nil {
		p.Arguments = map[string]string{}
	}
	if r.stateless {
		var argsRaw jsontext.Value
		if len(p.Arguments) > 0 {
			argsRaw = mustJSON(p.Arguments)
		}
		if err := r.startMRTR(protocol.MethodPromptsGet, p.Name, argsRaw, &p.MRTRParams); err != nil {
			return nil, err
		}
	}
	return runMRTR(ctx, r, func() (any, error) { return e.handler(ctx, r, p.Arguments) })
}
