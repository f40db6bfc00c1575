/* snapshot: workspace layers as deterministic tar.zst, incremental from a stat cache.
 *
 * A layer is a pax tar: entries sorted by path bytes, uid/gid 0 without names, mtime kept (ns),
 * no atime or ctime, so the same tree gives the same bytes. The first layer holds every entry;
 * a later one holds whiteouts first (deletions, OCI style: ".wh.NAME", and ".wh..wh..opq" in a
 * directory that replaced a directory), then the entries added or changed since the last layer.
 * A whiteout carries the pax attribute SCHILY.xattr.nightshift.whiteout, so a workspace file that
 * happens to be called ".wh.x" is restored as a file, not taken for a deletion.
 *
 * Change is found from the previous scan's stat fields, as git does: size, mtime, ctime, inode
 * and mode. An entry whose ctime was not older than that scan by the filesystem's timestamp
 * granularity ("racy") was hashed when it went into the layer, and is compared by content.
 * With the change feed (snapfeed, watch.c) only the directories it names are read again; the
 * rest of the last scan is taken as it was. */
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include "snapshot.h"
#include "scan.h"
#include "zst.h"

#define OPAQUE ".wh..wh..opq"
#define RACYFINE (50 * 1000000LL)     /* ns: above a coarse kernel tick on a fine-grained filesystem */
#define RACYCOARSE (2 * 1000000000LL) /* ns: whole-second (or FAT's two-second) timestamps */
#define MAXAUTOTHREADS 2 /* threads 0: one worker per CPU up to this (memory: ~10 MiB each) */

enum { IOBUF = 1 << 20 }; /* reads as large as a tar block go to zstd without a copy */

struct snap {
	int rootfd;
	char *dir;
	int level, threads;
	struct strv exclude;
	int64_t max_size;
	struct scanopt opt;
	struct scan prev; /* the scan the last numbered layer was cut from */
	int haveprev;
	struct watch *watch; /* the change feed, when trusted (snapfeed) */
	char *buf;
};

/* One layer being written: libarchive hands its blocks to the zstd writer. */
struct layer {
	struct archive *a;
	struct archive_entry *ent;
	struct zstw *z;
	struct err zerr; /* the zstd writer's error, when the callback failed */
	int zfailed;
};

static int64_t nsof(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int racy(const struct scan *sc, const struct sent *x)
{
	return x->ctime >= sc->start - (sc->finetime ? RACYFINE : RACYCOARSE);
}

static la_ssize_t writecb(struct archive *a, void *ctx, const void *p, size_t n)
{
	struct layer *l = ctx;
	if (zstwrite(l->z, p, n, &l->zerr) < 0) {
		l->zfailed = 1;
		archive_set_error(a, EIO, "%s", l->zerr.msg);
		return -1;
	}
	return (la_ssize_t)n;
}

/* The error of a failed libarchive call on the layer. */
static int layererr(struct layer *l, const char *what, struct err *e)
{
	if (l->zfailed) {
		*e = l->zerr;
		return errctx(e, "%s", what);
	}
	return errf(e, "%s: %s", what, archive_error_string(l->a));
}

static int layeropen(struct layer *l, const char *tmp, int level, int threads, struct err *e)
{
	memset(l, 0, sizeof *l);
	if (zstwopen(&l->z, tmp, level, threads, 0, e) < 0)
		return -1;
	l->a = archive_write_new();
	l->ent = archive_entry_new();
	if (archive_write_set_format_pax(l->a) != ARCHIVE_OK ||
	    archive_write_set_format_option(l->a, "pax", "xattrheader", "SCHILY") != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(l->a, IOBUF) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(l->a, 1) != ARCHIVE_OK ||
	    archive_write_open(l->a, l, NULL, writecb, NULL) != ARCHIVE_OK)
		return layererr(l, "tar", e);
	return 0;
}

static void layerfree(struct layer *l)
{
	if (l->a)
		archive_write_free(l->a);
	archive_entry_free(l->ent);
	zstwfree(l->z);
	memset(l, 0, sizeof *l);
}

/* Write one header; mode carries the type, ns the mtime. */
static int header(struct layer *l, const char *path, uint32_t mode, int64_t size, int64_t mtime,
                  const char *hardlink, const char *symlink, const char *whiteout, struct err *e)
{
	struct archive_entry *en = l->ent;
	archive_entry_clear(en);
	archive_entry_copy_pathname(en, path);
	archive_entry_set_filetype(en, mode & S_IFMT);
	archive_entry_set_perm(en, mode & 07777);
	archive_entry_set_size(en, size);
	/* Before 1970, whole seconds (rounded down): libarchive writes "-1.75" for (-1, 750000000) but
	 * reads it back as -0.25, and loses the sign of (0, -250000000) altogether. */
	int64_t sec = mtime / 1000000000, frac = mtime % 1000000000;
	if (frac < 0)
		sec--;
	archive_entry_set_mtime(en, (time_t)sec, mtime < 0 ? 0 : (long)frac);
	if (hardlink)
		archive_entry_copy_hardlink(en, hardlink);
	if (symlink)
		archive_entry_copy_symlink(en, symlink);
	if (whiteout)
		archive_entry_xattr_add_entry(en, SNAPWHITEOUT, whiteout, strlen(whiteout));
	if (archive_write_header(l->a, en) < ARCHIVE_WARN)
		return layererr(l, path, e);
	return 0;
}

/* Read a symlink's target through a descriptor that cannot leave the workspace. */
static int readtarget(int rootfd, struct sent *x, char *out, size_t cap, struct err *e)
{
	int fd = openbeneath(rootfd, x->path, O_PATH);
	if (fd < 0)
		return errf(e, "open %s:", x->path);
	struct stat st;
	ssize_t n = -1;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) && st.st_ino == x->ino)
		n = readlinkat(fd, "", out, cap - 1);
	else
		errno = ESTALE;
	close(fd);
	if (n < 0)
		return errf(e, "%s changed while the snapshot was taken:", x->path);
	out[n] = 0;
	return (int)n;
}

