package config

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/internal/racecheck"
)

// nested returns depth references, each the default of the one around
// it: ${A:-${A:-...x...}}.
func nested(depth int) string {
	return strings.Repeat("${A:-", depth) + "x" + strings.Repeat("}", depth)
}

// TestExpandNesting: defaults nest up to MaxNesting deep; deeper is an
// error, found in time linear in the text (on a12c33f, 600 KB of nested
// defaults took 30 s and more: each level scanned all the levels below).
func TestExpandNesting(t *testing.T) {
	v := Vars{Lookup: func(string) (string, bool) { return "", false }}
	if got, err := v.Expand(nested(MaxNesting)); err != nil || got != "x" {
		t.Fatalf("Expand(%d deep) = %q, %v", MaxNesting, got, err)
	}
	if _, err := v.Expand(nested(MaxNesting + 1)); err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Fatalf("Expand(%d deep): %v, want an error about the nesting", MaxNesting+1, err)
	}
	// 600 KB: the bound is time, which the quadratic expansion spent by
	// the minute; the linear one takes about a millisecond.
	long := nested(600 << 10 / 6)
	start := time.Now()
	_, err := v.Expand(long)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Expand of %d KB of nested defaults took %v", len(long)>>10, d)
	}
	if err == nil {
		t.Fatal("no error for nesting 100,000 deep")
	}
}

func BenchmarkExpandNested(b *testing.B) {
	v := Vars{Lookup: func(string) (string, bool) { return "", false }}
	for _, kb := range []int{6, 60, 600} {
		s := nested(kb << 10 / 6)
		b.Run(strconv.Itoa(kb)+"KB", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				v.Expand(s)
			}
		})
	}
}

// parseAlloc returns the bytes Parse allocates for data.
func parseAlloc(t *testing.T, data []byte, opts *Options) (*File, uint64, error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := Parse("big.json", data, opts)
	runtime.ReadMemStats(&after)
	return f, after.TotalAlloc - before.TotalAlloc, err
}

// TestParseMemoryBudget: the memory Parse takes is bounded by what it
// keeps, not by the size of the file (on a12c33f a 42 MB
// ~/.claude.json-like file took 0.5 GB, and 42 MB of server entries 2 to
// 3.4 GB). It runs in the test command's budget step, without the race
// detector, which allocates on its own and is slow at this size.
func TestParseMemoryBudget(t *testing.T) {
	if racecheck.Enabled {
		t.Skip("allocations are counted without -race")
	}
	const size = 42 << 20
	var b strings.Builder
	b.WriteString(`{"mcpServers":{"user":{"command":"u"}},"projects":{`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `"/src/p%d":{"history":[{"display":"a prompt typed long ago","pastedContents":{}}],"mcpServers":{}},`, i)
	}
	b.WriteString(`"/src/me":{"mcpServers":{"mine":{"command":"m"}}}}}`)
	f, alloc, err := parseAlloc(t, []byte(b.String()), &Options{Project: "/src/me"})
	if err != nil || len(f.Servers) != 2 || f.Servers[1].Name != "mine" {
		t.Fatalf("Parse: %v, %+v", err, f)
	}
	t.Logf("%d MB of projects: %d KB allocated", size>>20, alloc>>10)
	if alloc > 8<<20 {
		t.Errorf("Parse of a %d MB file allocated %d MB", size>>20, alloc>>20)
	}

	b.Reset()
	b.WriteString(`{"mcpServers":{`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `"s%d":{"command":"x","args":["a","b"],"env":{"A":"b"}},`, i)
	}
	b.WriteString(`"z":{"command":"x"}}}`)
	_, alloc, err = parseAlloc(t, []byte(b.String()), nil)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d servers", MaxServers)) {
		t.Fatalf("Parse of %d MB of servers: %v", size>>20, err)
	}
	t.Logf("%d MB of servers: %d KB allocated", size>>20, alloc>>10)
	if alloc > 8<<20 {
		t.Errorf("Parse of %d MB of servers allocated %d MB", size>>20, alloc>>20)
	}
}

// TestParseBounds: entries too large or with too many items are refused
// one by one, the file's other entries still read.
func TestParseBounds(t *testing.T) {
	many := func(item string, n int) string {
		return strings.TrimSuffix(strings.Repeat(item+",", n), ",")
	}
	envItems := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `"K%d":"v",`, i)
		}
		return strings.TrimSuffix(b.String(), ",")
	}
	tests := []struct{ name, entry, want string }{
		{"args", `{"command":"x","args":[` + many(`"a"`, MaxItems+1) + `]}`, "args: more than 4096 items"},
		{"env", `{"command":"x","env":{` + envItems(MaxItems+1) + `}}`, "env: more than 4096 items"},
		{"entry", `{"command":"x","description":"` + strings.Repeat("d", MaxEntryBytes) + `"}`, "exceed the limit of 1048576"},
		{"args at the bound", `{"command":"x","args":[` + many(`"a"`, MaxItems) + `]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `{"mcpServers":{"big":` + tt.entry + `,"ok":{"command":"y"}}}`
			f, err := Parse("f.json", []byte(data), nil)
			if err != nil {
				t.Fatal(err)
			}
			if f.Servers[1].Err != nil {
				t.Errorf("the other entry: %v", f.Servers[1].Err)
			}
			got := f.Servers[0].Err
			if tt.want == "" {
				if got != nil {
					t.Fatalf("error %v", got)
				}
				return
			}
			if got == nil || !strings.Contains(got.Error(), tt.want) {
				t.Fatalf("error %v, want %q", got, tt.want)
			}
		})
	}
}

// TestExecValues: what the system cannot pass to a program is refused
// when the file is read, naming the key, rather than failing at start as
// if the server were unreachable.
func TestExecValues(t *testing.T) {
	tests := []struct{ name, entry, want string }{
		{"name with =", `{"command":"x","env":{"A=B":"c"}}`, `env: "A=B" is not a valid environment variable name`},
		{"name with a newline", `{"command":"x","env":{"A\nB":"c"}}`, `env: "A\nB" is not a valid`},
		{"empty name", `{"command":"x","env":{"":"c"}}`, "env: an environment variable's name is empty"},
		{"NUL in a value", `{"command":"x","env":{"A":"b\u0000c"}}`, "env.A: holds a NUL byte"},
		{"NUL in an argument", `{"command":"x","args":["a","b\u0000"]}`, "args[1]: holds a NUL byte"},
		{"NUL in the command", `{"command":"x\u0000y"}`, "command: holds a NUL byte"},
		{"header value with a line break", `{"url":"http://h/mcp","headers":{"X-A":"b\r\nX-B: c"}}`, "headers.X-A: the value holds a line break"},
		{"fine", `{"command":"x","args":["a"],"env":{"A_1":"b=c"}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("f.json", []byte(`{"mcpServers":{"s":`+tt.entry+`}}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := f.Servers[0].Err
			if tt.want == "" {
				if got != nil {
					t.Fatalf("error %v", got)
				}
				return
			}
			if got == nil || !strings.Contains(got.Error(), tt.want) {
				t.Fatalf("error %v, want %q", got, tt.want)
			}
		})
	}
}
