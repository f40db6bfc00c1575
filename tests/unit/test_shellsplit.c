/* test_shellsplit: the splitter against hand-written expectations, then against the shells
 * themselves: every line it calls plain is run by dash, bash and busybox sh with logging stubs in
 * place of the commands, and every command they really ran must be one the splitter reported,
 * word for word. A seeded fuzzer feeds the same check with random lines. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "t.h"
#include "agentlines.h"
#include "../../policy/shellsplit.h"
#include "../../util/util.h"

/* The words of a command as "<w1><w2>...". */
static void render(const struct shcmd *c, struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
	for (size_t k = 0; k < c->argc; k++) {
		bufputc(b, '<');
		for (const char *s = c->argv[k]; *s; s++)
			if (*s == SHUNK)
				bufputs(b, "…");
			else
				bufputc(b, *s);
		bufputc(b, '>');
	}
	if (!b->data)
		bufputs(b, "");
}

struct tcase {
	const char *line;
	int plain;            /* shsplit returns 0 */
	const char *cmds[8];  /* rendered words of each command, in order */
	const char *why;      /* a substring of the reason (line's or first flagged command's), or NULL */
};

#define PS4WHY "bash runs the $( ) of PS4 for each command it traces"
#define ALIASWHY "BASH_ALIASES or BASH_CMDS"
#define SUBWHY "bash evaluates a subscript in a text that holds $( ) or backquotes"

