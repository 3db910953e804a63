#!/usr/bin/env bash
# Measures ferry at an older commit and at a newer one on the same machine
# in the same run, with the same harness, and writes one table of both:
#
#   scripts/bench-compare.sh [REV [NEW]]     REV defaults to b211c63, NEW to HEAD
#
# About 11 minutes on a quiet 2-CPU machine (36 runs of 10-20 s, and the
# builds); each run first waits up to QUIET_WAIT (5 s) for the machine to
# be idle. The quick pass below takes about 6 minutes on a busy one.
#
# Each commit is checked out in a git worktree in a scratch folder. The
# harness of this clone (scripts/bench.sh, scripts/bench-gateway.sh,
# bench/lib.sh, bench/loadgen, bench/peers, bench/gateway and ferry's
# bench client) is copied into both, so that only ferry differs: the
# library, bench/echo-server, cmd/ferry and the gateway's helper programs
# are each commit's own. bench/client is the one program that calls an
# API that changed; bench/compare/<commit>/*.patch adapts it to an old
# commit (bench/compare/README.md). Then, back to back:
#
#   scripts/bench.sh at REV, then at NEW: ferry's and the raw ceiling's
#     servers and clients, both eras, stdio and HTTP, 20 B and 64 KiB, c1 and c16
#   scripts/bench-gateway.sh at REV, then at NEW: ferry serve
#
# The table (calls/s, p99 and CPU per call at both, and NEW/REV), with the
# commits and the machine, lands in bench/results/DATE-compare-HOST-RUN_ID.md
# beside the result lines of each commit (…-REV.jsonl, …-NEW.jsonl).
#
# Knobs: those of bench/lib.sh (DURATION, WARMUP, COLD, OPEN, QUIET_WAIT,
# RUN_ID, KEEP) pass through to both runs. ONLY selects cells as there;
# its default is the set above:
#   ONLY='^(servers|clients):(raw|ferry):|^gateway:ferry-serve:'
# A quick, noisy pass: DURATION=300ms WARMUP=100ms COLD=0 scripts/bench-compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ONLY=${ONLY:-'^(servers|clients):(raw|ferry):|^gateway:ferry-serve:'}
export ONLY
bench_init compare
bench_node
export FERRY_NODE=$node

old=$(git rev-parse --verify "${1:-b211c63}^{commit}")
new=$(git rev-parse --verify "${2:-HEAD}^{commit}")
old_name=$(git rev-parse --short "$old")
new_name=$(git rev-parse --short "$new")
[ "$old_name" != "$new_name" ] || { say "REV and NEW are the same commit ($old_name)"; exit 1; }

# The harness: the files of this clone (committed or not, but not ignored)
# that drive the runs and report them.
harness=(scripts/bench.sh scripts/bench-gateway.sh bench/lib.sh bench/loadgen bench/peers bench/gateway bench/client)

# checkout COMMIT DIR: a worktree of COMMIT with this clone's harness in it
# and the adapters of bench/compare/ that name COMMIT applied.
checkout() {
	local commit=$1 dir=$2 adapter p
	git worktree add --detach "$dir" "$commit" >>"$LOG" 2>&1 || { say "git worktree add $commit failed"; exit 1; }
	(cd "$dir" && rm -rf "${harness[@]}")
	git ls-files -z --cached --others --exclude-standard -- "${harness[@]}" | tar -cf - --null -T - | tar -xf - -C "$dir"
	for adapter in bench/compare/*/; do
		[[ $commit == "$(basename "$adapter")"* ]] || continue
		for p in "$adapter"*.patch; do
			patch -s -d "$dir" -p1 <"$p" >>"$LOG" 2>&1 || { say "adapter $p does not apply at $commit"; exit 1; }
			applied+=("$p")
		done
	done
}

applied=()
wt_old=$work/$old_name
wt_new=$work/$new_name
remove_worktrees() {
	git worktree remove --force "$wt_old" 2>/dev/null || true
	git worktree remove --force "$wt_new" 2>/dev/null || true
}
trap 'remove_worktrees; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
say "worktrees of $old_name and $new_name with this clone's harness"
checkout "$old" "$wt_old"
checkout "$new" "$wt_new"
go_build bench/loadgen . loadgen

# run DIR SCRIPT NAME: one of the two scripts in one worktree; its result
# lines are appended to $work/NAME.jsonl.
run() {
	local dir=$1 script=$2 name=$3 id=$RUN_ID-$3-$(basename "$2" .sh)
	say "$script at $name"
	(cd "$dir" && RUN_ID=$id KEEP= "$script") 2>&1 | sed 's/^/    /' >&2
	cat "$dir"/bench/results/*-"$id".jsonl >>"$work/$name.jsonl"
}
: >"$work/$old_name.jsonl"
: >"$work/$new_name.jsonl"
for script in scripts/bench.sh scripts/bench-gateway.sh; do
	run "$wt_old" "$script" "$old_name"
	run "$wt_new" "$script" "$new_name"
done

dest=$(result_path)
cp "$work/$old_name.jsonl" "$dest-$old_name.jsonl"
cp "$work/$new_name.jsonl" "$dest-$new_name.jsonl"
{
	"$work/bin/loadgen" compare -title "ferry at $old_name and at $new_name, same machine, same run ($RUN_ID)" \
		-labels "$old_name,$new_name" "$dest-$old_name.jsonl" "$dest-$new_name.jsonl"
	machine_md "harness: this clone at"
	echo "- measured: $old_name ($old) and $new_name ($new), each built from its own worktree with the harness of this clone; adapters applied: ${applied[*]:-none}"
	echo "- order: scripts/bench.sh at $old_name, then at $new_name; scripts/bench-gateway.sh at $old_name, then at $new_name"
	echo "- phases: warm-up $WARMUP + timed $DURATION; cold-start spawns $((COLD + 1)); open loop ${OPEN:-0} (bench.sh), ${OPEN:-0.7} (bench-gateway.sh); whole run $(($(date +%s) - T_START)) s"
	echo "- result lines: $(basename "$dest")-$old_name.jsonl, $(basename "$dest")-$new_name.jsonl"
	echo "- command: \`scripts/bench-compare.sh ${1:-b211c63} ${2:-HEAD}\` with DURATION=$DURATION WARMUP=$WARMUP COLD=$COLD ONLY=$ONLY"
} >"$dest.md"
say "report in ${dest#"$root"/}.md"
