package streamablehandler_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// TestLateNotificationIsErrClosed: a stateless request's handler that
// reports progress once its response is complete is told so with the one
// error of a closed connection, jsonrpc.ErrClosed, as it would be in a
// legacy session whose connection closed.
func TestLateNotificationIsErrClosed(t *testing.T) {
	kept := make(chan *server.Request, 1)
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&protocol.Tool{Name: "late"}, func(ctx context.Context, req *server.Request, _ jsontext.Value) (*protocol.CallToolResult, error) {
		kept <- req
		return &protocol.CallToolResult{}, nil
	})
	h := streamablehandler.New(s, &streamablehandler.Options{DisableHostCheck: true})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	v := protocol.LatestVersion
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"late","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, v)
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", v)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "late")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	r := <-kept
	if err := r.Progress(context.Background(), 1, 0, ""); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("progress after the response: %v, want jsonrpc.ErrClosed", err)
	}
}
