# shellcheck shell=bash
# The shared part of scripts/bench-scale.sh and scripts/soak-scale.sh,
# on top of bench/lib.sh: Redis and HAProxy from Debian, one Redis for
# the run, and a cluster of `ferry serve --redis` replicas that the
# script starts itself (bench/scale's `scale up`).

# scale_debs: redis-server and haproxy, installed as scripts/test.sh does
# (apt-get, when this is root with apt); without them the run stops here.
scale_debs() {
	local d missing=
	for d in redis-server haproxy; do
		command -v "$d" >/dev/null || missing="$missing $d"
	done
	if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		say "installing$missing (apt-get)"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >>"$LOG" 2>&1
	fi
	for d in redis-server redis-cli haproxy; do
		command -v "$d" >/dev/null || { say "$d is missing: apt-get install -y redis-server haproxy"; exit 1; }
	done
}

# scale_build: the programs both scripts run, into $work/bin.
scale_build() {
	say "building loadgen, ferry, its echo server and bench/scale"
	go_build bench/loadgen . loadgen
	go_build . ./cmd/ferry ferry
	go_build . ./bench/echo-server ferry-server-stdio -tags nohttp
	go_build . ./bench/scale scale
}

# redis_start: one redis-server for the run on a unix socket in $work,
# nothing persisted; REDIS_SOCK and REDIS_URL name it. Ended on exit.
redis_start() {
	REDIS_SOCK=$work/redis.sock
	REDIS_URL=unix://$REDIS_SOCK
	redis-server --port 0 --unixsocket "$REDIS_SOCK" --save '' --appendonly no --dir "$work" >>"$LOG" 2>&1 &
	REDIS_PID=$!
	scale_pids="${scale_pids:-} $REDIS_PID"
	trap 'scale_stop' EXIT
	for _ in $(seq 200); do [ -S "$REDIS_SOCK" ] && return 0; sleep 0.05; done
	say "redis-server did not start (see the log: KEEP=1)"
	exit 1
}

# cluster_up NAME [scale up flags...]: `scale up` in the background with
# its state in $work/NAME; returns once it is ready (CLUSTER_PID is it,
# CLUSTER_STATE its folder).
cluster_up() {
	local name=$1
	shift
	CLUSTER_STATE=$work/$name
	(cd "$work" && exec bin/scale up -ferry bin/ferry -echo bin/ferry-server-stdio -redis "$REDIS_URL" -state "$CLUSTER_STATE" "$@") 2>>"$LOG" &
	CLUSTER_PID=$!
	scale_pids="${scale_pids:-} $CLUSTER_PID"
	for _ in $(seq 1200); do
		[ -e "$CLUSTER_STATE/ready" ] && return 0
		kill -0 "$CLUSTER_PID" 2>/dev/null || break
		sleep 0.05
	done
	say "the replicas did not get ready (see the log: KEEP=1)"
	exit 1
}

# cluster_down: stops the last cluster_up (its replicas and HAProxy with it).
cluster_down() {
	kill -TERM "$CLUSTER_PID" 2>/dev/null || true
	wait "$CLUSTER_PID" 2>/dev/null || true
}

# replica_pids: the pids of the cluster's replicas, comma-separated.
replica_pids() {
	awk 1 "$CLUSTER_STATE"/r*.pid | paste -sd, -
}

# scale_stop: ends what these functions started (on exit), the clusters
# started in subshells too (by the pid each wrote).
scale_stop() {
	local p
	for p in $(cat "$work"/*/scale.pid 2>/dev/null) ${scale_pids:-}; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $(cat "$work"/*/scale.pid 2>/dev/null) ${scale_pids:-}; do
		for _ in $(seq 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	done
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
