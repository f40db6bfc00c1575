#!/usr/bin/env bash
# flagforms: every flag that takes a value, in every command, takes it as "--flag VALUE" and as
# "--flag=VALUE" with the same exit code and the same effect (small runs on the scripted model);
# "--flag=" (an empty value) and "--flag=x" for a flag that takes none are refused, exit 2,
# naming the flag. The tables below are checked against each command's --help: a flag the help
# names that the table lacks fails here.
. "$(dirname "$0")/lib.sh"

# COMMAND: the flags that take a value | the flags that take none
flags() {
	cat <<'F'
run --out --events --sign --shard --from --allowed-signers --resume --job --set --model | --quiet --fail-on-deny
validate --set |
doctor --out --set | --json
policy --worker --tool --command --path --input --args --run --set | --json
replay --manifest --out --job --events --set --max-unpack | --strict --continue-live --quiet
audit --allowed-signers --job --tool --decision --grep --max-unpack | --verify --net --json
restore --step --to --workspace --max-unpack | --force
diff --job --step --workspace --max-unpack |
report --out --max-unpack |
export --otlp --max-unpack |
plan --shards --set | --json --after
merge --out --sign --allowed-signers |
finalize --sign |
prune --keep --older-than | --dry-run
init --dir | --list
config |
F
}

