/* snapshot: workspace layers as deterministic tar.zst, incremental from a stat cache.
 *
 * A layer is a pax tar: entries sorted by path bytes, uid/gid 0 without names, mtime kept (ns),
 * no atime or ctime, so the same tree gives the same bytes. It is compressed in zstd frames that
 * start at entries, indexed in a trailer (frames.h), so a restore of a few paths decodes a few. The workspace folder itself is the
 * entry "." (its mode and mtime), in a full layer and in a later one where either changed.
 * The first layer holds every entry;
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
#include <ctype.h>
#include <dirent.h>
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
#include "frames.h"
#include "scan.h"
#include "../util/beneath.h"
#include "../util/zst.h"

#define OPAQUE ".wh..wh..opq"
#define SMALLLAYER (1 << 20) /* data below this is compressed without workers */
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
	int quiet;           /* prev has no racy entry and no file with other links: when the feed
	                        reports nothing, nothing changed (the next layer reads no entry) */
	int excluded;        /* snapexclude was called since prev was cut */
	struct watch *watch; /* the change feed, when trusted (snapfeed) */
	struct zstc *zc;     /* the compressor of every layer: its workers are started once */
	char *buf;
	int layers;          /* numbered layers written (complete or not) */
	int64_t deadline;    /* the layer being written stops once nowms() passes it (0: never) */
	int late;            /* it did */
	int64_t (*ext)[2];   /* the data extents of the file being stored (mapfile) */
	uint32_t rootmode;   /* the workspace folder itself as the last numbered layer stored it */
	int64_t rootmtime;
	int haveroot;
	size_t next, extcap;
};

/* A frame to start where the tar reaches at, with the entry first there (NULL until header() writes
 * it; never, when the rest of the layer was left out). */
struct cut {
	int64_t at;
	char *first;
};

/* One layer being written: libarchive hands its blocks to the zstd writer, which starts a new
 * frame where an entry of the sorted part passes the frame's length (frames.h). */
struct layer {
	struct archive *a;
	struct archive_entry *ent;
	struct zstw *z;
	struct err zerr; /* the zstd writer's error, when the callback failed */
	int zfailed;
	int64_t frame;   /* tar between cuts: zstd's frame at the layer's level (zstframelen) */
	int64_t tar;     /* tar bytes handed to the zstd writer */
	int64_t from;    /* where the last cut was asked for */
	struct cut *cuts; /* asked for, in order; those before next are made */
	size_t ncut, next, capcut;
	int64_t *at;     /* for each cut made, the zstd frame it starts (the first: frame 0, "") */
	char **first;    /* and its entry's path */
	size_t nat;
};

static int racy(const struct scan *sc, const struct sent *x)
{
	return x->ctime >= sc->start - (sc->finetime ? RACYFINE : RACYCOARSE);
}

/* End the zstd frame being written; the next starts with the entry first (taken over, freed on
 * failure too). */
static int frameend(struct layer *l, char *first, struct err *e)
{
	int64_t k;
	if (zstwframe(l->z, &k, e) < 0) {
		free(first);
		return -1;
	}
	if (l->nat % 64 == 0) {
		l->at = xrealloc(l->at, (l->nat + 64) * sizeof *l->at);
		l->first = xrealloc(l->first, (l->nat + 64) * sizeof *l->first);
	}
	l->at[l->nat] = k;
	l->first[l->nat++] = first;
	return 0;
}

