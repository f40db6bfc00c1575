/* snaprestore: a run's layers applied into a directory (the restore half of snapshot.h).
 *
 * A chain is applied in one pass, newest layer first: each path is written once, from the newest
 * layer that names it. An older layer's entry is skipped when a newer layer wrote or whited out
 * its path, or cut off what lies beneath one of its parents (a whiteout, an opaque marker, or a
 * non-directory there); nothing is ever removed, and directory modes and times are set after the
 * whole chain, from each directory's newest entry, through descriptors opened beneath the target.
 * A hard link whose target its own layer did not write (a newer layer replaced it, or an older
 * layer holds it) cannot be made that way: then the target is emptied and the chain applied again
 * layer by layer, oldest first, as before (whiteouts removing what they name, directory modes and
 * times set at the end of each layer). Skipped entries are read all the same: every layer is read
 * to its end, its digest checked, and its every entry checked and counted against the bounds.
 *
 * libarchive only reads. Every entry is made here through its parent's descriptor, reached one
 * name at a time beneath the target without following a symlink (O_NOFOLLOW at each step, and
 * openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where a path is opened again); files are created
 * O_EXCL|O_NOFOLLOW after what was there is removed, so no hard link or symlink is written
 * through. A layer in which a whiteout or another entry replaces a directory the same layer
 * already wrote into is refused; so is a chain whose older layer puts a non-directory where a
 * newer one wrote beneath (layer by layer, the newer one would have found no directory there).
 * Whiteouts never follow a symlink nor leave the target's filesystem (in one pass they touch
 * nothing: a whiteout beneath an older layer's symlink, refused layer by layer, only hides).
 * Each layer's digest is computed over its compressed bytes as they are read and checked against
 * SHA256SUMS.
 *
 * The chain of layers one restore applies is bounded (bound.h): bytes of data, file sizes with
 * their holes, entries and decompressed bytes, each entry counted from its header before any of
 * it is written; a restore refused leaves nothing in its target.
 *
 * A run archive (RUN.tar.zst) is unpacked the same way, bounded alike: only files and
 * directories, names that stay inside; each file hashed as it is written and held to the run's
 * SHA256SUMS as soon as both have arrived. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <pthread.h>
#include <unistd.h>
#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include "bound.h"
#include <cjson/cJSON.h>
#include "snapshot.h"
#include "frames.h"
#include "scan.h"
#include "../util/beneath.h"
#include "../util/zst.h"

enum { RBUF = 1 << 20, NBUF = 4, SMALL = 256 << 10, OPENDEPTH = 64 };

static int bylayer; /* snaprestoreorder */

/* A layer file read ahead: decompression and the digest run on their own thread, a few blocks
 * ahead of extraction; a small file (most layers of a long chain) is read on the caller's thread,
 * where starting another would cost more than it saves. */
struct ahead {
	int inline_;       /* no thread: aheadnext decompresses into buf[0] */
	struct zstr *z;
	pthread_t t;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *buf[NBUF];
	ssize_t len[NBUF]; /* bytes in a full buffer: 0 at the end, -1 on error */
	int full[NBUF];
	int head, tail;    /* the next buffer to fill, the next to hand out */
	int held;          /* the buffer handed out last, given back on the next call; or -1 */
	int stop;
	struct err err;
};

static void *aheadrun(void *arg)
{
	struct ahead *h = arg;
	for (;;) {
		pthread_mutex_lock(&h->mu);
		while (!h->stop && h->full[h->head])
			pthread_cond_wait(&h->cv, &h->mu);
		int i = h->head, stop = h->stop;
		pthread_mutex_unlock(&h->mu);
		if (stop)
			break;
		struct err e = {0};
		ssize_t n = zstread(h->z, h->buf[i], RBUF, &e);
		pthread_mutex_lock(&h->mu);
		if (n < 0)
			h->err = e;
		h->len[i] = n;
		h->full[i] = 1;
		h->head = (i + 1) % NBUF;
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
		if (n <= 0)
			break;
	}
	return NULL;
}

struct snapset;
static void pickframes(struct zstr *z, const struct frames *f, const struct snapset *s);

/* Open a layer to read ahead; with fc, its entries held to its frame index (frames.h), and with a
 * set (only), only the frames that can hold what it wants decoded. */
static int aheadopen(struct ahead **hp, const char *file, int flags, struct framecheck *fc,
                     const struct snapset *only, struct err *e)
{
	struct ahead *h = xcalloc(1, sizeof *h);
	*hp = NULL;
	if (zstropen(&h->z, file, flags, e) < 0) {
		free(h);
		return -1;
	}
	if (fc && framecheckopen(fc, h->z, e) < 0) {
		zstrfree(h->z);
		free(h);
		return -1;
	}
	if (fc && only && fc->f.n)
		pickframes(h->z, &fc->f, only);
	struct stat st; /* a hint only: the file itself is opened as flags say */
	if (lstat(file, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < SMALL) {
		h->inline_ = 1;
		h->buf[0] = xmalloc(RBUF);
		*hp = h;
		return 0;
	}
	for (int i = 0; i < NBUF; i++)
		h->buf[i] = xmalloc(RBUF);
	h->held = -1;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	if (pthread_create(&h->t, NULL, aheadrun, h) != 0) {
		errno = EAGAIN;
		errf(e, "start a reader for %s:", file);
		for (int i = 0; i < NBUF; i++)
			free(h->buf[i]);
		zstrfree(h->z);
		free(h);
		return -1;
	}
	*hp = h;
	return 0;
}

/* The next block of decompressed bytes into *p (the one before is given back): its length, 0 at the
 * end of the stream, -1 on error. */
static ssize_t aheadnext(struct ahead *h, const void **p, struct err *e)
{
	if (h->inline_) {
		*p = h->buf[0];
		return zstread(h->z, h->buf[0], RBUF, e);
	}
	pthread_mutex_lock(&h->mu);
	if (h->held >= 0) {
		h->full[h->held] = 0;
		h->held = -1;
		pthread_cond_broadcast(&h->cv);
	}
	while (!h->full[h->tail])
		pthread_cond_wait(&h->cv, &h->mu);
	int i = h->tail;
	ssize_t n = h->len[i];
	if (n > 0) {
		h->held = i;
		h->tail = (i + 1) % NBUF;
	}
	if (n < 0)
		*e = h->err;
	pthread_mutex_unlock(&h->mu);
	*p = h->buf[i];
	return n;
}

/* Stop the reader and free it; after aheadnext gave 0, digest (may be NULL) gets the file's. */
static void aheadclose(struct ahead *h, char digest[65])
{
	if (!h)
		return;
	if (!h->inline_) {
		pthread_mutex_lock(&h->mu);
		h->stop = 1;
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
		pthread_join(h->t, NULL);
		pthread_mutex_destroy(&h->mu);
		pthread_cond_destroy(&h->cv);
	}
	if (digest)
		zstrdigest(h->z, digest, NULL);
	zstrfree(h->z);
	for (int i = 0; i < NBUF; i++)
		free(h->buf[i]);
	free(h);
}

struct restore {
	int rootfd;   /* the target */
	dev_t dev;    /* its filesystem: removal never crosses into another */
	int root;     /* running as root: permissions never stand in the way */
	struct ahead *h;
	struct err zerr;
	int zfailed;
	int plain;    /* a run archive, not a layer: no whiteouts, no links */
	struct bound b; /* what the archive, or the chain of layers, may expand to */
	int made;     /* the target was made here (removed again on failure) */
	/* A run archive's files against its SHA256SUMS, as they arrive: the one at its top or in its
	 * top folder (root: "" or "X/"), sorted by path; files before it wait in early. */
	int havesums, sumfail;
	char *sumroot;
	struct strv sumpath, sumhex; /* sumpath sorted; sumhex[i] is sumpath[i]'s digest */
	unsigned char *sumseen;      /* sumseen[i]: sumpath[i] has arrived */
	struct strv early, earlyhex;
	struct buf sums;             /* SHA256SUMS's bytes while it is written */
	int pfd;      /* the parent of the last entry, kept open (-1: none) */
	int open[OPENDEPTH]; /* it and the folders above it, from the top (those OPENDEPTH deep at most) */
	size_t nopen;
	int rootset;  /* a layer held the workspace folder itself ("."): its mode and times, set last */
	mode_t rootmode;
	struct timespec roottime[2];
	char *ppath;  /* its path */
	struct chain *c; /* a chain applied in one pass, newest layer first (NULL: in order, or a run archive) */
	const struct snapset *only; /* write only the paths it wants (NULL: all) */
	struct framecheck fc; /* the layer being read, held to its frame index */
	int outside;  /* a wanted hard link's target is not wanted: only a whole restore makes it */
	mode_t mask;  /* the umask: a file's mode with none of its bits is given by the create itself */
	int exact;    /* mask is known, and no default ACL in the target changes what create gives */
};

static la_ssize_t readcb(struct archive *a, void *ctx, const void **p)
{
	struct restore *r = ctx;
	ssize_t n = aheadnext(r->h, p, &r->zerr);
	if (n < 0 || (n > 0 && boundstream(&r->b, n, &r->zerr) < 0)) {
		r->zfailed = 1;
		archive_set_error(a, EIO, "%s", r->zerr.msg);
		return -1;
	}
	return n;
}

/* A relative path of plain names: no "/" first, no "", "." or ".." segment (a "/" last is fine). */
static int safepath(const char *p)
{
	if (!p || !*p || *p == '/')
		return 0;
	for (const char *s = p; *s;) {
		const char *end = strchrnul(s, '/');
		size_t n = end - s;
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		if (!*end || !end[1])
			break;
		s = end + 1;
	}
	return 1;
}

/* Let the owner write into directory fd for a moment (not needed as root); *old gets its mode. */
static void openup(struct restore *r, int fd, mode_t *old)
{
	struct stat st;
	*old = 0;
	if (r->root || fstat(fd, &st) < 0 || (st.st_mode & S_IRWXU) == S_IRWXU)
		return;
	*old = st.st_mode & 07777;
	fchmod(fd, *old | S_IRWXU);
}

static void closeup(int fd, mode_t old)
{
	if (old)
		fchmod(fd, old);
}

/* Open directory name of dfd that its owner (not root) may not read, to remove it: given back
 * its owner's rights first, through its own descriptor (a name swapped for a link meanwhile is
 * never followed). A descriptor to read it, or -1. */
static int openshut(int dfd, const char *name)
{
	int p = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (p < 0)
		return -1;
	char self[40];
	snprintf(self, sizeof self, "/proc/self/fd/%d", p);
	int fd = -1;
	if (fstat(p, &st) == 0 && chmod(self, (st.st_mode & 07777) | S_IRWXU) == 0)
		fd = openat(p, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(p);
	return fd;
}

/* A removal under way. It holds one descriptor a folder level, RMDEPTH at most: a folder deeper
 * than that is moved up into the folder the removal started in (under a new name, never over
 * another) and removed from there, so a tree nested to PATH_MAX (a stranger's layer) is removed
 * whole within any open-file limit. */
enum { RMDEPTH = 32 };

struct rmtop {
	int fd;             /* the folder the removal started in */
	struct strv later;  /* names of folders moved up into it, still to remove */
	unsigned moved;
};

static int rmname(struct restore *r, struct rmtop *top, int depth, int dfd, const char *name, const char *shown,
                  struct err *e);

/* Remove what was moved up into top (which moves deeper folders up again). */
static int rmlater(struct restore *r, struct rmtop *top, const char *shown, struct err *e)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < top->later.n; i++)
		rc = rmname(r, top, 0, top->fd, top->later.v[i], shown, e);
	return rc;
}