# --- refusals, and the tables against --help ---
while read -r cmd rest; do
	vals=${rest%%|*} novals=${rest#*|}
	for f in $vals; do
		"$NS" "$cmd" "$f=" >/dev/null 2>"$T/err"
		expect_rc "$cmd $f=: refused" 2 $?
		expect_grep "$cmd $f=: names the flag" "$cmd: $f needs " "$T/err"
		"$NS" "$cmd" "$f" >/dev/null 2>"$T/err"
		expect_rc "$cmd $f (no value at the end): refused" 2 $?
		expect_grep "$cmd $f (no value at the end): names the flag" "$cmd: $f needs " "$T/err"
	done
	for f in $novals; do
		"$NS" "$cmd" "$f=x" >/dev/null 2>"$T/err"
		expect_rc "$cmd $f=x: refused" 2 $?
		expect_grep "$cmd $f=x: says it takes no value" "$cmd: $f takes no value" "$T/err"
	done
	"$NS" "$cmd" --no-such-flag=1 >/dev/null 2>"$T/err"
	expect_rc "$cmd --no-such-flag=1: refused" 2 $?
	expect_grep "$cmd --no-such-flag=1: unknown" "$cmd: unknown flag --no-such-flag" "$T/err"
	# each --word of the help is a flag of the table, or one the command does not take (named
	# there as another command's: e.g. plan's help names run's --from)
	for f in $("$NS" "$cmd" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		[ "$f" = --help ] && continue
		case " $vals $novals " in *" $f "*) continue ;; esac
		"$NS" "$cmd" "$f=" >/dev/null 2>"$T/err"
		expect_grep "$cmd --help names $f: in the table, or not a flag of $cmd" "$cmd: unknown flag $f" "$T/err"
	done
done < <(flags)

# forms NAME WANT PROBE ARGS...: one word of ARGS is @FLAG=VALUE; the command runs with FLAG VALUE
# and with FLAG=VALUE: both exit WANT, and PROBE (given the stdout and stderr files, run after
# each) prints the same for both.
forms() {
	local name=$1 want=$2 probe=$3 a rc p1 p2
	shift 3
	local sp=() eq=()
	for a in "$@"; do
		if [[ $a == @* ]]; then
			a=${a#@}
			sp+=("${a%%=*}" "${a#*=}") eq+=("$a")
		else
			sp+=("$a") eq+=("$a")
		fi
	done
	"$NS" "${sp[@]}" >"$T/f.out" 2>"$T/f.err"
	rc=$?
	expect_rc "$name: ${sp[*]}" "$want" $rc
	p1=$($probe "$T/f.out" "$T/f.err")
	"$NS" "${eq[@]}" >"$T/f.out" 2>"$T/f.err"
	rc=$?
	expect_rc "$name: ${eq[*]}" "$want" $rc
	p2=$($probe "$T/f.out" "$T/f.err")
	expect_eq "$name: same effect" "$p1" "$p2"
	[ -n "$p1" ] || { _fail=$((_fail + 1)); echo "FAIL $name: the probe saw nothing"; }
}

# Probes. out: stdout, with run directories' ids and temporary paths made stable.
out() { sed -e "s|$T|T|g" -e 's/[0-9]\{8\}T[0-9]\{6\}Z-[0-9a-f]*/RUNID/g' "$1"; }
# err: stderr, the same way (the usage messages, a doctor's lines); both: stdout then stderr
err() { out "$2"; }
both() { out "$1"; echo --; out "$2"; }
# runfx: what the run printed on stdout did: where, which jobs with which status and input, signed.
runfx() {
	local dir
	dir=$(tail -1 "$1")
	[ -d "$dir" ] || { echo "no run: $(cat "$2")"; return; }
	python3 - "$dir" "$T" <<'EOF'
import json, os, subprocess, sys
run, tmp = sys.argv[1], sys.argv[2]
info = json.load(open(os.path.join(run, "run.json")))
print("in", os.path.dirname(run).replace(tmp, "T"), "signed", os.path.exists(os.path.join(run, "SHA256SUMS.sig")))
print("inputs", json.dumps(info.get("inputs"), sort_keys=True))
for job, j in sorted(info["jobs"].items()):
    ev = subprocess.run(["zstd", "-dcq", os.path.join(run, j.get("run", ""), "jobs", job, "events.jsonl.zst")],
                        capture_output=True, text=True).stdout.splitlines()
    start = [json.loads(l) for l in ev if '"type":"job_start"' in l]
    print(job, j["status"], start[0]["input"] if start else "-")
EOF
}
# lsfx: the files under $T/dest (where the command wrote) and their size, emptied after.
lsfx() { (cd "$T/dest" && find . -type f | sort && find . -type f -exec cat {} + | wc -c); rm -rf "$T/dest"; mkdir "$T/dest"; }
mkdir "$T/dest"

# --- a manifest: job a says hello to an input, job b makes a call the rules deny ---
mkdir -p "$T/m/ws"
echo seed >"$T/m/ws/seed.txt"
cat >"$T/m/m.yaml" <<'EOF'
version: 1
name: forms
workspace: ws
models:
  default:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "ls" } } ] }
      - { tool_calls: [ { name: write_file, arguments: { path: "out/a.txt", content: "a" } } ] }
      - { tool_calls: [ { name: final_result, arguments: { word: ok } } ] }
  denied:
    provider: scripted
    replies:
      - { tool_calls: [ { name: shell, arguments: { command: "rm seed.txt" } } ] }
      - { tool_calls: [ { name: final_result, arguments: { word: ok } } ] }
sandbox: { backend: namespace, network: none, timeout: 30s }
workers:
  w:
    instructions: "Do it."
    tools: [shell, write_file]
    approval:
      rules:
        - { tool: shell, command: "ls", decision: allow }
        - { tool: write_file, path: "out/**", decision: allow }
    output: { type: object, required: [word], properties: { word: { type: string } } }
  helper:
    instructions: "Help."
    output: { type: object, required: [word], properties: { word: { type: string } } }
jobs:
  a: { worker: w, input: "Hello ${{ inputs.who }}" }
  b: { worker: w, model: denied, input: "Bye" }
EOF
cat >"$T/m/script.yaml" <<'EOF'
- { tool_calls: [ { name: final_result, arguments: { word: other } } ] }
EOF
M=$T/m/m.yaml
have_keys=0
if command -v ssh-keygen >/dev/null; then
	ssh-keygen -q -t ed25519 -N '' -C night -f "$T/key" && echo "night@ci $(cut -d' ' -f1,2 "$T/key.pub")" >"$T/allowed" && have_keys=1
