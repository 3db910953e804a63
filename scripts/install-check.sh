#!/usr/bin/env bash
# Installs the ferry command and builds programs on the library as a user
# would, from a module proxy, with no go.work and nothing of this
# checkout: the three published modules (the library, the agent, the
# command) as committed at HEAD are laid out as a file-system module
# proxy at the version they require of each other (RELEASING.md), in
# front of the usual proxy for everything else. It checks that
#   go install github.com/ferrymcp/ferry/cmd/ferry@latest
# builds a command that runs, and that a program after
#   go get github.com/ferrymcp/ferry        (and .../agent)
# builds. A replace directive, a placeholder version or a missing
# require in a published go.mod fails it. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

version=$(awk '$1 == "github.com/ferrymcp/ferry" { print $2; exit }' cmd/ferry/go.mod)
[ -n "$version" ] || { echo "install-check: cmd/ferry/go.mod requires no version of github.com/ferrymcp/ferry" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# These versions are made anew from HEAD at every run, so they go into a
# module cache of this run's own: one left in the usual cache by another
# run (another checkout, another HEAD) is never taken for them. The
# other modules come from the usual cache's downloads, a proxy of the
# same layout, so nothing the first step of the test command fetched is
# fetched again; -trimpath keeps their compiled packages shared with
# earlier runs, whatever folder their sources are in.
downloads=$(go env GOMODCACHE)/cache/download
go run ./interop/modproxy -repo "$root" -rev HEAD -version "$version" -out "$tmp/proxy"
export GOWORK=off
export GOPROXY="file://$tmp/proxy,file://$downloads,$(go env GOPROXY)"
export GOMODCACHE="$tmp/modcache"
export GONOSUMDB=github.com/ferrymcp/ferry
export GOFLAGS="-modcacherw -trimpath"
export GOBIN="$tmp/bin"

echo "install-check: go install github.com/ferrymcp/ferry/cmd/ferry@latest ($version from HEAD)"
go install github.com/ferrymcp/ferry/cmd/ferry@latest
"$GOBIN/ferry" --version

# try builds a program of one package on a module fetched with go get.
try() {
	local mod=$1 dir="$tmp/try-$2"
	mkdir -p "$dir"
	cat >"$dir/main.go"
	(cd "$dir" && go mod init example.com/try >/dev/null 2>&1 &&
		go get "$mod@latest" >/dev/null && go mod tidy >/dev/null && go build -o prog . && ./prog)
}

echo "install-check: a program on go get github.com/ferrymcp/ferry"
try github.com/ferrymcp/ferry library <<'GO'
package main

import (
	"context"
	"fmt"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

type in struct {
	Message string `json:"message"`
}

func main() {
	s := server.New(protocol.Implementation{Name: "try", Version: "1.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(_ context.Context, _ *server.Request, a in) (string, error) {
		return a.Message, nil
	})
	fmt.Println("library: a server with one tool")
}
GO

echo "install-check: a program on go get github.com/ferrymcp/ferry/agent"
try github.com/ferrymcp/ferry/agent agent <<'GO'
package main

import (
	"fmt"

	"github.com/ferrymcp/ferry/agent/providers"
)

func main() {
	fmt.Println("agent: providers", providers.Names())
}
GO
echo "install-check: ok"
