/* test_gitindex: a git index judged by its entries: the same after git rewrites its stat data or
 * its version, different when an entry changes; what is not an index reads as such (-1). Real
 * indexes are made by the host's git; without git those checks say SKIPPED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../util/gitindex.h"
#include "../../util/util.h"
#include "t.h"

static char dir[] = "/tmp/ns-gitindex-XXXXXX";

static int sh(const char *cmd)
{
	char *c = xasprintf("cd '%s' && { %s; } >/dev/null 2>&1", dir, cmd);
	int rc = system(c);
	free(c);
	return rc;
}

/* The sum of dir/.git/index, or -1. */
static int sum(unsigned char out[32], struct buf *keep)
{
	char *p = xasprintf("%s/.git/index", dir);
	struct buf b = {0};
	struct err e = {0};
	int rc = readfile(p, &b, &e) == 0 ? gitindexsum(b.data, b.len, out) : -1;
	free(p);
	if (keep) {
		buffree(keep);
		*keep = b;
	} else {
		buffree(&b);
	}
	return rc;
}

int main(void)
{
	ok(gitindexpath(".git/index") && gitindexpath("sub/.git/index"), "index paths");
	ok(!gitindexpath("x.git/index") && !gitindexpath(".git/index.lock") && !gitindexpath("git/index"),
	   "not index paths");
	unsigned char a[32], b[32];
	ok(gitindexsum("DIRC", 4, a) < 0, "too short");
	ok(gitindexsum(NULL, 0, a) < 0, "nothing");
	if (!mkdtemp(dir) || system("git --version >/dev/null 2>&1") != 0) {
		printf("SKIPPED gitindex: git is not installed: no real index to read\n");
		return tdone();
	}
	ok(sh("git init -q && printf 'one\\n' > a && mkdir d && printf 'two\\n' > d/b && git add -A") == 0, "a repository");
	struct buf first = {0};
	ok(sum(a, &first) == 0, "a version 2 index reads");
	ok(sh("sleep 1.1; touch a d/b && git status --short") == 0, "git status after touch");
	ok(sum(b, NULL) == 0 && memcmp(a, b, 32) == 0, "stat data rewritten: the same entries");
	ok(sh("git update-index --index-version 4") == 0, "version 4");
	ok(sum(b, NULL) == 0 && memcmp(a, b, 32) == 0, "version 4: the same entries");
	ok(sh("git update-index --index-version 3 && git update-index --skip-worktree a") == 0, "version 3, extended flags");
	ok(sum(b, NULL) == 0 && memcmp(a, b, 32) != 0, "a flag set: other entries");
	ok(sh("git update-index --no-skip-worktree a && git update-index --index-version 2") == 0, "back");
	ok(sum(b, NULL) == 0 && memcmp(a, b, 32) == 0, "back: the same entries");
	ok(sh("printf 'ONE\\n' > a && git add a") == 0, "a changed file added");
	ok(sum(b, NULL) == 0 && memcmp(a, b, 32) != 0, "a changed entry: another sum");
	ok(sh("git rm -q --cached d/b") == 0, "an entry removed");
	unsigned char c[32];
	ok(sum(c, NULL) == 0 && memcmp(b, c, 32) != 0, "an entry removed: another sum");
	/* cut short anywhere in its entries: never read past the end, and never the whole sum */
	int bad = 0;
	for (size_t n = 0; n + 20 < first.len; n++) {
		unsigned char x[32];
		char *cut = xmalloc(n ? n : 1);
		memcpy(cut, first.data, n);
		if (gitindexsum(cut, n, x) == 0 && memcmp(x, a, 32) == 0 && n < 12 + 62 * 2)
			bad++;
		free(cut);
	}
	ok(bad == 0, "an index cut short never sums as the whole: %d", bad);
	buffree(&first);
	char *rm = xasprintf("rm -rf '%s'", dir);
	ok(system(rm) == 0, "cleaned up");
	free(rm);
	return tdone();
}
