package stdio

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ferrymcp/ferry/jsonrpc"
)

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// The reader of a reopened pipe reads what is written, reports the end of
// input, is interrupted whether or not a Read is blocked, and leaves no
// descriptor behind.
func TestPollReader(t *testing.T) {
	before := openFDs(t)
	for _, blocked := range []bool{false, true} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		g, interrupt := reopen(r)
		if g == nil {
			t.Fatal("reopen of a pipe gave nothing")
		}
		buf := make([]byte, 16)
		w.Write([]byte("hello"))
		if n, err := g.Read(buf); err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("Read = %q, %v", buf[:n], err)
		}
		if blocked {
			errc := make(chan error, 1)
			go func() {
				_, err := g.Read(buf)
				errc <- err
			}()
			time.Sleep(10 * time.Millisecond) // most likely in poll by now; either way Read must end
			interrupt()
			wantClosed(t, errc, "blocked Read after interrupt")
		} else {
			w.Close()
			if _, err := g.Read(buf); err != io.EOF {
				t.Errorf("Read at the end: %v, want io.EOF", err)
			}
			interrupt()
		}
		if _, err := g.Read(buf); err != jsonrpc.ErrClosed {
			t.Errorf("Read after interrupt: %v, want jsonrpc.ErrClosed", err)
		}
		if err := interrupt(); err != nil {
			t.Errorf("second interrupt: %v", err)
		}
		r.Close()
		w.Close()
	}
	if after := openFDs(t); after != before {
		t.Errorf("open descriptors: %d before, %d after", before, after)
	}
}

// A Read that follows one that returned a single line and emptied the
// pipe waits in poll without a read that returns EAGAIN first: with one
// call in flight every request finds the pipe empty, and that read was
// a third of the system calls per request. After a read that filled its
// buffer, or brought several lines or part of one, the read still comes
// first, as more is likely there. The wait ends here with the eventfd
// signalled (as interrupt does while a Read is blocked), so that the
// count is of one Read on this thread alone: /proc/thread-self/io counts
// the read system calls of the calling thread.
func TestPollReaderReadsOnlyWhatWaitFound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first string // written, then read into an 8-byte buffer
		reads int    // read system calls of the next Read, on an empty pipe
	}{
		{"after one line", "ab\n", 0},
		{"after a full buffer", "abcdefg\n", 1},
		{"after two lines", "a\nb\n", 1},
		{"after part of a line", "ab", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			g, interrupt := reopen(r)
			if g == nil {
				t.Fatal("reopen of a pipe gave nothing")
			}
			defer interrupt()
			p := g.(*pollReader)
			w.WriteString(tc.first)
			buf := make([]byte, 8)
			if n, err := g.Read(buf); err != nil || string(buf[:n]) != tc.first {
				t.Fatalf("Read = %q, %v", buf[:n], err)
			}
			one := [8]byte{1}
			if _, err := unix.Write(int(p.fds[1].Fd), one[:]); err != nil {
				t.Fatal(err)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			before := threadReads(t)
			overhead := threadReads(t) - before // of threadReads itself
			before = threadReads(t)
			_, err = g.Read(buf)
			reads := threadReads(t) - before - overhead
			if err != jsonrpc.ErrClosed {
				t.Errorf("Read with the eventfd signalled: %v, want jsonrpc.ErrClosed", err)
			}
			if reads != tc.reads {
				t.Errorf("read system calls: %d, want %d", reads, tc.reads)
			}
		})
	}
}