/* Remove everything inside directory fd, depth levels below top. */
static int rmin(struct restore *r, struct rmtop *top, int depth, int fd, const char *shown, struct err *e)
{
	int dup_ = dup(fd);
	DIR *d = dup_ < 0 ? NULL : fdopendir(dup_);
	if (!d) {
		if (dup_ >= 0)
			close(dup_);
		return errf(e, "open %s:", shown);
	}
	rewinddir(d); /* the duplicate shares fd's offset */
	struct strv names = {0};
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			strvadd(&names, de->d_name);
	closedir(d);
	mode_t old;
	openup(r, fd, &old);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < names.n; i++)
		rc = rmname(r, top, depth, fd, names.v[i], shown, e);
	if (rc == 0 && fd == top->fd)
		rc = rmlater(r, top, shown, e);
	closeup(fd, old);
	strvfree(&names);
	return rc;
}

/* Move folder name of dfd up into top, to be removed from there. */
static int rmup(struct rmtop *top, int dfd, const char *name, const char *shown, struct err *e)
{
	char up[64];
	for (;;) {
		snprintf(up, sizeof up, ".nightshift-rm.%ld.%u", (long)getpid(), top->moved++);
		if (renameat2(dfd, name, top->fd, up, RENAME_NOREPLACE) == 0)
			break;
		if (errno != EEXIST)
			return errf(e, "move %s/%s up to remove it:", shown, name);
	}
	strvadd(&top->later, up);
	return 0;
}

/* Remove name (a whole tree if a directory) from directory dfd, depth levels below top, on the
 * target's filesystem only. */
static int rmname(struct restore *r, struct rmtop *top, int depth, int dfd, const char *name, const char *shown,
                  struct err *e)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : errf(e, "stat %s/%s:", shown, name);
	if (S_ISDIR(st.st_mode)) {
		if (st.st_dev != r->dev)
			return errf(e, "%s/%s is a mount point; refusing to remove it", shown, name);
		if (depth >= RMDEPTH)
			return rmup(top, dfd, name, shown, e);
		int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == EACCES && !r->root)
			fd = openshut(dfd, name);
		if (fd < 0)
			return errf(e, "open %s/%s:", shown, name);
		if (fstat(fd, &st) < 0 || st.st_dev != r->dev) {
			close(fd);
			return errf(e, "%s/%s changed while being removed", shown, name);
		}
		int rc = rmin(r, top, depth + 1, fd, shown, e);
		close(fd);
		if (rc < 0)
			return -1;
	}
	if (unlinkat(dfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
		return errf(e, "remove %s/%s:", shown, name);
	return 0;
}

/* Remove everything inside directory fd. */
static int rmchildren(struct restore *r, int fd, const char *shown, struct err *e)
{
	struct rmtop top = {.fd = fd};
	int rc = rmin(r, &top, 0, fd, shown, e);
	strvfree(&top.later);
	return rc;
}

/* Remove name (a whole tree if a directory) from directory dfd (which the caller lets it write). */
static int rmat(struct restore *r, int dfd, const char *name, const char *shown, struct err *e)
{
	struct rmtop top = {.fd = dfd};
	int rc = rmname(r, &top, 0, dfd, name, shown, e);
	if (rc == 0)
		rc = rmlater(r, &top, shown, e);
	strvfree(&top.later);
	return rc;
}

/* Apply a whiteout at path: remove what it names, or empty its directory. */
static int whiteout(struct restore *r, const char *path, const char *base, const char *kind, struct err *e)
{
	char *parent = base > path ? xstrndup(path, base - 1 - path) : xstrdup(".");
	int rc = 0;
	int fd = openbeneath(r->rootfd, parent, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0) {
		if (errno != ENOENT)
			rc = errc(e, ERR_VERIFY, "whiteout %s: %s is not a directory inside the target:", path, parent);
	} else if (strcmp(kind, "opaque") == 0) {
		rc = rmchildren(r, fd, parent, e);
	} else {
		const char *name = base + 4;
		if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			rc = errc(e, ERR_VERIFY, "whiteout %s names no entry", path);
		} else {
			mode_t old;
			openup(r, fd, &old);
			rc = rmat(r, fd, name, parent, e);
			closeup(fd, old);
		}
	}
	if (fd >= 0)
		close(fd);
	free(parent);
	return rc;
}

/* Check an entry before it is written (live), or skipped as hidden in one pass: only files,
 * directories, symlinks and hard links to files already inside (a run archive: only files and
 * directories); set-id bits dropped (the tar says
 * uid 0, and a restore may run as root). Every entry counts against the bounds: a run archive's
 * files by their size, a layer's by their data (a sparse file's holes count only as size). */
static int vet(struct restore *r, struct archive_entry *en, const char *path, int live, struct err *e)
{
	const char *hl = archive_entry_hardlink(en);
	mode_t type = archive_entry_filetype(en);
	if (r->plain) {
		if (hl || type == AE_IFLNK)
			return errf(e, "%s: a %s, which no run directory holds", path, hl ? "hard link" : "symlink");
		if (type != AE_IFREG && type != AE_IFDIR)
			return errf(e, "%s: not a file or directory (type %o)", path, (unsigned)type);
		int64_t size = type == AE_IFREG ? archive_entry_size(en) : 0;
		if (boundentry(&r->b, path, size, size, e) < 0)
			return -1;
	} else if (boundentry(&r->b, path, bounddata(en), type == AE_IFREG && !hl ? archive_entry_size(en) : 0, e) < 0) {
		return -1;
	} else if (hl) {
		if (!safepath(hl))
			return errf(e, "%s: hard link to %s, outside the target", path, hl);
		if (!live)
			return 0;
		int fd = openbeneath(r->rootfd, hl, O_PATH, 0);
		struct stat st;
		int ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
		if (fd >= 0)
			close(fd);
		if (!ok)
			return errf(e, "%s: hard link to %s, which is not a file inside the target", path, hl);
		return 0;
	} else if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
		return errf(e, "%s: not a file, directory or symlink (type %o)", path, (unsigned)type);
	}
	archive_entry_set_perm(en, archive_entry_perm(en) & ~(mode_t)(S_ISUID | S_ISGID));
	return 0;
}

/* The directories a layer touches: those it holds, and the parents of its entries that it does
 * not hold (writing an entry changes its parent's mtime, and may need it opened up when not
 * root); all get their times, those it holds their modes, and those parents their modes back,
 * last, each through a descriptor opened beneath the target. The same table, apart, holds every
 * directory the layer used (held, or above an entry), which nothing may replace later on. */
struct dslot {
	char *path;
	struct timespec t[2];
	mode_t mode; /* a parent opened up for the owner: the mode to put back (0: untouched) */
	int held;    /* a directory of the layer: want is its mode */
	mode_t want;
	int layer;   /* in a chain's tables (struct chain): the newest layer naming the path, or cutting beneath it */
	int wrote;   /* in its seen table: the layer whose entry was written at the path (0: none) */
};

struct dirset {
	struct dslot *v;
	size_t n, cap; /* cap is a power of two */
};

static size_t dshash(const char *p, size_t n)
{
	size_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

/* The slot for path[0..n), made when missing (then *made is set). */
static struct dslot *dsget(struct dirset *s, const char *p, size_t n, int *made)
{
	if (2 * (s->n + 1) > s->cap) {
		struct dirset g = {xcalloc(s->cap ? 2 * s->cap : 64, sizeof *g.v), 0, s->cap ? 2 * s->cap : 64};
		for (size_t i = 0; i < s->cap; i++)
			if (s->v[i].path) {
				size_t k = dshash(s->v[i].path, strlen(s->v[i].path)) & (g.cap - 1);
				while (g.v[k].path)
					k = (k + 1) & (g.cap - 1);
				g.v[k] = s->v[i];
			}
		g.n = s->n;
		free(s->v);
		*s = g;
	}
	size_t k = dshash(p, n) & (s->cap - 1);
	for (; s->v[k].path; k = (k + 1) & (s->cap - 1))
		if (strncmp(s->v[k].path, p, n) == 0 && !s->v[k].path[n]) {
			*made = 0;
			return &s->v[k];
		}
	s->v[k].path = xstrndup(p, n);
	s->n++;
	*made = 1;
	return &s->v[k];
}

/* The slot of path[0..n), or NULL. */
static struct dslot *dsfind(const struct dirset *s, const char *p, size_t n)
{
	if (!s->cap)
		return NULL;
	for (size_t k = dshash(p, n) & (s->cap - 1); s->v[k].path; k = (k + 1) & (s->cap - 1))
		if (strncmp(s->v[k].path, p, n) == 0 && !s->v[k].path[n])
			return &s->v[k];
	return NULL;
}

/* Whether path[0..n) has a slot. */
static int dshas(const struct dirset *s, const char *p, size_t n)
{
	return dsfind(s, p, n) != NULL;
}

static void dsfree(struct dirset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->v[i].path);
	free(s->v);
}

/* Note path[0..n) and every directory above it as used (n may be 0: nothing). */
static void markused(struct dirset *used, const char *path, size_t n)
{
	int made = 1;
	while (n && made) {
		dsget(used, path, n, &made);
		const char *slash = memrchr(path, '/', n);
		n = slash ? (size_t)(slash - path) : 0;
	}
}

/* The length of path without the "/" it may end with. */
static size_t trimlen(const char *path)
{
	size_t n = strlen(path);
	while (n && path[n - 1] == '/')
		n--;
	return n;
}

/* The paths the layers after one step name (entries, and what whiteouts remove), sorted and
 * trimmed; sub: the path replaced what lay beneath it (a non-directory or a whiteout). Restoring
 * only what it wants, at that step and at a later one, gives two trees that differ as the whole
 * ones do. */
