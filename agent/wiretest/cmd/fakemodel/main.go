// Command fakemodel serves a scripted language model behind Ollama's
// OpenAI and Anthropic translation middleware (see package fakemodel), on
// the loopback interface, for trying ferry's agent by hand:
//
//	go run ./cmd/fakemodel -addr 127.0.0.1:11435
//	ferry chat --model openai/fake --base-url http://127.0.0.1:11435/v1
//	ferry chat --model anthropic/fake --base-url http://127.0.0.1:11435
//
// The model does what it is told ("call echo {\"message\":\"hi\"}"), and
// with -brain train12306 it answers "明天从北京到上海有哪些火车？" on the
// 12306 server's tools.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ferrymcp/ferry/agent/wiretest/fakemodel"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen on `ADDR` (loopback only)")
	brain := flag.String("brain", "directives", "the model's script: directives or train12306")
	flag.Parse()
	s := &fakemodel.Server{Brain: fakemodel.Directives, Model: "fake-model"}
	switch *brain {
	case "directives":
	case "train12306":
		s.Brain = fakemodel.Train12306
	default:
		fmt.Fprintln(os.Stderr, "fakemodel: -brain must be directives or train12306")
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || net.ParseIP(host) == nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintln(os.Stderr, "fakemodel: -addr must be a loopback address")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
	fmt.Printf("fake model listening: openai base URL http://%s/v1, anthropic base URL http://%s\n", l.Addr(), l.Addr())
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		<-c
		srv.Close()
	}()
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
}
