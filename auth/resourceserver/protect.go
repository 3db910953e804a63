package resourceserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/auth/metadata"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// Protect returns h behind the resource server: see the package
// documentation. It panics when the Config lacks what it needs (as
// http.Handle does for a bad pattern), so a server never starts
// unprotected by mistake.
func (c *Config) Protect(h http.Handler) http.Handler {
	if err := c.init(); err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.serve(w, r, h)
	})
}

func (c *Config) serve(w http.ResponseWriter, r *http.Request, h http.Handler) {
	if r.Method == http.MethodOptions {
		h.ServeHTTP(w, r) // CORS preflights carry no credentials
		return
	}
	token, malformed := bearer(r)
	switch {
	case malformed != "":
		// RFC 6750 §3.1: a malformed request is invalid_request, 400.
		c.challenge(w, http.StatusBadRequest, metadata.ErrorInvalidRequest, malformed, c.Scopes)
		return
	case token == "":
		// No credentials, or another scheme's (RFC 6750 §3.1: "the
		// resource server SHOULD NOT include an error code").
		c.challenge(w, http.StatusUnauthorized, "", "", c.Scopes)
		return
	}
	caller, err := c.verify(r.Context(), token)
	switch {
	case errors.Is(err, ErrInvalidToken):
		c.log().Info("resourceserver: token refused", "error", err, "remote", r.RemoteAddr)
		c.challenge(w, http.StatusUnauthorized, metadata.ErrorInvalidToken, publicReason(err), c.Scopes)
		return
	case err != nil:
		c.log().Error("resourceserver: cannot verify tokens", "error", err)
		w.Header().Set("Retry-After", "5")
		http.Error(w, "the server cannot verify tokens now", http.StatusServiceUnavailable)
		return
	}
	if missing := c.missing(caller.Scopes, c.Scopes); len(missing) > 0 {
		c.challenge(w, http.StatusForbidden, metadata.ErrorInsufficientScope, "the token lacks scopes this server needs", c.Scopes)
		return
	}
	if (len(c.ToolScopes) > 0 || c.ToolScopesFunc != nil) && r.Method == http.MethodPost {
		need, ref := c.toolScopes(r, caller)
		if ref != nil {
			ref.write(w)
			return
		}
		if len(c.missing(caller.Scopes, need)) > 0 {
			// "servers SHOULD include all scopes required for the
			// current operation in a single challenge"
			c.challenge(w, http.StatusForbidden, metadata.ErrorInsufficientScope, "the token lacks scopes this tool needs", union(c.Scopes, need))
			return
		}
	}
	if !c.heldOverUpgrade(r) {
		c.log().Error("resourceserver: WebSocket upgrade refused: ToolScopes are held over WebSocket only by the server's ToolScopesMiddleware")
		http.Error(w, "this server cannot hold its tool scopes over WebSocket", http.StatusNotImplemented)
		return
	}
	if !c.sessions.allowed(r.Header.Get("Mcp-Session-Id"), caller) {
		// A legacy session belongs to the caller who opened it: another
		// caller is told it does not exist.
		http.Error(w, "no such session", http.StatusNotFound)
		return
	}
	// Never pass the client's token on: the handler does not see it.
	r = r.Clone(intercept.WithCaller(r.Context(), caller))
	r.Header.Del("Authorization")
	r.Header.Del("DPoP")
	h.ServeHTTP(c.sessions.watch(w, r, caller), r)
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && r.Method == http.MethodDelete {
		c.sessions.forget(sid)
	}
}

// verify has the Verifier check token, and names the caller by its
// issuer and subject when the Verifier did not (in a copy: a Verifier
// may share one Caller among the requests of a token).
func (c *Config) verify(ctx context.Context, token string) (*intercept.Caller, error) {
	caller, err := c.Verifier.Verify(ctx, token, c.Resource)
	switch {
	case err != nil:
		return nil, err
	case caller == nil:
		return nil, errors.New("resourceserver: the Verifier returned neither a caller nor an error")
	case caller.ID == "":
		named := *caller
		named.ID = callerID(caller)
		return &named, nil
	}
	return caller, nil
}