struct setname {
	char *p;
	size_t len;
	unsigned char sub;
};

struct snapset {
	struct setname *v;
	size_t n;
};

/* Names of lengths al and bl in byte order, a prefix first. */
static int namecmp(const char *a, size_t al, const char *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : al < bl ? -1 : al > bl;
}

/* The first index whose name is not before key[0..n). */
static size_t setlower(const struct snapset *s, const char *key, size_t n)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (namecmp(s->v[mid].p, s->v[mid].len, key, n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int setat(const struct snapset *s, const char *key, size_t n)
{
	size_t i = setlower(s, key, n);
	return i < s->n && namecmp(s->v[i].p, s->v[i].len, key, n) == 0 ? (int)i : -1;
}

/* Whether path is in the set, beneath a name that replaced what lay beneath it, or a folder above
 * a name of the set (a folder holding what changed). */
static int setwants(const struct snapset *s, const char *path)
{
	size_t n = trimlen(path);
	if (setat(s, path, n) >= 0)
		return 1;
	for (size_t k = n; k;) {
		const char *slash = memrchr(path, '/', k);
		if (!slash)
			break;
		k = slash - path;
		int i = setat(s, path, k);
		if (i >= 0 && s->v[i].sub)
			return 1;
	}
	size_t lo = 0, hi = s->n; /* the first name not before "path/" */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (scandircmp(s->v[mid].p, path, n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && scandircmp(s->v[lo].p, path, n) == 0;
}

/* The frame of f holding key[0..n): the last whose first path is not after it (the first's is ""). */
static size_t frameof(const struct frames *f, const char *key, size_t n)
{
	size_t lo = 1, hi = f->n; /* the first frame after key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (namecmp(f->v[mid].first, strlen(f->v[mid].first), key, n) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* Decode only the frames of a layer's index (frames.h) that can hold what s wants: the first (the
 * mark and the whiteouts), the one holding ".", and those any path setwants takes falls in: a
 * name of s, each folder above it, and what lies beneath a name that replaced what was there. */
static void pickframes(struct zstr *z, const struct frames *f, const struct snapset *s)
{
	unsigned char *want = xcalloc(f->n, 1);
	want[0] = want[frameof(f, ".", 1)] = 1;
	for (size_t i = 0; i < s->n; i++) {
		const char *p = s->v[i].p;
		size_t n = s->v[i].len;
		for (const char *c = p; (c = memchr(c, '/', n - (size_t)(c - p))); c++)
			want[frameof(f, p, (size_t)(c - p))] = 1;
		want[frameof(f, p, n)] = 1;
		if (!s->v[i].sub)
			continue;
		/* beneath it: the paths from "p/" up to, not with, "p0" ('0' follows '/') */
		char *k = xmalloc(n + 1);
		memcpy(k, p, n);
		k[n] = '/';
		size_t lo = frameof(f, k, n + 1);
		k[n] = '0';
		size_t hi = frameof(f, k, n + 1);
		if (hi > lo && strlen(f->v[hi].first) == n + 1 && memcmp(f->v[hi].first, k, n + 1) == 0)
			hi--; /* it starts at "p0" itself */
		free(k);
		memset(want + lo, 1, hi - lo + 1);
	}
	int64_t (*at)[2] = xmalloc(f->n * sizeof *at);
	size_t na = 0;
	for (size_t i = 0; i < f->n; i++) {
		if (!want[i])
			continue;
		if (na && at[na - 1][1] == f->v[i].at)
			at[na - 1][1] += f->v[i].len;
		else
			at[na][0] = f->v[i].at, at[na][1] = f->v[i].at + f->v[i].len, na++;
	}
	zstrpick(z, (const int64_t (*)[2])at, na);
	free(at);
	free(want);
}

/* A chain applied in one pass, newest layer first (layers numbered 1..n oldest first; j the one
 * being read): each path is written once, from the newest layer naming it, and nothing is ever
 * removed. seen: every path an entry or whiteout named, with the newest such layer, the layer that
 * wrote it, and a directory's mode and times from its newest entry; cut: the paths beneath which
 * older layers are hidden (a whiteout, an opaque marker, or a non-directory there), with the
 * newest layer that cut. The oldest layer (j 1) notes only its directories: it hides nothing, and a
 * non-directory that no newer layer named (nor cut above) can only be its own. */
struct chain {
	struct dirset seen, cut;
	int rootcut;  /* the newest layer with an opaque marker at the top: every older entry hidden */
	int j;
	int fallback; /* one pass cannot decide (a hard link whose target this layer did not write, a
	               * non-directory in the way of a newer layer): apply the chain in order */
};

/* Whether path[0..n) of layer j is hidden by a newer layer: named there, or beneath a cut. */
static int hidden(const struct chain *c, const char *path, size_t n, int j)
{
	if (c->rootcut > j)
		return 1;
	const struct dslot *s = dsfind(&c->seen, path, n);
	if (s && s->layer > j)
		return 1;
	for (const char *slash; c->cut.n && (slash = memrchr(path, '/', n));) {
		n = slash - path;
		if ((s = dsfind(&c->cut, path, n)) && s->layer > j)
			return 1;
	}
	return 0;
}

/* Layer j hides what older layers hold beneath path[0..n) (n 0: the whole target). */
static void chaincut(struct chain *c, const char *path, size_t n, int j)
{
	int made;
	if (!n) {
		if (!c->rootcut)
			c->rootcut = j;
		return;
	}
	struct dslot *s = dsget(&c->cut, path, n, &made);
	if (made)
		s->layer = j;
}

/* Layer j names path[0..n) (an entry or a whiteout): older layers' entries there are hidden. */
static struct dslot *chainname(struct chain *c, const char *path, size_t n, int j)
{
	int made;
	struct dslot *s = dsget(&c->seen, path, n, &made);
	if (made)
		s->layer = j;
	return s;
}

static int bypathdesc(const void *a, const void *b)
{
	return -strcmp(*(char *const *)a, *(char *const *)b);
}

/* After the whole chain: each directory gets the mode and times of its newest entry, the deepest
 * first (a parent left without the owner's search bit still lets its children be opened). */
static void chaindirs(struct restore *r, struct chain *c)
{
	struct strv held = {0};
	for (size_t i = 0; i < c->seen.cap; i++)
		if (c->seen.v[i].path && c->seen.v[i].held && c->seen.v[i].wrote)
			strvadd(&held, c->seen.v[i].path);
	if (held.n)
		qsort(held.v, held.n, sizeof *held.v, bypathdesc);
	for (size_t i = 0; i < held.n; i++) {
		const struct dslot *s = dsfind(&c->seen, held.v[i], strlen(held.v[i]));
		int fd = openbeneath(r->rootfd, held.v[i], O_RDONLY | O_DIRECTORY, 0);
		if (fd >= 0) {
			fchmod(fd, s->want);
			futimens(fd, s->t);
			close(fd);
		}
	}
	strvfree(&held);
}

/* Before an entry is written: note a directory it is, with its mode and mtime; note its parent
 * (open in pfd) with its times, opened up for the owner when read-only. */
static void dsnote(struct restore *r, struct dirset *s, const char *path, struct archive_entry *en, int isdir, int pfd)
{
	size_t n = trimlen(path);
	int made;
	if (isdir) {
		struct dslot *d = dsget(s, path, n, &made);
		d->t[0] = (struct timespec){0, UTIME_OMIT};
		d->t[1] = (struct timespec){archive_entry_mtime(en), archive_entry_mtime_nsec(en)};
		d->held = 1;
		d->want = archive_entry_perm(en) & 07777 & ~(mode_t)(S_ISUID | S_ISGID);
	}
	const char *slash = memrchr(path, '/', n);
	if (!slash)
		return; /* the target itself: its times are not part of a snapshot */
	struct dslot *d = dsget(s, path, slash - path, &made);
	if (!made)
		return;
	struct stat st;
	if (fstat(pfd, &st) == 0) {
		d->t[0] = st.st_atim;
		d->t[1] = st.st_mtim;
		openup(r, pfd, &d->mode); /* a read-only parent from a lower layer */
	} else {
		d->t[0] = d->t[1] = (struct timespec){0, UTIME_OMIT};
	}
}

/* After the layer: its directories get their modes and mtimes (after everything written into
 * them), and the parents it did not hold their modes and times back. */
static void dsrestore(struct restore *r, struct dirset *s)
{
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->v[i].path)
			continue;
		int fd = openbeneath(r->rootfd, s->v[i].path, O_RDONLY | O_DIRECTORY, 0);
		if (fd >= 0) {
			if (s->v[i].held)
				fchmod(fd, s->v[i].want);
			else
				closeup(fd, s->v[i].mode);
			futimens(fd, s->v[i].t);
			close(fd);
		}
	}
}

/* How many folders parentat keeps open: OPENDEPTH, fewer under a low open-file limit (a layer's
 * cleanup and the reader need some too). */
static size_t opendepth(void)
{
	static size_t depth;
	if (!depth) {
		struct rlimit rl;
		rlim_t left = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 4 * OPENDEPTH
		              ? (rl.rlim_cur > 48 ? (rl.rlim_cur - 32) / 2 : 8) : OPENDEPTH;
		depth = left < OPENDEPTH ? (size_t)left : OPENDEPTH;
	}
	return depth;
}

/* Forget the parents kept open. */
static void parentdrop(struct restore *r)
{
	if (r->pfd >= 0 && (r->nopen == 0 || r->pfd != r->open[r->nopen - 1]))
		close(r->pfd); /* deeper than the folders kept */
	for (size_t i = 0; i < r->nopen; i++)
		close(r->open[i]);
	r->nopen = 0;
	r->pfd = -1;
	free(r->ppath);
	r->ppath = NULL;
}

/* The directory path[0..n) (the folder of entry path) beneath the target, open (r keeps it, and
 * the folders above it up to OPENDEPTH deep: entries come sorted, so the next entry's folder
 * shares most of them): walked one name at a time from the deepest folder the two share, never
 * through a symlink; a missing one is made (0755, as an archive without directory entries
 * needs). -1 with e set when one is not a directory. */
static int parentat(struct restore *r, const char *path, size_t n, struct err *e)
{
	if (n == 0)
		return r->rootfd;
	if (r->pfd >= 0 && strlen(r->ppath) == n && memcmp(r->ppath, path, n) == 0)
		return r->pfd;
	/* The whole names the last folder shares with this one, each still open. */
	size_t pl = r->ppath ? strlen(r->ppath) : 0, i = 0, keep = 0;
	while (keep < r->nopen && i <= pl && i <= n) {
		const char *a = memchr(r->ppath + i, '/', pl - i), *b = memchr(path + i, '/', n - i);
		size_t ea = a ? (size_t)(a - r->ppath) : pl, eb = b ? (size_t)(b - path) : n;
		if (ea != eb || memcmp(r->ppath + i, path + i, ea - i) != 0)
			break;
		keep++;
		i = ea + 1;
	}
	if (r->pfd >= 0 && (r->nopen == 0 || r->pfd != r->open[r->nopen - 1]))
		close(r->pfd);
	while (r->nopen > keep)
		close(r->open[--r->nopen]);
	r->pfd = -1;
	free(r->ppath);
	r->ppath = NULL;
	int dfd = keep ? r->open[keep - 1] : r->rootfd;
	int held = 1; /* dfd is the target or one of r->open */
	for (size_t c = i; c <= n;) {
		const char *slash = memchr(path + c, '/', n - c);
		size_t end = slash ? (size_t)(slash - path) : n;
		char *name = xstrndup(path + c, end - c);
		int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && mkdirat(dfd, name, 0755) == 0)
			fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && (errno == ENOTDIR || errno == ELOOP || errno == EEXIST))
			errc(e, ERR_VERIFY, "%s: %.*s is not a directory inside the target (a symlink or a file there?):", path,
			     (int)end, path);
		else if (fd < 0) /* out of descriptors, memory or rights: the machine's, not the layer's */
			errf(e, "%s: open %.*s:", path, (int)end, path);
		free(name);
		if (!held)
			close(dfd);
		dfd = fd;
		if (fd < 0)
			break;
		held = r->nopen < opendepth(); /* the first folders are kept */
		if (held)
			r->open[r->nopen++] = fd;
		c = end + 1;
	}
	if (dfd < 0) {
		parentdrop(r);
		return -1;
	}
	r->pfd = dfd;
	r->ppath = xstrndup(path, n);
	struct stat st;
	if (fstat(dfd, &st) < 0 || st.st_dev != r->dev) {
		parentdrop(r);
		return errc(e, ERR_VERIFY, "%s: %.*s is not on the target's filesystem", path, (int)n, path);
	}
	return dfd;
}

/* Make room for an entry at base in directory pfd: what is there goes, unless it is a directory
 * and a directory is wanted (then 1). A directory the layer used may not be replaced. */
static int makeroom(struct restore *r, int pfd, const char *base, const char *path, const struct dirset *used,
                    int wantdir, struct err *e)
{
	struct stat st;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : errf(e, "stat %s:", path);
	if (S_ISDIR(st.st_mode) && wantdir)
		return 1;
	if (r->c) {
		/* In one pass only a directory a newer layer made (to write beneath it) can be here,
		 * unless this layer wrote the path before: applied in order, that layer would have found
		 * this entry's non-directory in its way. */
		const struct dslot *s = dsfind(&r->c->seen, path, trimlen(path));
		int mine = (s && s->wrote == r->c->j) || (r->c->j == 1 && !S_ISDIR(st.st_mode)); /* see struct chain */
		if (!mine) { /* or this layer named the path twice: layer by layer decides */
			r->c->fallback = 1;
			return errc(e, ERR_FAIL, "%s: a newer layer writes beneath it, and it is no directory", path);
		}
	}
	if (S_ISDIR(st.st_mode) && dshas(used, path, trimlen(path)))
		return errc(e, ERR_VERIFY, "%s replaces a directory that the same layer already wrote into; refusing the layer", path);
	return rmat(r, pfd, base, path, e);
}

/* The entry's times for futimens/utimensat: its atime when it has one, else its mtime. */
static void entrytimes(struct archive_entry *en, struct timespec t[2])
{
	t[1] = (struct timespec){archive_entry_mtime(en), archive_entry_mtime_nsec(en)};
	t[0] = archive_entry_atime_is_set(en) ? (struct timespec){archive_entry_atime(en), archive_entry_atime_nsec(en)}
	                                      : t[1];
}

static int bypath(const void *a, const void *b)
{
	return strcmp(**(char *const *const *)a, **(char *const *const *)b);
}

/* SHA256SUMS (r->sums) parsed into r->sumpath/r->sumhex, sorted by path; root is its folder. */
static void sumsload(struct restore *r, const char *path)
{
	const char *slash = strrchr(path, '/');
	r->sumroot = slash ? xstrndup(path, slash + 1 - path) : xstrdup("");
	struct strv paths = {0}, hexes = {0};
	for (const char *l = r->sums.data; l && *l;) {
		const char *end = strchrnul(l, '\n');
		char h[65], *name;
		if (sumsget(l, (size_t)(end - l), h, &name) == 0) {
			strvadd(&paths, strncmp(name, "./", 2) == 0 ? name + 2 : name);
			strvadd(&hexes, h);
			free(name);
		}
		l = *end ? end + 1 : end;
	}
	/* Sort the pairs by path: an index of pointers into paths, then both lists in that order. */
	char ***idx = xcalloc(paths.n + 1, sizeof *idx);
	for (size_t i = 0; i < paths.n; i++)
		idx[i] = &paths.v[i];
	if (paths.n)
		qsort(idx, paths.n, sizeof *idx, bypath);
	for (size_t i = 0; i < paths.n; i++) {
		strvadd(&r->sumpath, *idx[i]);
		strvadd(&r->sumhex, hexes.v[idx[i] - paths.v]);
	}
	free(idx);
	strvfree(&paths);
	strvfree(&hexes);
	r->sumseen = xcalloc(r->sumpath.n + 1, 1);
	r->havesums = 1;
}

/* A file of a run archive (path, its digest hex) against SHA256SUMS. */
static int sumcheck(struct restore *r, const char *path, const char *hex, struct err *e)
{
	size_t rl = strlen(r->sumroot);
	if (strncmp(path, r->sumroot, rl) != 0) {
		r->sumfail = 1;
		return errc(e, ERR_VERIFY, "%s: outside the run folder %s that SHA256SUMS lies in", path, r->sumroot);
	}
	const char *rel = path + rl;
	int self = strcmp(rel, "SHA256SUMS") == 0 || strcmp(rel, "SHA256SUMS.sig") == 0;
	size_t lo = 0, hi = r->sumpath.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(r->sumpath.v[mid], rel);
		if (c == 0) {
			/* every line naming it has its file (a name listed twice is one file) */
			for (size_t k = mid; k < r->sumpath.n && strcmp(r->sumpath.v[k], rel) == 0; k++)
				r->sumseen[k] = 1;
			for (size_t k = mid; k-- > 0 && strcmp(r->sumpath.v[k], rel) == 0;)
				r->sumseen[k] = 1;
			if (self || strcmp(r->sumhex.v[mid], hex) == 0)
				return 0;
			r->sumfail = 1;
			return errc(e, ERR_VERIFY, "%s: its digest is %.16s..., SHA256SUMS says %.16s...", path, hex, r->sumhex.v[mid]);
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (self)
		return 0;
	r->sumfail = 1;
	return errc(e, ERR_VERIFY, "%s: not listed in SHA256SUMS", path);
}

/* After the whole archive: a file SHA256SUMS lists that never arrived (as `audit --verify` of the
 * unpacked run would say). */
static int summissing(struct restore *r, struct err *e)
{
	size_t missing = 0, first = 0;
	for (size_t i = 0; r->havesums && i < r->sumpath.n; i++)
		if (!r->sumseen[i] && missing++ == 0)
			first = i;
	if (!missing)
		return 0;
	r->sumfail = 1;
	if (missing == 1)
		return errc(e, ERR_VERIFY, "%s%s: listed in SHA256SUMS but missing from the archive", r->sumroot, r->sumpath.v[first]);
	return errc(e, ERR_VERIFY, "%s%s: listed in SHA256SUMS but missing from the archive (and %zu more)", r->sumroot,
	            r->sumpath.v[first], missing - 1);
}

/* A file of a run archive has arrived: SHA256SUMS itself (at the top or in the top folder, the
 * first one) is loaded and the files before it checked; any other is checked, or waits for it. */
static int sumarrived(struct restore *r, const char *path, const char *hex, struct err *e)
{
	const char *slash = strchr(path, '/');
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!r->havesums && strcmp(base, "SHA256SUMS") == 0 && (!slash || !strchr(slash + 1, '/'))) {
		sumsload(r, path);
		for (size_t i = 0; i < r->early.n; i++)
			if (sumcheck(r, r->early.v[i], r->earlyhex.v[i], e) < 0)
				return -1;
		strvfree(&r->early);
		strvfree(&r->earlyhex);
		return 0;
	}
	if (r->havesums)
		return sumcheck(r, path, hex, e);
	strvadd(&r->early, path);
	strvadd(&r->earlyhex, hex);
	return 0;
}

/* Feed n zero bytes to md (a hole of a sparse entry). */
static void hashzeros(EVP_MD_CTX *md, int64_t n)
{
	static const char zeros[4096];
	for (; n > 0; n -= n > 4096 ? 4096 : n)
		EVP_DigestUpdate(md, zeros, n > 4096 ? 4096 : (size_t)n);
}

/* Write a regular file's bytes (holes stay holes) into a new file base of pfd; a run archive's
 * are hashed as they are written and checked against its SHA256SUMS. */
static int putfile(struct restore *r, struct archive *a, struct archive_entry *en, int pfd, const char *base,
                     const char *path, const struct dirset *used, struct err *e)
{
	/* Made with its own mode when the create gives exactly that (no set-id bit: a write clears
	 * those), else owner-only until fchmod. */
	mode_t perm = archive_entry_perm(en) & 07777;
	int direct = r->exact && !(perm & (07000 | r->mask));
	int fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, direct ? perm : 0600);
	if (fd < 0 && errno == EEXIST && r->c) { /* in one pass, room is made only when something is there */
		if (makeroom(r, pfd, base, path, used, 0, e) < 0)
			return -1;
		fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, direct ? perm : 0600);
	}
	if (fd < 0)
		return errf(e, "create %s:", path);
	int64_t size = archive_entry_size(en);
	int64_t data = r->plain ? size : bounddata(en), wrote = 0; /* what its header declares, and what came */
	const void *p;
	size_t n;
	la_int64_t off;
	int st, rc = 0;
	int64_t pos = 0; /* what md has taken */
	int64_t endoff = 0; /* the end of the data written: the new file's size until truncated */
	EVP_MD_CTX *md = r->plain ? EVP_MD_CTX_new() : NULL;
	if (md && !EVP_DigestInit_ex(md, EVP_sha256(), NULL))
		rc = errc(e, ERR_FAIL, "%s: SHA-256 unavailable", path);
	int issums = r->plain && !r->havesums && strcmp(strrchr(path, '/') ? strrchr(path, '/') + 1 : path, "SHA256SUMS") == 0;
	if (issums)
		r->sums.len = 0;
	while (rc == 0 && (st = archive_read_data_block(a, &p, &n, &off)) == ARCHIVE_OK) {
		if (off < 0 || (int64_t)n > size || off > size - (int64_t)n || (md && off < pos) || (int64_t)n > data - wrote) {
			rc = errc(e, ERR_VERIFY, "%s: data past the %lld bytes its header gives, or out of order", path, (long long)size);
			break;
		}
		wrote += (int64_t)n;
		if (md) {
			hashzeros(md, off - pos);
			EVP_DigestUpdate(md, p, n);
			pos = off + (int64_t)n;
			if (issums) {
				while (r->sums.len < (size_t)off)
					bufputc(&r->sums, 0);
				bufadd(&r->sums, p, n);
			}
		}
		if (off + (int64_t)n > endoff)
			endoff = off + (int64_t)n;
		for (size_t done = 0; done < n;) {
			ssize_t w = pwrite(fd, (const char *)p + done, n - done, off + (off_t)done);
			if (w < 0) {
				rc = errf(e, "write %s:", path);
				break;
			}
			done += (size_t)w;
		}
	}
	if (rc == 0 && st != ARCHIVE_EOF)
		rc = errc(e, ERR_VERIFY, "%s: %s", path, r->zfailed ? r->zerr.msg : archive_error_string(a));
	struct timespec t[2];
	entrytimes(en, t);
	if (rc == 0 && ((endoff < size && ftruncate(fd, size) < 0) || (!direct && fchmod(fd, perm) < 0) ||
	                futimens(fd, t) < 0))
		rc = errf(e, "%s:", path);
	if (close(fd) < 0 && rc == 0)
		rc = errf(e, "write %s:", path);
	if (md && rc == 0) {
		hashzeros(md, size - pos);
		unsigned char d[EVP_MAX_MD_SIZE];
		unsigned int dn = 0;
		char hex[65];
		EVP_DigestFinal_ex(md, d, &dn);
		for (unsigned i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", d[i]);
		rc = sumarrived(r, path, hex, e);
	}
	EVP_MD_CTX_free(md);
	return rc;
}