static la_ssize_t writecb(struct archive *a, void *ctx, const void *p, size_t n)
{
	struct layer *l = ctx;
	const char *b = p;
	size_t left = n;
	int rc = 0;
	while (rc == 0 && l->next < l->ncut && l->cuts[l->next].at <= l->tar + (int64_t)left) {
		struct cut *c = &l->cuts[l->next];
		if (!c->first && c->at == l->tar + (int64_t)left)
			break; /* its entry's header is still to come */
		l->next++;
		if (!c->first) /* no entry came after it (the rest was left out): no frame starts there */
			continue;
		size_t k = (size_t)(c->at - l->tar);
		rc = zstwrite(l->z, b, k, &l->zerr);
		char *first = c->first;
		c->first = NULL;
		if (rc == 0)
			rc = frameend(l, first, &l->zerr);
		else
			free(first);
		b += k, left -= k, l->tar += k;
	}
	if (rc == 0)
		rc = zstwrite(l->z, b, left, &l->zerr);
	l->tar += left;
	if (rc < 0) {
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

/* A layer written beside path under a temporary name, renamed to path when its stream closes. */
static int layeropen(struct layer *l, const char *path, int level, int threads, struct zstc *zc, struct err *e)
{
	memset(l, 0, sizeof *l);
	l->frame = zstframelen(level);
	if (zstwopenc(&l->z, path, level, threads, ZSTW_PLACE, zc, e) < 0)
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
	for (size_t i = l->next; i < l->ncut; i++)
		free(l->cuts[i].first);
	free(l->cuts);
	for (size_t i = 0; i < l->nat; i++)
		free(l->first[i]);
	free(l->first);
	free(l->at);
	memset(l, 0, sizeof *l);
}

/* Before the header of path, an entry of the sorted part: start a new frame there once the frame
 * being written holds its length of tar. The frame is named after the entry header() writes there
 * next (path's own may yet be left out, as vanished). */
static int framecut(struct layer *l, const char *path, struct err *e)
{
	if (archive_filter_bytes(l->a, 0) - l->from < l->frame)
		return 0;
	if (archive_write_finish_entry(l->a) < ARCHIVE_WARN) /* the last entry's padding, written */
		return layererr(l, path, e);
	if (l->ncut == l->capcut)
		l->cuts = xrealloc(l->cuts, (l->capcut = l->capcut ? 2 * l->capcut : 8) * sizeof *l->cuts);
	l->from = archive_filter_bytes(l->a, 0);
	l->cuts[l->ncut++] = (struct cut){l->from, NULL};
	return 0;
}

/* Close the layer's stream: when cut, with the index of its parts in its trailer (frames.h). */
static int layerclose(struct layer *l, struct snapinfo *info, struct err *e)
{
	if (archive_write_close(l->a) != ARCHIVE_OK)
		return layererr(l, "tar", e);
	int rc = 0;
	if (l->nat) {
		int64_t end;
		size_t n;
		const int64_t *len = zstwframe(l->z, &end, e) == 0 ? zstwsizes(l->z, &n, e) : NULL;
		if (!len || n != (size_t)end)
			return len ? errc(e, ERR_FAIL, "%s: %zu frames written of %lld", info->path, n, (long long)end) : -1;
		struct buf index = {0};
		for (size_t i = 0, k = 0; i <= l->nat; i++) { /* part i: frames k up to the next cut's */
			int64_t upto = i < l->nat ? l->at[i] : end, sum = 0;
			for (; (int64_t)k < upto; k++)
				sum += len[k];
			framesput(&index, sum, i ? l->first[i - 1] : "");
		}
		/* An index past the trailer's bound (parts whose first paths are all some KiB long) is
		 * left out: the layer is whole without it. */
		if (index.len <= ZSTTRAILMAX)
			rc = zstwtrailer(l->z, index.data, index.len, e);
		buffree(&index);
	}
	struct zstw *z = l->z;
	l->z = NULL;
	return rc < 0 ? (zstwfree(z), -1) : zstwclose(z, info->sha256, &info->bytes, e);
}

/* Write one header; mode carries the type, ns the mtime; a sparse file's data extents in ext. */
static int header(struct layer *l, const char *path, uint32_t mode, int64_t size, int64_t mtime,
                  const char *hardlink, const char *symlink, const char *whiteout, const int64_t (*ext)[2],
                  size_t next, struct err *e)
{
	if (l->ncut && !l->cuts[l->ncut - 1].first && l->next < l->ncut) /* the frame cut here starts with it */
		l->cuts[l->ncut - 1].first = xstrdup(path);
	struct archive_entry *en = l->ent;
	archive_entry_clear(en);
	archive_entry_copy_pathname(en, path);
	archive_entry_set_filetype(en, mode & S_IFMT);
	archive_entry_set_perm(en, mode & 07777);
	archive_entry_set_size(en, size);
	for (size_t i = 0; i < next; i++)
		archive_entry_sparse_add_entry(en, ext[i][0], ext[i][1]);
	if ((size_t)archive_entry_sparse_count(en) != next) {
		errno = EINVAL;
		return errf(e, "%s: the sparse map of %zu extents was not taken", path, next);
	}
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
	int fd = openbeneath(rootfd, x->path, O_PATH, 0);
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
	int fd = openbeneath(rootfd, x->path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
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
	x->blocks = st.st_blocks;
	x->mtime = scanns(st.st_mtim);
	x->ctime = scanns(st.st_ctim);
	return fd;
}

/* The data extents of open file fd (size bytes, blocks on disk) into s->ext, asked of the file
 * system (SEEK_DATA, SEEK_HOLE) only when it takes less room than its size. Returns 1 when it has
 * holes: then the layer stores it sparse (a hole at the end is the extent (size, 0)); 0 when it is
 * data from end to end, or the file system cannot tell. */
static int mapfile(struct snap *s, int fd, int64_t size, int64_t blocks)
{
	s->next = 0;
	if (size <= 0 || blocks * 512 >= size)
		return 0;
	int64_t off = 0, data = 0;
	while (off < size) {
		off_t d = lseek(fd, off, SEEK_DATA);
		if (d < 0 && errno != ENXIO)
			return s->next = 0, 0;
		if (d < 0 || d >= size)
			break; /* a hole to the end */
		off_t h = lseek(fd, d, SEEK_HOLE);
		if (h < 0 || h > size)
			h = size;
		if (h <= d)
			return s->next = 0, 0;
		if (s->next == s->extcap) {
			s->extcap = s->extcap ? 2 * s->extcap : 64;
			s->ext = xrealloc(s->ext, s->extcap * sizeof *s->ext);
		}
		s->ext[s->next][0] = d;
		s->ext[s->next][1] = h - d;
		s->next++;
		data += h - d;
		off = h;
	}
	if (data >= size)
		return s->next = 0, 0;
	if (!s->next || s->ext[s->next - 1][0] + s->ext[s->next - 1][1] < size) {
		if (s->next == s->extcap) {
			s->extcap = s->extcap ? 2 * s->extcap : 64;
			s->ext = xrealloc(s->ext, s->extcap * sizeof *s->ext);
		}
		s->ext[s->next][0] = size;
		s->ext[s->next][1] = 0;
		s->next++;
	}
	return 1;
}

/* How copyfile ended. */
enum { COPIED, SHRANK, READFAIL, LATE };

/* Feed the x->size bytes of open file fd to layer l (may be NULL) and digest md (may be NULL):
 * with sparse, the extents of s->ext and holes between them (the layer writes no bytes for a
 * hole; the digest takes each extent's place); else every byte. When the file shrank, could not
 * be read (*err gets errno) or the deadline passed, the rest goes in as zeros. Returns how it
 * ended, or -1 when the layer failed. */
static int copyfile(struct snap *s, struct layer *l, int fd, struct sent *x, int sparse, EVP_MD_CTX *md, int *err,
                    struct err *e)
{
	int64_t whole[1][2] = {{0, x->size}};
	const int64_t (*ext)[2] = sparse ? (const int64_t (*)[2])s->ext : (const int64_t (*)[2])whole;
	size_t next = sparse ? s->next : 1;
	int how = COPIED;
	int64_t pos = 0;
	for (size_t k = 0; k <= next; k++) {
		int64_t start = k < next ? ext[k][0] : x->size, end = k < next ? start + ext[k][1] : x->size;
		if (start > pos && l) { /* a hole: no bytes in the layer, but libarchive counts them */
			memset(s->buf, 0, IOBUF);
			for (int64_t left = start - pos; left > 0;) {
				size_t n = left < IOBUF ? (size_t)left : IOBUF;
				if (archive_write_data(l->a, s->buf, n) != (la_ssize_t)n)
					return layererr(l, x->path, e);
				left -= n;
			}
		}
		if (md && sparse && k < next)
			EVP_DigestUpdate(md, ext[k], sizeof ext[k]);
		for (pos = start; pos < end;) {
			size_t want = end - pos < IOBUF ? (size_t)(end - pos) : IOBUF;
			ssize_t n = 0;
			if (how == COPIED && s->deadline && nowms() >= s->deadline) {
				how = LATE;
				s->late = 1;
			}
			if (how == COPIED)
				n = pread(fd, s->buf, want, pos);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				*err = errno;
				how = READFAIL;
			} else if (n == 0 && how == COPIED) {
				how = SHRANK;
			}
			if (n <= 0) { /* the rest of this extent is zeros */
				n = (ssize_t)want;
				memset(s->buf, 0, n);
			}
			if (l && archive_write_data(l->a, s->buf, n) != n)
				return layererr(l, x->path, e);
			if (md)
				EVP_DigestUpdate(md, s->buf, n);
			pos += n;
		}
	}
	return how;
}

/* An entry that was scanned and is gone or another one now (the tree changed while it was read:
 * a gc packing objects away, an editor, a step's leftover child): errno of the failed open. */
static int changedunder(int err)
{
	return err == ENOENT || err == ENOTDIR || err == ELOOP || err == ESTALE;
}

/* SHA-256 of what x holds now (file data or link target) into out. */
static int hashnow(struct snap *s, struct sent *x, unsigned char out[32], struct err *e)
{
	unsigned int len = 0;
	if (S_ISLNK(x->mode)) {
		int n = readtarget(s->rootfd, x, s->buf, IOBUF, e);
		if (n < 0 && changedunder(errno)) {
			memset(out, 0xff, 32); /* gone or changed: it counts as changed, putentry says so */
			return 0;
		}
		if (n < 0)
			return -1;
		EVP_Digest(s->buf, n, out, &len, EVP_sha256(), NULL);
		return 0;
	}
	struct sent y = *x;
	int fd = openfile(s->rootfd, &y, e);
	if (fd < 0 && (errno == EACCES || errno == EPERM || changedunder(errno))) {
		memset(out, 0xff, 32); /* unreadable or gone: it counts as changed, and putentry says why */
		return 0;
	}
	if (fd < 0)
		return -1;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	int err = 0;
	int64_t deadline = s->deadline;
	s->deadline = 0;
	int how = copyfile(s, NULL, fd, &y, mapfile(s, fd, y.size, y.blocks), md, &err, e);
	s->deadline = deadline;
	EVP_DigestFinal_ex(md, out, &len);
	EVP_MD_CTX_free(md);
	close(fd);
	if (how == COPIED)
		return 0;
	/* Shrunk or unreadable now: a digest no layer has, so the entry counts as changed. */
	memset(out, 0xff, 32);
	return 0;
}

/* Note path as left out of (or cut short in) the layer being written, and why. */
static void skipped(struct snapinfo *info, const char *path, const char *why)
{
	strvadd(&info->skipped, path);
	strvadd(&info->why, why);
}

/* Write entry i of sc (its data too); hash what went in when the entry is racy and kept. A file
 * that cannot be opened for reading is left out (cut[i] set), one that fails or is cut short while
 * read goes in with zeros for the rest; either is noted in info, and the entry is made to look
 * changed to the next layer. */
static int putentry(struct snap *s, struct layer *l, struct scan *sc, size_t i, int keep, uint8_t *cut,
                    struct snapinfo *info, struct err *e)
{
	struct sent *x = &sc->v[i];
	if (S_ISDIR(x->mode))
		return header(l, x->path, x->mode, 0, x->mtime, NULL, NULL, NULL, NULL, 0, e);
	if (S_ISLNK(x->mode)) {
		int n = readtarget(s->rootfd, x, s->buf, IOBUF, e);
		if (n < 0 && changedunder(errno)) {
			skipped(info, x->path, errno == ESTALE ? "changed while the snapshot was read: in the next layer"
			                                       : "vanished while the snapshot was read");
			cut[i] = 1;
			x->mtime = INT64_MIN;
			x->hashed = 0;
			return 0;
		}
		if (n < 0 || header(l, x->path, x->mode, 0, x->mtime, NULL, s->buf, NULL, NULL, 0, e) < 0)
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
		if (cut[x->link]) { /* its first name was left out: so is this one */
			cut[i] = 1;
			x->mtime = INT64_MIN;
			skipped(info, x->path, "a hard link to a file that could not be read");
			return 0;
		}
		if (header(l, x->path, x->mode, 0, x->mtime, first->path, NULL, NULL, NULL, 0, e) < 0)
			return -1;
		x->hashed = first->hashed;
		memcpy(x->hash, first->hash, sizeof x->hash);
		return 0;
	}
	int fd = openfile(s->rootfd, x, e);
	if (fd < 0 && changedunder(errno)) { /* the tree changed under the snapshot: the job goes on */
		skipped(info, x->path, errno == ESTALE ? "changed while the snapshot was read: in the next layer"
		                                       : "vanished while the snapshot was read");
		cut[i] = 1;
		x->mtime = INT64_MIN;
		x->hashed = 0;
		return 0;
	}
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		char *why = xasprintf("could not be read: %s", strerror(errno));
		skipped(info, x->path, why);
		free(why);
		cut[i] = 1;
		x->mtime = INT64_MIN;
		x->hashed = 0;
		return 0;
	}
	if (fd < 0)
		return -1;
	int sparse = mapfile(s, fd, x->size, x->blocks);
	if (header(l, x->path, x->mode, x->size, x->mtime, NULL, NULL, NULL, (const int64_t (*)[2])s->ext,
	           sparse ? s->next : 0, e) < 0) {
		close(fd);
		return -1;
	}
	int hash = keep && racy(sc, x), err = 0;
	EVP_MD_CTX *md = NULL;
	if (hash) {
		md = EVP_MD_CTX_new();
		EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	}
	int how = copyfile(s, l, fd, x, sparse, md, &err, e);
	close(fd);
	if (how == READFAIL) {
		char *why = xasprintf("read failed (%s): the rest of it is zeros in this layer", strerror(err));
		skipped(info, x->path, why);
		free(why);
	} else if (how == LATE) {
		skipped(info, x->path, "cut short by the deadline: the rest of it is zeros in this layer");
	}
	if (how > COPIED) /* the next scan must see a change */
		x->mtime = INT64_MIN;
	if (md) {
		unsigned int len = 0;
		EVP_DigestFinal_ex(md, x->hash, &len);
		EVP_MD_CTX_free(md);
		x->hashed = how == COPIED;
	}
	return how < 0 ? -1 : 0;
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
			if (nw->skipped.n && scanunknown(nw, q))
				continue; /* below a directory this scan could not read: not known to be gone */
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
		int fd = openbeneath(s->rootfd, x->path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0);
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
		x->ctime = scanns(st.st_ctim);
		x->hashed = 0;
		strvadd(&info->setid, x->path);
	}
	return 0;
}