// bearer returns the bearer token of the Authorization header: empty
// without one or for another scheme, and with malformed saying what is
// wrong with a header that cannot be read (several of them, or a Bearer
// credential that is not one b64token, RFC 6750 §2.1).
func bearer(r *http.Request) (token, malformed string) {
	v := r.Header.Values("Authorization")
	switch {
	case len(v) == 0:
		return "", ""
	case len(v) > 1:
		return "", "the request has more than one Authorization header"
	}
	scheme, tok, _ := strings.Cut(strings.TrimSpace(v[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", ""
	}
	tok = strings.TrimLeft(tok, " ")
	if !isB64Token(tok) {
		return "", "the Bearer credential is not a token"
	}
	return tok, ""
}

// isB64Token reports whether s is a b64token: 1*( ALPHA / DIGIT / "-" /
// "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// publicReason is what a client is told about its refused token: the
// reason, without the token or its claims.
func publicReason(err error) string {
	var re *reasonError
	if errors.As(err, &re) {
		return re.public
	}
	return "the token is not valid for this server"
}

// reasonError is an ErrInvalidToken with a reason that may be shown to
// the client.
type reasonError struct {
	public string
	err    error
}

func (e *reasonError) Error() string {
	if e.err != nil {
		return e.public + ": " + e.err.Error()
	}
	return e.public
}

func (e *reasonError) Unwrap() []error { return []error{ErrInvalidToken, e.err} }

func invalid(public string, err error) error { return &reasonError{public: public, err: err} }

// toolScopes returns the scopes the tools a POST calls need. It decides
// from the body, decoded as ferry's handlers decode it (strictly: escapes
// resolved, duplicate names refused, each message of a batch), and from
// the tool name the server dispatches on, never from the Mcp-Method and
// Mcp-Name headers: those are the client's to set, and a scope check
// must not depend on whether the handler behind it compares them with
// the body. A body that cannot be decoded is refused rather than guessed
// at. The body is read here and given back to the handler.
func (c *Config) toolScopes(r *http.Request, caller *intercept.Caller) ([]string, *refusal) {
	body, ref := c.readBody(r)
	if ref != nil {
		return nil, ref
	}
	msgs, ref := decodeMessages(body, len(body))
	if ref != nil {
		return nil, ref
	}
	var need []string
	for _, m := range msgs {
		tool := calledTool(m)
		need = union(need, c.ToolScopes[tool])
		if c.ToolScopesFunc != nil && tool != "" {
			need = union(need, c.ToolScopesFunc(r, caller, tool))
		}
	}
	return need, nil
}

// refusal is a request refused for its body: the HTTP status and the
// JSON-RPC error answered.
type refusal struct {
	status int
	id     jsonrpc.ID
	err    *jsonrpc.Error
}

func (ref *refusal) write(w http.ResponseWriter) {
	b, _ := jsonrpc.AppendMessage(nil, &jsonrpc.Message{ID: ref.id, Error: ref.err})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ref.status)
	w.Write(b)
}

// readBody reads the body of r, up to MaxBodyBytes, and puts it back for
// the handler.
func (c *Config) readBody(r *http.Request) ([]byte, *refusal) {
	limit := c.MaxBodyBytes
	if limit <= 0 {
		limit = jsonrpc.DefaultMaxSize
	}
	tooLarge := &refusal{http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request body exceeds the limit of %d bytes", limit)}
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	r.Body.Close()
	switch {
	case err != nil:
		return nil, &refusal{http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeParseError, "reading the body: %v", err)}
	case int64(len(body)) > limit:
		return nil, tooLarge
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// decodeMessages decodes the message of a body, or each message of a
// batch (which the 2025-03-26 revision allowed), with the JSON-RPC
// decoder the handlers use.
func decodeMessages(body []byte, limit int) ([]*jsonrpc.Message, *refusal) {
	lim := jsonrpc.Limits{MaxSize: limit}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		m, err := jsonrpc.Decode(body, lim)
		if err != nil {
			return nil, undecodable(err)
		}
		return []*jsonrpc.Message{m}, nil
	}
	var batch []jsontext.Value
	if err := json.Unmarshal(trimmed, &batch); err != nil {
		return nil, &refusal{http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeParseError, "the batch is not valid JSON: %v", err)}
	}
	if len(batch) == 0 {
		return nil, &refusal{http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "empty batch")}
	}
	msgs := make([]*jsonrpc.Message, len(batch))
	for i, v := range batch {
		m, err := jsonrpc.Decode(v, lim)
		if err != nil {
			return nil, undecodable(err)
		}
		msgs[i] = m
	}
	return msgs, nil
}

func undecodable(err error) *refusal {
	ref := &refusal{status: http.StatusBadRequest, err: jsonrpc.AsError(err)}
	var de *jsonrpc.DecodeError
	if errors.As(err, &de) {
		ref.id, ref.err = de.ID, de.Err
	}
	return ref
}

