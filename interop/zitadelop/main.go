// Command zitadelop runs the example OpenID Provider of zitadel's OIDC
// library (github.com/zitadel/oidc/v3, its example/server packages), an
// authorization server we did not write, for the OAuth interop tests
// (../oauth_test.go): OpenID Connect discovery only (no RFC 8414
// document, no dynamic registration), the issuer with a trailing slash,
// PKCE, opaque access tokens checked by introspection, refresh tokens,
// and a login page that is a plain HTML form.
//
// The example's own main listens on every interface; this one listens on
// 127.0.0.1 only.
//
//	zitadelop PORT REDIRECT_URI[,REDIRECT_URI...]
//
// Clients: "native" (public, PKCE), "web" and "api" (secret "secret"),
// "sid1" (secret "verysecret": client credentials and token exchange);
// user test-user@localhost, password verysecure. It is a module of its
// own, outside the workspace: only this test needs its dependencies.
package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: zitadelop PORT REDIRECT_URI[,...]")
		os.Exit(2)
	}
	port, redirects := os.Args[1], strings.Split(os.Args[2], ",")
	issuer := fmt.Sprintf("http://localhost:%s/", port)
	storage.RegisterClients(
		storage.NativeClient("native", redirects...),
		storage.WebClient("web", "secret", redirects...),
		storage.WebClient("api", "secret", redirects...),
		// sid1 is the example's service user (client credentials) too:
		// a gateway's client that exchanges its callers' tokens and has
		// tokens of its own.
		storage.WebClient("sid1", "verysecret", redirects...),
	)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	router := exampleop.SetupServer(issuer, storage.NewStorage(storage.NewUserStore(issuer)), logger, false)
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("listening on", issuer)
	if err := http.Serve(l, router); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
