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
#include "../../runner/shellsplit.h"
#include "../../util/util.h"

/* The words of a command as "<w1><w2>...". */
static void render(const struct shcmd *c, struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
	for (size_t k = 0; k < c->argc; k++)
		bufprintf(b, "<%s>", c->argv[k]);
	if (!b->data)
		bufputs(b, "");
}

struct tcase {
	const char *line;
	int plain;            /* shsplit returns 0 */
	const char *cmds[6];  /* rendered words of each command, in order */
	const char *why;      /* a substring of the reason (line's or first flagged command's), or NULL */
};

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
	{"until a; do b; done > out", 1, {"<a>", "<b>"}, NULL},
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
	{"ls *.c ?x [ab]", 1, {"<ls><*.c><?x><[ab]>"}, NULL},
	{"[ -f x ]", 1, {"<[><-f><x><]>"}, NULL},
	{"git diff HEAD@{1}", 1, {"<git><diff><HEAD@{1}>"}, NULL},
	{"grep '（注）' notes", 1, {"<grep><（注）><notes>"}, NULL},
	{"git log --author=José", 1, {"<git><log><--author=José>"}, NULL},
	{"", 1, {NULL}, NULL},
	{"# only a comment", 1, {NULL}, NULL},
	{"a ''", 1, {"<a><>"}, NULL},
	{"a=b", 0, {""}, "assignment"},
	{"echo a=b", 1, {"<echo><a=b>"}, NULL},
	{"> f", 1, {""}, NULL},

	/* flagged commands; the rest of the line still read */
	{"git log $(cat /etc/passwd)", 0, {"<cat></etc/passwd>", "<git><log><>"}, "command substitution"},
	{"echo `a | b`; c", 0, {"<a>", "<b>", "<echo><>", "<c>"}, "command substitution"},
	{"echo \"`a \\\"q\\\"`\"", 0, {"<a><q>", "<echo><>"}, "command substitution"},
	{"diff <(a) >(b)", 0, {"<a>", "<b>", "<diff>"}, "process substitution"},
	{"echo $HOME", 0, {"<echo><>"}, "parameter expansion"},
	{"echo \"$1\"", 0, {"<echo><>"}, "parameter expansion"},
	{"X=1 git diff", 0, {"<git><diff>"}, "assignment"},
	{"a+=b git diff", 0, {"<git><diff>"}, "assignment"},
	{"git diff a+=b +x", 1, {"<git><diff><a+=b><+x>"}, NULL},
	{"a[1]=x git diff", 0, {"<a[1]=x><git><diff>"}, "command name"},
	{"eval ls", 0, {"<eval><ls>"}, "runs a string"},
	{"'e'val ls", 0, {"<eval><ls>"}, "runs a string"},
	{"/usr/bin/env ls", 0, {"</usr/bin/env><ls>"}, "runs a string"},
	{"busybox sh", 0, {"<busybox><sh>"}, "shell"},
	{". ./x", 0, {"<.><./x>"}, "runs a string"},
	{"export A=1", 0, {"<export><A=1>"}, "later commands"},
	{"find . -exec rm {} ;", 0, {"<find><.><-exec><rm><{}>"}, "find -exec"},
	{"printf -v x y", 0, {"<printf><-v><x><y>"}, "-v"},
	{"a > /etc/x", 0, {"<a>"}, "outside /workspace"},
	{"a > ../x", 0, {"<a>"}, "outside /workspace"},
	{"a < /workspace/../etc/x", 0, {"<a>"}, "outside /workspace"},
	{"a > ''", 0, {"<a>"}, "outside /workspace"},
	{"a > *.txt", 0, {"<a>"}, "pattern"},
	{"a > ~/x", 0, {"<a>"}, "tilde"},
	{"a x=~/y", 0, {"<a><x=~/y>"}, "tilde"},
	{"a b:~", 0, {"<a><b:~>"}, "tilde"},
	{"a ~+", 0, {"<a><~+>"}, "tilde"},
	{"git diff HEAD~1 x~ '~'", 1, {"<git><diff><HEAD~1><x~><~>"}, NULL},
	{"a >& f", 0, {"<a>"}, "file descriptor"},
	{"a 10>f", 0, {"<a>"}, "above 9"},
	{"a {fd}>f", 0, {"<a><{fd}>"}, "named file descriptor"},
	{"~/x", 0, {"<~/x>"}, "tilde"},
	{"c?t x", 0, {"<c?t><x>"}, "command name"},
	{"echo {a,b}", 0, {"<echo><{a,b}>"}, "brace"},
	{"echo {1..3}", 0, {"<echo><{1..3}>"}, "brace"},
	{"git diff；rm", 0, {"<git><diff；rm>"}, "looks like"},
	{"git\xc2\xa0" "diff", 0, {"<git\xc2\xa0" "diff>"}, "looks like"},
	{"cd x; a > y", 0, {"<cd><x>", "<a>"}, "changes directory"},
	{"cat <<EOF\n$x\nEOF", 0, {"<cat>"}, "here-document"},

	/* the line as a whole */
	{"git diff \"x", 0, {"<git><diff>"}, "unbalanced double quote"},
	{"git diff 'x", 0, {"<git><diff>"}, "unbalanced single quote"},
	{"git diff `x", 0, {"<git><diff>"}, "backquote"},
	{"git diff \\", 0, {"<git><diff>"}, "backslash at the end"},
	{"(a", 0, {"<a>"}, "unbalanced"},
	{"a)", 0, {"<a>"}, "unbalanced"},
	{"f() { a; }", 0, {"<f>"}, "unexpected ("},
	{"a=(x)", 0, {""}, "unexpected ("},
	{"echo $((1+2))", 0, {"<echo>"}, "arithmetic"},
	{"((x))", 0, {NULL}, "arithmetic"},
	{"echo ${x}", 0, {"<echo>"}, "${ }"},
	{"echo $'a'", 0, {"<echo>"}, "bash"},
	{"a &> f", 0, {"<a>"}, "&>"},
	{"a |& b", 0, {"<a>"}, "|&"},
	{"cat <<< x", 0, {"<cat>"}, "here-string"},
	{"a ;; b", 0, {"<a>"}, ";;"},
	{"case x in x) a;; esac", 0, {NULL}, "case"},
	{"for x in a; do b; done", 0, {NULL}, "for"},
	{"function f { a; }", 0, {NULL}, "function"},
	{"[[ a ]]", 0, {NULL}, "[["},
	{"time a", 0, {NULL}, "time"},
	{"cat <<EOF", 0, {"<cat>"}, "here-document"},
	{"cat <<EOF\nx\n EOF", 0, {"<cat>"}, "end line"},
	{"a >", 0, {"<a>"}, "without a target"},
	{"(a) b", 0, {"<a>"}, "after a compound"},
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
		while (want < 6 && t->cmds[want])
			want++;
		ok(sp.ncmds == want, "[%s]: %zu commands, want %zu", t->line, sp.ncmds, want);
		for (size_t k = 0; k < sp.ncmds && k < want; k++) {
			render(&sp.cmds[k], &b);
			ok(strcmp(b.data, t->cmds[k]) == 0, "[%s] command %zu: %s, want %s", t->line, k, b.data, t->cmds[k]);
		}
		if (t->why) {
			const char *why = sp.unsafe;
			for (size_t k = 0; !why && k < sp.ncmds; k++)
				why = sp.cmds[k].unsafe;
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
	ok(shsplit(b.data, b.len, &sp) < 0, "deep backquotes");
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

/* Every command the shells ran must be one the splitter reported, with the same words. */
static void differential(const char *line, int quiet)
{
	struct shsplit sp;
	/* /workspace may exist on the host; while loops need not end */
	if (shsplit(line, strlen(line), &sp) != 0 || strstr(line, "/workspace") || strstr(line, "while")) {
		shsplitfree(&sp);
		return;
	}
	for (size_t k = 0; k < sp.ncmds; k++) {
		int stub = 0;
		for (const char *const *s = stubs; sp.cmds[k].argc && *s; s++)
			stub |= !strcmp(sp.cmds[k].argv[0], *s);
		if (!stub) { /* only lines made of stubs are safe to run */
			shsplitfree(&sp);
			return;
		}
	}
	ran++;
	struct buf want = {0}, got = {0};
	for (int sh = 0; sh < nshells; sh++) {
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
			for (size_t k = 0; k < sp.ncmds && !found; k++) {
				want.len = 0;
				for (size_t w = 0; w < sp.cmds[k].argc; w++)
					bufadd(&want, sp.cmds[k].argv[w], strlen(sp.cmds[k].argv[w]) + 1);
				found = want.len == got.len && memcmp(want.data, got.data, got.len) == 0;
			}
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
	buffree(&want);
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
			flagged |= sp.cmds[k].unsafe != NULL;
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
	return tdone();
}