// calledTool returns the name of the tool m calls, as the server reads
// it ("" for a message that calls none). The decoder already refused
// params with duplicate members or invalid JSON, so the first "name"
// member is the one the server reads: the walk stops there, and reads a
// large arguments value only when it comes before the name.
func calledTool(m *jsonrpc.Message) string {
	if m.Method != protocol.MethodToolsCall || len(m.Params) == 0 {
		return ""
	}
	pd := paramsDecoders.Get().(*paramsDecoder)
	defer paramsDecoders.Put(pd)
	pd.r.Reset(m.Params)
	d := &pd.d
	d.Reset(&pd.r)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for d.PeekKind() == '"' {
		member, err := d.ReadValue()
		if err != nil {
			return ""
		}
		if string(member) != `"name"` && !isEscapedName(member) {
			if d.SkipValue() != nil {
				return ""
			}
			continue
		}
		name, err := d.ReadToken()
		if err != nil || name.Kind() != '"' {
			return "" // not a string: the server refuses the call
		}
		return name.String()
	}
	return ""
}

// paramsDecoder walks a message's params for calledTool; pooled, as a
// jsontext.Decoder is costly to make per request.
type paramsDecoder struct {
	r bytes.Reader
	d jsontext.Decoder
}

var paramsDecoders = sync.Pool{New: func() any { return new(paramsDecoder) }}

// isEscapedName reports whether the raw member name raw, spelled with
// escapes, is "name".
func isEscapedName(raw jsontext.Value) bool {
	if !bytes.ContainsRune(raw, '\\') {
		return false
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	return err == nil && string(s) == "name"
}

// missing returns the scopes of need that granted does not cover, with
// the implications of Implies.
func (c *Config) missing(granted, need []string) []string {
	var out []string
	for _, s := range need {
		if !c.covers(granted, s) {
			out = append(out, s)
		}
	}
	return out
}

func (c *Config) covers(granted []string, want string) bool {
	seen := map[string]bool{}
	stack := append([]string(nil), granted...)
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s == want {
			return true
		}
		if !seen[s] {
			seen[s] = true
			stack = append(stack, c.Implies[s]...)
		}
	}
	return false
}

func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		found := false
		for _, x := range out {
			if x == s {
				found = true
				break
			}
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}

// sessionOwners remembers who opened each legacy session (the
// Mcp-Session-Id of an answer), so that no other caller uses it.
type sessionOwners struct {
	mu     sync.Mutex
	owners map[string]string // session id -> owner key
}

// callerID identifies a caller for sessions (and for the server's tasks
// and bounds), when its Verifier named it not: the issuer and the subject, or, for a token that names no
// subject (a client acting on its own behalf), the client, so that such
// callers are not all one. The client is not part of a subject's key: a
// user's session outlives the client registering anew (as the
// TypeScript SDK does for a step-up). Quoting keeps the parts apart.
func callerID(c *intercept.Caller) string {
	if c.Subject == "" {
		return strconv.Quote(c.Issuer) + " client " + strconv.Quote(c.ClientID)
	}
	return strconv.Quote(c.Issuer) + " subject " + strconv.Quote(c.Subject)
}

// stringsOf returns the strings of a claim that is a JSON array (a
// token's roles, RFC 9068 §2.2.3.1), nil for any other claim.
func stringsOf(claim any) []string {
	a, _ := claim.([]any)
	var out []string
	for _, x := range a {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (s *sessionOwners) allowed(sid string, c *intercept.Caller) bool {
	if sid == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.owners[sid]
	return !ok || o == c.ID
}

func (s *sessionOwners) forget(sid string) {
	s.mu.Lock()
	delete(s.owners, sid)
	s.mu.Unlock()
}

// watch returns w noting the session its answer opens, if any.
func (s *sessionOwners) watch(w http.ResponseWriter, r *http.Request, c *intercept.Caller) http.ResponseWriter {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		return w
	}
	return &sessionRecorder{ResponseWriter: w, s: s, key: c.ID}
}

type sessionRecorder struct {
	http.ResponseWriter
	s    *sessionOwners
	key  string
	done bool
}

func (w *sessionRecorder) record() {
	if w.done {
		return
	}
	w.done = true
	if sid := w.Header().Get("Mcp-Session-Id"); sid != "" {
		w.s.mu.Lock()
		if w.s.owners == nil {
			w.s.owners = map[string]string{}
		}
		if len(w.s.owners) >= maxSessions {
			// Forget an arbitrary one rather than grow without bound; a
			// forgotten session is merely unbound.
			for k := range w.s.owners {
				delete(w.s.owners, k)
				break
			}
		}
		w.s.owners[sid] = w.key
		w.s.mu.Unlock()
	}
}

const maxSessions = 100_000

func (w *sessionRecorder) WriteHeader(code int) { w.record(); w.ResponseWriter.WriteHeader(code) }
func (w *sessionRecorder) Write(b []byte) (int, error) {
	w.record()
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer underneath (Flush,
// deadlines).
func (w *sessionRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush keeps event streams flowing through handlers that flush with a
// type assertion.
func (w *sessionRecorder) Flush() {
	w.record()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
