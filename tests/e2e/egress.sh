#!/usr/bin/env bash
# egress: a step with network.allow reaches only what its entries name, through the egress
# proxy, and every connection is an event. A tiny "internet" (tests/internet.py) serves HTTP
# on 127.0.0.2, 127.0.0.3 and [::1] and UDP on 127.0.0.2, logging whatever reaches it; the
# allow entries name its loopback addresses explicitly (loopback is refused otherwise).
# Each attempt is a script in the workspace run as one shell step; afterwards the servers'
# log must hold exactly the allowed requests, and each proxied attempt its event.
# NIGHTSHIFT_TEST_RESOLVE (test-only, see net/egress.c) gives names to addresses.
source "$(dirname "$0")/lib.sh"
ws="$T/ws"
mkdir -p "$ws/a"
export ASAN_OPTIONS=detect_leaks=0

# ---- the manifest is checked before anything runs ----
bad() { # NAME ENTRY-OR-YAML WANT
	printf 'version: 1\nworkspace: ws\nsandbox:\n  network: %s\nmodels: { m: { provider: scripted, replies: [ {text: x} ] } }\nworkers: { w: { model: m, instructions: x } }\njobs: { j: { worker: w } }\n' "$2" > "$T/bad.yaml"
	"$NS" validate "$T/bad.yaml" > "$T/bad.out" 2>&1
	expect_rc "validate: $1 refused" 2 $?
	expect_grep "validate: $1 says where and why" "bad\.yaml:4:[0-9]+: .*$3" "$T/bad.out"
}
bad wildcard-tld '{ allow: ["*.com"] }' "wildcard needs a domain"
bad wildcard-middle '{ allow: ["a.*.com"] }' "wildcard is only"
bad port-range '{ allow: ["example.com:99999"] }' "port must be a number from 1 to 65535"
bad cidr-bits '{ allow: ["10.0.0.1/8"] }' "bits set past its prefix"
bad cidr-prefix '{ allow: ["10.0.0.0/33"] }' "prefix length"
bad space '{ allow: ["exa mple.com"] }' "not a host name"
bad bracket '{ allow: ["[::1"] }' "IPv6 address in brackets"
bad scalar '{ allow: "example.com" }' "must be a list"
bad key '{ alow: ["example.com"] }' "alow"
bad word 'restricted' "unknown network"
cat > "$T/none.yaml" <<'YAML'
version: 1
workspace: ws
sandbox: { backend: none, network: { allow: ["pypi.org"] } }
models: { m: { provider: scripted, replies: [ {text: x} ] } }
workers: { w: { model: m, instructions: x } }
jobs: { j: { worker: w } }
YAML
"$NS" validate "$T/none.yaml" > "$T/none.out" 2>&1
expect_rc "backend none with an allowlist: refused, not run with an open network" 2 $?
expect_grep "backend none: the error says why" "none\.yaml:3:[0-9]+: job 'j': network.allow needs a sandbox" "$T/none.out"

needuserns egress
for tool in curl /usr/bin/python3; do
	if ! command -v $tool > /dev/null; then
		skip egress "$tool is missing (ci/packages.txt installs it)"
		done_tests
		exit
	fi
done

python3 "$ROOT/tests/internet.py" "$T/ports" "$T/hits" &
ipid=$!
trap 'kill $ipid 2>/dev/null; rm -rf "$T"' EXIT
waitfor 60 test -f "$T/ports"
read -r pa pb pc pd pu < "$T/ports"
: > "$T/hits"