/* The checks of one layer alone, for an entry written or skipped: a non-directory where the layer
 * already wrote beneath is refused; the directories it uses are noted. */
static int usecheck(const char *path, int isdir, struct dirset *used, struct err *e)
{
	size_t n = trimlen(path);
	const char *slash = memrchr(path, '/', n);
	if (!isdir && dshas(used, path, n))
		return errc(e, ERR_VERIFY, "%s replaces a directory that the same layer already wrote into; refusing the layer", path);
	markused(used, path, isdir ? n : slash ? (size_t)(slash - path) : 0);
	return 0;
}

/* Write one entry (not a whiteout) at path. */
static int writeentry(struct restore *r, struct archive *a, struct archive_entry *en, const char *path,
                      struct dirset *ds, struct dirset *used, struct err *e)
{
	size_t n = trimlen(path);
	const char *slash = memrchr(path, '/', n);
	const char *hl = archive_entry_hardlink(en);
	int isdir = !hl && archive_entry_filetype(en) == AE_IFDIR;
	char *base = slash ? xstrndup(slash + 1, n - (slash + 1 - path)) : xstrndup(path, n);
	int rc = 0;
	if (usecheck(path, isdir, used, e) < 0) {
		rc = -1;
		goto out;
	}
	int pfd = parentat(r, path, slash ? (size_t)(slash - path) : 0, e);
	if (pfd < 0) {
		rc = -1;
		goto out;
	}
	if (!r->c) /* in one pass, every directory's times and mode are set after the whole chain */
		dsnote(r, ds, path, en, isdir, pfd);
	/* A file in one pass, or a directory: its O_EXCL create, or mkdir, finds out whether anything
	 * is there (almost never). A new directory is owner-writable until the end of the layer gives
	 * it its mode. */
	int made = isdir && mkdirat(pfd, base, 0700) == 0;
	if (isdir && !made && errno != EEXIST) {
		rc = errf(e, "mkdir %s:", path);
		goto out;
	}
	int there = made || (r->c && !isdir && !hl && archive_entry_filetype(en) == AE_IFREG) ? 0
	            : makeroom(r, pfd, base, path, used, isdir, e);
	if (there < 0) {
		rc = -1;
		goto out;
	}
	struct timespec t[2];
	if (made) {
		/* its mode and times are set after the layer, or after the chain */
	} else if (isdir) {
		int fd = -1;
		if (!there && mkdirat(pfd, base, 0700) < 0)
			rc = errf(e, "mkdir %s:", path);
		else if ((fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			rc = errf(e, "open %s:", path);
		else if (there && !r->root) {
			mode_t old;
			openup(r, fd, &old);
		}
		if (fd >= 0)
			close(fd);
	} else if (hl) {
		size_t hn = strlen(hl);
		const char *hs = memrchr(hl, '/', hn);
		char *hdir = hs ? xstrndup(hl, hs - hl) : xstrdup(".");
		int sfd = openbeneath(r->rootfd, hdir, O_PATH | O_DIRECTORY, 0);
		if (sfd < 0 || linkat(sfd, hs ? hs + 1 : hl, pfd, base, 0) < 0)
			rc = errf(e, "link %s to %s:", path, hl);
		if (sfd >= 0)
			close(sfd);
		free(hdir);
	} else if (archive_entry_filetype(en) == AE_IFLNK) {
		const char *to = archive_entry_symlink(en);
		entrytimes(en, t);
		if (!to || !*to)
			rc = errc(e, ERR_VERIFY, "%s: a symlink to nothing", path);
		else if (symlinkat(to, pfd, base) < 0 || utimensat(pfd, base, t, AT_SYMLINK_NOFOLLOW) < 0)
			rc = errf(e, "symlink %s:", path);
	} else {
		rc = putfile(r, a, en, pfd, base, path, used, e);
	}
out:
	free(base);
	return rc;
}

/* Apply one layer file; want is its digest from SHA256SUMS (NULL: none), label its name there (NULL:
 * a run archive, named by the caller).
 * Nothing is written by libarchive: entries are made here, each through its parent's descriptor,
 * reached one name at a time beneath the target without following a symlink. */
static int applylayer(struct restore *r, const char *file, const char *label, const char *want, struct err *e)
{
	/* a run's layer is read as verification reads it: never through a link */
	int flags = (label ? ZSTR_NOFOLLOW | ZSTR_NOSKIP : 0) | (want ? ZSTR_DIGESTED : 0);
	if (aheadopen(&r->h, file, flags, &r->fc, r->only, e) < 0)
		return label ? errctx(e, "layer %s", label) : -1;
	r->zfailed = 0;
	r->pfd = -1;
	struct dirset ds = {0}, used = {0};
	int entries = 0; /* an entry has been read: a whiteout now is out of place */
	struct archive *a = archive_read_new();
	archive_read_support_format_tar(a);
	int rc = 0;
	/* A layer that does not read, or holds what no snapshot writes, fails with 4 (not valid);
	 * the target failing to take what is valid fails with 1. */
	if (archive_read_open(a, r, NULL, readcb, NULL) != ARCHIVE_OK)
		rc = errc(e, ERR_VERIFY, "%s", r->zfailed ? r->zerr.msg : archive_error_string(a));
	while (rc == 0) {
		struct archive_entry *en;
		int st = archive_read_next_header(a, &en);
		if (st == ARCHIVE_EOF)
			break;
		if (st < ARCHIVE_WARN) {
			rc = errc(e, ERR_VERIFY, "%s", r->zfailed ? r->zerr.msg : archive_error_string(a));
			break;
		}
		const char *path = archive_entry_pathname(en);
		if (framecheckentry(&r->fc, a, en, snapspecial(en), e) < 0) {
			rc = -1;
			break;
		}
		if (r->plain && path && (strncmp(path, "./", 2) == 0 || strcmp(path, ".") == 0)) {
			/* GNU tar's `-C RUN .` names entries "./x"; layers never do. */
			while (path[0] == '.' && path[1] == '/')
				path += 2;
			if (!*path || strcmp(path, ".") == 0)
				continue;
			char *clean = xstrdup(path);
			archive_entry_copy_pathname(en, clean);
			free(clean);
			path = archive_entry_pathname(en);
		}
		if (!r->plain && path && (strcmp(path, ".") == 0 || strcmp(path, "./") == 0)) {
			/* the workspace folder itself: a directory, whose mode and times go on the target last */
			if (archive_entry_filetype(en) != AE_IFDIR) {
				rc = errc(e, ERR_VERIFY, "entry %s: the workspace folder itself, but not a directory; refusing it", path);
				break;
			}
			if (r->c && r->rootset)
				continue; /* in one pass, a newer layer set it */
			r->rootset = 1;
			r->rootmode = archive_entry_perm(en) & 07777 & ~(mode_t)(S_ISUID | S_ISGID);
			entrytimes(en, r->roottime);
			continue;
		}
		if (!safepath(path) || strlen(path) >= PATH_MAX) {
			rc = errc(e, ERR_VERIFY, "entry %.200s: absolute, with '..' or '.', or too long; refusing it",
			          path ? path : "(none)");
			break;
		}
		const char *slash = strrchr(path, '/');
		const char *base = slash ? slash + 1 : path;
		const char *kind = r->plain ? NULL : snapwhiteout(en, base);
		if (kind && (strcmp(kind, "full") == 0 || strcmp(kind, "delta") == 0))
			continue; /* the layer's SNAPMARK: listlayers read it */
		if (kind) {
			/* A whiteout of what this layer already wrote into would let a symlink take its
			 * place under the entries written there. */
			size_t gl = strcmp(kind, "opaque") == 0 ? (slash ? (size_t)(slash - path) : 0) : trimlen(path);
			char *gone = strcmp(kind, "opaque") == 0 ? xstrndup(path, gl)
			             : slash ? xasprintf("%.*s%s", (int)(base - path), path, base + 4) : xstrdup(base + 4);
			int usedit = *gone ? dshas(&used, gone, strlen(gone)) : used.n > 0;
			if (usedit)
				rc = errc(e, ERR_VERIFY, "whiteout %s removes %s, which the same layer already wrote into; refusing the layer",
				          path, *gone ? gone : "the whole target");
			else if (entries)
				rc = errc(e, ERR_VERIFY, "whiteout %s after the layer's entries (a layer holds its whiteouts first); refusing the layer", path);
			if (rc == 0 && r->only && *gone && !setwants(r->only, gone)) {
				free(gone); /* it removes what this restore does not write */
				continue;
			}
			if (rc == 0 && r->c) {
				/* In one pass a whiteout removes nothing: it hides what older layers hold there. */
				const char *name = base + 4;
				if (strcmp(kind, "opaque") == 0)
					chaincut(r->c, gone, gl, r->c->j);
				else if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
					rc = errc(e, ERR_VERIFY, "whiteout %s names no entry", path);
				else {
					chainname(r->c, gone, strlen(gone), r->c->j);
					chaincut(r->c, gone, strlen(gone), r->c->j);
				}
				free(gone);
				if (rc < 0)
					break;
				continue;
			}
			free(gone);
			if (rc < 0) /* no entry bound: a whiteout makes nothing, and its header counts in the stream's */
				break;
			parentdrop(r);
			rc = whiteout(r, path, base, kind, e);
			continue;
		}
		entries = 1;
		const char *hl = archive_entry_hardlink(en);
		int isdir = !hl && archive_entry_filetype(en) == AE_IFDIR;
		size_t pn = trimlen(path);
		int live = !r->c || !hidden(r->c, path, pn, r->c->j);
		int wanted = !r->only || setwants(r->only, path);
		if (wanted && hl && r->only && !setwants(r->only, hl)) {
			r->outside = 1;
			rc = errc(e, ERR_FAIL, "%s: hard link to %s, which this restore does not write", path, hl);
			break;
		}
		live = live && wanted;
		if (r->c && live && hl) {
			/* A link's target must be this layer's (a newer one may have replaced it since): when
			 * this layer skipped it, or a layer before wrote it, one pass cannot make the link. */
			size_t hn = trimlen(hl);
			const struct dslot *t = dsfind(&r->c->seen, hl, hn);
			int mine = r->c->j == 1 ? !t && !hidden(r->c, hl, hn, 1) : t && t->wrote == r->c->j;
			if (!mine) {
				r->c->fallback = 1;
				rc = errc(e, ERR_FAIL, "%s: hard link to %s, which one pass cannot make", path, hl);
				break;
			}
		}
		if ((rc = vet(r, en, path, live, e)) < 0) {
			e->kind = ERR_VERIFY;
			break;
		}
		if (!r->c) {
			rc = wanted ? writeentry(r, a, en, path, &ds, &used, e) : usecheck(path, isdir, &used, e);
			continue;
		}
		if (!wanted) { /* nothing beneath it is wanted either: what it hides does not matter */
			rc = usecheck(path, isdir, &used, e);
			continue;
		}
		int note = isdir || r->c->j > 1; /* see struct chain */
		if (note)
			chainname(r->c, path, pn, r->c->j);
		if (note && !isdir) /* a non-directory replaced whatever older layers hold beneath it */
			chaincut(r->c, path, pn, r->c->j);
		if (!live) {
			rc = usecheck(path, isdir, &used, e);
			continue;
		}
		if ((rc = writeentry(r, a, en, path, &ds, &used, e)) < 0)
			break;
		if (!note)
			continue;
		struct dslot *sl = dsfind(&r->c->seen, path, pn);
		sl->wrote = r->c->j;
		sl->held = isdir;
		if (isdir) {
			sl->t[0] = (struct timespec){0, UTIME_OMIT};
			sl->t[1] = (struct timespec){archive_entry_mtime(en), archive_entry_mtime_nsec(en)};
			sl->want = archive_entry_perm(en) & 07777 & ~(mode_t)(S_ISUID | S_ISGID);
		}
	}
	parentdrop(r);
	/* Read to the end of the file, so the digest covers every byte of it. */
	ssize_t n;
	const void *p;
	while (rc == 0 && (n = aheadnext(r->h, &p, e)) != 0)
		if (n < 0 || boundstream(&r->b, n, e) < 0) {
			e->kind = ERR_VERIFY;
			rc = -1;
		}
	if (rc == 0 && framecheckend(&r->fc, e) < 0)
		rc = -1;
	char got[65];
	aheadclose(r->h, rc == 0 ? got : NULL);
	r->h = NULL;
	framecheckfree(&r->fc);
	if (rc == 0 && want && strcmp(got, want) != 0)
		rc = errc(e, ERR_VERIFY, "digest mismatch: SHA256SUMS has %s, the file has %s", want, got);
	if (rc == 0) /* a layer refused is taken away: its folders' modes would only stand in the way */
		dsrestore(r, &ds);
	dsfree(&ds);
	dsfree(&used);
	archive_read_free(a);
	if (rc < 0 && label)
		errctx(e, "layer %s", label);
	return rc;
}

/* A line of SHA256SUMS: its name, and where its digest starts. */
struct sumline {
	const char *name, *digest;
	size_t len;
};

static int byname(const void *a, const void *b)
{
	const struct sumline *x = a, *y = b;
	int c = namecmp(x->name, x->len, y->name, y->len);
	return c ? c : x->digest < y->digest ? -1 : x->digest > y->digest; /* the first line first */
}

/* The lines of SHA256SUMS that name a file, sorted by name: one pass, however many layers are
 * looked up (a chain of 5,000 looked each up from the top). */
static size_t sumlines(const struct buf *sums, struct sumline **out)
{
	size_t n = 0, cap = 0;
	struct sumline *v = NULL;
	for (const char *l = sums->data; l && *l;) {
		const char *end = strchrnul(l, '\n');
		if (end - l > 66 && (l[64] == ' ') && (l[65] == ' ' || l[65] == '*')) {
			const char *p = l + 66;
			if (strncmp(p, "./", 2) == 0)
				p += 2;
			if (n == cap)
				v = xrealloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
			v[n++] = (struct sumline){p, l, (size_t)(end - p)};
		}
		l = *end ? end + 1 : end;
	}
	if (n)
		qsort(v, n, sizeof *v, byname);
	*out = v;
	return n;
}

/* The digest SHA256SUMS gives for name (a path relative to the run), or NULL; its first line for
 * name when there are several. */
static const char *sumfor(const struct sumline *v, size_t n, const char *name, char out[65])
{
	size_t len = strlen(name), lo = 0, hi = n;
	while (lo < hi) { /* the first line not before name */
		size_t mid = lo + (hi - lo) / 2;
		if (namecmp(v[mid].name, v[mid].len, name, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || namecmp(v[lo].name, v[lo].len, name, len) != 0)
		return NULL;
	const char *l = v[lo].digest;
	for (int i = 0; i < 64; i++)
		out[i] = (char)((l[i] >= 'A' && l[i] <= 'F') ? l[i] + 32 : l[i]);
	out[64] = 0;
	return strspn(out, "0123456789abcdef") == 64 ? out : NULL;
}

struct layerent {
	long long step;
	char *name;
};

static int bystep(const void *a, const void *b)
{
	const struct layerent *x = a, *y = b;
	return x->step < y->step ? -1 : x->step > y->step;
}

/* A layer's first bytes, for layerfull: libarchive reads them through zstropen. */
struct peek {
	struct zstr *z;
	char buf[16384];
};

static la_ssize_t peekcb(struct archive *a, void *arg, const void **p)
{
	(void)a;
	struct peek *k = arg;
	struct err ignored = {0};
	*p = k->buf;
	ssize_t n = zstread(k->z, k->buf, sizeof k->buf, &ignored);
	return n < 0 ? ARCHIVE_FATAL : n;
}

/* Whether a layer file is a full tree: what its SNAPMARK says, else what its place implies (the
 * first of a chain, and end, are full; the rest hold changes). */
static int layerfull(const char *file, int first, int end)
{
	int full = first || end;
	struct peek *k = xmalloc(sizeof *k);
	struct err ignored = {0};
	if (zstropen(&k->z, file, ZSTR_NOFOLLOW | ZSTR_NOSKIP, &ignored) < 0) {
		free(k); /* applying it says why */
		return full;
	}
	struct archive *a = archive_read_new();
	archive_read_support_format_tar(a);
	struct archive_entry *en;
	if (archive_read_open(a, k, NULL, peekcb, NULL) == ARCHIVE_OK && archive_read_next_header(a, &en) >= ARCHIVE_WARN) {
		const char *p = archive_entry_pathname(en);
		const char *kind = p && strcmp(p, SNAPMARK) == 0 ? snapwhiteout(en, p) : NULL;
		if (kind && strcmp(kind, "full") == 0)
			full = 1;
		else if (kind && strcmp(kind, "delta") == 0)
			full = 0;
	}
	archive_read_free(a);
	zstrfree(k->z);
	free(k);
	return full;
}

/* The layers to apply for step (0 = end), in order: from the last full one at or before it, none
 * at or before step base (a resumed run's carried layers, when step is its own). A layer read here
 * to learn that is applied, so its digest is checked too. */
static int listlayers(const char *snapdir, int step, int base, struct layerent **out, size_t *nout, struct err *e)
{
	*out = NULL;
	*nout = 0;
	DIR *d = opendir(snapdir);
	if (!d)
		return errc(e, ERR_INPUT, "%s:", snapdir);
	struct layerent *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *nm = de->d_name;
		int num;
		enum layerkind kind = layerparse(nm, &num);
		long long k;
		if (step == 0 && kind == LAYER_END)
			k = LLONG_MAX;
		else if (kind == LAYER_STEP)
			k = num;
		else
			continue;
		if ((step > 0 && (k < 1 || k > step)) || (k != LLONG_MAX && k <= base))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			v = xrealloc(v, cap * sizeof *v);
		}
		v[n++] = (struct layerent){k, xstrdup(nm)};
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, bystep);
	for (size_t i = 1; i < n && rc == 0; i++)
		if (v[i].step == v[i - 1].step)
			rc = errc(e, ERR_INPUT, "%s: both %s and %s are step %lld", snapdir, v[i - 1].name, v[i].name, v[i].step);
	if (rc == 0 && n == 0)
		rc = errc(e, ERR_INPUT, "%s: no layer for step %d or before", snapdir, step);
	if (rc == 0 && step == 0 && v[n - 1].step != LLONG_MAX)
		rc = errc(e, ERR_INPUT, "%s: no end.tar.zst (the run did not finish?)", snapdir);
	size_t from = 0;
	for (size_t i = n; rc == 0 && i-- > 0;) {
		char *file = pathjoin(snapdir, v[i].name);
		int full = layerfull(file, i == 0, v[i].step == LLONG_MAX);
		free(file);
		if (full) {
			from = i;
			break;
		}
	}
	for (size_t i = 0; rc == 0 && i < from; i++)
		free(v[i].name);
	if (rc == 0 && from) {
		memmove(v, v + from, (n - from) * sizeof *v);
		n -= from;
	}
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			free(v[i].name);
		free(v);
		return -1;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* The umask, read without changing it (another thread may be creating files): 0 when unknown,
 * with *known 0. */
static mode_t umaskof(int *known)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned m = 0;
	*known = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Umask: %o", &m) == 1) {
			*known = 1;
			break;
		}
	if (f)
		fclose(f);
	return (mode_t)m & 0777;
}

/* Make the target an empty directory (emptying it only with force), open in *fd. */
static int preparetarget(struct restore *r, const char *to, const char *rundir, int force, struct err *e)
{
	struct stat st;
	if (lstat(to, &st) < 0) {
		if (errno != ENOENT)
			return errc(e, ERR_INPUT, "%s:", to);
		if (mkdirs(to, 0755, e) < 0)
			return -1;
		r->made = 1;
	} else if (!S_ISDIR(st.st_mode)) {
		return errc(e, ERR_INPUT, "%s is not a directory", to);
	}
	char *rto = realpath(to, NULL), *rrun = realpath(rundir, NULL);
	int rc = 0;
	if (!rto || !rrun)
		rc = errc(e, ERR_INPUT, "%s:", !rto ? to : rundir);
	else if (strcmp(rto, "/") == 0)
		rc = errc(e, ERR_INPUT, "refusing to restore into /");
	else if (strncmp(rrun, rto, strlen(rto)) == 0 && (rrun[strlen(rto)] == '/' || !rrun[strlen(rto)]))
		rc = errc(e, ERR_INPUT, "%s holds the run directory %s; restore somewhere else", to, rundir);
	free(rto);
	free(rrun);
	if (rc < 0)
		return -1;
	r->rootfd = open(to, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->rootfd < 0 || fstat(r->rootfd, &st) < 0)
		return errf(e, "open %s:", to);
	r->dev = st.st_dev;
	DIR *d = fdopendir(dup(r->rootfd));
	if (!d)
		return errf(e, "read %s:", to);
	int empty = 1;
	struct dirent *de;
	while (empty && (de = readdir(d)))
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	if (!empty && !force)
		return errc(e, ERR_INPUT, "%s is not empty (--force replaces what it holds)", to);
	/* Everything beneath is made here, so the target's default ACL (none, as a rule) is the only
	 * one that could change the modes files are made with. */
	r->mask = umaskof(&r->exact);
	if (r->exact && (fgetxattr(r->rootfd, "system.posix_acl_default", NULL, 0) >= 0 || (errno != ENODATA && errno != ENOTSUP)))
		r->exact = 0;
	return empty ? 0 : rmchildren(r, r->rootfd, to, e);
}

/* The workspace whose chain a restore reads: the one named, the one holding step's layer, or the
 * only one; NULL (e says why) when that is not one; "" for a run with one workspace. */
static char *pickws(const char *run, const char *snapdir, const char *ws, int step, struct err *e)
{
	if (ws) {
		char *p = pathjoin(snapdir, ws);
		struct stat st;
		int ok = !strchr(ws, '/') && strcmp(ws, "..") && strcmp(ws, ".") && *ws && lstat(p, &st) == 0 &&
		         S_ISDIR(st.st_mode);
		free(p);
		if (!ok) {
			errc(e, ERR_INPUT, "%s has no workspace '%s'", snapdir, ws);
			return NULL;
		}
		return xstrdup(ws);
	}
	char *lf = layerfile(step > 0 ? LAYER_STEP : LAYER_END, step);
	char *here = pathjoin(snapdir, lf);
	free(lf);
	int flat = access(here, F_OK) == 0;
	free(here);
	if (flat)
		return xstrdup("");
	struct stat st;
	if (stat(snapdir, &st) < 0) {
		errc(e, ERR_INPUT, "%s:", snapdir);
		return NULL;
	}
	struct strv all = {0};
	char *found = NULL;
	snapchains(run, &all);
	flat = all.n && !*all.v[0];
	if (flat) { /* the folders come after "": move them down, with the list's closing NULL */
		free(all.v[0]);
		memmove(all.v, all.v + 1, all.n * sizeof *all.v);
		all.n--;
	}
	for (size_t i = 0; i < all.n && step > 0 && !found; i++) {
		char *l = layerpath(all.v[i], LAYER_STEP, step);
		char *p = xasprintf("%s/%s", run, l);
		free(l);
		if (access(p, F_OK) == 0)
			found = xstrdup(all.v[i]);
		free(p);
	}
	if (!found && flat)
		found = xstrdup("");
	else if (!found && all.n == 1)
		found = xstrdup(all.v[0]);
	if (!found) {
		struct buf names = {0};
		for (size_t i = 0; i < all.n; i++)
			bufprintf(&names, "%s%s", i ? ", " : "", all.v[i]);
		if (step > 0)
			errc(e, ERR_INPUT, "no workspace of the run has a layer for step %d; name one with --workspace (%s)", step,
			     names.data ? names.data : "none");
		else
			errc(e, ERR_INPUT, "the run has several workspaces; name one with --workspace (%s)", names.data ? names.data : "none");
		buffree(&names);
	}
	strvfree(&all);
	return found;
}

/* A chain's layers for step (0: end): run is rundir made absolute, sub the chain's folder relative
 * to it (snapshots or snapshots/<ws>), layers what listlayers gives. */
struct chainat {
	char *run, *sub, *snapdir;
	struct layerent *layers;
	size_t n;
};

static void chainatfree(struct chainat *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->layers[i].name);
	free(c->layers);
	free(c->run);
	free(c->sub);
	free(c->snapdir);
	memset(c, 0, sizeof *c);
}

