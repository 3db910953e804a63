package gateway

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/transport/httpserver"
)

// BearerTokens returns middleware that lets through only requests whose
// Authorization header carries one of tokens ("Bearer TOKEN"), compared in
// constant time; others get 401 with a WWW-Authenticate challenge, and
// their connection is closed. A request let through is reported to the
// listener ([httpserver.Authenticated]): its connection then counts
// against its token's share of the connections, not its address's, and
// is not given up to a new one (see [ServeOptions]); a token holding its
// share already gets 429. The
// header is removed before the request goes on: a client's token is
// never passed to a server behind the gateway ("MCP servers MUST NOT
// accept or transit any other tokens", token passthrough being forbidden).
//
// The gateway takes any func(http.Handler) http.Handler as Options.Auth,
// so an OAuth resource server's middleware plugs in the same way: the
// caller it names with [intercept.WithCaller] gets the same share of the
// connections.
func BearerTokens(tokens []string) func(http.Handler) http.Handler {
	// Comparing digests keeps the time of a comparison independent of the
	// tokens' lengths too.
	sums := make([][sha256.Size]byte, 0, len(tokens))
	for _, t := range tokens {
		if t != "" {
			sums = append(sums, sha256.Sum256([]byte(t)))
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tok, ok := bearer(r.Header.Get("Authorization"))
			sum, matched := match(sums, tok)
			if !ok || !matched {
				challenge := `Bearer realm="ferry-gateway"`
				if ok {
					challenge += `, error="invalid_token"`
				}
				w.Header().Set("WWW-Authenticate", challenge)
				refuse(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			r.Header.Del("Authorization")
			// The caller is the token, known by its digest.
			caller := &intercept.Caller{ID: string(sum[:])}
			if !httpserver.Authenticated(r.Context(), caller.ID) {
				refuse(w, "too many connections for this token", http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r.WithContext(intercept.WithCaller(r.Context(), caller)))
		})
	}
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

// match compares tok with every token's digest, without stopping early,
// and returns tok's digest.
func match(sums [][sha256.Size]byte, tok string) ([sha256.Size]byte, bool) {
	sum := sha256.Sum256([]byte(tok))
	found := 0
	for i := range sums {
		found |= subtle.ConstantTimeCompare(sum[:], sums[i][:])
	}
	return sum, found == 1
}

// ReadTokens reads bearer tokens, one per line; blank lines and lines
// starting with # are skipped. The tokens of FERRY_GATEWAY_TOKENS are
// separated by commas or white space (see [SplitTokens]).
func ReadTokens(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no tokens")
	}
	for i, t := range out {
		if strings.ContainsAny(t, " \t") {
			return nil, fmt.Errorf("token on line %d holds white space", i+1)
		}
	}
	return out, nil
}

// SplitTokens splits a list of tokens separated by commas or white space.
func SplitTokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}
