// Command echo-server is ferry's server for the benchmark harness in
// ../shared/bench: one tool, echo, with a string argument message,
// returning it as one text content, written the way a user of the library
// would write it (a typed tool).
//
//	go run ./bench/echo-server                          stdio
//	go run ./bench/echo-server -transport http -port N  Streamable HTTP on 127.0.0.1:N/mcp
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
	"github.com/ferrymcp/ferry/transport/streamable"
)

type echoArgs struct {
	Message string `json:"message" description:"the text to echo back"`
}

func newServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "ferry-echo", Version: "0.1.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echo back the message."},
		func(ctx context.Context, req *server.Request, in echoArgs) (string, error) {
			return in.Message, nil
		})
	return s
}

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
	if path := os.Getenv("FERRY_CPUPROFILE"); path != "" {
		// For profiling under the harness's load: written when stdin ends
		// (stdio) or on SIGTERM.
		f, err := os.Create(path)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
		go func() {
			c := make(chan os.Signal, 1)
			signal.Notify(c, syscall.SIGTERM, os.Interrupt)
			<-c
			pprof.StopCPUProfile()
			os.Exit(0)
		}()
	}
	log.SetFlags(0)
	log.SetPrefix("ferry-echo: ")
	switch *transport {
	case "stdio":
		if err := newServer().Run(context.Background(), stdio.ServerStream()); err != nil {
			log.Print(err)
		}
	case "http":
		ln, err := net.Listen("tcp", "127.0.0.1:"+*port)
		if err != nil {
			log.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle("/mcp", streamable.NewHandler(newServer(), nil))
		log.Fatal(http.Serve(ln, mux))
	default:
		log.Fatal("-transport must be stdio or http")
	}
}
