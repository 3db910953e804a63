package agent

import (
	"slices"
	"strings"
	"sync"
)

// SamplingCount is what one server's sampling requests took from a turn.
type SamplingCount struct {
	Server string `json:"server"`
	// Requests counts the requests the model answered, Refused those it
	// was not asked (by the policy, a limit, or a malformed request).
	Requests int   `json:"requests"`
	Refused  int   `json:"refused"`
	Usage    Usage `json:"usage"`
}

// budget is what a turn has spent: its model requests and tokens, its
// own and those of the servers' sampling requests alike, so that a
// server cannot spend more than the user allowed the turn. Requests are
// counted before they are made; a sampling request also sets aside the
// tokens it may use (its input and its reply's cap) until it is
// answered, so that requests made at the same time cannot together go
// beyond the limit. Sampling between turns counts against the last
// turn's budget until the next turn begins.
type budget struct {
	mu       sync.Mutex
	steps    int
	usage    Usage
	reserved int64
	sampling map[string]*SamplingCount
}

// reset starts a turn.
func (b *budget) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.steps, b.usage, b.reserved, b.sampling = 0, Usage{}, 0, nil
}

// takeStep counts a model request of the turn, or says which limit
// forbids it.
func (b *budget) takeStep(lim Limits) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.takeStepLocked(lim)
}

func (b *budget) takeStepLocked(lim Limits) error {
	if lim.MaxSteps > 0 && b.steps >= lim.MaxSteps {
		return &LimitError{Limit: "steps", Value: lim.MaxSteps}
	}
	if lim.MaxTokens > 0 && b.usage.Total()+b.reserved > lim.MaxTokens {
		return &LimitError{Limit: "tokens", Value: lim.MaxTokens}
	}
	b.steps++
	return nil
}

// grant is a sampling request's share of the budget.
type grant struct {
	server    string
	maxTokens int64
	reserved  int64
}

// reserveSampling counts a server's sampling request before it is made:
// a step, and the tokens its input (estimated) and its reply may take.
// The reply's cap is the server's maxTokens, lowered to the host's cap
// and to what the turn's token limit leaves.
func (b *budget) reserveSampling(server string, lim Limits, input, want int64) (*grant, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	count := b.countLocked(server)
	g := &grant{server: server, maxTokens: capTokens(want, lim.MaxSamplingTokens)}
	err := b.takeStepLocked(lim)
	if err == nil && lim.MaxTokens > 0 {
		left := lim.MaxTokens - b.usage.Total() - b.reserved - input
		if left <= 0 {
			b.steps--
			err = &LimitError{Limit: "tokens", Value: lim.MaxTokens}
		}
		g.maxTokens = capTokens(g.maxTokens, left)
	}
	if err != nil {
		count.Refused++
		return nil, err
	}
	g.reserved = input + g.maxTokens
	b.reserved += g.reserved
	return g, nil
}

// settle replaces a grant's reservation by what the request used (zero
// when it failed).
func (b *budget) settle(g *grant, used Usage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved -= g.reserved
	b.usage = b.usage.Add(used)
	c := b.countLocked(g.server)
	c.Requests++
	c.Usage = c.Usage.Add(used)
}

// refuse counts a sampling request refused before the budget was asked.
func (b *budget) refuse(server string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.countLocked(server).Refused++
}

func (b *budget) countLocked(server string) *SamplingCount {
	if b.sampling == nil {
		b.sampling = map[string]*SamplingCount{}
	}
	c := b.sampling[server]
	if c == nil {
		c = &SamplingCount{Server: server}
		b.sampling[server] = c
	}
	return c
}

func (b *budget) addUsage(u Usage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.usage = b.usage.Add(u)
}

// spent returns the turn's model requests, tokens and sampling by
// server (in the servers' order).
func (b *budget) spent() (steps int, u Usage, sampling []SamplingCount) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.sampling {
		sampling = append(sampling, *c)
	}
	slices.SortFunc(sampling, func(x, y SamplingCount) int { return strings.Compare(x.Server, y.Server) })
	return b.steps, b.usage, sampling
}

// capTokens is want lowered to limit (limit <= 0: no cap; want <= 0: the
// limit).
func capTokens(want, limit int64) int64 {
	if limit > 0 && (want <= 0 || want > limit) {
		return limit
	}
	return want
}

// estimateTokens guesses a request's input tokens before it is sent:
// about four bytes a token of its text, arguments and schemas, and a
// flat imageTokens an image.
func estimateTokens(req *Request) int64 {
	n := len(req.System)
	images := 0
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	for _, m := range req.Messages {
		b, i := partsSize(m.Parts)
		n, images = n+b, images+i
	}
	return int64(n/4 + images*imageTokens)
}

// imageTokens is what an image is counted as before a request is sent
// (providers charge by its pixels, from a few hundred tokens to a few
// thousand).
const imageTokens = 1600

func partsSize(parts []Part) (bytes, images int) {
	for _, p := range parts {
		switch {
		case p.Type == ImagePart:
			images++
		case p.Call != nil:
			bytes += len(p.Call.Name) + len(p.Call.Arguments)
		case p.Result != nil:
			b, i := partsSize(p.Result.Content)
			bytes, images = bytes+b, images+i
		default:
			bytes += len(p.Text)
		}
	}
	return bytes, images
}
