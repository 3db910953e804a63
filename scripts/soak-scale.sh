#!/usr/bin/env bash
# Soaks two `ferry serve --redis` replicas behind HAProxy (as
# scripts/bench-scale.sh sets them up) while one replica in turn is
# restarted (SIGTERM, then the same command again; the first restart after
# 1.5 RESTART_EVERY, off the sampling minutes): CLIENTS clients of both
# protocol eras, each on its own connection (and, in the legacy era, its
# own session), call echo once every INTERVAL for MINUTES minutes, every
# call bounded by CALL_TIMEOUT. Each minute it records the calls answered,
# failed (by kind) and timed out, the legacy sessions lost (answered 404,
# so that the client had to initialize again), the latency, each replica's
# resident memory and Redis's used_memory. The report says whether every
# call was answered or failed with an error (none hung), whether any
# session was lost, and whether memory stayed flat after the warm-up.
#
#   scripts/soak-scale.sh                            500 clients, 30 min, a restart every 5 min
#   MINUTES=3 RESTART_EVERY=1m SAMPLE=20s scripts/soak-scale.sh   a short proof (~4 min)
#
# Knobs: CLIENTS=500 MINUTES=30 RESTART_EVERY=5m INTERVAL=1s
# CALL_TIMEOUT=10s SAMPLE=1m WARMUP_WINDOWS=1, and KEEP=1 (bench/lib.sh).
# The report and its JSON lines land in bench/results/
# (DATE-soak-scale-HOST-RUNID.{md,jsonl}).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
. bench/scale/lib.sh
CLIENTS=${CLIENTS:-500}
MINUTES=${MINUTES:-30}
RESTART_EVERY=${RESTART_EVERY:-5m}
INTERVAL=${INTERVAL:-1s}
CALL_TIMEOUT=${CALL_TIMEOUT:-10s}
SAMPLE=${SAMPLE:-1m}
WARMUP_WINDOWS=${WARMUP_WINDOWS:-1}
bench_init soak-scale
scale_debs
scale_build
redis_start

port=$("$work/bin/loadgen" freeport)
cluster_up soak -replicas 2 -haproxy -port "$port" -max-sessions $((2 * CLIENTS + 1000)) -restart-every "$RESTART_EVERY"
say "$CLIENTS clients for $MINUTES min against two replicas behind HAProxy, one restarted every $RESTART_EVERY"
dest=$(result_path)
(cd "$work" && bin/loadgen soak -url "http://127.0.0.1:$port/mcp" -clients "$CLIENTS" -duration "${MINUTES}m" \
	-interval "$INTERVAL" -call-timeout "$CALL_TIMEOUT" -sample "$SAMPLE" -out "$dest.jsonl" \
	-sample-cmd "bin/scale sample -state $CLUSTER_STATE -redis-sock $REDIS_SOCK") 2>>"$LOG"
restarts=$(grep -c 'restarted r' "$LOG" || true)
cluster_down
{
	"$work/bin/loadgen" soak-report -warmup "$WARMUP_WINDOWS" -title "ferry serve: two replicas behind HAProxy, one restarted every $RESTART_EVERY ($RUN_ID)" "$dest.jsonl"
	echo
	echo "## Restarts"
	echo
	echo "$restarts restarts, each SIGTERM, the exit (at most the drain and 5 s), the same command again, ready on /readyz:"
	echo
	grep 'restarted r\|did not exit\|restart of' "$LOG" | sed 's/^/- /' || true
	echo
	echo "## Setup"
	echo
	echo "- $(haproxy -v | head -1 | cut -d' ' -f1-3) (round-robin, checks on /readyz every 500 ms, connection failures sent to the other replica); $(redis-server --version | cut -d' ' -f1-3) on a unix socket."
	echo "- Each replica: \`ferry serve --prefix never --redis unix://… --drain 10s -- ECHO\` (ferry's echo server, stdio): a server shared by all sessions."
	echo "- Clients: bench/loadgen's wire client, one connection each, the eras taken in turn; a legacy session answered 404 is counted lost and opened again."
	machine_md
	echo "- command: \`$(basename "$0")\` with CLIENTS=$CLIENTS MINUTES=$MINUTES RESTART_EVERY=$RESTART_EVERY INTERVAL=$INTERVAL CALL_TIMEOUT=$CALL_TIMEOUT SAMPLE=$SAMPLE; whole run $(($(date +%s) - T_START)) s"
} >"$dest.md"
[ -z "${KEEP:-}" ] || say "scratch folder kept: $work (log: $LOG)"
say "report in ${dest#"$root"/}.md (and .jsonl)"
