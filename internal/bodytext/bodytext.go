// Package bodytext makes the start of an HTTP response body fit for an
// error message: the text of an error page rather than its markup, short
// and on one line. The HTTP client transports and the OTLP exporter put
// it in their errors.
package bodytext

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Max bounds an [Excerpt], in bytes.
const Max = 256

// Excerpt returns the start of a response body for an error message
// (httperr.StatusError's Body):
// the text of an HTML page (its title and visible text, without scripts
// and styles), other bodies as they are, with control characters and runs
// of spaces made one space, cut to at most [Max] bytes on a character
// boundary.
func Excerpt(body []byte, contentType string) string {
	text := string(body)
	if isHTML(body, contentType) {
		text = htmlText(text)
	}
	return clip(squeeze(text), Max)
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
