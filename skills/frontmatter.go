package skills

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrNoFrontmatter reports a SKILL.md that does not begin with a
// "---"-delimited YAML frontmatter block.
var ErrNoFrontmatter = errors.New("SKILL.md does not begin with --- delimited YAML frontmatter")

// FrontmatterError reports YAML in a frontmatter block that is invalid or
// that this package does not decode.
type FrontmatterError struct {
	Line int // 1-based, counted in the whole file
	Msg  string
}

func (e *FrontmatterError) Error() string {
	return fmt.Sprintf("frontmatter line %d: %s", e.Line, e.Msg)
}

// maxDepth bounds the nesting of the frontmatter's mappings and
// sequences: the decoder recurses once per level.
const maxDepth = 64

// ParseFrontmatter decodes the YAML frontmatter that begins a SKILL.md
// into the JSON object the skill's entry carries (strings, float64 or
// int64 numbers, booleans, nil, []any and map[string]any), and returns it
// with the body that follows.
//
// It decodes the YAML that frontmatter is written in, resolved as YAML 1.2
// core schema scalars: block mappings and sequences, plain, quoted and
// block (| and >) scalars, one-line flow sequences and mappings of
// scalars, comments. Anchors, aliases, tags, multi-line quoted scalars and
// nested flow collections are refused with a [*FrontmatterError] rather
// than guessed at, as are values JSON cannot hold (.inf, .nan).
func ParseFrontmatter(data []byte) (map[string]any, []byte, error) {
	block, body, first, err := splitFrontmatter(data)
	if err != nil {
		return nil, nil, err
	}
	if !utf8.Valid(block) {
		return nil, nil, &FrontmatterError{Line: first, Msg: "not valid UTF-8"}
	}
	p := &yamlParser{lines: splitLines(string(block), first)}
	v, err := p.document()
	if err != nil {
		return nil, nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, &FrontmatterError{Line: first, Msg: "frontmatter is not a mapping"}
	}
	return m, body, nil
}

// splitFrontmatter returns the YAML between the opening and the closing
// "---" lines, the body after them, and the line number of the YAML's
// first line.
func splitFrontmatter(data []byte) (block, body []byte, first int, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	line, rest, _ := cutLine(data)
	if !isDelimiter(line) {
		return nil, nil, 0, ErrNoFrontmatter
	}
	start := rest
	for len(rest) > 0 {
		l, next, _ := cutLine(rest)
		if isDelimiter(l) {
			return start[:len(start)-len(rest)], next, 2, nil
		}
		rest = next
	}
	return nil, nil, 0, fmt.Errorf("%w: the closing --- is missing", ErrNoFrontmatter)
}

// cutLine splits off the first line (without its \n or \r\n).
func cutLine(b []byte) (line, rest []byte, found bool) {
	line, rest, found = bytes.Cut(b, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), rest, found
}

func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t")) == "---"
}

// yamlLine is one line of the block: its indentation in spaces and its
// text after the indentation.
type yamlLine struct {
	num    int
	indent int
	text   string
}

func (l yamlLine) blank() bool { return l.text == "" || l.text[0] == '#' }

func splitLines(block string, first int) []yamlLine {
	block = strings.TrimSuffix(block, "\n")
	var out []yamlLine
	if block == "" {
		return nil
	}
	for i, raw := range strings.Split(block, "\n") {
		raw = strings.TrimRight(strings.TrimSuffix(raw, "\r"), " \t")
		text := strings.TrimLeft(raw, " ")
		out = append(out, yamlLine{num: first + i, indent: len(raw) - len(text), text: text})
	}
	return out
}

type yamlParser struct {
	lines []yamlLine
	pos   int
	depth int
}

