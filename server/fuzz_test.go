package server_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// FuzzServerDispatch feeds arbitrary input lines to a server over the
// stdio framing, after a legacy handshake. Whatever arrives, the server
// must not panic or hang, and every line that decodes as a request must
// get exactly one answer with its id.
func FuzzServerDispatch(f *testing.F) {
	for _, script := range wireScripts {
		for _, ex := range script {
			f.Add([]byte(ex.send))
		}
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + string(bytes.Repeat([]byte("x"), 1000)) + `"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sum","arguments":{"a":1e400,"b":-0}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://items/%zz"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"ask","requestState":"x.y","inputResponses":{"elicit-1":{}}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"greet","arguments":{"who":7}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"test://items/{id}"}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.ReplaceAll(line, []byte("\n"), []byte(" "))
		var want []jsonrpc.ID
		if m, err := jsonrpc.Decode(bytes.Clone(line), jsonrpc.Limits{}); err == nil && m.IsRequest() {
			want = append(want, m.ID)
		}
		const handshake = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
		in := io.MultiReader(bytes.NewReader([]byte(handshake)), bytes.NewReader(append(line, '\n')))
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := wireServer().Run(ctx, stdio.NewServerStream(in, &out, jsonrpc.Limits{})); ctx.Err() != nil {
			t.Fatalf("server hung: %v", err)
		}
		answers := map[jsonrpc.ID]int{}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			m, err := jsonrpc.Decode(bytes.Clone(sc.Bytes()), jsonrpc.Limits{})
			if err != nil {
				t.Fatalf("server wrote an invalid message %q: %v", sc.Bytes(), err)
			}
			if m.IsResponse() {
				answers[m.ID]++
			}
		}
		for _, id := range want {
			// A request that makes the server ask the client (elicitation)
			// waits for an answer that never comes; it is cancelled at
			// EOF, and a cancelled request gets no response.
			if n := answers[id]; n > 1 || (n == 0 && !bytes.Contains(line, []byte(`"ask"`))) {
				t.Errorf("request %s got %d answers; output:\n%s", id, n, out.String())
			}
		}
	})
}
