/* gitpatch: two folders compared file by file, written as a git patch. The bytes are data for
 * git: paths and contents go out as they are (git's quoting for odd names), nothing is sanitised
 * here; a caller printing to a terminal does that. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "gitpatch.h"
#include "secrets.h"
#include "linediff.h"

enum { MAXEDITS = 2000 }; /* texts further apart than this go as binary literals (linediff's memory) */

struct entry {
	char *path;  /* relative to the tree */
	char type;   /* 'f' file, 'l' symlink */
	int exec;
	off_t size;
};

struct tree {
	struct entry *v;
	size_t n, cap;
};

/* Whether p, after what git matched, ends a name as NTFS reads it: only spaces and dots, then the
 * end, a '/' (a folder's name in a path), a ':' or, where git says so (bslash), a backslash. */
static int ntfsend(const char *p, int bslash)
{
	p += strspn(p, " .");
	return !*p || *p == '/' || *p == ':' || (bslash && *p == '\\');
}

/* The length of an 8.3 fallback short name of a word whose first six letters are prefix, at p (0
 * if there is none): up to six of prefix's letters in order, '~', a digit 1-9, then digits, eight
 * characters in all (git's is_ntfs_dot_generic). */
static size_t ntfsshort(const char *p, const char *prefix)
{
	size_t i = 0;
	while (i < 6 && p[i] && p[i] != '~' && !(p[i] & 0x80) && tolower((unsigned char)p[i]) == prefix[i])
		i++;
	if (p[i] != '~' || p[i + 1] < '1' || p[i + 1] > '9')
		return 0;
	for (i += 2; i < 8; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	return 8;
}

/* The next code point at *s as HFS+ reads a name, skipping those it ignores (U+200C-U+200F,
 * U+202A-U+202E, U+206A-U+206F, U+FEFF); 0 at the end or at bytes that are not UTF-8 (git's
 * next_hfs_char). */
static uint32_t hfsnext(const unsigned char **s)
{
	static const uint32_t least[] = {0, 0x80, 0x800, 0x10000};
	for (;;) {
		const unsigned char *p = *s;
		size_t n = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
		if (!n || !p[0])
			return 0;
		uint32_t c = n == 1 ? p[0] : p[0] & (0x7f >> n);
		for (size_t i = 1; i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (p[i] & 0x3f);
		}
		if (c < least[n - 1] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return 0;
		*s += n;
		if (!((c >= 0x200c && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x206a && c <= 0x206f) || c == 0xfeff))
			return c;
	}
}

/* Whether the part of a path at p is "." then needle to HFS+, case aside and the code points it
 * ignores anywhere, up to a '/' or the end (git's is_hfs_dotgit, is_hfs_dotgitmodules). */
static int hfsdot(const char *p, const char *needle)
{
	const unsigned char *s = (const unsigned char *)p;
	if (hfsnext(&s) != '.')
		return 0;
	for (; *needle; needle++) {
		uint32_t c = hfsnext(&s);
		if (c > 127 || tolower((int)c) != *needle)
			return 0;
	}
	uint32_t c = hfsnext(&s);
	return !c || c == '/';
}

/* Whether git refuses a path with this name in it (verify_path, which `git apply` holds every path
 * to, with core.protectNTFS on as it is by default): a slash or a backslash separates folders, and
 * each part is refused if it is .git or git~1 (case aside, then spaces, dots, ':' and anything);
 * with link, also .gitmodules, gitmod~1 to gitmod~4 or a fallback short name of it (git's
 * is_ntfs_dotgit and is_ntfs_dotgitmodules); and with core.protectHFS, on by default on macOS,
 * each part (after a '/') that is .git, or with link .gitmodules, to HFS+. Such a name from a
 * workspace (a model's) would make git refuse the whole patch: it is left out instead. */
static int gitrefuses(const char *name, int link)
{
	for (const char *p = name;; p++) {
		int part = p == name || p[-1] == '/'; /* HFS+ reads no backslash as a separator */
		if (part && (hfsdot(p, "git") || (link && hfsdot(p, "gitmodules"))))
			return 1;
		if ((!strncasecmp(p, ".git", 4) && ntfsend(p + 4, 1)) ||
		    (!strncasecmp(p, "git~1", 5) && ntfsend(p + 5, 1)))
			return 1;
		if (link && ((!strncasecmp(p, ".gitmodules", 11) && ntfsend(p + 11, 0)) ||
		             (!strncasecmp(p, "gitmod~", 7) && p[7] >= '1' && p[7] <= '4' && ntfsend(p + 8, 0)) ||
		             (ntfsshort(p, "gi7eba") && ntfsend(p + 8, 0))))
			return 1;
		if (!(p = strpbrk(p, "\\/")))
			return 0;
	}
}

/* Add the files and symlinks below folder dfd (rel in the tree; dfd is closed here) to t. By
 * descriptors, not paths: a restored tree's paths go up to PATH_MAX, past it with the tree's own
 * folder before them. */
static void walk(int dfd, const char *rel, struct tree *t, int depth)
{
	DIR *d = dfd >= 0 && depth < 256 ? fdopendir(dfd) : NULL;
	if (!d && dfd >= 0)
		close(dfd);
	for (struct dirent *de; d && (de = readdir(d));) {
		const char *name = de->d_name;
		struct stat st;
		if (!strcmp(name, ".") || !strcmp(name, "..") || gitrefuses(name, 0) ||
		    fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* a repository's own folder (or a nested one's) is no file git applies */
		char *r = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
		if (S_ISLNK(st.st_mode) && gitrefuses(r, 1)) {
			/* left out, as git would refuse it: git holds every folder on a link's way to the
			 * link's own names too (verify_path), so a link in ".gitmodules/" is refused */
		} else if (S_ISDIR(st.st_mode)) {
			walk(openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), r, t, depth + 1);
		} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
			if (t->n == t->cap) {
				t->cap = t->cap ? 2 * t->cap : 64;
				t->v = xrealloc(t->v, t->cap * sizeof *t->v);
			}
			t->v[t->n++] = (struct entry){r, S_ISLNK(st.st_mode) ? 'l' : 'f', (st.st_mode & S_IXUSR) != 0, st.st_size};
			r = NULL;
		}
		free(r);
	}
	if (d)
		closedir(d);
}

