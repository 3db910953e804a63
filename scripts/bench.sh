#!/usr/bin/env bash
# Runs ferry's benchmark matrix from the clone alone (Go and npm fetch the
# pinned peers): every server (ferry, the raw ceiling, go-sdk, mcp-go, the
# TypeScript SDK) driven by bench/loadgen, and every client driving the raw
# server, in both protocol eras (legacy: initialize and a session;
# 2026-07-28: stateless) wherever the implementation speaks it, over stdio
# and Streamable HTTP, with 20 B and 64 KiB messages, 1 and 16 in flight.
# Each cell reports calls/s, p50/p99/p99.9 latency, CPU per call of both
# sides, peak RSS and the CPU other processes used meanwhile. The report,
# its JSON lines and an SVG chart land in bench/results/.
#
#   scripts/bench.sh                                  the whole matrix (~8 min)
#   DURATION=300ms WARMUP=100ms COLD=0 scripts/bench.sh   a quick, noisy pass
#   ONLY='^servers:(raw|ferry):' scripts/bench.sh     a part (see bench/lib.sh)
#
# Knobs: bench/lib.sh. FERRY_BENCH_COMBINED=1 runs ferry's combined binary
# over stdio too (by default the stdio row is the echo server built with
# -tags nohttp, as a server that only speaks stdio would be built: without
# net/http and crypto/tls linked, about 2 MiB less resident code).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init bench
bench_node

say "building loadgen, ferry's echo server and client, and the peers"
go_build bench/loadgen . loadgen
go_build . ./bench/echo-server ferry-server
go_build . ./bench/echo-server ferry-server-stdio -tags nohttp
go_build bench/client . ferry-client
go_build bench/peers/raw ./server raw-server
go_build bench/peers/raw ./client raw-client
go_build bench/peers/gosdk ./server gosdk-server
go_build bench/peers/gosdk ./client gosdk-client
go_build bench/peers/mcpgo ./server mcpgo-server
go_build bench/peers/mcpgo ./client mcpgo-client
npm_peer bench/peers/ts ts

ferry_stdio=bin/ferry-server-stdio
[ "${FERRY_BENCH_COMBINED:-}" = 1 ] && ferry_stdio=bin/ferry-server
for era in legacy 2026-07-28; do
	stateless=false
	[ "$era" = legacy ] || stateless=true
	server servers raw "$era" bin/raw-server "bin/raw-server -transport http -port {PORT}"
	server servers ferry "$era" "$ferry_stdio" "bin/ferry-server -transport http -port {PORT}"
	server servers gosdk "$era" bin/gosdk-server "bin/gosdk-server -transport http -port {PORT} -stateless=$stateless"
	server servers mcpgo "$era" bin/mcpgo-server "bin/mcpgo-server -transport http -port {PORT}"
	[ "$era" != legacy ] || server servers ts "$era" "$node ts/server.mjs" "$node ts/server.mjs --transport http --port {PORT}"
done
for era in legacy 2026-07-28; do
	client raw "$era" bin/raw-client
	client ferry "$era" bin/ferry-client
	client gosdk "$era" bin/gosdk-client
	client mcpgo "$era" bin/mcpgo-client
	[ "$era" != legacy ] || client ts "$era" "$node ts/client.mjs"
done

finish "ferry benchmark: servers and clients" \
	"The TypeScript SDK (1.32.2) speaks only the legacy era, so it has no 2026-07-28 rows. go-sdk's HTTP server is stateless in the 2026-07-28 rows, which that SDK requires for the revision."
