package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/intercept"
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
	// *[protocol.CreateMessageParams], *[protocol.RequestParams], raw
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
// the handler should return, and the handler runs again when the client
// retries with the answers (code before AskAll runs again: see [Once]).
// Answers of earlier rounds are carried in the sealed requestState, so a
// handler may ask in several rounds.
//
// The errors are the same in both eras, and are protocol errors (a
// *[jsonrpc.Error] in the chain, which a tool handler that returns them
// sends as such, not as a tool error):
//   - a question whose capability the client did not declare:
//     MissingRequiredClientCapability (-32021), which also matches
//     [ErrClientUnsupported]. Check [Request.ClientCapabilities] first to
//     ask only what the client can answer.
//   - an answer that is not a result of the question's method (an
//     elicitation answered {"action":"bogus"}): invalid params (-32602).
func (r *Request) AskAll(ctx context.Context, qs ...Question) (map[string]jsontext.Value, error) {
	seen := make(map[string]bool, len(qs))
	for _, q := range qs {
		if q.Key == "" || seen[q.Key] {
			return nil, fmt.Errorf("server: question keys must be non-empty and unique, got %q", q.Key)
		}
		seen[q.Key] = true
		if err := r.checkCapability(q.Method, q.Params); err != nil {
			return nil, err
		}
	}
	if r.task != nil {
		return r.task.ask(ctx, qs)
	}
	answers := make(map[string]jsontext.Value, len(qs))
	missing := false
	for _, q := range qs {
		raw, err := r.answer(ctx, q)
		switch {
		case errors.Is(err, ErrInputRequired):
			missing = true // the other questions go out with it
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

// ask is [Request.Elicit], [Request.CreateMessage] and
// [Request.ListRoots]: one question, numbered by its kind and its place
// among the handler's questions, whose answer is decoded into out.
func (r *Request) ask(ctx context.Context, kind, method string, params, out any) error {
	if err := r.checkCapability(method, params); err != nil {
		return err
	}
	q := Question{Method: method, Params: params}
	if r.mrtr != nil {
		q.Key = r.mrtr.nextKey(kind)
	}
	raw, err := r.answer(ctx, q)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return invalidAnswer(method, err)
	}
	return nil
}

// answer is the one place a question is put to the client and its answer
// checked, in the request's era: a server-to-client request in a legacy
// session, the answer carried by the retried request (or
// ErrInputRequired, the question recorded) in a stateless one.
func (r *Request) answer(ctx context.Context, q Question) (jsontext.Value, error) {
	if r.task != nil {
		answers, err := r.task.ask(ctx, []Question{q})
		return answers[q.Key], err
	}
	params := q.Params
	if params == nil {
		params = jsontext.Value("{}")
	}
	if r.stateless {
		if r.mrtr == nil {
			return nil, fmt.Errorf("server: %s requests cannot ask the client questions", r.Method)
		}
		return r.put(ctx, q.Key, q.Method, params)
	}
	if ep, ok := params.(*protocol.ElicitParams); ok {
		params = r.legacyElicitParams(ep)
	}
	raw, err := r.put(ctx, q.Key, q.Method, params)
	if err != nil {
		return nil, err
	}
	if err := checkAnswer(q.Method, raw); err != nil {
		return nil, invalidAnswer(q.Method, err)
	}
	return raw, nil
}

// put puts a question to the client through the sending middleware: a
// server-to-client request in a legacy session; in a stateless one, the
// answer the retried request carries under key, or ErrInputRequired.
func (r *Request) put(ctx context.Context, key, method string, params any) (jsontext.Value, error) {
	a := &asked{r: r, key: key}
	if r.server.sending == nil {
		return a.put(ctx, method, params)
	}
	ir := &intercept.Request{Method: method, ProtocolVersion: r.ProtocolVersion, Stateless: r.stateless, Params: params}
	ir.Source = a
	res, err := r.server.sending(ctx, ir)
	if err != nil {
		return nil, err
	}
	return rawResult(res.Value)
}

// rawResult is a result's JSON, encoded when it is not raw already.
func rawResult(v any) (jsontext.Value, error) {
	if raw, ok := v.(jsontext.Value); ok {
		return raw, nil
	}
	return json.Marshal(v)
}

// asked is a question a handler puts to the client, as the source of the
// intercept.Request its sending middleware sees.
type asked struct {
	r   *Request // whose handler asks
	key string   // the question's key in a stateless request
}

// put puts the question in the request's era.
func (a *asked) put(ctx context.Context, method string, params any) (jsontext.Value, error) {
	if a.r.stateless {
		return a.r.mrtr.answerKey(a.key, method, params)
	}
	m, err := a.r.peer.Call(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return m.Result, nil
}

// sendIntercepted is the innermost handler of the sending middleware: it
// puts the question req stands for, with the params middleware left.
func sendIntercepted(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
	a, ok := req.Source.(*asked)
	if !ok {
		return intercept.Result{}, fmt.Errorf("server: middleware passed on a request (%s) the server did not ask", req.Method)
	}
	params, err := withAddedMeta(req.Params, req.Meta)
	if err != nil {
		return intercept.Result{}, fmt.Errorf("server: adding to the _meta of %s: %w", req.Method, err)
	}
	raw, err := a.put(ctx, req.Method, params)
	return intercept.Result{Value: raw}, err
}

// withAddedMeta returns the params of a question with the members sending
// middleware added to its _meta (intercept.Request.Meta) merged in, over
// the handler's own members of the same name but under the protocol's
// (the related task of a 2025-11-25 task's question), or params as they
// are when middleware added none.
func withAddedMeta(params any, added protocol.Meta) (any, error) {
	if len(added) == 0 {
		return params, nil
	}
	return editMeta(params, func(meta protocol.Meta) {
		for k, v := range added {
			if _, ok := meta[k]; !ok || !protocolKey(k) {
				meta[k] = v
			}
		}
	})
}

// protocolKey reports whether a _meta key is the protocol's: "Any prefix
// where the second label is modelcontextprotocol or mcp is reserved for
// MCP use."
func protocolKey(k string) bool {
	prefix, _, ok := strings.Cut(k, "/")
	if !ok {
		return false
	}
	labels := strings.Split(prefix, ".")
	return len(labels) > 1 && (labels[1] == "modelcontextprotocol" || labels[1] == "mcp")
}

// editMeta returns params, an object, with its _meta as edit leaves it.
// Neither params nor their _meta map is written to: the object is built
// anew.
func editMeta(params any, edit func(protocol.Meta)) (jsontext.Value, error) {
	if params == nil {
		params = jsontext.Value("{}") // middleware dropped them
	}
	raw, err := rawResult(params)
	if err != nil {
		return nil, err
	}
	var obj map[string]jsontext.Value
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the params are not an object: %.40s", raw)
	}
	meta := protocol.Meta{}
	if own, ok := obj["_meta"]; ok {
		if err := json.Unmarshal(own, &meta); err != nil {
			return nil, fmt.Errorf("the params' _meta is not an object: %.40s", own)
		}
		if meta == nil {
			meta = protocol.Meta{} // "_meta": null
		}
	}
	edit(meta)
	if obj["_meta"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	return json.Marshal(obj, json.Deterministic(true))
}

// A question has no name, arguments, progress token or caller of its own.
func (a *asked) Name() string                  { return "" }
func (a *asked) Arguments() jsontext.Value     { return nil }
func (a *asked) ProgressToken() jsontext.Value { return nil }
func (a *asked) Caller() *intercept.Caller     { return nil }

// invalidAnswer is the error of an answer that is not a result of its
// question's method, the same in both eras: the client's fault, in the
// stateless era in the params of its retried request.
func invalidAnswer(method string, err error) error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid answer from the client to %s: %v", method, err)
}

// checkCapability returns the error of a question whose capability the
// client did not declare, the same in both eras; nil when it did.
func (r *Request) checkCapability(method string, params any) error {
	ok, need, err := r.canAsk(method, params)
	if err != nil || ok {
		return err
	}
	// "A server MUST NOT rely on capabilities the client has not
	// declared. If processing a request requires a capability the client
	// did not include in io.modelcontextprotocol/clientCapabilities, the
	// server MUST return a MissingRequiredClientCapabilityError" (2026-07-28;
	// the legacy revisions name no error for it, and get the same one).
	data, _ := json.Marshal(&protocol.MissingRequiredClientCapabilityData{RequiredCapabilities: need})
	return &unsupportedError{method: method, rpc: &jsonrpc.Error{
		Code: protocol.CodeMissingRequiredClientCapability, Message: "Missing required client capability", Data: data}}
}

// unsupportedError is a question the client cannot answer: both the
// MissingRequiredClientCapability error sent back and ErrClientUnsupported.
type unsupportedError struct {
	method string
	rpc    *jsonrpc.Error
}

func (e *unsupportedError) Error() string {
	return fmt.Sprintf("server: the client did not declare the capability to answer %s (data: %s)", e.method, e.rpc.Data)
}

func (e *unsupportedError) Unwrap() []error { return []error{ErrClientUnsupported, e.rpc} }

// canAsk reports whether the client declared the capability a question
// needs, and which capability that is.
func (r *Request) canAsk(method string, params any) (bool, protocol.ClientCapabilities, error) {
	caps := r.ClientCapabilities
	switch method {
	case protocol.MethodElicit:
		need := protocol.ClientCapabilities{Elicitation: &protocol.ElicitationCapability{}}
		mode, err := elicitMode(params)
		if err != nil {
			return false, need, err
		}
		ok := caps.Elicitation.SupportsForm()
		if mode == protocol.ElicitURL {
			need.Elicitation.URL = map[string]any{}
			ok = caps.Elicitation.SupportsURL()
		}
		if !r.stateless && !protocol.AtLeast(r.ProtocolVersion, protocol.Version20250618) {
			ok = false // elicitation came with 2025-06-18
		}
		return ok, need, nil
	case protocol.MethodCreateMessage:
		return caps.Sampling != nil, protocol.ClientCapabilities{Sampling: &protocol.SamplingCapability{}}, nil
	case protocol.MethodListRoots:
		return caps.Roots != nil, protocol.ClientCapabilities{Roots: &protocol.RootsCapability{}}, nil
	}
	return false, protocol.ClientCapabilities{}, fmt.Errorf("server: %q is not a question a server can ask the client", method)
}

// elicitMode returns the mode of elicitation params, given as a
// *protocol.ElicitParams or as anything that encodes to them.
func elicitMode(params any) (string, error) {
	switch p := params.(type) {
	case nil:
		return "", nil
	case *protocol.ElicitParams:
		return p.Mode, nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return "", fmt.Errorf("encoding %s params: %w", protocol.MethodElicit, err)
	}
	var mode struct {
		Mode string `json:"mode"`
	}
	json.Unmarshal(raw, &mode)
	return mode.Mode, nil
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
// records the question and returns ErrInputRequired. A null answer is no
// answer.
func (m *mrtr) answerKey(key, method string, params any) (jsontext.Value, error) {
	if raw, ok := m.responses[key]; ok && len(raw) > 0 && string(raw) != "null" {
		if err := checkAnswer(method, raw); err != nil {
			return nil, invalidAnswer(method, fmt.Errorf("input response %q: %w", key, err))
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