static int chainat(const char *rundir, const char *ws, int step, struct chainat *c, struct err *e)
{
	memset(c, 0, sizeof *c);
	if (step < 0)
		return errc(e, ERR_INPUT, "step %d: want 1 or more, or end", step);
	/* Absolute, since the layers are read from inside the target. */
	if (!(c->run = realpath(rundir, NULL)))
		return errc(e, ERR_INPUT, "%s:", rundir);
	char *top = pathjoin(c->run, "snapshots");
	char *name = pickws(c->run, top, ws, step, e);
	free(top);
	if (!name) {
		chainatfree(c);
		return -1;
	}
	/* layers are named relative to the run: snapshots/NNNN.tar.zst or snapshots/<ws>/NNNN.tar.zst */
	c->sub = *name ? xasprintf("snapshots/%s", name) : xstrdup("snapshots");
	free(name);
	c->snapdir = pathjoin(c->run, c->sub);
	/* A resumed run carries the layers of the run it resumed (its steps up to origin.last_step);
	 * its own chain starts after them with a full layer. */
	int base = 0;
	cJSON *rj = NULL;
	struct buf rjb = {0};
	struct err je = {0};
	char *rjpath = pathjoin(c->run, "run.json");
	if (readfile(rjpath, &rjb, &je) == 0)
		rj = cJSON_ParseWithLength(rjb.data, rjb.len);
	free(rjpath);
	buffree(&rjb);
	cJSON *last = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rj, "origin"), "last_step");
	if (cJSON_IsNumber(last) && last->valuedouble > 0 && last->valuedouble < 1e9 &&
	    (step == 0 || step > last->valuedouble)) /* end is the resumed run's own too */
		base = (int)last->valuedouble;
	cJSON_Delete(rj);
	if (listlayers(c->snapdir, step, base, &c->layers, &c->n, e) < 0) {
		chainatfree(c);
		return -1;
	}
	return 0;
}

