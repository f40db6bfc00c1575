/* test_glob: the wildcard matchers of approval rules. */
#include <stdlib.h>
#include <string.h>
#include "t.h"
#include "../../util/glob.h"

static int gm(const char *p, const char *s)
{
	return globmatch(p, strlen(p), s, strlen(s));
}

static void strings(void)
{
	static const struct {
		const char *pat, *s;
		int want;
	} c[] = {
		{"*", "", 1},
		{"*", "a/b c", 1},
		{"", "", 1},
		{"", "a", 0},
		{"abc", "abc", 1},
		{"abc", "abd", 0},
		{"a?c", "abc", 1},
		{"a?c", "a/c", 1},
		{"a?c", "ac", 0},
		{"a?c", "aéc", 1}, /* ? is one character, not one byte */
		{"a??c", "aéc", 0},
		{"[abc]x", "bx", 1},
		{"[abc]x", "dx", 0},
		{"[!abc]x", "dx", 1},
		{"[^abc]x", "ax", 0},
		{"[a-c]", "b", 1},
		{"[a-c]", "d", 0},
		{"[]]", "]", 1},
		{"[!]]", "a", 1},
		{"[[:digit:]][[:alpha:]]", "5x", 1},
		{"[[:digit:]]", "x", 0},
		{"[[:space:][:upper:]]", "Q", 1},
		{"[é-ü]", "ö", 1},
		{"[abc", "[abc", 1}, /* an unclosed set is literal */
		{"\\*", "*", 1},
		{"\\*", "x", 0},
		{"a\\?", "a?", 1},
		{"a*b*c", "aXXbYYc", 1},
		{"a*b*c", "aXXbYY", 0},
		{"*.c", "main.c", 1},
		{"*.c", ".hidden.c", 1},
		{"--output*", "--output=/x", 1},
		{"**", "anything/at/all", 1},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		ok(gm(c[i].pat, c[i].s) == c[i].want, "globmatch(%s, %s) != %d", c[i].pat, c[i].s, c[i].want);
	/* no exponential backtracking */
	char s[4001];
	memset(s, 'a', 4000);
	s[4000] = 0;
	ok(!gm("a*a*a*a*a*a*a*a*a*a*b", s), "pathological pattern");
	ok(gm("*a*a*a*a*a*a*a*a*a*a", s), "pathological pattern that matches");
}

static void paths(void)
{
	static const struct {
		const char *pat, *path;
		int want;
	} c[] = {
		{"reports/**", "reports", 1},
		{"reports/**", "reports/a", 1},
		{"reports/**", "reports/a/b/c", 1},
		{"reports/**", "reportsX/a", 0},
		{"reports/**", "src/reports/a", 0},
		{"**/*.md", "a.md", 1},
		{"**/*.md", "x/y/a.md", 1},
		{"**/*.md", "x/y/a.mdx", 0},
		{"*", "a", 1},
		{"*", "a/b", 0},
		{"*", ".", 0},
		{"**", ".", 1},
		{".", ".", 1},
		{".", "a", 0},
		{"src/*/x", "src/a/x", 1},
		{"src/*/x", "src/a/b/x", 0},
		{"a/**/b", "a/b", 1},
		{"a/**/b", "a/x/y/b", 1},
		{"a/**/b", "a/x/y/c", 0},
		{"a/**/b/**/c", "a/1/b/2/3/c", 1},
		{"a/**/b/**/c", "a/1/b/2/3/d", 0},
		{"**/test_*.c", "deep/er/test_x.c", 1},
		{"/workspace/a/*", "a/b", 1},
		{"/workspace", ".", 1},
		{"/workspace/**", "x/y", 1},
		{"./a", "a", 1},
		{"a//b/", "a/b", 1},
		{"/etc/*", "etc/passwd", 0},
		{"/workspacefoo/*", "workspacefoo/x", 0},
		{"reports**", "reportsX", 1}, /* ** inside a segment is * */
		{"reports**", "reports/x", 0},
		{"*.c", ".hidden.c", 1},
		{"name with spaces/*", "name with spaces/x y", 1},
		{"new*", "new\nline", 1},
		{"[!.]*", ".git", 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		ok(globpath(c[i].pat, c[i].path) == c[i].want, "globpath(%s, %s) != %d", c[i].pat, c[i].path, c[i].want);
	/* many ** over a deep path stays quick */
	char deep[4096] = "";
	for (int i = 0; i < 1000; i++)
		strcat(deep, "a/");
	strcat(deep, "b");
	ok(!globpath("**/a/**/a/**/a/**/c", deep), "deep path, no match");
	ok(globpath("**/a/**/a/**/a/**/b", deep), "deep path, match");
}

static void commands(void)
{
	static const struct {
		const char *pat;
		const char *words[6];
		int want;
	} c[] = {
		{"git diff *", {"git", "diff"}, 1},
		{"git diff *", {"git", "diff", "HEAD"}, 1},
		{"git diff *", {"git", "diff", "a b", "c"}, 1},
		{"git diff *", {"git", "diffx"}, 0},
		{"git diff *", {"git"}, 0},
		{"git diff *", {"git diff"}, 0},
		{"git diff *", {"git diff", "x"}, 0},
		{"git  diff   *", {"git", "diff", "x"}, 1},
		{"git diff*", {"git", "diffx"}, 1},
		{"git diff*", {"git", "diff", "x"}, 0},
		{"ls", {"ls"}, 1},
		{"ls", {"ls", "-l"}, 0},
		{"*", {NULL}, 1},
		{"*", {"anything", "at", "all"}, 1},
		{"git * --output* *", {"git", "diff", "--output=/x", "HEAD"}, 1},
		{"git * --output* *", {"git", "diff", "HEAD"}, 0},
		{"grep -r * src", {"grep", "-r", "x", "y", "src"}, 1},
		{"grep -r * src", {"grep", "-r", "src", "x"}, 0},
		{"git log -n [0-9]*", {"git", "log", "-n", "5"}, 1},
		{"git log -n [0-9]*", {"git", "log", "-n", "x"}, 0},
		{"git diff '*'", {"git", "diff", "*"}, 1},
		{"git diff '*'", {"git", "diff", "x"}, 0},
		{"git diff \\*", {"git", "diff", "*"}, 1},
		{"git diff \"*\"", {"git", "diff", "x"}, 0},
		{"'a b' *", {"a b"}, 1},
		{"'a b' *", {"a", "b"}, 0},
		{"echo \"say \\\"hi\\\"\"", {"echo", "say \"hi\""}, 1},
		{"echo ''", {"echo", ""}, 1},
		{"echo ''", {"echo"}, 0},
		{"cat 'it''s'", {"cat", "its"}, 1},
		{"git 'log *", {"git", "log"}, 0}, /* unbalanced: never matches */
		{"* *", {NULL}, 1},
		{"a * b * c", {"a", "1", "b", "2", "b", "c"}, 1},
		{"a * b * c", {"a", "c", "b"}, 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		size_t n = 0;
		while (n < 6 && c[i].words[n])
			n++;
		ok(globcmd(c[i].pat, (char *const *)c[i].words, n) == c[i].want, "globcmd(%s) case %zu != %d", c[i].pat, i,
		   c[i].want);
	}
	/* a long pattern takes the heap path */
	struct buf p = {0};
	char *w[300];
	for (int i = 0; i < 300; i++) {
		bufputs(&p, "'word with spaces' ");
		w[i] = "word with spaces";
	}
	ok(globcmd(p.data, w, 300), "long pattern");
	ok(!globcmd(p.data, w, 299), "long pattern, one word short");
	buffree(&p);
	struct err e;
	ok(globcmdcheck("git log *", &e) == 0, "check ok");
	ok(globcmdcheck("git \"log *", &e) < 0 && strstr(e.msg, "unbalanced"), "check quote");
	ok(globcmdcheck("  ", &e) < 0 && strstr(e.msg, "empty"), "check empty");
}

static void utf8(void)
{
	uint32_t c;
	ok(u8dec("a", 1, &c) == 1 && c == 'a', "ascii");
	ok(u8dec("é", 2, &c) == 2 && c == 0xe9, "2 bytes");
	ok(u8dec("€", 3, &c) == 3 && c == 0x20ac, "3 bytes");
	ok(u8dec("\xf0\x9f\x98\x80", 4, &c) == 4 && c == 0x1f600, "4 bytes");
	ok(u8dec("\xc0\xaf", 2, &c) < 0, "overlong /");
	ok(u8dec("\xe0\x80\xaf", 3, &c) < 0, "overlong 3");
	ok(u8dec("\xed\xa0\x80", 3, &c) < 0, "surrogate");
	ok(u8dec("\xf4\x90\x80\x80", 4, &c) < 0, "above U+10FFFF");
	ok(u8dec("\xe2\x82", 2, &c) < 0, "truncated");
	ok(u8dec("\x80", 1, &c) < 0, "lone continuation");
	ok(u8dec("\xc3\x28", 2, &c) < 0, "bad continuation");
}

int main(void)
{
	strings();
	paths();
	commands();
	utf8();
	return tdone();
}
