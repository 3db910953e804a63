// Package limit enforces the "limits" of a gateway's configuration: rate
// limits (token buckets: a rate and a burst) and concurrency limits, per
// caller, per tool, per view, or any combination of them.
//
// A [Limiter] sits at two places of the gateway. Its HTTP middleware
// ([Limiter.HTTP], inside the authentication, which names the caller)
// counts each request an MCP endpoint receives against the rules without
// tools, and refuses one over the limit with HTTP 429 and Retry-After
// before its body is read. Its MCP middleware ([Limiter.Middleware])
// counts the tool calls against the rules with tools and the concurrency
// limits, and refuses one over the limit with a JSON-RPC error whose data
// says when to retry ([CodeLimited]).
//
// The buckets are the replica's own, or, with a [Store] (Redis, shared by
// the replicas of one gateway), shared: one round trip takes a token from
// every bucket a request counts against, or from none; with a
// [SlotStore], the calls in flight are counted for every replica too,
// each count lasting until the call ends or its lease. While the store
// cannot be reached, the limits count locally, let everything through, or
// refuse everything, as the configuration says.
//
// The rules are swapped whole ([Limiter.Set]) when the configuration is
// read again; a rule that did not change keeps its counts.
package limit

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/intercept"
)

// Options configure a [Limiter]. The zero value is usable.
type Options struct {
	// Store, when set, keeps the rate limits' buckets for every replica;
	// Slots their counts of calls in flight, each lasting Lease at most
	// (default 10 minutes: as long as ferry serve lets a call last).
	Store Store
	Slots SlotStore
	Lease time.Duration
	// StoreRetry is how long after the store failed the limits ask it
	// again (default 1 second): meanwhile they do what the policy's
	// redisDown says at once, rather than each request waiting for a
	// Redis that does not answer.
	StoreRetry time.Duration
	// Logger receives the changes of the store's state (down, up again).
	// Nil discards them.
	Logger *slog.Logger
}

// A Limiter enforces a [Policy]. It is safe for concurrent use.
type Limiter struct {
	shared Store
	slots  SlotStore
	lease  time.Duration
	log    *slog.Logger
	local  *Local
	conc   concurrency
	policy atomic.Pointer[Policy]
	down   storeState
}

// storeState is whether the shared store failed, and when to ask it
// again.
type storeState struct {
	retry   time.Duration
	down    atomic.Bool
	probing atomic.Bool  // a request is asking the store that was down
	next    atomic.Int64 // unix nanoseconds: when to ask it again
}