/* Whether a plan against sc would compare none of its entries by content nor pull one in
 * through another link: no racy entry, no regular file with other links. */
static int quietscan(const struct scan *sc)
{
	for (size_t i = 0; i < sc->n; i++) {
		const struct sent *x = &sc->v[i];
		if ((S_ISREG(x->mode) && x->nlink > 1) || (!S_ISDIR(x->mode) && racy(sc, x)))
			return 0;
	}
	return 1;
}

static int take(struct snap *s, const char *name, int full, int keep, struct snapinfo *info, struct err *e)
{
	memset(info, 0, sizeof *info);
	s->late = 0;
	if (!*name || strchr(name, '/') || name[0] == '.')
		return errc(e, ERR_INPUT, "snapshot: bad layer name '%s'", name);
	/* With the change feed a layer reads again only what it reports since the last numbered
	 * one. "end" (not kept) reads the same, and hands the news back to the feed (watchkeep):
	 * the next numbered layer is cut against prev too, and must read those directories again. */
	struct scan nw;
	struct scanopt opt = s->opt;
	int src, quiet = 0;
	if (s->watch && watchbroken(s->watch)) { /* no use adding watches on every scan again */
		watchclose(s->watch);
		s->watch = NULL;
	}
	opt.watch = s->watch;
	if (opt.watch && s->haveprev && watchread(opt.watch, 0) == 0) {
		struct strv dirty = {0};
		watchdirty(opt.watch, &dirty);
		if (!keep) {
			watchkeep(opt.watch, &dirty);
			opt.vouchonly = 1; /* a watch revived here would vouch for what changed while it was dead */
		}
		/* Nothing reported, and nothing in prev that plan would look at again by content or
		 * through another link: the scan would be prev, the plan empty. The step costs nothing
		 * per entry. */
		quiet = dirty.n == 0 && s->quiet && !s->excluded && !full;
		if (quiet) {
			nw = s->prev; /* borrowed, never freed here */
			src = 0;
		} else {
			src = scanagain(&nw, s->rootfd, &opt, &s->prev, &dirty, e);
		}
		strvfree(&dirty);
		info->feed = 1;
	} else {
		if (opt.watch && !keep)
			opt.watch = NULL; /* lost: "end" scans alone, and the next numbered layer scans all */
		if (opt.watch) {
			watchread(opt.watch, 0);
			watchreset(opt.watch);
		}
		src = s->haveprev ? scanwith(&nw, s->rootfd, &opt, &s->prev, e) : scanrun(&nw, s->rootfd, &opt, e);
	}
	if (src < 0) {
		if (opt.watch)
			watchlose(opt.watch, 0);
		return errctx(e, "snapshot %s", name);
	}
	if (s->max_size > 0 && nw.used > s->max_size) {
		if (opt.watch)
			watchlose(opt.watch, 0);
		long long used = (long long)nw.used;
		if (!quiet)
			scanfree(&nw);
		return errf(e, "snapshot %s: the workspace takes %lld bytes on disk, over snapshot.max_size %lld", name,
		            used, (long long)s->max_size);
	}
	if (!quiet && stripsetid(s, &nw, info, e) < 0) {
		if (opt.watch)
			watchlose(opt.watch, 0);
		scanfree(&nw);
		return errctx(e, "snapshot %s", name);
	}
	struct plan p = {0};
	if (!full && !quiet && plan(s, &nw, &p, e) < 0) {
		if (opt.watch)
			watchlose(opt.watch, 0);
		planfree(&p);
		scanfree(&nw);
		return errctx(e, "snapshot %s", name);
	}
	for (size_t i = 0; i < nw.skipped.n; i++) /* what the scan left out, before what putentry does */
		skipped(info, nw.skipped.v[i] + 1, scanwhy(nw.skipped.v[i][0]));
	/* A layer that is not what its name says (see SNAPMARK) opens with the mark. */
	int numbered = isdigit((unsigned char)name[0]);
	const char *mark = numbered ? (full && s->layers > 0 ? "full" : NULL) : (full ? NULL : "delta");
	char *path = xasprintf("%s/%s.tar.zst", s->dir, name);
	size_t count = quiet ? 0 : nw.n; /* quiet: no entry goes in */
	uint8_t *cut = xcalloc(count + 1, 1);
	/* A small layer (a step's few files) is compressed on this thread: handing a few KiB to the
	 * workers and waiting for them costs more than the compression. */
	int64_t data = 0;
	for (size_t i = 0; i < count && data < SMALLLAYER; i++)
		if ((full || p.emit[i]) && S_ISREG(nw.v[i].mode))
			data += nw.v[i].size;
	struct layer l;
	int rc = layeropen(&l, path, s->level, data < SMALLLAYER ? 0 : s->threads, s->zc, e);
	if (rc == 0 && mark)
		rc = header(&l, SNAPMARK, S_IFREG, 0, 0, NULL, NULL, mark, NULL, 0, e);
	for (size_t i = 0; rc == 0 && i < p.wh.n; i++)
		rc = header(&l, p.wh.v[i] + 1, S_IFREG, 0, 0, NULL, NULL, p.wh.v[i][0] == 'o' ? "opaque" : "file", NULL, 0,
		            e);
	/* The workspace folder itself, "." in its place by path bytes: in a full layer, and in a later
	 * one when its mode or mtime changed (restore brings both back). */
	struct stat root;
	int putroot = fstat(s->rootfd, &root) == 0 &&
	              (full || !s->haveroot || s->rootmode != root.st_mode || s->rootmtime != scanns(root.st_mtim));
	int rootput = 0;
	for (size_t i = 0, put = 0; rc == 0 && i < count && !s->late; i++) {
		if (putroot && !rootput && strcmp(nw.v[i].path, ".") > 0) {
			if (s->deadline && nowms() >= s->deadline) {
				s->late = 1;
				break;
			}
			rootput = 1;
			rc = framecut(&l, ".", e);
			if (rc == 0)
				rc = header(&l, ".", root.st_mode, 0, scanns(root.st_mtim), NULL, NULL, NULL, NULL, 0, e);
			if (rc < 0)
				break;
		}
		if (full || p.emit[i]) {
			if (s->deadline && nowms() >= s->deadline) {
				s->late = 1;
				break;
			}
			rc = framecut(&l, nw.v[i].path, e);
			if (rc == 0)
				rc = putentry(s, &l, &nw, i, keep, cut, info, e);
			/* Each file read is an open in the feed's queue: drop them before it overflows. */
			if (opt.watch && ++put % 4096 == 0)
				watchread(opt.watch, 1);
		}
	}
	if (rc == 0 && putroot && !rootput && !s->late) {
		if (s->deadline && nowms() >= s->deadline)
			s->late = 1;
		else
			rc = header(&l, ".", root.st_mode, 0, scanns(root.st_mtim), NULL, NULL, NULL, NULL, 0, e);
	}
	free(cut);
	if (rc == 0)
		rc = layerclose(&l, info, e);
	layerfree(&l); /* on an error, its temporary goes too */
	if (rc < 0) {
		errctx(e, "snapshot %s", name);
	} else {
		snprintf(info->path, sizeof info->path, "%s", path);
		info->full = full;
		info->incomplete = s->late;
		info->added = full ? nw.n : p.added;
		info->changed = p.changed;
		info->deleted = p.deleted;
		info->entries = nw.n;
		info->treebytes = nw.bytes;
		info->treeused = nw.used;
		if (numbered)
			s->layers++;
	}
	free(path);
	planfree(&p);
	/* A layer cut short is no base for the next: that one is cut against the last complete one. */
	if (rc == 0 && keep && !s->late) {
		if (putroot) {
			s->rootmode = root.st_mode;
			s->rootmtime = scanns(root.st_mtim);
			s->haveroot = 1;
		}
		if (!quiet) {
			scanfree(&s->prev);
			s->prev = nw;
			s->quiet = quietscan(&s->prev);
			s->excluded = 0;
		}
		s->haveprev = 1;
		/* What happened meanwhile counts next time, but for the opens of the files just read. */
		if (opt.watch)
			watchread(opt.watch, 1);
	} else {
		/* "end" done: the feed's news stays for the next numbered layer, but for the opens of
		 * the files just read. Anything else leaves no base the feed could be read against. */
		if (opt.watch && rc == 0 && !keep && !s->late)
			watchread(opt.watch, 1);
		else if (opt.watch)
			watchlose(opt.watch, 0);
		if (!quiet)
			scanfree(&nw);
	}
	return rc;
}

