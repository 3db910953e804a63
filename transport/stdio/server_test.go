package stdio

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/writelog"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/go-json-experiment/json/jsontext"
)

var echoHandler = jsonrpc2.HandlerFunc(func(ctx context.Context, m *jsonrpc.Message) (any, error) {
	return m.Params, nil
})

// osPipes returns two connected server-framed streams over OS pipes,
// and a function closing the pipes.
func osPipes(t testing.TB) (a, b jsonrpc.Stream, closePipes func()) {
	r1, w1, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	a = NewServerStream(r1, w2, jsonrpc.Limits{})
	b = NewServerStream(r2, w1, jsonrpc.Limits{})
	return a, b, func() { r1.Close(); w1.Close(); r2.Close(); w2.Close() }
}

func TestServerStreamConn(t *testing.T) {
	defer checkGoroutines(t)()
	a, b, closePipes := osPipes(t)
	defer closePipes()
	ctx := context.Background()
	server := jsonrpc2.NewConn(ctx, a, &jsonrpc2.ConnOptions{Handler: echoHandler, ReplyToInvalid: true})
	client := jsonrpc2.NewConn(ctx, b, nil)
	for i := range 10 {
		params := jsontext.Value(`{"i":` + string(rune('0'+i)) + `}`)
		r, err := client.Call(ctx, "echo", params)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if string(r.Result) != string(params) {
			t.Errorf("call %d: got %s, want %s", i, r.Result, params)
		}
	}
	client.Close()
	server.Close()
}

func TestServerStreamCloseInterruptsRead(t *testing.T) {
	tests := []struct {
		name   string
		reader func(t *testing.T) (r io.Reader, release func())
		pump   bool // whether reads happen on a goroutine of the stream
	}{
		{"os pipe", func(t *testing.T) (io.Reader, func()) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			return r, func() { r.Close(); w.Close() }
		}, false},
		{"net pipe", func(t *testing.T) (io.Reader, func()) {
			r, w := net.Pipe()
			return r, func() { r.Close(); w.Close() }
		}, false},
		{"io pipe", func(t *testing.T) (io.Reader, func()) {
			r, w := io.Pipe()
			return r, func() { r.Close(); w.Close() }
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer checkGoroutines(t)()
			r, release := tt.reader(t)
			s := NewServerStream(r, io.Discard, jsonrpc.Limits{})
			if pump := s.(*serverStream).results != nil; pump != tt.pump {
				t.Errorf("reads on a goroutine of the stream: %v, want %v", pump, tt.pump)
			}
			errc := make(chan error, 1)
			go func() {
				_, err := s.Read()
				errc <- err
			}()
			s.Close()
			wantClosed(t, errc, "Read after Close")
			if _, err := s.Read(); err != jsonrpc.ErrClosed {
				t.Errorf("second Read: %v", err)
			}
			if err := s.Write(context.Background(), &jsonrpc.Message{Method: "m"}); err != jsonrpc.ErrClosed {
				t.Errorf("Write after Close: %v", err)
			}
			release()
		})
	}
}

// wantClosed waits for what a blocked call returned once it was released,
// which must be jsonrpc.ErrClosed.
func wantClosed(t *testing.T, errc <-chan error, what string) {
	t.Helper()
	select {
	case err := <-errc:
		if err != jsonrpc.ErrClosed {
			t.Errorf("%s: %v, want jsonrpc.ErrClosed", what, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still blocked", what)
	}
}

func TestServerStreamEOF(t *testing.T) {
	s := NewServerStream(strings.NewReader(note("a")+"\n"), io.Discard, jsonrpc.Limits{})
	if m, err := s.Read(); err != nil || m.Method != "a" {
		t.Fatalf("Read: %v, %v", m, err)
	}
	for range 2 {
		if _, err := s.Read(); err != io.EOF {
			t.Errorf("Read at the end: %v, want io.EOF", err)
		}
	}
	s.Close()
}

// ServerStream over the real os.Stdin of a child, a pipe nobody writes
// to: Close must still make Read return.
func TestServerStreamStdinClose(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = os.Environ()
	for k, v := range helperVars("closeread") {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdin, err := cmd.StdinPipe() // kept open, never written
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if runtime.GOOS == "linux" && !strings.Contains(string(out), "reading stdin directly") {
		t.Errorf("helper did not read its stdin pipe directly: %q", out)
	}
	if !strings.Contains(string(out), "read returned: "+jsonrpc.ErrClosed.Error()) {
		t.Errorf("helper said %q", out)
	}
}

// Requests that arrive together are answered, in order, by the goroutine
// that reads them, and their answers leave in one write.
func TestServerStreamBatchesAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, feed := net.Pipe()
		out := &writelog.Log{}
		conn := jsonrpc2.NewConn(context.Background(), NewServerStream(in, out, jsonrpc.Limits{}), &jsonrpc2.ConnOptions{Handler: echoHandler})
		var reqs, want strings.Builder
		for i := range 5 {
			fmt.Fprintf(&reqs, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":[%d]}`+"\n", i, i)
			fmt.Fprintf(&want, `{"jsonrpc":"2.0","id":%d,"result":[%d]}`+"\n", i, i)
		}
		if _, err := feed.Write([]byte(reqs.String())); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := out.Take(); len(got) != 1 || got[0] != want.String() {
			t.Errorf("answers written as %q, want one write of %q", got, want.String())
		}
		feed.Close()
		conn.Wait()
	})
}
