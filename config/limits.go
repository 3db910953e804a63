package config

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
)

// Limits is the "limits" section of a gateway's configuration: how often
// and how many at once its callers may call.
//
//	"limits": {
//	  "rules": [
//	    {"per": ["caller"], "rate": "20/s", "burst": 40},
//	    {"tools": ["github__create_*"], "per": ["caller", "tool"], "rate": "5/m"},
//	    {"views": ["support"], "per": ["caller"], "concurrency": 4}
//	  ],
//	  "redisDown": "local"
//	}
//
// A request must pass every rule that applies to it. A rule without
// tools counts the requests of its callers and views, each HTTP request
// an MCP endpoint receives (refused with HTTP 429 before its body is
// read); a rule with tools counts the calls of those tools (refused with
// a JSON-RPC error). Concurrency always counts tool calls in flight.
type Limits struct {
	Rules []LimitRule `json:"rules"`
	// RedisDown is what the limits shared by replicas do while their
	// Redis cannot be reached: "local" (the default: each replica counts
	// on its own until Redis answers again), "allow" (no limit), or
	// "deny" (every counted request refused).
	RedisDown string `json:"redisDown,omitempty"`
}

// LimitRule is one limit: which requests it counts (Tools, Views,
// Callers, each matching every request when empty), what it counts them
// by (Per), and the limit (a Rate with its Burst, a Concurrency, or
// both).
type LimitRule struct {
	// Name names the rule in the errors of the calls it refuses (default
	// "limits.rules[N]").
	Name string `json:"name,omitempty"`
	// Tools are the tools whose calls the rule counts, as the gateway's
	// aggregated endpoint names them (SERVER__TOOL, the server's own
	// name of the tool, whichever endpoint or view shows it): names or
	// path.Match patterns ("github__*").
	Tools []string `json:"tools,omitempty"`
	// Views are the views (/views/NAME/...) whose requests the rule
	// counts; "" stands for the endpoints that are no view (/mcp,
	// /servers/NAME/mcp).
	Views []string `json:"views,omitempty"`
	// Callers are the callers (their IDs, as the identity or token file
	// names them) whose requests the rule counts.
	Callers []string `json:"callers,omitempty"`
	// Per is what the rule keeps one count for: any of "caller", "tool",
	// "view". Empty means one count for all the requests it matches.
	Per []string `json:"per,omitempty"`
	// Rate is how many requests a count lets through, "N/UNIT" where UNIT
	// is s, m, h or a duration ("10/s", "100/m", "5/30s"); Burst is how
	// many may come at once after a quiet time (default: N, at least 1).
	Rate  string `json:"rate,omitempty"`
	Burst int    `json:"burst,omitempty"`
	// Concurrency bounds the tool calls of a count in flight at once.
	Concurrency int `json:"concurrency,omitempty"`
}

// The dimensions a rule's counts may be kept per.
const (
	PerCaller = "caller"
	PerTool   = "tool"
	PerView   = "view"
)

// What limits shared in Redis do while it cannot be reached.
const (
	RedisDownLocal = "local"
	RedisDownAllow = "allow"
	RedisDownDeny  = "deny"
)

// maxLimitRules bounds the rules of a configuration: every request is
// matched against each.
const maxLimitRules = 1000

// Check reports the first field of l that cannot be used, as a
// [*FieldError].
func (l *Limits) Check() error {
	switch l.RedisDown {
	case "", RedisDownLocal, RedisDownAllow, RedisDownDeny:
	default:
		return &FieldError{Path: "redisDown", Err: fmt.Errorf("must be %q, %q or %q, not %q", RedisDownLocal, RedisDownAllow, RedisDownDeny, l.RedisDown)}
	}
	if len(l.Rules) > maxLimitRules {
		return &FieldError{Path: "rules", Err: fmt.Errorf("more than %d rules", maxLimitRules)}
	}
	for i := range l.Rules {
		if err := l.Rules[i].check(); err != nil {
			var fe *FieldError
			errors.As(err, &fe)
			return &FieldError{Path: fmt.Sprintf("rules[%d]", i) + joinField(fe.Path), Err: fe.Err}
		}
	}
	return nil
}

func joinField(p string) string {
	if p == "" || strings.HasPrefix(p, "[") {
		return p
	}
	return "." + p
}

// check returns a *FieldError whose path is below the rule.
func (r *LimitRule) check() error {
	if r.Rate == "" && r.Concurrency == 0 {
		return &FieldError{Err: errors.New("sets neither a rate nor a concurrency")}
	}
	if r.Rate != "" {
		if _, _, err := ParseRate(r.Rate); err != nil {
			return &FieldError{Path: "rate", Err: err}
		}
	}
	if r.Burst < 0 || (r.Burst > 0 && r.Rate == "") {
		return &FieldError{Path: "burst", Err: errors.New("must be a positive number, with a rate")}
	}
	if r.Concurrency < 0 {
		return &FieldError{Path: "concurrency", Err: errors.New("must be a positive number")}
	}
	for i, p := range r.Per {
		if p != PerCaller && p != PerTool && p != PerView {
			return &FieldError{Path: fmt.Sprintf("per[%d]", i), Err: fmt.Errorf("must be %q, %q or %q, not %q", PerCaller, PerTool, PerView, p)}
		}
		if p == PerTool && len(r.Tools) == 0 {
			return &FieldError{Path: fmt.Sprintf("per[%d]", i), Err: errors.New(`"tool" needs the rule's tools (["*"] for every tool)`)}
		}
	}
	for i, t := range r.Tools {
		if _, err := path.Match(t, ""); err != nil || t == "" {
			return &FieldError{Path: fmt.Sprintf("tools[%d]", i), Err: fmt.Errorf("%q is not a tool name or pattern", t)}
		}
	}
	return nil
}

// ParseRate reads a rate, "N/UNIT" (UNIT s, m, h, or a duration such as
// 30s): N requests per interval.
func ParseRate(s string) (n float64, per time.Duration, err error) {
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not N/UNIT (10/s, 100/m, 5/30s)", s)
	}
	n, err = strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, 0, fmt.Errorf("%q: the count must be a positive number", s)
	}
	switch unit = strings.TrimSpace(unit); unit {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	case "h":
		per = time.Hour
	default:
		per, err = time.ParseDuration(unit)
		if err != nil || per <= 0 {
			return 0, 0, fmt.Errorf("%q: the unit must be s, m, h or a duration", s)
		}
	}
	return n, per, nil
}
