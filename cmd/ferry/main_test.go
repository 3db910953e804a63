package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

var (
	// exampleServer is examples/everything, built.
	exampleServer string
	// ferryBin is the ferry command, built from this package; or, with
	// FERRY_TEST_BIN set, that binary (to see a test fail on an older
	// ferry: FERRY_TEST_BIN=/tmp/ferry-old go test -run TestX).
	ferryBin string
	// testBin is this test binary, which serves testServer on stdio when
	// FERRY_TEST_SERVER=stdio is set.
	testBin string
)

func TestMain(m *testing.M) {
	switch os.Getenv("FERRY_TEST_SERVER") {
	case "stdio":
		serveStdio()
		return
	case "hostile":
		serveHostile()
		return
	}
	if len(os.Args) == 1 {
		// go test passes -test flags: this is a server started without
		// its FERRY_TEST_SERVER (servers do not inherit the tests'
		// environment), which must not run every test again.
		fmt.Fprintln(os.Stderr, "the test server wants FERRY_TEST_SERVER=stdio or hostile")
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "ferry-cmd-test")
	if err != nil {
		panic(err)
	}
	exampleServer = filepath.Join(dir, "everything")
	ferryBin = os.Getenv("FERRY_TEST_BIN")
	builds := [][]string{{"go", "build", "-o", exampleServer, "../../examples/everything"}}
	if ferryBin == "" {
		ferryBin = filepath.Join(dir, "ferry")
		builds = append(builds, []string{"go", "build", "-o", ferryBin, "."})
	}
	for _, b := range builds {
		if out, err := exec.Command(b[0], b[1:]...).CombinedOutput(); err != nil {
			os.Stderr.Write(out)
			panic(err)
		}
	}
	testBin, _ = os.Executable()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// serveStdio serves testServer on stdin and stdout, marking what it
// sees in the file $FERRY_TEST_MARK.
func serveStdio() {
	mark := func(s string) {
		if p := os.Getenv("FERRY_TEST_MARK"); p != "" {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				fmt.Fprintln(f, s)
				f.Close()
			}
		}
	}
	tokens := "unset"
	if _, ok := os.LookupEnv("FERRY_GATEWAY_TOKENS"); ok {
		tokens = "set"
	}
	mark("environment: FERRY_GATEWAY_TOKENS " + tokens)
	testServer(mark).Run(context.Background(), stdio.ServerStream())
}

// testServer is the server the tests drive ferry against: what
// examples/everything lacks. mark is told what happens.
func testServer(mark func(string)) *server.Server {
	// One item a page, so that --cursor has pages to turn.
	s := server.New(protocol.Implementation{Name: "test-server", Version: "1.0"}, &server.Options{PageSize: 1})
	s.AddTool(&protocol.Tool{Name: "picture", Description: "An image and a blob"},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{
				{Type: protocol.ContentImage, MIMEType: "image/png", Data: "iVBORw0KGgo="},
				{Type: protocol.ContentResource, Resource: &protocol.ResourceContents{URI: "file:///../../etc/evil.bin", MIMEType: "application/octet-stream", Blob: "AAEC"}},
			}}, nil
		})
	s.AddTool(&protocol.Tool{Name: "wait", Description: "Waits until cancelled"},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			mark("started")
			req.Progress(ctx, 1, 0, "waiting")
			select {
			case <-ctx.Done():
				mark("cancelled: " + context.Cause(ctx).Error())
				return nil, context.Cause(ctx)
			case <-time.After(15 * time.Second):
				mark("never cancelled")
				return nil, errors.New("never cancelled")
			}
		})
	return s
}

// hostile is what a hostile server puts in every string it controls:
// a window title (OSC 0), a clipboard write (OSC 52), clearing the
// screen, a cursor move, a CSI as one C1 byte, a bell and a
// right-to-left override.
const hostile = "\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[H\u009b31m\a\u202e"

// waitFor polls until cond holds, for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func fileHas(path, s string) func() bool {
	return func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), s)
	}
}