static const struct tcase cases[] = {
	{"git diff HEAD~1", 1, {"<git><diff><HEAD~1>"}, NULL},
	{"  git   diff  ", 1, {"<git><diff>"}, NULL},
	{"git diff \"a b\" 'c d' e\\ f", 1, {"<git><diff><a b><c d><e f>"}, NULL},
	{"git diff \"a\\\"b\" \"\\$x\" \"\\q\"", 1, {"<git><diff><a\"b><$x><\\q>"}, NULL},
	{"git log --format='%h $x `y`'", 1, {"<git><log><--format=%h $x `y`>"}, NULL},
	{"git diff; git log", 1, {"<git><diff>", "<git><log>"}, NULL},
	{"a && b || c | d & e", 1, {"<a>", "<b>", "<c>", "<d>", "<e>"}, NULL},
	{"a\nb\n\nc", 1, {"<a>", "<b>", "<c>"}, NULL},
	{"a;b&&c||d|e&f", 1, {"<a>", "<b>", "<c>", "<d>", "<e>", "<f>"}, NULL},
	{"(a; b) | { c; d; }", 1, {"<a>", "<b>", "<c>", "<d>"}, NULL},
	{"( ( a ) )", 1, {"<a>"}, NULL},
	{"{ { a; } }", 1, {"<a>"}, NULL},
	{"if a; then b; elif c; then d; else e; fi", 1, {"<a>", "<b>", "<c>", "<d>", "<e>"}, NULL},
	{"while a; do b; done", 1, {"<a>", "<b>"}, NULL},
	{"until a; do b; done > out", 1, {"<a>", "<b>", ""}, NULL},
	{"! a", 1, {"<a>"}, NULL},
	{"echo if then fi }", 1, {"<echo><if><then><fi><}>"}, NULL},
	{"a > out 2>&1 < in >> log 2>/dev/null >| f <> g >&- 0<&3", 1, {"<a>"}, NULL},
	{"a>out", 1, {"<a>"}, NULL},
	{"a 2>/workspace/x/../y", 1, {"<a>"}, NULL},
	{"gi\\\nt di\\\nff", 1, {"<git><diff>"}, NULL},
	{"a &\\\n& b", 1, {"<a>", "<b>"}, NULL},
	{"a # b; c", 1, {"<a>"}, NULL},
	{"a#b", 1, {"<a#b>"}, NULL},
	{"a # x \\\nb", 1, {"<a>", "<b>"}, NULL},
	{"cat <<EOF\nbody\nEOF\nls", 1, {"<cat>", "<ls>"}, NULL},
	{"cat <<'EOF'\n$(rm -rf /) `x`\nEOF\nls", 1, {"<cat>", "<ls>"}, NULL},
	{"cat <<-\"E\"\n\tx $y\n\tE\nls", 1, {"<cat>", "<ls>"}, NULL},
	{"cat <<A <<B\na\nA\nb\nB\nls", 1, {"<cat>", "<ls>"}, NULL},
	{"cat <<EOF\nEOF", 1, {"<cat>"}, NULL},
	{"grep 'a;b|c&d' f", 1, {"<grep><a;b|c&d><f>"}, NULL},
	{"echo $ a$ \"b$\" $/ $.", 1, {"<echo><$><a$><b$><$/><$.>"}, NULL},
	{"ls *.c ?x [ab]", 1, {"<ls><….c><…x><…>"}, NULL},
	{"[ -f x ]", 1, {"<[><-f><x><]>"}, NULL},
	{"git diff HEAD@{1}", 1, {"<git><diff><HEAD@{1}>"}, NULL},
	{"grep '（注）' notes", 1, {"<grep><（注）><notes>"}, NULL},
	{"git log --author=José", 1, {"<git><log><--author=José>"}, NULL},
	{"", 1, {NULL}, NULL},
	{"# only a comment", 1, {NULL}, NULL},
	{"a ''", 1, {"<a><>"}, NULL},
	{"a=b", 1, {""}, NULL},
	{"echo a=b", 1, {"<echo><a=b>"}, NULL},
	{"> f", 1, {""}, NULL},

	/* the grammar agents write; words only known at run time shown as …, with the first reason
	 * (opaque, redirection or dangerous option) of the line */
	{"a=b", 1, {""}, NULL},
	{"echo a=b", 1, {"<echo><a=b>"}, NULL},
	{"> f", 1, {""}, NULL},
	{"git log $(cat /etc/passwd)", 1, {"<cat></etc/passwd>", "<git><log><…>"}, "an argument only known at run time could be a git option (--output=...)"},
	{"echo `a | b`; c", 1, {"<a>", "<b>", "<echo><…>", "<c>"}, NULL},
	{"echo \"`a \\\"q\\\"`\"", 1, {"<a><q>", "<echo><…>"}, NULL},
	{"diff <(a) >(b)", 1, {"<a>", "<b>", "<diff><…><…>"}, NULL},
	{"echo $HOME", 1, {"<echo><…>"}, NULL},
	{"echo \"$1\"", 1, {"<echo><…>"}, NULL},
	{"X=1 git diff", 1, {"<git><diff>"}, NULL},
	{"a+=b git diff", 1, {"<git><diff>"}, NULL},
	{"a[1]=x git diff", 1, {"<git><diff>"}, NULL},
	{"eval ls", 1, {"<eval><ls>", "<ls>"}, NULL},
	{"'e'val ls", 1, {"<eval><ls>", "<ls>"}, NULL},
	{"/usr/bin/env ls", 1, {"</usr/bin/env><ls>", "<ls>"}, NULL},
	{"busybox sh", 0, {"<busybox><sh>"}, "a shell reading commands from its input"},
	{". ./x", 1, {"<.><./x>"}, NULL},
	{"export A=1", 1, {"<export><A=1>"}, NULL},
	{"export PATH=/x", 1, {"<export><PATH=/x>"}, "it sets a variable that changes what programs run"},
	{"find . -exec rm {} ;", 1, {"<find><.><-exec><rm><{}>", "<rm><…>"}, "this find action runs commands, deletes or writes files"},
	{"find . -name '*.py' -exec grep -l foo {} +", 1, {"<find><.><-name><*.py><-exec><grep><-l><foo><{}><+>", "<grep><-l><foo><…>"}, "this find action runs commands, deletes or writes files"},
	{"find . -execdir a {} \\; -exec b -x {} +", 1, {"<find><.><-execdir><a><{}><;><-exec><b><-x><{}><+>", "<a><…>", "<b><-x><…>"}, "this find action runs commands, deletes or writes files"},
	{"printf -v x y", 1, {"<printf><-v><x><y>"}, NULL},
	{"a > /etc/x", 1, {"<a>"}, "a redirection outside /workspace, /tmp and /dev/null"},
	{"a > ../x", 1, {"<a>"}, "a relative redirection that leads outside /workspace and /tmp"},
	{"a < /workspace/../etc/x", 1, {"<a>"}, NULL},
	{"a > ''", 1, {"<a>"}, "a redirection to an empty name"},
	{"a > *.txt", 1, {"<a>"}, "a redirection to a name only known at run time"},
	{"a > ~/x", 1, {"<a>"}, "a redirection to a name only known at run time"},
	{"a x=~/y", 1, {"<a><x=…/y>"}, NULL},
	{"a b:~", 1, {"<a><b:~>"}, NULL},
	{"a ~+", 1, {"<a><…>"}, NULL},
	{"a >& f", 1, {"<a>"}, NULL},
	{"a 10>f", 1, {"<a><10>"}, NULL},
	{"a {fd}>f", 1, {"<a><{fd}>"}, NULL},
	{"~/x", 0, {"<…/x>"}, "the command name is only known at run time"},
	{"c?t x", 0, {"<c…t><x>"}, "the command name is only known at run time"},
	{"ls *.c ?x [ab]", 1, {"<ls><….c><…x><…>"}, NULL},
	{"echo {a,b}", 1, {"<echo><…>"}, NULL},
	{"echo {1..3}", 1, {"<echo><…>"}, NULL},
	{"git diff；rm", 1, {"<git><diff；rm>"}, NULL},
	{"cd x; a > y", 1, {"<cd><x>", "<a>"}, NULL},
	{"cd /etc; a > y", 1, {"<cd></etc>", "<a>"}, "a relative redirection that leads outside /workspace and /tmp"},
	{"cd ..; a > y", 1, {"<cd><..>", "<a>"}, "a relative redirection that leads outside /workspace and /tmp"},
	{"cd \"$D\"; a > y", 1, {"<cd><…>", "<a>"}, "a relative redirection in a line that changes directory to a place only known at run time"},
	{"for d in a b; do cd ..; done; a > y", 1, {"<cd><..>", "<a>"}, "a relative redirection in a line that changes directory to a place only known at run time"},
	{"cd src && make > build.log 2>&1", 1, {"<cd><src>", "<make>"}, NULL},
	{"a > /tmp/x 2>/dev/null; b 2>/tmp/err >/workspace/o", 1, {"<a>", "<b>"}, NULL},
	{"cat <<EOF\n$x\nEOF", 1, {"<cat>"}, NULL},
	{"cat <<EOF\n$(a b)\nEOF", 1, {"<cat>", "<a><b>"}, NULL},
	{"cat <<'EOF'\n$(a b)\nEOF", 1, {"<cat>"}, NULL},
	{"f() { a; }", 1, {"<a>"}, NULL},
	{"function f { a; }", 1, {"<a>"}, NULL},
	{"function f() ( a )", 1, {"<a>"}, NULL},
	{"a=(x $(b) 'c d')", 1, {"<b>", ""}, NULL},
	{"echo $((1+2))", 1, {"<echo><…>"}, NULL},
	{"echo $(( $(a) + 1 ))", 1, {"<a>", "<echo><…>"}, NULL},
	{"((x))", 1, {"<x>"}, NULL},
	{"((x > 3)) && b", 1, {"<x>", "<b>"}, NULL},
	{"echo ${x}", 1, {"<echo><…>"}, NULL},
	{"echo ${x:-$(a)}", 1, {"<a>", "<echo><…>"}, NULL},
	{"echo ${x@P}", 0, {"<echo><…>"}, "${x@P} runs the $( ) a value holds"},
	{"echo $'a\\x41'", 1, {"<echo><aA>"}, NULL},
	{"$'\\x61' b", 1, {"<a><b>"}, NULL},
	{"a &> f", 1, {"<a>"}, NULL},
	{"a |& b", 1, {"<a>", "<b>"}, NULL},
	{"cat <<< x", 1, {"<cat>"}, NULL},
	{"cat <<< \"$(a)\"", 1, {"<a>", "<cat>"}, NULL},
	{"a ;; b", 0, {"<a>"}, ";; outside case"},
	{"case x in x) a;; esac", 1, {"<a>"}, NULL},
	{"case $v in a|b) c;; (*) d ;& e) f;;& esac", 1, {"<c>", "<d>", "<f>"}, NULL},
	{"case x in\n  a)\n    b\n    ;;\nesac", 1, {"<b>"}, NULL},
	{"for x in a; do b; done", 1, {"<b>"}, NULL},
	{"for f in $(a); do b $f; done", 1, {"<a>", "<b><…>"}, NULL},
	{"for ((i=0; i<3; i++)); do a $i; done", 1, {"<a><…>"}, NULL},
	{"select x in a b; do c; done", 1, {"<c>"}, NULL},
	{"[[ a ]]", 1, {"<[[><a><]]>", "<[[><a><]]>"}, NULL},
	{"[[ -f x && -d y ]] && a", 1, {"<[[><-f><x><-d><y><]]>", "<[[><-f><x>", "<-d><y><]]>", "<a>"}, NULL},
	{"[[ $x =~ ^(a|b)$ ]]", 1, {"<[[><…><=~><^><(><a><|><b><)><$><]]>", "<[[><…><=~><^>"}, NULL},
	{"[[ x && b ]]", 1, {"<[[><x><b><]]>", "<[[><x>", "<b><]]>"}, NULL},
	{"time a", 1, {"<a>"}, NULL},
	{"time -p a", 1, {"<a>"}, NULL},
	{"coproc a", 1, {"<a>"}, NULL},
	{"coproc N { a; }", 1, {"<a>"}, NULL},
	{"cat <<EOF", 0, {"<cat>"}, "a here-document without its body"},
	{"cat <<EOF\nx\n EOF", 0, {"<cat>"}, "a here-document without its end line"},
	{"a >", 0, {"<a>"}, "a redirection without a target"},
	{"(a) b", 0, {"<a>"}, "a word after a compound command"},
	{"if [ -f x ]; then a; else b; fi", 1, {"<[><-f><x><]>", "<a>", "<b>"}, NULL},
	{"while read -r l; do a \"$l\"; done < f", 1, {"<read><-r><l>", "<a><…>"}, NULL},
	{"until a; do b; done", 1, {"<a>", "<b>"}, NULL},
	{"timeout 5 a b", 1, {"<timeout><5><a><b>", "<a><b>"}, NULL},
	{"timeout -s KILL -k 1 5 a b", 1, {"<timeout><-s><KILL><-k><1><5><a><b>", "<a><b>"}, NULL},
	{"timeout --signal=TERM 5s a", 1, {"<timeout><--signal=TERM><5s><a>", "<a>"}, NULL},
	{"nice -n 10 a", 1, {"<nice><-n><10><a>", "<a>"}, NULL},
	{"nice -10 a", 1, {"<nice><-10><a>", "<a>"}, NULL},
	{"nohup a &", 1, {"<nohup><a>", "<a>"}, NULL},
	{"env -i A=1 a b", 1, {"<env><-i><A=1><a><b>", "<a><b>"}, NULL},
	{"env -u X a", 1, {"<env><-u><X><a>", "<a>"}, NULL},
	{"env -S 'a b' c", 1, {"<env><-S><a b><c>", "<a><b><c>"}, NULL},
	{"env LD_PRELOAD=x a", 1, {"<env><LD_PRELOAD=x><a>", "<a>"}, "env VAR=value sets a variable that changes what programs run"},
	{"stdbuf -oL a", 1, {"<stdbuf><-oL><a>", "<a>"}, NULL},
	{"command -v a", 1, {"<command><-v><a>"}, NULL},
	{"command a b", 1, {"<command><a><b>", "<a><b>"}, NULL},
	{"builtin a b", 1, {"<builtin><a><b>", "<a><b>"}, NULL},
	{"exec a b", 1, {"<exec><a><b>", "<a><b>"}, NULL},
	{"exec 3>&1", 1, {"<exec>"}, NULL},
	{"sudo a b", 1, {"<sudo><a><b>", "<a><b>"}, NULL},
	{"sudo -u root -E a b", 1, {"<sudo><-u><root><-E><a><b>", "<a><b>"}, NULL},
	{"sudo -s", 0, {"<sudo><-s>"}, "a shell started by sudo or doas"},
	{"sudo -i a", 1, {"<sudo><-i><a>", "<a>"}, NULL},
	{"sudo LD_PRELOAD=x a", 1, {"<sudo><LD_PRELOAD=x><a>", "<a>"}, "sudo VAR=value sets a variable that changes what programs run"},
	{"xargs a", 1, {"<xargs><a>", "<a><…>"}, NULL},
	{"xargs -0 -n1 a b", 1, {"<xargs><-0><-n1><a><b>", "<a><b><…>"}, NULL},
	{"xargs -I{} a {} b", 1, {"<xargs><-I{}><a><{}><b>", "<a><…><b><…>"}, NULL},
	{"xargs", 1, {"<xargs>", "<echo><…>"}, NULL},
	{"xargs -a list a", 1, {"<xargs><-a><list><a>", "<a><…>"}, NULL},
	{"xargs $X", 0, {"<xargs><…>"}, "a wrapper with an option the splitter does not know"},
	{"bash -c 'a; b'", 1, {"<bash><-c><a; b>", "<a>", "<b>"}, NULL},
	{"sh -c \"a | b\"", 1, {"<sh><-c><a | b>", "<a>", "<b>"}, NULL},
	{"bash -lc 'a && b'", 1, {"<bash><-lc><a && b>", "<a>", "<b>"}, NULL},
	{"bash -o pipefail -c 'a'", 1, {"<bash><-o><pipefail><-c><a>", "<a>"}, NULL},
	{"bash -c \"$X\"", 0, {"<bash><-c><…>"}, "a shell whose options or script are only known at run time"},
	{"sh x.sh", 1, {"<sh><x.sh>"}, NULL},
	{"bash", 0, {"<bash>"}, "a shell reading commands from its input"},
	{"a | sh", 0, {"<a>", "<sh>"}, "a shell reading commands from its input"},
	{"sh < x.sh", 1, {"<sh>"}, NULL},
	{"sh <<'EOF'\na\nEOF", 0, {"<sh>"}, "a shell reading commands from its input"},
	{"zsh -c 'a'", 0, {"<zsh><-c><a>"}, "a script in a shell language the splitter does not read"},
	{"eval 'a; b'", 1, {"<eval><a; b>", "<a>", "<b>"}, NULL},
	{"eval \"a $X\"", 0, {"<eval><a …>"}, "eval of a string only known at run time"},
	{"trap 'a' EXIT", 1, {"<trap><a><EXIT>", "<a>"}, NULL},
	{"trap \"$X\" EXIT", 0, {"<trap><…><EXIT>"}, "a trap whose command is only known at run time"},
	{"alias ll='a -l'", 1, {"<alias><ll=a -l>", "<a><-l>"}, NULL},
	{"watch -n 1 a b", 1, {"<watch><-n><1><a><b>", "<a><b>"}, NULL},
	{"watch \"$X\"", 0, {"<watch><…>"}, "a wrapper with an option the splitter does not know"},
	{"flock /tmp/l a b", 1, {"<flock></tmp/l><a><b>", "<a><b>"}, NULL},
	{"flock /tmp/l -c 'a b'", 1, {"<flock></tmp/l><-c><a b>", "<a><b>"}, NULL},
	{"su -c 'a' root", 1, {"<su><-c><a><root>", "<a>"}, NULL},
	{"su root", 0, {"<su><root>"}, "a shell started by su, runuser or script"},
	{"runuser -u u -- a b", 1, {"<runuser><-u><u><--><a><b>", "<a><b>"}, NULL},
	{"script -c 'a' /dev/null", 1, {"<script><-c><a></dev/null>", "<a>"}, NULL},
	{"uv run a b", 1, {"<uv><run><a><b>", "<a><b>"}, NULL},
	{"uv run --with x a", 0, {"<uv><run><--with><x><a>"}, "a runner with options the splitter does not read"},
	{"poetry run a", 1, {"<poetry><run><a>", "<a>"}, NULL},
	{"bundle exec a", 1, {"<bundle><exec><a>", "<a>"}, NULL},
	{"strace -f a", 0, {"<strace><-f><a>"}, "a wrapper whose options the splitter does not read"},
	{"busybox a b", 1, {"<busybox><a><b>", "<a><b>"}, NULL},
	{"setsid a", 1, {"<setsid><a>", "<a>"}, NULL},
	{"chroot /x a", 1, {"<chroot></x><a>", "<a>"}, NULL},
	{"taskset -c 1 a", 1, {"<taskset><-c><1><a>", "<a>"}, NULL},
	{"ionice -c 3 a", 1, {"<ionice><-c><3><a>", "<a>"}, NULL},
	{"git -c core.pager=a log", 1, {"<git><-c><core.pager=a><log>", "<a>"}, "git -c sets configuration (aliases, pagers, fsmonitor run commands)"},
	{"git log --output=/tmp/x", 1, {"<git><log><--output=/tmp/x>"}, "git --output writes a file"},
	{"git log -1 --format=%H $(git rev-parse HEAD)", 1, {"<git><rev-parse><HEAD>", "<git><log><-1><--format=%H><…>"}, "an argument only known at run time could be a git option (--output=...)"},
	{"git log -- $f", 1, {"<git><log><--><…>"}, NULL},
	{"git grep -Oa x", 1, {"<git><grep><-Oa><x>"}, "git grep -O runs a program"},
	{"sed -n '1,5p' f", 1, {"<sed><-n><1,5p><f>"}, NULL},
	{"sed -n '1e id' f", 1, {"<sed><-n><1e id><f>"}, "this sed script runs commands or writes files (e, w, s///e)"},
	{"sed 's/a/b/e' f", 1, {"<sed><s/a/b/e><f>"}, "this sed script runs commands or writes files (e, w, s///e)"},
	{"sed -i 's/a/b/' f", 1, {"<sed><-i><s/a/b/><f>"}, "sed -i writes files"},
	{"sed -ni 'p' f", 1, {"<sed><-ni><p><f>"}, "sed -i writes files"},
	{"sed 's/a/b/w out' f", 1, {"<sed><s/a/b/w out><f>"}, "this sed script runs commands or writes files (e, w, s///e)"},
	{"sed -e 's/x/y/' -e 'p'", 1, {"<sed><-e><s/x/y/><-e><p>"}, NULL},
	{"awk '{print $1}' f", 1, {"<awk><{print $1}><f>"}, NULL},
	{"awk '$3 > 100' f", 1, {"<awk><$3 > 100><f>"}, NULL},
	{"awk '{print > \"x\"}' f", 1, {"<awk><{print > \"x\"}><f>"}, "this awk program runs commands or writes files (system(), |, >)"},
	{"awk 'BEGIN{system(\"id\")}'", 1, {"<awk><BEGIN{system(\"id\")}>"}, "this awk program runs commands or writes files (system(), |, >)"},
	{"awk '{print | \"sort\"}' f", 1, {"<awk><{print | \"sort\"}><f>"}, "this awk program runs commands or writes files (system(), |, >)"},
	{"tar --checkpoint-action=exec=id -tf a.tar", 1, {"<tar><--checkpoint-action=exec=id><-tf><a.tar>"}, "this tar option runs a program or writes a file"},
	{"tar -tzf a.tar", 1, {"<tar><-tzf><a.tar>"}, NULL},
	{"tar xIf zstd a.tar", 1, {"<tar><xIf><zstd><a.tar>"}, "tar's I/F letter runs a program"},
	{"tar -I zstd -xf a.tar", 1, {"<tar><-I><zstd><-xf><a.tar>"}, "tar -I/-F runs a program"},
	{"sort -o out f", 1, {"<sort><-o><out><f>"}, "sort -o writes a file, --compress-program runs one"},
	{"sort -u f", 1, {"<sort><-u><f>"}, NULL},
	{"rg --pre ./x foo", 1, {"<rg><--pre><./x><foo>"}, "rg --pre runs a program on every file"},
	{"rsync -e ssh a b", 1, {"<rsync><-e><ssh><a><b>"}, "rsync -e/--rsync-path runs a program"},
	{"zip -TT 'x' a.zip f", 1, {"<zip><-TT><x><a.zip><f>"}, "zip -TT runs a program"},
	{"find . -name x -delete", 1, {"<find><.><-name><x><-delete>"}, "this find action runs commands, deletes or writes files"},
	{"find . -name \"$n\"", 1, {"<find><.><-name><…>"}, "an argument only known at run time could be a find action (-exec, -delete)"},
	{"find \"$d\" -name x", 1, {"<find><…><-name><x>"}, "an argument only known at run time could be a find action (-exec, -delete)"},
	{"curl -o x http://a", 1, {"<curl><-o><x><http://a>"}, "this curl option writes a file or reads options from one"},
	{"dd if=a of=b", 1, {"<dd><if=a><of=b>"}, "dd of= writes a file"},
	{"uniq a b", 1, {"<uniq><a><b>"}, "a second file operand is the file it writes"},
	{"xxd a b", 1, {"<xxd><a><b>"}, "a second file operand is the file it writes"},
	{"x=$(a) b", 1, {"<a>", "<b>"}, NULL},
	{"read x; echo $((x))", 0, {"<read><x>", "<echo><…>", ""}, "arithmetic on a variable whose value is only known at run time (bash runs the $( ) a value holds)"},
	{"read x; echo $x", 1, {"<read><x>", "<echo><…>"}, NULL},
	/* bash evaluates the subscript of a name it is given (printf -v, read, test -v, declare, a
	 * nameref, a value in arithmetic) and runs the $( ) in it, though the text was quoted: each
	 * of these ran the stub a under bash before 2026-11-29 (the shellpol helper) */
	{"x='b[$(a)]'; echo $((x))", 0, {"", "<echo><…>", ""}, SUBWHY},
	{"x='b[`a`]'; [[ $x -eq 1 ]]", 0, {"", "<[[><…><-eq><1><]]>", "<[[><…><-eq><1><]]>", ""}, SUBWHY},
	{"x=$'b[\\x24(a)]'; echo $((x))", 0, {"", "<echo><…>", ""}, SUBWHY},
	{"x=b\\[\\$\\(a\\)\\]; echo $((x))", 0, {"", "<echo><…>", ""}, SUBWHY},
	{"printf -v 'b[$(a)]' 1", 0, {"<printf><-v><b[$(a)]><1>", ""}, SUBWHY},
	{"printf -v \"b[\\$(a)]\" 1", 0, {"<printf><-v><b[$(a)]><1>", ""}, SUBWHY},
	{"read 'b[$(a)]' <<< 1", 0, {"<read><b[$(a)]>", ""}, SUBWHY},
	{"test -v 'b[$(a)]'", 0, {"<test><-v><b[$(a)]>", ""}, SUBWHY},
	{"let 'b[$(a)]'", 0, {"<let><b[$(a)]>", ""}, SUBWHY},
	{"declare 'b[$(a)]=1'", 0, {"<declare><b[$(a)]=1>", ""}, SUBWHY},
	{"declare -n r='b[$(a)]'; echo $r", 0, {"<declare><-n><r=b[$(a)]>", "<echo><…>", ""}, SUBWHY},
	{"declare -i x; x='b[$(a)]'", 0, {"<declare><-i><x>", "", ""}, SUBWHY},
	{"echo ${b['$(a)']}", 1, {"<a>", "<echo><…>"}, NULL},
	{"echo $(( 'b[$(a)]' ))", 1, {"<a>", "<echo><…>"}, NULL},
	{"builtin printf -v 'b[$(a)]' 1", 0, {"<builtin><printf><-v><b[$(a)]><1>", "<printf><-v><b[$(a)]><1>", ""}, SUBWHY},
	/* a single quote in arithmetic or a subscript only delimits: dash, bash and busybox sh run
	 * the $( ) it holds (before 2026-11-29 the splitter skipped it, and these ran a unseen) */
	{"echo $(( '$(a)' ))", 1, {"<a>", "<echo><…>"}, NULL},
	{"echo $(( '`a`' ))", 1, {"<a>", "<echo><…>"}, NULL},
	{"echo $(( '$(a)' ')' ))", 1, {"<a>", "<echo><…>"}, NULL},
	{"echo $(( b[\\'$(a)\\'] ))", 1, {"<a>", "<echo><…>"}, NULL},
	{"x=$(( '$(a)' + 1 ))", 1, {"<a>", ""}, NULL},
	{"echo $[ '$(a)' ]", 1, {"<a>", "<echo><…>"}, NULL},
	{"(( '$(a)' ))", 1, {"<a>", "<$(a)>"}, NULL}, /* dash: two subshells running "$(a)" */
	{"for (( i='$(a)'; i<0; )); do :; done", 1, {"<a>", "<:>"}, NULL},
	{"echo ${b[ '$(a)' ]}", 1, {"<a>", "<echo><…>"}, NULL},
	{"echo ${b['$(a)']:-x}", 1, {"<a>", "<echo><…>"}, NULL},
	{"echo ${x:-'$(a)'}", 1, {"<echo><…>"}, NULL},
	/* bash reads NAME[ ... ]= as one assignment word, blanks and quotes in its subscript */
	{"b[ '$(a)' ]=1", 1, {"<a>", ""}, NULL},
	{"b[ \"x\" ]=1 a", 1, {"<a>"}, NULL},
	{"b['$(a)']=1", 1, {"<a>", ""}, NULL},
	{"b=([ '$(a)' ]=1)", 1, {"<a>", ""}, NULL},
	{"b=(['$(a)']=1)", 1, {"<a>", ""}, NULL},
	{"echo b[ '$(a)' ]=1", 1, {"<echo><b[><$(a)><]=1>"}, NULL},
	/* a tilde prefix is plain characters: a quote, backslash, $ or backquote ends it (before
	 * 2026-11-29 the splitter took them into it, and these ran a unseen, past "echo *") */
	{"echo ~$'\\'' ; a ; echo \\'", 1, {"<echo><…'>", "<a>", "<echo><'>"}, NULL},
	{"echo ~\\' ; a ; echo \\'", 1, {"<echo><…'>", "<a>", "<echo><'>"}, NULL},
	{"echo ~`a`", 1, {"<a>", "<echo><……>"}, NULL},
	{"x=~$'\\'' a ; echo \\'", 1, {"<a>", "<echo><'>"}, NULL},
	{"echo ~x/$'\\x61'", 1, {"<echo><…/a>"}, NULL},
	/* bash expands PS4 before each command it traces: its $( ) runs (a child bash imports it
	 * when not root); before 2026-11-29 these ran a unseen */
	{"PS4='$(a)'; set -x; :", 0, {"", "<set><-x>", "<:>", ""}, NULL},
	{"set -eux; PS4='`a`'; :", 0, {"<set><-eux>", "", "<:>", ""}, NULL},
	{"PS4=$'\\x24(a)'; set -o xtrace; :", 0, {"", "<set><-o><xtrace>", "<:>", ""}, NULL},
	{"read PS4 <<< x; set -x; :", 0, {"<read><PS4>", "<set><-x>", "<:>", ""}, PS4WHY},
	{"printf -v \"$n\" x; set -x; :", 0, {"<printf><-v><…><x>", "<set><-x>", "<:>", ""}, PS4WHY},
	{"declare -n r=PS4; r='$(a)'; set -x; :", 0, {"<declare><-n><r=PS4>", "", "<set><-x>", "<:>", ""}, PS4WHY},
	{"export PS4='$(a)'; bash -xc :", 0, {"<export><PS4=$(a)>", "<bash><-xc><:>", "<:>", ""}, NULL},
	{"SHELLOPTS=xtrace PS4='$(a)' bash -c :", 0, {"<bash><-c><:>", "<:>", ""}, NULL},
	{": ${PS4:='$(a)'}; set -x; :", 0, {"<:><…>", "<set><-x>", "<:>", ""}, PS4WHY},
	{"for PS4 in '$(a)'; do set -x; :; done", 0, {"<set><-x>", "<:>", ""}, PS4WHY},
	{"set -x; echo PS4", 1, {"<set><-x>", "<echo><PS4>"}, NULL},
	{"PS4='+ '; set -x; :", 1, {"", "<set><-x>", "<:>"}, NULL},
	/* a variable named plainly in PS4 expands to its value, which is not expanded again */
	{"PS4='+ $LINENO: ' bash -x run.sh", 1, {"<bash><-x><run.sh>"}, NULL},
	{"PS4='+${BASH_SOURCE}:${LINENO}:${FUNCNAME[0]}: '; set -x; :", 1, {"", "<set><-x>", "<:>"}, NULL},
	{"PS4='+ $x[$(a)]'; set -x; :", 0, {"", "<set><-x>", "<:>", ""}, NULL},
	{"PS4='${!x}'; set -x; :", 0, {"", "<set><-x>", "<:>", ""}, NULL},
	{"PS4='${x:-$(a)}'; set -x; :", 0, {"", "<set><-x>", "<:>", ""}, NULL},
	{"PS4='${x[i]}'; set -x; :", 0, {"", "<set><-x>", "<:>", ""}, NULL},
	{"PS4='$((x))'; set -x; :", 0, {"", "<set><-x>", "<:>", ""}, NULL},
	{"PS4=\"+ $LINENO\"; set -x; :", 0, {"", "<set><-x>", "<:>", ""}, NULL},
	/* bash decodes PS4's prompt escapes before expanding it: \044 is '$', \140 a backquote */
	{"PS4='\\044(a) '; set -x; :", 0, {"", "<set><-x>", "<:>", ""}, NULL},
	{"PS4='\\140a\\140'; set -x; :", 0, {"", "<set><-x>", "<:>", ""}, NULL},
	{"PS4='$(a)'; :", 1, {"", "<:>"}, NULL},
	/* env BASH_FUNC_NAME%%='() { ...; }': a child bash imports the function, and calling NAME
	 * runs its body (before 2026-11-29 that ran a unseen) */
	{"env 'BASH_FUNC_ls%%=() { a; }' bash -c ls", 1, {"<env><BASH_FUNC_ls%%=() { a; }><bash><-c><ls>", "<a>", "<bash><-c><ls>", "<ls>"}, NULL},
	{"env \"BASH_FUNC_ls%%=$x\" bash -c ls", 0, {"<env><BASH_FUNC_ls%%=…><bash><-c><ls>", "<bash><-c><ls>", "<ls>"}, "a bash function from the environment"},
	/* xargs -I R puts each input line where R is, in any word, the command's name and a shell's
	 * script too (before 2026-11-29 the words were read as written: these ran a unseen) */
	{"echo a | xargs -I% sh -c '% x'", 0, {"<echo><a>", "<xargs><-I%><sh><-c><% x>", "<sh><-c><… x><…>"}, "a shell whose options or script are only known at run time"},
	{"echo a | xargs -I % % x", 0, {"<echo><a>", "<xargs><-I><%><%><x>", "<…><x><…>"}, "the command name is only known at run time"},
	{"echo a | xargs -i sh -c '{} x'", 0, {"<echo><a>", "<xargs><-i><sh><-c><{} x>", "<sh><-c><… x><…>"}, "a shell whose options or script are only known at run time"},
	{"echo a | xargs --replace=R sh -c 'R x'", 0, {"<echo><a>", "<xargs><--replace=R><sh><-c><R x>", "<sh><-c><… x><…>"}, "a shell whose options or script are only known at run time"},
	{"ls | xargs -0I F cat F", 1, {"<ls>", "<xargs><-0I><F><cat><F>", "<cat><…><…>"}, NULL},
	/* BASH_ALIASES and BASH_CMDS are bash's alias and command tables: assigning them makes a
	 * name run something else (before 2026-11-29 these ran a unseen) */
	{"shopt -s expand_aliases\nBASH_ALIASES[x]='a'\nx", 0, {"<shopt><-s><expand_aliases>", "", "<x>", ""}, ALIASWHY},
	{"BASH_CMDS=([ls]=./a); ls", 0, {"", "<ls>", ""}, ALIASWHY},
	{"declare -A BASH_ALIASES; BASH_ALIASES[x]=a", 0, {"<declare><-A><BASH_ALIASES>", "", ""}, ALIASWHY},
	{"declare \"$n=./a\"; ls", 0, {"<declare><…=./a>", "<ls>", ""}, ALIASWHY},
	{"printf -v \"$n\" ./a; ls", 0, {"<printf><-v><…><./a>", "<ls>", ""}, ALIASWHY},
	{"read \"$n\" <<< ./a; ls", 0, {"<read><…>", "<ls>", ""}, ALIASWHY},
	{"read -r -a \"$n\" <<< ./a; ls", 0, {"<read><-r><-a><…>", "<ls>", ""}, ALIASWHY},
	{"mapfile -t \"$n\" < f; ls", 0, {"<mapfile><-t><…>", "<ls>", ""}, ALIASWHY},
	{"getopts ab \"$n\"; ls", 0, {"<getopts><ab><…>", "<ls>", ""}, ALIASWHY},
	{"read -r -p \"$prompt\" x; ls", 1, {"<read><-r><-p><…><x>", "<ls>"}, NULL},
	{"getopts \"$spec\" opt; ls", 1, {"<getopts><…><opt>", "<ls>"}, NULL},
	/* $!, $$, $? and $# hold digits only: never an option or a name (wait $! was opaque) */
	{"sleep 9 & wait $!", 1, {"<sleep><9>", "<wait><…>"}, NULL},
	{"sleep 9 & wait -n \"$!\" $$; ls", 1, {"<sleep><9>", "<wait><-n><…><…>", "<ls>"}, NULL},
	{"wait 12 $p; ls", 1, {"<wait><12><…>", "<ls>"}, NULL},
	{"wait $p; ls", 0, {"<wait><…>", "<ls>", ""}, ALIASWHY},
	{"wait $!$p; ls", 0, {"<wait><……>", "<ls>", ""}, ALIASWHY},
	{"wait -p \"$!\"; ls", 0, {"<wait><-p><…>", "<ls>", ""}, ALIASWHY},
	{"read $!; ls", 0, {"<read><…>", "<ls>", ""}, ALIASWHY},
	{"export \"$k=$v\"; ls", 1, {"<export><…=…>", "<ls>"}, NULL},
	/* dash reads &> inside a command as & then >: echo &>/dev/null a runs echo, then a (before
	 * 2026-11-29 only bash's reading was reported: echo * allowed it and dash ran a) */
	{"echo &>/dev/null a", 1, {"<echo><a>", "<echo>", "<a>"}, NULL},
	{"echo x &> f a b", 1, {"<echo><x><a><b>", "<echo><x>", "<a><b>"}, NULL},
	{"X=1 &>/dev/null a", 1, {"<a>", "", "<a>"}, NULL},
	{"echo $((1+2)); grep -n '$(CC)' Makefile", 1, {"<echo><…>", "<grep><-n><$(CC)><Makefile>"}, NULL},
	{"i=1; echo $((i+1)); grep -n '$(CC)' Makefile", 1, {"", "<echo><…>", "<grep><-n><$(CC)><Makefile>"}, NULL},
	{"printf '%s' 'b[$(x)]'; test -f x", 1, {"<printf><%s><b[$(x)]>", "<test><-f><x>"}, NULL},
	{"i=0; echo $((i+1))", 1, {"", "<echo><…>"}, NULL},
	{"git log | head -5 &>/dev/null", 1, {"<git><log>", "<head><-5>"}, NULL},
	{"echo hi >&2", 1, {"<echo><hi>"}, NULL},
	{"a 2>&1 | b", 1, {"<a>", "<b>"}, NULL},
	{"a;\n\nb", 1, {"<a>", "<b>"}, NULL},
	{"{ a; b; } > /etc/x", 1, {"<a>", "<b>", ""}, "a redirection outside /workspace, /tmp and /dev/null"},
	{"{ a; b; } > o", 1, {"<a>", "<b>", ""}, NULL},
	{"( cd /etc && a ) > o", 1, {"<cd></etc>", "<a>", ""}, "a relative redirection that leads outside /workspace and /tmp"},
	{"a # comment $(b)", 1, {"<a>"}, NULL},
	{"echo '$(a)' \"\\$(b)\"", 1, {"<echo><$(a)><$(b)>"}, NULL},
	{"echo \\$(a)", 0, {"<echo><$>"}, "an unexpected ("},
	{"a <> /dev/tcp/x/80", 1, {"<a>"}, "a redirection outside /workspace, /tmp and /dev/null"},

	/* the line as a whole */
	{"git diff \"x", 0, {"<git><diff>"}, "unbalanced double quote"},
	{"git diff 'x", 0, {"<git><diff>"}, "unbalanced single quote"},
	{"git diff \\", 0, {"<git><diff>"}, "backslash at the end"},
	{"(a", 0, {"<a>"}, "unbalanced"},
	{"a)", 0, {"<a>"}, "unbalanced"},
	{"a\rb", 0, {NULL}, "U+000D"},
	{"a \xe2\x80\xae b", 0, {NULL}, "U+202E"},
	{"a \xf3\xa0\x80\xbb", 0, {NULL}, "U+E003B"},
	{"a \xff", 0, {NULL}, "not UTF-8"},
	{"a \xc0\xbb", 0, {NULL}, "not UTF-8"},
	{"a \xed\xa0\x80", 0, {NULL}, "not UTF-8"},
};

