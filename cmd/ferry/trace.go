package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/host"
)

// tracer shows the JSON-RPC messages: a line each on stderr (--trace)
// and a JSON object each in a file (--trace-file).
type tracer struct {
	term *terminal // nil without --trace
	mu   sync.Mutex
	file *os.File
	w    *bufio.Writer
	// flushEach: w is stdout (--trace-file -), written line by line.
	flushEach bool
	start     time.Time
}

// maxTraceJSON bounds the JSON shown on stderr for one message; the
// trace file has it whole.
const maxTraceJSON = 2000

func (o *cli) openTrace() error {
	if !o.trace && o.traceFile == "" {
		return nil
	}
	t := &tracer{start: time.Now()}
	if o.trace {
		t.term = o.term
	}
	if o.traceFile == "-" {
		// NDJSON on stdout, each line as it happens, so that the lines
		// come before the result: a pipe to jq reads both.
		t.w, t.flushEach = bufio.NewWriter(o.stdout), true
	} else if o.traceFile != "" {
		f, err := os.Create(o.traceFile)
		if err != nil {
			return usageErrorf("--trace-file: %v", err)
		}
		t.file, t.w = f, bufio.NewWriter(f)
	}
	o.tracer = t
	return nil
}

func (o *cli) closeTrace() {
	if t := o.tracer; t != nil && t.w != nil {
		t.mu.Lock()
		t.w.Flush()
		if t.file != nil {
			t.file.Close()
		}
		t.mu.Unlock()
	}
}

// traceLine is one message in the trace file.
type traceLine struct {
	Time    string         `json:"time"`
	Server  string         `json:"server"`
	Dir     string         `json:"dir"` // "send" (host to server) or "recv"
	Kind    string         `json:"kind"`
	ID      jsontext.Value `json:"id,omitempty"`
	Method  string         `json:"method,omitempty"`
	Size    int            `json:"size"`
	MS      *float64       `json:"ms,omitempty"` // responses: milliseconds since the request
	Message jsontext.Value `json:"message,omitempty"`
}

func (t *tracer) event(e *host.TraceEvent) {
	if t.term != nil {
		t.term.printf("%s\n", formatTrace(e))
	}
	if t.w == nil {
		return
	}
	l := traceLine{Time: e.Time.UTC().Format(time.RFC3339Nano), Server: e.Server, Dir: "recv", Kind: e.Kind,
		Method: e.Method, Size: e.Size, Message: e.Message}
	if e.Out {
		l.Dir = "send"
	}
	if e.ID != "" {
		l.ID = jsontext.Value(e.ID)
	}
	if e.Kind == "response" || e.Kind == "error" {
		ms := float64(e.Latency.Microseconds()) / 1000
		l.MS = &ms
	}
	b, err := json.Marshal(&l)
	if err != nil {
		return
	}
	b = append(b, '\n')
	t.mu.Lock()
	// Whole lines only reach the file, so that it parses to its last
	// line even when ferry is killed (SIGKILL) before it flushes.
	if len(b) > t.w.Available() {
		t.w.Flush()
	}
	t.w.Write(b)
	if t.flushEach {
		t.w.Flush()
	}
	t.mu.Unlock()
}

// formatTrace renders an event for stderr:
//
//	-> everything #2 tools/list (request, 98 B)
//	<- everything #2 tools/list (response, 4.1 kB, 1.8 ms)
//	   {"jsonrpc":"2.0","id":2,"result":{...}}
func formatTrace(e *host.TraceEvent) string {
	var b strings.Builder
	if e.Out {
		b.WriteString("-> ")
	} else {
		b.WriteString("<- ")
	}
	b.WriteString(e.Server)
	if e.ID != "" {
		b.WriteString(" #" + strings.Trim(e.ID, `"`))
	}
	if e.Method != "" {
		b.WriteString(" " + e.Method)
	}
	fmt.Fprintf(&b, " (%s, %s", e.Kind, size(e.Size))
	if e.Kind == "response" || e.Kind == "error" {
		fmt.Fprintf(&b, ", %.1f ms", float64(e.Latency.Microseconds())/1000)
	}
	b.WriteString(")\n   ")
	msg := string(e.Message)
	if len(msg) > maxTraceJSON {
		msg = msg[:maxTraceJSON] + fmt.Sprintf("… (%d more bytes)", len(msg)-maxTraceJSON)
	}
	b.WriteString(msg)
	return b.String()
}

func size(n int) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f kB", float64(n)/1000)
}
