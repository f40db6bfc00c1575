#!/usr/bin/env bash
# Git's metadata as a whole (policy/gitmeta.h): a step may commit, but any other change to what
# git reads as configuration or runs as code is undone after the step and reported, wherever it
# is: .git/config, config.worktree, commondir, hooks, a worktree's and a submodule's files, a .git
# file rewritten to point at a repository the model made, a new nested repository. Afterwards
# `git status` on the host, in the workspace, its worktree and its submodule, runs nothing planted.
source "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { skip gitmeta "git is not installed (apt-get install git)"; done_tests; exit; }
unset GITHUB_ACTIONS
export GIT_CONFIG_NOSYSTEM=1 HOME=$T/home
mkdir -p "$HOME"
git config --global user.name t && git config --global user.email t@e && git config --global protocol.file.allow always
W=$T/ws
mkdir -p "$T/subsrc" "$W"
git -C "$T/subsrc" init -q && echo s > "$T/subsrc/s" && git -C "$T/subsrc" add s && git -C "$T/subsrc" commit -qm s
git -C "$W" init -q && echo a > "$W/a" && git -C "$W" add a && git -C "$W" commit -qm a
git -C "$W" submodule -q add "$T/subsrc" sub && git -C "$W" commit -qm sub
git -C "$W" worktree add -q "$W/wt" 2>/dev/null
check "the repository has a worktree and a submodule" test -f "$W/wt/.git" -a -f "$W/sub/.git" -a -d "$W/.git/modules/sub"
M=$T/marker
cat > "$T/attack.sh" <<SH
set -x
mon='touch $M.\$1'
mkdir -p evilgit/objects evilgit/refs/heads && cp .git/HEAD evilgit/HEAD
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch $M.evil\n' > evilgit/config
printf '../evilgit\n' > .git/commondir
printf 'gitdir: ./evilgit\n' > wt/.git.new && mv wt/.git.new wt/.git
printf 'gitdir: ../evilgit\n' > sub/.git
git config extensions.worktreeConfig true
printf '[core]\n\tfsmonitor = touch $M.cw\n' > .git/config.worktree
printf '[core]\n\tfsmonitor = touch $M.wcw\n' > .git/worktrees/wt/config.worktree
printf '../../../evilgit\n' > .git/worktrees/wt/commondir
printf '[core]\n\tfsmonitor = touch $M.mod\n' >> .git/modules/sub/config
printf '#!/bin/sh\ntouch $M.hook\n' > .git/modules/sub/hooks/post-checkout; chmod +x .git/modules/sub/hooks/post-checkout
printf '#!/bin/sh\ntouch $M.hook\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
printf '*.c filter=evil\n' > .git/info/attributes
mkdir -p .git/remotes && echo 'URL: /x' > .git/remotes/o
echo $T/evilgit/objects > .git/objects/info/alternates
mkdir nested && git -C nested init -q && git -C nested config core.fsmonitor "touch $M.nested"
rm -f .git/hooks/*.sample
echo attacked
SH
cat > "$T/m.yaml" <<YAML
version: 1
workspace: ws
sandbox: { backend: none }
models:
  d:
    provider: scripted
    replies:
      - tool_calls: [ {name: shell, arguments: {command: "sh $T/attack.sh > $T/attack.log 2>&1"}} ]
      - tool_calls: [ {name: shell, arguments: {command: "echo b > a && git add a && git -c user.name=m -c user.email=m@e commit -qm 'the model commits'"}} ]
      - tool_calls: [ {name: write_file, arguments: {path: ".git/commondir", content: "../evilgit"}} ]
      - tool_calls: [ {name: write_file, arguments: {path: "wt/.git", content: "gitdir: ../evilgit"}} ]
      - tool_calls: [ {name: write_file, arguments: {path: ".git/modules/sub/config", content: "[core]\\n\\tfsmonitor = x"}} ]
      - tool_calls: [ {name: write_file, arguments: {path: "deep/x/.git/config", content: "[core]\\n\\tfsmonitor = x"}} ]
      - tool_calls: [ {name: final_result, arguments: {}} ]
workers:
  w: { model: d, instructions: x, tools: [shell, write_file], approval: { default: allow } }
jobs:
  j: { worker: w }
YAML
cp -a "$W/.git" "$T/git.orig"
run=$("$NS" run "$T/m.yaml" --out "$T/runs" 2>"$T/err"); rc=$?
expect_rc "the night runs" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/err"
check "the attack ran to its end" grep -qx "attacked" "$T/attack.log"
expect_grep "the progress says the step's change to git's metadata was undone" "step 1 changed git's metadata .*: undone" "$T/err"
expect_nogrep "a commit changes no metadata" "step 2 changed git's metadata" "$T/err"
check "the event says which paths" bash -c "zstd -dcq '$run/jobs/j/events.jsonl.zst' | grep '\"git_metadata_restored\"' | grep -q '.git/commondir'"
check "the model was told" bash -c "zstd -dcq '$run/jobs/j/events.jsonl.zst' | grep -q 'this step changed git.s metadata'"
for p in .git/commondir wt/.git .git/modules/sub/config deep/x/.git/config; do
	check "write_file $p is refused" bash -c "zstd -dcq '$run/jobs/j/events.jsonl.zst' | grep '\"decision\"' | grep -F '\"path\":\"$p\"' | grep -q '\"decision\":\"deny\"'"
done
for f in .git/commondir .git/config.worktree .git/worktrees/wt/config.worktree .git/remotes .git/objects/info/alternates nested/.git; do
	check "$f is gone" bash -c "! test -e '$W/$f'"
done
check "the .git files point where they did" bash -c "grep -q 'gitdir: .*/.git/worktrees/wt' '$W/wt/.git' && grep -qx 'gitdir: ../.git/modules/sub' '$W/sub/.git'"
check ".git/config, hooks, info, modules' config as they were" bash -c "for f in config hooks info modules/sub/config modules/sub/hooks worktrees/wt/commondir worktrees/wt/gitdir; do diff -r '$T/git.orig/'\$f '$W/.git/'\$f >/dev/null || exit 1; done"
check "the commit is kept" bash -c "git -C '$W' log --oneline | grep -q 'the model commits'"
rm -f $M.* # what ran in the step itself (backend none runs it on this machine) is not the question
for d in "$W" "$W/wt" "$W/sub"; do git -C "$d" status >/dev/null 2>&1; done
git -C "$W" status --ignore-submodules=none >/dev/null 2>&1
git -C "$W/nested" status >/dev/null 2>&1
check "git status on the host ran nothing planted" bash -c "! ls $M.* 2>/dev/null | grep -q ."
ls $M.* 2>/dev/null
# Too much metadata to keep a copy of (a 70 MB file planted beside the attack): what is new is
# still found by name and removed, what was there is written back.
W2=$T/ws2
mkdir -p "$W2" && git -C "$W2" init -q && echo a > "$W2/a" && git -C "$W2" add a && git -C "$W2" commit -qm a
cat > "$T/big.sh" <<SH
mkdir -p .git/x && head -c 70000000 /dev/zero > .git/x/big
mkdir -p evil2/objects evil2/refs && cp .git/HEAD evil2/HEAD
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch $M.big\n' > evil2/config
echo ../evil2 > .git/commondir
printf '[core]\n\tfsmonitor = touch $M.bigcw\n' > .git/config.worktree
SH
sed -e "s|^workspace: ws$|workspace: ws2|" -e "s|sh $T/attack.sh > $T/attack.log 2>&1|sh $T/big.sh|" "$T/m.yaml" > "$T/m2.yaml"
"$NS" run "$T/m2.yaml" --out "$T/runs" >/dev/null 2>"$T/err2"
expect_rc "the night with 70 MB of planted metadata runs" 0 $?
for f in .git/x .git/commondir .git/config.worktree; do
	check "$f is gone though the metadata passed the cap" bash -c "! test -e '$W2/$f'"