attempts=()
add() { attempts+=("$1"); printf '#!/bin/sh\n%s\n' "$2" > "$ws/a/$1"; chmod +x "$ws/a/$1"; }
py() { add "$1" "/usr/bin/python3 -c '$2'"; }
C="curl -sS -m 10"
# what the allowlist admits
add allowed_http "$C http://127.0.0.2:$pa/allowed-http"
add allowed_connect "$C -p http://127.0.0.2:$pa/allowed-connect"
add allowed_name "$C http://api.test:$pa/allowed-name"
# what it refuses at the proxy, each with its 403
add denied_host "$C http://other.test:$pb/denied-host"
add denied_port "$C http://127.0.0.2:$pc/denied-port"
add ip_literal "$C http://127.0.0.3:$pb/ip-literal"
add connect_denied "$C -p http://127.0.0.3:$pb/connect-denied"
add rebind_loopback "$C http://evil.test:$pb/rebind"
add localhost "$C --noproxy '' http://localhost:$pa/localhost"
add metadata_name "$C http://meta.test/latest/meta-data"
add metadata_ip "$C http://169.254.169.254/latest/meta-data"
add ipv6_proxy "$C -g --noproxy '' http://[::1]:$pd/v6-proxy"
py unix_direct "import socket
s = socket.socket(socket.AF_UNIX); s.connect(\"/run/nightshift/egress.sock\")
s.sendall(b\"GET http://127.0.0.3:$pb/unix-direct HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n\")
print(s.recv(4096).decode().split(\"\\r\\n\")[0])"
# what goes around the proxy: nothing gets anywhere
add noproxy "$C --noproxy '*' http://127.0.0.2:$pa/bypass-noproxy"
add unset_vars "unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY; $C http://127.0.0.2:$pa/bypass-unset"
py raw_tcp "import socket; socket.create_connection((\"127.0.0.2\", $pa), 5).sendall(b\"GET /bypass-raw HTTP/1.0\\r\\n\\r\\n\")"
py raw_tcp_public "import socket; socket.create_connection((\"93.184.216.34\", 80), 5)"
py raw_ipv6 "import socket; socket.create_connection((\"::1\", $pd), 5).sendall(b\"GET /bypass-raw6 HTTP/1.0\\r\\n\\r\\n\")"
py raw_ipv6_public "import socket; socket.create_connection((\"2001:4860:4860::8888\", 53), 5)"
add dns_lookup "getent hosts example.org"
py udp_dns "import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for dst in ((\"127.0.0.2\", $pu), (\"8.8.8.8\", 53)):
    try: s.sendto(b\"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x07example\\x03org\\x00\\x00\\x01\\x00\\x01\", dst)
    except OSError as e: print(\"blocked:\", e)
import time; time.sleep(0.2); raise SystemExit(1)"
py packet_socket "import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0x0300)"
py raw_socket "import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)"

# exit: 0 for the allowed ones (and unix_direct, which prints the proxy's status line), else not 0
want_out() {
	case $1 in
	allowed_http) echo "hello from 127.0.0.2:$pa /allowed-http" ;;
	allowed_connect) echo "hello from 127.0.0.2:$pa /allowed-connect" ;;
	allowed_name) echo "hello from 127.0.0.2:$pa /allowed-name" ;;
	unix_direct) echo "HTTP/1.1 403 Forbidden" ;;
	esac
}
# the event each proxied attempt must leave: method host port address decision rule
want_event() {
	case $1 in
	allowed_http) echo "GET 127.0.0.2 $pa 127.0.0.2 allow 127.0.0.2:$pa" ;;
	allowed_connect) echo "CONNECT 127.0.0.2 $pa 127.0.0.2 allow 127.0.0.2:$pa" ;;
	allowed_name) echo "GET api.test $pa 127.0.0.2 allow api.test:$pa+127.0.0.2:$pa" ;;
	denied_host) echo "GET other.test $pb - deny no-entry" ;;
	denied_port) echo "GET 127.0.0.2 $pc - deny no-entry" ;;
	ip_literal) echo "GET 127.0.0.3 $pb - deny no-entry" ;;
	connect_denied) echo "CONNECT 127.0.0.3 $pb - deny no-entry" ;;
	rebind_loopback) echo "GET evil.test $pb 127.0.0.3 deny special-address:loopback" ;;
	localhost) echo "GET localhost $pa 127.0.0.1 deny special-address:loopback" ;;
	metadata_name) echo "GET meta.test 80 169.254.169.254 deny special-address:cloud-metadata" ;;
	metadata_ip) echo "GET 169.254.169.254 80 - deny no-entry" ;;
	ipv6_proxy) echo "GET ::1 $pd - deny no-entry" ;;
	unix_direct) echo "GET 127.0.0.3 $pb - deny no-entry" ;;
	esac
}

calls() {
	local first=1
	for n in "$@"; do
		[ $first = 1 ] || printf ','
		first=0
		printf '{tool_calls: [ {name: shell, arguments: {command: "/workspace/a/%s"}} ]}' "$n"
	done
}
add control_host "$C --noproxy '*' http://127.0.0.2:$pa/control-host"
main=("${attempts[@]:0:${#attempts[@]}-1}")
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
sandbox:
  timeout: 30s
  env: [ASAN_OPTIONS]
  network:
    allow: ["127.0.0.2:$pa", "api.test:$pa", "evil.test:$pb", "localhost:$pa", "meta.test", "other.example:$pb"]
