#!/usr/bin/env bash
# Runs the benchmark harness of ../shared/bench (the wire-level load
# generator and the peer servers and clients: go-sdk, mcp-go, the
# TypeScript SDK, and `raw`, the ceiling) with ferry's echo server and
# client beside them, and keeps the report under bench/results/ named by
# date and machine.
#
#   scripts/bench.sh                       the whole matrix (~6 min)
#   ONLY='ferry' scripts/bench.sh          ferry only (see run.sh for ONLY)
#   DURATION=1s COLD=1 scripts/bench.sh    a quicker, noisier pass
#
# The harness folder is read-only, so it is copied to a temporary folder
# first; its knobs (DURATION, WARMUP, COLD, ONLY, CLIENT_PEER, ...) pass
# through.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
harness=${HARNESS:-$root/../shared/bench}
[ -d "$harness" ] || { echo "bench: no harness at $harness (set HARNESS)" >&2; exit 1; }

work=$(mktemp -d /tmp/ferry-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$harness/." "$work/"
chmod -R u+w "$work"
mkdir -p "$work/bin"

echo "bench: building ferry's echo server and client" >&2
# Static binaries (CGO_ENABLED=0), as Go servers are usually shipped: the
# dynamic loader and libc would add about 1.5 MiB of resident memory to
# a process that does not use them. The peers are built by their own
# build.sh (with cgo, Go's default on this machine).
# The stdio row runs the echo server built with -tags nohttp, as a server
# that only speaks stdio would be built: without net/http and crypto/tls
# linked, about 2 MiB less resident code. FERRY_BENCH_COMBINED=1 runs the
# combined binary over stdio too, for comparison.
CGO_ENABLED=0 go build -trimpath -o "$work/bin/ferry-server" ./bench/echo-server
CGO_ENABLED=0 go build -trimpath -tags nohttp -o "$work/bin/ferry-server-stdio" ./bench/echo-server
stdio_server=bin/ferry-server-stdio
[ "${FERRY_BENCH_COMBINED:-}" = 1 ] && stdio_server=bin/ferry-server
(cd bench/client && GOWORK=off CGO_ENABLED=0 go build -trimpath -o "$work/bin/ferry-client" .)

matrix="$work/matrix-ferry.conf"
{
	grep -v '^client' "$work/matrix.conf"
	echo "server | ferry | - | $stdio_server | bin/ferry-server -transport http -port {PORT}"
	grep '^client' "$work/matrix.conf"
	echo "client | ferry | - | bin/ferry-client"
} >"$matrix"

run_id=${RUN_ID:-$(date -u +%Y%m%dT%H%M%SZ)}
(cd "$work" && RUN_ID="$run_id" MATRIX="$matrix" ./run.sh)

host=$(hostname -s 2>/dev/null || echo host)
dest="$root/bench/results/$(date -u +%Y-%m-%d)-$host-$run_id"
mkdir -p "$root/bench/results"
cp "$work/results/$run_id.md" "$dest.md"
cp "$work/results/$run_id.jsonl" "$dest.jsonl"
{
	echo
	echo "## Machine"
	echo
	echo "- $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
	echo "- load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- $(go version)"
	echo "- ferry commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with local changes)')"
} >>"$dest.md"
echo "bench: report in ${dest#$root/}.md" >&2