/* What layers [from, to) of snapdir take on disk, as a chain's bound counts them (boundondisk). */
static int64_t ondisk(const char *snapdir, const struct layerent *layers, size_t from, size_t to)
{
	int64_t packed = 0;
	for (size_t i = from; i < to; i++) {
		struct stat st;
		char *file = pathjoin(snapdir, layers[i].name);
		if (lstat(file, &st) == 0 && boundondisk(&st) < INT64_MAX - packed)
			packed += boundondisk(&st);
		free(file);
	}
	return packed;
}

static int restoredir(const char *rundir, const char *ws, int step, const char *to, int force, int64_t maxbytes,
                      int own, const struct snapset *only, struct err *e)
{
	struct chainat ch;
	if (chainat(rundir, ws, step, &ch, e) < 0)
		return -1;
	const char *run = ch.run, *sub = ch.sub, *snapdir = ch.snapdir;
	struct layerent *layers = ch.layers;
	size_t n = ch.n;
	struct buf sums = {0};
	char *sumpath = pathjoin(run, "SHA256SUMS");
	char (*want)[65] = NULL;
	struct restore r = {.rootfd = -1, .root = geteuid() == 0, .only = only};
	int rc = 0;
	if (!own && readfile(sumpath, &sums, e) < 0) {
		rc = -1;
		goto out;
	}
	/* Every layer must be listed before anything is written (but the runner's own, not yet listed). */
	want = xcalloc(n + 1, sizeof *want);
	struct sumline *lines = NULL;
	size_t nlines = own ? 0 : sumlines(&sums, &lines);
	for (size_t i = 0; i < n && rc == 0 && !own; i++) {
		char *rel = xasprintf("%s/%s", sub, layers[i].name);
		if (!sumfor(lines, nlines, rel, want[i]))
			rc = errc(e, ERR_VERIFY, "layer %s is not listed in %s", rel, sumpath);
		free(rel);
	}
	free(lines);
	if (rc < 0 || preparetarget(&r, to, run, force, e) < 0) {
		rc = -1;
		goto out;
	}
	/* The chain together within one bound: by default 100 times its compressed bytes. */
	int64_t packed = ondisk(snapdir, layers, 0, n);
	boundinit(&r.b, "the restored workspace", maxbytes, packed, BOUND_WRITEENTRIES);
	/* In one pass, newest layer first; in order when a hard link needs it (then from scratch). */
	struct chain c = {0};
	r.c = bylayer ? NULL : &c;
	for (size_t k = 0; k < n && rc == 0; k++) {
		size_t i = r.c ? n - 1 - k : k;
		char *file = pathjoin(snapdir, layers[i].name);
		char *rel = xasprintf("%s/%s", sub, layers[i].name);
		if (r.c)
			c.j = (int)i + 1;
		rc = applylayer(&r, file, rel, own ? NULL : want[i], e);
		free(file);
		free(rel);
		if (rc < 0 && r.c && c.fallback) {
			struct err ignored = {0};
			if (rmchildren(&r, r.rootfd, to, &ignored) < 0) {
				*e = ignored;
				break;
			}
			boundinit(&r.b, "the restored workspace", maxbytes, packed, BOUND_WRITEENTRIES);
			r.rootset = 0;
			r.c = NULL;
			k = (size_t)-1;
			rc = 0;
			*e = (struct err){0};
		}
	}
	if (rc == 0 && r.c)
		chaindirs(&r, &c);
	dsfree(&c.seen);
	dsfree(&c.cut);
	if (rc == 0 && r.rootset && (fchmod(r.rootfd, r.rootmode) < 0 || futimens(r.rootfd, r.roottime) < 0))
		rc = errf(e, "%s: its mode and times:", to);
	if (rc < 0 && r.rootfd >= 0) {
		/* Nothing of a refused restore stays: the target is emptied (and removed when made here). */
		struct err ignored = {0};
		rmchildren(&r, r.rootfd, to, &ignored);
		if (r.made)
			rmdir(to);
	}
out:
	if (r.rootfd >= 0)
		close(r.rootfd);
	chainatfree(&ch);
	free(want);
	free(sumpath);
	buffree(&sums);
	return rc < 0 && r.outside ? 1 : rc;
}

