#!/usr/bin/env bash
# egress: a step behind network.allow against the same curl straight on the host, both to one
# loopback server (bench/egress.c): the throughput of a large download (the step's path: its
# TCP to init's relay on the sandbox's loopback, the unix socket, the proxy, TCP to the
# server; splice on both hops), best of EGRESS_BENCH_ROUNDS, and the added latency of one
# new connection (median of EGRESS_BENCH_N small requests a round, each on a new
# connection, curl's time_total). Aims: ratio >= 0.8, added latency <= 1 ms.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rounds=${EGRESS_BENCH_ROUNDS:-5}
n=${EGRESS_BENCH_N:-50}
mib=${EGRESS_BENCH_MIB:-1024}
tmp=$(mktemp -d /tmp/ns-bench-egress.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
command -v curl > /dev/null || { echo "egress bench: curl is needed (ci/packages.txt installs it)" >&2; exit 1; }
source "$here/lib.sh"
benchbuild egress || exit 1
mkdir "$tmp/ws"
echo "download of $mib MiB (best of $rounds), and $n new connections a round for $rounds rounds:"
out=$("$tmp/egress" "$tmp/ws" "$mib" "$rounds" "$n")
direct=$(awk '$1 == "direct" {print $2}' <<< "$out")
proxied=$(awk '$1 == "proxied" {print $2}' <<< "$out")
ratio=$(awk '$1 == "ratio" {print $2}' <<< "$out")
read -r _ _ ld _ lp _ la <<< "$(grep '^latency' <<< "$out")"
printf '  throughput: direct %s MB/s, through the proxy %s MB/s: ratio %s (aim >= 0.8)\n' "$direct" "$proxied" "$ratio"
printf '  new connection, request and answer: direct %s ms, through the proxy %s ms: added %s ms (aim <= 1 ms)\n' "$ld" "$lp" "$la"