static void unitcases(void)
{
	struct buf b = {0};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct tcase *t = &cases[i];
		struct shsplit sp;
		int rc = shsplit(t->line, strlen(t->line), &sp);
		ok((rc == 0) == t->plain, "[%s]: rc %d, want %s (%s)", t->line, rc, t->plain ? "plain" : "flagged",
		   sp.unsafe ? sp.unsafe : "");
		size_t want = 0;
		while (want < 8 && t->cmds[want])
			want++;
		ok(sp.ncmds == want, "[%s]: %zu commands, want %zu", t->line, sp.ncmds, want);
		for (size_t k = 0; k < sp.ncmds && k < want; k++) {
			render(&sp.cmds[k], &b);
			ok(strcmp(b.data, t->cmds[k]) == 0, "[%s] command %zu: %s, want %s", t->line, k, b.data, t->cmds[k]);
		}
		if (t->why) {
			const char *why = sp.unsafe;
			for (size_t k = 0; !why && k < sp.ncmds; k++)
				why = sp.cmds[k].opaque ? sp.cmds[k].opaque : sp.cmds[k].redir ? sp.cmds[k].redir : sp.cmds[k].danger;
			ok(why && strstr(why, t->why), "[%s]: reason \"%s\" lacks \"%s\"", t->line, why ? why : "(none)", t->why);
		}
		shsplitfree(&sp);
	}
	buffree(&b);
}

