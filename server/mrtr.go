package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// ErrInputRequired is returned by [Request.Elicit], [Request.CreateMessage],
// [Request.ListRoots] and [Request.AskAll] during a stateless request when
// the client has not answered yet. The handler should return it (possibly
// wrapped): the server then sends an input_required result, and runs the
// handler again when the client retries with the answer.
//
// A handler that returns anything else after an unanswered question (a
// result, or another error, having swallowed ErrInputRequired) cannot lose
// the question: the server knows it asked, sends the input_required result
// all the same, and logs a warning to [Options].Logger, since the handler
// went on without an answer it needed.
var ErrInputRequired = errors.New("input required from the client")

// ErrClientUnsupported matches (with errors.Is) the error of a question
// whose capability the client did not declare, in both eras. The same
// error is also a *[jsonrpc.Error] MissingRequiredClientCapability
// (-32021), so a handler that returns it sends that protocol error: the
// class the stateless revision requires ("the server MUST return a
// MissingRequiredClientCapabilityError"), which the legacy revisions,
// naming no error for it, get too.
var ErrClientUnsupported = errors.New("server: the client did not declare the capability")

// mrtr is the multi round-trip state of one stateless request: the answers
// the client has given so far (carried from round to round in the sealed
// requestState) and the questions still open.
type mrtr struct {
	server    *Server
	method    string
	subject   string         // tool or prompt name, or resource URI
	args      jsontext.Value // the request's arguments
	digest    string         // of args, so that state cannot move to another call; set once needed
	responses map[string]jsontext.Value
	needed    map[string]protocol.InputRequest
	seq       int
	// once holds the results of [Once] by key: those of earlier rounds,
	// from the requestState, and this round's.
	once map[string]jsontext.Value
}

// nextKey names the handler's next question of kind ("elicit", "sample",
// "roots") for [Request.Elicit] and the like: questions are numbered in
// the order the handler asks them, which is the same on every run of a
// deterministic handler.
func (m *mrtr) nextKey(kind string) string {
	m.seq++
	return kind + "-" + strconv.Itoa(m.seq)
}

// sealedState is the payload of a requestState.
type sealedState struct {
	Version   int                       `json:"v"`
	Method    string                    `json:"m"`
	Subject   string                    `json:"s"`
	Digest    string                    `json:"d"`
	Expires   int64                     `json:"e"` // Unix milliseconds
	Responses map[string]jsontext.Value `json:"r,omitempty"`
	Once      map[string]jsontext.Value `json:"o,omitempty"`
}

// inputRequired builds the interim result that asks the client the open
// questions.
func (m *mrtr) inputRequired() (*protocol.InputRequiredResult, error) {
	if m.digest == "" {
		// A first round, which had no state to check: the state it seals
		// must still name the arguments, or the retry (whose digest is
		// computed) would be refused as belonging to another request.
		m.digest = argsDigest(m.args)
	}
	st := sealedState{Version: 1, Method: m.method, Subject: m.subject, Digest: m.digest,
		Expires: time.Now().Add(m.server.opts.RequestStateTTL).UnixMilli(), Responses: m.responses, Once: m.once}
	payload, err := json.Marshal(&st)
	if err != nil {
		return nil, err
	}
	res := &protocol.InputRequiredResult{InputRequests: m.needed, RequestState: m.server.seal(payload)}
	res.ResultType = protocol.ResultInputRequired
	return res, nil
}

