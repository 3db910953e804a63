package stdio

import (
	"context"
	"os"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sys/unix"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// BenchmarkStdioRoundTripStdin is BenchmarkStdioRoundTrip with the
// server's ends in blocking mode, as a launched server's os.Stdin and
// os.Stdout are: pipes (a Go or Python client) or sockets (Node makes a
// socket pair where a child's pipe is asked for). Its reads then go
// through reopen_linux.go and poll, not Go's network poller. One call at
// a time, so that every request finds the input empty, as a client that
// waits for each answer leaves it.
func BenchmarkStdioRoundTripStdin(b *testing.B) {
	for _, kind := range []struct {
		name string
		pair func(b *testing.B) [2]int
	}{
		{"pipe", func(b *testing.B) (fds [2]int) {
			if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
				b.Fatal(err)
			}
			return fds
		}},
		{"socket", func(b *testing.B) (fds [2]int) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				b.Fatal(err)
			}
			return fds
		}},
	} {
		b.Run(kind.name, func(b *testing.B) {
			in, out := kind.pair(b), kind.pair(b)
			stdin, toServer := files(b, in[0], false), files(b, in[1], true)
			fromServer, stdout := files(b, out[0], true), files(b, out[1], false)
			ctx := context.Background()
			server := jsonrpc2.NewConn(ctx, NewServerStream(stdin, stdout, jsonrpc.Limits{}), &jsonrpc2.ConnOptions{Handler: echoHandler})
			defer server.Close()
			client := jsonrpc2.NewConn(ctx, NewServerStream(fromServer, toServer, jsonrpc.Limits{}), nil)
			defer client.Close()
			params := jsontext.Value(`{"name":"echo","arguments":{"text":"hello"}}`)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := client.Call(ctx, "tools/call", params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// files makes fd a file, in non-blocking mode (Go's network poller waits
// for it, as for os.Pipe's) or not (as a launched server's standard
// streams are).
func files(b *testing.B, fd int, nonblock bool) *os.File {
	if err := unix.SetNonblock(fd, nonblock); err != nil {
		b.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "f")
	b.Cleanup(func() { f.Close() })
	return f
}