static void edges(void)
{
	struct shsplit sp;
	/* a NUL inside the line refuses it, even though a C string would stop there */
	ok(shsplit("git diff\0; rm -rf /", 19, &sp) < 0 && sp.unsafe && strstr(sp.unsafe, "NUL"), "NUL byte");
	shsplitfree(&sp);
	/* text spans keep what was written */
	const char *spans = "git  diff 'a b' > o; ls";
	ok(shsplit(spans, strlen(spans), &sp) == 0 && sp.ncmds == 2, "spans");
	okstr(sp.ncmds > 0 ? sp.cmds[0].text : NULL, "git  diff 'a b' > o", "span 0");
	okstr(sp.ncmds > 1 ? sp.cmds[1].text : NULL, "ls", "span 1");
	shsplitfree(&sp);
	/* very long input: over the limit refused whole, under it read */
	size_t n = SHMAXLEN + 1;
	char *s = xmalloc(n + 1);
	memset(s, 'a', n);
	memcpy(s, "git diff ", 9);
	s[n] = 0;
	ok(shsplit(s, n, &sp) < 0 && sp.unsafe && strstr(sp.unsafe, "longer"), "too long");
	shsplitfree(&sp);
	ok(shsplit(s, n - 1, &sp) == 0 && sp.ncmds == 1 && strlen(sp.cmds[0].argv[2]) == n - 10, "long but fine");
	shsplitfree(&sp);
	/* deep nesting stops at the limit, with no stack trouble */
	for (size_t i = 0; i < 20000; i++)
		s[i] = i % 2 ? ' ' : '(';
	ok(shsplit(s, 20000, &sp) < 0 && sp.unsafe && strstr(sp.unsafe, "nested"), "deep ( nesting");
	shsplitfree(&sp);
	struct buf b = {0};
	for (int i = 0; i < 40; i++)
		bufputs(&b, "echo $(");
	ok(shsplit(b.data, b.len, &sp) < 0 && sp.unsafe && strstr(sp.unsafe, "nested"), "deep $( nesting");
	shsplitfree(&sp);
	b.len = 0;
	for (int i = 0; i < 40; i++)
		bufputs(&b, "echo `");
	ok(shsplit(b.data, b.len, &sp) == 0 && sp.ncmds == 21, "backquotes side by side: %zu", sp.ncmds);
	shsplitfree(&sp);
	/* many commands */
	b.len = 0;
	for (int i = 0; i < 5000; i++)
		bufputs(&b, "ls;");
	bufputs(&b, "rm -rf /");
	ok(shsplit(b.data, b.len, &sp) == 0 && sp.ncmds == 5001 && !strcmp(sp.cmds[5000].argv[0], "rm"), "5001 commands");
	shsplitfree(&sp);
	buffree(&b);
	free(s);
}

