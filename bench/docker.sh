#!/usr/bin/env bash
# docker: per-step latency of the docker backend (sbxexec of `true` in the job's warm container,
# timed around the library call by bench/sbxstep.c) against the docker CLI's
# `docker exec -u 1000:1000 -w /workspace CONTAINER /bin/sh -c true` into a warm container made
# with the same settings, run in turns with it in the same run (median of $DOCKER_BENCH_N, 30).
# Two cases:
#   back to back   a step asked for the moment the previous one ended (the worst case: the
#                  exec the backend starts ahead for it has had no time)
#   model turn     100 ms pass before each step and each CLI run, as the model's turn does
#                  between two steps of a job (a real model takes far longer); the backend
#                  starts each step's exec ahead, during that time
# Target: docker backend <= 0.8x docker exec. Starts dockerd when none answers (see
# tests/dockerenv.sh) and stops it at the end; says SKIPPED when it cannot.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
n=${DOCKER_BENCH_N:-30}
tmp=$(mktemp -d /tmp/ns-bench-docker.XXXXXX)
source "$root/tests/dockerenv.sh"
warm=
trap '[ -n "$warm" ] && docker rm -f "$warm" >/dev/null 2>&1; docker_down; rm -rf "$tmp"' EXIT

if ! docker_up "$tmp"; then
	echo "SKIPPED docker bench: $DOCKER_WHY"
	exit 0
fi
source "$here/lib.sh"
benchbuild sbxstep || exit 1

ws=$tmp/ws
mkdir -p "$ws"
chmod 0777 "$ws"
# The peer's container: what the backend asks of the engine, said to the CLI.
warm=$(docker run -d --init --read-only --cap-drop ALL --security-opt no-new-privileges --network none \
	--memory 1g --memory-swap 1g --cpus 1 --pids-limit 256 --tmpfs /tmp:rw,nosuid,nodev,size=256m \
	--mount "type=bind,source=$ws,target=/workspace" --user 65534:65534 "$DOCKER_IMAGE" sleep 3600) || exit 1

# The peer is every docker CLI on PATH: Debian's docker.io ships one of the engine's version, a
# machine may hold a newer one first on PATH (this one has 28.2.2 in /usr/local/bin), and they
# differ in start-up time by several ms.
clis=()
declare -A seen=()
while IFS= read -r c; do
	real=$(readlink -f "$c")
	[ -n "${seen[$real]:-}" ] && continue
	seen[$real]=1
	clis+=("$c")
done < <(type -ap docker)

echo "== docker: per step, median of $n; engine $(docker version --format '{{.Server.Version}}')"
fail=0
for cli in "${clis[@]}"; do
	peer=("$cli" exec -u 1000:1000 -w /workspace "$warm" /bin/sh -c true)
	echo "-- peer: $cli exec (CLI $("$cli" version --format '{{.Client.Version}}' 2>/dev/null))"
	for mode in "back to back:-b" "model turn (100 ms idle):-i 100"; do
		label=${mode%:*} opt=${mode##*:}
		if ! out=$("$tmp/sbxstep" $opt docker "$DOCKER_IMAGE" "$ws" "$n" true "${peer[@]}"); then
			echo "$label: sbxstep failed"
			fail=1
			continue
		fi
		b=$(awk '/^backend/ {print $2}' <<<"$out") p=$(awk '/^peer/ {print $2}' <<<"$out") r=$(awk '/^ratio/ {print $2}' <<<"$out")
		printf '%-26s docker backend %7.2f ms   docker exec CLI %7.2f ms   ratio %.2fx\n' \
			"$label:" "$b" "$p" "$r"
		goal "docker backend / docker exec, $label" "$r" x '<=' 0.8
	done
done
exit $fail
