package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// A Question is one request a handler puts to the client with
// [Request.Ask] or [Request.AskAll]: an elicitation/create,
// sampling/createMessage or roots/list request under a key the handler
// chooses.
type Question struct {
	// Key names the question and its answer. In the stateless protocol
	// it is the key of the inputRequests and inputResponses maps, so a
	// client (or a test) can rely on it; it must be unique within the
	// request.
	Key string
	// Method is [protocol.MethodElicit], [protocol.MethodCreateMessage]
	// or [protocol.MethodListRoots].
	Method string
	// Params are the request's params: a *[protocol.ElicitParams],
	// *[protocol.CreateMessageParams], *[protocol.ListRootsParams], raw
	// JSON or any value that encodes to the params object. Nil sends {}.
	Params any
}

// Ask puts one question to the client under key and returns the
// client's answer as raw JSON (an ElicitResult, CreateMessageResult or
// ListRootsResult, already checked to be one). See [Request.AskAll].
func (r *Request) Ask(ctx context.Context, key, method string, params any) (jsontext.Value, error) {
	answers, err := r.AskAll(ctx, Question{Key: key, Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	return answers[key], nil
}

// AskAll puts several questions to the client at once and returns the
// answers by key. Unlike [Request.Elicit], [Request.CreateMessage] and
// [Request.ListRoots], which number their questions themselves, AskAll
// lets the handler name each one.
//
// Over a legacy session each question is sent as a server-to-client
// request, one after the other in the order given. For a stateless request
// the questions the client has not answered yet go out together in one
// input_required result: AskAll then returns [ErrInputRequired], which
// the handler must return, and the handler runs again when the client
// retries with the answers (code before AskAll must be safe to run
// twice). Answers of earlier rounds are carried in the sealed
// requestState, so a handler may ask in several rounds.
//
// A question whose capability the client did not declare fails the
// request: with a MissingRequiredClientCapabilityError (stateless) or
// [ErrClientUnsupported] (legacy). Check [Request.ClientCapabilities]
// first to ask only what the client can answer. An answer that is not a
// result of the question's method is an invalid-params error.
func (r *Request) AskAll(ctx context.Context, qs ...Question) (map[string]jsontext.Value, error) {
	seen := make(map[string]bool, len(qs))
	for _, q := range qs {
		if q.Key == "" || seen[q.Key] {
			return nil, fmt.Errorf("server: question keys must be non-empty and unique, got %q", q.Key)
		}
		seen[q.Key] = true
		ok, need, err := r.canAsk(q.Method, q.Params)
		if err != nil {
			return nil, err
		}
		if !ok {
			if r.stateless {
				// "Servers MUST NOT send an inputRequests that the client
				// has not declared support for in its capabilities."
				return nil, missingCapability(need)
			}
			return nil, fmt.Errorf("%w: %s", ErrClientUnsupported, q.Method)
		}
	}
	answers := make(map[string]jsontext.Value, len(qs))
	if !r.stateless {
		for _, q := range qs {
			params := questionParams(q.Params)
			if ep, ok := q.Params.(*protocol.ElicitParams); ok {
				params = r.legacyElicitParams(ep)
			}
			m, err := r.peer.Call(ctx, q.Method, params)
			if err != nil {
				return nil, err
			}
			if err := checkAnswer(q.Method, m.Result); err != nil {
				return nil, fmt.Errorf("invalid %s result from the client: %w", q.Method, err)
			}
			answers[q.Key] = m.Result
		}
		return answers, nil
	}
	if r.mrtr == nil {
		return nil, fmt.Errorf("server: %s requests cannot ask the client questions", r.Method)
	}
	missing := false
	for _, q := range qs {
		raw, err := r.mrtr.answerKey(q.Key, q.Method, questionParams(q.Params))
		switch {
		case errors.Is(err, ErrInputRequired):
			missing = true
		case err != nil:
			return nil, err
		default:
			answers[q.Key] = raw
		}
	}
	if missing {
		return nil, ErrInputRequired
	}
	return answers, nil
}

func questionParams(p any) any {
	if p == nil {
		return jsontext.Value("{}")
	}
	return p
}

// canAsk reports whether the client declared the capability a question
// needs, and which capability that is.
func (r *Request) canAsk(method string, params any) (bool, protocol.ClientCapabilities, error) {
	caps := r.ClientCapabilities
	switch method {
	case protocol.MethodElicit:
		need := protocol.ClientCapabilities{Elicitation: &protocol.ElicitationCapability{}}
		var mode struct {
			Mode string `json:"mode"`
		}
		if params != nil {
			raw, err := json.Marshal(params)
			if err != nil {
				return false, need, fmt.Errorf("encoding %s params: %w", method, err)
			}
			json.Unmarshal(raw, &mode)
		}
		ok := caps.Elicitation.SupportsForm()
		if mode.Mode == protocol.ElicitURL {
			need.Elicitation.URL = map[string]any{}
			ok = caps.Elicitation.SupportsURL()
		}
		if !r.stateless && !protocol.AtLeast(r.ProtocolVersion, protocol.Version20250618) {
			ok = false
		}
		return ok, need, nil
	case protocol.MethodCreateMessage:
		return caps.Sampling != nil, protocol.ClientCapabilities{Sampling: &protocol.SamplingCapability{}}, nil
	case protocol.MethodListRoots:
		return caps.Roots != nil, protocol.ClientCapabilities{Roots: &protocol.RootsCapability{}}, nil
	}
	return false, protocol.ClientCapabilities{}, fmt.Errorf("server: %q is not a question a server can ask the client", method)
}

// checkAnswer checks that raw is a result of method: "Servers SHOULD
// validate that the data provided by the client is a valid
// InputResponses object and that the information inside can be correctly
// parsed."
func checkAnswer(method string, raw jsontext.Value) error {
	if len(raw) == 0 || raw[0] != '{' {
		return errors.New("the answer is not a JSON object")
	}
	switch method {
	case protocol.MethodElicit:
		var res protocol.ElicitResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return err
		}
		switch res.Action {
		case protocol.ElicitAccept, protocol.ElicitDecline, protocol.ElicitCancel:
		default:
			return fmt.Errorf("unknown elicitation action %q", res.Action)
		}
	case protocol.MethodCreateMessage:
		var res protocol.CreateMessageResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return err
		}
		if res.Role == "" || res.Model == "" {
			return errors.New("a sampling result needs role and model")
		}
	case protocol.MethodListRoots:
		var res struct {
			Roots *[]protocol.Root `json:"roots"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return err
		}
		if res.Roots == nil {
			return errors.New("a roots/list result needs roots")
		}
	}
	return nil
}

// answerKey returns the client's answer to the question named key, or
// records the question and returns ErrInputRequired.
func (m *mrtr) answerKey(key, method string, params any) (jsontext.Value, error) {
	if raw, ok := m.responses[key]; ok && len(raw) > 0 && string(raw) != "null" {
		if err := checkAnswer(method, raw); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid input response %q to %s: %v", key, method, err)
		}
		return raw, nil
	}
	p, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s params: %w", method, err)
	}
	if m.needed == nil {
		m.needed = make(map[string]protocol.InputRequest)
	}
	m.needed[key] = protocol.InputRequest{Method: method, Params: p}
	return nil, ErrInputRequired
}
