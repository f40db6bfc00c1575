#!/usr/bin/env bash
# egress: a step behind network.allow against the same curl straight on the host and through a
# plain one-hop relay (socat, TCP to TCP), all to one loopback server (bench/egress.c): the
# throughput of a large download (the step's path: its TCP to init's relay on the sandbox's
# loopback, the unix socket, the proxy, TCP to the server; splice on both hops), best of
# EGRESS_BENCH_ROUNDS, and the added latency of one new connection (median of EGRESS_BENCH_N
# small requests a round, each on a new connection, curl's time_total).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rounds=${EGRESS_BENCH_ROUNDS:-5}
n=${EGRESS_BENCH_N:-50}
mib=${EGRESS_BENCH_MIB:-1024}
tmp=$(mktemp -d /tmp/ns-bench-egress.XXXXXX)
relaypid=""
trap '[ -z "$relaypid" ] || kill "$relaypid" 2>/dev/null; rm -rf "$tmp"' EXIT
command -v curl > /dev/null || { echo "egress bench: curl is needed (ci/packages.txt installs it)" >&2; exit 1; }
if ! command -v socat > /dev/null; then
	echo "egress bench: installing socat (the one-hop relay the proxy is measured against)"
	apt-get install -y -q socat >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q socat >/dev/null 2>&1; } || true
fi
source "$here/lib.sh"
benchbuild egress || exit 1
mkdir "$tmp/ws"
relay=0
if command -v socat > /dev/null; then
	relay=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
else
	echo "SKIPPED egress against socat: socat is missing and could not be installed"
fi
echo "download of $mib MiB (best of $rounds), and $n new connections a round for $rounds rounds:"
mkfifo "$tmp/go"
"$tmp/egress" "$tmp/ws" "$mib" "$rounds" "$n" "$relay" <"$tmp/go" >"$tmp/out" &
bench=$!
exec 3>"$tmp/go"
if [ "$relay" != 0 ]; then
	for _ in $(seq 600); do grep -q '^port ' "$tmp/out" && break; sleep 0.1; done
	port=$(awk '$1 == "port" {print $2}' "$tmp/out")
	socat "TCP-LISTEN:$relay,bind=127.0.0.1,reuseaddr,fork" "TCP:127.0.0.1:$port" 2>/dev/null &
	relaypid=$!
	for _ in $(seq 600); do (exec 4<>"/dev/tcp/127.0.0.1/$relay") 2>/dev/null && break; sleep 0.1; done
	echo go >&3
fi
exec 3>&-
wait "$bench"
out=$(cat "$tmp/out")
direct=$(awk '$1 == "direct" {print $2}' <<< "$out")
proxied=$(awk '$1 == "proxied" {print $2}' <<< "$out")
ratio=$(awk '$1 == "ratio" {print $2}' <<< "$out")
read -r _ _ ld _ lp _ la <<< "$(grep '^latency' <<< "$out")"
echo "  throughput: direct $direct MB/s, through the proxy $proxied MB/s$([ "$relay" = 0 ] || echo ", through socat $(awk '$1 == "relayed" {print $2}' <<< "$out") MB/s")"
echo "  new connection, request and answer: direct $ld ms, through the proxy $lp ms"
[ "$relay" = 0 ] || goal "egress throughput vs one-hop socat" "$(awk '$1 == "relayratio" {print $2}' <<< "$out")" x '>=' 1.0
goal "egress throughput vs direct" "$ratio" x '>=' 0.8
goal "egress added latency a connection" "$la" ms '<=' 1
