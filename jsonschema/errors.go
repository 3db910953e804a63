package jsonschema

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/go-json-experiment/json/jsontext"
)

// ValidationError is the error of [Validator.Validate]: the ways in which
// an instance fails its schema, or a single problem when the instance is
// not valid JSON.
type ValidationError struct {
	Problems []Problem
}

// Problem is one reason an instance is invalid.
type Problem struct {
	// Path is the JSON pointer (RFC 6901) of the offending value in the
	// instance: "" for the instance itself, "/count", "/items/2". For a
	// missing required member it is the path the member should have.
	Path string
	// Keyword is the schema keyword that failed, such as "type",
	// "required" or "minimum"; "additionalProperties" for an unknown
	// member; "" when the instance is not valid JSON.
	Keyword string
	// Message explains the problem in full, naming the argument, the rule
	// and the value, for example `argument "count": must be >= 1, got 0`
	// or `missing required argument "city"`.
	Message string
}

// MaxProblems is the most problems a [ValidationError] lists; the last one
// then says that there are more.
const MaxProblems = 20

// Error returns the messages of the problems, one per line.
func (e *ValidationError) Error() string {
	switch len(e.Problems) {
	case 0:
		return "invalid instance"
	case 1:
		return e.Problems[0].Message
	}
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// pathSeg is one step of an instance location.
type pathSeg struct {
	name    string
	index   int
	isIndex bool
}

// pointer renders segs as a JSON pointer.
func pointer(segs []pathSeg) string {
	if len(segs) == 0 {
		return ""
	}
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		if s.isIndex {
			b.WriteString(strconv.Itoa(s.index))
			continue
		}
		for i := 0; i < len(s.name); i++ {
			switch c := s.name[i]; c {
			case '~':
				b.WriteString("~0")
			case '/':
				b.WriteString("~1")
			default:
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// displayPath renders segs the way a programmer writes an access path:
// items[2].name, or ['odd name'] for names that are not identifiers.
func displayPath(segs []pathSeg) string {
	var b strings.Builder
	for k, s := range segs {
		switch {
		case s.isIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		case isIdentifier(s.name):
			if k > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.name)
		default:
			b.WriteString("['")
			for _, r := range s.name {
				switch r {
				case '\'', '\\':
					b.WriteByte('\\')
					b.WriteRune(r)
				case '\n':
					b.WriteString(`\n`)
				default:
					b.WriteRune(r)
				}
			}
			b.WriteString("']")
		}
	}
	return b.String()
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '$' || r == '-' && i > 0,
			r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z',
			r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// subject names the value at segs in a message.
func subject(segs []pathSeg) string {
	if len(segs) == 0 {
		return "arguments"
	}
	return "argument " + strconv.Quote(displayPath(segs))
}

// newProblem builds a problem about the value at segs.
func newProblem(segs []pathSeg, keyword, detail string) Problem {
	return Problem{Path: pointer(segs), Keyword: keyword, Message: subject(segs) + ": " + detail}
}

// missingProblem builds the problem of a missing required member name of
// the object at segs.
func missingProblem(segs []pathSeg, name string) Problem {
	full := append(segs[:len(segs):len(segs)], pathSeg{name: name})
	return Problem{Path: pointer(full), Keyword: "required",
		Message: "missing required argument " + strconv.Quote(displayPath(full))}
}

// unknownProblem builds the problem of a member name that the object at
// segs does not allow; allowed lists the names it allows, if any.
func unknownProblem(segs []pathSeg, name, allowed string) Problem {
	full := append(segs[:len(segs):len(segs)], pathSeg{name: name})
	msg := "unknown argument " + strconv.Quote(displayPath(full))
	if allowed != "" {
		msg += " (allowed: " + allowed + ")"
	} else if len(segs) > 0 {
		msg += " (" + strconv.Quote(displayPath(segs)) + " takes no members)"
	}
	return Problem{Path: pointer(full), Keyword: "additionalProperties", Message: msg}
}

// maxShown is how many characters of a value a message quotes.
const maxShown = 80

// describeValue renders the valid JSON value raw for a message, with its
// type for strings and structures: `string "abc"`, `42`, `object`.
func describeValue(raw []byte) string {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string " + quoteShort(raw)
	case '{':
		return "object " + shorten(compact(raw))
	case '[':
		return "array " + shorten(compact(raw))
	}
	return shorten(string(raw))
}

// showValue renders the valid JSON value raw for a message, without its
// type.
func showValue(raw []byte) string {
	raw = trimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		return quoteShort(raw)
	}
	return shorten(compact(raw))
}

func trimSpace(b []byte) []byte {
	i := jsonfast.SkipSpace(b, 0)
	j := len(b)
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\n' || b[j-1] == '\r') {
		j--
	}
	return b[i:j]
}

func compact(raw []byte) string {
	v := jsontext.Value(append([]byte(nil), raw...))
	if err := v.Compact(); err != nil {
		return string(raw)
	}
	return string(v)
}

// quoteShort quotes the string token tok, cut to maxShown characters.
func quoteShort(tok []byte) string {
	s := string(jsonfast.AppendUnescaped(nil, tok))
	n := utf8.RuneCountInString(s)
	if n <= maxShown {
		return strconv.Quote(s)
	}
	cut := 0
	for i := range s {
		if cut == maxShown-10 {
			s = s[:i]
			break
		}
		cut++
	}
	return strconv.Quote(s) + "… (" + strconv.Itoa(n) + " characters)"
}

func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown - 10
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// listValues renders enum values for a message.
func listValues(vals [][]byte) string {
	const maxListed = 25
	var b strings.Builder
	for i, v := range vals {
		if i == maxListed {
			b.WriteString(", … (" + strconv.Itoa(len(vals)-maxListed) + " more)")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(showValue(v))
	}
	return b.String()
}

// listNames renders member names for a message.
func listNames(names []string) string {
	const maxListed = 30
	var b strings.Builder
	for i, n := range names {
		if i == maxListed {
			b.WriteString(", … (" + strconv.Itoa(len(names)-maxListed) + " more)")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
	}
	return b.String()
}

// typeNames renders a list of JSON Schema type names: "string or null".
func typeNames(names []string) string {
	switch len(names) {
	case 0:
		return "any type"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
