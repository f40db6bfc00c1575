#!/usr/bin/env bash
# policy: decisions per second of the approval policy for a 200-character shell line against 50
# rules, against a peer measured in the same run: Python's shlex (punctuation-aware POSIX
# lexer) + fnmatch deciding the same line with the same rules, the way many agent runners
# do it (it checks far less: no substitutions, no quoting tricks, no redirection targets).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
secs=${POLICY_BENCH_SECS:-1}
tmp=$(mktemp -d /tmp/ns-bench-policy.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

source "$here/lib.sh"
benchbuild policy || exit 1

# the peer: same line, same 50 rules, strictest wins per command, commands split by shlex
cat > "$tmp/peer.py" <<'PY'
import fnmatch, re, shlex, sys, time
secs = float(sys.argv[1])
src = open(sys.argv[2]).read()
line = "".join(re.findall(r'^\t"(.*)"', src.split("static const char line[] =")[1].split(";\n")[0], re.M))
line = line.replace('\\"', '"')
rules = re.findall(r'\{"([^"]+)", "(allow|deny|abort)"\}', src)
rank = {"allow": 0, "deny": 1, "abort": 2}
ops = {";", "&&", "||", "|", "&"}
redirs = {">", ">>", "<", ">&", "<&", ">|"}
def decide(cmd):
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    cmds, cur, skip = [], [], False
    for tok in lex:
        if skip:
            skip = False
            continue
        if tok in ops:
            cmds.append(cur); cur = []
        elif tok in redirs:
            skip = True
            if cur and cur[-1].isdigit():
                cur.pop()
        else:
            cur.append(tok)
    cmds.append(cur)
    worst = -1
    for words in cmds:
        if not words:
            continue
        text = " ".join(words)
        best = -1
        for pat, dec in rules:
            if rank[dec] > best and (fnmatch.fnmatchcase(text, pat) or (pat.endswith(" *") and text == pat[:-2])):
                best = rank[dec]
        if best < 0:
            best = 1
        worst = max(worst, best)
    return worst
assert len(line) == 200 and len(rules) == 50, (len(line), len(rules))
assert decide(line) == 0, "peer does not allow the line"
batches, start = [], time.perf_counter()
while time.perf_counter() - start < secs:
    c0 = time.thread_time()
    for _ in range(50):
        decide(line)
    batches.append(time.thread_time() - c0)
batches.sort()
print("peer-decide %.0f/s (cpu)" % (50 / batches[len(batches) // 2]))
PY

# three rounds, ours and the peer in turns, so that both see the same machine load; medians
echo "== policy: one 200-character shell line, 50 rules (3 rounds of $secs s per figure, in turns with the peer)"
for r in 1 2 3; do
	"$tmp/policy" "$secs" > "$tmp/ours.$r"
	python3 "$tmp/peer.py" "$secs" "$here/policy.c" > "$tmp/peer.$r"
done
med() { sort -n | sed -n 2p; }
fig() { awk -v k="$1" '$1 == k { sub("/s", "", $2); print $2 }' "$tmp"/ours.*; }
ours=$(fig decide | med)
split=$(fig split | med)
denied=$(fig decide-denied | med)
peer=$(awk '$1 == "peer-decide" { sub("/s", "", $2); print $2 }' "$tmp"/peer.* | med)
echo "decide $ours/s        (policydecide, the line allowed; median of 3, per CPU second)"
echo "decide-denied $denied/s (a bypass attempt of the same length)"
echo "split $split/s        (the splitter alone)"
echo "peer-decide $peer/s   (python3 shlex + fnmatch, same line and rules)"
awk -v a="$ours" -v b="$peer" 'BEGIN { printf "ratio nightshift/peer %.1fx\n", a / b }'
goal "decide (a 200-character line, 50 rules)" "$ours" /s '>=' 100000
goal "decide / the python peer" "$(awk -v a="$ours" -v b="$peer" 'BEGIN { printf "%.1f", a / b }')" x '>=' 10
awk -v a="$ours" 'BEGIN { printf "per decision %.2f us\n", 1e6 / a }'
