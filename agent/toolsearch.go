package agent

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// The built-in tools of tool search. Above a threshold of tools (see
// [Limits.ToolSearchTools]), the model is not sent every tool's schema
// in every request: it searches the tools by words with ToolSearchTool,
// which answers with names and descriptions, and loads those it needs
// with ToolLoadTool; a loaded tool's definition is sent from the next
// request on, for the rest of the conversation.
const (
	ToolSearchTool = "tools__search"
	ToolLoadTool   = "tools__load"
)

// Defaults of the thresholds of tool search.
const (
	DefaultToolSearchTools  = 40
	DefaultToolSearchTokens = 10_000
)

const (
	defaultSearchHits = 10
	maxSearchHits     = 25
	// maxLoad bounds the tools one call of ToolLoadTool loads, so that
	// the model cannot load back every schema at once.
	maxLoad = 20
)

// specsSize is the size of tool definitions: what [Agent.listTools]
// weighs against the context.
func specsSize(specs []ToolSpec) int {
	n := 0
	for _, s := range specs {
		n += len(s.Name) + len(s.Description) + len(s.Schema)
	}
	return n
}

// searchTools turns on tool search when the tools are over a threshold:
// the model is then given the tools it loaded and the two search tools,
// not every tool. It reports whether it did.
func (a *Agent) searchTools(ts *toolSet, size int, lim Limits) bool {
	manyTools := lim.ToolSearchTools > 0 && len(ts.specs) > lim.ToolSearchTools
	bigTools := lim.ToolSearchTokens > 0 && size/bytesPerToken > lim.ToolSearchTokens
	if !manyTools && !bigTools {
		return false
	}
	for _, n := range []string{ToolSearchTool, ToolLoadTool} {
		if _, clash := ts.names.Tool(n); clash {
			a.warnOnce("search-tools-clash", fmt.Sprintf("every tool's definition is sent to the model: a server has a tool named %q, "+
				"the name of the tool search", n))
			return false
		}
	}
	cat := &toolCatalog{specs: ts.specs, names: ts}
	cat.index()
	ts.specs = a.loadedSpecs(ts)
	ts.addBuiltin(ToolSpec{Name: ToolSearchTool, Description: searchDescription(cat, lim), Schema: searchSchema},
		func(_ context.Context, args jsontext.Value) (*protocol.CallToolResult, error) {
			return cat.search(args)
		})
	ts.addBuiltin(ToolSpec{Name: ToolLoadTool, Description: loadToolsDescription, Schema: loadToolsSchema},
		func(_ context.Context, args jsontext.Value) (*protocol.CallToolResult, error) {
			return a.loadTools(cat, args)
		})
	return true
}

// loadedSpecs are the definitions of the tools the model loaded.
func (a *Agent) loadedSpecs(ts *toolSet) []ToolSpec {
	st := &a.state
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []ToolSpec
	for _, s := range ts.specs {
		if st.loaded[ts.hostName(s.Name)] {
			out = append(out, s)
		}
	}
	return out
}

// hostName is the host's name of a tool the model names.
func (ts *toolSet) hostName(model string) string {
	name, _ := ts.names.Tool(model)
	return name
}

// toolCatalog is every tool, for search.
type toolCatalog struct {
	specs []ToolSpec
	names *toolSet
	// nameWords and descWords are the words of each tool's name and
	// description; df how many tools have each word.
	nameWords, descWords []map[string]bool
	df                   map[string]int
}

func (c *toolCatalog) index() {
	c.df = map[string]int{}
	for _, s := range c.specs {
		nw, dw := wordSet(s.Name), wordSet(s.Description+" "+strings.Join(paramNames(s.Schema), " "))
		c.nameWords, c.descWords = append(c.nameWords, nw), append(c.descWords, dw)
		for w := range union(nw, dw) {
			c.df[w]++
		}
	}
}

func union(a, b map[string]bool) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for w := range a {
		out[w] = true
	}
	for w := range b {
		out[w] = true
	}
	return out
}

// wordSet is the words of s, lower-cased: split at what is not a letter
// or a digit, and at a lower-case letter followed by an upper-case one
// (getWeather, get_weather and get-weather have the same words).
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	var w []rune
	prevLower := false
	flush := func() {
		if len(w) > 0 {
			out[strings.ToLower(string(w))] = true
		}
		w = w[:0]
	}
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			w = append(w, r)
		}
		prevLower = unicode.IsLower(r)
	}
	flush()
	return out
}

