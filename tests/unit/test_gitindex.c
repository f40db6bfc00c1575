/* test_gitindex: a git index judged by its entries: the same after git rewrites its stat data or
 * its version, different when an entry changes; what is not an index reads as such (-1). Real
 * indexes are made by the host's git; without git those checks say SKIPPED. Crafted indexes:
 * the same paths as version 2 and as version 4 (however its prefixes are cut) sum alike, and a
 * version-4 index whose one path grows a byte an entry is hashed in bytes linear in its size
 * (counted by this file's EVP_DigestUpdate, which the library's calls reach before OpenSSL's). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "../../util/gitindex.h"
#include "../../util/util.h"
#include "t.h"

static char dir[] = "/tmp/ns-gitindex-XXXXXX";

/* Bytes hashed through EVP_DigestUpdate since it was last set to 0. */
static size_t hashed;

int EVP_DigestUpdate(EVP_MD_CTX *ctx, const void *d, size_t cnt)
{
	static int (*real)(EVP_MD_CTX *, const void *, size_t);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "EVP_DigestUpdate");
	hashed += cnt;
	return real(ctx, d, cnt);
}

static void be32put(struct buf *b, uint32_t v)
{
	unsigned char p[4] = {v >> 24, v >> 16, v >> 8, v};
	bufadd(b, p, 4);
}

/* An index of version ver listing paths (SHA-1 ids, all zero stat data). Version 4 names each path
 * by the bytes it drops from the one before: as few as git drops (greedy), or the whole path. */
static void craft(struct buf *b, int ver, const char **paths, int n, int greedy)
{
	b->len = 0;
	bufadd(b, "DIRC", 4);
	be32put(b, (uint32_t)ver);
	be32put(b, (uint32_t)n);
	const char *prev = "";
	for (int i = 0; i < n; i++) {
		size_t start = b->len, len = strlen(paths[i]);
		static const unsigned char zero[40];
		bufadd(b, zero, 24);
		be32put(b, 0100644);
		bufadd(b, zero, 12);
		for (int k = 0; k < 20; k++)
			bufputc(b, (char)(i + k));
		unsigned char flags[2] = {len >> 8 & 0x0f, len & 0xff};
		bufadd(b, flags, 2);
		if (ver == 4) {
			size_t same = 0;
			while (greedy && prev[same] && prev[same] == paths[i][same])
				same++;
			size_t drop = strlen(prev) - same; /* below 128 here: one byte of varint */
			bufputc(b, (char)drop);
			bufadd(b, paths[i] + same, len - same + 1);
		} else {
			bufadd(b, paths[i], len);
			do
				bufputc(b, 0);
			while ((b->len - start) % 8);
		}
		prev = paths[i];
	}
	bufadd(b, "checksum, not checked", 20);
}

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

	const char *paths[] = {"a", "a/b", "a/b/c", "a/bc", "a/c", "ab", "b", "b/a/a/a", "b/a/b"};
	int np = sizeof paths / sizeof *paths;
	struct buf idx = {0};
	unsigned char v2[32], s4[32];
	craft(&idx, 2, paths, np, 0);
	ok(gitindexsum(idx.data, idx.len, v2) == 0, "a crafted version 2 index reads");
	craft(&idx, 4, paths, np, 1);
	ok(gitindexsum(idx.data, idx.len, s4) == 0 && memcmp(s4, v2, 32) == 0, "version 4, prefixes as git cuts them: the same");
	craft(&idx, 4, paths, np, 0);
	ok(gitindexsum(idx.data, idx.len, s4) == 0 && memcmp(s4, v2, 32) == 0, "version 4, whole paths: the same");
	paths[3] = "a/bd";
	craft(&idx, 4, paths, np, 1);
	ok(gitindexsum(idx.data, idx.len, s4) == 0 && memcmp(s4, v2, 32) != 0, "a path changed: another sum");

	/* 2 MiB of version-4 entries each adding a byte to the path before: 32 000 paths up to 32 000
	 * bytes long, 500 MiB to hash as whole paths */
	enum { GROW = 32000 };
	char *path = xmalloc(GROW + 1);
	memset(path, 'a', GROW);
	const char **grow = xmalloc(GROW * sizeof *grow);
	path[GROW] = 0;
	for (int i = 0; i < GROW; i++)
		grow[i] = path + GROW - 1 - i; /* "a", "aa", "aaa", ... */
	craft(&idx, 4, grow, GROW, 1);
	hashed = 0;
	int rc = gitindexsum(idx.data, idx.len, s4);
	ok(rc == 0, "an index of ever longer paths reads");
	ok(hashed <= 2 * idx.len, "its paths hashed in %zu bytes for an index of %zu", hashed, idx.len);
	/* listed whole (what the snapshot walk keeps tracked), the same index passes a budget of 64 MiB */
	struct strv listed = {0};
	ok(gitindexpaths(idx.data, idx.len, (size_t)64 << 20, &listed) < 0 && listed.n == 0,
	   "its paths, each whole, pass a budget of 64 MiB: refused");
	ok(gitindexpaths(idx.data, idx.len, (size_t)600 << 20, &listed) == 0 && listed.n == GROW &&
	   strlen(listed.v[GROW - 1]) == GROW, "within a budget they fit, listed whole");
	strvfree(&listed);
	craft(&idx, 4, paths, np, 1);
	ok(gitindexpaths(idx.data, idx.len, 1 << 20, &listed) == 0 && listed.n == (size_t)np &&
	   strcmp(listed.v[7], "b/a/a/a") == 0, "version 4, prefixes cut: the paths whole");
	strvfree(&listed);
	ok(gitindexpaths("not an index", 12, 1 << 20, &listed) < 0, "not an index: refused");
	/* 40 bytes claiming one entry: with 32-byte ids the checksum overlaps the header (ASan, SANITIZE=1:
	 * a read 44 bytes past the end, found by fuzz_gitindex) */
	char *tiny = xcalloc(1, 40);
	memcpy(tiny, "DIRC\0\0\0\2\0\0\0\1", 12);
	ok(gitindexpaths(tiny, 40, 1 << 20, &listed) < 0 && gitindexsum(tiny, 40, a) < 0, "40 bytes, one entry: refused");
	free(tiny);
	craft(&idx, 4, grow, GROW, 1);
	free(grow);
	free(path);
	buffree(&idx);
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
	/* a split index: its entries are in .git/sharedindex.*, the ones in .git/index have empty names */
	struct buf split = {0};
	struct strv sp = {0};
	ok(sh("git update-index --split-index") == 0 && sum(c, &split) < 0 && split.len, "a split index: no sum, its bytes compared");
	ok(gitindexpaths(split.data, split.len, 1 << 20, &sp) < 0 && sp.n == 0, "a split index: not listed");
	ok(sh("git update-index --no-split-index") == 0 && sum(c, &split) == 0 &&
	       gitindexpaths(split.data, split.len, 1 << 20, &sp) == 0 && sp.n == 1 && strcmp(sp.v[0], "a") == 0,
	   "no longer split: listed");
	strvfree(&sp);
	buffree(&split);
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
