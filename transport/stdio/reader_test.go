package stdio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ferrymcp/ferry/internal/racecheck"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// readAll reads messages until the end of input and describes each one:
// its method for a request or notification, "error: ..." for a decode
// error.
func readAll(t *testing.T, lr *lineReader) []string {
	t.Helper()
	var got []string
	for {
		m, err := lr.read()
		if err == io.EOF {
			return got
		}
		var de *jsonrpc.DecodeError
		switch {
		case errors.As(err, &de):
			got = append(got, "error: "+de.Error())
		case err != nil:
			t.Fatalf("read: %v", err)
		default:
			got = append(got, m.Method)
		}
	}
}

func note(method string) string {
	return `{"jsonrpc":"2.0","method":"` + method + `"}`
}

// padded returns a notification of exactly n bytes.
func padded(method string, n int) string {
	s := `{"jsonrpc":"2.0","method":"` + method + `","params":{"p":""}}`
	return strings.Replace(s, `""`, `"`+strings.Repeat("x", n-len(s))+`"`, 1)
}

func TestLineReaderFraming(t *testing.T) {
	big := chunkSize*3 + 17 // longer than the read buffer
	tests := []struct {
		name  string
		input string
		max   int
		want  []string
	}{
		{"lf", note("a") + "\n" + note("b") + "\n", 0, []string{"a", "b"}},
		{"crlf", note("a") + "\r\n" + note("b") + "\r\n", 0, []string{"a", "b"}},
		{"no final newline", note("a") + "\n" + note("b"), 0, []string{"a", "b"}},
		{"empty and blank lines", "\n\r\n" + note("a") + "\n  \t\n\n" + note("b") + "\n\n", 0, []string{"a", "b"}},
		{"leading space", "  " + note("a") + "\n", 0, []string{"a"}},
		{"invalid json", "{\"jsonrpc\":\n" + note("b") + "\n", 0,
			[]string{"error: invalid JSON at offset 11: unexpected end of input", "b"}},
		{"not json at all", "hello\n" + note("b") + "\n", 0, []string{"error: invalid JSON at offset 0: unexpected character 'h'", "b"}},
		{"oversize then next", padded("big", 200) + "\n" + note("b") + "\n", 100,
			[]string{"error: message of 200 bytes exceeds the limit of 100 bytes", "b"}},
		{"at the limit", padded("a", 100) + "\r\n" + note("b") + "\n", 100, []string{"a", "b"}},
		{"long line", padded("long", big) + "\n" + note("b") + "\n", 0, []string{"long", "b"}},
		{"long line crlf at the limit", padded("long", big) + "\r\n" + note("b"), big, []string{"long", "b"}},
		{"long line over the limit", padded("long", big) + "\r\n" + note("b") + "\n", big - 1,
			[]string{fmt.Sprintf("error: message of %d bytes exceeds the limit of %d bytes", big, big-1), "b"}},
		{"long line far over the limit", padded("long", big) + "\n" + note("b") + "\n", 1000,
			[]string{fmt.Sprintf("error: message of %d bytes exceeds the limit of 1000 bytes", big), "b"}},
		// The '\r' ends a full buffer and the '\n' comes alone.
		{"crlf split at the buffer end", padded("a", chunkSize-1) + "\r\n" + note("b") + "\n", chunkSize - 1, []string{"a", "b"}},
		{"crlf split over the limit", padded("a", chunkSize-1) + "\r\n" + note("b") + "\n", chunkSize - 2,
			[]string{fmt.Sprintf("error: message of %d bytes exceeds the limit of %d bytes", chunkSize-1, chunkSize-2), "b"}},
		{"long line at eof", note("a") + "\n" + padded("long", big), 0, []string{"a", "long"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := newLineReader(strings.NewReader(tt.input), jsonrpc.Limits{MaxSize: tt.max})
			got := readAll(t, lr)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestLineReaderSkipsNonJSON(t *testing.T) {
	input := "Server v1.0 starting\n" + note("a") + "\n" +
		strings.Repeat("=", chunkSize+10) + "\n" + // a long banner
		"[1,2]\n" + // looks like JSON: reported, not skipped
		`  "str"` + "\n" + note("b") + "\n"
	lr := newLineReader(strings.NewReader(input), jsonrpc.Limits{})
	var skipped []string
	lr.nonJSON = func(line []byte) { skipped = append(skipped, string(line[:min(len(line), 8)])) }
	got := readAll(t, lr)
	want := []string{"a", "error: JSON-RPC batches are not supported", "b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if want := []string{"Server v", "========", `  "str"`}; strings.Join(skipped, "|") != strings.Join(want, "|") {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
}

func TestLineReaderMessagesOwnTheirBytes(t *testing.T) {
	lr := newLineReader(strings.NewReader(
		`{"jsonrpc":"2.0","method":"a","params":{"n":1}}`+"\n"+
			`{"jsonrpc":"2.0","method":"b","params":{"n":2}}`+"\n"), jsonrpc.Limits{})
	m1, err := lr.read()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lr.read(); err != nil {
		t.Fatal(err)
	}
	if string(m1.Params) != `{"n":1}` {
		t.Errorf("first message's params changed to %s", m1.Params)
	}
}

// endlessLine is a reader producing one line of n spaces without keeping
// it in memory.
type endlessLine struct{ n int }

var spaces = bytes.Repeat([]byte{' '}, 32<<10)

func (r *endlessLine) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], spaces)
	if r.n -= k; r.n == 0 {
		p[k-1] = '\n'
	}
	return k, nil
}

func TestLineReaderOversizeIsNotHeld(t *testing.T) {
	const size = 32 << 20
	lim := jsonrpc.Limits{MaxSize: 1 << 20}
	r := io.MultiReader(strings.NewReader("{"), &endlessLine{size}, strings.NewReader(note("b")+"\n"))
	lr := newLineReader(r, lim)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := lr.read()
	runtime.ReadMemStats(&after)
	var de *jsonrpc.DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "exceeds the limit") {
		t.Fatalf("got %v, want a too-large decode error", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*uint64(lim.MaxSize) {
		t.Errorf("reading a %d-byte line allocated %d bytes", size, alloc)
	}
	if m, err := lr.read(); err != nil || m.Method != "b" {
		t.Errorf("next line: %v, %v", m, err)
	}
}

// repeatReader yields line over and over.
type repeatReader struct {
	line []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off = (r.off + c) % len(r.line)
	}
	return n, nil
}

// The reader's own cost is the one copy of each line: whatever Decode
// allocates (the Message) comes on top.
func TestLineReaderAllocs(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}` + "\n")
	lr := newLineReader(&repeatReader{line: line}, jsonrpc.Limits{})
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := lr.read(); err != nil {
			t.Fatal(err)
		}
	})
	decodeAllocs := testing.AllocsPerRun(1000, func() {
		if _, err := jsonrpc.Decode(line[:len(line)-1], jsonrpc.Limits{}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > decodeAllocs+1 {
		t.Errorf("%.1f allocations per message, %.1f of them in Decode: want one for the line", allocs, decodeAllocs)
	}
}

// BenchmarkLineReader reads and decodes a small message, and a 64 KiB
// one, which takes the long-line path.
func BenchmarkLineReader(b *testing.B) {
	for _, bc := range []struct {
		name string
		line string
	}{
		{"small", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`},
		{"64KiB", padded("echo", 64<<10+100)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			line := []byte(bc.line + "\n")
			lr := newLineReader(&repeatReader{line: line}, jsonrpc.Limits{})
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := lr.read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// buffered says whether read can return without reading more, and its
// search does not disturb what read returns.
func TestLineReaderBuffered(t *testing.T) {
	lr := newLineReader(strings.NewReader(`{"jsonrpc":"2.0","method":"a"}`+"\n"+`{"jsonrpc":"2.0","method":"b"}`+"\n"+`{"jsonrpc":"2.0","met`), jsonrpc.Limits{})
	if lr.buffered() {
		t.Fatal("buffered before any read")
	}
	for _, want := range []string{"a", "b"} {
		m, err := lr.read()
		if err != nil || m.Method != want {
			t.Fatalf("read = %v, %v; want method %s", m, err, want)
		}
		if got, wantBuffered := lr.buffered(), want == "a"; got != wantBuffered {
			t.Fatalf("after %s: buffered = %v", want, got)
		}
	}
	if _, err := lr.read(); err == nil {
		t.Fatal("the cut last line decoded")
	}
}

// pieceReader returns data in pieces of the sizes given, cycling through
// them: a pipe whose writer is slower or faster than its reader.
type pieceReader struct {
	data   []byte
	sizes  []byte
	i      int
	errEOF bool // the last piece comes with io.EOF
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	size := len(r.data)
	if len(r.sizes) > 0 {
		size = int(r.sizes[r.i%len(r.sizes)]) + 1
		r.i++
	}
	n := copy(p[:min(len(p), size)], r.data)
	r.data = r.data[n:]
	if r.errEOF && len(r.data) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// splitLines is what a lineReader should make of input: each line
// without its line end, blank ones skipped, and with banners those that
// do not start like JSON too, those over max reported with their size.
// ok is false when the input holds a line over max that starts with more
// white space than the reader looks at before deciding it is too large.
func splitLines(input []byte, max int, banners bool) (out []string, ok bool) {
	lines := bytes.Split(input, []byte("\n"))
	for i, l := range lines {
		if i == len(lines)-1 && len(l) == 0 {
			break
		}
		l = trimCR(l)
		first := firstNonSpace(l)
		switch {
		case first == len(l):
		case banners && len(l) > max && first > max+2:
			return nil, false
		case banners && l[first] != '{' && l[first] != '[':
		case len(l) > max:
			out = append(out, fmt.Sprintf("too large: %d", len(l)))
		default:
			out = append(out, string(l))
		}
	}
	return out, true
}

// FuzzLineReader checks the framing against splitLines for any input,
// limit, chunk size and way the input is cut into reads, and that the
// lines handed out are not overwritten by what is read after them.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n\n{\"b\":2}\r\n  \nxyz"), uint16(100), uint8(64), []byte{3, 200, 7}, false, true)
	f.Add([]byte(strings.Repeat("a", 300)+"\r\n"+strings.Repeat("b", 40)+"\n"), uint16(250), uint8(32), []byte{0}, true, false)
	f.Add([]byte(strings.Repeat("x", 500)+"\n"+strings.Repeat("y", 20)+"\n"+strings.Repeat("z", 90)), uint16(1000), uint8(48), []byte{17, 255, 1}, false, false)
	f.Add([]byte("Server v1\n"+strings.Repeat("=", 400)+"\n{\"a\":1}\n  "+strings.Repeat("-", 300)), uint16(100), uint8(32), []byte{40, 9}, false, true)
	// A long banner whose start, as far as the chunk holds it, is white space.
	f.Add([]byte("{\"a\":1}\n"+strings.Repeat(" ", 40)+strings.Repeat("hello", 50)+"\n{}\n"), uint16(100), uint8(32), []byte{255}, false, true)
	f.Fuzz(func(t *testing.T, input []byte, max uint16, chunk uint8, sizes []byte, errEOF, banners bool) {
		if max == 0 || chunk < 16 {
			return
		}
		want, ok := splitLines(input, int(max), banners)
		if !ok {
			return
		}
		for _, lend := range []bool{false, true} {
			checkLines(t, input, want, int(max), chunk, sizes, errEOF, banners, lend)
		}
	})
}

// checkLines reads input as FuzzLineReader does: when lend, long lines
// are lent, and every other one given back at once (not to be checked at
// the end, as its memory is read into again).
func checkLines(t *testing.T, input []byte, want []string, max int, chunk uint8, sizes []byte, errEOF, banners, lend bool) {
	lr := newLineReader(&pieceReader{data: bytes.Clone(input), sizes: sizes, errEOF: errEOF}, jsonrpc.Limits{MaxSize: max})
	lr.chunk = int(chunk)
	if banners {
		lr.nonJSON = func([]byte) {}
	}
	if lend {
		lr.lend = &lender{}
	}
	var got []string
	var lines [][]byte // as handed out, to be checked again at the end
	var kept []string  // what they were
	given := 0
	for range len(input) + 2 {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		var de *jsonrpc.DecodeError
		switch {
		case errors.As(err, &de):
			var n int
			fmt.Sscanf(de.Error(), "message of %d bytes", &n)
			got = append(got, fmt.Sprintf("too large: %d", n))
		case err != nil:
			t.Fatalf("next: %v", err)
		case line != nil:
			got = append(got, string(line))
			if lr.lent != nil {
				if !within(line, lr.lent) {
					t.Fatalf("line %q is not in the memory lent with it", line)
				}
				b := lr.lent
				lr.lent = nil
				if given++; given%2 == 1 {
					lr.lend.put(b)
					continue
				}
			}
			lines = append(lines, line)
			kept = append(kept, string(line))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("lend %v: got %q\nwant %q", lend, got, want)
	}
	for i, l := range lines {
		if string(l) != kept[i] {
			t.Fatalf("lend %v: line %d changed to %q after later reads, was %q", lend, i, l, kept[i])
		}
	}
}

// A long line costs its own size and no more: not a part of a chunk left
// unused and a second one for its end.
func TestLineReaderLongLinesExactSize(t *testing.T) {
	line := []byte(padded("echo", 64<<10+100) + "\n")
	lr := newLineReader(&repeatReader{line: line}, jsonrpc.Limits{})
	for range 10 { // past the first chunk, and the staging buffer made
		if _, err := lr.next(); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	const n = 200
	runtime.ReadMemStats(&before)
	for range n {
		got, err := lr.next()
		if err != nil || len(got) != len(line)-1 {
			t.Fatalf("next: %d bytes, %v", len(got), err)
		}
	}
	runtime.ReadMemStats(&after)
	perLine := float64(after.TotalAlloc-before.TotalAlloc) / n
	const page = 8 << 10 // the runtime's unit for large objects
	if max := float64((len(line)+page-1)/page*page) * 1.02; perLine > max {
		t.Errorf("%.0f bytes allocated per %d-byte line, want at most %.0f", perLine, len(line), max)
	}
}

// within reports whether b lies in the memory of mem.
func within(b, mem []byte) bool {
	if len(b) == 0 || len(mem) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return start <= p && p+uintptr(len(b)) <= start+uintptr(len(mem))
}

// lentLine is the i-th line of TestLentLinesNotReusedWhileHeld: a
// notification of n bytes whose params are the byte 'a'+i%26 over and
// over, so that a line overwritten by another shows.
func lentLine(i, n int) string {
	s := `{"jsonrpc":"2.0","method":"m","params":{"p":""}}`
	fill := strings.Repeat(string(rune('a'+i%26)), n-len(s))
	return strings.Replace(s, `""`, `"`+fill+`"`, 1)
}

// A lent line's memory is read into again only once it is given back:
// messages held by other goroutines, as a gateway's answers are until
// written to their clients, keep their bytes while the reader goes on,
// and (under the race detector) no read of a held message races with a
// write of the reader.
func TestLentLinesNotReusedWhileHeld(t *testing.T) {
	const lines, workers = 400, 8
	pr, pw := io.Pipe()
	go func() {
		for i := range lines {
			n := 20 << 10
			if i%3 == 0 {
				n = 70 << 10 // and some over the room left in the chunk
			}
			if i%5 == 0 && i < lines/4 {
				// A short line pins its chunk; the chunks after the
				// last are read into again from their start.
				io.WriteString(pw, note("short")+"\n")
			}
			io.WriteString(pw, lentLine(i, n)+"\n")
		}
		pw.Close()
	}()
	lr := newLineReader(pr, jsonrpc.Limits{})
	lr.lend = &lender{}
	type held struct {
		m *jsonrpc.Message
		i int
	}
	work := make(chan held)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for h := range work {
				want := lentLine(h.i, len(h.m.Params)+len(`{"jsonrpc":"2.0","method":"m","params":}`))
				for range 3 {
					if string(h.m.Params) != want[len(`{"jsonrpc":"2.0","method":"m","params":`):len(want)-1] {
						errs <- fmt.Errorf("line %d changed while held", h.i)
						return
					}
					runtime.Gosched()
				}
				if h.m.Buffer == nil {
					errs <- fmt.Errorf("line %d of %d bytes was not lent", h.i, len(h.m.Params))
					return
				}
				buf := h.m.Buffer
				h.m.Buffer = nil
				lr.lend.put(buf) // as ClientStream.Recycle does
			}
		})
	}
	i := 0
	for {
		m, err := lr.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.Method == "short" {
			if m.Buffer != nil {
				t.Fatal("a short line was lent")
			}
			continue
		}
		work <- held{m, i}
		i++
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if i != lines {
		t.Errorf("read %d lines, want %d", i, lines)
	}
}

// Long lines read by a lending reader and given back cost no memory of
// their own: their buffers go round.
func TestLentLinesAreReused(t *testing.T) {
	if racecheck.Enabled {
		t.Skip("the race detector makes sync.Pool drop what it is given")
	}
	line := []byte(padded("echo", 64<<10+100) + "\n")
	lr := newLineReader(&repeatReader{line: line}, jsonrpc.Limits{})
	lr.lend = &lender{}
	read := func() {
		m, err := lr.read()
		if err != nil || m.Buffer == nil {
			t.Fatalf("read: %v, lent %v", err, m != nil && m.Buffer != nil)
		}
		b := m.Buffer
		m.Buffer = nil
		lr.lend.put(b)
	}
	for range 10 {
		read()
	}
	var before, after runtime.MemStats
	const n = 200
	runtime.ReadMemStats(&before)
	for range n {
		read()
	}
	runtime.ReadMemStats(&after)
	if perLine := (after.TotalAlloc - before.TotalAlloc) / n; perLine > 4<<10 {
		t.Errorf("%d bytes allocated per %d-byte line given back, want less than 4 KiB", perLine, len(line))
	}
}

// lineAtATime returns one line of data per Read at most, as a pipe does
// whose writer writes a line at a time, and counts the Reads.
type lineAtATime struct {
	data  []byte
	reads int
}

func (r *lineAtATime) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	r.reads++
	n := bytes.IndexByte(r.data, '\n') + 1
	if n == 0 {
		n = len(r.data)
	}
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// Long lines after a short one (which pins its chunk) are read whole, a
// Read each, mostly: not the start into the chunk and the rest apart.
func TestLentLinesReadWhole(t *testing.T) {
	const lines = 100
	var in bytes.Buffer
	in.WriteString(note("short") + "\n")
	for i := range lines {
		in.WriteString(lentLine(i, 64<<10+100) + "\n")
	}
	r := &lineAtATime{data: in.Bytes()}
	lr := newLineReader(r, jsonrpc.Limits{})
	lr.lend = &lender{}
	n := 0
	for {
		m, err := lr.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.Buffer != nil {
			n++
			b := m.Buffer
			m.Buffer = nil
			lr.lend.put(b)
		}
	}
	if n != lines {
		t.Fatalf("%d lines lent, want %d", n, lines)
	}
	// A chunk holds three lines and the start of a fourth, which then
	// moves to the chunk's start: 1.25 Reads a line.
	if perLine := float64(r.reads) / lines; perLine > 1.5 {
		t.Errorf("%.2f Reads a line, want at most 1.5", perLine)
	}
}

// A long line read alone (from a server answering one call at a time,
// a line per Read) is lent in the chunk it was read into, uncopied, and
// the chunks given back are read into again: neither a copy nor an
// allocation per line.
func TestLongLinesLentInTheirChunk(t *testing.T) {
	if racecheck.Enabled {
		t.Skip("the race detector makes sync.Pool drop what it is given")
	}
	const lines = 210
	var in bytes.Buffer
	for i := range lines {
		in.WriteString(lentLine(i, 64<<10+100) + "\n")
	}
	lr := newLineReader(&lineAtATime{data: in.Bytes()}, jsonrpc.Limits{})
	lr.lend = &lender{}
	read := func(i int) {
		m, err := lr.read()
		if err != nil || m.Buffer == nil {
			t.Fatalf("line %d: %v, lent %v", i, err, m != nil && m.Buffer != nil)
		}
		if cap(m.Buffer) != chunkSize || len(m.Params) == 0 || &m.Buffer[len(`{"jsonrpc":"2.0","method":"m","params":`)] != &m.Params[0] {
			t.Fatalf("line %d lent in %d bytes of memory, not in the chunk it was read into", i, cap(m.Buffer))
		}
		b := m.Buffer
		m.Buffer = nil
		lr.lend.put(b)
	}
	for i := range 10 {
		read(i)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 10; i < lines; i++ {
		read(i)
	}
	runtime.ReadMemStats(&after)
	if perLine := (after.TotalAlloc - before.TotalAlloc) / (lines - 10); perLine > 4<<10 {
		t.Errorf("%d bytes allocated per line given back, want less than 4 KiB", perLine)
	}
}

// lineEachRead returns the same line over and over, no more than one per
// Read (the rest of it when the last Read took only its start), as a pipe
// does whose writer answers one call at a time.
type lineEachRead struct {
	line []byte
	off  int
}

func (r *lineEachRead) Read(p []byte) (int, error) {
	n := copy(p, r.line[r.off:])
	r.off = (r.off + n) % len(r.line)
	return n, nil
}

// BenchmarkLentLongLinesBatched is BenchmarkLentLongLines with a line
// and a half per Read, as a pipe delivers answers that come faster than
// they are read.
func BenchmarkLentLongLinesBatched(b *testing.B) {
	line := []byte(padded("echo", 64<<10+100) + "\n")
	benchmarkLent(b, &limitedReads{r: &repeatReader{line: line}, n: len(line) * 3 / 2}, len(line))
}

// limitedReads reads no more than n bytes a Read.
type limitedReads struct {
	r io.Reader
	n int
}

func (l *limitedReads) Read(p []byte) (int, error) { return l.r.Read(p[:min(len(p), l.n)]) }

// BenchmarkLentLongLines is the reading of 64 KiB answers, one per Read,
// each lent and given back (a gateway's client): the reader's own cost
// and Decode's.
func BenchmarkLentLongLines(b *testing.B) {
	line := []byte(padded("echo", 64<<10+100) + "\n")
	benchmarkLent(b, &lineEachRead{line: line}, len(line))
}

// benchmarkLent reads lines of size bytes from r with a lending reader,
// giving each back once read.
func benchmarkLent(b *testing.B, r io.Reader, size int) {
	lr := newLineReader(r, jsonrpc.Limits{})
	lr.lend = &lender{}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		m, err := lr.read()
		if err != nil || m.Buffer == nil {
			b.Fatalf("read: %v, lent %v", err, m != nil && m.Buffer != nil)
		}
		buf := m.Buffer
		m.Buffer = nil
		lr.lend.put(buf)
	}
}

// A long line shorter than a quarter of a chunk is lent as a copy, even
// read alone: a borrower holding many such answers at once holds at most
// four times their size, not a chunk each.
func TestShorterLongLinesLentAsCopies(t *testing.T) {
	var in bytes.Buffer
	for i := range 4 {
		in.WriteString(lentLine(i, chunkSize/4-100) + "\n")
	}
	lr := newLineReader(&lineAtATime{data: in.Bytes()}, jsonrpc.Limits{})
	lr.lend = &lender{}
	for i := range 4 {
		m, err := lr.read()
		if err != nil || m.Buffer == nil {
			t.Fatalf("line %d: %v, lent %v", i, err, m != nil && m.Buffer != nil)
		}
		if cap(m.Buffer) >= chunkSize/4 {
			t.Errorf("line %d of %d bytes lent in %d bytes of memory", i, m.Size, cap(m.Buffer))
		}
	}
}
