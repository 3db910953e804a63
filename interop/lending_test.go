package interop

// A ferry server whose tool handlers lend their arguments
// (server.Options.LendToolArguments), so that its Streamable HTTP handler
// reads each request into the body of one it is done with, driven by the
// TypeScript SDK's client: many calls in flight, every answer checked
// against its call's message (testdata/tslending.mjs).

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

func TestTSClientLendingHTTPServer(t *testing.T) {
	requireNode(t)
	nodePackageBin(t, "@modelcontextprotocol/sdk", "dist/esm/client/streamableHttp.js")
	s := server.New(protocol.Implementation{Name: "lending", Version: "1"}, &server.Options{LendToolArguments: true})
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()

	script, err := filepath.Abs(filepath.Join("testdata", "tslending.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	const calls, concurrency = 400, 16
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, script, nodeModules, ts.URL+"/mcp", strconv.Itoa(calls), strconv.Itoa(concurrency))
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tslending.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.Bytes(), stderr.Bytes())
	}
	var got struct {
		Checked    int               `json:"checked"`
		Mismatches []json.RawMessage `json:"mismatches"`
		Error      string            `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got); err != nil {
		t.Fatalf("tslending.mjs printed no summary (%v)\nstdout: %s\nstderr: %s", err, stdout.Bytes(), stderr.Bytes())
	}
	if got.Error != "" || got.Checked != calls || len(got.Mismatches) > 0 {
		t.Fatalf("%d of %d calls checked, error %q, mismatches: %s", got.Checked, calls, got.Error, got.Mismatches)
	}
}
