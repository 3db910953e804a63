#!/usr/bin/env bash
# Benchmarks `ferry serve` as a gateway, from the clone alone: bench/loadgen
# drives each gateway over Streamable HTTP, in both protocol eras where the
# gateway speaks them, with the latency of every cell beside its calls/s
# (and, by default, an open-loop phase at 70 % of the closed-loop rate,
# latency measured from the intended send time):
#
#   ferry-http          ferry's echo server itself over HTTP: no gateway, the ceiling
#   ferry-serve         ferry serve --prefix never -- ECHO (a stdio server behind it)
#   ferry-serve-remote  ferry serve --prefix never http://… (ferry's HTTP echo server behind it)
#   ferry-serve-token   ferry serve with ECHO in a configuration (bench/gateway/plain.json) and
#                       callers with roles from a token file (bench/gateway/tokens.txt)
#   ferry-serve-rules   the same with four access rules (rules.json)
#   ferry-serve-view    the rules, called through a view: /views/bench/mcp, echo renamed
#                       say, one fixed argument (view.json)
#   ferry-serve-audit   the rules and an audit file (audit.json)
#   bound               bench/forward-bound in front of ECHO: the least work any
#                       gateway must do (ids rewritten, bytes passed on, nothing checked)
#   supergateway        supergateway --stdio ECHO --outputTransport streamableHttp --stateful
#   mcp-proxy           mcp-proxy -- ECHO
#
# ECHO is ferry's echo server built stdio-only. supergateway and mcp-proxy
# are pinned in bench/gateway/package.json + package-lock.json, installed
# with npm ci into the scratch folder; both are built on the TypeScript SDK
# and speak the legacy era only. CPU and memory are the gateway's with its
# children (the server behind it included). Then it measures the memory of
# idle legacy sessions held by ferry serve (IDLE_SESSIONS, default 10,000;
# 0 skips). The four policy rows (issue 34) are closed-loop only: the
# report sets each beside the row it adds one thing to, calls/s and CPU
# per call, in a table of their own. Knobs: bench/lib.sh (OPEN defaults
# to 0.7 here). The report, its JSON lines and an SVG chart land in
# bench/results/.
#
#   scripts/bench-gateway.sh                                  (~7 min)
#   DURATION=300ms WARMUP=100ms COLD=0 IDLE_SESSIONS=0 scripts/bench-gateway.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
OPEN=${OPEN:-0.7}
bench_init gateway
bench_node

say "building loadgen, ferry, its echo server and the bound; npm ci of the peers"
go_build bench/loadgen . loadgen
go_build . ./cmd/ferry ferry
go_build . ./bench/echo-server ferry-server
go_build . ./bench/echo-server ferry-server-stdio -tags nohttp
go_build . ./bench/idle-sessions idle-sessions
go_build . ./bench/forward-bound forward-bound
npm_peer bench/gateway gw

echo=bin/ferry-server-stdio
upstream=$("$work/bin/loadgen" freeport)
# The policy rows' configurations name ECHO as bin/ferry-server-stdio and
# the audit file as audit.jsonl, both in the scratch folder, where the
# gateways run.
mkdir -p "$work/policy"
cp bench/gateway/*.json bench/gateway/tokens.txt "$work/policy/"
rm -f "$work/policy/package.json" "$work/policy/package-lock.json"

# policy IMPL ERA CONFIG PATH TOOL: ferry serve with policy/CONFIG.json
# and the callers of policy/tokens.txt, called as the first of them, at
# PATH, the echo tool named TOOL there. Closed loop only (OPEN=0): the
# cost is read from the rates and CPU of the closed-loop cells.
policy() {
	OPEN=0 measure gateway "$1" "$2" http -- bin/loadgen run -url "http://127.0.0.1:{PORT}$4" -tool "$5" \
		-token-file policy/tokens.txt -cold "$COLD" \
		-spawn "bin/ferry serve --prefix never --config policy/$3.json --token-file policy/tokens.txt --addr 127.0.0.1:{PORT}"
}

for era in legacy 2026-07-28; do
	server gateway ferry-http "$era" - "bin/ferry-server -transport http -port {PORT}"
	server gateway ferry-serve "$era" - "bin/ferry serve --prefix never --addr 127.0.0.1:{PORT} -- $echo"
	policy ferry-serve-token "$era" plain /mcp echo
	policy ferry-serve-rules "$era" rules /mcp echo
	policy ferry-serve-view "$era" view /views/bench/mcp say
	policy ferry-serve-audit "$era" audit /mcp echo
	server gateway ferry-serve-remote "$era" - "bin/ferry-server -transport http -port $upstream & exec bin/ferry serve --prefix never --addr 127.0.0.1:{PORT} http://127.0.0.1:$upstream/mcp"
	server gateway bound "$era" - "bin/forward-bound -port {PORT} -- $echo"
	[ "$era" = legacy ] || continue
	server gateway supergateway "$era" - "$node gw/node_modules/supergateway/dist/index.js --stdio $echo --outputTransport streamableHttp --stateful --logLevel none --port {PORT}"
	server gateway mcp-proxy "$era" - "$node gw/node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs --host 127.0.0.1 --port {PORT} -- $echo"
done

idle=""
if [ "${IDLE_SESSIONS:-10000}" != 0 ] && selected "gateway:idle"; then
	say "idle legacy sessions held by ferry serve"
	idle=$(cd "$work" && bin/idle-sessions -ferry bin/ferry -echo "$echo" -n "${IDLE_SESSIONS:-10000}" 2>>"$LOG")
fi
# audit_md: how many records ferry-serve-audit wrote, and whether any
# holds a token of the token file (none may).
audit_md() {
	local file=$work/audit.jsonl leaks
	[ -s "$file" ] || { echo "no records (ferry-serve-audit not run)"; return; }
	leaks=$(awk '!/^#/ && NF { print $1 }' "$work/policy/tokens.txt" | grep -c -F -f - "$file" || true)
	echo "ferry-serve-audit wrote $(wc -l <"$file") records (one a call, the warm-ups' included); $leaks of them hold a token of the token file."
}
version() { "$node" -p "require('$work/gw/node_modules/$1/package.json').version" 2>/dev/null || echo '?'; }
finish "ferry serve as a gateway" "$(
	echo "## Idle legacy sessions held by ferry serve"
	echo
	echo "${idle:-not measured}"
	echo
	echo "## Notes"
	echo
	echo "- Peers: supergateway $(version supergateway), mcp-proxy $(version mcp-proxy), both on the TypeScript SDK: legacy era only."
	echo "- Two ferry serve replicas behind HAProxy against one: scripts/bench-scale.sh."
	echo "- Audit: $(audit_md)"
)"
