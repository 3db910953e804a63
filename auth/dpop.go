package auth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// dpop proves possession of a key (RFC 9449): every request that uses a
// DPoP-bound token, and every token request that asks for one, carries
// a proof signed with the key, and the nonces servers hand out are kept
// (per origin) for the next proofs.
type dpop struct {
	key    *ecdsa.PrivateKey
	signer jose.Signer

	mu     sync.Mutex
	nonces map[string]string // origin -> last nonce
}

// newDPoP returns the DPoP key stored as a private JWK in stored, or a
// new one when stored is empty; the second result is the JWK to store.
func newDPoP(stored []byte) (*dpop, []byte, error) {
	var key *ecdsa.PrivateKey
	if len(stored) > 0 {
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(stored); err != nil {
			return nil, nil, fmt.Errorf("auth: the stored DPoP key: %w", err)
		}
		k, ok := jwk.Key.(*ecdsa.PrivateKey)
		if !ok {
			return nil, nil, fmt.Errorf("auth: the stored DPoP key is a %T, not an EC private key", jwk.Key)
		}
		key = k
	} else {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		key = k
		b, err := (&jose.JSONWebKey{Key: key, Algorithm: string(jose.ES256)}).MarshalJSON()
		if err != nil {
			return nil, nil, err
		}
		stored = b
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		return nil, nil, err
	}
	return &dpop{key: key, signer: signer, nonces: map[string]string{}}, stored, nil
}

// supports reports whether an authorization server accepts proofs
// signed the way dpop signs them (ES256).
func dpopSupported(as *metadata.AuthorizationServer) bool {
	return contains(as.DPoPSigningAlgValuesSupported, string(jose.ES256))
}

// proof returns a proof for a request of method to target (its query
// and fragment left out, RFC 9449 §4.2), bound to accessToken when it is
// not "".
func (d *dpop) proof(method, target, accessToken string) (string, error) {
	htu, origin := proofURI(target)
	claims := map[string]any{
		"jti": randomString(16),
		"htm": method,
		"htu": htu,
		"iat": time.Now().Unix(),
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	d.mu.Lock()
	if n := d.nonces[origin]; n != "" {
		claims["nonce"] = n
	}
	d.mu.Unlock()
	return jwt.Signed(d.signer).Claims(claims).Serialize()
}

// noteNonce keeps the nonce a server at target sent, if any.
func (d *dpop) noteNonce(target string, h http.Header) bool {
	n := h.Get("DPoP-Nonce")
	if n == "" {
		return false
	}
	_, origin := proofURI(target)
	d.mu.Lock()
	defer d.mu.Unlock()
	changed := d.nonces[origin] != n
	d.nonces[origin] = n
	return changed
}

// proofURI returns target without query and fragment, and its origin.
func proofURI(target string) (htu, origin string) {
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		target = target[:i]
	}
	origin = target
	if i := strings.Index(target, "://"); i >= 0 {
		if j := strings.IndexByte(target[i+3:], '/'); j >= 0 {
			origin = target[:i+3+j]
		}
	}
	return target, origin
}

// dpopTransport adds a proof to each token request and, when the
// authorization server asks for a nonce (400 use_dpop_nonce, RFC 9449
// §8), sends the request once more with it.
type dpopTransport struct {
	d    *dpop
	base http.RoundTripper
}

func (t *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			var err error
			if r, err = rewind(req); err != nil {
				return nil, err
			}
		} else {
			r = req.Clone(req.Context())
		}
		p, err := t.d.proof(r.Method, r.URL.String(), "")
		if err != nil {
			return nil, err
		}
		r.Header.Set("DPoP", p)
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		fresh := t.d.noteNonce(r.URL.String(), resp.Header)
		if attempt > 0 || !fresh || resp.StatusCode != http.StatusBadRequest {
			return resp, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error != metadata.ErrorUseDPoPNonce {
			resp.Body = io.NopCloser(bytes.NewReader(body))
			return resp, nil
		}
	}
}

// rewind returns a copy of req with its body from the start, for a
// request sent again.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return r, nil
	}
	if req.GetBody == nil {
		return nil, fmt.Errorf("auth: the body of %s %s cannot be sent again", req.Method, req.URL.Redacted())
	}
	b, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r.Body = b
	return r, nil
}

// randomString returns n random bytes in base64url.
func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