func (p *yamlParser) errorf(line int, format string, args ...any) error {
	return &FrontmatterError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// next returns the next line that is not blank or a comment, skipping to
// it.
func (p *yamlParser) next() (yamlLine, bool) {
	for p.pos < len(p.lines) && p.lines[p.pos].blank() {
		p.pos++
	}
	if p.pos == len(p.lines) {
		return yamlLine{}, false
	}
	return p.lines[p.pos], true
}

func (p *yamlParser) document() (any, error) {
	l, ok := p.next()
	if !ok {
		return map[string]any{}, nil
	}
	if l.indent != 0 {
		return nil, p.errorf(l.num, "the first key is indented")
	}
	v, err := p.block(0)
	if err != nil {
		return nil, err
	}
	if l, ok := p.next(); ok {
		return nil, p.errorf(l.num, "unexpected indentation")
	}
	return v, nil
}

// block decodes the mapping or sequence whose lines start at column
// indent.
func (p *yamlParser) block(indent int) (any, error) {
	l, _ := p.next()
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, p.errorf(l.num, "nested deeper than %d levels", maxDepth)
	}
	if isSeqItem(l.text) {
		return p.sequence(indent)
	}
	return p.mapping(indent)
}

func isSeqItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

func (p *yamlParser) sequence(indent int) (any, error) {
	out := []any{}
	for {
		l, ok := p.next()
		if !ok || l.indent < indent || l.indent == indent && !isSeqItem(l.text) {
			return out, nil
		}
		if l.indent > indent {
			return nil, p.errorf(l.num, "unexpected indentation")
		}
		rest := strings.TrimLeft(l.text[1:], " ")
		if isSeqItem(rest) || isMappingLine(rest) {
			// A compact collection ("- key: value", "- - item"): its
			// first line starts after the dash.
			col := l.indent + len(l.text) - len(rest)
			p.lines[p.pos] = yamlLine{num: l.num, indent: col, text: rest}
			v, err := p.block(col)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		p.pos++
		v, err := p.value(l, indent, rest, false)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

// isMappingLine reports whether text starts a "key: value" pair.
func isMappingLine(text string) bool {
	if text == "" || strings.ContainsRune("[{|>&*!#%@`", rune(text[0])) {
		return false
	}
	if text[0] == '"' || text[0] == '\'' {
		_, n, err := quoted(text)
		return err == nil && strings.HasPrefix(text[n:], ":")
	}
	t := stripComment(text)
	return strings.Contains(t, ": ") || strings.HasSuffix(t, ":")
}

func (p *yamlParser) mapping(indent int) (any, error) {
	m := map[string]any{}
	for {
		l, ok := p.next()
		if !ok || l.indent < indent {
			return m, nil
		}
		if l.indent > indent {
			return nil, p.errorf(l.num, "unexpected indentation")
		}
		if isSeqItem(l.text) {
			return nil, p.errorf(l.num, "a sequence item where a key was expected")
		}
		if l.text[0] == '\t' {
			return nil, p.errorf(l.num, "tabs cannot indent YAML")
		}
		key, rest, err := p.key(l)
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, p.errorf(l.num, "duplicate key %q", key)
		}
		p.pos++
		v, err := p.value(l, indent, rest, true)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
}

// key splits a "key: value" line.
func (p *yamlParser) key(l yamlLine) (string, string, error) {
	text := l.text
	if text[0] == '"' || text[0] == '\'' {
		s, n, err := quoted(text)
		if err != nil {
			return "", "", p.errorf(l.num, "%v", err)
		}
		rest, ok := strings.CutPrefix(text[n:], ":")
		if !ok || rest != "" && rest[0] != ' ' {
			return "", "", p.errorf(l.num, "a key must be followed by \": \"")
		}
		return s, strings.TrimLeft(rest, " "), nil
	}
	if strings.ContainsRune("?&*!|>{[%@`", rune(text[0])) {
		return "", "", p.errorf(l.num, "unsupported YAML: a key starting with %q", text[0])
	}
	i := strings.Index(text, ": ")
	if i < 0 && strings.HasSuffix(text, ":") {
		i = len(text) - 1
	}
	if i <= 0 {
		return "", "", p.errorf(l.num, "expected \"key: value\"")
	}
	return strings.TrimRight(text[:i], " "), strings.TrimLeft(text[i+1:], " "), nil
}

// value decodes what follows a key or a sequence dash on line l of a
// collection at column indent: rest, or the block below when rest is
// empty. A mapping's value may be a sequence at the key's own column.
func (p *yamlParser) value(l yamlLine, indent int, rest string, inMapping bool) (any, error) {
	if rest == "" || rest[0] == '#' {
		n, ok := p.next()
		switch {
		case ok && n.indent > indent:
			return p.block(n.indent)
		case ok && inMapping && n.indent == indent && isSeqItem(n.text):
			return p.block(indent)
		}
		return nil, nil
	}
	switch rest[0] {
	case '|', '>':
		return p.blockScalar(l, indent, rest)
	case '[', '{':
		return p.flow(l, rest)
	case '"', '\'':
		s, n, err := quoted(rest)
		if err != nil {
			return nil, p.errorf(l.num, "%v", err)
		}
		if tail := strings.TrimLeft(rest[n:], " "); tail != "" && tail[0] != '#' {
			return nil, p.errorf(l.num, "text after a quoted scalar")
		}
		return s, nil
	case '&', '*', '!', '%', '@', '`':
		return nil, p.errorf(l.num, "unsupported YAML: anchors, aliases, tags and reserved indicators (%q)", rest[0])
	}
	return p.plain(l, indent, rest)
}

// plain decodes a plain scalar, with its continuation lines (more
// indented than its collection), folded into one line.
func (p *yamlParser) plain(l yamlLine, indent int, rest string) (any, error) {
	text := stripComment(rest)
	if strings.Contains(text, ": ") || strings.HasSuffix(text, ":") {
		return nil, p.errorf(l.num, "unsupported YAML: a mapping in a plain scalar (quote the value)")
	}
	var b strings.Builder
	b.WriteString(text)
	breaks := 0
	for p.pos < len(p.lines) {
		n := p.lines[p.pos]
		if n.text == "" {
			breaks++
			p.pos++
			continue
		}
		if n.indent <= indent || n.text[0] == '#' {
			break
		}
		if isMappingLine(n.text) {
			return nil, p.errorf(n.num, "unsupported YAML: a mapping in a plain scalar (quote the value)")
		}
		switch {
		case breaks > 0:
			b.WriteString(strings.Repeat("\n", breaks))
		default:
			b.WriteByte(' ')
		}
		breaks = 0
		b.WriteString(stripComment(n.text))
		p.pos++
	}
	if b.Len() == len(text) {
		return resolve(text, l.num)
	}
	return b.String(), nil
}

// stripComment removes a " #" comment from a plain scalar.
func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, " \t")
}

func (p *yamlParser) blockScalar(l yamlLine, indent int, header string) (any, error) {
	folded := header[0] == '>'
	chomp, explicit := byte(0), 0
	h := stripComment(header[1:])
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = c
		case c >= '1' && c <= '9' && explicit == 0:
			explicit = int(c - '0')
		default:
			return nil, p.errorf(l.num, "invalid block scalar header %q", header)
		}
	}
	content := indent + explicit
	var lines []string
	for ; p.pos < len(p.lines); p.pos++ {
		n := p.lines[p.pos]
		if n.text == "" {
			lines = append(lines, "")
			continue
		}
		if explicit == 0 && len(lines) == len(blankPrefix(lines)) && content == indent {
			content = n.indent
		}
		if n.indent < content || n.indent <= indent {
			break
		}
		lines = append(lines, strings.Repeat(" ", n.indent-content)+n.text)
	}
	return chompScalar(lines, folded, chomp), nil
}

