package auth

import (
	"context"
	"io"
	"net/http"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// Login runs the Grant now, whether or not a token is stored, and
// stores the token: what "ferry login" does. The server is asked first
// (a GET without a token) for the challenge of its refusal, which may
// name its metadata and the scopes it wants.
func (a *Authorizer) Login(ctx context.Context) (*Token, error) {
	if a.Grant == nil {
		return nil, ErrNoGrant
	}
	if a.server() == "" {
		return nil, errNoServer
	}
	cs, err := a.probe(ctx)
	if err != nil {
		return nil, err
	}
	return a.authorizeShared(ctx, &refusal{status: http.StatusUnauthorized, challenges: cs, sent: a.current(ctx), force: true})
}

// Token returns the token requests carry now, refreshed if it expired;
// nil when there is none.
func (a *Authorizer) Token(ctx context.Context) (*Token, error) {
	if a.server() == "" {
		return nil, errNoServer
	}
	return a.current(ctx), nil
}

// Logout forgets the token (the client's registrations are kept, so
// that the next login uses the same client and redirect URI).
func (a *Authorizer) Logout(ctx context.Context) error {
	if a.server() == "" {
		return errNoServer
	}
	err := a.store().Update(ctx, a.server(), func(r *Record) (*Record, error) {
		if r != nil {
			r.Token = nil
		}
		return r, nil
	})
	a.setToken(nil)
	return err
}

var errNoServer = errorString("auth: the Authorizer has no Server")

type errorString string

func (e errorString) Error() string { return string(e) }

// probe asks the server for the challenge of its refusal of a request
// without a token. A server that does not refuse gives none: its
// metadata is then looked for at the well-known addresses.
func (a *Authorizer) probe(ctx context.Context) ([]metadata.Challenge, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.server(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream, application/json")
	resp, err := a.fetchClient().Do(req)
	if err != nil {
		return nil, bare(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return nil, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	return metadata.ParseChallenges(resp.Header.Values("WWW-Authenticate")), nil
}