static int bysetname(const void *a, const void *b)
{
	return strcmp(((const struct setname *)a)->p, ((const struct setname *)b)->p);
}

#define SETMAX (1 << 20) /* names; past it a whole restore costs no more */

/* Add the names layer file holds to v; 0, or -1 when only a whole restore will do. */
static int setlayer(const char *file, struct restore *r, struct setname **v, size_t *n, size_t *cap)
{
	struct err e = {0};
	if (aheadopen(&r->h, file, ZSTR_NOFOLLOW | ZSTR_NOSKIP, NULL, NULL, &e) < 0)
		return -1;
	r->zfailed = 0;
	struct archive *a = archive_read_new();
	archive_read_support_format_tar(a);
	int rc = archive_read_open(a, r, NULL, readcb, NULL) == ARCHIVE_OK ? 0 : -1;
	while (rc == 0) {
		struct archive_entry *en;
		int st = archive_read_next_header(a, &en);
		if (st == ARCHIVE_EOF)
			break;
		const char *path = st < ARCHIVE_WARN ? NULL : archive_entry_pathname(en);
		if (path && (strcmp(path, ".") == 0 || strcmp(path, "./") == 0))
			continue; /* the workspace folder's own mode and times: no patch shows them */
		if (!path || !safepath(path) || strlen(path) >= PATH_MAX || archive_entry_hardlink(en) || *n >= SETMAX) {
			rc = -1;
			break;
		}
		size_t pn = trimlen(path);
		const char *slash = memrchr(path, '/', pn);
		const char *base = slash ? slash + 1 : path;
		const char *kind = snapwhiteout(en, base);
		char *name;
		if (kind && strcmp(kind, "delta") == 0)
			continue;
		if (kind && strcmp(kind, "full") == 0)
			rc = -1, name = NULL; /* the chain began again: everything may differ */
		else if (kind && strcmp(kind, "opaque") == 0)
			name = slash ? xstrndup(path, slash - path) : NULL; /* NULL: the whole target */
		else if (kind)
			name = slash ? xasprintf("%.*s%s", (int)(base - path), path, base + 4) : xstrdup(base + 4);
		else
			name = xstrndup(path, pn);
		if (!name) {
			rc = -1;
			break;
		}
		if (*n == *cap)
			*v = xrealloc(*v, (*cap = *cap ? 2 * *cap : 256) * sizeof **v);
		(*v)[(*n)++] = (struct setname){name, strlen(name), kind || archive_entry_filetype(en) != AE_IFDIR};
	}
	archive_read_free(a);
	aheadclose(r->h, NULL);
	r->h = NULL;
	return rc;
}

