package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// helperEnv switches the test binary into one of the helper servers
// below, so that the client tests launch a child written in Go.
const helperEnv = "FERRY_STDIO_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

func runHelper(mode string) int {
	switch mode {
	case "greeter":
		return serveGreeter()
	case "echo":
		return serveEcho()
	case "noise":
		return serveNoise()
	case "bannerexit", "bannerlast":
		return serveBanner(mode)
	case "banner":
		fmt.Println("Starting the example server v1.2.3 ...")
		fmt.Println()
		return serveEcho()
	case "halves":
		// Answer each request line with an empty result, written in two
		// halves 100 ms apart.
		r := bufio.NewReader(os.Stdin)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return 0
			}
			var req struct{ ID json.RawMessage }
			json.Unmarshal([]byte(line), &req)
			answer := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"slow":true}}` + "\n"
			os.Stdout.WriteString(answer[:len(answer)/2])
			time.Sleep(100 * time.Millisecond)
			os.Stdout.WriteString(answer[len(answer)/2:])
		}
	case "deaf":
		// Answer one request, then stop reading for good.
		r := bufio.NewReader(os.Stdin)
		line, _ := r.ReadString('\n')
		var req struct{ ID json.RawMessage }
		json.Unmarshal([]byte(line), &req)
		os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{}}` + "\n")
		time.Sleep(time.Hour)
		return 0
	case "wrongid", "huge", "hugelast":
		// Answer every request wrongly: with its id as a string, or with
		// an answer of 64 KiB (its id first, or last as the TypeScript
		// SDK writes it).
		r := bufio.NewReader(os.Stdin)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return 0
			}
			var req struct{ ID json.RawMessage }
			json.Unmarshal([]byte(line), &req)
			big := strings.Repeat("x", 64<<10)
			switch mode {
			case "wrongid":
				os.Stdout.WriteString(`{"jsonrpc":"2.0","id":"` + string(req.ID) + `","result":{}}` + "\n")
			case "huge":
				os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"text":"` + big + `"}}` + "\n")
			default:
				os.Stdout.WriteString(`{"result":{"text":"` + big + `"},"jsonrpc":"2.0","id":` + string(req.ID) + "}\n")
			}
		}
	case "die":
		// Read one request, complain, and die while it is pending.
		bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Fprintln(os.Stderr, "starting up")
		fmt.Fprintln(os.Stderr, "fatal: the database is on fire")
		return 3
	case "closeread":
		// Close must interrupt a Read blocked on the real os.Stdin.
		s := ServerStream()
		if s.(*serverStream).results == nil {
			fmt.Fprintln(os.Stderr, "reading stdin directly")
		}
		errc := make(chan error, 1)
		go func() {
			_, err := s.Read()
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond) // let Read block; the outcome is the same if not
		s.Close()
		select {
		case err := <-errc:
			fmt.Fprintf(os.Stderr, "read returned: %v\n", err)
			return 0
		case <-time.After(5 * time.Second):
			fmt.Fprintln(os.Stderr, "read still blocked after Close")
			return 4
		}
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

// serveEcho is a small server on stdin/stdout: "echo" returns its params,
// "env" the variables named in its params, "cwd" its working directory.
func serveEcho() int {
	c := jsonrpc2.NewConn(context.Background(), ServerStream(), &jsonrpc2.ConnOptions{
		ReplyToInvalid: true,
		Handler: jsonrpc2.HandlerFunc(func(ctx context.Context, m *jsonrpc.Message) (any, error) {
			switch m.Method {
			case "echo":
				return m.Params, nil
			case "env":
				var names []string
				if err := json.Unmarshal(m.Params, &names); err != nil {
					return nil, err
				}
				vars := map[string]string{}
				for _, n := range names {
					vars[n] = os.Getenv(n)
				}
				return vars, nil
			case "cwd":
				return os.Getwd()
			}
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "no method %s", m.Method)
		}),
	})
	c.Wait()
	return 0
}

// helperCommand returns a Command that runs this test binary as the
// helper server named mode.
func helperCommand(mode string) *Command {
	return &Command{
		Path: os.Args[0],
		Args: []string{"-test.run=^$"},
		Env:  helperVars(mode),
		// Long enough for a loaded machine: the tests check that the
		// helpers exit by themselves.
		CloseTimeout: 10 * time.Second,
		TermTimeout:  2 * time.Second,
	}
}

// helperVars returns the variables that make the test binary run the
// helper mode. Under the race detector a process sleeps a second before
// exiting, unless told not to.
func helperVars(mode string) map[string]string {
	return map[string]string{helperEnv: mode, "GORACE": "atexit_sleep_ms=0"}
}

// checkGoroutines records how many goroutines run now and returns a
// function that fails the test if, after a grace period, more remain.
// Tests using it must not run in parallel.
func checkGoroutines(t testing.TB) func() {
	t.Helper()
	base := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for d := time.Millisecond; ; d = min(2*d, 50*time.Millisecond) {
			n := runtime.NumGoroutine()
			if n <= base {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Fatalf("%d goroutines left running, %d before:\n%s", n, base, buf)
			}
			time.Sleep(d)
		}
	}
}

// lineCollector is an io.Writer that hands every write (a line of the
// server's stderr) to a channel, so that tests wait for output rather
// than sleep.
type lineCollector chan string

func (c lineCollector) Write(p []byte) (int, error) {
	select {
	case c <- string(p):
	default: // never block the server
	}
	return len(p), nil
}

// waitLine returns the first line from c containing substr.
func waitLine(t *testing.T, c lineCollector, substr string) string {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case l := <-c:
			if strings.Contains(l, substr) {
				return strings.TrimSpace(l)
			}
		case <-timeout:
			t.Fatalf("no line containing %q", substr)
		}
	}
}