/* ---- against the real shells ---- */

static char tmpdir[64], stubdir[128], logdir[128], workdir[128];
static const char *const stubs[] = {"git", "ls", "cat", "grep", "a", "b", "c", "d", "e", NULL};
/* real programs put beside the stubs: wrappers, whose inner commands must then be reported */
static const char *const reals[] = {"timeout", "env", "nice", "nohup", "xargs", "find", "stdbuf", "setsid", "sh", "bash",
                                    "dash", "printf", "true", "false", "test", "echo", NULL};
/* names a line may run besides those: builtins of the three shells */
static const char *const builtins[] = {"echo", "printf", "true", "false", "test", "[", "[[", "cd", ":", "read", "eval",
                                       "command", "builtin", "exec", "time", "export", "trap", "set", "shift", "local",
                                       "kill", "wait", "jobs", "exit", "return", "unset", "alias", "let", "declare",
                                       "source", ".", "pushd", "popd", "type", "hash", "history", "getopts", "umask",
                                       "pwd", NULL};
/* stubs made for the names the agent lines run (python, make, npm, sudo ...) */
static struct strv extra;
/* busybox sh runs its own applets before PATH: lines using one are not given to it */
static struct strv applets;
static const char *shells[][3] = {{"/usr/bin/dash", "dash", NULL}, {"/usr/bin/bash", "bash", NULL},
                                  {"/usr/bin/busybox", "sh", NULL}};