// blankPrefix returns the leading empty lines.
func blankPrefix(lines []string) []string {
	i := 0
	for i < len(lines) && lines[i] == "" {
		i++
	}
	return lines[:i]
}

// chompScalar joins a block scalar's lines (literal or folded) and applies
// its chomping indicator.
func chompScalar(lines []string, folded bool, chomp byte) string {
	end := len(lines)
	for end > 0 && lines[end-1] == "" {
		end--
	}
	trailing := len(lines) - end
	body := lines[:end]
	var s string
	if folded {
		s = fold(body)
	} else {
		s = strings.Join(body, "\n")
	}
	if len(body) == 0 {
		if chomp == '+' {
			return strings.Repeat("\n", trailing)
		}
		return ""
	}
	switch chomp {
	case '-':
		return s
	case '+':
		return s + "\n" + strings.Repeat("\n", trailing)
	}
	return s + "\n"
}

// fold joins the lines of a folded scalar: a line break between two
// lines of text becomes a space, empty lines stay line breaks, and more
// indented lines keep their breaks.
func fold(lines []string) string {
	var b strings.Builder
	prevText, empties := false, 0
	for _, l := range lines {
		if l == "" {
			empties++
			b.WriteByte('\n')
			continue
		}
		more := l[0] == ' '
		if b.Len() > 0 || empties > 0 {
			switch {
			case more || !prevText:
				b.WriteByte('\n')
			case empties == 0:
				b.WriteByte(' ')
			}
		}
		b.WriteString(l)
		prevText, empties = !more, 0
	}
	return b.String()
}