models:
  m: { provider: scripted, replies: [ $(calls "${main[@]}"), {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
  h: { provider: scripted, replies: [ $(calls control_host), {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: m, instructions: x, tools: [shell], max_turns: 1000, approval: { default: allow } }
  h: { model: h, instructions: x, tools: [shell], approval: { default: allow }, sandbox: { network: host } }
jobs:
  egress: { worker: w }
  control: { worker: h }
YAML

# script, exit code, stdout (\n escaped); then one line per net_connection event
results() {
	zstd -dcq "$run/jobs/$1/events.jsonl.zst" | python3 -c '
import json, sys
name = {}
for line in sys.stdin:
    e = json.loads(line)
    if e["type"] == "decision":
        name[e["step"]] = e["arguments"]["command"].rsplit("/", 1)[-1]
    elif e["type"] == "tool_result" and e.get("tool") == "shell":
        out = e.get("stdout", "").rstrip("\n").replace("\n", "\\n")
        print("R\t%s\t%s\t%s" % (name[e["step"]], e["exit_code"], out))
    elif e["type"] == "net_connection":
        print("E\t%s\t%s %s %s %s %s %s\t%s %s %s" % (name[e["step"]], e["method"], e["host"], e["port"], e["address"] or "-",
              e["decision"], e["rule"].replace(" ", ""), e["bytes_sent"], e["bytes_received"], e["duration_ms"]))
'
}
for mode in warm cold; do
	: > "$T/hits"
	cold=0
	[ $mode = cold ] && cold=1
	mkdir -p "$T/tmp"
	: > "$T/summary"
	GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$T/summary GITHUB_OUTPUT=$T/ghout \
	TMPDIR=$T/tmp NIGHTSHIFT_SANDBOX_COLD=$cold NIGHTSHIFT_TEST_RESOLVE="api.test=127.0.0.2,other.test=127.0.0.3,evil.test=127.0.0.3,meta.test=169.254.169.254" \
		"$NS" run "$T/m.yaml" --out "$T/runs-$mode" > "$T/out" 2> "$T/err"
	rc=$?
	run=$(cat "$T/out")
	expect_rc "$mode: the run succeeds" 0 "$rc"
	[ "$rc" = 0 ] || cat "$T/err"
	expect_grep "$mode: network: host is warned about" "warning: job control uses network: host" "$T/err"
	{ results egress; results control; } > "$T/results"
	for n in "${attempts[@]}"; do
		line=$(grep -P "^R\t$n\t" "$T/results")
		code=$(cut -f3 <<< "$line")
		out=$(cut -f4 <<< "$line")
		want=$(want_out "$n")
		if [ -z "$line" ]; then
			expect_eq "$mode: $n ran" ran "not run"
		elif [ -n "$(want_event "$n")" ] && [ -z "$want" ]; then
			: # refused at the proxy: curl prints the 403's body and exits 0; the body is checked below
		elif [ -n "$want" ] || [ $n = control_host ]; then
			[ $n = control_host ] && want="hello from 127.0.0.2:$pa /control-host"
			expect_eq "$mode: $n: exit $code" "0 $want" "$code $out"
		else # a missing program (126, 127) proves nothing
			check "$mode: $n fails (exit $code, out '$out')" test "$code" != 0 -a "$code" != 126 -a "$code" != 127
		fi
		ev=$(want_event "$n")
		got=$(grep -P "^E\t$n\t" "$T/results" | cut -f3)
		if [ -n "$ev" ]; then
			expect_eq "$mode: $n: its event" "$ev" "$got"
		elif [ $n != control_host ]; then
			expect_eq "$mode: $n: no connection reached the proxy" "" "$got"
		fi
		case $n in
		denied_host|denied_port|ip_literal|rebind_loopback|localhost|metadata_*|ipv6_proxy)
			check "$mode: $n: the 403 names the rule" grep -qP "^R\t$n\t.*\t.*nightshift egress: refused by rule $(echo "$ev" | cut -d' ' -f6)" "$T/results" ;;
		esac
	done
	bytes=$(grep -P "^E\tallowed_http\t" "$T/results" | cut -f4)
	check "$mode: the allowed connection counts bytes both ways ($bytes)" test "$(cut -d' ' -f1 <<< "$bytes")" -gt 50 -a "$(cut -d' ' -f2 <<< "$bytes")" -gt 100
	sort "$T/hits" > "$T/hits.sorted"
	printf '127.0.0.2:%s %s\n' "$pa" /allowed-connect "$pa" /allowed-http "$pa" /allowed-name "$pa" /control-host | sort > "$T/hits.want"
	expect_eq "$mode: the internet saw exactly the allowed requests and the control" "$(cat "$T/hits.want")" "$(cat "$T/hits.sorted")"
	check "$mode: the run verifies" "$NS" audit "$run" --verify
	# audit --net and the Actions summary count what the events hold
	nev=$(grep -c "^E" "$T/results")
	nref=$(grep -P "^E\t" "$T/results" | grep -c " deny ")
	"$NS" audit "$run" --net > "$T/net.txt"
	expect_grep "$mode: audit --net totals" "^$nev connections: $((nev - nref)) allowed, $nref refused" "$T/net.txt"
	expect_grep "$mode: audit --net lists the rebinding" "evil\.test:$pb +127\.0\.0\.3 +deny +special-address:loop" "$T/net.txt"
	"$NS" audit "$run" --net --json --decision allow --job egress > "$T/net.json"
	expect_eq "$mode: audit --net --json --decision allow" "127.0.0.2 127.0.0.2 api.test" \
		"$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["host"] for l in open(sys.argv[1])))' "$T/net.json")"
	expect_grep "$mode: the Actions summary counts the connections" "Network: $nev connections through the egress proxy, $nref refused" "$T/summary"
	[ "$_fail" = 0 ] || { echo "$mode results:"; cat "$T/results"; }
	[ $mode = warm ] && warmrun=$run
done
# replay with the user's own manifest runs the steps again: their connections are made and recorded
# anew, and it says so
: > "$T/hits"
TMPDIR=$T/tmp NIGHTSHIFT_TEST_RESOLVE="api.test=127.0.0.2,other.test=127.0.0.3,evil.test=127.0.0.3,meta.test=169.254.169.254" \
	"$NS" replay "$warmrun" --job egress --manifest "$T/m.yaml" --out "$T/replays" > "$T/rout" 2> "$T/rerr"
rc=$?
check "replay: finishes (exit $rc)" test "$rc" = 0 -o "$rc" = 4
expect_grep "replay: says connections are recorded, not replayed" "job egress's steps reach the hosts of its network.allow again, live: their connections are recorded as new ones" "$T/rerr"
"$NS" audit "$(cat "$T/rout")" --net > "$T/rnet.txt"
expect_grep "replay: its run records the connections" "^$nev connections: $((nev - nref)) allowed, $nref refused" "$T/rnet.txt"
expect_grep "replay: the allowed requests reached the internet again" "/allowed-http" "$T/hits"
# Without --manifest the record's allow list is not taken (it is weaker than the default none).
TMPDIR=$T/tmp "$NS" replay "$warmrun" --job egress --out "$T/replays2" > /dev/null 2> "$T/rerr2"
expect_grep "replay of a record alone: its network access is not given" "WARNING: .*the record's network access is not given; replaying with network none" "$T/rerr2"
expect_eq "no egress socket folder is left" "" "$(ls "$T/tmp" | grep nightshift-egress)"

# ---- the docker backend: the same allowlist, the proxy listening in the container's loopback ----
source "$ROOT/tests/dockerenv.sh"
if ! docker_up "$T"; then
	skip egress-docker "$DOCKER_WHY"
	done_tests
	exit
fi
trap 'kill $ipid 2>/dev/null; docker_down; rm -rf "$T"' EXIT
rm -rf "$ws/a"
mkdir -p "$ws/a"
attempts=()
# busybox's wget crashes in this image; nc speaks to the proxy as a configured client would
P="nc -w 10 127.0.0.1 3128"
req() { printf "printf '%s\\r\\n\\r\\n' | $P | tail -n 1" "$1"; }
add d_allowed "$(req "GET http://127.0.0.2:$pa/docker-allowed HTTP/1.0")"
add d_allowed_connect "$(req "CONNECT 127.0.0.2:$pa HTTP/1.1\\r\\n\\r\\nGET /docker-connect HTTP/1.0")"
add d_allowed_name "$(req "GET http://api.test:$pa/docker-name HTTP/1.0")"
add d_denied_host "$(req "GET http://other.test:$pb/docker-denied-host HTTP/1.0")"
add d_denied_port "$(req "GET http://127.0.0.2:$pc/docker-denied-port HTTP/1.0")"
add d_ip_literal "$(req "CONNECT 127.0.0.3:$pb HTTP/1.1")"
add d_rebind "$(req "GET http://evil.test:$pb/docker-rebind HTTP/1.0")"
add d_metadata "$(req "GET http://meta.test/latest/meta-data HTTP/1.0")"
add d_raw_tcp "printf 'GET /docker-bypass-raw HTTP/1.0\\r\\n\\r\\n' | nc -w 3 127.0.0.2 $pa | grep -q hello"
add d_raw_public "echo x | nc -w 3 93.184.216.34 80"
add d_raw_ipv6 "printf 'GET /docker-bypass-raw6 HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ::1 $pd | grep -q hello"
add d_dns "nslookup example.org"
add d_udp "echo x | nc -u -w 1 127.0.0.2 $pu; echo x | nc -u -w 1 8.8.8.8 53; exit 1"
add d_packet "nsprobe packet"
add d_rawip "nsprobe rawip"
want_event() {
	case $1 in
	d_allowed) echo "GET 127.0.0.2 $pa 127.0.0.2 allow 127.0.0.2:$pa" ;;
	d_allowed_connect) echo "CONNECT 127.0.0.2 $pa 127.0.0.2 allow 127.0.0.2:$pa" ;;
	d_allowed_name) echo "GET api.test $pa 127.0.0.2 allow api.test:$pa+127.0.0.2:$pa" ;;
	d_denied_host) echo "GET other.test $pb - deny no-entry" ;;
	d_denied_port) echo "GET 127.0.0.2 $pc - deny no-entry" ;;
	d_ip_literal) echo "CONNECT 127.0.0.3 $pb - deny no-entry" ;;
	d_rebind) echo "GET evil.test $pb 127.0.0.3 deny special-address:loopback" ;;
	d_metadata) echo "GET meta.test 80 169.254.169.254 deny special-address:cloud-metadata" ;;
	esac
}
cat > "$T/d.yaml" <<YAML
version: 1
workspace: ws
sandbox:
  backend: docker
  image: $DOCKER_IMAGE
  timeout: 30s
  network:
    allow: ["127.0.0.2:$pa", "api.test:$pa", "evil.test:$pb", "meta.test"]
