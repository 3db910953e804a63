// Package httperr holds the error of the HTTP client transports
// (Streamable HTTP and HTTP+SSE) for a request the server refused with an
// HTTP status, rather than answering it with a JSON-RPC message.
//
// A caller tells the kinds of failure apart with the errors package:
//
//   - a JSON-RPC error answer is a *[jsonrpc.Error] (and only that is);
//   - a refusal by HTTP status is a *[StatusError], whose StatusCode and
//     WWWAuthenticate let a client see that it must authorize (401) or is
//     not allowed (403);
//   - a network failure keeps its cause: errors.Is(err,
//     syscall.ECONNREFUSED), a *net.OpError, io.EOF or
//     io.ErrUnexpectedEOF for a server gone mid-answer.
//
// The package does not import net/http, so that the client package can
// recognise the error without linking an HTTP stack.
//
// [jsonrpc.Error]: https://pkg.go.dev/github.com/ferrymcp/ferry/jsonrpc#Error
package httperr

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBody bounds [StatusError].Body, in bytes.
const MaxBody = 256

// StatusError is an HTTP request that the server answered with a status
// other than success and without a JSON-RPC error in the body.
type StatusError struct {
	// Method and URL are the HTTP request's ("POST", "GET").
	Method string
	URL    string
	// StatusCode is the HTTP status code, such as 401; Status the status
	// line's text, such as "401 Unauthorized".
	StatusCode int
	Status     string
	// Body is the start of the response body as text for a message:
	// HTML reduced to its text, spaces collapsed, at most [MaxBody] bytes.
	Body string
	// WWWAuthenticate is the response's WWW-Authenticate header (its
	// values joined with ", "), where a 401 or 403 names the
	// authorization scheme and, for MCP, the resource_metadata URL.
	WWWAuthenticate string
}

func (e *StatusError) Error() string {
	var b strings.Builder
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.URL)
	b.WriteString(": HTTP ")
	if e.Status != "" {
		b.WriteString(e.Status)
	} else {
		b.WriteString(strconv.Itoa(e.StatusCode))
	}
	if e.Body != "" {
		b.WriteString(": ")
		b.WriteString(e.Body)
	}
	return b.String()
}

// Excerpt returns the start of a response body for [StatusError].Body:
// the text of an HTML page (its title and visible text, without scripts
// and styles), other bodies as they are, with control characters and runs
// of spaces made one space, cut to at most [MaxBody] bytes on a character
// boundary.
func Excerpt(body []byte, contentType string) string {
	text := string(body)
	if isHTML(body, contentType) {
		text = htmlText(text)
	}
	return clip(squeeze(text), MaxBody)
}

func isHTML(body []byte, contentType string) bool {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/html") {
		return true
	}
	head := bytes.ToLower(bytes.TrimSpace(body[:min(len(body), 64)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
}

// htmlText drops the markup of an HTML document: comments, script and
// style elements whole, other tags leaving a space, and the common
// character references decoded.
func htmlText(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		if strings.HasPrefix(s, "<!--") {
			s = after(s, "-->")
			continue
		}
		lower := strings.ToLower(s[:min(len(s), 8)])
		for _, el := range []string{"script", "style"} {
			if strings.HasPrefix(lower, "<"+el) {
				s = afterFold(s, "</"+el)
			}
		}
		s = after(s, ">")
		b.WriteByte(' ')
	}
	return unescape(b.String())
}

// entities are the character references error pages use; others stay as
// they are (html.UnescapeString would link a table of 2,000).
var entities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`,
	"&#39;", "'", "&apos;", "'", "&nbsp;", " ", "&#34;", `"`, "&#160;", " ")

func unescape(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	return entities.Replace(s)
}

// after returns what follows the first sep in s, or "" without one.
func after(s, sep string) string {
	if i := strings.Index(s, sep); i >= 0 {
		return s[i+len(sep):]
	}
	return ""
}

// afterFold is after for an ASCII sep in any case, leaving s at sep.
func afterFold(s, sep string) string {
	if i := strings.Index(strings.ToLower(s), sep); i >= 0 {
		return s[i:]
	}
	return ""
}

// squeeze makes every run of spaces and control characters one space,
// replaces invalid UTF-8, and trims the ends.
func squeeze(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// clip cuts s to at most n bytes on a character boundary, marking the cut
// with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimRightFunc(s[:n], unicode.IsSpace) + "…"
}
