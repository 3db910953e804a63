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
// os.Stdout are: its reads go through the reopened descriptor and poll
// (reopen_linux.go) rather than Go's network poller. One call at a time,
// so that every request finds the pipe empty, as a client that waits
// for each answer leaves it.
func BenchmarkStdioRoundTripStdin(b *testing.B) {
	stdin, toServer := pipeFiles(b, false, true)
	fromServer, stdout := pipeFiles(b, true, false)
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
}

// pipeFiles returns the ends of a pipe, each in non-blocking mode (as
// os.Pipe makes them: Go's network poller waits for them) or not (as a
// launched server's standard streams are).
func pipeFiles(b *testing.B, rNonblock, wNonblock bool) (r, w *os.File) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	for i, nb := range []bool{rNonblock, wNonblock} {
		if err := unix.SetNonblock(fds[i], nb); err != nil {
			b.Fatal(err)
		}
	}
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	b.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}
