package metadata

import (
	"strings"
)

// A Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): a scheme ("Bearer", "DPoP") and its parameters.
type Challenge struct {
	// Scheme is the authentication scheme, as sent.
	Scheme string
	// Params holds the parameters by lower-case name (names are
	// case-insensitive), with quoted values unquoted.
	Params map[string]string
	// Token68 is the scheme's token68 form, when it has one instead of
	// parameters.
	Token68 string
}

// Param returns the value of the parameter named name (any case).
func (c Challenge) Param(name string) string {
	return c.Params[strings.ToLower(name)]
}

// Scopes returns the space-separated scope parameter as a list.
func (c Challenge) Scopes() []string {
	return strings.Fields(c.Param("scope"))
}

// Parameter names of the challenges MCP uses.
const (
	ParamResourceMetadata = "resource_metadata"
	ParamScope            = "scope"
	ParamError            = "error"
	ParamErrorDescription = "error_description"
)

// Error codes of challenges (RFC 6750 §3.1, RFC 9449 §7.1).
const (
	ErrorInvalidToken      = "invalid_token"
	ErrorInsufficientScope = "insufficient_scope"
	ErrorInvalidRequest    = "invalid_request"
	ErrorUseDPoPNonce      = "use_dpop_nonce"
)

// String writes the challenge as a header value: the scheme, then the
// parameters in the order given by names (the others are not written),
// each value quoted.
func (c Challenge) String(names ...string) string {
	var b strings.Builder
	b.WriteString(c.Scheme)
	sep := " "
	for _, n := range names {
		v, ok := c.Params[strings.ToLower(n)]
		if !ok {
			continue
		}
		b.WriteString(sep)
		b.WriteString(n)
		b.WriteString(`="`)
		for i := 0; i < len(v); i++ {
			if v[i] == '"' || v[i] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(v[i])
		}
		b.WriteByte('"')
		sep = ", "
	}
	return b.String()
}

// FindChallenge returns the first challenge of one of the schemes (any
// case) among cs.
func FindChallenge(cs []Challenge, schemes ...string) (Challenge, bool) {
	for _, c := range cs {
		for _, s := range schemes {
			if strings.EqualFold(c.Scheme, s) {
				return c, true
			}
		}
	}
	return Challenge{}, false
}

// ParseChallenges parses the values of WWW-Authenticate headers. Each
// value may hold several challenges separated by commas, and the
// parameters of a challenge are separated by commas too: a token
// followed by "=" is a parameter, a token followed by anything else
// starts the next challenge. What cannot be parsed ends the value; the
// challenges read before it are kept.
func ParseChallenges(values []string) []Challenge {
	var cs []Challenge
	for _, v := range values {
		cs = appendChallenges(cs, v)
	}
	return cs
}

func appendChallenges(cs []Challenge, s string) []Challenge {
	p := &challengeParser{s: s}
	for {
		p.skip(" \t,")
		scheme := p.token()
		if scheme == "" {
			return cs
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		p.skip(" \t")
		if t := p.token68(); t != "" {
			c.Token68 = t
			cs = append(cs, c)
			continue
		}
		for {
			save := p.i
			p.skip(" \t,")
			name := p.token()
			p.skip(" \t")
			if name == "" || !p.eat('=') {
				// The next challenge's scheme, or the end.
				p.i = save
				break
			}
			p.skip(" \t")
			var val string
			var ok bool
			if p.peek() == '"' {
				val, ok = p.quoted()
			} else {
				val = p.token()
				ok = val != ""
			}
			if !ok {
				return append(cs, c)
			}
			if _, dup := c.Params[strings.ToLower(name)]; !dup {
				c.Params[strings.ToLower(name)] = val
			}
		}
		cs = append(cs, c)
	}
}

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *challengeParser) eat(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

func (p *challengeParser) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// token reads a token (RFC 9110 §5.6.2).
func (p *challengeParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68 reads a token68 (RFC 9110 §11.2) when the rest of the
// challenge is one: characters of token68, then "=" padding, then the
// end or a comma. Otherwise (a parameter follows) it reads nothing.
func (p *challengeParser) token68() string {
	j := p.i
	for j < len(p.s) && (isAlnum(p.s[j]) || strings.IndexByte("-._~+/", p.s[j]) >= 0) {
		j++
	}
	if j == p.i {
		return ""
	}
	k := j
	for k < len(p.s) && p.s[k] == '=' {
		k++
	}
	e := k
	for e < len(p.s) && (p.s[e] == ' ' || p.s[e] == '\t') {
		e++
	}
	if e < len(p.s) && p.s[e] != ',' {
		return ""
	}
	t := p.s[p.i:k]
	p.i = k
	return t
}

// quoted reads a quoted-string, undoing its escapes.
func (p *challengeParser) quoted() (string, bool) {
	p.i++ // the opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '"':
			p.i++
			return b.String(), true
		case '\\':
			p.i++
			if p.i >= len(p.s) {
				return "", false
			}
			c = p.s[p.i]
		}
		b.WriteByte(c)
		p.i++
	}
	return "", false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isTChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
