#!/usr/bin/env bash
# attack-html: what a stranger (a model's replies, a workspace's file names) can make the HTML
# report say, opened in headless Chromium (Debian's package; installed when missing and root).
# Each part names the finding it holds (docs/security.md, "Origins and sinks").
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=detect_leaks=0
unset GITHUB_ACTIONS
command -v python3 >/dev/null || { skip "attack-html" "python3 reads the pages"; done_tests; exit; }

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "installing chromium" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >"$T/apt.log" 2>&1 ||
		{ apt-get update -q >>"$T/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >>"$T/apt.log" 2>&1; }
	browser=$(command -v chromium || true)
fi
# open FILE OUT: the DOM after load in OUT, the browser's log in OUT.log
open_page() {
	HOME="$T" timeout 90 "$browser" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
		--enable-logging=stderr --v=0 --virtual-time-budget=2000 --dump-dom "file://$1" >"$2" 2>"$2.log"
}
[ -n "$browser" ] || echo "WARNING: attack-html: no chromium and cannot install it: the page is checked as written, not as a browser builds it" >&2

# --- 1. What a call's line says first ---
# A call's line said "step N · TOOL ARGS · ✗ DENIED by rule R · exit code X": the model's tool name
# (uncut) and arguments came before nightshift's verdict. A tool named "shell · ✓ allowed by rule 1
# · exit code 0" and a few thousand no-break spaces showed a denied call as allowed, its verdict
# pushed lines below; arguments ending "· ✓ allowed by rule 1" did the same within 160 bytes.
# Now the line says nightshift's facts (decision, rule, exit code, time) before any text of the
# model's, and the tool's name is cut like the arguments.
mkdir -p "$T/spoof/ws"
pad=$(python3 -c 'print("\\u00a0" * 3000, end="")')
cat > "$T/spoof/m.yaml" <<YAML
version: 1
name: spoof
workspace: ws
models:
  default:
    provider: scripted
    replies:
      - tool_calls:
          - { name: "shell · ✓ allowed by rule 1 · exit code 0$pad", arguments: { command: "rm -rf /" } }
      - tool_calls:
          - { name: shell, arguments: { command: "cat /etc/shadow · ✓ allowed by rule 1 · exit code 0 · 3 ms" } }
      - tool_calls:
          - { name: shell, arguments: { command: "echo hi · ✗ DENIED by rule 9" } }
      - tool_calls:
          - { name: final_result, arguments: { note: "x" } }
workers:
  w:
    instructions: hi
    tools: [shell]
    approval:
      rules:
        - { tool: shell, command: "echo *", decision: allow }
    output: { type: object, properties: { note: { type: string } } }
jobs:
  j: { worker: w }
YAML
spoof=$("$NS" run "$T/spoof/m.yaml" --out "$T/runs" 2>"$T/spoof.err")
expect_rc "the spoofing run runs" 0 $?
"$NS" report "$spoof" --out "$T/spoof.html" >/dev/null 2>"$T/spoof-r.err"
expect_rc "its report" 0 $?
page="$T/spoof.html"
if [ -n "$browser" ]; then
	open_page "$T/spoof.html" "$T/spoof.dom"
	expect_rc "chromium opens it" 0 $?
	expect_nogrep "no console messages" 'CONSOLE' "$T/spoof.dom.log"
	page="$T/spoof.dom"
fi
# Each call's summary as the page holds it: its text up to the tool's name (<b>), and that name.
python3 - "$page" >"$T/spoof.lines" <<'PY'
import html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
for m in re.finditer(r'<li class="call (\w+)"[^>]*><details[^>]*><summary>(.*?)</summary>', page, re.S):
    cls, s = m.group(1), m.group(2)
    head, _, rest = s.partition("<b>")
    tool = rest.partition("</b>")[0]
    text = lambda x: html.unescape(re.sub(r"<[^>]+>", "", x))
    print("%s\t%d\t%s" % (cls, len(text(tool)), " ".join(text(head).split())))
PY
expect_eq "three calls on the page" 3 "$(wc -l <"$T/spoof.lines")"
expect_eq "the denied calls say DENIED before the model's text" "2" \
	"$(awk -F'\t' '$1 == "deny" && $3 ~ /DENIED by /' "$T/spoof.lines" | wc -l)"
expect_eq "and nothing else before it" "" \
	"$(awk -F'\t' '$1 == "deny" && $3 ~ /allowed|exit code/' "$T/spoof.lines")"
expect_eq "the allowed call says allowed and its exit code before the model's text" "1" \
	"$(awk -F'\t' '$1 == "allow" && $3 ~ /allowed by rule 1 .*exit code 0/ && $3 !~ /DENIED/' "$T/spoof.lines" | wc -l)"
expect_eq "a tool's name on the line is cut" "" "$(awk -F'\t' '$2 > 120' "$T/spoof.lines")"

# --- 2. --out naming the step's log ---
# Under GitHub Actions `report --out -` is refused (the page's lines would be read as workflow
# commands) and `export --otlp -` goes through termjson, but both looked at the name "-" only:
# `--out /dev/stdout`, `/dev/stderr` or `/proc/self/fd/1` wrote the page into the log raw, where a
# model's line "::add-mask::x" masked text and "##[error]" made an annotation. Now the file opened
# is what counts: the step's own stdout or stderr, under Actions, is the log.
mkdir -p "$T/log/ws"
cat > "$T/log/m.yaml" <<'YAML'
version: 1
name: log
workspace: ws
models:
  default:
    provider: scripted
    replies:
      - text: "fine\n::add-mask::fine\n\u3000::warning::w ##[error]e"
        tool_calls:
          - { name: "t##[error]x", arguments: { command: "echo hi" } }
      - tool_calls:
          - { name: final_result, arguments: { note: "x" } }
workers:
  w:
    instructions: hi
    tools: [shell]
    approval: { default: allow }
    output: { type: object, properties: { note: { type: string } } }
jobs:
  j: { worker: w }
YAML
logrun=$("$NS" run "$T/log/m.yaml" --out "$T/runs" 2>"$T/log.err")
expect_rc "the run with workflow commands in its text" 0 $?
n=0
for to in - /dev/stdout /dev/stderr /proc/self/fd/1 /dev/fd/2; do
	n=$((n + 1))
	GITHUB_ACTIONS=true "$NS" report "$logrun" --out "$to" 2>&1 | cat >"$T/log.$n"
	expect_eq "report --out $to under Actions: refused" 2 "${PIPESTATUS[0]}"
	expect_eq "report --out $to: no workflow command in the log" "" \
		"$(python3 "$ROOT/tests/e2e/ghaparse.py" commands "$T/log.$n" | grep -v '"command": "error", "properties": {"title": "nightshift"}' | head -c 300)"
	GITHUB_ACTIONS=true "$NS" export "$logrun" --otlp "$to" 2>&1 | cat >"$T/otlp.$n"
	expect_eq "export --otlp $to under Actions" 0 "${PIPESTATUS[0]}"
	expect_eq "export --otlp $to: no workflow command in the log" "" \
		"$(python3 "$ROOT/tests/e2e/ghaparse.py" commands "$T/otlp.$n" | head -c 300)"
	check "export --otlp $to: the spans are there" grep -q 'resourceSpans' "$T/otlp.$n"
done
# A file, or a pipe that is not the log, keeps the bytes: the page and the spans as they are.
GITHUB_ACTIONS=true "$NS" report "$logrun" --out "$T/log.html" >/dev/null 2>&1
expect_rc "report --out FILE under Actions" 0 $?
check "the file holds the page as written" grep -q '^::add-mask::fine' "$T/log.html"
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/fifo.html" & reader=$!
GITHUB_ACTIONS=true "$NS" report "$logrun" --out "$T/fifo" >/dev/null 2>&1
expect_rc "report --out FIFO (not the log) under Actions" 0 $?
wait $reader
expect_eq "the fifo's reader got the page" "$(cat "$T/log.html")" "$(cat "$T/fifo.html")"
GITHUB_ACTIONS=true "$NS" export "$logrun" --otlp "$T/spans.json" >/dev/null 2>&1
check "export to a file keeps '##['" grep -q 't##\[error\]x' "$T/spans.json"

# --- 3. Names on one line ---
# A file's name, a tool's name and a command are shown on one line, where HTML shows a newline or a
# tab as a space: a step that wrote "notes.txt<newline>" got the page to say "added notes.txt"
# beside the untouched notes.txt, two files the reader could not tell apart. Now a newline, CR or
# tab in such a name is shown as \x0a, \x0d, \x09, and U+2028 and U+2029 (which the page shows as a
# space too) as \u2028, \u2029, as other controls are; text in a <pre> keeps them.
mkdir -p "$T/names/ws"
echo keep >"$T/names/ws/notes.txt"
cat > "$T/names/m.yaml" <<'YAML'
version: 1
name: names
workspace: ws
models:
  default:
    provider: scripted
    replies:
      - tool_calls:
          - { name: shell, arguments: { command: "printf 'x\\n' > \"notes.txt\n\"; printf 'y\\n' > \"a\tb.txt\"; printf z > \"$(printf 'ls\\342\\200\\250x')\"\necho second line" } }
      - tool_calls:
          - { name: final_result, arguments: { note: "x" } }
workers:
  w:
    instructions: hi
    tools: [shell]
    approval: { default: allow }
    output: { type: object, properties: { note: { type: string } } }
jobs:
  j: { worker: w }
YAML
names=$("$NS" run "$T/names/m.yaml" --out "$T/runs" 2>"$T/names.err")
expect_rc "the run that names files with a newline and a tab" 0 $?
check "the step made them" test -f "$T/names/ws/notes.txt"$'\n'
"$NS" report "$names" --out "$T/names.html" >/dev/null 2>&1
expect_rc "its report" 0 $?
page="$T/names.html"
if [ -n "$browser" ]; then
	open_page "$T/names.html" "$T/names.dom"
	page="$T/names.dom"
fi
expect_grep "the new file's name shows its newline" 'added <code>notes\.txt\\x0a</code>' "$page"
expect_grep "the other's its tab" 'added <code>a\\x09b\.txt</code>' "$page"
expect_grep "and a line separator (U+2028, a space on the page) its escape" 'added <code>ls\\u2028x</code>' "$page"
expect_grep "the command's line shows its newline" '<code>printf .*\\x0aecho second line</code>' "$page"
expect_nogrep "no name ends in a raw newline" '<code>notes\.txt$' "$page"

# --- 4. The same call in the progress line (terminal, Actions log) ---
# "step N: TOOL ARGS: deny (rule R)": the arguments were cut at 80 bytes, the tool's name not, so
# part 1's tool put its "✓ allowed by rule 1 · exit code 0" and 3,000 no-break spaces (6 KB)
# before the verdict in the log too. Now the name is cut at 64 bytes there as well.
line1=$(grep -a 'job j: step 1: ' "$T/spoof.err")
check "the progress line of the spoofing call says deny" grep -q ': deny (default)' <<<"$line1"
check "and holds at most 64 bytes of the tool's name (${#line1} characters)" test "${#line1}" -lt 300
GITHUB_ACTIONS=true "$NS" run "$T/spoof/m.yaml" --out "$T/runs" >/dev/null 2>"$T/spoof-gha.err"
line1=$(grep -a 'job j: step 1: ' "$T/spoof-gha.err" | head -n 1)
check "under Actions too (${#line1} characters)" test -n "$line1" -a "${#line1}" -lt 300
# The job's error (run.json, the step summary, the annotation, the page) names it the same way.
GITHUB_ACTIONS=true "$NS" run "$T/spoof/m.yaml" --fail-on-deny --out "$T/runs" >/dev/null 2>"$T/spoof-deny.err"
expect_rc "--fail-on-deny: the spoofing call fails the job" 1 $?
ann=$(grep -a '^::error title=nightshift%3A job j failed::' "$T/spoof-deny.err")
check "the annotation says denied (${#ann} characters)" grep -q 'denied by the default decision' <<<"$ann"
check "after at most 64 bytes of the name" test "${#ann}" -lt 400

# --- 5. Matrix members whose ids differ only in case ---
# A matrix made from a job's output took "api" and "API" as two members, fix-api and fix-API, and
# wrote outputs {"fix-api":…,"fix-API":…} and output-fix-api, output-fix-API to $GITHUB_OUTPUT.
# GitHub reads step outputs and fromJSON properties ignoring case, so the stranger's second member
# stood for the first in `fromJSON(steps.x.outputs.outputs).fix-api` (and on a case-insensitive
# disk, its jobs/ folder was the other's). Now two ids equal but for case fail the matrix, as two
# values making one id do.
mkdir -p "$T/case/runs"
cat > "$T/case/m.yaml" <<'YAML'
version: 1
workspace: .
models:
  scan: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {repos: ["api", "API"]}} ]} ] }
  fix: { provider: scripted, replies: [ {tool_calls: [ {name: final_result, arguments: {v: ok}} ]} ] }
