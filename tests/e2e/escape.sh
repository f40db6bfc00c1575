#!/usr/bin/env bash
# escape: break-out attempts through the real binary. A scripted worker runs each attempt as
# a shell step in the namespace sandbox (each one a script in the workspace, as a model would
# write one; the approval default is allow); the job's events must show every attempt failing.
# The probe is the unit test binary ($TESTBIN/test_sandbox probe NAME): it tries one system
# call and prints "blocked: ..." (exit 1) or "ESCAPED" (exit 0). Controls show the checks can
# see an escape: with `network: host` the probe reaches the host listener, and with
# `backend: none` the host file is readable.
source "$(dirname "$0")/lib.sh"
ws="$T/ws"
mkdir -p "$ws/a" "$T/data"
echo "host secret" > "$T/secret"
echo "read only" > "$T/data/f"
export OPENAI_API_KEY=sk-nightshift-e2e-secret ASAN_OPTIONS=detect_leaks=0

needuserns escape
probe=""
if [ -x "${TESTBIN:-}/test_sandbox" ]; then
	cp "$TESTBIN/test_sandbox" "$ws/probe"
	probe=1
else
	skip escape-probes "no \$TESTBIN/test_sandbox to use as the probe (run through tests/run)"
fi

# A TCP listener and an abstract unix socket on the host, for the sandbox to try to reach.
python3 - "$T/port" <<'PY' &
import os, socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
u = socket.socket(socket.AF_UNIX); u.bind("\0nightshift-e2e-%d" % os.getpid()); u.listen(16)
open(sys.argv[1] + ".tmp", "w").write("%d %d\n" % (s.getsockname()[1], os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)
PY
lpid=$!
trap 'kill $lpid 2>/dev/null; rm -rf "$T"' EXIT
waitfor 60 test -f "$T/port"
read -r port upid < "$T/port"
abstract="nightshift-e2e-$upid"
marker=$((70000 + RANDOM % 20000))

# Attempts: NAME EXPECT BODY. EXPECT is blocked (the probe says so), fail (non-zero exit) or
# out=TEXT (stdout, with \n for newlines). Each BODY becomes the script a/NAME.
attempts=()
add() { attempts+=("$1"); printf '#!/bin/sh\n%s\n' "$3" > "$ws/a/$1"; chmod +x "$ws/a/$1"; eval "expect_$1=\$2"; }
p() { add "$1" blocked "/workspace/probe probe $2"; }

# files outside the mounts, and secrets in /etc
add read_host_file fail "cat $T/secret"
add read_shadow fail "cat /etc/shadow"
add read_gshadow fail "cat /etc/gshadow"
add list_root fail "ls /root"
add list_home fail "ls /home"
add list_var_log fail "ls /var/log"
add list_run fail "ls /run"
add docker_socket fail "ls -l /var/run/docker.sock /run/docker.sock"
add cgroupfs fail "ls /sys/fs/cgroup"
add old_root fail "ls /oldroot /newroot"
add dev_nodes fail "ls /dev/mem /dev/kmsg /dev/sda /dev/vda"
# writes to read-only places
add write_usr fail "touch /usr/bin/nightshift-x"
add write_etc fail "touch /etc/nightshift-x"
add write_root fail "touch /nightshift-x"
add append_passwd fail "echo 'x::0:0::/:/bin/sh' >> /etc/passwd"
add delete_system fail "rm -f /usr/bin/env"
add chmod_system fail "chmod 777 /usr/bin/env"
add write_ro_mount fail "echo x > /data/f"
add create_in_ro_mount fail "touch /data/new"
add drop_caches fail "echo 1 > /proc/sys/vm/drop_caches"
add proc_hostname fail "echo pwned > /proc/sys/kernel/hostname"
add sysrq fail "echo b > /proc/sysrq-trigger"
add sys_write fail "echo /tmp/x > /sys/kernel/uevent_helper"
add kallsyms fail "grep -qv '^0000000000000000 ' /proc/kallsyms"
# tools that need privileges
add unshare_tool fail "unshare -U true"
add unshare_root fail "unshare -r true"
add nsenter_tool fail "nsenter -t 1 -n true"
add mount_tool fail "mount -t tmpfs none /tmp"
add umount_tool fail "umount -l /workspace"
add hostname_tool fail "hostname pwned"
add su_root fail "su -c id root < /dev/null"
add chroot_tool fail "chroot /tmp /bin/true"
# what the step is and sees
add uid out="1000" "id -u"
add capabilities out="0" "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status | grep -vc '0000000000000000\$'"
add nnp_seccomp out="NoNewPrivs:\t1\nSeccomp:\t2" "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status"
add hostname out="nightshift" "hostname"
# every step its own empty HOME under its /tmp: a dotfile one step plants configures nothing later
add home_plant out="planted" "printf '[core]\\n\\tpager = id\\n' > \"\$HOME/.gitconfig\" && echo \"\$HOME\" > /tmp/lasthome && echo planted"
add home_fresh out="fresh\n0" "case \$HOME in /tmp/.home-*) [ \"\$HOME\" != \"\$(cat /tmp/lasthome)\" ] && echo fresh ;; esac; ls -A \"\$HOME\" | wc -l"
add host_processes out="0" "ps -e -o comm= | grep -cxE 'nightshift|python3|systemd|init|dockerd|sshd'"
add process_count out="ok" "n=\$(ps -e -o pid= | wc -l); [ \"\$n\" -le 6 ] && echo ok || echo \$n"
add api_key out="0\nend" "env | grep -c sk-nightshift; grep -rl 'sk-nightshift-e2e-secre[t]' /proc/[0-9]*/environ /proc/[0-9]*/cmdline /tmp 2>/dev/null; echo end"
# Under valgrind pid 1's command line is valgrind's, which the init leaves alone (namespace.c).
if [ -z "${NS_VALGRIND:-}" ]; then
	add init_cmdline out="nightshift-init" "tr '\\0' ' ' < /proc/1/cmdline | cut -c1-15"
else
	skip init_cmdline "under valgrind /proc/1/cmdline is valgrind's"
fi
add background_started out="started" "sleep $marker & setsid sleep $marker & (setsid sh -c 'sleep $marker & :' &); echo started"
add background_gone out="0" "ps -e -o args= | grep -c '^sleep $marker'"
# a set-uid copy of a shell left for the host: the workspace's files are the invoking user's there
add setid_shell out="plain" "cp /bin/dash /workspace/tool && chmod 6755 /workspace/tool; [ -u /workspace/tool ] || [ -g /workspace/tool ] && echo set-id || echo plain"
add setid_install out="plain" "install -m 4755 /bin/dash /workspace/tool2; [ -u /workspace/tool2 ] || [ -g /workspace/tool2 ] && echo set-id || echo plain"
add workspace_write out="ok" "echo hi > /workspace/written && echo ok"
# /tmp outlives a step in a warm sandbox, not in a cold one: shows which mode ran
add tmp_write out="ok" "echo kept > /tmp/carry && echo ok"
add tmp_carry out="mode" "cat /tmp/carry 2>/dev/null || echo fresh"
if [ -n "$probe" ]; then
	for x in ptrace-init ptrace-traceme ptrace-child vm-readv vm-writev vm-readv-init keyctl add_key request_key bpf perf \
		userfaultfd io_uring unshare-user unshare-net unshare-mount clone-user clone-pid clone3-user mount-tmpfs mount-proc \
		bind-root pivot_root chroot mount_setattr open_tree fsopen setuid0 setgid0 setgroups capset ambient caps \
		socket-inet socket-inet6 socket-netlink socket-packet socket-raw socket-vsock tiocsti tiocsti-high kexec \
		init_module finit_module delete_module mknod mknod-mem sethostname iopl ioperm open_by_handle reboot swapon \
		syslog acct settime fds setid-chmod setid-fchmod setid-fchmodat setid-fchmodat2 setid-chmod-high setid-open \
		setid-openat setid-openat2 setid-creat setid-mknod setid-mknodat setid-mkdir setid-mkdirat; do
		p "p_${x//-/_}" "$x"
	done
	p p_connect_tcp "connect-tcp $port"
	p p_connect_abstract "connect-abstract $abstract"
	p p_kill_host "kill $$"
	p p_read_init_environ "read /proc/1/environ"
	p p_read_init_mem "read /proc/1/mem"
	p p_core_pattern "write /proc/sys/kernel/core_pattern"
	p p_remount_usr "remount-rw /usr"
	p p_umount_workspace "umount /workspace"
	p p_fork_bomb "forkmany 500"
	add p_setuid_binary blocked "/workspace/suid probe euid"
	cp "$ws/probe" "$ws/suid" && chmod 4755 "$ws/suid"
fi

calls() { # a reply per call, the scripted model's turns; DIR is where the scripts are seen
	local dir=$1 first=1
	shift
	for n in "$@"; do
		[ $first = 1 ] || printf ','
		first=0
		printf '{tool_calls: [ {name: shell, arguments: {command: "%s/%s"}} ]}' "$dir" "$n"
	done
}
add oom_bomb out="" "head -c 2000m /dev/zero | tail > /dev/null"
add timeout_leftover out="" "sleep 1$marker & (setsid sh -c 'sleep 1$marker; :' &); sleep 30"
[ -n "$probe" ] && add net_control out="ESCAPED" "/workspace/probe probe connect-tcp $port | cut -d: -f1"
add none_control out="host secret" "cat $T/secret"
# backend none has no filter: the scan after the step removes the bits and says so
add none_setid out="6755" "cp /bin/true ./setid-none && chmod 6755 ./setid-none && stat -c %a ./setid-none"
main=()
for n in "${attempts[@]}"; do
	case $n in oom_bomb|timeout_leftover|net_control|none_control|none_setid) ;; *) main+=("$n") ;; esac
