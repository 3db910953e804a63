#!/usr/bin/env bash
# Benchmarks `ferry serve` scaled out, from the clone alone (Go, plus
# redis-server and haproxy from Debian, installed as scripts/test.sh does):
# bench/loadgen drives, over Streamable HTTP and in both protocol eras,
#
#   1-replica            one `ferry serve --redis` replica, direct: the ceiling
#   1-replica-haproxy    the same replica behind HAProxy: the balancer's cost
#   2-replicas-haproxy   two replicas sharing the Redis, behind HAProxy
#                        (round-robin, no affinity, health checks on /readyz,
#                        as deploy/haproxy/haproxy.cfg)
#
# each in front of ferry's echo server over stdio (built stdio-only), with
# 20 B and 64 KiB messages, 1 and 16 in flight: calls/s, p50/p99/p99.9,
# CPU per call of everything serving (replicas, their echo servers and
# HAProxy) and, with OPEN (default 0.7), an open-loop phase. Then:
#
#   - the Redis commands per legacy tools/call through HAProxy to two
#     replicas (Redis's INFO commandstats before and after a run, and
#     what a run three times as long adds per call);
#   - the resident memory of each replica with IDLE_SESSIONS idle legacy
#     sessions (default 10,000) opened through HAProxy, and of one replica
#     alone, with Redis's used_memory before and after.
#
# The report, its JSON lines and an SVG chart land in bench/results/
# (DATE-scale-HOST-RUNID.{md,jsonl,svg}). Knobs: bench/lib.sh, and
#
#   scripts/bench-scale.sh                  the whole run (~4 min)
#   BENCH_QUICK=1 scripts/bench-scale.sh    a quick, noisy pass (~1 min): short
#                                           phases, 1,000 idle sessions, no open loop
#   ONLY='2026' scripts/bench-scale.sh      a part ("scale:IMPL:ERA:http", "scale:redis",
#                                           "scale:idle")
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
. bench/scale/lib.sh
if [ -n "${BENCH_QUICK:-}" ]; then
	DURATION=${DURATION:-300ms} WARMUP=${WARMUP:-100ms} OPEN=${OPEN:-0} IDLE_SESSIONS=${IDLE_SESSIONS:-1000} QUIET_WAIT=${QUIET_WAIT:-0s}
fi
OPEN=${OPEN:-0.7}
COLD=${COLD:-0} # a cluster's start is not a server's cold start
IDLE_SESSIONS=${IDLE_SESSIONS:-10000}
bench_init scale
scale_debs
scale_build
go_build . ./bench/idle-sessions idle-sessions
redis_start

up="bin/scale up -ferry bin/ferry -echo bin/ferry-server-stdio -redis $REDIS_URL -port {PORT}"
for era in legacy 2026-07-28; do
	server scale 1-replica "$era" - "$up -replicas 1 -state st-1-{PORT}"
	server scale 1-replica-haproxy "$era" - "$up -replicas 1 -haproxy -state st-1h-{PORT}"
	server scale 2-replicas-haproxy "$era" - "$up -replicas 2 -haproxy -state st-2h-{PORT}"
done

# redis_per_call: two legacy runs through HAProxy to two replicas, the
# second three times as long, each counted by Redis from after the
# replicas' start to its end: the commands per call of each, and what the
# longer added per call it added (the session's fixed costs cancel out).
redis_per_call() {
	local port d
	port=$("$work/bin/loadgen" freeport)
	cluster_up redis-count -replicas 2 -haproxy -port "$port"
	for d in 1 3; do
		(cd "$work" && bin/scale commandstats -redis-sock "$REDIS_SOCK" >before-$d.txt &&
			bin/loadgen run -suite scale -impl 2-replicas-haproxy -era legacy -url "http://127.0.0.1:$port/mcp" \
				-server-pid "$CLUSTER_PID" -duration "$(awk -v d="$DURATION" -v k=$d 'BEGIN { u = d; sub(/[0-9.]+/, "", u); print (d + 0) * k u }')" \
				-warmup "$WARMUP" -out redis-run-$d.jsonl >/dev/null &&
			bin/scale commandstats -redis-sock "$REDIS_SOCK" >after-$d.txt) 2>>"$LOG"
	done
	(cd "$work" && bin/scale per-call before-1.txt after-1.txt redis-run-1.jsonl before-3.txt after-3.txt redis-run-3.jsonl) 2>>"$LOG"
	cluster_down
}

# idle N REPLICAS [-haproxy]: N idle legacy sessions opened at the
# cluster's front, each replica's memory, Redis's before and after.
idle() {
	local n=$1 replicas=$2 port redis_before
	shift 2
	port=$("$work/bin/loadgen" freeport)
	cluster_up "idle-$replicas$*" -replicas "$replicas" -max-sessions $((2 * n + 100)) -port "$port" "$@"
	redis_before=$(redis-cli -s "$REDIS_SOCK" INFO memory | tr -d '\r' | sed -n 's/^used_memory_human://p')
	(cd "$work" && bin/idle-sessions -url "http://127.0.0.1:$port" -pids "$(replica_pids)" -n "$n") 2>>"$LOG"
	echo "- Redis used_memory: $redis_before before, $(redis-cli -s "$REDIS_SOCK" INFO memory | tr -d '\r' | sed -n 's/^used_memory_human://p') after"
	cluster_down
}

per_call="not measured"
if selected "scale:redis"; then
	say "Redis commands per legacy call, two replicas behind HAProxy"
	per_call=$(redis_per_call)
fi
idle_md="not measured"
if [ "$IDLE_SESSIONS" != 0 ] && selected "scale:idle"; then
	say "$IDLE_SESSIONS idle legacy sessions: two replicas behind HAProxy, then one replica"
	idle_md="$(
		echo "Two replicas behind HAProxy (round-robin: each session's initialize reaches one replica, its notifications/initialized the other):"
		echo
		idle "$IDLE_SESSIONS" 2 -haproxy
		echo
		echo "One replica, direct:"
		echo
		idle "$IDLE_SESSIONS" 1
	)"
fi

finish "ferry serve replicas sharing Redis, behind HAProxy" "$(
	echo "## Redis commands per legacy call"
	echo
	echo "$per_call"
	echo
	echo "## Idle legacy sessions, $IDLE_SESSIONS"
	echo
	echo "$idle_md"
	echo
	echo "## Notes"
	echo
	echo "- $(haproxy -v | head -1 | cut -d' ' -f1-3); $(redis-server --version | cut -d' ' -f1-3); Redis on a unix socket, nothing persisted."
	echo "- Every replica runs \`ferry serve --prefix never --redis unix://… -- ECHO\`; the CPU and memory of a row are those of everything serving it (the replicas with their echo servers, and HAProxy)."
	echo "- Redis commands that grow with a run's length rather than its calls (the replicas' task leases, \`SET … PX\`; the subscription's health \`PING\`s) show in the marginal figure's breakdown: they are no cost of a call."
	echo "- The balancer's cost is 1-replica-haproxy against 1-replica; what a second replica adds on this machine is 2-replicas-haproxy against 1-replica-haproxy. On 2 cores shared by loadgen, HAProxy and the replicas, a second replica has no core of its own: the figure to read here is the cost, not a gain."
)"
