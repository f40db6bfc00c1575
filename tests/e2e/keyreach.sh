#!/usr/bin/env bash
# keyreach: --sign (and NIGHTSHIFT_SIGNING_KEY) refuses a key that a step could read, whatever its
# mode (steps run as the runner's user): in the workspace, a job's own workspace, a mount source,
# a skill folder, an image folder, a system folder image: host shows (/opt, /usr/local, /etc
# readable by others), through a symlink or a hard link; exit 2, no run made, naming the job and
# a place to keep it. A key outside is taken, and its bytes are masked in every artifact and on
# stderr even when the model and a step print them.
source "$(dirname "$0")/lib.sh"
command -v ssh-keygen >/dev/null || { skip keyreach "ssh-keygen is not installed (openssh-client)"; done_tests; exit; }
command -v zstd >/dev/null || { skip keyreach "zstd is not installed"; done_tests; exit; }
needuserns keyreach

mkdir -p "$T/keys" && chmod 700 "$T/keys"
ssh-keygen -q -t ed25519 -N '' -C night -f "$T/keys/key"
echo "night@ci $(cut -d' ' -f1,2 "$T/keys/key.pub")" > "$T/allowed"
mkdir -p "$T/p/ws" "$T/p/own" "$T/p/data" "$T/p/skill" "$T/image"
echo hi > "$T/p/ws/a.txt"
printf -- '---\nname: skill\ndescription: a skill\n---\nDo it.\n' > "$T/p/skill/SKILL.md"
manifest() {  # FILE [EXTRA-JOB-YAML]: one job, with a mount, a skill; the key's lines in replies
	python3 - "$1" "$T/keys/key" "${2:-}" <<'PY'
import json, sys
out, key, extra = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [l for l in open(key).read().splitlines() if l and not l.startswith("-----")]
body = "".join(lines)
m = {"version": 1, "name": "k", "workspace": "ws",
     "sandbox": {"backend": "namespace", "network": "none", "timeout": "30s",
                 "mounts": [{"source": "./data", "target": "/data", "mode": "ro"}]},
     "models": {"s": {"provider": "scripted", "replies": [
         {"text": "the key: " + lines[1] + " and " + body},
         {"tool_calls": [{"name": "shell", "arguments": {"command": "echo " + lines[2] + "; echo " + body}}]},
         {"tool_calls": [{"name": "final_result", "arguments": {"note": lines[3]}}]}]}},
     "workers": {"w": {"model": "s", "instructions": "Do it.", "tools": ["shell"], "skills": ["skill"],
                       "approval": {"rules": [{"tool": "shell", "command": "echo *", "decision": "allow"}]},
                       "output": {"type": "object", "properties": {"note": {"type": "string"}}}}},
     "jobs": {"j": {"worker": "w", "input": "Go " + lines[1]}}}
if extra:
    m["jobs"]["j2"] = json.loads(extra)
open(out, "w").write(json.dumps(m, indent=1))
PY
}
manifest "$T/p/m.yaml"
"$NS" validate "$T/p/m.yaml" >/dev/null 2>"$T/err"
expect_rc "the manifest is valid" 0 $?