int snapopen(struct snap **sp, const char *workspace, const struct snapconf *c, const char *dir, struct err *e)
{
	*sp = NULL;
	int level = c ? c->level : 3, threads = c ? c->threads : 0;
	if (level < 1 || level > 19)
		return errc(e, ERR_INPUT, "snapshot.level %d: want 1 to 19", level);
	if (threads < 0)
		return errc(e, ERR_INPUT, "snapshot.threads %d: want 0 (one per CPU) or more", threads);
	int rootfd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return errc(e, ERR_INPUT, "workspace %s:", workspace);
	if (mkdirs(dir, 0755, e) < 0) {
		close(rootfd);
		return -1;
	}
	struct snap *s = xcalloc(1, sizeof *s);
	s->rootfd = rootfd;
	s->dir = xstrdup(dir);
	s->level = level;
	if (threads == 0) {
		long n = ncpus();
		threads = n < 1 ? 1 : n > MAXAUTOTHREADS ? MAXAUTOTHREADS : (int)n;
	}
	s->threads = threads;
	s->max_size = c ? c->max_size : 0;
	/* Layers already there (a resumed run carries those of the run it resumed): the first layer
	 * written here is full, and must say so to a reader walking the chain back. */
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		s->layers += layerparse(de->d_name, NULL) == LAYER_STEP;
	}
	if (d)
		closedir(d);
	for (size_t i = 0; c && i < c->exclude.n; i++)
		strvadd(&s->exclude, c->exclude.v[i]);
	s->opt.exclude = &s->exclude;
	s->opt.gitignore = c ? c->gitignore : 0;
	/* a flood of entries is stopped as it is read; the exact sum (links once) is checked after */
	s->opt.max_entries = s->max_size > 0 ? 2 * (s->max_size / SCANENTRYROOM) + 2 : 0;
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
	s->zc = zstcnew();
	/* A first scan, before anything runs: an unreadable workspace or one over max_size stops here. */
	struct scan sc;
	if (scanrun(&sc, rootfd, &s->opt, e) < 0) {
		errctx(e, "snapshot of workspace %s", workspace);
		e->kind = ERR_INPUT;
		snapclose(s);
		return -1;
	}
	int64_t used = sc.used;
	scanfree(&sc);
	if (s->max_size > 0 && used > s->max_size) {
		snapclose(s);
		return errc(e, ERR_INPUT, "workspace %s takes %lld bytes on disk, over snapshot.max_size %lld (raise it, or 0 for no limit)",
		            workspace, (long long)used, (long long)c->max_size);
	}
	*sp = s;
	return 0;
}