models:
  m: { provider: scripted, replies: [ $(calls "${attempts[@]}"), {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  w: { model: m, instructions: x, tools: [shell], max_turns: 1000, approval: { default: allow } }
jobs:
  egress: { worker: w }
YAML
: > "$T/hits"
# The steps run as uid 1000 (sandbox.uid unset): their workspace is theirs, as run checks first.
[ "$(id -u)" = 0 ] && chown -R 1000:1000 "$T/ws"
TMPDIR=$T/tmp NIGHTSHIFT_TEST_RESOLVE="api.test=127.0.0.2,other.test=127.0.0.3,evil.test=127.0.0.3,meta.test=169.254.169.254" \
	"$NS" run "$T/d.yaml" --out "$T/runs-docker" > "$T/out" 2> "$T/err"
rc=$?
run=$(cat "$T/out")
expect_rc "docker: the run succeeds" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
results egress > "$T/results"
for n in "${attempts[@]}"; do
	line=$(grep -P "^R\t$n\t" "$T/results")
	code=$(cut -f3 <<< "$line")
	out=$(cut -f4 <<< "$line")
	case $n in
	d_allowed) expect_eq "docker: $n" "0 hello from 127.0.0.2:$pa /docker-allowed" "$code $out" ;;
	d_allowed_connect) expect_eq "docker: $n" "0 hello from 127.0.0.2:$pa /docker-connect" "$code $out" ;;
	d_allowed_name) expect_eq "docker: $n" "0 hello from 127.0.0.2:$pa /docker-name" "$code $out" ;;
	d_denied_*|d_ip_literal|d_rebind|d_metadata)
		check "docker: $n: the 403 names the rule ($out)" grep -q "nightshift egress: refused by rule $(want_event $n | cut -d' ' -f6)" <<< "$out" ;;
	*) check "docker: $n fails (exit $code, out '$out')" test -n "$line" -a "$code" != 0 -a "$code" != 126 -a "$code" != 127 ;;
	esac
	ev=$(want_event "$n")
	expect_eq "docker: $n: its event" "$ev" "$(grep -P "^E\t$n\t" "$T/results" | cut -f3)"
done
printf '127.0.0.2:%s %s\n' "$pa" /docker-allowed "$pa" /docker-connect "$pa" /docker-name | sort > "$T/hits.want"
expect_eq "docker: the internet saw exactly the allowed requests" "$(cat "$T/hits.want")" "$(sort "$T/hits")"
check "docker: the run verifies" "$NS" audit "$run" --verify
[ "$_fail" = 0 ] || { echo "docker results:"; cat "$T/results"; }
expect_eq "docker: no egress socket folder is left" "" "$(ls "$T/tmp" | grep nightshift-egress)"
done_tests
