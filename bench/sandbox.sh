#!/usr/bin/env bash
# sandbox: per-step latency of the namespace sandbox, warm (namespaces set up once per job,
# a step is a fork and an exec) and cold (plan, namespaces, cgroup, step and teardown for
# every step; and the step of a job run with NIGHTSHIFT_SANDBOX_COLD=1, whose cgroup is made
# once at open), against bubblewrap measured in the same run. The kinds run in interleaved
# rounds so that a busy machine weighs on all of them alike; figures are medians.
# The bwrap peer does the same work: the system folders read-only, /etc, /proc, /dev, a
# tmpfs /tmp, the workspace, uid 1000, a new session, no capabilities, `/bin/sh -c true`
# (the issue's `bwrap --unshare-all ... /bin/true` is shown too). Our steps also carry
# cgroup limits (memory, cpus, pids) and the seccomp filter, which bwrap here does not.
# Docker: the docker backend's step and `docker exec`, when an engine and an image with
# /bin/sh are there (NIGHTSHIFT_BENCH_DOCKER_IMAGE, default nightshift-test:busybox).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rounds=${SANDBOX_BENCH_ROUNDS:-5}
n=${SANDBOX_BENCH_N:-40}
tmp=$(mktemp -d /tmp/ns-bench-sandbox.XXXXXX)
cid=""
cleanup() {
	if [ -n "$cid" ]; then docker rm -f "$cid" >/dev/null 2>&1 || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# The peer: installed from Debian when missing and we may (root with apt-get), as the docker bench does.
if ! command -v bwrap >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "installing bubblewrap" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >"$tmp/apt.log" 2>&1 ||
		{ apt-get update -q >>"$tmp/apt.log" 2>&1 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >>"$tmp/apt.log" 2>&1; } ||
		tail -n 3 "$tmp/apt.log" >&2
fi
if ! command -v bwrap >/dev/null; then
	echo "sandbox bench: bubblewrap (bwrap) is not installed, and could not be; it is the peer this bench compares against" >&2
	exit 1
fi

source "$here/lib.sh"
benchbuild sandbox || exit 1
ws="$tmp/ws"
mkdir -p "$ws"

sys=()
for d in usr bin sbin lib lib32 lib64 libx32; do
	if [ -L "/$d" ]; then
		sys+=(--symlink "$(readlink "/$d")" "/$d")
	elif [ -d "/$d" ]; then
		sys+=(--ro-bind "/$d" "/$d")
	fi
done
bwsh=(bwrap --unshare-all --die-with-parent "${sys[@]}" --ro-bind /etc /etc --proc /proc --dev /dev --tmpfs /tmp
	--bind "$ws" /workspace --chdir /workspace --uid 1000 --gid 1000 --new-session --cap-drop ALL /bin/sh -c true)
bwtrue=(bwrap --unshare-all --die-with-parent "${sys[@]}" --proc /proc --dev /dev /bin/true)

# The docker hook: the backend's warm step and the CLI's exec into a running container.
dimg=${NIGHTSHIFT_BENCH_DOCKER_IMAGE:-nightshift-test:busybox}
docker=""
if ! command -v docker >/dev/null || ! docker info >/dev/null 2>&1; then
	docker="SKIPPED docker: no Docker engine answers"
elif ! docker image inspect "$dimg" >/dev/null 2>&1; then
	docker="SKIPPED docker: no image $dimg (set NIGHTSHIFT_BENCH_DOCKER_IMAGE to one with /bin/sh)"
elif ! "$tmp/sandbox" docker "$dimg" "$ws" 1 true >/dev/null 2>"$tmp/derr"; then
	docker="SKIPPED docker backend: $(tail -n1 "$tmp/derr")"
fi
if [ -z "$docker" ]; then
	cid=$(docker run -d --rm --network none "$dimg" sleep 3600)
fi

echo "sandbox: $rounds rounds of $n steps of 'true' each; medians in ms"
for _ in $(seq "$rounds"); do
	"$tmp/sandbox" warm "$ws" "$n" true >>"$tmp/warm"
	"$tmp/sandbox" cold "$ws" "$n" true >>"$tmp/cold"
	"$tmp/sandbox" cold0 "$ws" "$n" true >>"$tmp/cold0"
	"$tmp/sandbox" coldstep "$ws" "$n" true >>"$tmp/coldstep"
	"$tmp/sandbox" spawn "$n" "${bwsh[@]}" >>"$tmp/bwsh"
	"$tmp/sandbox" spawn "$n" "${bwtrue[@]}" >>"$tmp/bwtrue"
	"$tmp/sandbox" none "$ws" "$n" true >>"$tmp/none"
	"$tmp/sandbox" spawn "$n" /bin/sh -c true >>"$tmp/sh"
	if [ -z "$docker" ]; then
		"$tmp/sandbox" docker "$dimg" "$ws" "$((n / 4))" true >>"$tmp/dstep" 2>"$tmp/derr" &&
			"$tmp/sandbox" spawn "$((n / 4))" docker exec "$cid" /bin/sh -c true >>"$tmp/dexec" 2>>"$tmp/derr" ||
			docker="SKIPPED docker: it failed during the run: $(tail -n1 "$tmp/derr")"
	fi
done
# A step after half a second of quiet, as between model turns: on cgroup v1, joining the
# cgroup then waits for an RCU grace period; on v2 the step is cloned into it.
"$tmp/sandbox" idle "$ws" 20 500 true >"$tmp/idle"

median() { sort -n "$1" | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
bw=$(median "$tmp/bwsh")
row() { # label file [target]
	local m; m=$(median "$2")
	local ratio; ratio=$(awk -v a="$m" -v b="$bw" 'BEGIN { printf "%.2f", a / b }')
	printf '  %-44s %8.2f ms  %6sx bwrap\n' "$1" "$m" "$ratio"
	if [ -n "${3:-}" ]; then
		goal "  $1 / bwrap" "$ratio" x '<=' "$3"
	fi
}
row "namespace, warm step" "$tmp/warm" 0.3
row "namespace, cold step (open+exec+close)" "$tmp/cold" 0.8
row "  the same without cgroup limits, as bwrap" "$tmp/cold0" 0.8
row "  a step with NIGHTSHIFT_SANDBOX_COLD=1" "$tmp/coldstep"
row "bwrap, same set-up, /bin/sh -c true" "$tmp/bwsh"
row "bwrap --unshare-all ... /bin/true" "$tmp/bwtrue"
row "none backend step" "$tmp/none"
row "plain fork+exec of /bin/sh -c true" "$tmp/sh"
row "namespace, warm step after 500 ms idle" "$tmp/idle"
if [ -z "$docker" ]; then
	row "docker backend step" "$tmp/dstep"
	row "docker exec CLI" "$tmp/dexec"
else
	echo "  $docker"
fi
echo "  cgroups here: $(stat -f -c %T /sys/fs/cgroup) at /sys/fs/cgroup"
