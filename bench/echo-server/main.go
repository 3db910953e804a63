// Command echo-server is ferry's server for the benchmark harness in
// ../shared/bench: one tool, echo, with a string argument message,
// returning it as one text content, written the way a user of the library
// would write it (a typed tool). The tool keeps nothing of its argument
// once it has returned, so the server says so
// ([server.Options.LendToolArguments]) and its transports reuse the
// memory of each request.
//
//	go run ./bench/echo-server                          stdio
//	go run ./bench/echo-server -transport http -port N  Streamable HTTP on 127.0.0.1:N/mcp
//
// Two build tags shape the binary the way a user's own server would be:
//
//   - nohttp leaves the HTTP transport out, as in a server that only
//     speaks stdio: net/http and crypto/tls are not linked, which saves
//     about 2 MiB of resident code. scripts/bench.sh builds the stdio
//     server this way.
//   - ferryprof adds FERRY_CPUPROFILE (a CPU profile of the run). It is
//     off by default because linking runtime/pprof turns on the runtime's
//     memory profiling, whose bucket table costs up to 2 MiB of resident
//     memory under load.
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

type echoArgs struct {
	Message string `json:"message" description:"the text to echo back"`
	// Tag is not used. It is there to be the argument that the view of
	// scripts/bench-gateway.sh fixes (bench/gateway/view.json): a typed
	// tool refuses an argument it does not declare.
	Tag string `json:"tag,omitempty" description:"not used"`
}

func newServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "ferry-echo", Version: "0.1.0"}, &server.Options{LendToolArguments: true})
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echo back the message."},
		func(ctx context.Context, req *server.Request, in echoArgs) (string, error) {
			return in.Message, nil
		})
	return s
}

// Set by the files of optional features (see the package comment).
var (
	serveHTTP   func(port string) error // nil when built with nohttp
	stopProfile = func() {}
)

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

func main() {
	transport := flag.String("transport", envOr("MCP_TRANSPORT", "stdio"), "stdio or http")
	port := flag.String("port", envOr("MCP_PORT", "8080"), "HTTP port (127.0.0.1 only)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("ferry-echo: ")
	defer stopProfile()
	switch *transport {
	case "stdio":
		if err := newServer().Run(context.Background(), stdio.ServerStream()); err != nil {
			log.Print(err)
		}
	case "http":
		if serveHTTP == nil {
			log.Fatal("built with -tags nohttp: only -transport stdio")
		}
		log.Fatal(serveHTTP(*port))
	default:
		log.Fatal("-transport must be stdio or http")
	}
}