// New returns a Limiter enforcing p (nil: none until [Limiter.Set]).
func New(p *Policy, opts *Options) *Limiter {
	var o Options
	if opts != nil {
		o = *opts
	}
	l := &Limiter{shared: o.Store, slots: o.Slots, lease: cmp.Or(o.Lease, 10*time.Minute), log: o.Logger, local: NewLocal()}
	l.down.retry = o.StoreRetry
	if l.down.retry <= 0 {
		l.down.retry = time.Second
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	l.Set(p)
	return l
}

// Set makes the limiter enforce p from the next request on; nil or a
// policy without rules removes every limit. The counts of the rules p
// shares with the policy before are kept, and calls in flight are
// counted until they end.
func (l *Limiter) Set(p *Policy) {
	if p != nil && len(p.requests) == 0 && len(p.calls) == 0 {
		p = nil
	}
	l.policy.Store(p)
}

// A Policy is the compiled form of a configuration's limits.
type Policy struct {
	requests  []*rule // counted per HTTP request: rates without tools
	calls     []*rule // counted per tool call: with tools, or concurrency
	tools     bool    // a rule of calls names tools
	redisDown string
}

// A rule is one limit of the configuration.
type rule struct {
	id      string // the rule's digest: the same rule keeps its counts over a reload
	name    string
	tools   []string
	views   []string
	callers []string
	per     struct{ caller, tool, view bool }
	rate    float64 // tokens a second; 0 for none
	burst   float64
	conc    int
	// callRate reports whether the rule's rate counts tool calls (it
	// names tools) rather than HTTP requests.
	callRate bool
}

// Compile checks cfg and returns the policy it describes (a policy with
// no rules for nil).
func Compile(cfg *config.Limits) (*Policy, error) {
	p := &Policy{redisDown: config.RedisDownLocal}
	if cfg == nil {
		return p, nil
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	p.redisDown = cmp.Or(cfg.RedisDown, config.RedisDownLocal)
	for i := range cfg.Rules {
		r := compileRule(&cfg.Rules[i], i)
		if r.rate > 0 && !r.callRate {
			p.requests = append(p.requests, r)
		}
		if r.callRate || r.conc > 0 {
			p.calls = append(p.calls, r)
			p.tools = p.tools || len(r.tools) > 0
		}
	}
	return p, nil
}

func compileRule(c *config.LimitRule, i int) *rule {
	r := &rule{name: c.Name, tools: c.Tools, views: c.Views, callers: c.Callers, conc: c.Concurrency}
	if r.name == "" {
		r.name = fmt.Sprintf("limits.rules[%d]", i)
	}
	r.per.caller = slices.Contains(c.Per, config.PerCaller)
	r.per.tool = slices.Contains(c.Per, config.PerTool)
	r.per.view = slices.Contains(c.Per, config.PerView)
	if c.Rate != "" {
		n, per, _ := config.ParseRate(c.Rate) // checked
		r.rate = n / per.Seconds()
		r.burst = float64(c.Burst)
		if c.Burst == 0 {
			r.burst = max(1, float64(int(n)))
		}
	}
	r.callRate = r.rate > 0 && len(r.tools) > 0
	// Digest of what the rule counts and how, without its name and
	// position: moving or renaming a rule keeps its counts.
	anon := *c
	anon.Name = ""
	b, _ := json.Marshal(anon)
	sum := sha256.Sum256(b)
	r.id = hex.EncodeToString(sum[:12])
	return r
}

// A request is what the rules match and count by.
type request struct {
	caller string // the caller's key: "caller:ID", else "addr:ADDRESS"
	ids    []string
	view   string
	tool   string // "" for an HTTP request
}

// matches reports whether r counts q.
func (r *rule) matches(q *request) bool {
	if len(r.views) > 0 && !slices.Contains(r.views, q.view) {
		return false
	}
	if len(r.callers) > 0 && !slices.ContainsFunc(r.callers, func(c string) bool { return slices.Contains(q.ids, c) }) {
		return false
	}
	if q.tool == "" || len(r.tools) == 0 {
		return true
	}
	return slices.ContainsFunc(r.tools, func(p string) bool {
		ok, _ := path.Match(p, q.tool)
		return ok
	})
}

// key names the count of q under r.
func (r *rule) key(q *request) string {
	k := r.id
	if r.per.caller {
		k += "\x00c" + q.caller
	}
	if r.per.tool {
		k += "\x00t" + q.tool
	}
	if r.per.view {
		k += "\x00v" + q.view
	}
	return k
}

// bucket is q's bucket under r.
func (r *rule) bucket(q *request) Bucket {
	return Bucket{Key: r.key(q), Rate: r.rate, Burst: r.burst}
}

// A Refusal is a request over a limit: which rule refused it, and how
// long until it would be let through.
type Refusal struct {
	Rule string
	// RetryAfter is when to try again; zero when it is not known (a
	// concurrency limit: when a call in flight ends).
	RetryAfter time.Duration
	// Concurrency is the limit of calls in flight that was reached, 0
	// for a rate limit.
	Concurrency int
	// Unchecked says that the shared limits could not be checked and the
	// configuration refuses requests meanwhile (redisDown "deny").
	Unchecked bool
}

func (r *Refusal) Error() string {
	switch {
	case r.Unchecked:
		return fmt.Sprintf("the gateway's shared limits cannot be checked (its Redis is unreachable); retry in %s", seconds(r.RetryAfter))
	case r.Concurrency > 0:
		return fmt.Sprintf("limit %q reached: %d calls in flight at once; retry when one of them has ended", r.Rule, r.Concurrency)
	}
	return fmt.Sprintf("limit %q reached; retry in %s", r.Rule, seconds(r.RetryAfter))
}

// seconds writes d as whole seconds, rounded up: what Retry-After says.
func seconds(d time.Duration) string { return fmt.Sprintf("%ds", retrySeconds(d)) }

func retrySeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// takeRates takes a token from the bucket of each rule of rules that
// counts q (those with a rate), or from none.
func (l *Limiter) takeRates(ctx context.Context, p *Policy, rules []*rule, q *request) *Refusal {
	var buckets []Bucket
	var named []*rule
	for _, r := range rules {
		if r.rate > 0 && (q.tool == "" || r.callRate) && r.matches(q) {
			buckets = append(buckets, r.bucket(q))
			named = append(named, r)
		}
	}
	if len(buckets) == 0 {
		return nil
	}
	i, wait := l.take(ctx, p, buckets)
	switch {
	case i == unchecked:
		return &Refusal{RetryAfter: time.Second, Unchecked: true}
	case i >= 0:
		return &Refusal{Rule: named[i].name, RetryAfter: wait}
	}
	return nil
}

// unchecked is the index take returns for a request refused because the
// shared store could not be asked (redisDown "deny").
const unchecked = -2

// take takes from buckets in the shared store, else locally: the index
// of the bucket that refused (-1 for none) and how long until every
// bucket has a token.
func (l *Limiter) take(ctx context.Context, p *Policy, buckets []Bucket) (int, time.Duration) {
	now := time.Now()
	if l.shared == nil || !l.down.ask(now) {
		return l.fallback(ctx, now, p, buckets)
	}
	i, wait, err := l.shared.Take(ctx, now, buckets)
	if err != nil {
		l.storeFailed(p, err, now)
		return l.fallback(ctx, now, p, buckets)
	}
	l.storeAnswered()
	return i, wait
}

// storeFailed records a failure of the shared store, and says so when it
// answered before.
func (l *Limiter) storeFailed(p *Policy, err error, now time.Time) {
	if l.down.failed(now) {
		l.log.Error("limits: the shared store cannot be reached; "+fallbackSays[p.redisDown], "error", err, "redisDown", p.redisDown)
	}
}

// storeAnswered records an answer of the shared store, and says so when
// it failed before.
func (l *Limiter) storeAnswered() {
	if l.down.answered() {
		l.log.Info("limits: the shared store answers again; the replicas share their limits again")
	}
}

// fallback takes from buckets without the shared store: locally, or as
// redisDown says while the store is down.
func (l *Limiter) fallback(ctx context.Context, now time.Time, p *Policy, buckets []Bucket) (int, time.Duration) {
	if l.shared != nil {
		switch p.redisDown {
		case config.RedisDownAllow:
			return -1, 0
		case config.RedisDownDeny:
			return unchecked, time.Second
		}
	}
	i, wait, _ := l.local.Take(ctx, now, buckets)
	return i, wait
}

// ask reports whether to ask the store: it is up, or it has been down
// for the retry time and no other request is asking it.
func (s *storeState) ask(now time.Time) bool {
	if !s.down.Load() {
		return true
	}
	return now.UnixNano() >= s.next.Load() && s.probing.CompareAndSwap(false, true)
}

// failed records a failure, and reports whether the store was up.
func (s *storeState) failed(now time.Time) bool {
	s.next.Store(now.Add(s.retry).UnixNano())
	s.probing.Store(false)
	return s.down.CompareAndSwap(false, true)
}

// answered records an answer, and reports whether the store was down.
func (s *storeState) answered() bool {
	if !s.down.Load() {
		return false
	}
	s.probing.Store(false)
	return s.down.CompareAndSwap(true, false)
}

var fallbackSays = map[string]string{
	config.RedisDownLocal: "each replica counts its own requests until it answers",
	config.RedisDownAllow: "requests are not limited until it answers",
	config.RedisDownDeny:  "requests that count against a limit are refused until it answers",
}

// callerOf returns the caller's key and the names the rules' callers
// match (its ID and subject).
func callerOf(ctx context.Context, key string) (string, []string) {
	c, ok := intercept.CallerFrom(ctx)
	if !ok {
		return key, nil
	}
	return key, []string{c.ID, c.Subject}
}
