/* test_gitignore: git's ignore rules, case by case (e2e/gitignore holds a generated tree to
 * git check-ignore on every path); each verdict here was taken from git check-ignore 2.39. */
#include <stdlib.h>
#include <string.h>
#include "t.h"
#include "../../util/gitignore.h"

struct c {
	const char *path;
	int isdir, want;
};

static void check(const char *name, const char *root, const char *subdir, const char *sub, const struct c *v, size_t n)
{
	struct gitignore *g = gitignorenew();
	gitignoreadd(g, "", root, strlen(root));
	if (subdir)
		gitignoreadd(g, subdir, sub, strlen(sub));
	for (size_t i = 0; i < n; i++)
		ok(gitignorematch(g, v[i].path, v[i].isdir) == v[i].want, "%s: %s%s: want %s", name, v[i].path,
		   v[i].isdir ? "/" : "", v[i].want ? "ignored" : "kept");
	gitignorefree(g);
}

int main(void)
{
	static const struct c basic[] = {
		{"x.o", 0, 1}, {"a/b/x.o", 0, 1}, {"x.c", 0, 0}, {"debug.log", 0, 1}, {"important.log", 0, 0},
		{"build", 1, 1}, {"build", 0, 0}, {"src/build", 1, 0}, {"build/x.c", 0, 1}, {"node_modules", 1, 1},
		{"a/node_modules/p.js", 0, 1}, {"#hash", 0, 1}, {"!bang", 0, 1}, {"trail ", 0, 1}, {"trail", 0, 0},
		{"a/deep/x", 0, 1}, {"deep", 1, 0}, {"a/c", 0, 1}, {"a/x/y/c", 0, 1}, {"b/a/c", 0, 0},
		{"Foo.md", 0, 1}, {"foo.md", 0, 1}, {"goo.md", 0, 0}, {"vendor/x", 0, 1}, {"vendor/lib", 1, 0},
		{"vendor/lib/y", 0, 0}, {"[x", 0, 0}, {"sp ace", 0, 1}, {"crlf", 0, 1},
	};
	check("root", "# comment\n*.o\n*.log\n!important.log\n/build/\nnode_modules/\n\\#hash\n\\!bang\ntrail\\ \n"
	              "**/deep/**\na/**/c\n[Ff]oo.md\nfoo.md\nvendor/*\n!vendor/lib\n[x\nsp ace   \ncrlf\r\n",
	      NULL, NULL, basic, sizeof basic / sizeof *basic);
	/* a deeper file wins over the root's; a folder ignored above keeps its files ignored */
	static const struct c nested[] = {
		{"src/x.o", 0, 0}, {"x.o", 0, 1}, {"src/notes.txt", 0, 1}, {"notes.txt", 0, 0}, {"src/foo", 0, 1},
		{"src/a/foo", 0, 0}, {"out/keep.o", 0, 1}, {"src/sub/debug.log", 0, 1}, {"src/debug.log", 0, 0},
	};
	check("nested", "*.o\nout/\n", "src", "!*.o\nnotes.txt\n/foo\nsub/debug.log\n!out/keep.o\n", nested,
	      sizeof nested / sizeof *nested);
	static const struct c reinc[] = {{"logs/a.txt", 0, 1}, {"logs", 1, 1}, {"x/logs", 1, 1}};
	check("a re-included file under an ignored folder stays ignored", "logs/\n!logs/a.txt\n", NULL, NULL, reinc,
	      sizeof reinc / sizeof *reinc);
	return tdone();
}
