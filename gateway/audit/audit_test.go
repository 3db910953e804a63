package audit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// source is what a server knows of a request it received.
type source struct {
	name   string
	args   string
	caller *intercept.Caller
}

func (s source) Name() string                  { return s.name }
func (s source) Arguments() jsontext.Value     { return jsontext.Value(s.args) }
func (s source) ProgressToken() jsontext.Value { return nil }
func (s source) Caller() *intercept.Caller     { return s.caller }
func handler(res intercept.Result, err error) intercept.Handler {
	return func(context.Context, *intercept.Request) (intercept.Result, error) { return res, err }
}

// refusal is what the access rules' refusals look like to the log.
type refusal struct{}

func (refusal) Error() string     { return "refused" }
func (refusal) RefusedBy() string { return "rule 7" }
func (refusal) Unwrap() error     { return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest} }

func TestRecords(t *testing.T) {
	alice := &intercept.Caller{ID: "id-alice", Subject: "alice", Issuer: "https://idp", Claims: map[string]any{"secret": "tok"}}
	anon := &intercept.Caller{ID: "sha256:ab"}
	tests := []struct {
		name   string
		method string
		src    source
		res    intercept.Result
		err    error
		want   Record
	}{
		{"ok", protocol.MethodToolsCall, source{"a__t", `{"b":2, "a":1}`, alice}, intercept.Result{}, nil,
			Record{Caller: "alice", Issuer: "https://idp", Method: "tools/call", Name: "a__t", Outcome: "ok",
				ArgumentsSHA256: "43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777"}},
		{"tool error", protocol.MethodToolsCall, source{"a__t", "", anon}, intercept.Result{IsError: true}, nil,
			Record{Caller: "sha256:ab", Method: "tools/call", Name: "a__t", Outcome: "tool_error"}},
		{"error", protocol.MethodPromptsGet, source{"a__p", "", nil}, intercept.Result{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "x"),
			Record{Method: "prompts/get", Name: "a__p", Outcome: "error", Code: jsonrpc.CodeInvalidParams}},
		{"refused", protocol.MethodResourcesRead, source{"doc://x", "", alice}, intercept.Result{}, refusal{},
			Record{Caller: "alice", Issuer: "https://idp", Method: "resources/read", Name: "doc://x", Outcome: "refused", RefusedBy: "rule 7", Code: jsonrpc.CodeInvalidRequest}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := NewLog(&buf, false)
			at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
			l.now = func() time.Time { at = at.Add(1500 * time.Microsecond); return at }
			ir := &intercept.Request{Method: tt.method, Source: tt.src}
			if _, err := l.Middleware(nil)(handler(tt.res, tt.err))(context.Background(), ir); !errors.Is(err, tt.err) {
				t.Fatalf("the call's error %v became %v", tt.err, err)
			}
			var got Record
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			tt.want.Time, tt.want.MS = time.Date(2026, 11, 29, 8, 0, 0, 1500000, time.UTC), 1.5
			if !equal(got, tt.want) {
				t.Fatalf("record\n%+v\nwant\n%+v", got, tt.want)
			}
			if strings.Contains(buf.String(), "tok") {
				t.Fatalf("a claim reached the record: %s", buf.String())
			}
		})
	}
}

func equal(a, b Record) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// Arguments are written only when asked for, canonical; other methods
// are not recorded.
func TestArgumentsAndMethods(t *testing.T) {
	var buf bytes.Buffer
	l := NewLog(&buf, true)
	mw := l.Middleware(nil)(handler(intercept.Result{}, nil))
	mw(context.Background(), &intercept.Request{Method: protocol.MethodToolsList})
	mw(context.Background(), &intercept.Request{Method: protocol.MethodToolsCall, Source: source{name: "t", args: `{ "z": [1, 2.0], "a": "\u0041" }`}})
	var r Record
	if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	if string(r.Arguments) != `{"a":"A","z":[1,2]}` {
		t.Fatalf("arguments %s", r.Arguments)
	}
}

// Records of calls that end at once are whole lines each.
func TestConcurrentWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(&config.Audit{File: path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mw := l.Middleware(nil)(handler(intercept.Result{}, nil))
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Go(func() {
			mw(context.Background(), &intercept.Request{Method: protocol.MethodToolsCall, Source: source{name: strings.Repeat("n", 1000)}})
		})
	}
	wg.Wait()
	l.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for _, line := range lines {
		if !jsontext.Value(line).IsValid() {
			t.Fatalf("a torn line: %.80s", line)
		}
	}
	st, _ := os.Stat(path)
	if len(lines) != 50 || st.Mode().Perm() != 0o600 {
		t.Fatalf("%d lines, mode %v", len(lines), st.Mode().Perm())
	}
	if _, err := Open(&config.Audit{File: filepath.Join(path, "x")}, nil); err == nil || !strings.HasPrefix(err.Error(), "file: ") {
		t.Fatalf("an audit file that cannot be opened: %v", err)
	}
}

func TestRefusedAtTheDoor(t *testing.T) {
	var buf bytes.Buffer
	l := NewLog(&buf, false)
	l.now = func() time.Time { return time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC) }
	c := &intercept.Caller{ID: "x", Subject: "bob", Issuer: "https://idp"}
	if err := l.Refused(c, "ci", protocol.MethodToolsCall, "deploy", "insufficient_scope", 403); err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2026-11-29T08:00:00Z","caller":"bob","issuer":"https://idp","server":"ci","method":"tools/call","name":"deploy","outcome":"refused","refused_by":"insufficient_scope","http_status":403,"ms":0}` + "\n"
	if buf.String() != want {
		t.Fatalf("got  %s\nwant %s", buf.String(), want)
	}
}

// A reload reopens the file: after a rotation moved it away, records go
// to a new file of the same name; a file that cannot be opened is refused
// before anything changes.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(&config.Audit{File: path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	call := l.Middleware(nil)(handler(intercept.Result{}, nil))
	call(context.Background(), &intercept.Request{Method: protocol.MethodToolsCall, Source: source{name: "before", args: `{"a":1}`}})
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reopen(&config.Audit{File: filepath.Join(dir, "none", "x")}, nil); err == nil || !strings.HasPrefix(err.Error(), "file: ") {
		t.Fatalf("reopening where no file can be: %v", err)
	}
	apply, err := l.Reopen(&config.Audit{File: path, Arguments: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := apply(); err != nil {
		t.Fatal(err)
	}
	call(context.Background(), &intercept.Request{Method: protocol.MethodToolsCall, Source: source{name: "after", args: `{"a":1}`}})
	old, _ := os.ReadFile(path + ".1")
	now, _ := os.ReadFile(path)
	if !strings.Contains(string(old), `"name":"before"`) || strings.Contains(string(old), "after") ||
		!strings.Contains(string(now), `"name":"after"`) || !strings.Contains(string(now), `"arguments":{"a":1}`) {
		t.Fatalf("rotated file %s\nnew file %s", old, now)
	}
}
