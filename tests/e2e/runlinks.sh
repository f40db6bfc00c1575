#!/usr/bin/env bash
# runlinks: a run directory holds regular files and folders only. A symbolic link (to a layer, a
# folder, SHA256SUMS), a fifo or a socket added anywhere after signing fails verification, and
# audit, diff, report, restore, merge and --from refuse the run rather than follow or wait on it:
# nothing of what a link points to is shown as the run's.
source "$(dirname "$0")/lib.sh"
command -v zstd >/dev/null || { skip runlinks "zstd is not installed"; done_tests; exit; }
command -v ssh-keygen >/dev/null || { skip runlinks "ssh-keygen is not installed (openssh-client)"; done_tests; exit; }
needuserns runlinks

ssh-keygen -q -t ed25519 -N '' -C night -f "$T/key"
echo "night@ci $(cut -d' ' -f1,2 "$T/key.pub")" > "$T/allowed"
cp -r "$ROOT/examples/hello" "$T/hello"
rm -rf "$T/hello/runs" "$T/hello/workspace/reports"
run=$("$NS" run "$T/hello/nightshift.yaml" --out "$T/runs" --sign "$T/key" 2>"$T/err")
expect_rc "a signed run" 0 $?
"$NS" audit "$run" --allowed-signers "$T/allowed" 2>/dev/null
expect_rc "it verifies" 0 $?
layers=$(ls "$run/snapshots")
free=""  # a step number with no layer of its own
for n in 0001 0002 0003 0004 0005 0006; do
	case " $(echo $layers) " in *" $n.tar.zst "*) ;; *) free=$n; break ;; esac
done
check "a step without a layer" test -n "$free"

# The victim: a layer of someone else's files, somewhere outside the run.
mkdir -p "$T/victim/ws" && echo "VICTIM-$$-CONTENT" > "$T/victim/ws/secret.txt"
tar --zstd -cf "$T/victim.tar.zst" -C "$T/victim/ws" secret.txt
mkfifo "$T/fifo-outside"

fresh() { rm -rf "$T/r"; cp -a "$run" "$T/r"; }
# attack NAME WHAT-IS-SAID SETUP...: the run copy, changed by SETUP, is refused by every reader
attack() {
	local name=$1 said=$2
	shift 2
	fresh
	"$@"
	timeout 120 "$NS" audit "$T/r" --verify >/dev/null 2>"$T/err"
	expect_rc "$name: audit --verify refuses it" 4 $?
	expect_grep "$name: and names it" "$said" "$T/err"
	timeout 120 "$NS" audit "$T/r" --allowed-signers "$T/allowed" >/dev/null 2>"$T/err"
	expect_rc "$name: audit --allowed-signers refuses it" 4 $?
	expect_nogrep "$name: never 'signed by'" "signed by" "$T/err"
	step=${free#000}
	timeout 120 "$NS" diff "$T/r" --step "${step:-1}" >"$T/out" 2>"$T/err"
	expect_rc "$name: diff refuses it" 4 $?
	expect_nogrep "$name: diff shows nothing of the victim" "VICTIM" "$T/out"
	timeout 120 "$NS" report "$T/r" --out "$T/page.html" >/dev/null 2>"$T/err"
	expect_rc "$name: report refuses it" 4 $?
	check "$name: report writes no page" test ! -e "$T/page.html"
	rm -rf "$T/to"
	timeout 120 "$NS" restore "$T/r" --step end --to "$T/to" 2>"$T/err"
	expect_rc "$name: restore refuses it" 4 $?
	expect_eq "$name: restore writes nothing of the victim" "" "$(grep -rl VICTIM "$T/to" 2>/dev/null)"
	timeout 120 "$NS" merge "$T/r" --out "$T/merged" >/dev/null 2>"$T/err"
	expect_rc "$name: merge refuses it" 4 $?
	timeout 120 "$NS" run "$T/hello/nightshift.yaml" --out "$T/runs2" --from "$T/r" >/dev/null 2>"$T/err"
	expect_rc "$name: run --from refuses it" 2 $?
}
attack "a symlink to a layer outside, unlisted" "snapshots/$free.tar.zst: a symbolic link" \
	ln -s "$T/victim.tar.zst" "$T/r/snapshots/$free.tar.zst"
relink() {  # a listed file replaced by a link to an identical copy: every digest still matches
	cp -a "$T/r/$1" "$T/copy" && rm -rf "$T/r/$1" && ln -s "$T/copy" "$T/r/$1"
}
relink_dir() { rm -rf "$T/copy"; relink "$1"; }
attack "a listed layer, a link to the same bytes" "snapshots/0001.tar.zst: a symbolic link" relink_dir snapshots/0001.tar.zst
attack "the snapshots folder, a link to a copy" "snapshots: a symbolic link" relink_dir snapshots
attack "a job's folder, a link to a copy" "jobs/hello: a symbolic link" relink_dir jobs/hello
attack "run.json, a link to a copy" "run.json: a symbolic link" relink_dir run.json
attack "SHA256SUMS, a link to a copy" "SHA256SUMS: a symbolic link" relink_dir SHA256SUMS
attack "a relative link inside the run" "snapshots/$free.tar.zst: a symbolic link" \
	ln -s 0001.tar.zst "$T/r/snapshots/$free.tar.zst"
attack "a fifo among the layers" "snapshots/$free.tar.zst: a named pipe" mkfifo "$T/r/snapshots/$free.tar.zst"
fifolog() { rm "$T/r/jobs/hello/events.jsonl.zst" && mkfifo "$T/r/jobs/hello/events.jsonl.zst"; }
attack "a fifo in place of an event log" "events.jsonl.zst: a named pipe" fifolog
sock() { python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/r/jobs/hello/s"; }
attack "a socket in a job's folder" "jobs/hello/s: a socket" sock
attack "a link to a fifo outside" "snapshots/$free.tar.zst: a symbolic link" \
	ln -s "$T/fifo-outside" "$T/r/snapshots/$free.tar.zst"

fresh
"$NS" audit "$T/r" --allowed-signers "$T/allowed" 2>/dev/null
expect_rc "the untouched copy still verifies" 0 $?
done_tests
