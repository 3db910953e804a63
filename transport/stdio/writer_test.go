package stdio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func TestLineWriterConcurrent(t *testing.T) {
	const writers, each = 8, 40
	pr, pw := io.Pipe() // unbuffered: writers really queue up
	lw := newLineWriter(pw)
	// Some messages are larger than the write buffer, to go through
	// bufio's direct path between small ones.
	payload := func(w, i int) string {
		n := 10
		if i%7 == 0 {
			n = 40 << 10
		}
		return fmt.Sprintf("%d-%d-%s", w, i, strings.Repeat("x", n))
	}
	// Writers with short deadlines give up while queued; whatever the
	// others wrote must still be flushed.
	var mu sync.Mutex
	sent := map[string]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if w%4 == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(i%3)*time.Microsecond)
				}
				p := payload(w, i)
				err := lw.write(ctx, &jsonrpc.Message{Method: "m", Body: map[string]string{"p": p}})
				cancel()
				if err == nil {
					mu.Lock()
					sent[p] = true
					mu.Unlock()
				} else if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("write: %v", err)
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	got := map[string]bool{}
	lr := newLineReader(pr, jsonrpc.Limits{})
	lines := make(chan *jsonrpc.Message)
	go func() {
		for {
			m, err := lr.read()
			if err != nil {
				if err != io.EOF && err != io.ErrClosedPipe {
					t.Errorf("read: %v", err)
				}
				close(lines)
				return
			}
			lines <- m
		}
	}()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(sent) }
	timeout := time.After(10 * time.Second)
	for finished := false; !finished || len(got) < count(); {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatal("reading stopped")
			}
			var p struct {
				P string `json:"p"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil || m.Method != "m" {
				t.Fatalf("mangled message: %v", err)
			}
			if got[p.P] {
				t.Fatalf("%.10s received twice", p.P)
			}
			got[p.P] = true
		case <-done:
			finished, done = true, nil
		case <-timeout:
			t.Fatalf("received %d of %d messages: a line was left unflushed", len(got), count())
		}
	}
	pw.Close()
	for p := range sent {
		if !got[p] {
			t.Errorf("%.10s sent but not received", p)
		}
	}
}

func TestLineWriterOneLine(t *testing.T) {
	var b strings.Builder
	lw := newLineWriter(&b)
	m := &jsonrpc.Message{ID: jsonrpc.Int64ID(1), Result: jsontext.Value("{\n  \"a\": \"x\\ny\"\r\n}")}
	if err := lw.write(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{   "a": "x\ny"` + "\r " + "}}\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk on fire")
}

func TestLineWriterStickyError(t *testing.T) {
	fw := &failWriter{}
	lw := newLineWriter(fw)
	for i := range 3 {
		err := lw.write(context.Background(), &jsonrpc.Message{Method: "m"})
		if err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if fw.n != 1 {
		t.Errorf("underlying writer called %d times after failing", fw.n)
	}
}

func TestLineWriterWaitsForRoom(t *testing.T) {
	pr, pw := io.Pipe()
	lw := newLineWriter(pw)
	first := make(chan error)
	go func() { first <- lw.write(context.Background(), &jsonrpc.Message{Method: "first"}) }()
	// The first write is stuck in the pipe until it is read.
	for !lw.isFlushing() {
		time.Sleep(time.Millisecond)
	}
	// Lines queue behind it without waiting, up to maxQueued.
	if err := lw.write(context.Background(), &jsonrpc.Message{Method: "second"}); err != nil {
		t.Fatalf("queued write: %v", err)
	}
	big := &jsonrpc.Message{Method: "third", Body: map[string]string{"p": strings.Repeat("x", maxQueued)}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := lw.write(ctx, big); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("write over the queue's bound: %v, want deadline exceeded", err)
	}
	third := make(chan error)
	go func() { third <- lw.write(context.Background(), big) }()
	br := bufio.NewReaderSize(pr, 4<<20)
	for _, want := range []string{"first", "second", "third"} {
		line, err := br.ReadString('\n')
		if err != nil || !strings.Contains(line, `"method":"`+want+`"`) {
			t.Fatalf("read %.40q, %v; want %s", line, err, want)
		}
	}
	if err := <-first; err != nil {
		t.Errorf("first write: %v", err)
	}
	if err := <-third; err != nil {
		t.Errorf("third write: %v", err)
	}
	lw.close(jsonrpc.ErrClosed)
	if err := lw.write(context.Background(), &jsonrpc.Message{Method: "m"}); err != jsonrpc.ErrClosed {
		t.Errorf("write after close: %v", err)
	}
}

func (lw *lineWriter) isFlushing() bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.flushing
}

func TestLineWriterCloseReleasesWaiter(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	lw := newLineWriter(pw)
	go lw.write(context.Background(), &jsonrpc.Message{Method: "stuck"})
	for !lw.isFlushing() {
		time.Sleep(time.Millisecond)
	}
	lw.write(context.Background(), &jsonrpc.Message{Method: "queued"})
	waiting := make(chan error)
	go func() {
		waiting <- lw.write(context.Background(), &jsonrpc.Message{Method: "m", Body: strings.Repeat("x", maxQueued)})
	}()
	time.Sleep(10 * time.Millisecond)
	lw.close(jsonrpc.ErrClosed)
	wantClosed(t, waiting, "a writer waiting for room, after close")
}