static int nshells, ran, shellruns;

static void setup(void)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	snprintf(tmpdir, sizeof tmpdir, "/tmp/ns-split.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(stubdir, sizeof stubdir, "%s/bin", tmpdir);
	snprintf(logdir, sizeof logdir, "%s/log", tmpdir);
	snprintf(workdir, sizeof workdir, "%s/work", tmpdir);
	mkdir(stubdir, 0755);
	mkdir(logdir, 0755);
	mkdir(workdir, 0755);
	for (const char *const *s = stubs; *s; s++) {
		char path[256];
		snprintf(path, sizeof path, "%s/%s", stubdir, *s);
		static const char body[] = "#!/bin/sh\nprintf '%s\\0' \"${0##*/}\" \"$@\" > \"$NSLOG/$$\"\n";
		FILE *f = fopen(path, "w");
		fputs(body, f);
		fclose(f);
		chmod(path, 0755);
	}
	/* a stub for every program an agent line runs: the lines then run whole, harmlessly */
	for (size_t i = 0; i < sizeof agentlines / sizeof agentlines[0]; i++) {
		struct shsplit sp;
		shsplit(agentlines[i], strlen(agentlines[i]), &sp);
		for (size_t k = 0; k < sp.ncmds; k++) {
			const struct shcmd *c = &sp.cmds[k];
			if (!c->argc || (c->wf[0] & SHW_UNKNOWN) || strspn(c->argv[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") !=
			                                               strlen(c->argv[0]) || c->argv[0][0] == '.' || c->argv[0][0] == '-')
				continue;
			const char *n = c->argv[0];
			int known = 0;
			for (const char *const *r = reals; *r; r++)
				known |= !strcmp(*r, n);
			for (const char *const *r = builtins; *r; r++)
				known |= !strcmp(*r, n);
			for (const char *const *r = stubs; *r; r++)
				known |= !strcmp(*r, n);
			for (size_t j = 0; j < extra.n; j++)
				known |= !strcmp(extra.v[j], n);
			if (known)
				continue;
			strvadd(&extra, n);
			char path[256];
			snprintf(path, sizeof path, "%s/%s", stubdir, n);
			static const char body[] = "#!/bin/sh\nprintf '%s\\0' \"${0##*/}\" \"$@\" > \"$NSLOG/$$\"\n";
			FILE *f = fopen(path, "w");
			fputs(body, f);
			fclose(f);
			chmod(path, 0755);
		}
		shsplitfree(&sp);
	}
	FILE *bl = popen("busybox --list 2>/dev/null", "r");
	char an[128];
	while (bl && fgets(an, sizeof an, bl)) {
		an[strcspn(an, "\n")] = 0;
		strvadd(&applets, an);
	}
	if (bl)
		pclose(bl);
	for (const char *const *r = reals; *r; r++) {
		char path[256], real[256];
		snprintf(path, sizeof path, "%s/%s", stubdir, *r);
		snprintf(real, sizeof real, "/usr/bin/%s", *r);
		if (access(real, X_OK) != 0)
			snprintf(real, sizeof real, "/bin/%s", *r);
		if (symlink(real, path) != 0)
			perror("symlink");
	}
	for (size_t i = 0; i < 3; i++)
		if (access(shells[i][0], X_OK) == 0)
			shells[nshells++][0] = shells[i][0], shells[nshells - 1][1] = shells[i][1];
	if (nshells < 3)
		printf("SKIPPED some shells: only %d of dash, bash, busybox found\n", nshells);
}

static void rmtree(const char *dir, int self)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rmtree(p, 1);
		else
			unlink(p);
	}
	closedir(d);
	if (self)
		rmdir(dir);
}

