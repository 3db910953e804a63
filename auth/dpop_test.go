package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func TestDPoPProof(t *testing.T) {
	d, stored, err := newDPoP(nil)
	if err != nil {
		t.Fatal(err)
	}
	d.noteNonce("https://rs.example.com/other", http.Header{"Dpop-Nonce": {"n1"}})
	p, err := d.proof("POST", "https://rs.example.com/mcp?x=1#f", "the-token")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(p, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	h := tok.Headers[0]
	if h.ExtraHeaders["typ"] != "dpop+jwt" || h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		t.Fatalf("header %+v: want typ dpop+jwt and a public jwk", h)
	}
	var c struct {
		JTI   string `json:"jti"`
		HTM   string `json:"htm"`
		HTU   string `json:"htu"`
		ATH   string `json:"ath"`
		Nonce string `json:"nonce"`
		IAT   int64  `json:"iat"`
	}
	if err := tok.Claims(h.JSONWebKey.Key, &c); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("the-token"))
	if c.HTM != "POST" || c.HTU != "https://rs.example.com/mcp" || c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) ||
		c.Nonce != "n1" || c.JTI == "" || time.Since(time.Unix(c.IAT, 0)) > time.Minute {
		t.Fatalf("claims %+v", c)
	}
	// The stored key is the same key.
	d2, _, err := newDPoP(stored)
	if err != nil || !d2.key.Equal(d.key) {
		t.Fatalf("stored key: %v", err)
	}
}

func TestClientAssertion(t *testing.T) {
	d, _, _ := newDPoP(nil)
	a, err := clientAssertion(d.key, "", "my-client", "https://as.example.com")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(a, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := tok.Claims(&d.key.PublicKey, &c); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(jwt.Expected{Issuer: "my-client", Subject: "my-client", AnyAudience: jwt.Audience{"https://as.example.com"}, Time: time.Now()}); err != nil || c.ID == "" {
		t.Fatalf("claims %+v: %v", c, err)
	}
}