// seal protects payload with HMAC-SHA256: "If requestState influences
// authorization, resource access, or business logic, servers MUST protect
// its integrity (e.g. HMAC or AEAD)".
func (s *Server) seal(payload []byte) string {
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (s *Server) unseal(state string) ([]byte, error) {
	p, m, ok := strings.Cut(state, ".")
	if !ok {
		return nil, errors.New("malformed")
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	sum, err2 := base64.RawURLEncoding.DecodeString(m)
	if err1 != nil || err2 != nil {
		return nil, errors.New("malformed")
	}
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(payload)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return nil, errors.New("integrity check failed")
	}
	return payload, nil
}

// newMRTR prepares the round-trip state of a stateless request from the
// requestState and inputResponses it carries. State that fails
// verification is rejected: "servers MUST treat requestState as an
// attacker-controlled input ... and MUST reject state that fails
// verification."
func (s *Server) newMRTR(method, subject string, args jsontext.Value, p *protocol.MRTRParams) (*mrtr, error) {
	m := new(mrtr)
	if err := s.initMRTR(m, method, subject, args, p); err != nil {
		return nil, err
	}
	return m, nil
}

// startMRTR is newMRTR for the request being served, whose state was
// allocated with it (see [Server.statelessRequest]), so that a request that
// asks nothing allocates nothing more.
func (r *Request) startMRTR(method, subject string, args jsontext.Value, p *protocol.MRTRParams) error {
	if r.mrtrState == nil {
		r.mrtrState = new(mrtr)
	}
	if err := r.server.initMRTR(r.mrtrState, method, subject, args, p); err != nil {
		return err
	}
	r.mrtr = r.mrtrState
	return nil
}

func (s *Server) initMRTR(m *mrtr, method, subject string, args jsontext.Value, p *protocol.MRTRParams) error {
	*m = mrtr{server: s, method: method, subject: subject, args: args}
	if p.RequestState == "" && len(p.InputResponses) == 0 {
		return nil // the digest is only needed once a question is asked
	}
	m.digest = argsDigest(args)
	m.responses = make(map[string]jsontext.Value, len(p.InputResponses))
	if p.RequestState != "" {
		payload, err := s.unseal(p.RequestState)
		if err != nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid requestState: %v", err)
		}
		var st sealedState
		if err := json.Unmarshal(payload, &st); err != nil || st.Version != 1 {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid requestState")
		}
		switch {
		case time.Now().UnixMilli() > st.Expires:
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "requestState has expired; send the request again without it")
		case st.Method != method || st.Subject != subject || st.Digest != m.digest:
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "requestState belongs to another request")
		}
		for k, v := range st.Responses {
			m.responses[k] = v
		}
		m.once = st.Once
	}
	for k, v := range p.InputResponses {
		m.responses[k] = v
	}
	return nil
}

// argsDigest identifies a request's arguments independently of how the
// client formats them (member order, spacing).
// Absent, null and empty arguments are the same request: some clients
// (the official Go SDK) send {} where others send nothing.
func argsDigest(args jsontext.Value) string {
	if len(args) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return "invalid"
	}
	if obj, ok := v.(map[string]any); v == nil || ok && len(obj) == 0 {
		return ""
	}
	canon, _ := json.Marshal(v, json.Deterministic(true))
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:16])
}

// runMRTR runs a handler of a stateless request that may ask the client
// questions, and sends the questions it asked without an answer in an
// input_required result, whatever the handler returned after them.
func runMRTR(ctx context.Context, r *Request, run func() (any, error)) (any, error) {
	res, err := run()
	m := r.mrtr
	if m == nil || len(m.needed) == 0 {
		return res, err
	}
	if !errors.Is(err, ErrInputRequired) {
		// The handler swallowed ErrInputRequired: it went on without the
		// answer. Its text is not logged: it is the handler's, and may
		// hold what a log must not.
		returned := "a result"
		if err != nil {
			returned = "an error"
		}
		r.server.log.Warn("server: a handler asked the client a question, then returned "+returned+
			" instead of ErrInputRequired; the question is sent to the client all the same",
			"method", r.Method, "subject", m.subject)
	}
	return m.inputRequired()
}

// Once runs fn once per request, however often the handler runs, and
// returns its result: in a stateless request that asks the client
// questions (see [Request.Elicit]), the handler runs again on each round,
// and so does the code before each question; fn, reached through Once,
// runs on the first round that reaches it only. Its result, JSON-encoded,
// travels to the later rounds in the requestState, which the client sees
// (the state is integrity-protected, not encrypted): return no secrets.
// An error is not remembered: fn runs again on the next round.
//
// key names fn's result within the request, as [Question].Key names a
// question. In a legacy session, and for requests that cannot ask
// questions, the handler runs once and Once simply calls fn. Call Once
// from the handler's goroutine, as Elicit is.
//
//	id, err := server.Once(ctx, req, "order", func(ctx context.Context) (string, error) {
//		return shop.PlaceOrder(ctx, cart) // not twice for one request
//	})
//	if err != nil {
//		return "", err
//	}
//	res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "Pay order " + id + "?"})
func Once[T any](ctx context.Context, req *Request, key string, fn func(context.Context) (T, error)) (T, error) {
	m := req.mrtr
	if m == nil {
		return fn(ctx)
	}
	var v T
	if raw, ok := m.once[key]; ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			return v, fmt.Errorf("server: Once %q: decoding the result of an earlier round: %w", key, err)
		}
		return v, nil
	}
	v, err := fn(ctx)
	if err != nil {
		return v, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return v, fmt.Errorf("server: Once %q: encoding the result: %w", key, err)
	}
	if m.once == nil {
		m.once = make(map[string]jsontext.Value)
	}
	m.once[key] = raw
	return v, nil
}