fi

# --- run ---
forms "run --out" 0 runfx run "$M" @--out="$T/o1" --set who=x --quiet
forms "run --set" 0 runfx run "$M" --out "$T/o2" @--set=who=K=V --quiet
forms "run --job" 0 runfx run "$M" --out "$T/o3" --set who=x @--job=b --quiet
forms "run --model" 0 runfx run "$M" --out "$T/o4" --set who=x @--model=default=scripted:"$T/m/script.yaml" --quiet
forms "run --shard" 0 runfx run "$M" --out "$T/o5" --set who=x @--shard=2/2 --quiet
forms "run --events" 0 runfx run "$M" --out "$T/o6" --set who=x @--events="$T/ev.jsonl" --quiet
expect_grep "run --events=PATH: the events are written there" '"type":"job_start"' "$T/ev.jsonl"
forms "run --fail-on-deny, for contrast" 1 runfx run "$M" --out "$T/o7" --set who=x --fail-on-deny @--job=b --quiet
base=$(ls -d "$T/o1"/*/ | head -1)
forms "run --from" 0 runfx run "$M" --out "$T/o8" --set who=x @--from="$base" --quiet
forms "run --resume" 0 runfx run "$M" --out "$T/o9" --set who=x @--resume="$base" --quiet
"$NS" run "$M" -j 2 --out "$T/o10" --set who=x --quiet >/dev/null 2>&1
expect_rc "run -j 2 (a short flag, as it was)" 0 $?
if [ $have_keys = 1 ]; then
	forms "run --sign" 0 runfx run "$M" --out "$T/s1" --set who=x @--sign="$T/key" --quiet
	signed=$(ls -d "$T/s1"/*/ | head -1)
	forms "run --allowed-signers" 0 runfx run "$M" --out "$T/s2" --set who=x --from "$signed" @--allowed-signers="$T/allowed" --quiet
else
	skip "run --sign, --allowed-signers" "ssh-keygen is not installed"
fi

# --- validate, plan, policy, doctor ---
forms "validate --set" 0 err validate "$M" @--set=who=K=V
forms "plan --shards" 0 out plan "$M" @--shards=2 --json --set who=x
forms "plan --set" 0 out plan "$M" --shards 2 --json @--set=who=x
forms "policy --worker" 0 out policy "$M" @--worker=w --tool shell --command ls --set who=x
forms "policy --tool" 0 out policy "$M" --worker w @--tool=write_file --path out/x --set who=x
forms "policy --command (with = and spaces in the value)" 0 out policy "$M" --worker w --tool shell @--command="ls x=1; rm -rf /" --set who=x
forms "policy --path" 0 out policy "$M" --worker w --tool write_file @--path=etc/x --set who=x
forms "policy --input" 0 out policy "$M" --worker w --tool helper @--input=hi=there --set who=x
forms "policy --args" 0 out policy "$M" --worker w --tool mcp__fs__read @--args='{"a":1}' --set who=x
forms "policy --set" 0 out policy "$M" --worker w --tool shell --command ls @--set=who=x --json
forms "policy --run" 0 both policy "$M" @--run="$base" --set who=x
forms "doctor --set" "$("$NS" doctor "$M" --set who=x --out "$T/d" >/dev/null 2>&1; echo $?)" err doctor "$M" @--set=who=x --out "$T/d"
forms "doctor --out" "$("$NS" doctor "$M" --set who=x --out "$T/d" >/dev/null 2>&1; echo $?)" err doctor "$M" --set who=x @--out="$T/d"