runs() { find "$T/runs" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
refused() {  # NAME KEY WHY [MANIFEST]
	local before=$(runs)
	out=$("$NS" run "${4:-$T/p/m.yaml}" --out "$T/runs" --sign "$2" 2>"$T/err")
	expect_rc "$1: exit 2" 2 $?
	expect_grep "$1: names the key and why" "signing key .*: .*$3" "$T/err"
	expect_grep "$1: says where to keep it" "keep it where no step sees it" "$T/err"
	expect_eq "$1: no run made" "$before" "$(runs)"
	expect_nogrep "$1: the message never quotes the key" "$(sed -n 2p "$T/keys/key")" "$T/err"
	before=$(runs)
	NIGHTSHIFT_SIGNING_KEY=$2 "$NS" run "${4:-$T/p/m.yaml}" --out "$T/runs" >/dev/null 2>"$T/err"
	expect_rc "$1, from NIGHTSHIFT_SIGNING_KEY: exit 2" 2 $?
	expect_eq "$1, from NIGHTSHIFT_SIGNING_KEY: no run made" "$before" "$(runs)"
}
cp "$T/keys/key" "$T/p/ws/key" && chmod 600 "$T/p/ws/key"
refused "in the workspace" "$T/p/ws/key" "workspace"
mkdir -p "$T/p/ws/deep/er" && mv "$T/p/ws/key" "$T/p/ws/deep/er/key"
refused "deep in the workspace" "$T/p/ws/deep/er/key" "could read it"
rm -r "$T/p/ws/deep"
cp "$T/keys/key" "$T/p/data/key" && chmod 600 "$T/p/data/key"
refused "in a mount source" "$T/p/data/key" "could read it .*/data/key"
rm "$T/p/data/key"
cp "$T/keys/key" "$T/p/skill/key"
refused "in a skill folder" "$T/p/skill/key" "skill"
rm "$T/p/skill/key"
cp "$T/keys/key" "$T/p/own/key"
manifest "$T/p/m2.yaml" '{"worker": "w", "input": "x", "workspace": "own"}'
refused "in a job's own workspace" "$T/p/own/key" "job j2 could read it" "$T/p/m2.yaml"
rm "$T/p/own/key"
ln -s "$T/p/data" "$T/keys/datalink" && cp "$T/keys/key" "$T/p/data/key"
refused "reached through a symlink" "$T/keys/datalink/key" "/data/key"
rm "$T/p/data/key" "$T/keys/datalink"
ln "$T/keys/key" "$T/p/hardlink"
refused "with a second name (a hard link)" "$T/keys/key" "hard links"
rm "$T/p/hardlink"
# A root file system folder as the image: everything in it is shown.
mkdir -p "$T/image/opt"
cp "$T/keys/key" "$T/image/opt/key"
manifest "$T/p/m3.yaml" "{\"worker\": \"w\", \"input\": \"x\", \"sandbox\": {\"image\": \"$T/image\"}}"
refused "in an image folder" "$T/image/opt/key" "job j2 could read it .*at /opt/key" "$T/p/m3.yaml"
# A delegate runs in its own worker's sandbox (and its caller's workspace), not the job's: a
# delegate worker, or a delegate of a delegate, whose sandbox shows the key is refused too.
dmanifest() {  # FILE HELPER-SANDBOX-JSON [DEPTH]: job j's worker delegates to helper (through DEPTH-1 others)
	python3 - "$@" <<'PY2'
import json, sys
out, sbx = sys.argv[1], json.loads(sys.argv[2])
depth = int(sys.argv[3]) if len(sys.argv) > 3 else 1
m = {"version": 1, "name": "k", "workspace": "ws",
     "sandbox": {"backend": "namespace", "network": "none", "timeout": "30s"},
     "models": {"s": {"provider": "scripted", "replies": [
         {"tool_calls": [{"name": "final_result", "arguments": {}}]}]}},
     "workers": {"w": {"model": "s", "instructions": "Do it.", "tools": [], "delegates": ["d1"],
                       "approval": {"default": "allow"}}},
     "jobs": {"j": {"worker": "w", "input": "Go"}}}
for i in range(1, depth + 1):
    m["workers"]["d%d" % i] = {"model": "s", "instructions": "Help.", "tools": ["shell"],
                               "approval": {"default": "allow"}}
    if i < depth:
        m["workers"]["d%d" % i]["delegates"] = ["d%d" % (i + 1)]
m["workers"]["d%d" % depth]["sandbox"] = sbx
open(out, "w").write(json.dumps(m, indent=1))
PY2
}
dmanifest "$T/p/d0.yaml" '{}'
"$NS" run "$T/p/d0.yaml" --out "$T/druns" --sign "$T/keys/key" >/dev/null 2>"$T/err"
expect_rc "a delegate whose sandbox shows nothing of the key: taken" 0 $?
dmanifest "$T/p/d1.yaml" "{\"mounts\": [{\"source\": \"$T/keys\", \"target\": \"/keys\"}]}"
refused "a delegate's mount of the key's folder" "$T/keys/key" "worker d1 .as a delegate. could read it .*/keys/key" "$T/p/d1.yaml"
dmanifest "$T/p/d2.yaml" "{\"mounts\": [{\"source\": \"$T/keys\", \"target\": \"/k\", \"mode\": \"ro\"}]}" 3
refused "a delegate's delegate's mount (depth 3)" "$T/keys/key" "worker d3 .as a delegate. could read it" "$T/p/d2.yaml"
dmanifest "$T/p/d3.yaml" '{"backend": "none"}'
refused "a delegate with backend none" "$T/keys/key" "worker d1 .as a delegate. could read it" "$T/p/d3.yaml"
dmanifest "$T/p/d4.yaml" "{\"image\": \"$T/image\"}"
refused "a delegate with an image folder holding the key" "$T/image/opt/key" "worker d1 .as a delegate. could read it .*at /opt/key" "$T/p/d4.yaml"
# System folders image: host shows read-only, whatever the key's mode.
for d in /opt /usr/local /etc; do
	sub=$d/nightshift-keyreach-$$
	if ! mkdir -m 700 "$sub" 2>/dev/null; then
		skip "keyreach $d" "cannot write in $d here (not root): a key there is not tried"
		continue
	fi
	cp "$T/keys/key" "$sub/key" && chmod 600 "$sub/key"
	if [ "$d" = /etc ]; then
		# /etc: what others may not read is masked in the sandbox; what they may is shown
		out=$("$NS" run "$T/p/m.yaml" --out "$T/runs" --sign "$sub/key" 2>"$T/err")
		expect_rc "/etc, a folder others cannot enter (masked in steps): taken" 0 $?
		chmod 755 "$sub" && chmod 644 "$sub/key"
		refused "/etc, readable by others" "$sub/key" "shows it to every step at $sub/key"
	else
		refused "$d (0600 in a 0700 folder)" "$sub/key" "shows it to every step at $sub/key"
	fi
	rm -rf "$sub"
done

# A key no step sees is taken, and its bytes never reach the run or stderr.
run=$("$NS" run "$T/p/m.yaml" --out "$T/runs" --sign "$T/keys/key" 2>"$T/err")
expect_rc "a key outside what steps see: the run succeeds" 0 $?

"$NS" audit "$run" --allowed-signers "$T/allowed" 2>/dev/null
expect_rc "and it is signed" 0 $?
mkdir -p "$T/all"
# manifest/ holds the test's own manifest, which carries the lines for the scripted model to say
(cd "$run" && find . -type f ! -name '*.tar.zst' ! -path './manifest/*') | while read -r f; do
	case $f in
	*.zst) zstd -dcq "$run/$f" > "$T/all/$(echo "$f" | tr / _)" ;;
	*) cp "$run/$f" "$T/all/$(echo "$f" | tr / _)" ;;
	esac
done
"$NS" report "$run" --out "$T/all/report.html" >/dev/null 2>>"$T/err"
"$NS" audit "$run" >"$T/all/audit.txt" 2>>"$T/err"
cp "$T/err" "$T/all/stderr"
check "the model's text was recorded" grep -rq "the key:" "$T/all"
check "the step's output was recorded" grep -rq '"exit_code":0' "$T/all"
leaks=""
while read -r line; do
	[ -n "$line" ] && case $line in -----*) ;; *) grep -rlF -- "$line" "$T/all" >/dev/null && leaks="$leaks ${line:0:12}" ;; esac
done < "$T/keys/key"
expect_eq "no line of the key in events, run.json, outputs, the report, audit or stderr" "" "$leaks"
check "where it was, the mask" grep -rqF "[secret:signing key]" "$T/all"
done_tests