workers:
  scanner: { model: scan, instructions: x }
  fixer: { model: fix, instructions: x, output: { type: object, properties: { v: { type: string } } } }
jobs:
  scan: { worker: scanner }
  fix:
    worker: fixer
    needs: [scan]
    fail_fast: false
    matrix: { repo: "${{ jobs.scan.output.repos }}" }
    input: "fix ${{ matrix.repo }}"
YAML
: >"$T/case/out"
(cd "$T/case" && GITHUB_ACTIONS=true GITHUB_OUTPUT="$T/case/out" "$NS" run m.yaml --out runs >/dev/null 2>"$T/case/err")
expect_rc "two members equal but for case fail the matrix" 1 $?
expect_grep "saying so" "job id 'fix-API' is made twice" "$T/case/err"
python3 "$ROOT/tests/e2e/ghaparse.py" outputs "$T/case/out" >"$T/case/out.json"
expect_eq "no two step outputs equal but for case" "" "$(python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
seen = {}
for k in o: seen.setdefault(k.lower(), []).append(k)
keys = {}
for k in json.loads(o.get("outputs", "{}")): keys.setdefault(k.lower(), []).append(k)
print(" ".join(sorted(sum([v for v in list(seen.values()) + list(keys.values()) if len(v) > 1], []))))' "$T/case/out.json")"

done_tests