// Lines that writeBuffered leaves queued go out with the next write, or
// when the reader is about to wait.
func TestLineWriterBuffered(t *testing.T) {
	var out strings.Builder
	lw := newLineWriter(&out)
	ctx := context.Background()
	lw.writeBuffered(ctx, &jsonrpc.Message{Method: "a"})
	lw.writeBuffered(ctx, &jsonrpc.Message{Method: "b"})
	if out.Len() != 0 {
		t.Fatalf("sent %q before a flush", out.String())
	}
	lw.write(ctx, &jsonrpc.Message{Method: "c"})
	want := `{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n" + `{"jsonrpc":"2.0","method":"c"}` + "\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	lw.writeBuffered(ctx, &jsonrpc.Message{Method: "d"})
	lw.flushDeferred()
	if out.String() != `{"jsonrpc":"2.0","method":"d"}`+"\n" {
		t.Errorf("flushDeferred sent %q", out.String())
	}
	out.Reset()
	lw.flushDeferred()
	if out.Len() != 0 {
		t.Errorf("a second flushDeferred sent %q", out.String())
	}
}

// lentBody is a message body in memory lent only while its Write
// runs (jsonfast.Out.RawRef), as a gateway's tool arguments are.
type lentBody struct{ raw []byte }

func (b lentBody) AppendOut(o *jsonfast.Out) error {
	o.RawRef(b.raw)
	return nil
}

func (b lentBody) AppendJSON(p []byte) ([]byte, error) { return append(p, b.raw...), nil }

// TestLineWriterLentOnlyWithinWrite: a line whose body is lent is
// written from that memory only within its Write. Queued behind another
// writer's write, or finished by a detached flusher once the pipe is
// full, it goes out as it was when its Write returned, whatever the
// memory holds after.
func TestLineWriterLentOnlyWithinWrite(t *testing.T) {
	ctx := context.Background()
	body := func() []byte { return []byte(`{"p":"` + strings.Repeat("a", 100<<10) + `"}`) }
	want := `{"jsonrpc":"2.0","method":"lent","params":` + string(body()) + "}\n"
	spoil := func(b []byte) {
		for i := 6; i < len(b)-2; i++ {
			b[i] = 'z'
		}
	}
	readLine := func(t *testing.T, br *bufio.Reader, what string, ok func(string) bool) {
		t.Helper()
		line, err := br.ReadString('\n')
		if err != nil || !ok(line) {
			t.Fatalf("read %.60q… (%d bytes), %v; want %s", line, len(line), err, what)
		}
	}
	isLent := func(line string) bool { return line == want }
	isFirst := func(line string) bool { return strings.Contains(line, `"method":"first"`) }
	t.Run("queued", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pr.Close()
		lw := newLineWriter(pw)
		first := make(chan error)
		go func() { first <- lw.write(ctx, &jsonrpc.Message{Method: "first"}) }()
		for !lw.isFlushing() {
			time.Sleep(time.Millisecond)
		}
		b := body()
		if err := lw.write(ctx, &jsonrpc.Message{Method: "lent", Body: lentBody{b}}); err != nil {
			t.Fatal(err)
		}
		spoil(b)
		br := bufio.NewReaderSize(pr, 1<<20)
		readLine(t, br, "the first line", isFirst)
		readLine(t, br, "the lent line as it was written", isLent)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("detached", func(t *testing.T) {
		pr, pw, err := os.Pipe() // 64 KiB: less than the line
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close()
		lw := newLineWriter(pw)
		b := body()
		if err := lw.write(ctx, &jsonrpc.Message{Method: "lent", Body: lentBody{b}}); err != nil {
			t.Fatal(err)
		}
		if !lw.isFlushing() {
			t.Fatal("the line was written whole: no detached flusher to test")
		}
		spoil(b)
		readLine(t, bufio.NewReaderSize(pr, 1<<20), "the lent line as it was written", isLent)
	})
	t.Run("detached behind another", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close()
		lw := newLineWriter(pw)
		// The pipe all but full, and a short line left queued (as the
		// reader leaves answers): the lent line's Write sends that
		// one first, which fills the pipe, and leaves both lines to a
		// detached flusher.
		filler := strings.Repeat("-", 64<<10-100) + "\n"
		if _, err := io.WriteString(pw, filler); err != nil {
			t.Fatal(err)
		}
		if err := lw.writeBuffered(ctx, &jsonrpc.Message{Method: "first", Body: map[string]string{"p": strings.Repeat("f", 1<<10)}}); err != nil {
			t.Fatal(err)
		}
		b := body()
		if err := lw.write(ctx, &jsonrpc.Message{Method: "lent", Body: lentBody{b}}); err != nil {
			t.Fatal(err)
		}
		if !lw.isFlushing() {
			t.Fatal("the lines were written whole: no detached flusher to test")
		}
		spoil(b)
		br := bufio.NewReaderSize(pr, 1<<20)
		readLine(t, br, "the filler", func(line string) bool { return line == filler })
		readLine(t, br, "the first line", isFirst)
		readLine(t, br, "the lent line as it was written", isLent)
	})
}
