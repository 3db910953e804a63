package stdio

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// A message with a long text leaves in pieces (writev(2) on a pipe, a
// Write each elsewhere) that make up the line AppendMessage gives, in
// order with the small lines around it.
func TestLineWriterReferredText(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 5000)
	msgs := []*jsonrpc.Message{
		{ID: jsonrpc.Int64ID(1), Body: &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("small")}}},
		{ID: jsonrpc.Int64ID(2), Body: &protocol.CallToolResult{Content: []protocol.Content{
			protocol.TextContent(long), protocol.TextContent("between"), protocol.TextContent(long + "!")}}},
		{ID: jsonrpc.Int64ID(3), Body: &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(long + "\n")}}},
	}
	var want bytes.Buffer
	for _, m := range msgs {
		b, err := jsonrpc.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		want.Write(append(b, '\n'))
	}
	write := func(w io.Writer) {
		lw := newLineWriter(w)
		for _, m := range msgs {
			if err := lw.write(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
	}

	var b strings.Builder
	write(&b)
	if b.String() != want.String() {
		t.Errorf("through a Writer: got %d bytes, want %d", b.Len(), want.Len())
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	got := make(chan []byte)
	go func() {
		all, _ := io.ReadAll(pr)
		got <- all
	}()
	lw := newLineWriter(pw)
	for _, m := range msgs {
		if err := lw.write(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	lw.settle(time.Minute)
	pw.Close()
	if g := <-got; !bytes.Equal(g, want.Bytes()) {
		t.Errorf("through a pipe: got %d bytes, want %d", len(g), want.Len())
	}
}
