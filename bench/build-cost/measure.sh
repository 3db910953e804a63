#!/usr/bin/env bash
# The cold-build cost of Redis clients (issue 30 item 6): for each
# program, an empty GOCACHE in a temp folder, GOFLAGS unset, the whole
# build under /usr/bin/time -v, and every tool of it under toolexec.sh,
# which records each compile's own peak RSS and CPU. Prints a markdown
# table; the raw figures stay in the scratch folder it names.
#
#   bench/build-cost/measure.sh                  # everything (~15 CPU min)
#   FERRY_TREE=/path/to/clone bench/build-cost/measure.sh   # cmd/ferry of that tree
#   ONLY='goredis-v9.23.0|resp' bench/build-cost/measure.sh # some rows
#
# Rows: cmd/ferry (FERRY_TREE, default this clone); go-redis at every
# version the module proxy served on 2026-11-25 (GOREDIS_VERSIONS), each
# in bench/build-cost/goredis, a program making the calls gateway/shared
# makes; redigo (REDIGO_VERSION) doing the same; and resp/, a minimal
# RESP client of ~300 lines doing the same. The module cache is used
# warm: only the build is measured, not the download.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FERRY_TREE=${FERRY_TREE:-$root}
GOREDIS_VERSIONS=${GOREDIS_VERSIONS:-v9.17.3 v9.18.0 v9.19.0 v9.20.0 v9.20.1 v9.21.0 v9.22.0 v9.23.0}
REDIGO_VERSION=${REDIGO_VERSION:-v1.9.3}
ONLY=${ONLY:-}
work=$(mktemp -d /tmp/ferry-build-cost.XXXXXX)
echo "scratch: $work" >&2

# timev FILE FIELD: one field of /usr/bin/time -v's report.
timev() { sed -n "s/^\s*$2: //p" "$1"; }

# secs H:MM:SS.ss or M:SS.ss → seconds.
secs() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.1f", s }' <<<"$1"; }

# cold LABEL DIR PKG PREFIX [GOWORK]: one cold build; prints a table row.
# PREFIX selects the client's own packages in the per-compile records.
cold() {
	local label=$1 dir=$2 pkg=$3 prefix=$4 gowork=${5:-off} t=$work/${1//\//_}
	[ -z "$ONLY" ] || [[ "$label" =~ $ONLY ]] || return 0
	echo "building $label" >&2
	: >"$t.tools"
	(cd "$dir" && env -u GOFLAGS GOWORK="$gowork" GOCACHE="$t.cache" BUILD_COST_LOG="$t.tools" \
		/usr/bin/time -v -o "$t.time" go build -toolexec "$here/toolexec.sh" -o "$t.bin" "$pkg") 2>"$t.err" ||
		{ echo "build of $label failed:" >&2; cat "$t.err" "$t.time" >&2; return 1; }
	rm -rf "$t.cache"
	local user sys wall peak size top client
	user=$(timev "$t.time" 'User time (seconds)')
	sys=$(timev "$t.time" 'System time (seconds)')
	wall=$(secs "$(timev "$t.time" 'Elapsed (wall clock) time (h:mm:ss or m:ss)')")
	peak=$(timev "$t.time" 'Maximum resident set size (kbytes)')
	size=$(stat -c %s "$t.bin")
	# the largest process of the build, and the client's packages: their
	# largest compile and their CPU together
	top=$(sort -k3,3n "$t.tools" | tail -1 | awk '{ printf "%s %s: %.0f MB", $1, $2, $3 * 1.024 / 1000 }')
	client=$(awk -v p="$prefix" '$1 == "compile" && index($2, p) == 1 { if ($3 > m) m = $3; cpu += $5 + $6; n++ }
		END { if (n) printf "%d pkgs, %.0f MB, %.1f CPU s", n, m * 1.024 / 1000, cpu; else printf "-" }' "$t.tools")
	printf '| %s | %.1f | %.1f | %.0f MB | %s | %s | %.1f MiB |\n' "$label" "$(echo "$user + $sys" | bc)" "$wall" \
		"$(echo "$peak * 1.024 / 1000" | bc -l)" "$top" "$client" "$(echo "$size / 1048576" | bc -l)"
}

# variant NAME SRC MODULE@VERSION: a copy of SRC requiring that version.
variant() {
	local dst=$work/src-$1
	cp -r "$2" "$dst"
	(cd "$dst" && GOWORK=off GOFLAGS=-mod=mod go get "$3" && GOWORK=off GOFLAGS=-mod=mod go mod tidy) >>"$work/get.log" 2>&1 ||
		{ echo "go get $3 failed (see $work/get.log)" >&2; return 1; }
	echo "$dst"
}

echo "| program | CPU s (user+sys) | wall s | peak RSS (time -v) | largest process | the Redis client's packages: count, largest compile, CPU | binary |"
echo "|---|---:|---:|---:|---|---|---:|"
cold "cmd/ferry@$(git -C "$FERRY_TREE" rev-parse --short HEAD)" "$FERRY_TREE" ./cmd/ferry github.com/redis/go-redis/v9 "$FERRY_TREE/go.work"
for v in $GOREDIS_VERSIONS; do
	[ -z "$ONLY" ] || [[ "goredis-$v" =~ $ONLY ]] || continue
	cold "goredis-$v" "$(variant "goredis-$v" "$here/goredis" "github.com/redis/go-redis/v9@$v")" . github.com/redis/go-redis/v9
done
if [ -z "$ONLY" ] || [[ "redigo-$REDIGO_VERSION" =~ $ONLY ]]; then
	cold "redigo-$REDIGO_VERSION" "$(variant "redigo-$REDIGO_VERSION" "$here/redigo" "github.com/gomodule/redigo@$REDIGO_VERSION")" . github.com/gomodule/redigo
fi
cold resp "$here/resp" . main
echo
echo "$(nproc) CPUs, $(go version | awk '{print $3}'), load average at the end $(cut -d' ' -f1-3 /proc/loadavg); raw figures in $work" >&2
