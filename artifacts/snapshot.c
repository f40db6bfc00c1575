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
 * granularity ("racy") was hashed when it went into the layer, and is compared by content. */
#include <dirent.h>
#include <errno.h>
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

#define WHXATTR "nightshift.whiteout" /* value "file" (remove NAME) or "opaque" (empty the directory) */
#define OPAQUE ".wh..wh..opq"
#define RACYFINE (50 * 1000000LL)     /* ns: above a coarse kernel tick on a fine-grained filesystem */
#define RACYCOARSE (2 * 1000000000LL) /* ns: whole-second (or FAT's two-second) timestamps */
#define MAXAUTOTHREADS 4

enum { IOBUF = 1 << 18 };

struct snap {
	int rootfd;
	char *dir;
	int level, threads;
	struct strv exclude;
	int64_t max_size;
	struct scanopt opt;
	struct scan prev; /* the scan the last numbered layer was cut from */
	int haveprev;
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
	    archive_write_set_bytes_per_block(l->a, 65536) != ARCHIVE_OK ||
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
	/* libarchive's pax writer wants the fraction with the sign of the seconds */
	archive_entry_set_mtime(en, (time_t)(mtime / 1000000000), (long)llabs(mtime % 1000000000));
	if (hardlink)
		archive_entry_copy_hardlink(en, hardlink);
	if (symlink)
		archive_entry_copy_symlink(en, symlink);
	if (whiteout)
		archive_entry_xattr_add_entry(en, WHXATTR, whiteout, strlen(whiteout));
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

static int take(struct snap *s, const char *name, int full, int keep, struct snapinfo *info, struct err *e)
{
	memset(info, 0, sizeof *info);
	if (!*name || strchr(name, '/') || name[0] == '.')
		return errc(e, 2, "snapshot: bad layer name '%s'", name);
	struct scan nw;
	if (scanrun(&nw, s->rootfd, &s->opt, e) < 0)
		return errctx(e, "snapshot %s", name);
	if (s->max_size > 0 && nw.bytes > s->max_size) {
		scanfree(&nw);
		return errf(e, "snapshot %s: workspace is %lld bytes, over snapshot.max_size %lld", name,
		            (long long)nw.bytes, (long long)s->max_size);
	}
	struct plan p = {0};
	if (!full && plan(s, &nw, &p, e) < 0) {
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
	for (size_t i = 0; rc == 0 && i < nw.n; i++)
		if (full || p.emit[i])
			rc = putentry(s, &l, &nw, i, keep, e);
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
	} else {
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
	return take(s, name, !s->haveprev, 1, info, e);
}

int snapfull(struct snap *s, const char *name, struct snapinfo *info, struct err *e)
{
	return take(s, name, 1, 0, info, e);
}

void snapclose(struct snap *s)
{
	if (!s)
		return;
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
}

/* Restore. Layers are applied in order into the target directory by libarchive with its secure
 * extract flags, the process working in the target meanwhile; whiteouts are applied here through
 * descriptors that never follow a symlink or leave the target. */

#define EXTRACTFLAGS                                                                                    \
	(ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_SYMLINKS |                 \
	 ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS)

struct restore {
	int rootfd;   /* the target */
	dev_t dev;    /* its filesystem: removal never crosses into another */
	int root;     /* running as root: permissions never stand in the way */
	struct zstr *z;
	struct err zerr;
	int zfailed;
	char *buf;
};

static la_ssize_t readcb(struct archive *a, void *ctx, const void **p)
{
	struct restore *r = ctx;
	ssize_t n = zstread(r->z, r->buf, IOBUF, &r->zerr);
	if (n < 0) {
		r->zfailed = 1;
		archive_set_error(a, EIO, "%s", r->zerr.msg);
		return -1;
	}
	*p = r->buf;
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

static int rmat(struct restore *r, int dfd, const char *name, const char *shown, struct err *e);

/* Remove everything inside directory fd. */
static int rmchildren(struct restore *r, int fd, const char *shown, struct err *e)
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
		rc = rmat(r, fd, names.v[i], shown, e);
	closeup(fd, old);
	strvfree(&names);
	return rc;
}

/* Remove name (a whole tree if a directory) from directory dfd, on the target's filesystem only. */
static int rmat(struct restore *r, int dfd, const char *name, const char *shown, struct err *e)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : errf(e, "stat %s/%s:", shown, name);
	if (S_ISDIR(st.st_mode)) {
		if (st.st_dev != r->dev)
			return errf(e, "%s/%s is a mount point; refusing to remove it", shown, name);
		int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return errf(e, "open %s/%s:", shown, name);
		int rc = rmchildren(r, fd, shown, e);
		close(fd);
		if (rc < 0)
			return -1;
	}
	if (unlinkat(dfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
		return errf(e, "remove %s/%s:", shown, name);
	return 0;
}

/* The kind of whiteout an entry is ("file" or "opaque"), or NULL for an ordinary entry. */
static const char *whiteoutkind(struct archive_entry *en, const char *base)
{
	if (strncmp(base, ".wh.", 4) != 0)
		return NULL;
	const char *name;
	const void *v;
	size_t n;
	archive_entry_xattr_reset(en);
	while (archive_entry_xattr_next(en, &name, &v, &n) == ARCHIVE_OK) {
		if (strcmp(name, WHXATTR) != 0)
			continue;
		if (n == 4 && memcmp(v, "file", 4) == 0)
			return "file";
		if (n == 6 && memcmp(v, "opaque", 6) == 0)
			return "opaque";
	}
	return NULL;
}

/* Apply a whiteout at path: remove what it names, or empty its directory. */
static int whiteout(struct restore *r, const char *path, const char *base, const char *kind, struct err *e)
{
	char *parent = base > path ? xstrndup(path, base - 1 - path) : xstrdup(".");
	int rc = 0;
	int fd = openbeneath(r->rootfd, parent, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		if (errno != ENOENT)
			rc = errf(e, "whiteout %s: %s is not a directory inside the target:", path, parent);
	} else if (strcmp(kind, "opaque") == 0) {
		rc = rmchildren(r, fd, parent, e);
	} else {
		const char *name = base + 4;
		if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			rc = errf(e, "whiteout %s names no entry", path);
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

/* Check an entry before libarchive writes it: only files, directories, symlinks and hard links to
 * files already inside; set-id bits dropped (the tar says uid 0, and a restore may run as root). */
static int vet(struct restore *r, struct archive_entry *en, const char *path, struct err *e)
{
	const char *hl = archive_entry_hardlink(en);
	if (hl) {
		if (!safepath(hl))
			return errf(e, "%s: hard link to %s, outside the target", path, hl);
		int fd = openbeneath(r->rootfd, hl, O_PATH);
		struct stat st;
		int ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
		if (fd >= 0)
			close(fd);
		if (!ok)
			return errf(e, "%s: hard link to %s, which is not a file inside the target", path, hl);
		return 0;
	}
	mode_t type = archive_entry_filetype(en);
	if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
		return errf(e, "%s: not a file, directory or symlink (type %o)", path, (unsigned)type);
	archive_entry_set_perm(en, archive_entry_perm(en) & ~(mode_t)(S_ISUID | S_ISGID));
	if (type == AE_IFDIR && !r->root) {
		/* An existing directory may be read-only from a lower layer: open it up until the
		 * deferred fixups give it its mode at the end of the layer. */
		int fd = openbeneath(r->rootfd, path, O_RDONLY | O_DIRECTORY);
		if (fd >= 0) {
			mode_t old;
			openup(r, fd, &old);
			close(fd);
		}
	}
	return 0;
}

/* The directories a layer touches: those it holds, and the parents of its entries that it does
 * not hold (writing an entry changes its parent's mtime); all get their times set last. */
struct dslot {
	char *path;
	int inlayer;
	struct timespec t[2];
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

static void dsfree(struct dirset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->v[i].path);
	free(s->v);
}

/* Before an entry is written: note a directory it is, with its mtime, or keep its parent's times. */
static void dsnote(struct restore *r, struct dirset *s, const char *path, struct archive_entry *en)
{
	size_t n = strlen(path);
	while (n && path[n - 1] == '/')
		n--;
	int made;
	if (archive_entry_filetype(en) == AE_IFDIR && !archive_entry_hardlink(en)) {
		struct dslot *d = dsget(s, path, n, &made);
		d->inlayer = 1;
		d->t[0] = (struct timespec){0, UTIME_OMIT};
		d->t[1] = (struct timespec){archive_entry_mtime(en), archive_entry_mtime_nsec(en)};
	}
	const char *slash = memrchr(path, '/', n);
	if (!slash)
		return; /* the target itself: its times are not part of a snapshot */
	struct dslot *d = dsget(s, path, slash - path, &made);
	if (!made)
		return;
	int fd = openbeneath(r->rootfd, d->path, O_RDONLY | O_DIRECTORY);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0) {
		d->t[0] = st.st_atim;
		d->t[1] = st.st_mtim;
	} else {
		d->t[0] = d->t[1] = (struct timespec){0, UTIME_OMIT}; /* not there yet: libarchive makes it */
	}
	if (fd >= 0)
		close(fd);
}

/* After the layer: its directories get their mtimes (after everything written into them), and
 * the parents it did not hold get their times back. */
static void dsrestore(struct restore *r, struct dirset *s)
{
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->v[i].path)
			continue;
		int fd = openbeneath(r->rootfd, s->v[i].path, O_RDONLY | O_DIRECTORY);
		if (fd >= 0) {
			futimens(fd, s->v[i].t);
			close(fd);
		}
	}
}

/* Apply one layer file; want is its digest from SHA256SUMS, label its name there. */
static int applylayer(struct restore *r, const char *file, const char *label, const char *want, struct err *e)
{
	if (zstropen(&r->z, file, e) < 0)
		return errctx(e, "layer %s", label);
	r->zfailed = 0;
	struct dirset ds = {0};
	struct archive *a = archive_read_new();
	struct archive *w = archive_write_disk_new();
	archive_read_support_format_tar(a);
	archive_write_disk_set_options(w, EXTRACTFLAGS);
	int rc = 0;
	if (archive_read_open(a, r, NULL, readcb, NULL) != ARCHIVE_OK)
		rc = errf(e, "%s", r->zfailed ? r->zerr.msg : archive_error_string(a));
	while (rc == 0) {
		struct archive_entry *en;
		int st = archive_read_next_header(a, &en);
		if (st == ARCHIVE_EOF)
			break;
		if (st < ARCHIVE_WARN) {
			rc = errf(e, "%s", r->zfailed ? r->zerr.msg : archive_error_string(a));
			break;
		}
		const char *path = archive_entry_pathname(en);
		if (!safepath(path)) {
			rc = errf(e, "entry %s: absolute or with '..'; refusing it", path ? path : "(none)");
			break;
		}
		const char *slash = strrchr(path, '/');
		const char *base = slash ? slash + 1 : path;
		const char *kind = whiteoutkind(en, base);
		if (kind) {
			rc = whiteout(r, path, base, kind, e);
			continue;
		}
		if ((rc = vet(r, en, path, e)) < 0)
			break;
		dsnote(r, &ds, path, en);
		if (archive_write_header(w, en) < ARCHIVE_WARN) {
			rc = errf(e, "%s", archive_error_string(w));
			break;
		}
		const void *p;
		size_t n;
		la_int64_t off;
		while (archive_entry_size(en) > 0 && (st = archive_read_data_block(a, &p, &n, &off)) == ARCHIVE_OK)
			if (archive_write_data_block(w, p, n, off) < ARCHIVE_WARN) {
				st = ARCHIVE_FATAL;
				rc = errf(e, "%s: %s", path, archive_error_string(w));
				break;
			}
		if (rc == 0 && archive_entry_size(en) > 0 && st != ARCHIVE_EOF)
			rc = errf(e, "%s: %s", path, r->zfailed ? r->zerr.msg : archive_error_string(a));
		if (rc == 0 && archive_write_finish_entry(w) < ARCHIVE_WARN)
			rc = errf(e, "%s: %s", path, archive_error_string(w));
	}
	/* Read to the end of the file, so the digest covers every byte of it. */
	ssize_t n;
	while (rc == 0 && (n = zstread(r->z, r->buf, IOBUF, e)) != 0)
		if (n < 0)
			rc = -1;
	if (rc == 0) {
		char got[65];
		zstrdigest(r->z, got, NULL);
		if (strcmp(got, want) != 0)
			rc = errc(e, 4, "digest mismatch: SHA256SUMS has %s, the file has %s", want, got);
	}
	if (archive_write_close(w) != ARCHIVE_OK && rc == 0)
		rc = errf(e, "%s", archive_error_string(w));
	dsrestore(r, &ds);
	dsfree(&ds);
	archive_write_free(w);
	archive_read_free(a);
	zstrfree(r->z);
	r->z = NULL;
	return rc < 0 ? errctx(e, "layer %s", label) : 0;
}

/* The digest SHA256SUMS gives for name (a path relative to the run), or NULL. */
static const char *sumfor(const struct buf *sums, const char *name, char out[65])
{
	size_t nl = strlen(name);
	for (const char *l = sums->data; l && *l;) {
		const char *end = strchrnul(l, '\n');
		if (end - l > 66 && (l[64] == ' ') && (l[65] == ' ' || l[65] == '*')) {
			const char *p = l + 66;
			if (strncmp(p, "./", 2) == 0)
				p += 2;
			if ((size_t)(end - p) == nl && memcmp(p, name, nl) == 0) {
				for (int i = 0; i < 64; i++)
					out[i] = (char)((l[i] >= 'A' && l[i] <= 'F') ? l[i] + 32 : l[i]);
				out[64] = 0;
				return strspn(out, "0123456789abcdef") == 64 ? out : NULL;
			}
		}
		l = *end ? end + 1 : end;
	}
	return NULL;
}

struct layername {
	long long step;
	char *name;
};

static int bystep(const void *a, const void *b)
{
	const struct layername *x = a, *y = b;
	return x->step < y->step ? -1 : x->step > y->step;
}

/* The layers to apply for step (0 = end), in order. */
static int listlayers(const char *snapdir, int step, struct layername **out, size_t *nout, struct err *e)
{
	*out = NULL;
	*nout = 0;
	DIR *d = opendir(snapdir);
	if (!d)
		return errc(e, 2, "%s:", snapdir);
	struct layername *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *nm = de->d_name;
		size_t digits = strspn(nm, "0123456789");
		long long k;
		if (step == 0 && strcmp(nm, "end.tar.zst") == 0)
			k = 0;
		else if (step > 0 && digits >= 4 && digits <= 9 && strcmp(nm + digits, ".tar.zst") == 0)
			k = atoll(nm);
		else
			continue;
		if (step > 0 && (k < 1 || k > step))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			v = xrealloc(v, cap * sizeof *v);
		}
		v[n++] = (struct layername){k, xstrdup(nm)};
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, bystep);
	for (size_t i = 1; i < n && rc == 0; i++)
		if (v[i].step == v[i - 1].step)
			rc = errc(e, 2, "%s: both %s and %s are step %lld", snapdir, v[i - 1].name, v[i].name, v[i].step);
	if (rc == 0 && n == 0)
		rc = step ? errc(e, 2, "%s: no layer for step %d or before", snapdir, step)
		          : errc(e, 2, "%s: no end.tar.zst (the run did not finish?)", snapdir);
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

/* Make the target an empty directory (emptying it only with force), open in *fd. */
static int preparetarget(struct restore *r, const char *to, const char *rundir, int force, struct err *e)
{
	struct stat st;
	if (lstat(to, &st) < 0) {
		if (errno != ENOENT)
			return errc(e, 2, "%s:", to);
		if (mkdirs(to, 0755, e) < 0)
			return -1;
	} else if (!S_ISDIR(st.st_mode)) {
		return errc(e, 2, "%s is not a directory", to);
	}
	char *rto = realpath(to, NULL), *rrun = realpath(rundir, NULL);
	int rc = 0;
	if (!rto || !rrun)
		rc = errc(e, 2, "%s:", !rto ? to : rundir);
	else if (strcmp(rto, "/") == 0)
		rc = errc(e, 2, "refusing to restore into /");
	else if (strncmp(rrun, rto, strlen(rto)) == 0 && (rrun[strlen(rto)] == '/' || !rrun[strlen(rto)]))
		rc = errc(e, 2, "%s holds the run directory %s; restore somewhere else", to, rundir);
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
		return errc(e, 2, "%s is not empty (--force replaces what it holds)", to);
	return empty ? 0 : rmchildren(r, r->rootfd, to, e);
}

int snaprestore(const char *rundir, int step, const char *to, int force, struct err *e)
{
	if (step < 0)
		return errc(e, 2, "step %d: want 1 or more, or end", step);
	/* Absolute, since the layers are read from inside the target. */
	char *run = realpath(rundir, NULL);
	if (!run)
		return errc(e, 2, "%s:", rundir);
	struct buf sums = {0};
	char *sumpath = pathjoin(run, "SHA256SUMS");
	char *snapdir = pathjoin(run, "snapshots");
	struct layername *layers = NULL;
	size_t n = 0;
	char (*want)[65] = NULL;
	struct restore r = {.rootfd = -1, .root = geteuid() == 0};
	int cwd = -1, rc = 0;
	if (readfile(sumpath, &sums, e) < 0 || listlayers(snapdir, step, &layers, &n, e) < 0) {
		rc = -1;
		goto out;
	}
	/* Every layer must be listed before anything is written. */
	want = xcalloc(n, sizeof *want);
	for (size_t i = 0; i < n && rc == 0; i++) {
		char *rel = xasprintf("snapshots/%s", layers[i].name);
		if (!sumfor(&sums, rel, want[i]))
			rc = errc(e, 4, "layer %s is not listed in %s", rel, sumpath);
		free(rel);
	}
	if (rc < 0 || preparetarget(&r, to, run, force, e) < 0) {
		rc = -1;
		goto out;
	}
	cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || fchdir(r.rootfd) < 0) {
		rc = errf(e, "enter %s:", to);
		goto out;
	}
	r.buf = xmalloc(IOBUF);
	for (size_t i = 0; i < n && rc == 0; i++) {
		char *file = pathjoin(snapdir, layers[i].name);
		char *rel = xasprintf("snapshots/%s", layers[i].name);
		rc = applylayer(&r, file, rel, want[i], e);
		free(file);
		free(rel);
	}
	if (fchdir(cwd) < 0 && rc == 0)
		rc = errf(e, "return to the working directory:");
out:
	if (cwd >= 0)
		close(cwd);
	if (r.rootfd >= 0)
		close(r.rootfd);
	for (size_t i = 0; i < n; i++)
		free(layers[i].name);
	free(layers);
	free(want);
	free(r.buf);
	free(sumpath);
	free(snapdir);
	free(run);
	buffree(&sums);
	return rc;
}
