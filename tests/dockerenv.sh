# dockerenv.sh: a Docker engine and the test image for tests/e2e/docker.sh and bench/docker.sh.
# Source it, then:
#   docker_up DIR      installs docker.io and busybox-static when missing (as root, from Debian),
#                      starts dockerd when no engine answers (and remembers that it did), and
#                      imports nightshift-test:busybox: a static busybox, /bin/nsprobe built from
#                      tests/fixtures/dockerprobe.c, and a setuid-root copy /bin/nsprobe-suid.
#                      Returns 1 with DOCKER_WHY set when it cannot.
#   docker_down        stops the dockerd that docker_up started, if it did.
DOCKER_IMAGE=nightshift-test:busybox
DOCKER_SOCK=/var/run/docker.sock
DOCKER_STARTED=
DOCKER_WHY=

_engine_answers() {
	DOCKER_HOST=unix://$DOCKER_SOCK timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

docker_up() {
	local dir=$1 root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	if [ -n "${DOCKER_HOST:-}" ]; then
		case $DOCKER_HOST in
		unix://*) DOCKER_SOCK=${DOCKER_HOST#unix://} ;;
		*) DOCKER_WHY="DOCKER_HOST=$DOCKER_HOST is not a unix socket"; return 1 ;;
		esac
	fi
	if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null || [ ! -x /bin/busybox ]; then
		if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
			DOCKER_WHY="docker.io or busybox-static missing, and not root with apt-get to install them"
			return 1
		fi
		echo "installing docker.io busybox-static" >&2
		if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io busybox-static >"$dir/apt.log" 2>&1 &&
			! { apt-get update -q >>"$dir/apt.log" 2>&1 &&
				DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io busybox-static >>"$dir/apt.log" 2>&1; }; then
			DOCKER_WHY="apt-get install docker.io busybox-static failed: $(tail -n 1 "$dir/apt.log")"
			return 1
		fi
	fi
	if ! _engine_answers; then
		if [ "$(id -u)" != 0 ]; then
			DOCKER_WHY="no engine answers at unix://$DOCKER_SOCK and starting dockerd needs root"
			return 1
		fi
		if [ -n "${DOCKER_HOST:-}" ]; then
			DOCKER_WHY="no engine answers at $DOCKER_HOST"
			return 1
		fi
		dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs \
			>"$dir/dockerd.log" 2>&1 &
		DOCKER_STARTED=$!
		local i
		for i in $(seq 150); do
			_engine_answers && break
			kill -0 "$DOCKER_STARTED" 2>/dev/null || break
			sleep 0.2
		done
		if ! _engine_answers; then
			DOCKER_WHY="dockerd did not come up: $(tail -n 3 "$dir/dockerd.log" | tr '\n' ' ')"
			docker_down
			return 1
		fi
	fi
	# The image: no registry is needed, nothing is pulled.
	local img=$dir/image
	mkdir -p "$img/bin" "$img/etc" "$img/proc" "$img/sys" "$img/dev" "$img/workspace" "$img/tmp"
	chmod 0755 "$img" "$img/bin" "$img/etc"
	chmod 1777 "$img/tmp"
	cp /bin/busybox "$img/bin/busybox"
	local a
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -sf busybox "$img/bin/$a"
	done
	if ! cc -static -O2 -o "$img/bin/nsprobe" "$root/tests/fixtures/dockerprobe.c" 2>"$dir/cc.log"; then
		DOCKER_WHY="cannot build the static probe: $(head -n 3 "$dir/cc.log" | tr '\n' ' ')"
		return 1
	fi
	cp "$img/bin/nsprobe" "$img/bin/nsprobe-suid"
	chmod 0755 "$img/bin/nsprobe"
	chmod 4755 "$img/bin/nsprobe-suid"
	echo 'root:x:0:0::/:/bin/sh' >"$img/etc/passwd"
	echo 'root:x:0:' >"$img/etc/group"
	local old
	old=$(docker image inspect -f '{{.Id}}' "$DOCKER_IMAGE" 2>/dev/null)
	if ! tar --owner=0 --group=0 --numeric-owner -C "$img" -c . | docker import - "$DOCKER_IMAGE" >"$dir/import.log" 2>&1; then
		DOCKER_WHY="docker import failed: $(tail -n 1 "$dir/import.log")"
		return 1
	fi
	# the previous build of the image, unless something still uses it
	[ -n "$old" ] && [ "$old" != "$(docker image inspect -f '{{.Id}}' "$DOCKER_IMAGE" 2>/dev/null)" ] &&
		docker rmi "$old" >/dev/null 2>&1
	return 0
}

docker_down() {
	if [ -n "$DOCKER_STARTED" ]; then
		kill "$DOCKER_STARTED" 2>/dev/null
		local i
		for i in $(seq 100); do
			kill -0 "$DOCKER_STARTED" 2>/dev/null || break
			sleep 0.2
		done
		DOCKER_STARTED=
	fi
}