// flow decodes a one-line flow sequence or mapping of scalars.
func (p *yamlParser) flow(l yamlLine, text string) (any, error) {
	text = strings.TrimSpace(text)
	open, end := text[0], byte(']')
	if open == '{' {
		end = '}'
	}
	items, tail, err := splitFlow(text[1:], end)
	if err != nil {
		return nil, p.errorf(l.num, "%v", err)
	}
	if tail = strings.TrimSpace(tail); tail != "" && tail[0] != '#' {
		return nil, p.errorf(l.num, "text after a flow collection")
	}
	if open == '[' {
		out := make([]any, 0, len(items))
		for _, it := range items {
			v, err := flowScalar(it, l.num)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	m := make(map[string]any, len(items))
	for _, it := range items {
		k, v, ok := cutFlowPair(it)
		if !ok {
			return nil, p.errorf(l.num, "expected \"key: value\" in a flow mapping")
		}
		key, err := flowScalar(k, l.num)
		ks, isString := key.(string)
		if err != nil || !isString {
			return nil, p.errorf(l.num, "a flow mapping key must be a string")
		}
		if _, dup := m[ks]; dup {
			return nil, p.errorf(l.num, "duplicate key %q", ks)
		}
		if m[ks], err = flowScalar(v, l.num); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// splitFlow splits the items of a flow collection up to its closing
// bracket, honouring quotes, and returns what follows the bracket.
func splitFlow(s string, end byte) ([]string, string, error) {
	var items []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'':
			_, n, err := quoted(s[i:])
			if err != nil {
				return nil, "", err
			}
			i += n - 1
		case '[', '{':
			return nil, "", errors.New("unsupported YAML: nested flow collections")
		case ',', end:
			if it := strings.TrimSpace(s[start:i]); it != "" {
				items = append(items, it)
			} else if c == ',' {
				return nil, "", errors.New("an empty item in a flow collection")
			}
			if c == end {
				return items, s[i+1:], nil
			}
			start = i + 1
		}
	}
	return nil, "", fmt.Errorf("unterminated flow collection (missing %q)", end)
}

// cutFlowPair splits "key: value" outside quotes.
func cutFlowPair(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			_, n, err := quoted(s[i:])
			if err != nil {
				return "", "", false
			}
			i += n - 1
		case ':':
			if i+1 == len(s) || s[i+1] == ' ' {
				return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:]), true
			}
		}
	}
	return "", "", false
}

func flowScalar(s string, line int) (any, error) {
	if s == "" {
		return nil, nil
	}
	if s[0] == '"' || s[0] == '\'' {
		v, n, err := quoted(s)
		if err == nil && n != len(s) {
			err = errors.New("text after a quoted scalar")
		}
		if err != nil {
			return nil, &FrontmatterError{Line: line, Msg: err.Error()}
		}
		return v, nil
	}
	if strings.ContainsRune("&*!|>%@`", rune(s[0])) {
		return nil, &FrontmatterError{Line: line, Msg: fmt.Sprintf("unsupported YAML in a flow collection: %q", s)}
	}
	return resolve(s, line)
}