done
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { memory: 256M, pids: 64, timeout: 20s, env: [ASAN_OPTIONS], mounts: [ {source: $T/data, target: /data, mode: ro} ] }
models:
  escape:  { provider: scripted, replies: [ $(calls /workspace/a "${main[@]}"), {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
  oom:     { provider: scripted, replies: [ $(calls /workspace/a oom_bomb), {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
  timeout: { provider: scripted, replies: [ $(calls /workspace/a timeout_leftover), {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
  net:     { provider: scripted, replies: [ $([ -n "$probe" ] && calls /workspace/a net_control || calls /workspace/a uid), {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
  none:    { provider: scripted, replies: [ $(calls ./a none_control none_setid), {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
workers:
  escape:  { model: escape, instructions: x, tools: [shell], max_turns: 1000, approval: { default: allow } }
  oom:     { model: oom, instructions: x, tools: [shell], approval: { default: allow }, sandbox: { memory: 64M } }
  timeout: { model: timeout, instructions: x, tools: [shell], approval: { default: allow }, sandbox: { timeout: 2s } }
  net:     { model: net, instructions: x, tools: [shell], approval: { default: allow }, sandbox: { network: host } }
  none:    { model: none, instructions: x, tools: [shell], approval: { default: allow }, sandbox: { backend: none } }
jobs:
  escape: { worker: escape }
  oom: { worker: oom }
  timeout: { worker: timeout }
  net: { worker: net }
  none: { worker: none }
YAML
# One line per shell step: script name, exit code, timed out, oom, signal, stdout (\n escaped).
results() {
	zstd -dcq "$run/jobs/$1/events.jsonl.zst" | python3 -c '
import json, sys
cmd = {}
for line in sys.stdin:
    e = json.loads(line)
    if e["type"] == "decision":
        cmd[e["step"]] = (e.get("arguments") or {}).get("command", "") if isinstance(e.get("arguments"), dict) else ""
        if e["decision"] != "allow":
            print("%s\tDENIED\t\t\t\t%s" % (cmd[e["step"]].rsplit("/", 1)[-1], e.get("reason", "")))
    elif e["type"] == "tool_result" and e.get("tool") == "shell":
        out = e.get("stdout", "").rstrip("\n").replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
        print("%s\t%s\t%s\t%s\t%s\t%s" % (cmd.get(e["step"], "").rsplit("/", 1)[-1], e["exit_code"],
              str(e["timed_out"]).lower(), str(e["oom"]).lower(), e["signal"], out))
'
}
# Twice: warm (one sandbox per job, as by default) and cold (NIGHTSHIFT_SANDBOX_COLD=1: a
# fresh sandbox for every step, which joins the job's cgroup), every attempt in both.
for mode in warm cold; do
	rm -f "$ws/written"
	cold=0
	[ "$mode" = cold ] && cold=1
	NIGHTSHIFT_SANDBOX_COLD=$cold "$NS" run "$T/m.yaml" --out "$T/runs-$mode" > "$T/out" 2> "$T/err"
	rc=$?
	run=$(cat "$T/out")
	expect_rc "$mode: the run succeeds" 0 "$rc"
	[ "$rc" = 0 ] || cat "$T/err"
	for job in escape oom timeout net none; do results $job; done > "$T/results"
	seen=0
	while IFS=$'\t' read -r name code timed oom sig out; do
		want_var="expect_$name"
		want=${!want_var}
		seen=$((seen + 1))
		if [ "$code" = DENIED ]; then
			expect_eq "$mode: $name: ran in the sandbox (the policy denied it: $out)" ran denied
			continue
		fi
		case $name in
		oom_bomb)
			if [ "$(id -u)" = 0 ]; then
				expect_eq "$mode: memory bomb reported as OOM (exit $code)" true "$oom"
			else
				skip "$mode-oom-report" "not root: no cgroup is writable here, the bomb only meets RLIMIT_AS"
				check "$mode: memory bomb fails under RLIMIT_AS (exit $code)" test "$code" != 0
			fi
			;;
		tmp_carry)
			want=kept
			[ "$mode" = cold ] && want=fresh
			expect_eq "$mode: /tmp of the step before" "$want" "$out"
			;;
		timeout_leftover)
			expect_eq "$mode: timeout reported" "true -1 9" "$timed $code $sig"
			check "$mode: no process left after the timeout" bash -c "! pgrep -f '^sleep 1$marker'"
			;;
		*)
			case $want in
			blocked) check "$mode: escape $name: exit $code, out '$out'" test "$code" = 1 -a "${out#blocked}" != "$out" ;;
			fail) # a missing tool (126, 127) proves nothing
				check "$mode: escape $name: exit $code, out '$out'" test "$code" != 0 -a "$code" != 126 -a "$code" != 127 ;;
			out=*) expect_eq "$mode: $name" "$(printf '%b' "${want#out=}")" "$(printf '%b' "$out")" ;;
			esac
			;;
		esac
	done < "$T/results"
	[ -z "$probe" ] && seen=$((seen - 1)) # the net job ran uid instead of its control
	expect_eq "$mode: every attempt ran and was checked" "${#attempts[@]}" "$seen"
	check "$mode: no background process survived its step" bash -c "! pgrep -f '^sleep $marker'"
	check "$mode: the file written in the workspace belongs to the invoking user" test "$(stat -c %u "$ws/written")" = "$(id -u)"
	check "$mode: the run verifies" "$NS" audit "$run" --verify
	find "$ws" -perm /6000 ! -path "$ws/suid" > "$T/setid"
	expect_eq "$mode: no set-id file left in the workspace" "" "$(cat "$T/setid")"
	check "$mode: the file made set-id without a sandbox lost its bits" test "$(stat -c %a "$ws/setid-none")" = 755
	expect_grep "$mode: run.json says which file lost its set-id bits" '"setid_removed":[[:space:]]*\["setid-none"\]' "$run/run.json"
	rm -f "$ws/setid-none" "$ws/tool" "$ws/tool2"
	[ "$_fail" = 0 ] || { echo "$mode results (script, exit, timed out, oom, signal, stdout):"; cat "$T/results"; }
done
echo "${#attempts[@]} attempts"
check "at least 60 attempts" test "${#attempts[@]}" -ge 60
done_tests
