package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// printJSON writes v as indented JSON on stdout, made inert at a
// terminal (see terminalJSON).
func (o *cli) printJSON(v any) error {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return err
	}
	b = append(jsontext.Value(b), '\n')
	if err := (*jsontext.Value)(&b).Indent(jsontext.WithIndent("  ")); err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.stdout, "%s\n", o.jsonText(b))
	return err
}

// jsonText is JSON for stdout: escaped by terminalJSON at a terminal,
// exact otherwise.
func (o *cli) jsonText(b []byte) []byte {
	if o.stdoutTTY {
		return terminalJSON(b)
	}
	return b
}

// terminalJSON escapes in valid JSON what its encoder leaves raw and a
// terminal would act on or show reordered: DEL, the C1 controls (U+009B
// is CSI, which starts an escape sequence as ESC [ does) and the
// bidirectional controls. Outside strings JSON is ASCII, so these are in
// strings, where \u009b means what the raw character means: the JSON
// stays exact. Invalid UTF-8, which the encoder rejects, becomes \ufffd.
func terminalJSON(b []byte) []byte {
	if !needsSanitising(string(b)) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case r == 0x7f, r >= 0x80 && r < 0xa0, isBidiControl(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// table writes rows as aligned columns; the last column is cut to the
// terminal's width.
type table struct {
	o    *cli
	rows [][]string
}

func (o *cli) table(header ...string) *table {
	return &table{o: o, rows: [][]string{header}}
}

func (t *table) add(cols ...string) { t.rows = append(t.rows, cols) }

func (t *table) flush() {
	width := 0
	if t.o.stdoutTTY && t.o.width != nil {
		width = t.o.width()
	}
	// The width of every column but the last, to cut the last.
	n := len(t.rows[0])
	widths := make([]int, n)
	for _, r := range t.rows {
		for i := 0; i < n-1 && i < len(r); i++ {
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	used := 0
	for _, w := range widths[:n-1] {
		used += w + 2
	}
	tw := tabwriter.NewWriter(t.o.stdout, 0, 0, 2, ' ', 0)
	for _, r := range t.rows {
		for i := range r {
			r[i] = safeLine(oneLine(r[i]))
		}
		if width > 0 && len(r) == n {
			r[n-1] = cut(r[n-1], width-used)
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

func cut(s string, n int) string {
	if n < 10 {
		n = 10
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// signature renders a tool's input schema as "a:number b?:string".
func signature(schema jsontext.Value) string {
	var s struct {
		Properties jsontext.Value `json:"properties"`
		Required   []string       `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	names, props, err := orderedMembers(s.Properties)
	if err != nil {
		return ""
	}
	var parts []string
	for _, n := range names {
		var p propSchema
		json.Unmarshal(props[n], &p)
		t := strings.Join(p.types(), "|")
		if len(p.Enum) > 0 {
			var vals []string
			for _, e := range p.Enum {
				vals = append(vals, fmt.Sprint(e))
			}
			t = strings.Join(vals, "|")
		}
		opt := "?"
		for _, r := range s.Required {
			if r == n {
				opt = ""
			}
		}
		if t == "" {
			parts = append(parts, n+opt)
		} else {
			parts = append(parts, n+opt+":"+t)
		}
	}
	return strings.Join(parts, " ")
}

// printContent writes the content of a tool result, a prompt message or
// a resource for people: text as it is, other kinds summarized.
func (o *cli) printContent(c []protocol.Content) {
	for _, b := range c {
		switch b.Type {
		case protocol.ContentText:
			fmt.Fprintln(o.stdout, o.text(b.Text))
		case protocol.ContentImage, protocol.ContentAudio:
			fmt.Fprintf(o.stdout, "[%s %s, %d bytes base64]\n", b.Type, o.text(b.MIMEType), len(b.Data))
		case protocol.ContentResourceLink:
			fmt.Fprintf(o.stdout, "[resource link %s %s]\n", o.text(b.URI), o.text(b.Name))
		case protocol.ContentResource:
			if b.Resource != nil {
				o.printResourceContents(*b.Resource)
			}
		default:
			raw, _ := json.Marshal(&b)
			fmt.Fprintf(o.stdout, "%s\n", o.jsonText(raw))
		}
	}
}

func (o *cli) printResourceContents(rc protocol.ResourceContents) {
	if rc.IsBlob() {
		fmt.Fprintf(o.stdout, "[%s %s, %d bytes base64]\n", o.text(rc.URI), o.text(rc.MIMEType), len(rc.Blob))
		return
	}
	fmt.Fprintln(o.stdout, o.text(rc.Text))
}

// text is a server's text for stdout: made safe when stdout is a
// terminal (see safe), exact when it goes to a file or a pipe.
func (o *cli) text(s string) string {
	if o.stdoutTTY {
		return safe(s)
	}
	return s
}
