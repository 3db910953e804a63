package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// OAuth is how an entry's client identifies itself to the authorization
// server of an HTTP server, as hosts write it: Claude Code's and Gemini
// CLI's "oauth" object (clientId, clientSecret, callbackPort,
// redirectUri, scopes) or Cursor's "auth" object (CLIENT_ID,
// CLIENT_SECRET, scopes). Without it, clients register themselves.
type OAuth struct {
	// ClientID and ClientSecret are a client registered beforehand.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"-"` // never written out
	// CallbackPort is the port of the loopback redirect URI
	// (http://localhost:PORT/callback, as Claude Code registers it);
	// RedirectURI, when set, is the whole redirect URI.
	CallbackPort int    `json:"callbackPort,omitempty"`
	RedirectURI  string `json:"redirectUri,omitempty"`
	// Scopes are asked for instead of those the server suggests.
	Scopes []string `json:"scopes,omitempty"`
	// Grant is how a gateway (ferry serve) obtains the tokens it sends
	// the server: "" for the token "ferry login" stored (refreshed with
	// its refresh token), GrantClientCredentials for tokens of its own
	// with ClientID and ClientSecret, GrantTokenExchange for each
	// caller's token exchanged (RFC 8693) for one of the server, with
	// the client's own token for what no caller asks (the connection's
	// setup).
	Grant string `json:"grant,omitempty"`
	// Audience is the audience a token exchange asks for, beside the
	// server's resource (which is always sent); empty asks for none.
	Audience string `json:"audience,omitempty"`
}

// The grants of [OAuth].Grant.
const (
	GrantClientCredentials = "client_credentials"
	GrantTokenExchange     = "token_exchange"
)

// readOAuth reads the "oauth" or "auth" member of an entry.
func (e *entry) readOAuth() *OAuth {
	key := "oauth"
	raw, ok := e.m[key]
	if !ok || raw.Kind() == 'n' {
		key = "auth"
		if raw, ok = e.m[key]; !ok || raw.Kind() != '{' {
			// Cursor's "auth" is an object; other hosts use "auth" for
			// other things (mcporter: "auth": "oauth").
			return nil
		}
	}
	if raw.Kind() != '{' {
		e.fail(key, fmt.Errorf("must be an object, not %s", kindName(raw)))
		return nil
	}
	ms, err := members(raw, MaxItems)
	if err != nil {
		e.fail(key, err)
		return nil
	}
	sub := &entry{p: e.p, name: e.name, m: make(map[string]jsontext.Value, len(ms))}
	for _, m := range ms {
		sub.m[m.name] = m.value
	}
	o := &OAuth{}
	o.ClientID, _ = sub.firstStr("clientId", "CLIENT_ID", "client_id")
	o.ClientSecret, _ = sub.firstStr("clientSecret", "CLIENT_SECRET", "client_secret")
	o.RedirectURI, _ = sub.firstStr("redirectUri", "redirectUrl")
	if raw, ok := sub.m["callbackPort"]; ok && raw.Kind() != 'n' {
		p, err := strconv.Atoi(strings.Trim(string(raw), `"`))
		if err != nil || p <= 0 || p > 65535 {
			sub.fail("callbackPort", fmt.Errorf("must be a port number, not %s", raw))
		}
		o.CallbackPort = p
	}
	o.Grant, _ = sub.str("grant")
	switch o.Grant {
	case "", GrantClientCredentials, GrantTokenExchange:
	default:
		sub.fail("grant", fmt.Errorf("must be %q or %q, not %q", GrantClientCredentials, GrantTokenExchange, o.Grant))
	}
	if o.Grant != "" && (o.ClientID == "" || o.ClientSecret == "") {
		sub.fail("grant", fmt.Errorf("%q needs clientId and clientSecret", o.Grant))
	}
	o.Audience, _ = sub.str("audience")
	if raw, ok := sub.m["scopes"]; ok && raw.Kind() == '"' {
		s, _ := sub.str("scopes") // Claude Code: one space-separated string
		o.Scopes = strings.Fields(s)
	} else {
		o.Scopes = sub.strings("scopes")
	}
	var ce *Error
	if errors.As(sub.err, &ce) && e.err == nil {
		ce.Key = key + "." + ce.Key
		e.err = ce
	}
	return o
}