// quoted decodes the single- or double-quoted scalar at the start of s
// and returns the number of bytes it takes.
func quoted(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == q:
			return b.String(), i + 1, nil
		case c == '\\' && q == '"':
			n, err := unescape(&b, s[i+1:])
			if err != nil {
				return "", 0, err
			}
			i += n
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("unterminated quoted scalar (multi-line quoted scalars are not supported)")
}

var simpleEscapes = map[byte]string{
	'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v", 'f': "\f",
	'r': "\r", 'e': "\x1b", ' ': " ", '"': "\"", '/': "/", '\\': "\\",
	'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029",
}

// unescape decodes the escape sequence after a backslash in a
// double-quoted scalar and returns the bytes it takes.
func unescape(b *strings.Builder, s string) (int, error) {
	if s == "" {
		return 0, errors.New("a backslash at the end of a quoted scalar")
	}
	if r, ok := simpleEscapes[s[0]]; ok {
		b.WriteString(r)
		return 1, nil
	}
	width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[0]]
	if width == 0 || len(s) < 1+width {
		return 0, fmt.Errorf("invalid escape \\%c", s[0])
	}
	n, err := strconv.ParseUint(s[1:1+width], 16, 32)
	if err != nil || !utf8.ValidRune(rune(n)) {
		return 0, fmt.Errorf("invalid escape \\%s", s[:1+width])
	}
	b.WriteRune(rune(n))
	return 1 + width, nil
}

// resolve gives a plain scalar its YAML 1.2 core schema type.
func resolve(s string, line int) (any, error) {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil, nil
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	}
	if !looksNumeric(s) {
		return s, nil
	}
	if v, ok := coreInt(s); ok {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err == nil || errors.Is(err, strconv.ErrRange) {
		if math.IsInf(f, 0) {
			return nil, &FrontmatterError{Line: line, Msg: fmt.Sprintf("%s does not fit a JSON number", s)}
		}
		return f, nil
	}
	if isInfNaN(s) {
		return nil, &FrontmatterError{Line: line, Msg: fmt.Sprintf("%s cannot be a JSON value", s)}
	}
	return s, nil
}

// looksNumeric reports whether s is a YAML 1.2 core int or float (so
// that "1_000" or "0b1", which the core schema reads as strings, stay
// strings).
func looksNumeric(s string) bool {
	if isInfNaN(s) {
		return true
	}
	t := strings.TrimLeft(s, "+-")
	if len(s)-len(t) > 1 || t == "" {
		return false
	}
	if len(t) > 2 && t[0] == '0' && (t[1] == 'o' || t[1] == 'x') {
		return s == t && strings.Trim(t[2:], hexOrOctDigits(t[1])) == ""
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(t), "e")
	if hasExp {
		exp = strings.TrimLeft(exp, "+-")
		if exp == "" || strings.Trim(exp, "0123456789") != "" {
			return false
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	return intPart+frac != "" && strings.Trim(intPart+frac, "0123456789") == ""
}

func hexOrOctDigits(kind byte) string {
	if kind == 'o' {
		return "01234567"
	}
	return "0123456789abcdefABCDEF"
}

func isInfNaN(s string) bool {
	switch strings.TrimLeft(s, "+-") {
	case ".inf", ".Inf", ".INF":
		return len(s) <= 5
	case ".nan", ".NaN", ".NAN":
		return len(s) == 4
	}
	return false
}

// coreInt parses a core schema integer that fits an int64.
func coreInt(s string) (int64, bool) {
	base, digits := 10, s
	switch {
	case strings.HasPrefix(s, "0o"):
		base, digits = 8, s[2:]
	case strings.HasPrefix(s, "0x"):
		base, digits = 16, s[2:]
	case strings.ContainsAny(s, ".eE"):
		return 0, false
	}
	v, err := strconv.ParseInt(digits, base, 64)
	return v, err == nil
}