/* Run line in one shell with only the stubs on PATH; 0 when it finished within 5 s. */
static int runshell(int sh, const char *line)
{
	pid_t pid = fork();
	if (pid == 0) {
		char env0[160], env1[160], env2[160];
		snprintf(env0, sizeof env0, "PATH=%s", stubdir);
		snprintf(env1, sizeof env1, "NSLOG=%s", logdir);
		snprintf(env2, sizeof env2, "HOME=%s", workdir);
		char *envp[] = {env0, env1, env2, NULL};
		char *argv[] = {(char *)shells[sh][1], "-c", (char *)line, NULL};
		int fd = open("/dev/null", O_RDWR);
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		if (chdir(workdir) < 0)
			_exit(127);
		setpgid(0, 0);
		execve(shells[sh][0], argv, envp);
		_exit(127);
	}
	/* we are a subreaper: wait for the shell and for what it left running in the background */
	long waited = 0;
	for (long ns = 100000; waited < 5000000000L; waited += ns, ns = ns < 20000000 ? 2 * ns : ns) {
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			;
		if (w < 0)
			return 0; /* no child left */
		nanosleep(&(struct timespec){0, ns}, NULL);
	}
	kill(-pid, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
	return -1;
}

/* A word the splitter reported (SHUNK: any text) against one the shell passed. */
static int wordmatch(const char *w, const char *got)
{
	if (!*w)
		return !*got;
	if (*w == SHUNK) {
		for (const char *g = got;; g++) {
			if (wordmatch(w + 1, g))
				return 1;
			if (!*g)
				return 0;
		}
	}
	return *w == *got && wordmatch(w + 1, got + 1);
}

/* The words a command reported against the NUL-separated words got[0..n) that a program was
 * run with: a word that may split matches any run of words. */
static int cmdmatch(const struct shcmd *c, size_t k, const char *got, size_t n)
{
	if (k == c->argc)
		return n == 0;
	if (c->wf[k] & SHW_SPLIT) {
		if (cmdmatch(c, k + 1, got, n))
			return 1;
		for (size_t i = 0; i < n; i++)
			if (!got[i] && cmdmatch(c, k + 1, got + i + 1, n - i - 1))
				return 1;
		return 0;
	}
	if (!n)
		return 0;
	size_t l = strlen(got);
	return wordmatch(c->argv[k], got) && cmdmatch(c, k + 1, got + l + 1, n - l - 1);
}

static int listed(const char *name, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(name, *names))
			return 1;
	return 0;
}

