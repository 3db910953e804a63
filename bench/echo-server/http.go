//go:build !nohttp

package main

import (
	"net"
	"net/http"

	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

func init() {
	serveHTTP = func(port string) error {
		ln, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/mcp", streamablehandler.New(newServer(), nil))
		return http.Serve(ln, mux)
	}
}
