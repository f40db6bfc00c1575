#!/usr/bin/env bash
# report and diff: the HTML page of a run, opened in headless Chromium (Debian's package, installed
# here when missing and root): no console errors, the page's own script runs under its CSP, a
# denial, a diff and the cost column are on it; a hostile run (markup and control characters in
# commands, outputs, model text and file names) runs no script and adds no element; a page whose
# escaping had failed is still held by the CSP. A screenshot is kept beside the binary.
# `nightshift diff` shows a step's changes as a unified diff that GNU patch applies.
. "$(dirname "$0")/lib.sh"
cd "$T"

# --- runs: the shipped example, and a hostile one -------------------------------------------------
cp -r "$ROOT/examples/hello" hello
rm -rf hello/runs hello/workspace/reports
hello=$("$NS" run hello/nightshift.yaml --out "$T/runs" 2>"$T/hello.err")
expect_rc "example runs" 0 $?

mkdir -p evil/ws
printf 'line one\nline two\n' >evil/ws/notes.txt
cat >evil/m.yaml <<'EOF'
version: 1
name: evil
workspace: ws
models:
  default:
    provider: scripted
    replies:
      - text: "</pre></details><script>document.title='pwned-text'</script>\u202Egnp.exe\u001b[31m"
        tool_calls:
          - name: shell
            arguments: { command: "printf '<script>document.title=\"pwned-out\"</script><img src=x onerror=alert(1)>\\033]0;t\\007' ; printf 'line one\\nline 2\\n' > notes.txt; echo '<i>bold</i>' > '<i>x&amp;.txt'" }
      - tool_calls:
          - { name: shell, arguments: { command: "rm -rf / <img src=x onerror=alert(2)>" } }
      - tool_calls:
          - { name: final_result, arguments: { note: "<iframe src=javascript:alert(3)>" } }
workers:
  w:
    instructions: hi
    tools: [shell]
    approval:
      rules:
        - { tool: shell, command: "printf *", decision: allow }
        - { tool: shell, command: "echo *", decision: allow }
    output: { type: object, properties: { note: { type: string } } }
jobs:
  evil: { worker: w }
EOF
evil=$("$NS" run evil/m.yaml --out "$T/runs" 2>"$T/evil.err")
expect_rc "hostile run runs" 0 $?

# --- report: exit codes and files -----------------------------------------------------------------
page=$("$NS" report "$hello" 2>"$T/r.err")
expect_rc "report of a run" 0 $?
expect_eq "report beside the run by default" "$hello.html" "$page"
"$NS" report "$T" >/dev/null 2>"$T/r2.err"
expect_rc "report of a folder that is not a run" 2 $?
"$NS" report "$hello" --out "$T/no/such/dir/r.html" >/dev/null 2>"$T/r3.err"
expect_rc "report to a folder that does not exist" 1 $?
"$NS" report "$evil" --out "$T/evil.html" >/dev/null
expect_rc "report of the hostile run" 0 $?
expect_eq "stdout report" "$(cat "$hello.html")" "$("$NS" report "$hello" --out -)"
expect_eq "one script on the hostile page" 1 "$(grep -o '<script>' "$T/evil.html" | wc -l)"
expect_eq "and one data block, no other script element" "2 1" \
	"$(grep -o '<script' "$T/evil.html" | wc -l) $(grep -o '<script type="application/json" id="data">' "$T/evil.html" | wc -l)"
expect_eq "no '<' inside the data block" "" \
	"$(sed -n 's|.*<script type="application/json" id="data">\(.*\)</script>.*|\1|p' "$T/evil.html" | tr -cd '<')"
expect_grep "the hostile output is in the data block, escaped" '\\u003cscript>document.title=\\"pwned-out' "$T/evil.html"
expect_nogrep "no markup from the run" '<img|<iframe|<i>' "$T/evil.html"
expect_grep "escaped markup from the run" '&lt;script&gt;document.title=' "$T/evil.html"
expect_grep "bidi override shown as an escape" '\\u202e' "$T/evil.html"
expect_nogrep "no raw ESC" $'\x1b' "$T/evil.html"
expect_grep "a policy that allows nothing from outside" "default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; script-src 'sha256-" "$T/evil.html"
expect_grep "a network-free page" '^<!doctype html>' "$T/evil.html"
expect_nogrep "no external reference" '(src|href)="(https?:)?//' "$hello.html"

# --- diff -----------------------------------------------------------------------------------------
"$NS" diff "$evil" --step 1 >"$T/d1" 2>"$T/d1.err"
expect_rc "diff of step 1" 0 $?
expect_grep "diff names the step" '^# step 1' "$T/d1"
expect_grep "added file listed" '^\+\+\+ b/<i>x&amp;.txt' "$T/d1"
mkdir -p before && "$NS" restore "$evil" --step 1 --to before >/dev/null 2>&1
mkdir -p after && "$NS" restore "$evil" --step end --to after >/dev/null 2>&1
(cd before && grep -v '^#' "$T/d1" | patch -s -p1 >/dev/null 2>&1)
expect_eq "GNU patch applies the diff: notes.txt as after" "$(cat after/notes.txt)" "$(cat before/notes.txt)"
expect_eq "GNU patch applies the diff: the new file" "$(cat 'after/<i>x&amp;.txt')" "$(cat 'before/<i>x&amp;.txt' 2>/dev/null)"
"$NS" diff "$evil" --step 99 >/dev/null 2>"$T/d99"
expect_rc "diff past the last step" 2 $?
expect_grep "names the last step" 'has [0-9]+ steps?; there is no step 99' "$T/d99"
"$NS" diff "$T" --step 1 >/dev/null 2>&1
expect_rc "diff of a folder that is not a run" 2 $?
"$NS" diff "$evil" >/dev/null 2>&1
expect_rc "diff without --step: the run's whole change as a patch" 0 $?