// threadReads is the count of read system calls the calling thread made.
func threadReads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/io")
	if err != nil {
		t.Skip("no /proc/thread-self/io:", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no syscr in /proc/thread-self/io: %q", b)
	return 0
}

// A server whose standard input is a stream socket in blocking mode, as
// Node (libuv) gives a child for a pipe, reads it on the caller's
// goroutine through a duplicate, and Close interrupts a blocked Read
// without a goroutine left reading behind it, as with a pipe. The
// caller's descriptor stays open and in blocking mode. A datagram
// socket, which a short read would truncate, is read as any reader.
func TestServerStreamStdinSocket(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  int
		pump bool // reads on a goroutine of the stream
	}{
		{"stream socket", unix.SOCK_STREAM, false},
		{"datagram socket", unix.SOCK_DGRAM, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fds, err := unix.Socketpair(unix.AF_UNIX, tc.typ|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			stdin := os.NewFile(uintptr(fds[0]), "stdin")
			defer stdin.Close()
			defer unix.Close(fds[1])
			done := checkGoroutines(t)
			s := NewServerStream(stdin, io.Discard, jsonrpc.Limits{})
			if pump := s.(*serverStream).results != nil; pump != tc.pump {
				t.Errorf("reads on a goroutine of the stream: %v, want %v", pump, tc.pump)
			}
			if _, err := unix.Write(fds[1], []byte(note("a")+"\n")); err != nil {
				t.Fatal(err)
			}
			if m, err := s.Read(); err != nil || m.Method != "a" {
				t.Fatalf("Read = %v, %v", m, err)
			}
			errc := make(chan error, 1)
			go func() {
				_, err := s.Read()
				errc <- err
			}()
			s.Close()
			wantClosed(t, errc, "blocked Read after Close")
			if tc.pump {
				// Its goroutine ends once its read returns.
				if _, err := unix.Write(fds[1], []byte(note("b")+"\n")); err != nil {
					t.Fatal(err)
				}
			}
			done()
			flags, err := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFL, 0)
			if err != nil || flags&unix.O_NONBLOCK != 0 {
				t.Errorf("stdin after Close: flags %#x, %v; want open, blocking", flags, err)
			}
		})
	}
}

// A server's Write does not wait in write(2) for a client that stopped
// reading, though os.Stdout is in blocking mode, be it a pipe (a Go or
// Python client) or a socket (Node's): the stream writes to a
// descriptor of its own without waiting, so that a writer finding the
// pipe full leaves the rest to the writer's detached flusher and
// returns, and the writers queued behind it give up when their context
// ends. stdout stays open and in blocking mode.
func TestServerStreamStdoutFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		pair func() ([2]int, error)
	}{
		{"pipe", func() (fds [2]int, err error) {
			err = unix.Pipe2(fds[:], unix.O_CLOEXEC)
			return fds, err
		}},
		{"socket", func() ([2]int, error) {
			return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := tc.pair()
			if err != nil {
				t.Fatal(err)
			}
			out, err := tc.pair()
			if err != nil {
				t.Fatal(err)
			}
			stdin, toServer := os.NewFile(uintptr(in[0]), "stdin"), os.NewFile(uintptr(in[1]), "to server")
			fromServer, stdout := os.NewFile(uintptr(out[0]), "from server"), os.NewFile(uintptr(out[1]), "stdout")
			defer stdin.Close()
			defer toServer.Close()
			defer fromServer.Close()
			defer stdout.Close()
			s := NewServerStream(stdin, stdout, jsonrpc.Limits{})
			done := make(chan int, 1)
			var werr error
			go func() { done <- fillStdout(s, &werr) }()
			var sent int
			select {
			case sent = <-done:
				if !errors.Is(werr, context.DeadlineExceeded) {
					t.Errorf("writes to a full stdout: %v, want context.DeadlineExceeded once it is full", werr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a Write is stuck on the full stdout")
			}
			lines := make(chan int)
			go func() { // lets the detached flusher finish
				n, sc := 0, bufio.NewScanner(fromServer)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					n++
				}
				lines <- n
			}()
			s.Close()
			flags, err := unix.FcntlInt(uintptr(out[1]), unix.F_GETFL, 0)
			if err != nil || flags&unix.O_NONBLOCK != 0 {
				t.Errorf("stdout after Close: flags %#x, %v; want open, blocking", flags, err)
			}
			stdout.Close()
			if n := <-lines; n != sent {
				t.Errorf("the client read %d lines; %d Writes succeeded", n, sent)
			}
		})
	}
}

// fillStdout writes 64 KiB messages to s until one fails (its error in
// *err) and returns how many succeeded: the pipe (1 MiB at most) or the
// socket's buffers, then the queue (maxQueued) fill up, and a writer
// waits for room until its context ends.
func fillStdout(s jsonrpc.Stream, err *error) int {
	big := &jsonrpc.Message{Method: "m", Body: map[string]string{"p": strings.Repeat("x", 64<<10)}}
	for i := range 2 * (pipeSize + maxQueued) / (64 << 10) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		*err = s.Write(ctx, big)
		cancel()
		if *err != nil {
			return i
		}
	}
	return 2 * (pipeSize + maxQueued) / (64 << 10)
}
