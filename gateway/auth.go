package gateway

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/transport/httpserver"
)

// BearerTokens returns middleware that lets through only requests whose
// Authorization header carries one of tokens ("Bearer TOKEN"), each
// known by its digest: [BearerCallers] with tokens that name no caller.
func BearerTokens(tokens []string) func(http.Handler) http.Handler {
	ts := make([]Token, len(tokens))
	for i, t := range tokens {
		ts[i] = Token{Token: t}
	}
	return BearerCallers(ts)
}

// Token is a bearer token a client may present, and who presents it.
type Token struct {
	// Token is the secret.
	Token string
	// Caller names who presents it: the caller's Subject, which access
	// rules and audit records name (a token that names none is known by
	// the digest of the token); Roles are the roles it holds, for the
	// access rules.
	Caller string
	Roles  []string
}

// BearerCallers returns middleware that lets through only requests whose
// Authorization header carries one of tokens ("Bearer TOKEN"), compared in
// constant time; others get 401 with a WWW-Authenticate challenge, and
// their connection is closed. A request let through is made the token's
// caller's ([intercept.WithCaller]: its name and roles, or for a token
// that names none, the token's digest) and reported to the listener
// ([httpserver.Authenticated]): its connection then counts against its
// caller's share of the connections, not its address's, and is not given
// up to a new one (see [ServeOptions]); a caller holding its share
// already gets 429. The header is removed before the request goes on: a
// client's token is never passed to a server behind the gateway ("MCP
// servers MUST NOT accept or transit any other tokens", token
// passthrough being forbidden).
//
// The gateway takes any func(http.Handler) http.Handler as Options.Auth,
// so an OAuth resource server's middleware plugs in the same way: the
// caller it names with [intercept.WithCaller] gets the same share of the
// connections.
func BearerCallers(tokens []Token) func(http.Handler) http.Handler {
	// Comparing digests keeps the time of a comparison independent of the
	// tokens' lengths too.
	sums := make([][sha256.Size]byte, 0, len(tokens))
	callers := make([]*intercept.Caller, 0, len(tokens))
	for _, t := range tokens {
		if t.Token != "" {
			sum := sha256.Sum256([]byte(t.Token))
			sums = append(sums, sum)
			callers = append(callers, tokenCaller(t, sum))
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tok, ok := bearer(r.Header.Get("Authorization"))
			i := match(sums, tok)
			if !ok || i < 0 {
				challenge := `Bearer realm="ferry-gateway"`
				if ok {
					challenge += `, error="invalid_token"`
				}
				w.Header().Set("WWW-Authenticate", challenge)
				refuse(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			r.Header.Del("Authorization")
			caller := callers[i]
			if !httpserver.Authenticated(r.Context(), caller.ID) {
				refuse(w, "too many connections for this token", http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r.WithContext(intercept.WithCaller(r.Context(), caller)))
		})
	}
}

// tokenCaller is the caller of token t, whose digest is sum: its named
// caller (ID and Subject alike, so that rules and limits name it as the
// file does), or the digest (which names the token without revealing it,
// in the audit records too).
func tokenCaller(t Token, sum [sha256.Size]byte) *intercept.Caller {
	if t.Caller == "" {
		return &intercept.Caller{ID: "token-sha256:" + hex.EncodeToString(sum[:])}
	}
	return &intercept.Caller{ID: t.Caller, Subject: t.Caller, Roles: t.Roles}
}

// refuse answers status and closes the connection: a client without
// credentials gets no connection to keep (it would hold a place other
// clients need), and one over its share gives one back.
func refuse(w http.ResponseWriter, msg string, status int) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, status)
}

// bearer returns the token of an Authorization header.
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// match compares tok with every token's digest, without stopping early
// nor branching on a comparison, and returns the index of the one it
// matches, -1 for none.
func match(sums [][sha256.Size]byte, tok string) int {
	sum := sha256.Sum256([]byte(tok))
	found := -1
	for i := range sums {
		eq := subtle.ConstantTimeCompare(sum[:], sums[i][:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	return found
}

// ReadTokens reads bearer tokens, one per line: "TOKEN", or "TOKEN
// CALLER [ROLE...]" for a token that names its caller and roles (fields
// separated by spaces or tabs); blank lines and lines starting with # are
// skipped. The tokens of FERRY_GATEWAY_TOKENS are separated by commas or
// white space (see [SplitTokens]). Errors name the line, never a token.
func ReadTokens(r io.Reader) ([]Token, error) {
	var out []Token
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		t := Token{Token: fields[0]}
		if len(fields) > 1 {
			t.Caller, t.Roles = fields[1], fields[2:]
		}
		if slices.ContainsFunc(out, func(o Token) bool { return o.Token == t.Token }) {
			return nil, fmt.Errorf("line %d repeats the token of an earlier line", n)
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no tokens")
	}
	return out, nil
}

// SplitTokens splits a list of tokens separated by commas or white space.
func SplitTokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}