/* Open a regular file beneath the root and check it is the one scanned; refresh x from it. */
static int openfile(int rootfd, struct sent *x, struct err *e)
{
	int fd = openbeneath(rootfd, x->path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errf(e, "open %s:", x->path);
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != x->ino) {
		close(fd);
		errno = ESTALE;
		return errf(e, "%s changed while the snapshot was taken:", x->path);
	}
	x->mode = st.st_mode;
	x->size = st.st_size;
	x->mtime = nsof(st.st_mtim);
	x->ctime = nsof(st.st_ctim);
	return fd;
}

/* SHA-256 of what x holds now (file data or link target) into out. */
static int hashnow(struct snap *s, struct sent *x, unsigned char out[32], struct err *e)
{
	unsigned int len = 0;
	if (S_ISLNK(x->mode)) {
		int n = readtarget(s->rootfd, x, s->buf, IOBUF, e);
		if (n < 0)
			return -1;
		EVP_Digest(s->buf, n, out, &len, EVP_sha256(), NULL);
		return 0;
	}
	struct sent y = *x;
	int fd = openfile(s->rootfd, &y, e);
	if (fd < 0)
		return -1;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	ssize_t n;
	while ((n = read(fd, s->buf, IOBUF)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			EVP_DigestUpdate(md, s->buf, n);
	int rc = n < 0 ? errf(e, "read %s:", x->path) : 0;
	EVP_DigestFinal_ex(md, out, &len);
	EVP_MD_CTX_free(md);
	close(fd);
	return rc;
}

/* Write entry i of sc (its data too); hash what went in when the entry is racy and kept. */
static int putentry(struct snap *s, struct layer *l, struct scan *sc, size_t i, int keep, struct err *e)
{
	struct sent *x = &sc->v[i];
	if (S_ISDIR(x->mode))
		return header(l, x->path, x->mode, 0, x->mtime, NULL, NULL, NULL, e);
	if (S_ISLNK(x->mode)) {
		int n = readtarget(s->rootfd, x, s->buf, IOBUF, e);
		if (n < 0 || header(l, x->path, x->mode, 0, x->mtime, NULL, s->buf, NULL, e) < 0)
			return -1;
		if (keep && racy(sc, x)) {
			unsigned int len = 0;
			EVP_Digest(s->buf, n, x->hash, &len, EVP_sha256(), NULL);
			x->hashed = 1;
		}
		return 0;
	}
	if (x->link >= 0 && x->link != (int32_t)i) {
		const struct sent *first = &sc->v[x->link];
		if (header(l, x->path, x->mode, 0, x->mtime, first->path, NULL, NULL, e) < 0)
			return -1;
		x->hashed = first->hashed;
		memcpy(x->hash, first->hash, sizeof x->hash);
		return 0;
	}
	int fd = openfile(s->rootfd, x, e);
	if (fd < 0)
		return -1;
	if (header(l, x->path, x->mode, x->size, x->mtime, NULL, NULL, NULL, e) < 0) {
		close(fd);
		return -1;
	}
	int hash = keep && racy(sc, x);
	EVP_MD_CTX *md = NULL;
	if (hash) {
		md = EVP_MD_CTX_new();
		EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	}
	int rc = 0;
	for (int64_t left = x->size; left > 0 && rc == 0;) {
		ssize_t n = read(fd, s->buf, left < IOBUF ? (size_t)left : IOBUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = errf(e, "read %s:", x->path);
			break;
		}
		if (n == 0) {
			/* It shrank under us: pad to the size in the header, and make the next scan see a change. */
			n = left < IOBUF ? left : IOBUF;
			memset(s->buf, 0, n);
			x->mtime = INT64_MIN;
			hash = 0;
		}
		if (archive_write_data(l->a, s->buf, n) != n)
			rc = layererr(l, x->path, e);
		if (hash)
			EVP_DigestUpdate(md, s->buf, n);
		left -= n;
	}
	close(fd);
	if (md) {
		unsigned int len = 0;
		EVP_DigestFinal_ex(md, x->hash, &len);
		EVP_MD_CTX_free(md);
		x->hashed = hash;
	}
	return rc;
}

/* What goes into an incremental layer: emit[i] for entries of nw, and whiteouts, each a kind
 * ('f' remove the file or tree, 'o' empty the directory) followed by its path. */
struct plan {
	uint8_t *emit;
	struct strv wh;
	size_t added, changed, deleted;
};

static void planfree(struct plan *p)
{
	free(p->emit);
	strvfree(&p->wh);
}

static int samestat(const struct sent *a, const struct sent *b)
{
	return a->mode == b->mode && a->size == b->size && a->mtime == b->mtime && a->ctime == b->ctime &&
	       a->ino == b->ino;
}

/* The whiteout path for a deleted path. */
static void addwhiteout(struct strv *wh, const char *path)
{
	const char *slash = strrchr(path, '/');
	char *w = slash ? xasprintf("f%.*s/.wh.%s", (int)(slash - path), path, slash + 1) : xasprintf("f.wh.%s", path);
	strvadd(wh, w);
	free(w);
}

/* Order whiteouts by path, after the kind. */
static int bywhpath(const void *a, const void *b)
{
	return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

/* Compare the new scan with the previous one. A directory replaced by another (new inode) gets an
 * opaque whiteout and is written whole; a directory replaced by a non-directory, or deleted, gets
 * one whiteout, not one per entry under it. */
static int plan(struct snap *s, struct scan *nw, struct plan *p, struct err *e)
{
	const struct scan *old = &s->prev;
	size_t n = nw->n;
	memset(p, 0, sizeof *p);
	p->emit = xcalloc(n + 1, 1);
	uint8_t *flag = xcalloc(n + 1, 1); /* 1: a directory that replaced one; 2: under such a one */
	uint8_t *group = xcalloc(n + 1, 1);
	size_t o = 0;
	int rc = 0, anyflag = 0;
	for (size_t j = 0; j <= n && rc == 0; j++) {
		/* Old entries before this path (every one left at the end) are gone. */
		while (o < old->n && (j == n || strcmp(old->v[o].path, nw->v[j].path) < 0)) {
			const char *q = old->v[o++].path, *slash = strrchr(q, '/');
			p->deleted++;
			ssize_t pj = slash ? scanfind(nw, q, slash - q) : -1;
			if (!slash || (pj >= 0 && S_ISDIR(nw->v[pj].mode) && !flag[pj]))
				addwhiteout(&p->wh, q);
		}
		if (j == n)
			break;
		struct sent *x = &nw->v[j];
		/* A parent sorts before its children: until a directory is flagged, none is. */
		const char *slash = anyflag ? strrchr(x->path, '/') : NULL;
		ssize_t pj = slash ? scanfind(nw, x->path, slash - x->path) : -1;
		if (pj >= 0 && flag[pj])
			flag[j] = 2;
		const struct sent *y = o < old->n && strcmp(old->v[o].path, x->path) == 0 ? &old->v[o++] : NULL;
		if (!y) {
			p->emit[j] = 1;
			p->added++;
			continue;
		}
		int typechange = (x->mode & S_IFMT) != (y->mode & S_IFMT);
		if (typechange && S_ISDIR(y->mode) && !flag[j])
			addwhiteout(&p->wh, x->path);
		if (!typechange && S_ISDIR(x->mode) && x->ino != y->ino && !flag[j]) {
			flag[j] = 1;
			anyflag = 1;
			char *w = xasprintf("o%s/" OPAQUE, x->path);
			strvadd(&p->wh, w);
			free(w);
		}
		int same = !flag[j] && !typechange && samestat(x, y);
		if (same && !S_ISDIR(x->mode) && racy(old, y)) {
			/* Changed within the timestamp granularity of the last scan: compare by content. */
			unsigned char h[32];
			if (!y->hashed)
				same = 0;
			else if (hashnow(s, x, h, e) < 0)
				rc = -1;
			else
				same = memcmp(h, y->hash, 32) == 0;
		}
		if (same) {
			x->hashed = y->hashed;
			memcpy(x->hash, y->hash, 32);
		} else {
			p->emit[j] = 1;
			p->changed++;
		}
	}
	/* The paths of one inode go in together, so a hard link always finds its target. */
	for (size_t j = 0; j < n; j++)
		if (nw->v[j].link >= 0 && p->emit[j])
			group[nw->v[j].link] = 1;
	for (size_t j = 0; j < n; j++)
		if (nw->v[j].link >= 0 && group[nw->v[j].link] && !p->emit[j]) {
			p->emit[j] = 1;
			p->changed++;
		}
	if (p->wh.n)
		qsort(p->wh.v, p->wh.n, sizeof *p->wh.v, bywhpath);
	free(flag);
	free(group);
	return rc;
}

static locale_t utf8;
static pthread_once_t utf8once = PTHREAD_ONCE_INIT;

static void makeutf8(void)
{
	utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* libarchive converts names with the thread's locale: pinned to C.UTF-8 while it works, a layer is
 * the same bytes whatever the process locale, a name in valid UTF-8 is a plain pax path, and only
 * other bytes need hdrcharset=BINARY. */
locale_t snappin(void)
{
	pthread_once(&utf8once, makeutf8);
	return utf8 ? uselocale(utf8) : (locale_t)0;
}

void snapunpin(locale_t old)
{
	if (old)
		uselocale(old);
}

/* No set-id file survives a step: a regular file that has a set-uid or set-gid bit it did not have
 * at the last layer loses it here, through a descriptor opened beneath the root (the seccomp
 * filter refuses such modes; this catches what got past it, on any backend). The first layer
 * leaves the workspace as the user gave it. The paths go in info->setid. */
static int stripsetid(struct snap *s, struct scan *nw, struct snapinfo *info, struct err *e)
{
	for (size_t i = 0; s->haveprev && i < nw->n; i++) {
		struct sent *x = &nw->v[i];
		if (!S_ISREG(x->mode) || !(x->mode & (S_ISUID | S_ISGID)))
			continue;
		ssize_t j = scanfind(&s->prev, x->path, strlen(x->path));
		const struct sent *y = j >= 0 ? &s->prev.v[j] : NULL;
		if (y && y->ino == x->ino && (y->mode & (S_ISUID | S_ISGID)) == (x->mode & (S_ISUID | S_ISGID)))
			continue;
		int fd = openbeneath(s->rootfd, x->path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0 || st.st_ino != x->ino || !S_ISREG(st.st_mode) ||
		    fchmod(fd, st.st_mode & 01777) < 0 || fstat(fd, &st) < 0) {
			int err = errno;
			if (fd >= 0)
				close(fd);
			errno = err;
			return errf(e, "remove the set-id bits of %s:", x->path);
		}
		close(fd);
		x->mode = st.st_mode;
		x->ctime = nsof(st.st_ctim);
		x->hashed = 0;
		strvadd(&info->setid, x->path);
	}
	return 0;
}

static int take(struct snap *s, const char *name, int full, int keep, struct snapinfo *info, struct err *e)
{
	memset(info, 0, sizeof *info);
	if (!*name || strchr(name, '/') || name[0] == '.')
		return errc(e, 2, "snapshot: bad layer name '%s'", name);
	/* A numbered layer with the change feed reads again only what it reports since the last;
	 * "end" (not kept) scans everything and leaves the feed's news for the next. */
	struct scan nw;
	struct scanopt opt = s->opt;
	int src;
	if (s->watch && watchbroken(s->watch)) { /* no use adding watches on every scan again */
		watchclose(s->watch);
		s->watch = NULL;
	}
	opt.watch = keep ? s->watch : NULL;
	if (opt.watch && s->haveprev && watchread(opt.watch, 0) == 0) {
		struct strv dirty = {0};
		watchdirty(opt.watch, &dirty);
		src = scanagain(&nw, s->rootfd, &opt, &s->prev, &dirty, e);
		strvfree(&dirty);
		info->feed = 1;
	} else {
		if (opt.watch) {
			watchread(opt.watch, 0);
			watchreset(opt.watch);
		}
		src = scanrun(&nw, s->rootfd, &opt, e);
	}
	if (src < 0) {
		if (opt.watch)
			watchlose(opt.watch, 0);
		return errctx(e, "snapshot %s", name);
	}
	if (s->max_size > 0 && nw.bytes > s->max_size) {
		if (opt.watch)
			watchlose(opt.watch, 0);
		scanfree(&nw);
		return errf(e, "snapshot %s: workspace is %lld bytes, over snapshot.max_size %lld", name,
		            (long long)nw.bytes, (long long)s->max_size);
	}
	if (stripsetid(s, &nw, info, e) < 0) {
		if (opt.watch)
			watchlose(opt.watch, 0);
		scanfree(&nw);
		return errctx(e, "snapshot %s", name);
	}
	struct plan p = {0};
	if (!full && plan(s, &nw, &p, e) < 0) {
		if (opt.watch)
			watchlose(opt.watch, 0);
		planfree(&p);
		scanfree(&nw);
		return errctx(e, "snapshot %s", name);
	}
	char *path = xasprintf("%s/%s.tar.zst", s->dir, name);
	char *tmp = xasprintf("%s/.%s.tar.zst.tmp", s->dir, name);
	struct layer l;
	int rc = layeropen(&l, tmp, s->level, s->threads, e);
	for (size_t i = 0; rc == 0 && i < p.wh.n; i++)
		rc = header(&l, p.wh.v[i] + 1, S_IFREG, 0, 0, NULL, NULL, p.wh.v[i][0] == 'o' ? "opaque" : "file", e);
	for (size_t i = 0, put = 0; rc == 0 && i < nw.n; i++)
		if (full || p.emit[i]) {
			rc = putentry(s, &l, &nw, i, keep, e);
			/* Each file read is an open in the feed's queue: drop them before it overflows. */
			if (opt.watch && ++put % 4096 == 0)
				watchread(opt.watch, 1);
		}
	if (rc == 0 && archive_write_close(l.a) != ARCHIVE_OK)
		rc = layererr(&l, "tar", e);
	if (rc == 0) {
		struct zstw *z = l.z;
		l.z = NULL;
		rc = zstwclose(z, info->sha256, &info->bytes, e);
	}
	layerfree(&l);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = errf(e, "rename %s:", path);
	if (rc < 0) {
		unlink(tmp);
		errctx(e, "snapshot %s", name);
	} else {
		snprintf(info->path, sizeof info->path, "%s", path);
		info->full = full;
		info->added = full ? nw.n : p.added;
		info->changed = p.changed;
		info->deleted = p.deleted;
		info->entries = nw.n;
		info->treebytes = nw.bytes;
		for (size_t i = 0; i < nw.skipped.n; i++)
			strvadd(&info->skipped, nw.skipped.v[i]);
	}
	free(path);
	free(tmp);
	planfree(&p);
	if (rc == 0 && keep) {
		scanfree(&s->prev);
		s->prev = nw;
		s->haveprev = 1;
		/* What happened meanwhile counts next time, but for the opens of the files just read. */
		if (opt.watch)
			watchread(opt.watch, 1);
	} else {
		if (opt.watch)
			watchlose(opt.watch, 0);
		scanfree(&nw);
	}
	return rc;
}

int snapopen(struct snap **sp, const char *workspace, const struct snapconf *c, const char *dir, struct err *e)
{
	*sp = NULL;
	int level = c ? c->level : 3, threads = c ? c->threads : 0;
	if (level < 1 || level > 19)
		return errc(e, 2, "snapshot.level %d: want 1 to 19", level);
	if (threads < 0)
		return errc(e, 2, "snapshot.threads %d: want 0 (one per CPU) or more", threads);
	int rootfd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return errc(e, 2, "workspace %s:", workspace);
	if (mkdirs(dir, 0755, e) < 0) {
		close(rootfd);
		return -1;
	}
	struct snap *s = xcalloc(1, sizeof *s);
	s->rootfd = rootfd;
	s->dir = xstrdup(dir);
	s->level = level;
	if (threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		threads = n < 1 ? 1 : n > MAXAUTOTHREADS ? MAXAUTOTHREADS : (int)n;
	}
	s->threads = threads;
	s->max_size = c ? c->max_size : 0;
	for (size_t i = 0; c && i < c->exclude.n; i++)
		strvadd(&s->exclude, c->exclude.v[i]);
	s->opt.exclude = &s->exclude;
	/* The run's own directory (dir's parent when dir is RUN/snapshots) is never part of the workspace. */
	char *base = strrchr(dir, '/');
	char *own = base && strcmp(base + 1, "snapshots") == 0 ? dirname_dup(dir) : xstrdup(dir);
	struct stat st;
	if (stat(own, &st) == 0) {
		s->opt.haveskip = 1;
		s->opt.skipdev = st.st_dev;
		s->opt.skipino = st.st_ino;
	}
	free(own);
	s->buf = xmalloc(IOBUF);
	/* A first scan, before anything runs: an unreadable workspace or one over max_size stops here. */
	struct scan sc;
	if (scanrun(&sc, rootfd, &s->opt, e) < 0) {
		errctx(e, "snapshot of workspace %s", workspace);
		e->code = 2;
		snapclose(s);
		return -1;
	}
	int64_t bytes = sc.bytes;
	scanfree(&sc);
	if (s->max_size > 0 && bytes > s->max_size) {
		snapclose(s);
		return errc(e, 2, "workspace %s is %lld bytes, over snapshot.max_size %lld", workspace, (long long)bytes,
		            (long long)c->max_size);
	}
	*sp = s;
	return 0;
}

int snaptake(struct snap *s, const char *name, struct snapinfo *info, struct err *e)
{
	locale_t old = snappin();
	int rc = take(s, name, !s->haveprev, 1, info, e);
	snapunpin(old);
	return rc;
}

int snapfull(struct snap *s, const char *name, struct snapinfo *info, struct err *e)
{
	locale_t old = snappin();
	int rc = take(s, name, 1, 0, info, e);
	snapunpin(old);
	return rc;
}

int snapfeed(struct snap *s)
{
	if (!s->watch)
		s->watch = watchopen(s->rootfd);
	return s->watch != NULL;
}

void snapexclude(struct snap *s, const char *rel)
{
	char *all = xasprintf("%s/**", rel);
	strvadd(&s->exclude, rel);
	strvadd(&s->exclude, all);
	free(all);
}

void snapclose(struct snap *s)
{
	if (!s)
		return;
	watchclose(s->watch);
	close(s->rootfd);
	scanfree(&s->prev);
	strvfree(&s->exclude);
	free(s->dir);
	free(s->buf);
	free(s);
}

void snapinfofree(struct snapinfo *i)
{
	strvfree(&i->skipped);
	strvfree(&i->setid);
}

const char *snapwhiteout(struct archive_entry *en, const char *base)
{
	if (strncmp(base, ".wh.", 4) != 0)
		return NULL;
	const char *name;
	const void *v;
	size_t n;
	archive_entry_xattr_reset(en);
	while (archive_entry_xattr_next(en, &name, &v, &n) == ARCHIVE_OK) {
		if (strcmp(name, SNAPWHITEOUT) != 0)
			continue;
		if (n == 4 && memcmp(v, "file", 4) == 0)
			return "file";
		if (n == 6 && memcmp(v, "opaque", 6) == 0)
			return "opaque";
	}
	return NULL;
}