# --- the readers of a run: audit, diff, restore, report, export ---
forms "audit --job" 0 out audit "$base" @--job=a
forms "audit --tool" 0 out audit "$base" @--tool=write_file
forms "audit --decision" 0 out audit "$base" @--decision=deny
forms "audit --grep" 0 out audit "$base" @--grep=rm
forms "audit --max-unpack" 0 out audit "$base" @--max-unpack=64M
if [ $have_keys = 1 ]; then
	forms "audit --allowed-signers" 0 both audit "$signed" @--allowed-signers="$T/allowed"
fi
forms "diff --job" 0 both diff "$base" @--job=a
forms "diff --step" 0 out diff "$base" @--step=2
forms "diff --workspace (none such: the same refusal)" 2 err diff "$base" @--workspace=nope --step 1
forms "diff --max-unpack" 0 out diff "$base" --step end @--max-unpack=64M
forms "restore --step" 0 lsfx restore "$base" @--step=2 --to "$T/dest/w"
forms "restore --to" 0 lsfx restore "$base" --step end @--to="$T/dest/w"
forms "restore --workspace (none such: the same refusal)" 2 err restore "$base" --step 1 --to "$T/dest/w" @--workspace=nope
forms "restore --max-unpack" 0 lsfx restore "$base" --step 1 --to "$T/dest/w" @--max-unpack=64M
forms "report --out" 0 lsfx report "$base" @--out="$T/dest/r.html"
forms "report --max-unpack" 0 lsfx report "$base" --out "$T/dest/r.html" @--max-unpack=64M
forms "export --otlp" 0 lsfx export "$base" @--otlp="$T/dest/t.json"
forms "export --max-unpack" 0 lsfx export "$base" --otlp "$T/dest/t.json" @--max-unpack=64M

# --- replay ---
forms "replay --out" 0 runfx replay "$base" @--out="$T/r1" --quiet
forms "replay --job" 0 runfx replay "$base" --out "$T/r2" @--job=b --quiet
forms "replay --manifest" 0 runfx replay "$base" --out "$T/r3" @--manifest="$M" --set who=x --quiet
forms "replay --set" 0 runfx replay "$base" --out "$T/r4" --manifest "$M" @--set=who=K=V --quiet
forms "replay --events" 0 runfx replay "$base" --out "$T/r5" @--events="$T/rev.jsonl" --quiet
expect_grep "replay --events=PATH: the events are written there" '"type":"job_start"' "$T/rev.jsonl"
forms "replay --max-unpack" 0 runfx replay "$base" --out "$T/r6" @--max-unpack=64M --quiet

# --- merge, finalize, prune, init ---
mkdir -p "$T/sh"
s1=$("$NS" run "$M" --out "$T/sh" --set who=x --shard 1/2 --quiet 2>/dev/null)
s2=$("$NS" run "$M" --out "$T/sh" --set who=x --shard 2/2 --quiet 2>/dev/null)
forms "merge --out" 0 runfx merge "$s1" "$s2" @--out="$T/mg"
if [ $have_keys = 1 ]; then
	forms "merge --sign" 0 runfx merge "$s1" "$s2" --out "$T/mg2" @--sign="$T/key"
	forms "merge --allowed-signers" 0 runfx merge "$(ls -d "$T/s1"/*/ | head -1)" --out "$T/mg3" @--allowed-signers="$T/allowed"
	# finalize seals a run without run.json: the same copy cut short for each form
	cut=$(ls -d "$T/o2"/*/ | head -1)
	finfx() { ls "$T/cut" 2>/dev/null | sort; rm -rf "$T/cut"; cp -r "$cut" "$T/cut"; rm -f "$T/cut/run.json" "$T/cut/SHA256SUMS"; }
	finfx >/dev/null
	forms "finalize --sign" 0 finfx finalize "$T/cut" @--sign="$T/key"
fi
forms "prune --keep" 0 out prune "$T/o3" @--keep=1 --dry-run
forms "prune --older-than" 0 both prune "$T/o3" @--older-than=7d --dry-run
forms "init --dir" 0 lsfx init fix-lint @--dir="$T/dest"

done_tests
