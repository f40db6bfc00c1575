#!/usr/bin/env bash
# private: run directories are no more open than the workspace they record, and the workspace
# lock is nowhere another user can plant anything. The attacks: another local user reads a
# private workspace's snapshots in runs/ (0755/0644 before); another user plants a symlink or a
# held lock file at the old predictable /tmp/nightshift-DEV-INO.lock to redirect or block a run.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
umask 022
chmod 755 "$T" # mktemp's 0700 would make every workspace below it private
# whether others can pass every folder above $T: else every workspace here is private anyway
open_above=1; p=$T
while [ "$p" != / ]; do p=$(dirname "$p"); [ $((0$(stat -c %a "$p") & 1)) = 1 ] || open_above=; done
backend=namespace
if ! userns; then
	skip "private/namespace" "user namespaces are not available here: the steps run with backend none"
	backend=none
fi
manifest() { # FILE WORKSPACE
	cat > "$1" <<YAML
version: 1
workspace: $2
sandbox: { backend: $backend }
models:
  m:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "echo secret > made; mkdir -p sub/dir" } } ] }
      - { tool_calls: [ { name: write_file, arguments: { path: new/file.txt, content: "x" } } ] }
      - { tool_calls: [ { name: final_result, arguments: {} } ] }
workers:
  w: { model: m, instructions: x, tools: [shell, write_file], approval: { default: allow } }
jobs:
  j: { worker: w, files: [made] }
YAML
}
# everything under DIR that the group or others may read, enter or write
opened() { find "$1" -perm /077 -printf '%m %p\n'; }

# 1. a private workspace (0700): its run directory is 0700 throughout, files 0600
mkdir -p "$T/priv/ws" && chmod 700 "$T/priv/ws" && echo data > "$T/priv/ws/f"
manifest "$T/priv/m.yaml" ws
dir=$("$NS" run "$T/priv/m.yaml" --out "$T/runs1" 2>"$T/err1"); rc=$?
expect_rc "a run on a private workspace succeeds" 0 "$rc"
opened "$dir" > "$T/open1"
check "nothing in its run directory is open to the group or others" test ! -s "$T/open1"
[ -s "$T/open1" ] && head -5 "$T/open1"
expect_eq "the run directory is 0700" 700 "$(stat -c %a "$dir")"
expect_eq "a snapshot is 0600" 600 "$(stat -c %a "$dir/snapshots/0001.tar.zst")"
expect_eq "the --out folder it made is 0700" 700 "$(stat -c %a "$T/runs1")"
# steps and the file tools still make the workspace's files with the user's own umask
expect_eq "a file a step made has the user's umask" 644 "$(stat -c %a "$T/priv/ws/made")"
expect_eq "a folder a step made has the user's umask" 755 "$(stat -c %a "$T/priv/ws/sub/dir")"
expect_eq "a folder write_file made has the user's umask" 755 "$(stat -c %a "$T/priv/ws/new")"
expect_eq "a file write_file made is 0644" 644 "$(stat -c %a "$T/priv/ws/new/file.txt")"
rdir=$("$NS" replay "$dir" --out "$T/replays" 2>"$T/errr"); rc=$?
expect_rc "its replay succeeds" 0 "$rc"
opened "$rdir" > "$T/openr"
check "the replay's run directory is private too" test -n "$rdir" -a ! -s "$T/openr"
tar --zstd -cf "$T/run.tar.zst" -C "$(dirname "$dir")" "$(basename "$dir")"
tar --zstd -tvf "$T/run.tar.zst" | awk '$1 !~ /^[d-]rw[-x]------$/' > "$T/tarmodes"
check "an archive made with tar keeps the private modes" test ! -s "$T/tarmodes"

# 2. a workspace that is open (0755) in a folder others cannot enter: private as well
mkdir -p "$T/hidden/ws" && chmod 700 "$T/hidden" && chmod 755 "$T/hidden/ws"
manifest "$T/hidden/m.yaml" ws
dir=$("$NS" run "$T/hidden/m.yaml" --out "$T/runs2" 2>"$T/err2"); rc=$?
expect_rc "a run on a workspace under a private folder succeeds" 0 "$rc"
opened "$dir" > "$T/open2"
check "its run directory elsewhere is private too" test -n "$dir" -a ! -s "$T/open2"

# 3. a workspace readable by the group only (0750): the run is 0750/0640
mkdir -p "$T/grp/ws" && chmod 750 "$T/grp/ws"
manifest "$T/grp/m.yaml" ws
dir=$("$NS" run "$T/grp/m.yaml" --out "$T/runs3" 2>"$T/err3"); rc=$?
expect_rc "a run on a group-only workspace succeeds" 0 "$rc"
find "$dir" -perm /007 > "$T/open3"
check "nothing of it is open to others" test -n "$dir" -a ! -s "$T/open3"
if [ -n "$open_above" ]; then
	expect_eq "its run directory is 0750" 750 "$(stat -c %a "$dir")"
	expect_eq "its snapshot is 0640" 640 "$(stat -c %a "$dir/snapshots/0001.tar.zst")"
fi

# 4. an open workspace (0755): the run directory keeps the user's umask, as before
mkdir -p "$T/pub/ws" && chmod 755 "$T/pub" "$T/pub/ws"
manifest "$T/pub/m.yaml" ws
dir=$("$NS" run "$T/pub/m.yaml" --out "$T/runs4" 2>"$T/err4"); rc=$?
expect_rc "a run on an open workspace succeeds" 0 "$rc"
if [ -n "$open_above" ]; then
	expect_eq "the run directory of an open workspace is 0755" 755 "$(stat -c %a "$dir")"
	expect_eq "its snapshot is 0644" 644 "$(stat -c %a "$dir/snapshots/0001.tar.zst")"
else
	skip "private/open" "a folder above $T is closed to others, so every workspace here is private"
fi

# 5. the old lock name in the shared temp folder, planted by another user: a symlink to a victim
# file and a lock file held open. Neither redirects nor blocks the run.
ws=$T/priv/ws
lock=$(printf '%s/nightshift-%x-%x.lock' "${TMPDIR:-/tmp}" "$(stat -c %d "$ws")" "$(stat -c %i "$ws")")
victim=$T/victim && echo "do not touch" > "$victim" && chmod 644 "$victim"
ln -sfn "$victim" "$lock"
other=
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then other=nobody; chown -h nobody "$lock"; fi
dir=$("$NS" run "$T/priv/m.yaml" --out "$T/runs5" 2>"$T/err5"); rc=$?
expect_rc "a symlink planted at the old lock name does not stop the run" 0 "$rc"
expect_eq "the victim it points at is unchanged" "do not touch" "$(cat "$victim")"
expect_eq "the victim's mode is unchanged" 644 "$(stat -c %a "$victim")"
rm -f "$lock"
: > "$lock"
[ -n "$other" ] && chown "$other" "$lock"
flock -x "$lock" sleep 30 & holder=$!
waitfor 30 grep -q " $holder " /proc/locks
dir=$("$NS" run "$T/priv/m.yaml" --out "$T/runs5" 2>"$T/err5"); rc=$?
expect_rc "a lock file held by someone else at the old name does not block the run" 0 "$rc"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
rm -f "$lock"
check "no lock file is made in the shared temp folder" test ! -e "$lock"
[ -z "$other" ] && skip "private/other-user" "not root: the planted files belong to the runner's own user"
done_tests
