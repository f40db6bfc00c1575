#!/usr/bin/env bash
# unpriv: nightshift as an ordinary user who is not root, as on a GitHub Actions runner (the
# checkout belongs to uid 1001). As root the test makes that user (nsunpriv) when it is missing and
# runs every check as it; as another user it runs them as itself, and the checks that need root
# (files another uid owns, the install as root from the user's checkout) are SKIPPED.
# What a user does: run a job that writes a patch, sign it, and check every artifact with stock
# tools (sha256sum -c, zstd | tar, ssh-keygen -Y verify, git apply); diff, restore, replay, report,
# prune; a run with HOME unset, under umask 077, onto another filesystem (/dev/shm), from a
# workspace holding files root owns. And what went wrong before:
#  - TMPDIR naming a folder the user cannot write: the run succeeded and its changes.patch was
#    silently not made (a warning, exit 0); `diff` said "mkdtemp ...". Now run and doctor refuse it
#    up front (exit 2, naming TMPDIR), and every private temporary folder says TMPDIR when it fails.
#  - a read-only checkout: `run` said "--out ./runs: mkdir ..." though no --out was given, and
#    doctor said the machine could run it. Now the message says where the folder came from (runs/
#    beside the manifest, or config.yaml's out:), and doctor checks the run folder. The same for a
#    run the user cannot write beside: replay said "--out DIR: cannot make a workspace folder",
#    report "cannot write RUN.html: create ...": each now says the default and the flag.
#  - the recipes `nightshift init` writes, and `make install`'s examples as root from the user's
#    checkout (git refuses a tree another uid owns), took what git ignores: a run the user made of
#    an example (examples/*/runs/) went into the binary and into the user's repository; and a
#    checkout made under umask 077 installed examples only root could read.
#  - the user's defaults file (~/.config/nightshift/config.yaml: models, out:, sandbox defaults)
#    was read when anyone could write it or its folder, or when another user owned it: a stranger
#    could give the user's manifests network: host or a model of their own. Now it is refused as
#    ssh refuses its config (exit 2, naming the file and the remedy).
#  - a relative HOME put the user's defaults under the current folder (rel/.config/...), and
#    `config` with HOME unset said "none (no HOME does not exist)".
#  - prune printed a run root owned as removed, and "removed 1 run", exit 0, though nothing of it
#    went. Now a run with a folder the user cannot change is left whole and said (exit 1).
#  - a docker socket the user may not use (not in group docker) was "Failed to connect to
#    localhost port 80 after 0 ms: Couldn't connect to server" (curl's words for the tcp it does
#    not use); now the socket's own errno, its owner and mode, and the remedy are said.
#  - a worker that can only read (read_file, list_dir) was refused on a workspace the user can
#    read but not write ("could not write the workspace ... chown -R"): the owner check now
#    holds jobs whose workers (or delegates) can change it (shell, write_file, edit_file, MCP).
#  - a job's start opened the user's read-only checkout up: the git-metadata keeper chmod'ed the
#    workspace root and its .git folders u+rwx (0555 became 0755) before any step ran, taking
#    them for folders a step had closed. Now the first look reads what it can and changes no mode.
#  - ci/install.sh (the README's first command) as a user without sudo: "sudo: command not
#    found", exit 127, though every package was installed. Now it says what is installed
#    already and needs no sudo then; what is missing is named, with how to install it.
#  - doctor's cgroups line said "ok  limits that hold: cgroup1 not writable (Permission denied)"
#    for a user no cgroup holds limits for: its test for a held limit matched the failure's note.
#    Now it is a warning with the remedy unless a controller is named as held.
#  - a workspace file the user cannot read (root's, from a docker step) was left out of every
#    layer with no word on the terminal (only the snapshot event's skipped list): the progress
#    now warns once a job, naming the path and why.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
for t in zstd tar sha256sum ssh-keygen git; do
	command -v "$t" >/dev/null || { echo "########## SKIPPED unpriv: $t is needed ##########"; done_tests; exit; }
