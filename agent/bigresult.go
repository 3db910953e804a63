package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// ResultReadTool is the built-in tool through which the model pages
// through a tool result that was over its budget: such a result is not
// cut silently; the model is given its head and its tail with a note,
// and the whole result is kept in a file of the conversation (see
// [Agent.ResultDir]), which the user can open too.
const ResultReadTool = "results__read"

// DefaultMaxResultTokens is the default budget of a tool result's text:
// 32 KiB at the estimate of four bytes a token. It is lowered to an
// eighth of the model's context for small models.
const DefaultMaxResultTokens = 8000

// bytesPerToken is the estimate of the size of a token that the agent
// uses before a request is sent (as estimateTokens does).
const bytesPerToken = 4

// noteRoom is what the budget keeps for the notes around a result's head
// and tail: at most a quarter of it.
func noteRoom(budget int) int { return min(700, budget/4) }

// resultTokens is the budget of a call's result: the tool's own (by its
// host name, server__tool), else its server's, else the default.
func (l Limits) resultTokens(rec *CallRecord) int {
	for _, key := range []string{rec.Name, rec.Server} {
		if n, ok := l.ResultTokens[key]; ok && key != "" && n != 0 {
			return n
		}
	}
	return l.MaxResultTokens
}

// resultsState is where the agent keeps the results over their budget.
type resultsState struct {
	mu      sync.Mutex
	dir     string // the directory in use; set at the first result kept
	offered bool   // ResultReadTool is offered: a result was kept
}

// resultDir is the directory of kept results: [Agent.ResultDir], or a
// directory of the system's temporary files made at the first result.
func (a *Agent) resultDir() (string, error) {
	a.results.mu.Lock()
	defer a.results.mu.Unlock()
	if a.results.dir != "" {
		return a.results.dir, nil
	}
	dir := a.ResultDir
	if dir == "" {
		d, err := os.MkdirTemp("", "ferry-results-")
		if err != nil {
			return "", err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	a.results.dir = dir
	return dir, nil
}

// offerResultRead says whether the model is given ResultReadTool: once a
// result was kept, or when the conversation's directory holds some (a
// conversation taken up again).
func (a *Agent) offerResultRead() bool {
	a.results.mu.Lock()
	defer a.results.mu.Unlock()
	if !a.results.offered && a.ResultDir != "" {
		m, _ := filepath.Glob(filepath.Join(a.ResultDir, "*.txt"))
		a.results.offered = len(m) > 0
	}
	return a.results.offered
}

// fitResult keeps a result's text within the call's budget. Within it,
// the parts are given as they are. Over it, the whole text is kept in a
// file and the model is given its head and its tail, the images (never
// cut), and a note saying how to read the rest; kept is the file ("" when
// it could not be written: the note says why).
func (a *Agent) fitResult(rec *CallRecord, parts []Part, tokens int) (out []Part, cut bool, kept string) {
	text, images := splitParts(parts)
	if tokens < 0 || len(text) <= tokens*bytesPerToken {
		return parts, false, ""
	}
	budget := tokens * bytesPerToken
	room := budget - noteRoom(budget)
	head := cutHead(text, room*2/3)
	tail := cutTail(text[len(head):], room-len(head))
	id, path, err := a.keepResult(rec, text)
	gap := len(text) - len(head) - len(tail)
	out = []Part{Text(head + fmt.Sprintf("\n\n[ferry: %d bytes of the result are left out here]\n\n", gap) + tail)}
	out = append(out, images...)
	out = append(out, Text(bigResultNote(len(text), tokens, len(head), len(tail), id, path, err)))
	if err != nil {
		path = ""
	}
	return out, true, path
}

// splitParts joins the text parts of a result, one after the other on
// lines of their own, and sets its images apart.
func splitParts(parts []Part) (text string, images []Part) {
	var texts []string
	for _, p := range parts {
		if p.Type == TextPart {
			texts = append(texts, p.Text)
			continue
		}
		images = append(images, p)
	}
	return strings.Join(texts, "\n"), images
}

func bigResultNote(size, tokens, head, tail int, id, path string, err error) string {
	s := fmt.Sprintf("[ferry: this result is %d bytes of text, about %d tokens: over the budget of %d tokens for a tool result, "+
		"so you were given its first %d and its last %d bytes. ", size, size/bytesPerToken, tokens, head, tail)
	if err != nil {
		return s + fmt.Sprintf("The whole result could not be kept (%v): if you need the rest, ask the tool for less at a time.]", err)
	}
	return s + fmt.Sprintf("The whole result is kept as %q (file %s): read any part of it with %s, "+
		`for example {"id": %q, "offset": %d} for what follows the part you were given.]`, id, path, ResultReadTool, id, head)
}

// cutHead is the start of s, at most n bytes, ending at a line's end when
// one is in its last quarter.
func cutHead(s string, n int) string {
	s = truncate(s, n)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 && i >= len(s)-len(s)/4 {
		return s[:i+1]
	}
	return s
}

// cutTail is the end of s, at most n bytes, starting at a line's start
// when one is in its first quarter.
func cutTail(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if n >= len(s) {
		return s
	}
	start := len(s) - n
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	t := s[start:]
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)/4 {
		return t[i+1:]
	}
	return t
}

// idByte reports whether c may stand in a kept result's name.
func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// validResultID reports whether id may name a kept result: a file name
// of at most 100 bytes, no path, starting with a letter or digit. (Not a
// regexp: a bounded repetition compiles to a large program, at every
// start of every program that links this package.)
func validResultID(id string) bool {
	if id == "" || len(id) > 100 || !idByte(id[0]) || id[0] == '_' || id[0] == '.' || id[0] == '-' {
		return false
	}
	for i := range len(id) {
		if !idByte(id[i]) {
			return false
		}
	}
	return true
}

// safeID replaces each run of bytes a kept result's name may not hold
// with one underscore.
func safeID(s string) string {
	var b strings.Builder
	run := false
	for i := range len(s) {
		c := s[i]
		if idByte(c) {
			b.WriteByte(c)
			run = false
		} else if !run {
			b.WriteByte('_')
			run = true
		}
	}
	return b.String()
}

// keepResult writes a result's whole text to a new file of the result
// directory, readable by the user only, named after the call.
func (a *Agent) keepResult(rec *CallRecord, text string) (id, path string, err error) {
	dir, err := a.resultDir()
	if err != nil {
		return "", "", err
	}
	base := strings.Trim(safeID(rec.Name+"-"+rec.ID), "_.-")
	if base = truncate(base, 80); base == "" {
		base = "result"
	}
	for n := 1; n <= 100; n++ {
		id = base
		if n > 1 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		path = filepath.Join(dir, id+".txt")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		_, err = io.WriteString(f, text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		a.results.mu.Lock()
		a.results.offered = true
		a.results.mu.Unlock()
		return id, path, err
	}
	return "", "", fmt.Errorf("too many results named %s in %s", base, dir)
}

var resultReadSchema = jsontext.Value(`{"type":"object","properties":{` +
	`"id":{"type":"string","description":"the kept result's id, as its note gives it"},` +
	`"offset":{"type":"integer","minimum":0,"description":"where to start, in bytes from the result's start (default 0)"},` +
	`"tokens":{"type":"integer","minimum":1,"description":"how much to read, in tokens (about four bytes each; default and most: the budget of a tool result)"}},` +
	`"required":["id"]}`)

func resultReadDescription(tokens int) string {
	return fmt.Sprintf("Reads part of a tool result that was over the budget of a result (%d tokens) and was kept whole: "+
		"its note gives its id and its size. Give the offset in bytes where to start; you get up to the budget, "+
		"and the offset of what follows.", tokens)
}

// resultReadArgs are the arguments of ResultReadTool.
type resultReadArgs struct {
	ID     string `json:"id"`
	Offset int64  `json:"offset"`
	Tokens int    `json:"tokens"`
}

// readResult is a page of a kept result: at most the budget of a result
// from the offset, on characters' bounds.
func (a *Agent) readResult(raw jsontext.Value, budget int) (*protocol.CallToolResult, error) {
	var args resultReadArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("%s takes {\"id\": string, \"offset\": bytes, \"tokens\": number}: %v", ResultReadTool, err)
	}
	if !validResultID(args.ID) || args.Offset < 0 || args.Tokens < 0 {
		return nil, fmt.Errorf("%s: no kept result %q at offset %d: the id is the one its note gives, the offset is not negative", ResultReadTool, args.ID, args.Offset)
	}
	dir, err := a.resultDir()
	if err != nil {
		return nil, err
	}
	page, size, err := readPage(filepath.Join(dir, args.ID+".txt"), args.Offset, pageBytes(args.Tokens, budget))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: there is no kept result %q", ResultReadTool, args.ID)
	}
	if err != nil {
		return nil, err
	}
	end := page.from + int64(len(page.text))
	head := fmt.Sprintf("[result %q, bytes %d to %d of %d; ", args.ID, page.from, end, size)
	if end >= size {
		head += "this is its end]\n"
	} else {
		head += fmt.Sprintf("what follows is at offset %d]\n", end)
	}
	return &protocol.CallToolResult{Content: []protocol.Content{{Type: protocol.ContentText, Text: head + page.text}}}, nil
}

