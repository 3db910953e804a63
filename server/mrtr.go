package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// ErrInputRequired is returned by [Request.Elicit], [Request.CreateMessage]
// and [Request.ListRoots] during a stateless request when the client has not
// answered yet. The handler must return it (possibly wrapped): the server
// then sends an input_required result, and runs the handler again when the
// client retries with the answer.
var ErrInputRequired = errors.New("input required from the client")

// ErrClientUnsupported is returned when a handler asks a legacy client for
// something it did not declare it supports.
var ErrClientUnsupported = errors.New("the client does not support")

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
}

// answer returns the client's answer to the next question of the handler,
// or records the question and returns ErrInputRequired. Questions are
// numbered in the order the handler asks them, which is the same on every
// run of a deterministic handler.
func (m *mrtr) answer(kind, method string, params any) (jsontext.Value, error) {
	m.seq++
	key := fmt.Sprintf("%s-%d", kind, m.seq)
	if raw, ok := m.responses[key]; ok {
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

// sealedState is the payload of a requestState.
type sealedState struct {
	Version   int                       `json:"v"`
	Method    string                    `json:"m"`
	Subject   string                    `json:"s"`
	Digest    string                    `json:"d"`
	Expires   int64                     `json:"e"` // Unix milliseconds
	Responses map[string]jsontext.Value `json:"r,omitempty"`
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
		Expires: time.Now().Add(m.server.opts.RequestStateTTL).UnixMilli(), Responses: m.responses}
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
// questions, and turns ErrInputRequired into the input_required result.
func runMRTR(ctx context.Context, r *Request, run func() (any, error)) (any, error) {
	res, err := run()
	if err != nil && errors.Is(err, ErrInputRequired) && r.mrtr != nil && len(r.mrtr.needed) > 0 {
		return r.mrtr.inputRequired()
	}
	return res, err
}