done
root=0
if [ "$(id -u)" = 0 ]; then
	root=1
	if ! command -v setpriv >/dev/null; then
		echo "########## SKIPPED unpriv: as root, setpriv is needed to become an ordinary user ##########"
		done_tests; exit
	fi
	if ! id -u nsunpriv >/dev/null 2>&1 &&
		! useradd -M -N -d /nonexistent -s /usr/sbin/nologin nsunpriv 2>"$T/useradd.err"; then
		echo "########## SKIPPED unpriv: cannot make the user nsunpriv: $(cat "$T/useradd.err") ##########"
		done_tests; exit
	fi
	uid=$(id -u nsunpriv) gid=$(id -g nsunpriv)
else
	uid=$(id -u) gid=$(id -g)
fi
if ! userns; then
	echo "########## SKIPPED unpriv: user namespaces are refused here (the namespace sandbox needs them) ##########"
	done_tests; exit
fi
chmod 0711 "$T"
H=$T/u
mkdir -p "$H/home"
[ "$root" = 1 ] && chown -R "$uid:$gid" "$H"
NSDIR=$(dirname "$NS")
# as CMD...: CMD as the ordinary user, in $H, with a minimal environment of its own
as() {
	if [ "$root" = 1 ]; then
		(cd "$H" && setpriv --reuid="$uid" --regid="$gid" --clear-groups \
			env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H/home" ASAN_OPTIONS=detect_leaks=0 "$@")
	else
		(cd "$H" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H/home" ASAN_OPTIONS=detect_leaks=0 "$@")
	fi
}
# ash SCRIPT: a bash script as the user ($NS is the binary)
ash() { as bash -c "NS=$NS; $1"; }
if ! as test -x "$NS"; then
	echo "########## SKIPPED unpriv: uid $uid cannot run $NS (its folders are private) ##########"
	done_tests; exit
fi

# A job that reads, changes a file and adds one, signed.
ash 'set -e; mkdir -p s/repo; cd s; echo hello >repo/a.txt; git -C repo init -q; git -C repo add .
git -C repo -c user.name=u -c user.email=u@e commit -qm init
ssh-keygen -q -t ed25519 -N "" -f key; echo "me $(cat key.pub)" >allowed
cat >nightshift.yaml <<EOF
version: 1
workspace: repo
models:
  default: { provider: scripted, script: script.yaml }
sandbox: { backend: namespace, network: none, timeout: 30s }
workers:
  w:
    instructions: fix
    tools: [shell, write_file]
    approval:
      default: deny
      rules:
        - { tool: shell, command: "cat *", decision: allow }
        - { tool: write_file, path: "**", decision: allow }
jobs:
  fix: { worker: w, input: go }
EOF
cat >script.yaml <<EOF
- tool_calls: [{ name: shell, arguments: { command: "cat a.txt" } }]
- tool_calls: [{ name: write_file, arguments: { path: a.txt, content: "hello fixed\n" } }]
- tool_calls: [{ name: write_file, arguments: { path: sub/new.txt, content: "new\n" } }]
- tool_calls: [{ name: final_result, arguments: {} }]
EOF' >"$T/setup.log" 2>&1 || { cat "$T/setup.log"; echo "FAIL setup"; _fail=$((_fail + 1)); done_tests; exit; }
# fresh: the workspace back at its commit
fresh() { ash 'cd s/repo && git checkout -q -- . && rm -rf sub'; }

# --- the run, and its artifacts checked with stock tools ---------------------------------------
ash 'cd s && $NS run nightshift.yaml --sign key --quiet' >"$T/run.out" 2>"$T/run.err"
expect_rc "run as uid $uid" 0 $?
R=$(cat "$T/run.out")
check "sha256sum -c SHA256SUMS" ash "cd '$R' && sha256sum -c --quiet SHA256SUMS"
check "ssh-keygen -Y verify the signature" ash "ssh-keygen -Y verify -f s/allowed -I me -n nightshift -s '$R/SHA256SUMS.sig' <'$R/SHA256SUMS' >/dev/null"
check "each layer: zstd -dc | tar -t" ash "for f in '$R'/snapshots/*.tar.zst; do zstd -dc \"\$f\" | tar -tf - >/dev/null || exit 1; done"
check "the events: zstd -dc" ash "zstd -dc '$R/jobs/fix/events.jsonl.zst' | grep -q job_start"
check "audit --verify --allowed-signers" ash "\$NS audit '$R' --verify --allowed-signers s/allowed >/dev/null 2>&1"
check "changes.patch: git apply on the starting commit" ash "git clone -q s/repo c && git -C c apply --check '$R/jobs/fix/changes.patch'"
check "diff RUN is that patch" ash "\$NS diff '$R' | cmp -s - '$R/jobs/fix/changes.patch'"
check "restore --step 2 onto /dev/shm" ash "d=\$(mktemp -d /dev/shm/ns-unpriv.XXXXXX) && \$NS restore '$R' --step 2 --to \"\$d/w\" 2>/dev/null && grep -qx hello \"\$d/w/a.txt\"; rc=\$?; rm -rf \"\$d\"; exit \$rc"
check "replay matches" ash "\$NS replay '$R' --out rp >/dev/null 2>&1"
check "report" ash "\$NS report '$R' --out r.html >/dev/null 2>&1 && grep -q '<html' r.html"

# a run in a folder the user cannot write (a downloaded artifact, another user's): what reads it
# works; what writes beside it by default says so and names the flag
ash "mkdir ro-runs && cp -R '$R' ro-runs/ && chmod 555 ro-runs"
RO=$H/ro-runs/$(basename "$R")
check "read-only run: audit --verify" ash "\$NS audit '$RO' --verify >/dev/null 2>&1"
ash "\$NS replay '$RO'" >/dev/null 2>"$T/rorep.err"
expect_rc "read-only run: replay without --out, exit 2" 2 $?
expect_grep "read-only run: replay says the default and --out" "ro-runs \(beside RUN, the default\).*--out DIR" "$T/rorep.err"
expect_nogrep "read-only run: replay names no --out the user did not give" "^nightshift: --out" "$T/rorep.err"
check "read-only run: replay --out elsewhere" ash "\$NS replay '$RO' --out rp2 >/dev/null 2>&1"
ash "\$NS report '$RO'" >/dev/null 2>"$T/rorepo.err"
expect_rc "read-only run: report without --out fails" 1 $?
expect_grep "read-only run: report says the default and --out" "beside RUN, the default.*--out FILE" "$T/rorepo.err"
ash 'chmod 755 ro-runs'

# --- the user's environment: HOME unset, umask 077, a run folder on another filesystem ---------
fresh
ash 'cd s && unset HOME && $NS run nightshift.yaml --quiet >/dev/null'
expect_rc "HOME unset" 0 $?
fresh
ash 'cd s && umask 077 && $NS run nightshift.yaml --quiet' >"$T/u077.out" 2>"$T/u077.err"
expect_rc "umask 077" 0 $?
check "umask 077: the run is the user's alone" ash "test \"\$(stat -c %a '$(cat "$T/u077.out")/run.json')\" = 600"
fresh
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	ash 'cd s && d=$(mktemp -d /dev/shm/ns-unpriv.XXXXXX) && $NS run nightshift.yaml --quiet --out "$d" >"$d.out" &&
		$NS audit "$(cat "$d.out")" --verify >/dev/null 2>&1; rc=$?; rm -rf "$d" "$d.out"; exit $rc'
	expect_rc "run onto /dev/shm, audited" 0 $?
fi

# --- doctor's cgroup line: OK only when a cgroup holds a limit -----------------------------------
ash 'cd s && $NS doctor nightshift.yaml' >"$T/doc.out" 2>&1
if grep -Eq '^[a-zA-Z]+ +cgroups .*(not writable|cannot|no cgroup|no controller)' "$T/doc.out"; then
	expect_grep "no cgroup for this user: doctor warns, with the remedy" "^warn +cgroups .*Remedy" "$T/doc.out"
else
	echo "SKIPPED unpriv (doctor's cgroup warning): a cgroup holds limits for uid $uid here"
fi

# --- the docker backend and a socket the user may not use ----------------------------------------
if command -v python3 >/dev/null; then
	mkdir -p "$T/dsock" && python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/dsock/d.sock"
	chmod 711 "$T/dsock"; chmod 0000 "$T/dsock/d.sock" # the user (even its owner) may not connect
	ash "cd s && sed 's/backend: namespace/backend: docker, image: debian:12/' nightshift.yaml >md.yaml &&
		DOCKER_HOST=unix://$T/dsock/d.sock \$NS doctor md.yaml" >"$T/dock.out" 2>&1
	expect_grep "docker socket refused: doctor says permission denied, not 'localhost port 80'" "FAIL +docker .*d.sock.*Permission denied.*group" "$T/dock.out"
	expect_nogrep "docker socket refused: no curl words about port 80" "port 80" "$T/dock.out"
fi

ash 'cd / && $NS doctor' >"$T/docroot.out" 2>&1
expect_rc "doctor without a manifest in a folder the user cannot write: no run folder to fail" 0 $?

# --- TMPDIR a folder the user cannot write ----------------------------------------------------
fresh
ash 'mkdir -p ro-tmp && chmod 500 ro-tmp'
ash 'cd s && TMPDIR=$PWD/../ro-tmp $NS run nightshift.yaml --quiet' >"$T/tmp.out" 2>"$T/tmp.err"
expect_rc "TMPDIR unwritable: run refuses, exit 2" 2 $?
expect_eq "TMPDIR unwritable: no run directory" "" "$(cat "$T/tmp.out")"
expect_grep "TMPDIR unwritable: the message names TMPDIR" "TMPDIR=.*ro-tmp" "$T/tmp.err"
ash 'cd s && TMPDIR=/nonexistent/tmp $NS doctor nightshift.yaml' >"$T/tmpdoc.out" 2>&1
expect_rc "TMPDIR missing: doctor fails" 1 $?
expect_grep "TMPDIR missing: doctor's FAIL line names it" "^FAIL +temporary files .*TMPDIR=/nonexistent/tmp" "$T/tmpdoc.out"
ash "TMPDIR=\$PWD/ro-tmp \$NS diff '$R'" >/dev/null 2>"$T/tmpdiff.err"
expect_rc "TMPDIR unwritable: diff fails, exit 2" 2 $?
expect_grep "TMPDIR unwritable: diff names TMPDIR" "TMPDIR=.*ro-tmp" "$T/tmpdiff.err"
ash 'cd s && TMPDIR=relative $NS doctor nightshift.yaml' >"$T/tmprel.out" 2>&1
expect_grep "TMPDIR relative: doctor says it is not used" "temporary files .*TMPDIR=relative" "$T/tmprel.out"

# --- a read-only checkout ----------------------------------------------------------------------
fresh
ash 'rm -rf s/runs && chmod 555 s'
ash 'cd s && $NS run nightshift.yaml --quiet' >"$T/ro.out" 2>"$T/ro.err"
expect_rc "read-only checkout: exit 2" 2 $?
expect_nogrep "read-only checkout: no --out the user did not give" "--out \./runs|--out [^ ]*runs:" "$T/ro.err"
expect_grep "read-only checkout: says the default and the remedy" "runs/ beside the manifest.*--out" "$T/ro.err"
ash 'cd s && $NS doctor nightshift.yaml' >"$T/rodoc.out" 2>&1
expect_rc "read-only checkout: doctor fails" 1 $?
expect_grep "read-only checkout: doctor's FAIL line is the run folder" "^FAIL +run folder .*runs" "$T/rodoc.out"
ash 'cd s && $NS run nightshift.yaml --quiet --out ../elsewhere >/dev/null 2>&1'
expect_rc "read-only checkout, --out elsewhere: runs" 0 $?
ash 'mkdir -p home/.config/nightshift && echo "out: /proc/nope" >home/.config/nightshift/config.yaml'
ash 'cd s && $NS run nightshift.yaml --quiet' >/dev/null 2>"$T/cfgout.err"
expect_rc "config.yaml out: unwritable: exit 2" 2 $?
expect_grep "config.yaml out: unwritable: the message names config.yaml's out:" "/proc/nope \(out: of .*/config.yaml\).*--out DIR" "$T/cfgout.err"
# a worker that only reads (read_file, list_dir: no step, no write) on a checkout it cannot write
ash "cat >ro.yaml <<EOF
version: 1
workspace: s/repo
models:
  default: { provider: scripted, script: ro-script.yaml }
sandbox: { backend: namespace, network: none, timeout: 30s }
workers:
  r: { instructions: read, tools: [read_file, list_dir], approval: { default: allow } }
  w: { instructions: write, tools: [write_file], approval: { default: allow } }
jobs:
  look: { worker: r, input: go }
EOF
printf '%s\n' '- tool_calls: [{ name: read_file, arguments: { path: a.txt } }]' '- tool_calls: [{ name: final_result, arguments: {} }]' >ro-script.yaml
sed 's/worker: r,/worker: w,/' ro.yaml >rw.yaml; chmod -R a-w s/repo"
ash 'find s/repo -printf "%m %p\n" | sort >modes.before; $NS run ro.yaml --quiet --out rorun' >"$T/rojob.out" 2>"$T/rojob.err"
expect_rc "read-only checkout, a worker that only reads: runs" 0 $?
ash 'find s/repo -printf "%m %p\n" | sort >modes.after'
expect_eq "read-only checkout: the run left every mode of the user's checkout as it was" "" "$(diff "$H/modes.before" "$H/modes.after" | head -5)"
ash '$NS run rw.yaml --quiet --out rorun' >/dev/null 2>"$T/rwjob.err"
expect_rc "read-only checkout, a worker that writes: refused before it runs" 2 $?
expect_grep "read-only checkout, a worker that writes: the owner check says why" "could not write the workspace" "$T/rwjob.err"
expect_grep "read-only checkout, the user's own: the remedy is chmod, not chown to itself" "yours but mode 0555.*chmod u\+w" "$T/rwjob.err"
ash 'chmod -R u+w s/repo'
ash 'rm -f home/.config/nightshift/config.yaml; chmod 755 s'

# --- the user's defaults file: only the user's to write ------------------------------------------
ash 'mkdir -p home/.config/nightshift && printf "sandbox: { network: host }\n" >home/.config/nightshift/config.yaml && chmod 600 home/.config/nightshift/config.yaml'
ash 'cd s && $NS validate nightshift.yaml' >/dev/null 2>&1
expect_rc "config.yaml 0600: read" 0 $?
ash 'chmod 666 home/.config/nightshift/config.yaml; cd s && $NS validate nightshift.yaml' >/dev/null 2>"$T/cfg666.err"
expect_rc "config.yaml writable by anyone: refused, exit 2" 2 $?
expect_grep "config.yaml writable by anyone: said, with the remedy" "config.yaml.*writable by anyone.*chmod go-w" "$T/cfg666.err"
ash 'chmod 600 home/.config/nightshift/config.yaml; chmod 777 home/.config/nightshift; cd s && $NS run nightshift.yaml --quiet' >"$T/cfg777.out" 2>"$T/cfg777.err"
expect_rc "its folder writable by anyone: run refused, exit 2" 2 $?
expect_grep "its folder writable by anyone: said" "home/.config/nightshift.*writable by anyone" "$T/cfg777.err"
ash 'chmod 700 home/.config/nightshift'
if [ "$root" = 1 ]; then
	chown 0:0 "$H/home/.config/nightshift/config.yaml"; chmod 644 "$H/home/.config/nightshift/config.yaml"
	ash 'cd s && $NS validate nightshift.yaml' >/dev/null 2>&1
	expect_rc "config.yaml owned by root, not writable by the user: read" 0 $?
	chown 65534 "$H/home/.config/nightshift/config.yaml"
	ash 'cd s && $NS validate nightshift.yaml' >/dev/null 2>"$T/cfgown.err"
	expect_rc "config.yaml owned by another user: refused" 2 $?
	expect_grep "config.yaml owned by another user: said" "config.yaml.*owned by uid 65534" "$T/cfgown.err"
fi
# root whose HOME another uid owns (a GitHub Actions container job: HOME=/github/home, the runner's):
# refused, and the remedy names a folder of root's own, which is then read
if [ "$root" = 1 ]; then
	mkdir -p "$T/gh/home/.config/nightshift" "$T/gh/own/nightshift"
	printf 'out: %s\n' "$T/gh/runs" | tee "$T/gh/home/.config/nightshift/config.yaml" >"$T/gh/own/nightshift/config.yaml"
	chown 1001 "$T/gh/home"
	HOME=$T/gh/home XDG_CONFIG_HOME= "$NS" config >/dev/null 2>"$T/gh.err"
	expect_rc "root, HOME owned by uid 1001: refused" 2 $?
	expect_grep "the remedy names XDG_CONFIG_HOME" "owned by uid 1001.*XDG_CONFIG_HOME" "$T/gh.err"
	HOME=$T/gh/home XDG_CONFIG_HOME=$T/gh/own "$NS" config >"$T/gh.out" 2>&1
	expect_grep "and XDG_CONFIG_HOME in a folder of root's own is read" "user defaults: $T/gh/own/nightshift/config.yaml" "$T/gh.out"
fi
rm -f "$H/home/.config/nightshift/config.yaml"
# a HOME that is not absolute names no file (as XDG_CONFIG_HOME), never one under the current folder
ash 'mkdir -p s/rel/.config/nightshift && echo "out: /nowhere" >s/rel/.config/nightshift/config.yaml; cd s && HOME=rel $NS config' >"$T/relhome.out" 2>&1
expect_nogrep "HOME relative: no config.yaml read from the current folder" "rel/.config" "$T/relhome.out"
expect_grep "HOME relative: config says why there are no defaults" "user defaults: none \(HOME is not an absolute path\)" "$T/relhome.out"
ash 'cd s && env -u HOME $NS config' >"$T/nohome.out" 2>&1
expect_grep "HOME unset: config says so plainly" "user defaults: none \(neither XDG_CONFIG_HOME nor HOME is set\)" "$T/nohome.out"
ash 'rm -rf s/rel'

# --- what root owns in the user's workspace; what root installs from the user's checkout --------
if [ "$root" = 1 ]; then
	fresh
	mkdir -p "$H/s/repo/rootdir" && echo r >"$H/s/repo/rootdir/f" && chmod 755 "$H/s/repo/rootdir"
	ash 'cd s && d=$($NS run nightshift.yaml --quiet) && $NS audit "$d" --verify >/dev/null 2>&1 &&
		$NS restore "$d" --step 1 --to ../rs >/dev/null 2>&1 && test -f ../rs/rootdir/f'
	expect_rc "root-owned files in the workspace: run, audit, restore" 0 $?
	rm -rf "$H/s/repo/rootdir"
	# a file root made that the user cannot read (a docker step's): in no layer, and the user is told
	fresh
	echo private >"$H/s/repo/rootonly" && chmod 600 "$H/s/repo/rootonly"
	ash 'cd s && $NS run nightshift.yaml' >"$T/skip.out" 2>"$T/skip.err"
	expect_rc "an unreadable file in the workspace: the run goes on" 0 $?
	expect_grep "an unreadable file: the user is warned, with the path" "warning: .*left out .*rootonly.*Permission denied" "$T/skip.err"
	expect_eq "an unreadable file: warned once, not at every step" 1 "$(grep -c 'left out' "$T/skip.err")"
	rm -f "$H/s/repo/rootonly"

	# prune over runs root made (a step run with sudo, a root container's): said, never "removed"
	ash 'mkdir pr && cd s && $NS run nightshift.yaml --quiet --out ../pr >/dev/null 2>&1 &&
		$NS run nightshift.yaml --quiet --out ../pr >/dev/null 2>&1 && $NS run nightshift.yaml --quiet --out ../pr >/dev/null 2>&1'
	old=$(ls -d "$H"/pr/2* | LC_ALL=C sort | head -1)
	chown -R 0:0 "$old"
	ash '$NS prune pr --keep 1' >"$T/prune.out" 2>"$T/prune.err"
	expect_rc "prune, a run root owns among them: exit 1" 1 $?
	expect_nogrep "prune: the run it could not remove is not listed as removed" "$(basename "$old")" "$T/prune.out"
	expect_grep "prune: it is named with the cause" "$(basename "$old").*(Permission denied|not yours)" "$T/prune.err"
	check "prune: the root-owned run is whole" test -f "$old/run.json"
	expect_eq "prune: the other old run went" 1 "$(grep -c . "$T/prune.out")"
	ash '$NS prune pr --keep 1 --dry-run' >"$T/prunedry.out" 2>"$T/prunedry.err"
	expect_nogrep "prune --dry-run: would not say it removes what it cannot" "$(basename "$old")" "$T/prunedry.out"
	rm -rf "$H/pr"

	# the README's first command, as a user without sudo on a machine that has the packages
	ash "PATH=/usr/bin:/bin; cd '$ROOT' && bash ci/install.sh" >"$T/ci.out" 2>&1
	rc=$?
	missing=$(for p in $(cat "$ROOT/ci/packages.txt"); do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"; done)
	if [ -z "$missing" ] && command -v node >/dev/null && command -v npm >/dev/null && ! as sh -c 'command -v sudo' >/dev/null; then
		expect_rc "ci/install.sh as a user, everything installed: nothing to do" 0 $rc
		expect_grep "ci/install.sh: says so" "installed already" "$T/ci.out"
	fi
	expect_nogrep "ci/install.sh: never 'sudo: command not found'" "sudo: command not found" "$T/ci.out"

	# the user's checkout of the examples with a run made in one, installed by root
	src=$H/src
	mkdir -p "$src/cmd"
	cp -R "$ROOT/examples" "$ROOT/pkg" "$ROOT/ci" "$ROOT/Makefile" "$ROOT/.gitignore" "$src/"
	cp "$ROOT/cmd/recipes.sh" "$src/cmd/"
	chown -R "$uid:$gid" "$src"
	ash 'cd src && git init -q && git add -A && mkdir -p examples/fix-tests/runs/r examples/hello/runs/r &&
		echo private >examples/fix-tests/runs/r/run.json && echo private >examples/hello/runs/r/run.json'
	sh "$src/cmd/recipes.sh" >"$T/recipes.c" 2>"$T/recipes.err"
	expect_rc "recipes.sh as root over the user's checkout" 0 $?
	expect_nogrep "recipes leave out a run of an example" "runs/r/run.json" "$T/recipes.c"
	expect_grep "recipes keep the recipe's files" '"\.nightshift/fix-tests/nightshift\.yaml"' "$T/recipes.c"
	ash 'sh src/cmd/recipes.sh' >"$T/recipes2.c" 2>/dev/null
	expect_nogrep "recipes as the user leave out a run of an example" "runs/r/run.json" "$T/recipes2.c"
	make -s -C "$src" install-files NS="$NS" PREFIX=/usr DESTDIR="$T/dest" >"$T/inst.log" 2>&1
	expect_rc "make install-files as root from the user's checkout" 0 $?
	check "installed: the hello example" test -f "$T/dest/usr/share/doc/nightshift/examples/hello/nightshift.yaml"
	check "installed: no run of an example" test ! -e "$T/dest/usr/share/doc/nightshift/examples/hello/runs"
	# a checkout made under umask 077: what root installs from it is still every user's to read
	ash 'chmod -R go-rwx src'
	make -s -C "$src" install-files NS="$NS" PREFIX=/usr DESTDIR="$T/dest2" >"$T/inst2.log" 2>&1
	expect_rc "make install-files from a umask 077 checkout" 0 $?
	chmod 0755 "$T/dest2"
	ash "cp -R '$T/dest2/usr/share/doc/nightshift/examples/hello' h2 && cd h2 && \$NS run nightshift.yaml --quiet >/dev/null 2>&1"
	expect_rc "its installed example: the user copies and runs it" 0 $?
else
	echo "SKIPPED unpriv (root parts): files root owns in the workspace, an install as root from the user's checkout"
fi
done_tests