# --- in a real browser ----------------------------------------------------------------------------
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
if [ -z "$browser" ]; then
	skip "browser checks" "no chromium and cannot install it (not root, or apt-get failed: $(tail -n 1 "$T/apt.log" 2>/dev/null))"
else
	open_page "$hello.html" "$T/hello.dom"
	expect_rc "chromium loads the report" 0 $?
	expect_nogrep "no console messages (errors, CSP refusals)" 'CONSOLE' "$T/hello.dom.log"
	expect_grep "the page's own script ran under its policy" '<body[^>]*data-ready="1"' "$T/hello.dom"
	expect_grep "a denied call on the page" 'DENIED</span> by the default' "$T/hello.dom"
	expect_grep "a diff on the page" '<span class="add">\+2 files, 5 lines. Nothing to fix.' "$T/hello.dom"
	expect_grep "the job's cost on the page" '<th>cost</th>' "$T/hello.dom"
	expect_grep "verification on the page" 'verified</span>' "$T/hello.dom"

	open_page "$T/evil.html" "$T/evil.dom"
	expect_grep "hostile run: the title is the page's" '<title>nightshift [0-9a-zTZ-]+</title>' "$T/evil.dom"
	expect_eq "hostile run: no element from the run" 0 "$(grep -c '<img\|<iframe' "$T/evil.dom")"
	expect_nogrep "hostile run: no console messages" 'CONSOLE' "$T/evil.dom.log"
	# A link to a step opens its fold: the hostile output is filled in as text, never as markup.
	open_page "$T/evil.html#step-1" "$T/evil1.dom"
	expect_grep "#step-1 opens the call" '<li class="call allow" id="step-1"><details data-i="[0-9]+" open=""' "$T/evil1.dom"
	expect_grep "the opened call shows the output as text" '<pre>&lt;script&gt;document.title="pwned-out"&lt;/script&gt;&lt;img src=x' "$T/evil1.dom"
	expect_grep "control characters in it shown as escapes" '\\x1b\]0;t\\x07' "$T/evil1.dom"
	expect_eq "the opened hostile call added no element" 0 "$(grep -c '<img\|<iframe' "$T/evil1.dom")"
	expect_eq "and ran no script" "" "$(grep -o '<title>[^<]*pwned' "$T/evil1.dom")"
	expect_nogrep "and no console messages" 'CONSOLE' "$T/evil1.dom.log"
	expect_grep "the page says when it was laid out" '<body[^>]*data-load-ms="[0-9]+"' "$T/hello.dom"
	expect_eq "hostile run: title not changed" "" "$(grep -o '<title>[^<]*pwned' "$T/evil.dom")"

	# As if escaping had failed: markup injected into the page itself is held by the policy.
	sed 's|</body>|<script>document.title="pwned"</script><img src=x onerror="document.title=1"></body>|' \
		"$hello.html" >"$T/injected.html"
	open_page "$T/injected.html" "$T/injected.dom"
	expect_eq "injected script did not run" "" "$(grep -o '<title>pwned' "$T/injected.dom")"
	expect_grep "the browser says the policy refused it" 'Content Security Policy' "$T/injected.dom.log"

	shot=$(dirname "$NS")/report-screenshot.png
	HOME="$T" timeout 90 "$browser" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
		--window-size=1200,1400 --screenshot="$shot" "file://$hello.html" >/dev/null 2>&1
	check "a screenshot of the report" test -s "$shot"
	echo "screenshot: $shot"
	HOME="$T" timeout 90 "$browser" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
		--window-size=390,1400 --screenshot="${shot%.png}-phone.png" "file://$hello.html" >/dev/null 2>&1
	check "a phone-sized screenshot" test -s "${shot%.png}-phone.png"
fi

# Diffs on one page are bounded (8 MiB of them): a step that adds 300 texts of 40 KiB shows the
# diffs of the first ~256 and lists the rest, saying how to see them.
mkdir -p "$T/many/ws"
cat > "$T/many/m.yaml" <<'YAML'
version: 1
workspace: ws
models:
  m: { provider: scripted, replies: [ {tool_calls: [ {name: shell, arguments: {command: "for i in $(seq 300); do yes \"line $i of a text\" | head -c 40000 > t$i.txt; done"}} ]}, {tool_calls: [ {name: final_result, arguments: {}} ]} ] }
sandbox: { backend: none }
workers:
  w: { model: m, instructions: x, tools: [shell], approval: { default: allow } }
jobs:
  j: { worker: w, input: go }
YAML
many=$("$NS" run "$T/many/m.yaml" --out "$T/many/runs" 2>/dev/null)
"$NS" report "$many" --out "$T/many/r.html" >/dev/null 2>&1; expect_rc "a report of 300 added texts" 0 $?
shown=$(grep -o '<summary>diff</summary>' "$T/many/r.html" | wc -l)
check "at most 8 MiB of diffs shown ($shown of 300)" test "$shown" -ge 200 -a "$shown" -lt 300
expect_grep "the others say how to see them" 'diff not shown: the page holds 8 MiB of diffs; nightshift diff RUN --step 1' "$T/many/r.html"
done_tests