struct snapset *snapsetof(const char *rundir, const char *ws, int from, int to, int64_t maxbytes)
{
	struct chainat at, end;
	struct err e = {0};
	if (from < 1 || chainat(rundir, ws, from, &at, &e) < 0)
		return NULL;
	if (chainat(rundir, ws, to, &end, &e) < 0) {
		chainatfree(&at);
		return NULL;
	}
	locale_t old = snappin();
	/* from's layers must be the first of to's: the rest hold every change between them */
	int ok = strcmp(at.sub, end.sub) == 0 && at.n <= end.n;
	for (size_t i = 0; ok && i < at.n; i++)
		ok = strcmp(at.layers[i].name, end.layers[i].name) == 0;
	int64_t packed = ok ? ondisk(end.snapdir, end.layers, at.n, end.n) : 0;
	struct restore r = {.rootfd = -1};
	boundinit(&r.b, "the layers read for a patch", maxbytes, packed, BOUND_WRITEENTRIES);
	struct setname *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = at.n; ok && i < end.n; i++) {
		char *file = pathjoin(end.snapdir, end.layers[i].name);
		ok = setlayer(file, &r, &v, &n, &cap) == 0;
		free(file);
	}
	snapunpin(old);
	chainatfree(&at);
	chainatfree(&end);
	if (!ok) {
		for (size_t i = 0; i < n; i++)
			free(v[i].p);
		free(v);
		return NULL;
	}
	if (n)
		qsort(v, n, sizeof *v, bysetname);
	struct snapset *set = xcalloc(1, sizeof *set);
	set->v = v;
	for (size_t i = 0; i < n; i++) {
		if (set->n && strcmp(v[set->n - 1].p, v[i].p) == 0) {
			v[set->n - 1].sub |= v[i].sub; /* named twice: replaced beneath if either says so */
			free(v[i].p);
			continue;
		}
		v[set->n++] = v[i];
	}
	return set;
}

void snapsetfree(struct snapset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].p);
	free(s->v);
	free(s);
}

int snaprestoreset(const char *rundir, const char *ws, int step, const char *to, int own, int64_t maxbytes,
                   const struct snapset *set, struct err *e)
{
	locale_t old = snappin();
	int rc = restoredir(rundir, ws, step, to, !own, own ? 0 : maxbytes, own, set, e);
	snapunpin(old);
	return rc;
}

void snaprestoreorder(int inorder)
{
	bylayer = inorder;
}

void snapremove(const char *dir)
{
	struct restore r = {.root = geteuid() == 0};
	struct stat st;
	struct err e = {0};
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0) {
		r.dev = st.st_dev;
		rmchildren(&r, fd, dir, &e);
	}
	if (fd >= 0)
		close(fd);
	rmdir(dir);
}

static int unpackrun(const char *file, int64_t maxbytes, char **tmp, char **run, struct err *e)
{
	*run = NULL;
	if (!(*tmp = tmpfolder("nightshift-run", e)))
		return errctx(e, "unpacking %s", file);
	char *abs = realpath(file, NULL); /* read from inside tmp */
	if (!abs)
		return errc(e, ERR_INPUT, "%s:", file);
	struct restore r = {.rootfd = open(*tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC), .root = geteuid() == 0, .plain = 1};
	struct stat st;
	int rc = 0;
	/* Not told: 100 times the archive (a run's layers and logs are compressed already; what
	 * compresses well is its JSON and declared files). */
	boundinit(&r.b, "the unpacked run", maxbytes, stat(abs, &st) == 0 ? boundondisk(&st) : 0, BOUND_WRITEENTRIES);
	if (r.rootfd < 0 || fstat(r.rootfd, &st) < 0)
		rc = errf(e, "open %s:", *tmp);
	if (rc == 0) {
		r.dev = st.st_dev;
		if (applylayer(&r, abs, NULL, NULL, e) < 0 || summissing(&r, e) < 0) {
			char why[sizeof e->msg];
			memcpy(why, e->msg, sizeof why);
			if (r.sumfail)
				rc = errc(e, ERR_VERIFY, "%s: not unpacked, it disagrees with its own SHA256SUMS: %s", file, why);
			else
				rc = errc(e, ERR_INPUT, "%s: not unpacked (a run archive holds only a run directory's files and folders, "
			                "within --max-unpack): %s", file, why);
		}
	}
	free(abs);
	if (r.rootfd >= 0)
		close(r.rootfd);
	free(r.sumroot);
	strvfree(&r.sumpath);
	strvfree(&r.sumhex);
	free(r.sumseen);
	strvfree(&r.early);
	strvfree(&r.earlyhex);
	buffree(&r.sums);
	if (rc < 0)
		return -1;
	char *top = pathjoin(*tmp, "SHA256SUMS");
	if (access(top, F_OK) == 0) {
		*run = xstrdup(*tmp);
	} else {
		DIR *d = opendir(*tmp);
		struct dirent *de;
		int n = 0;
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 && n++ == 0)
				*run = pathjoin(*tmp, de->d_name);
		if (d)
			closedir(d);
		char *sums = *run ? pathjoin(*run, "SHA256SUMS") : NULL;
		if (n != 1 || !sums || access(sums, F_OK) != 0) {
			free(*run);
			*run = NULL;
			rc = errc(e, ERR_INPUT, "%s holds no run directory (no SHA256SUMS at its top or in its only folder)", file);
		}
		free(sums);
	}
	free(top);
	return rc;
}

static int restore(const char *rundir, const char *ws, int step, const char *to, int force, int64_t maxbytes,
                   struct err *e)
{
	struct stat st;
	if (stat(rundir, &st) < 0)
		return errc(e, ERR_INPUT, "%s:", rundir);
	if (!S_ISREG(st.st_mode))
		return restoredir(rundir, ws, step, to, force, maxbytes, 0, NULL, e);
	char *tmp = NULL, *run = NULL;
	int rc = unpackrun(rundir, maxbytes, &tmp, &run, e);
	if (rc == 0)
		rc = restoredir(run, ws, step, to, force, maxbytes, 0, NULL, e);
	if (tmp)
		snapremove(tmp);
	free(tmp);
	free(run);
	return rc;
}

int snapunpack(const char *file, int64_t maxbytes, char **tmp, char **run, struct err *e)
{
	locale_t old = snappin();
	int rc = unpackrun(file, maxbytes, tmp, run, e);
	snapunpin(old);
	if (rc < 0 && *tmp) {
		snapremove(*tmp);
		free(*tmp);
		*tmp = NULL;
	}
	return rc;
}

int snaprestore(const char *rundir, int step, const char *to, int force, struct err *e)
{
	return snaprestorews(rundir, NULL, step, to, force, 0, e);
}

int snaprestorews(const char *rundir, const char *ws, int step, const char *to, int force, int64_t maxbytes,
                  struct err *e)
{
	locale_t old = snappin();
	int rc = restore(rundir, ws, step, to, force, maxbytes, e);
	snapunpin(old);
	return rc;
}

int snaprestoreown(const char *rundir, const char *ws, int step, const char *to, struct err *e)
{
	locale_t old = snappin();
	int rc = restoredir(rundir, ws, step, to, 0, 0, 1, NULL, e);
	snapunpin(old);
	return rc;
}