// pageBytes is the size of a page: what the model asks for, within the
// budget of a result less the page's header.
func pageBytes(tokens, budget int) int {
	most := max(budget*bytesPerToken-200, 1)
	if budget < 0 {
		most = DefaultMaxResultTokens * bytesPerToken
	}
	if tokens <= 0 || tokens*bytesPerToken > most {
		return most
	}
	return tokens * bytesPerToken
}

type page struct {
	from int64
	text string
}

// readPage reads n bytes of a file from off, moved on to a character's
// start, and ending before an incomplete character.
func readPage(path string, off int64, n int) (page, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return page{}, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return page{}, 0, err
	}
	size := st.Size()
	if off >= size {
		return page{from: size}, size, nil
	}
	buf := make([]byte, n+utf8.UTFMax)
	got, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return page{}, 0, err
	}
	buf = buf[:got]
	skip := 0
	for skip < len(buf) && skip < utf8.UTFMax && !utf8.RuneStart(buf[skip]) {
		skip++
	}
	text := truncate(string(buf[skip:]), n)
	return page{from: off + int64(skip), text: text}, size, nil
}

// addResultTool offers ResultReadTool once a result was kept, unless a
// server's tool has its name.
func (a *Agent) addResultTool(ts *toolSet, lim Limits) {
	if !a.offerResultRead() {
		return
	}
	if _, clash := ts.names.Tool(ResultReadTool); clash {
		a.warnOnce("results-tool-clash", fmt.Sprintf("the results over their budget cannot be read by the model: a server has a tool named %q", ResultReadTool))
		return
	}
	budget := lim.MaxResultTokens
	ts.addBuiltin(ToolSpec{Name: ResultReadTool, Description: resultReadDescription(budget), Schema: resultReadSchema},
		func(_ context.Context, args jsontext.Value) (*protocol.CallToolResult, error) {
			return a.readResult(args, budget)
		})
}