static int byname(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

static void treefree(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].path);
	free(t->v);
}

/* A file's bytes, or a symlink's target, in the tree open as root. */
static int content(int root, const struct entry *en, struct buf *out, struct err *e)
{
	out->len = 0;
	if (en->type == 'l') {
		bufgrow(out, 4097);
		ssize_t n = readlinkat(root, en->path, out->data, 4096);
		if (n < 0)
			return errf(e, "readlink %s:", en->path);
		out->len = (size_t)n;
		return 0;
	}
	int fd = openat(root, en->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), rc = 0;
	if (fd < 0 || readfd(fd, SIZE_MAX, out, NULL) < 0)
		rc = errf(e, "read %s:", en->path);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* git's blob id: SHA-1 of "blob LEN\0" and the bytes. */
static void blobid(const struct buf *b, char out[41])
{
	unsigned char md[20];
	char head[32];
	int n = snprintf(head, sizeof head, "blob %zu", b->len);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	EVP_DigestInit_ex(c, EVP_sha1(), NULL);
	EVP_DigestUpdate(c, head, (size_t)n + 1);
	if (b->len)
		EVP_DigestUpdate(c, b->data, b->len);
	EVP_DigestFinal_ex(c, md, NULL);
	EVP_MD_CTX_free(c);
	for (int i = 0; i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* A name as git writes it: "a/x" plain, or C-quoted when it holds controls, quotes, backslashes
 * or bytes past ASCII. */
static void putname(struct buf *out, const char *side, const char *prefix, const char *path)
{
	struct buf n = {0};
	bufputs(&n, side);
	bufputs(&n, prefix);
	bufputs(&n, path);
	int quote = 0;
	for (size_t i = 0; i < n.len; i++) {
		unsigned char c = (unsigned char)n.data[i];
		if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f)
			quote = 1;
	}
	if (!quote) {
		bufadd(out, n.data, n.len);
		buffree(&n);
		return;
	}
	bufputc(out, '"');
	for (size_t i = 0; i < n.len; i++) {
		unsigned char c = (unsigned char)n.data[i];
		const char *esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '"' ? "\\\"" : c == '\\' ? "\\\\" : NULL;
		if (esc)
			bufputs(out, esc);
		else if (c < 0x20 || c >= 0x7f)
			bufprintf(out, "\\%03o", c);
		else
			bufputc(out, (char)c);
	}
	bufputc(out, '"');
	buffree(&n);
}

static void putadler(struct buf *z, const unsigned char *p, size_t n)
{
	uint32_t a = 1, b = 0;
	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	unsigned char t[4] = {(unsigned char)(b >> 8), (unsigned char)b, (unsigned char)(a >> 8), (unsigned char)a};
	bufadd(z, t, 4);
}

/* A `literal N` hunk: the bytes as a zlib stream of stored blocks (any inflater reads it), in
 * git's base85 lines of at most 52 bytes. */
static void putliteral(struct buf *out, const struct buf *b)
{
	static const char b85[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
	struct buf z = {0};
	const unsigned char *p = (const unsigned char *)(b->data ? b->data : "");
	bufadd(&z, "\x78\x01", 2);
	size_t off = 0;
	do {
		size_t n = b->len - off > 65535 ? 65535 : b->len - off;
		unsigned char h[5] = {off + n == b->len, (unsigned char)n, (unsigned char)(n >> 8), (unsigned char)~n,
		                      (unsigned char)(~n >> 8)};
		bufadd(&z, h, 5);
		bufadd(&z, p + off, n);
		off += n;
	} while (off < b->len);
	putadler(&z, p, b->len);
	bufprintf(out, "literal %zu\n", b->len);
	const unsigned char *q = (const unsigned char *)z.data;
	for (size_t at = 0; at < z.len; at += 52) {
		size_t n = z.len - at > 52 ? 52 : z.len - at;
		bufputc(out, (char)(n <= 26 ? 'A' + n - 1 : 'a' + n - 27));
		for (size_t i = 0; i < n; i += 4) {
			uint32_t w = 0;
			for (size_t k = 0; k < 4; k++)
				w = w << 8 | (i + k < n ? q[at + i + k] : 0);
			char five[5];
			for (int k = 4; k >= 0; k--, w /= 85)
				five[k] = b85[w % 85];
			bufadd(out, five, 5);
		}
		bufputc(out, '\n');
	}
	bufputc(out, '\n');
	buffree(&z);
}

static const char *modeof(const struct entry *en)
{
	return !en ? NULL : en->type == 'l' ? "120000" : en->exec ? "100755" : "100644";
}

/* One file's diff: a (NULL: new) to b (NULL: deleted); the same path on both sides. */
static void putdiff(struct buf *out, const char *prefix, const struct entry *a, const struct buf *ca,
                    const struct entry *b, const struct buf *cb)
{
	const char *path = a ? a->path : b->path;
	char ia[41] = "0000000000000000000000000000000000000000", ib[41] = "0000000000000000000000000000000000000000";
	if (a)
		blobid(ca, ia);
	if (b)
		blobid(cb, ib);
	int same = a && b && strcmp(ia, ib) == 0;
	bufputs(out, "diff --git ");
	putname(out, "a/", prefix, path);
	bufputc(out, ' ');
	putname(out, "b/", prefix, path);
	bufputc(out, '\n');
	if (!a)
		bufprintf(out, "new file mode %s\n", modeof(b));
	else if (!b)
		bufprintf(out, "deleted file mode %s\n", modeof(a));
	else if (strcmp(modeof(a), modeof(b)) != 0)
		bufprintf(out, "old mode %s\nnew mode %s\n", modeof(a), modeof(b));
	if (same)
		return;
	if (a && b && strcmp(modeof(a), modeof(b)) == 0)
		bufprintf(out, "index %s..%s %s\n", ia, ib, modeof(a));
	else
		bufprintf(out, "index %s..%s\n", ia, ib);
	size_t na = a ? ca->len : 0, nb = b ? cb->len : 0;
	if (!na && !nb)
		return; /* an empty file made or removed: the header says it all */
	const char *pa = a && ca->data ? ca->data : "", *pb = b && cb->data ? cb->data : "";
	struct buf hunks = {0};
	int text = !memchr(pa, 0, na) && !memchr(pb, 0, nb) && linediff(pa, na, pb, nb, 3, MAXEDITS, &hunks) == 0;
	if (text) {
		bufputs(out, "--- ");
		if (a)
			putname(out, "a/", prefix, path);
		else
			bufputs(out, "/dev/null");
		bufputs(out, "\n+++ ");
		if (b)
			putname(out, "b/", prefix, path);
		else
			bufputs(out, "/dev/null");
		bufputc(out, '\n');
		bufadd(out, hunks.data ? hunks.data : "", hunks.len);
	} else {
		struct buf none = {0};
		bufputs(out, "GIT binary patch\n");
		putliteral(out, b ? cb : &none);
		putliteral(out, a ? ca : &none);
	}
	buffree(&hunks);
}

/* Whether two big files hold the same bytes, read a piece at a time. */
static int samebytes(int ra, const struct entry *a, int rb, const struct entry *b)
{
	int fa = openat(ra, a->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), fb = openat(rb, b->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int same = fa >= 0 && fb >= 0;
	static char x[1 << 16], y[1 << 16]; /* one diff at a time: the runner patches after the jobs */
	for (ssize_t n, m; same && (n = read(fa, x, sizeof x)) > 0;)
		same = (m = read(fb, y, (size_t)n)) == n && memcmp(x, y, (size_t)n) == 0;
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

/* Whether a change is too big to carry: a file over GITPATCHFILEMAX, or one whose bytes could take
 * the patch (len so far) past GITPATCHMAX; its hunks or literals take at most twice the bytes of
 * both sides. Sparse files use no blocks, so blocks cannot be the measure. */
static int uncarried(const struct entry *a, const struct entry *b, size_t len)
{
	uint64_t na = a && a->type == 'f' ? (uint64_t)a->size : 0, nb = b && b->type == 'f' ? (uint64_t)b->size : 0;
	return na > GITPATCHFILEMAX || nb > GITPATCHFILEMAX || len + 2 * (na + nb) > GITPATCHMAX;
}

/* A file too big to carry: its header, and git's own line for a binary change it leaves out. */
static void putbig(struct buf *out, const char *prefix, const struct entry *a, const struct entry *b)
{
	const char *path = a ? a->path : b->path;
	bufputs(out, "diff --git ");
	putname(out, "a/", prefix, path);
	bufputc(out, ' ');
	putname(out, "b/", prefix, path);
	bufputc(out, '\n');
	if (!a)
		bufprintf(out, "new file mode %s\n", modeof(b));
	else if (!b)
		bufprintf(out, "deleted file mode %s\n", modeof(a));
	bufputs(out, "Binary files ");
	if (a)
		putname(out, "a/", prefix, path);
	else
		bufputs(out, "/dev/null");
	bufputs(out, " and ");
	if (b)
		putname(out, "b/", prefix, path);
	else
		bufputs(out, "/dev/null");
	bufputs(out, " differ\n");
}

/* A file's bytes as the patch may carry them: masked of every secret of sec. */
static void maskcontent(const struct secrets *sec, struct buf *c, int *masked)
{
	size_t n = 0;
	char *m = sec && c->len ? secretsmaskbytes(sec, c->data, c->len, &n) : NULL;
	if (!m)
		return;
	buffree(c);
	c->data = m;
	c->len = n;
	if (masked)
		(*masked)++;
}

long gitpatch(const char *a, const char *b, const char *prefix, const struct secrets *sec, int *masked,
              struct buf *out, struct err *e)
{
	int ra = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rb = ra < 0 ? -1 : open(b, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rb < 0) {
		int rc = errf(e, "open %s:", ra < 0 ? a : b);
		if (ra >= 0)
			close(ra);
		return rc;
	}
	struct tree ta = {0}, tb = {0};
	walk(dup(ra), "", &ta, 0);
	walk(dup(rb), "", &tb, 0);
	if (ta.n)
		qsort(ta.v, ta.n, sizeof *ta.v, byname);
	if (tb.n)
		qsort(tb.v, tb.n, sizeof *tb.v, byname);
	struct buf ca = {0}, cb = {0};
	long files = 0;
	int rc = 0;
	for (size_t i = 0, j = 0; rc == 0 && (i < ta.n || j < tb.n);) {
		int c = i == ta.n ? 1 : j == tb.n ? -1 : strcmp(ta.v[i].path, tb.v[j].path);
		const struct entry *ea = c <= 0 ? &ta.v[i] : NULL, *eb = c >= 0 ? &tb.v[j] : NULL;
		i += c <= 0, j += c >= 0;
		if (uncarried(ea, eb, out->len)) {
			if (ea && eb && ea->type == eb->type && ea->exec == eb->exec && ea->size == eb->size && samebytes(ra, ea, rb, eb))
				continue;
			putbig(out, prefix, ea, eb);
			files++;
			if (out->len > GITPATCHMAX)
				break; /* full: the files after this line go unlisted, or their names alone
				        * (quoted, four times a file) would grow the patch without end */
			continue;
		}
		if ((ea && content(ra, ea, &ca, e) < 0) || (eb && content(rb, eb, &cb, e) < 0)) {
			rc = -1;
			break;
		}
		if (ea)
			maskcontent(sec, &ca, masked);
		if (eb)
			maskcontent(sec, &cb, masked);
		if (ea && eb && ea->type != eb->type) {
			/* a file became a symlink or the other way round: git shows a deletion and a new file */
			putdiff(out, prefix, ea, &ca, NULL, NULL);
			putdiff(out, prefix, NULL, NULL, eb, &cb);
			files++;
			continue;
		}
		if (ea && eb && ea->exec == eb->exec && ca.len == cb.len && (!ca.len || !memcmp(ca.data, cb.data, ca.len)))
			continue;
		putdiff(out, prefix, ea, &ca, eb, &cb);
		files++;
	}
	buffree(&ca);
	buffree(&cb);
	treefree(&ta);
	treefree(&tb);
	close(ra);
	close(rb);
	return rc < 0 ? -1 : files;
}

