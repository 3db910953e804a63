package config

import (
	"strings"
	"testing"
	"time"
)

func TestLimitsSection(t *testing.T) {
	tests := []struct {
		name, limits string
		rules        int
		err          string // the path the error names
	}{
		{"none", ``, 0, ""},
		{"good", `"limits": {
			// comments are fine
			"rules": [
				{"per": ["caller"], "rate": "20/s", "burst": 40},
				{"tools": ["github__create_*"], "per": ["caller", "tool"], "rate": "5/30s"},
				{"views": ["support"], "per": ["caller", "view"], "concurrency": 4}
			],
			"redisDown": "deny"}`, 3, ""},
		{"unknown member", `"limits": {"rules": [{"rate": "1/s", "burts": 3}]}`, 0, "limits.rules[0].burts"},
		{"bad rate", `"limits": {"rules": [{"rate": "ten/s"}]}`, 0, "limits.rules[0].rate"},
		{"bad unit", `"limits": {"rules": [{"rate": "10/fortnight"}]}`, 0, "limits.rules[0].rate"},
		{"no limit", `"limits": {"rules": [{}, {"rate": "1/s"}]}`, 0, "limits.rules[0]: sets neither"},
		{"burst without rate", `"limits": {"rules": [{"concurrency": 2, "burst": 3}]}`, 0, "limits.rules[0].burst"},
		{"bad per", `"limits": {"rules": [{"rate": "1/s"}, {"rate": "1/s", "per": ["user"]}]}`, 0, "limits.rules[1].per[0]"},
		{"per tool without tools", `"limits": {"rules": [{"rate": "1/s", "per": ["tool"]}]}`, 0, "limits.rules[0].per[0]"},
		{"bad pattern", `"limits": {"rules": [{"rate": "1/s", "tools": ["a["]}]}`, 0, "limits.rules[0].tools[0]"},
		{"negative concurrency", `"limits": {"rules": [{"concurrency": -1}]}`, 0, "limits.rules[0].concurrency"},
		{"wrong kind", `"limits": {"rules": [{"rate": 10}]}`, 0, "limits.rules[0].rate"},
		{"bad redisDown", `"limits": {"rules": [], "redisDown": "open"}`, 0, "limits.redisDown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `{"mcpServers": {"s": {"command": "x"}}`
			if tt.limits != "" {
				src += ", " + tt.limits
			}
			f, err := Parse("ferry.json", []byte(src+"}"), nil)
			if err != nil {
				t.Fatal(err)
			}
			var l *Limits
			var lim Limits
			from, err := FirstSection([]*File{f}, "limits", &lim)
			if from != nil && err == nil {
				l = &lim
				if err = l.Check(); err != nil {
					err = SectionError(f.Path, "limits", err)
				}
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), "ferry.json: "+tt.err) {
					t.Fatalf("error %v, want one naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := 0; l != nil {
				got = len(l.Rules)
				if got != tt.rules {
					t.Fatalf("%d rules, want %d", got, tt.rules)
				}
			} else if tt.rules != 0 {
				t.Fatal("no limits")
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in  string
		n   float64
		per time.Duration
	}{
		{"10/s", 10, time.Second},
		{"100/m", 100, time.Minute},
		{"0.5/h", 0.5, time.Hour},
		{"5/30s", 5, 30 * time.Second},
		{" 3 / s ", 3, time.Second},
	}
	for _, tt := range tests {
		n, per, err := ParseRate(tt.in)
		if err != nil || n != tt.n || per != tt.per {
			t.Errorf("ParseRate(%q) = %v, %v, %v; want %v, %v", tt.in, n, per, err, tt.n, tt.per)
		}
	}
	for _, bad := range []string{"", "10", "0/s", "-1/s", "NaN/s", "Inf/s", "1/0s", "1/-1s", "1/x"} {
		if _, _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) took it", bad)
		}
	}
}
