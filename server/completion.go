package server

import (
	"context"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// Completer suggests values for one argument of a prompt, or one variable
// of a resource template, given its partial value and the arguments
// already resolved.
type Completer func(ctx context.Context, req *Request, arg, value string, resolved map[string]string) ([]string, error)

type completerKey struct{ refType, name string }

// SetCompleter sets how the arguments of a prompt (refType
// [protocol.RefPrompt], name the prompt's name) or the variables of a
// resource template (refType [protocol.RefResource], name the URI
// template) are completed.
func (s *Server) SetCompleter(refType, name string, c Completer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.completers == nil {
		s.completers = make(map[completerKey]Completer)
	}
	s.completers[completerKey{refType, name}] = c
}

// maxCompletions is the schema's bound: "Must not exceed 100 items."
const maxCompletions = 100

func (s *Server) complete(ctx context.Context, r *Request, params jsontext.Value) (any, error) {
	var p protocol.CompleteParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	name := p.Ref.Name
	if p.Ref.Type == protocol.RefResource {
		name = p.Ref.URI
	}
	s.mu.RLock()
	c := s.completers[completerKey{p.Ref.Type, name}]
	s.mu.RUnlock()
	if c == nil {
		if h := s.opts.CompletionHandler; h != nil {
			return h(ctx, r, &p)
		}
		return &protocol.CompleteResult{Completion: protocol.Completion{Values: []string{}}}, nil
	}
	var resolved map[string]string
	if p.Context != nil {
		resolved = p.Context.Arguments
	}
	values, err := c(ctx, r, p.Argument.Name, p.Argument.Value, resolved)
	if err != nil {
		return nil, err
	}
	res := &protocol.CompleteResult{Completion: protocol.Completion{Values: values}}
	if values == nil {
		res.Completion.Values = []string{}
	}
	if n := len(values); n > maxCompletions {
		res.Completion.Values = values[:maxCompletions]
		res.Completion.Total = &n
		res.Completion.HasMore = true
	}
	return res, nil
}

func mustJSON(v any) jsontext.Value {
	b, _ := json.Marshal(v, json.Deterministic(true))
	return b
}