int snaptakeby(struct snap *s, const char *name, int64_t deadline, struct snapinfo *info, struct err *e)
{
	locale_t old = snappin();
	s->deadline = deadline;
	int rc = take(s, name, !s->haveprev, 1, info, e);
	s->deadline = 0;
	snapunpin(old);
	return rc;
}

int snaptake(struct snap *s, const char *name, struct snapinfo *info, struct err *e)
{
	return snaptakeby(s, name, 0, info, e);
}

int snapend(struct snap *s, const char *name, struct snapinfo *info, struct err *e)
{
	locale_t old = snappin();
	int rc = take(s, name, !s->haveprev, 0, info, e);
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
	if (s->opt.gitignore)
		return 0; /* every layer reads the whole tree: the rules may have changed anywhere */
	if (!s->watch)
		s->watch = watchopen(s->rootfd);
	return s->watch != NULL;
}

void snapdistrust(struct snap *s)
{
	if (s && s->watch)
		watchlose(s->watch, 1); /* the next layer drops it and scans everything */
}

void snapexclude(struct snap *s, const char *rel)
{
	char *all = xasprintf("%s/**", rel);
	strvadd(&s->exclude, rel);
	strvadd(&s->exclude, all);
	s->excluded = 1;
	free(all);
}

void snapclose(struct snap *s)
{
	if (!s)
		return;
	watchclose(s->watch);
	close(s->rootfd);
	scanfree(&s->prev);
	zstcfree(s->zc);
	strvfree(&s->exclude);
	free(s->dir);
	free(s->buf);
	free(s->ext);
	free(s);
}