// paramNames are the names of a schema's properties.
func paramNames(schema jsontext.Value) []string {
	var s struct {
		Properties map[string]jsontext.Value `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	return slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	})
}

// score weighs a tool against the query's words: a word of its name
// counts three times one of its description, a rare word more than a
// common one, and a word that starts one of the tool's (of three letters
// or more) half as much as the word itself.
func (c *toolCatalog) score(i int, query map[string]bool) float64 {
	total := 0.0
	for q := range query {
		idf := math.Log(1 + float64(len(c.specs))/float64(max(c.df[q], 1)))
		total += idf * (3*match(c.nameWords[i], q) + match(c.descWords[i], q))
	}
	return total
}

func match(words map[string]bool, q string) float64 {
	if words[q] {
		return 1
	}
	if len(q) < 3 {
		return 0
	}
	for w := range words {
		if strings.HasPrefix(w, q) {
			return 0.5
		}
	}
	return 0
}

var searchSchema = jsontext.Value(`{"type":"object","properties":{` +
	`"query":{"type":"string","description":"words of what you need to do, such as: create github issue"},` +
	`"limit":{"type":"integer","minimum":1,"maximum":25,"description":"how many tools at most (default 10)"}},"required":["query"]}`)

var loadToolsSchema = jsontext.Value(`{"type":"object","properties":{` +
	`"names":{"type":"array","items":{"type":"string"},"maxItems":20,"description":"the tools' names, as the search gives them"}},"required":["names"]}`)

const loadToolsDescription = "Loads tools found with " + ToolSearchTool + ": their definitions are in your tools from your next request on, " +
	"for the rest of the conversation; call them then. Load only those you need (at most 20 at a time)."

// searchDescription says how many tools there are and of which servers,
// and names them all when the names fit in the limit of a tool.
func searchDescription(c *toolCatalog, lim Limits) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Searches the %d tools of the servers, whose definitions are not all sent to you: give words of what you need to do, "+
		"and you get the names and descriptions of the tools that match; load those you need with %s, then call them. ", len(c.specs), ToolLoadTool)
	names := make([]string, len(c.specs))
	for i, s := range c.specs {
		names[i] = s.Name
	}
	list := "The tools: " + strings.Join(names, ", ") + "."
	if lim.MaxToolBytes <= 0 || b.Len()+len(list)+len(searchSchema)+len(ToolSearchTool) <= lim.MaxToolBytes {
		b.WriteString(list)
	}
	return b.String()
}

type searchArgs struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// search answers a query with the best-matching tools, best first.
func (c *toolCatalog) search(raw jsontext.Value) (*protocol.CallToolResult, error) {
	var args searchArgs
	if err := json.Unmarshal(raw, &args); err != nil || strings.TrimSpace(args.Query) == "" {
		return nil, fmt.Errorf("%s takes {\"query\": words of what you need to do, \"limit\": number}", ToolSearchTool)
	}
	limit := args.Limit
	if limit <= 0 {
		limit = defaultSearchHits
	}
	limit = min(limit, maxSearchHits)
	query := wordSet(args.Query)
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	for i := range c.specs {
		if s := c.score(i, query); s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	slices.SortStableFunc(hits, func(x, y hit) int { return -cmpFloat(x.score, y.score) })
	if len(hits) == 0 {
		return textResult(fmt.Sprintf("No tool matches %q: try other words (the tools are named in the description of %s).", args.Query, ToolSearchTool)), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools match %q; the best %d:\n", len(hits), args.Query, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		s := c.specs[h.i]
		fmt.Fprintf(&b, "- %s: %s", s.Name, oneLine(s.Description, maxSkillDescription))
		if ps := paramNames(s.Schema); len(ps) > 0 {
			fmt.Fprintf(&b, " (parameters: %s)", strings.Join(ps, ", "))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Load those you need with %s.", ToolLoadTool)
	return textResult(b.String()), nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func textResult(s string) *protocol.CallToolResult {
	return &protocol.CallToolResult{Content: []protocol.Content{{Type: protocol.ContentText, Text: s}}}
}

// loadTools marks tools loaded, for the rest of the conversation.
func (a *Agent) loadTools(c *toolCatalog, raw jsontext.Value) (*protocol.CallToolResult, error) {
	var args struct {
		Names []string `json:"names"`
	}
	if err := json.Unmarshal(raw, &args); err != nil || len(args.Names) == 0 {
		return nil, fmt.Errorf("%s takes {\"names\": [the tools' names]}", ToolLoadTool)
	}
	if len(args.Names) > maxLoad {
		return nil, fmt.Errorf("%s loads at most %d tools at a time; %d were asked for", ToolLoadTool, maxLoad, len(args.Names))
	}
	var loaded, unknown []string
	st := &a.state
	st.mu.Lock()
	for _, n := range args.Names {
		if !slices.ContainsFunc(c.specs, func(s ToolSpec) bool { return s.Name == n }) {
			unknown = append(unknown, n)
			continue
		}
		if st.loaded == nil {
			st.loaded = map[string]bool{}
		}
		st.loaded[c.names.hostName(n)] = true
		loaded = append(loaded, n)
	}
	st.mu.Unlock()
	var b strings.Builder
	if len(loaded) > 0 {
		fmt.Fprintf(&b, "Loaded: %s. Their definitions are in your tools from your next request on.", strings.Join(loaded, ", "))
	}
	if len(unknown) > 0 {
		fmt.Fprintf(&b, " There are no tools named %s: search for them with %s.", strings.Join(unknown, ", "), ToolSearchTool)
	}
	return &protocol.CallToolResult{Content: []protocol.Content{{Type: protocol.ContentText, Text: strings.TrimSpace(b.String())}},
		IsError: len(loaded) == 0}, nil
}