/* Every command the shells ran must be one the splitter reported, with the same words. */
static void differential(const char *line, int quiet)
{
	struct shsplit sp;
	/* /workspace may exist on the host; while loops need not end; only lines whose
	 * redirections stay in the work directory are run */
	if (shsplit(line, strlen(line), &sp) != 0 || strstr(line, "/workspace") || strstr(line, "while") || strstr(line, "/tmp") || strstr(line, "..") ||
	    strstr(line, "sh -l") || strstr(line, "--login") /* a login shell runs its profile: files like any other */) {
		shsplitfree(&sp);
		return;
	}
	for (size_t k = 0; k < sp.ncmds; k++) {
		const struct shcmd *c = &sp.cmds[k];
		if (c->redir || (c->argc && (c->wf[0] & SHW_UNKNOWN))) {
			shsplitfree(&sp);
			return;
		}
		int inextra = 0;
		for (size_t j = 0; c->argc && j < extra.n; j++)
			inextra |= !strcmp(extra.v[j], c->argv[0]);
		if (c->argc && !inextra && !listed(c->argv[0], stubs) && !listed(c->argv[0], reals) && !listed(c->argv[0], builtins)) {
			shsplitfree(&sp); /* only lines made of stubs, wrappers and builtins are safe to run */
			return;
		}
	}
	ran++;
	struct buf got = {0};
	int appletline = 0;
	for (size_t k = 0; k < sp.ncmds; k++)
		for (size_t j = 0; sp.cmds[k].argc && j < applets.n; j++)
			appletline |= !strcmp(applets.v[j], sp.cmds[k].argv[0]) && !listed(sp.cmds[k].argv[0], builtins) &&
			              !listed(sp.cmds[k].argv[0], reals);
	for (int sh = 0; sh < nshells; sh++) {
		if (appletline && !strcmp(shells[sh][1], "sh"))
			continue;
		/* dash and busybox read $'..' as '$' and a quoted word: a word starting with '$', never
		 * an option nor a program on PATH; the splitter reports bash's reading */
		if (strstr(line, "$'") && strcmp(shells[sh][1], "bash"))
			continue;
		rmtree(logdir, 0);
		rmtree(workdir, 0);
		shellruns++;
		if (runshell(sh, line) < 0) {
			ok(0, "%s timed out on [%s]", shells[sh][1], line);
			continue;
		}
		DIR *d = opendir(logdir);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char p[512];
			snprintf(p, sizeof p, "%s/%s", logdir, e->d_name);
			struct err er;
			got.len = 0;
			if (readfile(p, &got, &er) < 0)
				continue;
			int found = 0;
			for (size_t k = 0; k < sp.ncmds && !found; k++)
				found = sp.cmds[k].argc && cmdmatch(&sp.cmds[k], 0, got.data, got.len);
			for (size_t i = 0; i < got.len; i++)
				if (!got.data[i])
					got.data[i] = ' ';
			ok(found, "%s ran [%.*s] for [%s], which the splitter did not report", shells[sh][1], (int)got.len,
			   got.data, line);
			if (!found && !quiet)
				for (size_t k = 0; k < sp.ncmds; k++)
					fprintf(stderr, "  splitter: [%s]\n", sp.cmds[k].text);
		}
		if (d)
			closedir(d);
	}
	buffree(&got);
	shsplitfree(&sp);
}

static const char *const plainlines[] = {
	"git diff HEAD~1",
	"git  diff  \"a b\" 'c d' e\\ f",
	"git diff \"a\\\"b\" \"\\$x\" \"\\q\" 'x\\y'",
	"git log --format='%h $x `y`'",
	"a && b || c | d & e",
	"a;b&&c||d|e",
	"a\nb\n\nc",
	"(a; b) | { c; d; }",
	"if a; then b; elif c; then d; else b x; fi",
	"until a; do b; done > out",
	"! a",
	"a > out 2>&1 < /dev/null >> log 2>/dev/null >| f <> g",
	"a>out;b<out",
	"gi\\\nt di\\\nff",
	"a &\\\n& b",
	"a # b; c",
	"a b#c d#e",
	"a # x \\\nb",
	"cat <<EOF\nbody\nEOF\nls",
	"cat <<'EOF'\n$(rm -rf /) `x`\nEOF\nls x",
	"cat <<-\"E\"\n\tx $y\n\tE\nls",
	"cat <<A <<B\na\nA\nb\nB\nls",
	"grep 'a;b|c&d' f",
	"a $ a$ \"b$\" $/ $.",
	"ls *.c ?x [ab]",
	"git diff HEAD@{1}",
	"grep '（注）' notes",
	"a '' \"\" x''y",
	"a \"multi\nline\" 'and\nthis'",
	"a \\\" \\' \\\\ \\$ \\`",
	"a \"\\\n\"x",
	"{ a; } > f 2>&1",
	"(a) > f",
	"a | b | c | d",
	"a ; ; b",
	"a \"#\" '#' \\#",
	"a x~ '~' HEAD~2 \\~",
	"b '{' '}' x '('",
};

static void vsshells(void)
{
	setup();
	for (size_t i = 0; i < sizeof plainlines / sizeof plainlines[0]; i++) {
		int before = ran;
		differential(plainlines[i], 0);
		ok(ran > before, "[%s] should be plain and made of stubs", plainlines[i]);
	}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		differential(cases[i].line, 0);
	int before = ran;
	for (size_t i = 0; i < sizeof agentlines / sizeof agentlines[0]; i++)
		differential(agentlines[i], 0);
	printf("agent lines: %d of %zu run by the shells with stubs for %zu programs\n", ran - before,
	       sizeof agentlines / sizeof agentlines[0], extra.n);
	ok(ran - before >= 150, "most agent lines are run by the shells: %d", ran - before);
}

/* Random lines from shell-ish pieces; the safe-to-run plain ones go to the shells. */
static void fuzz(int iters)
{
	static const char *const pieces[] = {
		"git", "ls", "a", "b", "c", "d", "x", "-n", " ", " ", " ", " ", ";", "&&", "||", "|", "&", "\n",
		"(", ")", "{", "}", "'", "\"", "\\", "\\\n", "#", "$", "$(", "`", "<", ">", ">>", "2>&1", "<<E",
		"<<'E'", "<<-E", "\nE\n", "\n\tE\n", "E", "else ", "elif ", "if ", "then ", "fi", "while ", "do ", "done", "!", "=", "y=1", "*",
		"?", "[", "]", "~", ",", "{a,b}", "\t", "'q r'", "\"s t\"", "out", "2>", "<&", "-",
		"\xef\xbc\x9b", "\xc2\xa0", "é", "$x", "${", "$((", "<(", ">(", "eval ", "sh ", "cat ", "grep ",
		"for x in a b; do ", "for ((i=0;i<2;i++)); do ", "case $x in a|b) ", ";;", " esac", "[[ ", " ]]", "(( ",
		" ))", "timeout 1 ", "env A=1 ", "nohup ", "xargs ", "bash -c '", "sh -c \"", "f() { ", "function g { ",
		"$'\\x61'", "${x:-a}", "${x:-$(a)}", "$((1+2))", "time ", "arr=(1 $(b) 2)", "|&", "&>", "<<<",
		"command ", "builtin ", "exec ", "find . -exec a {} ';' ", "10>", "{fd}>", "$'", "in ",
	};
	unsigned seed = 20261122;
	int plain = 0;
	for (int it = 0; it < iters; it++) {
		char line[256];
		size_t n = 0, np = 1 + (seed = seed * 1103515245 + 12345) % 14;
		if (it % 2) { /* character soup */
			static const char soup[] = "abcde ;&|()<>'\"\\\n#$`{}!=*~-E\t12";
			np = 1 + (seed >> 8) % 24;
			for (size_t k = 0; k < np; k++) {
				seed = seed * 1103515245 + 12345;
				line[n++] = soup[(seed >> 8) % (sizeof soup - 1)];
			}
			np = 0;
		}
		for (size_t k = 0; k < np; k++) {
			seed = seed * 1103515245 + 12345;
			const char *p = pieces[(seed >> 8) % (sizeof pieces / sizeof pieces[0])];
			size_t l = strlen(p);
			if (n + l >= sizeof line)
				break;
			memcpy(line + n, p, l);
			n += l;
		}
		line[n] = 0;
		struct shsplit sp;
		int rc = shsplit(line, n, &sp);
		/* invariants: a plain line has no flagged command; every command's words are NUL-terminated */
		int bad = 0, flagged = sp.unsafe != NULL;
		for (size_t k = 0; k < sp.ncmds; k++) {
			flagged |= sp.cmds[k].opaque != NULL;
			bad |= sp.cmds[k].argv[sp.cmds[k].argc] != NULL;
		}
		ok(!bad && (rc == 0) == !flagged, "invariants on [%s]", line);
		plain += rc == 0;
		shsplitfree(&sp);
		differential(line, 1);
	}
	printf("fuzz: %d lines, %d plain, %d run by the shells\n", iters, plain, ran);
}

int main(void)
{
	unitcases();
	edges();
	vsshells();
	const char *f = getenv("NS_FUZZ");
	fuzz(f ? atoi(f) : 3000);
	printf("shell runs: %d (%d shells)\n", shellruns, nshells);
	rmtree(tmpdir, 1);
	strvfree(&extra);
	strvfree(&applets);
	return tdone();
}