void snapinfofree(struct snapinfo *i)
{
	strvfree(&i->skipped);
	strvfree(&i->why);
	strvfree(&i->setid);
}

int snapspecial(struct archive_entry *en)
{
	const char *path = archive_entry_pathname(en);
	if (!path)
		return 0;
	const char *base = strrchr(path, '/');
	return snapwhiteout(en, base && base[1] ? base + 1 : path) != NULL;
}

const char *snapwhiteout(struct archive_entry *en, const char *base)
{
	if (strncmp(base, ".wh.", 4) != 0)
		return NULL;
	const char *name;
	const void *v;
	size_t n;
	int mark = strcmp(base, SNAPMARK) == 0;
	archive_entry_xattr_reset(en);
	while (archive_entry_xattr_next(en, &name, &v, &n) == ARCHIVE_OK) {
		if (strcmp(name, SNAPWHITEOUT) != 0)
			continue;
		if (n == 4 && memcmp(v, "file", 4) == 0)
			return "file";
		if (n == 6 && memcmp(v, "opaque", 6) == 0)
			return "opaque";
		if (mark && n == 4 && memcmp(v, "full", 4) == 0)
			return "full";
		if (mark && n == 5 && memcmp(v, "delta", 5) == 0)
			return "delta";
	}
	return NULL;
}

static int bystr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void snapchains(const char *rundir, struct strv *out)
{
	char *dir = pathjoin(rundir, "snapshots");
	DIR *d = opendir(dir);
	struct dirent *de;
	int flat = 0;
	struct strv sub = {0};
	while (d && (de = readdir(d))) {
		struct stat st;
		char *p = pathjoin(dir, de->d_name);
		if (layerparse(de->d_name, NULL) != LAYER_NONE)
			flat = 1;
		else if (de->d_name[0] != '.' && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			strvadd(&sub, de->d_name);
		free(p);
	}
	if (d)
		closedir(d);
	free(dir);
	if (sub.n > 1)
		qsort(sub.v, sub.n, sizeof *sub.v, bystr);
	if (flat)
		strvadd(out, "");
	for (size_t i = 0; i < sub.n; i++)
		strvadd(out, sub.v[i]);
	strvfree(&sub);
}