done
rm -f $M.*
git -C "$W2" status >/dev/null 2>&1
check "git status after the big plant ran nothing" bash -c "! ls $M.* 2>/dev/null | grep -q ."
# A repository planted deeper than the walk once looked (70 folders), registered as a gitlink:
# git status on the host would read its config.
W3=$T/ws3
mkdir -p "$W3" && git -C "$W3" init -q && echo a > "$W3/a" && git -C "$W3" add a && git -C "$W3" commit -qm a
cat > "$T/deep.sh" <<SH
D=\$(printf 'd/%.0s' \$(seq 1 70))s
mkdir -p \$D && cd \$D && git init -q . && echo x > f && git add f && git -c user.email=a@b -c user.name=a commit -qm x
git config core.fsmonitor 'touch $M.deep; false'
cd $W3 && git add d
SH
sed -e "s|^workspace: ws$|workspace: ws3|" -e "s|sh $T/attack.sh > $T/attack.log 2>&1|sh $T/deep.sh|" "$T/m.yaml" > "$T/m3.yaml"
"$NS" run "$T/m3.yaml" --out "$T/runs" >/dev/null 2>"$T/err3"
expect_rc "the night with a repository 70 folders deep runs" 0 $?
expect_grep "the deep repository's metadata is undone" "step 1 changed git's metadata .*: undone" "$T/err3"
rm -f $M.*
git -C "$W3" status >/dev/null 2>&1
check "git status after the deep plant ran nothing" bash -c "! ls $M.* 2>/dev/null | grep -q ."
done_tests
