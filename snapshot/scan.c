/* scan: one walk of a workspace into a path-sorted list of entries with the stat fields that
 * detect change, never following a symlink. */
#include <dirent.h>
#include <pthread.h>
#include <sys/mman.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "scan.h"
#include "../util/gitignore.h"
#include "../util/gitindex.h"
#include "../util/beneath.h"
#include "../util/glob.h"

enum { MAXDEPTH = 256, MAXOPEN = 256 /* directories held open in the queue */ };

static int excluded(const struct scanopt *o, const char *path)
{
	for (size_t i = 0; o->exclude && i < o->exclude->n; i++)
		if (globpath(o->exclude->v[i], path))
			return 1;
	return 0;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The paths the workspace's .git/index lists, sorted, into t: 1, or 0 when there is no index, or -1
 * when there is one this cannot read (a link, not a regular file, over GITINDEX_MAX, not an index,
 * its paths over 64 MiB) or .git is a file: then nothing can be told tracked. Git ignores no tracked path, whatever
 * a .gitignore a step wrote says; the walk does as git does. */
static int trackedread(int rootfd, struct strv *t)
{
	int fd = openbeneath(rootfd, ".git/index", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1; /* a .git file (a worktree's): its index is elsewhere */
	struct stat st;
	struct buf b = {0};
	int trunc = 0, rc = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && readfd(fd, GITINDEX_MAX, &b, &trunc) == 0 && !trunc &&
	    gitindexpaths(b.data, b.len, (size_t)64 << 20, t) == 0) {
		if (t->n)
			qsort(t->v, t->n, sizeof *t->v, cmpstr);
		rc = 1;
	}
	buffree(&b);
	close(fd);
	return rc;
}

/* Whether t (sorted) holds the first n bytes of s as an entry. */
static int listed(const struct strv *t, const char *s, size_t n)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(t->v[mid], s, n);
		if (c == 0 && t->v[mid][n] == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Whether path is tracked: listed, or (isdir) a folder holding a listed path, or beneath a folder
 * listed whole ("dir/", a sparse index's entry for a folder outside the sparse checkout: git
 * tracks every path in it and says so once a step writes one). */
static int tracked(const struct strv *t, const char *path, int isdir)
{
	for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
		if (listed(t, path, (size_t)(p - path) + 1))
			return 1;
	size_t lo = 0, hi = t->n, n = strlen(path);
	while (lo < hi) { /* the first entry not before path */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(t->v[mid], path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < t->n && strncmp(t->v[i], path, n) == 0; i++) {
		if (t->v[i][n] == 0)
			return 1;
		if (isdir && t->v[i][n] == '/')
			return 1;
		if ((unsigned char)t->v[i][n] > '/')
			break; /* past every "path/..." */
	}
	return 0;
}

/* Add the rules of file name under dirfd (a regular file, not a link; at most 1 MiB of it, the
 * workspace's own text) for folder dir of the workspace. */
static void ignorefile(struct gitignore *g, int dirfd, const char *name, const char *dir)
{
	enum { MAXIGNORE = 1 << 20 };
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		char *text = xmalloc(MAXIGNORE);
		size_t n = 0;
		ssize_t r;
		while (n < MAXIGNORE && ((r = read(fd, text + n, MAXIGNORE - n)) > 0 || (r < 0 && errno == EINTR)))
			n += r > 0 ? (size_t)r : 0;
		gitignoreadd(g, dir, text, n);
		free(text);
	}
	close(fd);
}

int64_t scanns(struct timespec t)
{
	if (t.tv_sec > INT64_MAX / 1000000000 - 1)
		return INT64_MAX;
	if (t.tv_sec < INT64_MIN / 1000000000 + 1)
		return INT64_MIN + 1;
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* What one walking thread found. Paths live in blocks that never move. */
struct part {
	struct sent *v;
	size_t n, cap;
	char **blocks;
	size_t nblocks;
	char *cur;
	size_t left;
	struct strv skipped;
	int finetime;
	size_t same;         /* directories whose names came from the walker's names scan */
	struct strv watched; /* directories read, each with its watch in wds */
	int *wds;
	struct strv kept;    /* directories not read again: the change feed vouches for them */
	struct strv unread;  /* directories whose names were not read whole (struct sent unread) */
	size_t *from;        /* per entry: its index in the walker's names scan, or NONAME */
};

#define NONAME SIZE_MAX

/* n bytes for an array of entries, freed with free. A scan of 100,000 entries fills 11 MB that
 * a new layer's scan has never touched: at 4 KiB a page fault that was most of a one-file
 * step (in a virtual machine a fault costs several µs), so the kernel is asked for huge pages
 * where it gives them on request (transparent_hugepage "madvise"). A hint: nothing fails
 * without it. */
static void *bigalloc(void *old, size_t n)
{
	void *p = xrealloc(old, n);
	if (n >= (2u << 20)) {
		uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, end = ((uintptr_t)p + n) & ~(uintptr_t)4095;
		if (end > a)
			madvise((void *)a, end - a, MADV_HUGEPAGE);
	}
	return p;
}

/* A copy of path[0..len) in p's blocks. */
static const char *pathput(struct part *p, const char *path, size_t len)
{
	if (len + 1 > p->left) {
		size_t n = len + 1 > 65536 ? len + 1 : 65536;
		p->blocks = xrealloc(p->blocks, (p->nblocks + 1) * sizeof *p->blocks);
		p->blocks[p->nblocks++] = p->cur = xmalloc(n);
		p->left = n;
	}
	char *at = p->cur;
	memcpy(at, path, len);
	at[len] = 0;
	p->cur += len + 1;
	p->left -= len + 1;
	return at;
}

/* Add path with st; from: its index in the names scan (reused from there), or NONAME. */
static void add(struct part *p, const char *path, size_t len, const struct stat *st, size_t from)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		p->v = bigalloc(p->v, p->cap * sizeof *p->v);
		p->from = xrealloc(p->from, p->cap * sizeof *p->from);
	}
	p->from[p->n] = from;
	struct sent *x = &p->v[p->n++];
	memset(x, 0, sizeof *x);
	x->path = pathput(p, path, len);
	x->mode = st->st_mode;
	x->nlink = st->st_nlink;
	x->size = S_ISDIR(st->st_mode) ? 0 : st->st_size;
	x->blocks = S_ISDIR(st->st_mode) ? 0 : st->st_blocks;
	x->mtime = scanns(st->st_mtim);
	x->ctime = scanns(st->st_ctim);
	x->ino = st->st_ino;
	x->dev = st->st_dev;
	x->link = -1;
	x->wd = -1;
	if (st->st_mtim.tv_nsec || st->st_ctim.tv_nsec)
		p->finetime = 1;
}

/* Note path as left out, for the reason kind. */
static void skip(struct part *p, int kind, const char *path)
{
	char *k = xasprintf("%c%s", kind, path);
	strvadd(&p->skipped, k);
	free(k);
}

/* Note directory path as not read whole. */
static void unread(struct part *p, const char *path)
{
	if (*path)
		strvadd(&p->unread, path);
}

/* A directory waiting to be read. */
struct dirjob {
	char *path; /* "" for the root */
	int depth;
	int fd;     /* opened already through its parent, or -1 */
	int fresh;  /* 1: new since the last scan, read all below; 0: read again because the change
	               feed said so: its entry is refreshed, and only subdirectories it does not
	               vouch for are read */
	uint64_t ino, dev; /* the inode its entry was stat'ed as (0: the entry is made here) */
};

/* The shared state of the walking threads: a stack of directories to read. */
struct walker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct dirjob *q;
	size_t qn, qcap;
	int busy, failed;
	int fds; /* queued jobs holding an open directory */
	int64_t entries; /* read so far, against o->max_entries */
	int rootfd;
	dev_t rootdev;
	const struct scanopt *o;
	const struct scan *prev; /* scanagain: the scan before */
	const struct scan *names; /* scanwith: the scan before, whose names stand in for reading a
	                             directory unchanged since */
	int64_t before;          /* scanwith: a directory changed at or after this (ns) is read */
	struct gitignore *gi;    /* o->gitignore: the rules read so far */
	struct strv tracked;     /* o->gitignore: the paths .git/index lists, sorted; never ignored */
	const struct scan *kept; /* o->gitignore: the scan before, whose paths are never left out for
	                            the rules (the model writes .gitignore; git ignores no tracked file) */
	struct err err;
};

enum { DBUF = 1 << 16 };

/* One walking thread: what it found, and its buffers. */
struct worker {
	struct walker *w;
	struct part p;
	pthread_t t;
	int started;
	struct buf path;
	char *dbuf; /* getdents64 records */
	const struct sent **order; /* when its walk is over: its entries not from the names scan, sorted */
	size_t norder;
};

/* A subdirectory found again where the last scan had it, same inode, under a watch still live:
 * nothing below it changed but what the feed reports, so it is not read; x takes its watch. One
 * the last scan did not read whole (unread) is read. */
static int vouched(struct walker *w, const char *path, size_t len, const struct stat *st, struct sent *x)
{
	ssize_t i = scanfind(w->prev, path, len);
	if (i < 0)
		return 0;
	const struct sent *old = &w->prev->v[i];
	if (!S_ISDIR(old->mode) || old->unread || old->ino != st->st_ino || old->dev != st->st_dev ||
	    !watchlive(w->o->watch, old->wd, path, st->st_ino))
		return 0;
	x->wd = old->wd;
	return 1;
}

/* The watch a directory read again still has: live, made for this path and inode; else -1. */
static int livewd(struct walker *w, const char *path, const struct stat *st)
{
	struct sent x = {0};
	if (*path)
		return vouched(w, path, strlen(path), st, &x) ? x.wd : -1;
	int wd = w->prev->rootwd;
	return watchlive(w->o->watch, wd, "", st->st_ino) ? wd : -1;
}

int scandircmp(const char *p, const char *dir, size_t len)
{
	int c = strncmp(p, dir, len);
	if (c)
		return c;
	unsigned char next = (unsigned char)p[len];
	return next < '/' ? -1 : next > '/' ? 1 : 0;
}

/* The entries of s under the directory path[0..len) (all of s for ""): [*lo, *hi). */
static void below(const struct scan *s, const char *path, size_t len, size_t *lo, size_t *hi)
{
	if (!len) {
		*lo = 0, *hi = s->n;
		return;
	}
	size_t a = 0, b = s->n;
	while (a < b) { /* the first entry not before "path/" */
		size_t mid = a + (b - a) / 2;
		if (scandircmp(s->v[mid].path, path, len) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	for (b = s->n; a < b;) { /* the first entry after them */
		size_t mid = a + (b - a) / 2;
		if (scandircmp(s->v[mid].path, path, len) <= 0)
			a = mid + 1;
		else
			b = mid;
	}
	*hi = b;
}

/* Whether the directory at path[0..len), with st, is as the names scan has it: same inode, type,
 * mode and times, on the root's filesystem, and last changed before that scan began by more than
 * a timestamp's granularity (a change within the tick of the last would leave the times as they
 * were). Its names are then that scan's. */
static int unchanged(const struct walker *w, const char *path, size_t len, const struct stat *st)
{
	ssize_t i = w->names ? scanfind(w->names, path, len) : -1;
	if (i < 0)
		return 0;
	const struct sent *x = &w->names->v[i];
	return !x->unread && x->mode == st->st_mode && x->ino == st->st_ino && x->dev == st->st_dev && st->st_dev == w->rootdev &&
	       x->mtime == scanns(st->st_mtim) && x->ctime == scanns(st->st_ctim) && x->ctime < w->before;
}

/* Whether path[0..len) is left out by the workspace's .gitignore rules: matched, not listed in
 * .git/index, and not recorded by the scan before (a path once in a layer stays in, as a tracked
 * file does in git, so that a rule a step adds cannot make a file it changed look deleted). */
static int ignored(const struct walker *w, const char *path, size_t len, int isdir)
{
	return w->gi && !tracked(&w->tracked, path, isdir) && gitignorematch(w->gi, path, isdir) &&
	       !(w->kept && scanfind(w->kept, path, len) >= 0);
}

/* Stat name (in directory j, open as fd; path holds j's path, base bytes of it) into k's part;
 * a subdirectory to read goes to *subs. from: the name's index in the names scan, or NONAME. */
static int entry(struct worker *k, const struct dirjob *j, int fd, const char *name, size_t base, size_t from,
                 struct dirjob **subs, size_t *nsubs, size_t *capsubs, struct err *e)
{
	struct walker *w = k->w;
	struct buf *path = &k->path;
	size_t nl = strlen(name);
	path->len = base;
	bufgrow(path, 1 + nl);
	if (base)
		path->data[path->len++] = '/';
	memcpy(path->data + path->len, name, nl + 1);
	path->len += nl;
	struct stat st;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0; /* gone since it was listed */
		return errf(e, "stat %s:", path->data);
	}
	if (excluded(w->o, path->data) || ignored(w, path->data, path->len, S_ISDIR(st.st_mode)))
		return 0;
	if (S_ISDIR(st.st_mode) && w->o->haveskip && st.st_dev == w->o->skipdev && st.st_ino == w->o->skipino)
		return 0;
	if (path->len >= PATH_MAX) { /* restore (snaprestore.c) refuses such a name, and the layer with it */
		skip(&k->p, SKIPLONG, path->data);
		return 0;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
		skip(&k->p, SKIPSPECIAL, path->data);
		return 0;
	}
	if (w->o->max_entries > 0 && __atomic_add_fetch(&w->entries, 1, __ATOMIC_RELAXED) > w->o->max_entries)
		return errf(e, "the workspace holds more than %lld entries, each counted at least %d bytes: over "
		            "snapshot.max_size", (long long)w->o->max_entries, SCANENTRYROOM);
	add(&k->p, path->data, path->len, &st, from);
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (!j->fresh && vouched(w, path->data, path->len, &st, &k->p.v[k->p.n - 1])) {
		strvadd(&k->p.kept, path->data);
		return 0;
	}
	if (j->depth + 1 >= MAXDEPTH) {
		skip(&k->p, SKIPDEEP, path->data); /* its entry is kept, not what is below it */
		return 0;
	}
	if (*nsubs == *capsubs) {
		*capsubs = *capsubs ? 2 * *capsubs : 64;
		*subs = xrealloc(*subs, *capsubs * sizeof **subs);
	}
	/* Opened here by its name, one lookup, while few are held open; else later by path. */
	int sfd = -1;
	if (__atomic_fetch_add(&w->fds, 1, __ATOMIC_RELAXED) < MAXOPEN)
		sfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		__atomic_fetch_sub(&w->fds, 1, __ATOMIC_RELAXED);
	(*subs)[(*nsubs)++] = (struct dirjob){xstrdup(path->data), j->depth + 1, sfd, 1, st.st_ino, st.st_dev};
	return 0;
}

/* The names of directory j (unchanged) from the walker's names scan, each stat'ed as read. */
static int samenames(struct worker *k, const struct dirjob *j, int fd, size_t base, struct dirjob **subs,
                     size_t *nsubs, size_t *capsubs, struct err *e)
{
	const struct scan *n = k->w->names;
	size_t lo, hi, len = strlen(j->path);
	below(n, j->path, len, &lo, &hi);
	for (size_t i = lo; i < hi;) {
		const char *rest = n->v[i].path + len + 1, *slash = strchr(rest, '/');
		if (slash) { /* below one of its subdirectories: past all of that */
			size_t a, b;
			below(n, n->v[i].path, (size_t)(slash - n->v[i].path), &a, &b);
			i = b > i ? b : i + 1;
			continue;
		}
		if (entry(k, j, fd, rest, base, i, subs, nsubs, capsubs, e) < 0)
			return -1;
		i++;
	}
	/* and the names it left out as not a file, directory or symlink, or too long (the others have
	 * entries) */
	const struct strv *sk = &n->skipped;
	size_t a = 0, b = sk->n;
	while (a < b) { /* the first not before "path/" */
		size_t mid = a + (b - a) / 2;
		if (scandircmp(sk->v[mid] + 1, j->path, len) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < sk->n && scandircmp(sk->v[a] + 1, j->path, len) == 0; a++) {
		const char *rest = sk->v[a] + len + 2;
		if ((sk->v[a][0] == SKIPSPECIAL || sk->v[a][0] == SKIPLONG) && !strchr(rest, '/') && entry(k, j, fd, rest, base, NONAME, subs, nsubs, capsubs, e) < 0)
			return -1;
	}
	return 0;
}

/* Read one directory into k's part; its subdirectories go to *subs. getdents64 rather than readdir:
 * fdopendir's checks cost three system calls a directory. */
static int readone(struct worker *k, const struct dirjob *j, struct dirjob **subs, size_t *nsubs, size_t *capsubs,
                   struct err *e)
{
	struct walker *w = k->w;
	struct watch *feed = w->o->watch;
	int fd = j->fd;
	if (fd >= 0)
		__atomic_fetch_sub(&w->fds, 1, __ATOMIC_RELAXED);
	else if (j->path[0])
		fd = openbeneath(w->rootfd, j->path, O_RDONLY | O_DIRECTORY, 0);
	else
		fd = openat(w->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && (errno == ENOENT || (!j->fresh && (errno == ENOTDIR || errno == ELOOP)))) {
		unread(&k->p, j->path);
		return 0; /* gone since it was listed, or replaced: its parent is read again too */
	}
	if (fd < 0 && j->path[0] && (errno == EACCES || errno == EPERM)) {
		skip(&k->p, SKIPUNREAD, j->path); /* its entry is kept; what it holds is unknown */
		unread(&k->p, j->path);
		return 0;
	}
	if (fd < 0)
		return errf(e, "open %s:", j->path[0] ? j->path : "workspace");
	/* Opened by path, it may be another directory than the one its entry was stat'ed as (a
	 * parent moved meanwhile): its names are read, but never reused as that entry's. */
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return errf(e, "stat %s:", j->path[0] ? j->path : "workspace");
	}
	if (j->ino && (st.st_ino != j->ino || st.st_dev != j->dev))
		unread(&k->p, j->path);
	if (w->gi)
		ignorefile(w->gi, fd, ".gitignore", j->path);
	if (feed) {
		/* Watched before it is read: a change from now on is reported (read again under the watch
		 * it had, still live for this very inode: no new one). Read again, its own entry is
		 * refreshed too (its times change with its entries; its parent may be quiet). */
		if (st.st_dev != w->rootdev)
			watchlose(feed, 1); /* a mount inside the tree: the feed cannot vouch for it */
		if (!w->o->vouchonly) {
			strvadd(&k->p.watched, j->path);
			k->p.wds = xrealloc(k->p.wds, k->p.watched.n * sizeof *k->p.wds);
			int wd = j->fresh ? -1 : livewd(w, j->path, &st);
			k->p.wds[k->p.watched.n - 1] = wd >= 0 ? wd : watchadd(feed, fd, j->path, st.st_ino);
		}
		if (!j->fresh && j->path[0])
			add(&k->p, j->path, strlen(j->path), &st, NONAME);
	}
	struct buf *path = &k->path;
	path->len = 0;
	bufputs(path, j->path);
	size_t base = path->len;
	int rc = 0;
	/* Unchanged since the names scan, checked through the very descriptor it is read by: the
	 * names are that scan's. A change from here on is seen by the next scan, as after getdents. */
	if (w->names && base && unchanged(w, j->path, base, &st)) {
		rc = samenames(k, j, fd, base, subs, nsubs, capsubs, e);
		k->p.same++;
		close(fd);
		return rc;
	}
	for (;;) {
		ssize_t got = getdents64(fd, k->dbuf, DBUF);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == ENOENT && base) {
			unread(&k->p, j->path);
			break; /* removed while read (a gc packing .git/objects/XX away): what it held is gone */
		}
		if (got < 0)
			rc = errf(e, "read directory %s:", base ? j->path : "workspace");
		if (got <= 0)
			break;
		for (ssize_t off = 0; off < got && rc == 0;) {
			const struct dirent64 *de = (const struct dirent64 *)(k->dbuf + off);
			off += de->d_reclen;
			const char *name = de->d_name;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			rc = entry(k, j, fd, name, base, NONAME, subs, nsubs, capsubs, e);
		}
		if (rc)
			break;
	}
	close(fd);
	return rc;
}

static int bypath(const void *a, const void *b)
{
	return strcmp((*(const struct sent *const *)a)->path, (*(const struct sent *const *)b)->path);
}

static void *work(void *arg)
{
	struct worker *k = arg;
	struct walker *w = k->w;
	struct dirjob *subs = NULL;
	size_t capsubs = 0;
	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (w->qn == 0 && w->busy > 0 && !w->failed)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->failed || w->qn == 0) {
			pthread_cond_broadcast(&w->cv);
			pthread_mutex_unlock(&w->mu);
			break;
		}
		struct dirjob j = w->q[--w->qn];
		w->busy++;
		pthread_mutex_unlock(&w->mu);
		struct err e = {0};
		size_t nsubs = 0;
		int rc = readone(k, &j, &subs, &nsubs, &capsubs, &e);
		free(j.path);
		pthread_mutex_lock(&w->mu);
		if (rc < 0 && !w->failed) {
			w->failed = 1;
			w->err = e;
		}
		if (w->qn + nsubs > w->qcap) {
			while (w->qn + nsubs > w->qcap)
				w->qcap = w->qcap ? 2 * w->qcap : 256;
			w->q = xrealloc(w->q, w->qcap * sizeof *w->q);
		}
		if (nsubs)
			memcpy(w->q + w->qn, subs, nsubs * sizeof *subs);
		w->qn += nsubs;
		w->busy--;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	free(subs);
	/* Each thread sorts what it found, but what came from the names scan (walk puts those in its
	 * order): pointers, as an entry is 112 bytes. walk merges the runs. */
	k->order = xmalloc((k->p.n + 1) * sizeof *k->order);
	for (size_t i = 0; i < k->p.n; i++)
		if (k->p.from[i] == NONAME)
			k->order[k->norder++] = &k->p.v[i];
	if (k->norder)
		qsort(k->order, k->norder, sizeof *k->order, bypath);
	return NULL;
}

static void partfree(struct part *p)
{
	for (size_t i = 0; i < p->nblocks; i++)
		free(p->blocks[i]);
	free(p->blocks);
	free(p->v);
	free(p->from);
	strvfree(&p->skipped);
	strvfree(&p->watched);
	free(p->wds);
	strvfree(&p->kept);
	strvfree(&p->unread);
}

static int bystring(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Skipped strings by path, after the kind. */
static int byskip(const void *a, const void *b)
{
	int c = strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
	return c ? c : (unsigned char)**(char *const *)a - (unsigned char)**(char *const *)b;
}

struct inode {
	uint64_t dev, ino;
	size_t i;
};

/* Order by inode, then by path index. */
static int byinode(const void *a, const void *b)
{
	const struct inode *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Tie the paths of each inode with several links to the first of them. */
static void hardlinks(struct scan *s)
{
	struct inode *v = xmalloc((s->n + 1) * sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		if (S_ISREG(s->v[i].mode) && s->v[i].nlink > 1)
			v[k++] = (struct inode){s->v[i].dev, s->v[i].ino, i};
	qsort(v, k, sizeof *v, byinode);
	for (size_t j = 0; j < k; j++) {
		size_t first = v[j].i;
		if (j > 0 && v[j - 1].dev == v[j].dev && v[j - 1].ino == v[j].ino)
			first = (size_t)s->v[v[j - 1].i].link;
		s->v[v[j].i].link = (int32_t)first;
	}
	free(v);
}

/* What the walk found beside the entries. */
struct found {
	struct strv skipped, watched, kept, unread;
	int *wds;
};

static void foundfree(struct found *f)
{
	strvfree(&f->unread);
	strvfree(&f->skipped);
	strvfree(&f->watched);
	strvfree(&f->kept);
	free(f->wds);
}

/* Read the directories of seeds (taken) and all they lead to, in parallel, into s: sorted by
 * path, each path once. */
static int walk(struct scan *s, struct walker *w, struct dirjob *seeds, size_t nseeds, int whole, struct found *f,
                struct err *e)
{
	memset(f, 0, sizeof *f);
	int n = w->o->threads;
	if (n <= 0) {
		/* With the tree in the cache a walk is stat calls that the CPU does, and the layer is
		 * compressed after it, not during it. A walk of the whole tree takes a walker per CPU, up
		 * to 4: on 2 CPUs at load 2, 100,000 entries took 232 ms with two and 356 ms with one
		 * (best of 5 each). A walk again of the few folders the change feed names is over
		 * before a second thread has started: one. */
		long c = ncpus();
		n = !whole ? 1 : c < 1 ? 1 : c > 4 ? 4 : (int)c;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->qcap = nseeds > 256 ? nseeds : 256;
	w->q = xmalloc(w->qcap * sizeof *w->q);
	memcpy(w->q, seeds, nseeds * sizeof *seeds);
	w->qn = nseeds;
	struct worker *k = xcalloc(n, sizeof *k);
	for (int i = 0; i < n; i++) {
		k[i].w = w;
		k[i].dbuf = xmalloc(DBUF);
		if (i > 0)
			k[i].started = pthread_create(&k[i].t, NULL, work, &k[i]) == 0;
	}
	work(&k[0]);
	for (int i = 1; i < n; i++)
		if (k[i].started)
			pthread_join(k[i].t, NULL);
	for (int i = 0; i < n; i++) {
		free(k[i].dbuf);
		buffree(&k[i].path);
	}
	for (size_t i = 0; i < w->qn; i++) {
		if (w->q[i].fd >= 0)
			close(w->q[i].fd);
		free(w->q[i].path);
	}
	free(w->q);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	if (w->failed) {
		*e = w->err;
		for (int i = 0; i < n; i++) {
			partfree(&k[i].p);
			free(k[i].order);
		}
		free(k);
		return -1;
	}
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += k[i].p.n;
	s->v = bigalloc(NULL, (total + 1) * sizeof *s->v);
	/* Runs to merge: each thread's sorted entries; what came from the names scan, in its order
	 * (placed by index: no comparisons); and any that named an index twice, sorted. */
	struct run {
		const struct sent **v;
		size_t n, at;
	} *runs = xcalloc(n + 2, sizeof *runs);
	for (int i = 0; i < n; i++)
		runs[i] = (struct run){k[i].order, k[i].norder, 0};
	struct run *held = &runs[n], *late = &runs[n + 1];
	if (w->names) {
		held->v = xcalloc(w->names->n + 1, sizeof *held->v);
		late->v = xmalloc((total + 1) * sizeof *late->v);
		for (int i = 0; i < n; i++)
			for (size_t j = 0; j < k[i].p.n; j++) {
				size_t from = k[i].p.from[j];
				if (from == NONAME)
					continue;
				if (from < w->names->n && !held->v[from])
					held->v[from] = &k[i].p.v[j];
				else
					late->v[late->n++] = &k[i].p.v[j];
			}
		for (size_t j = 0; j < w->names->n; j++)
			if (held->v[j])
				held->v[held->n++] = held->v[j];
		if (late->n)
			qsort(late->v, late->n, sizeof *late->v, bypath);
	}
	for (;;) {
		struct run *best = NULL;
		for (int i = 0; i < n + 2; i++)
			if (runs[i].at < runs[i].n && (!best || strcmp(runs[i].v[runs[i].at]->path, best->v[best->at]->path) < 0))
				best = &runs[i];
		if (!best)
			break;
		const struct sent *x = best->v[best->at++];
		/* Read again, a directory is found both by itself and by its parent: once is enough. */
		if (!s->n || strcmp(s->v[s->n - 1].path, x->path) != 0)
			s->v[s->n++] = *x;
	}
	free(held->v);
	free(late->v);
	free(runs);
	for (int i = 0; i < n; i++) {
		struct part *p = &k[i].p;
		s->blocks = xrealloc(s->blocks, (s->nblocks + p->nblocks + 1) * sizeof *s->blocks);
		if (p->nblocks)
			memcpy(s->blocks + s->nblocks, p->blocks, p->nblocks * sizeof *p->blocks);
		s->nblocks += p->nblocks;
		for (size_t j = 0; j < p->skipped.n; j++)
			strvadd(&f->skipped, p->skipped.v[j]);
		for (size_t j = 0; j < p->kept.n; j++)
			strvadd(&f->kept, p->kept.v[j]);
		for (size_t j = 0; j < p->unread.n; j++)
			strvadd(&f->unread, p->unread.v[j]);
		if (p->watched.n) {
			f->wds = xrealloc(f->wds, (f->watched.n + p->watched.n) * sizeof *f->wds);
			memcpy(f->wds + f->watched.n, p->wds, p->watched.n * sizeof *p->wds);
			for (size_t j = 0; j < p->watched.n; j++)
				strvadd(&f->watched, p->watched.v[j]);
		}
		s->finetime |= p->finetime;
		s->same += p->same;
		free(p->v);
		free(p->blocks);
		p->v = NULL, p->blocks = NULL, p->nblocks = 0;
		partfree(p);
		free(k[i].order);
	}
	free(k);
	return 0;
}

/* The totals, hard links, skipped list (sorted, each once) and watches of a finished scan. */
static void finish(struct scan *s, struct found *f)
{
	s->cap = s->n;
	struct strv *sk = &f->skipped;
	if (sk->n)
		qsort(sk->v, sk->n, sizeof *sk->v, byskip);
	for (size_t i = 0; i < sk->n; i++)
		if (i == 0 || strcmp(sk->v[i], sk->v[i - 1]) != 0)
			strvadd(&s->skipped, sk->v[i]);
	hardlinks(s);
	s->bytes = s->used = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (S_ISREG(s->v[i].mode) && s->v[i].link >= 0 && s->v[i].link != (int32_t)i)
			continue; /* a hard link's file counts once */
		int64_t room = s->v[i].blocks * 512;
		s->used += room > SCANENTRYROOM ? room : SCANENTRYROOM;
		if (S_ISREG(s->v[i].mode))
			s->bytes += s->v[i].size;
	}
	for (size_t i = 0; i < f->unread.n; i++) {
		ssize_t j = scanfind(s, f->unread.v[i], strlen(f->unread.v[i]));
		if (j >= 0)
			s->v[j].unread = 1;
	}
	for (size_t i = 0; i < f->watched.n; i++) {
		const char *p = f->watched.v[i];
		ssize_t j = *p ? scanfind(s, p, strlen(p)) : -1;
		if (!*p)
			s->rootwd = f->wds[i];
		else if (j >= 0)
			s->v[j].wd = f->wds[i];
	}
}

static int64_t nowns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	return scanns(now);
}

/* Set up a walker; with a change feed, the root's device bounds what it vouches for. */
static int walkerinit(struct walker *w, int rootfd, const struct scanopt *o, struct err *e)
{
	memset(w, 0, sizeof *w);
	w->rootfd = rootfd;
	w->o = o;
	struct stat st;
	if (o->watch && fstat(rootfd, &st) < 0)
		return errf(e, "stat workspace:");
	w->rootdev = o->watch ? st.st_dev : 0;
	return 0;
}

/* A walk of the whole tree; with names, a directory unchanged since is not read (unchanged). */
static int scanall(struct scan *s, int rootfd, const struct scanopt *o, const struct scan *names,
                   const struct scan *kept, struct err *e)
{
	memset(s, 0, sizeof *s);
	s->rootwd = -1;
	s->start = nowns();
	struct walker w;
	if (walkerinit(&w, rootfd, o, e) < 0)
		return -1;
	struct stat st;
	if (names && fstat(rootfd, &st) == 0) {
		w.names = names;
		w.rootdev = st.st_dev;
		w.before = names->start - (names->finetime ? RACYFINE : RACYCOARSE);
	}
	if (o->gitignore && trackedread(rootfd, &w.tracked) >= 0) { /* an unreadable index: nothing ignored */
		w.gi = gitignorenew();
		w.kept = kept;
		int info = openbeneath(rootfd, ".git/info", O_RDONLY | O_DIRECTORY, 0);
		if (info >= 0) {
			ignorefile(w.gi, info, "exclude", "");
			close(info);
		}
	}
	struct dirjob root = {xstrdup(""), 0, -1, 1, 0, 0};
	struct found f;
	int rc = walk(s, &w, &root, 1, 1, &f, e);
	if (rc == 0)
		finish(s, &f);
	foundfree(&f);
	gitignorefree(w.gi);
	strvfree(&w.tracked);
	return rc < 0 ? -1 : 0;
}

int scanrun(struct scan *s, int rootfd, const struct scanopt *o, struct err *e)
{
	return scanall(s, rootfd, o, NULL, NULL, e);
}

int scanwith(struct scan *s, int rootfd, const struct scanopt *o, const struct scan *prev, struct err *e)
{
	/* Not with the feed (its watches are added as each directory is read), nor where a changed
	 * .gitignore changes what is below it, nor where directory times cannot be trusted. */
	int use = !o->watch && !o->gitignore && watchlocal(rootfd);
	return scanall(s, rootfd, o, use ? prev : NULL, prev, e);
}

static int instrv(const struct strv *v, const char *s)
{
	size_t a = 0, b = v->n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		int c = strcmp(v->v[mid], s);
		if (c == 0)
			return 1;
		if (c < 0)
			a = mid + 1;
		else
			b = mid;
	}
	return 0;
}

/* The directory part of path, "" at the top. */
static char *parentof(const char *path)
{
	const char *slash = strrchr(path, '/');
	return xstrndup(path, slash ? (size_t)(slash - path) : 0);
}

int scanagain(struct scan *s, int rootfd, const struct scanopt *o, const struct scan *prev, const struct strv *dirty,
              struct err *e)
{
	if (o->gitignore) /* a changed .gitignore changes what is below it too: all of it read */
		return scanall(s, rootfd, o, NULL, prev, e);
	memset(s, 0, sizeof *s);
	s->rootwd = prev->rootwd;
	s->start = nowns();
	struct walker w;
	if (walkerinit(&w, rootfd, o, e) < 0)
		return -1;
	w.prev = prev;
	/* Read again: what the feed names, and where a file with other links is (a change through
	 * a link elsewhere is reported there, not here). */
	struct strv dirs = {0};
	for (size_t i = 0; i < dirty->n; i++)
		strvadd(&dirs, dirty->v[i]);
	for (size_t i = 0; i < prev->n; i++)
		if (S_ISREG(prev->v[i].mode) && prev->v[i].nlink > 1) {
			char *d = parentof(prev->v[i].path);
			strvadd(&dirs, d);
			free(d);
		}
	if (dirs.n)
		qsort(dirs.v, dirs.n, sizeof *dirs.v, bystring);
	struct strv uniq = {0};
	for (size_t i = 0; i < dirs.n; i++)
		if (i == 0 || strcmp(dirs.v[i], dirs.v[i - 1]) != 0)
			strvadd(&uniq, dirs.v[i]);
	strvfree(&dirs);
	struct dirjob *seeds = xmalloc((uniq.n + 1) * sizeof *seeds);
	for (size_t i = 0; i < uniq.n; i++) {
		int depth = 0; /* as deep as the walk from the root would have found it */
		for (const char *c = uniq.v[i]; *c; c++)
			depth += c == uniq.v[i] || *c == '/';
		seeds[i] = (struct dirjob){xstrdup(uniq.v[i]), depth, -1, 0, 0, 0};
	}
	struct scan fresh = {0};
	struct found f;
	int rc = walk(&fresh, &w, seeds, uniq.n, uniq.n >= 256 || !prev->n, &f, e);
	free(seeds);
	if (rc < 0) {
		foundfree(&f);
		strvfree(&uniq);
		scanfree(&fresh);
		return -1;
	}
	if (f.kept.n)
		qsort(f.kept.v, f.kept.n, sizeof *f.kept.v, bystring);
	/* Of the last scan, left out: the entries of every directory read again, and all below
	 * those of its subdirectories that were read whole or are gone. */
	uint8_t *drop = xcalloc(prev->n + 1, 1);
	struct strv gone = {0}; /* directories left out with all below them */
	for (size_t d = 0; d < uniq.n; d++) {
		size_t lo, hi, plen = strlen(uniq.v[d]);
		below(prev, uniq.v[d], plen, &lo, &hi);
		for (size_t i = lo; i < hi; i++) {
			const char *rest = prev->v[i].path + (plen ? plen + 1 : 0);
			if (strchr(rest, '/'))
				continue;
			drop[i] = 1;
			if (S_ISDIR(prev->v[i].mode) && !instrv(&f.kept, prev->v[i].path)) {
				size_t a, b;
				below(prev, prev->v[i].path, strlen(prev->v[i].path), &a, &b);
				memset(drop + a, 1, b - a);
				strvadd(&gone, prev->v[i].path);
			}
		}
	}
	/* Skipped entries of the last scan stay unless their directory, or one above it, was read
	 * again or left out. */
	if (gone.n)
		qsort(gone.v, gone.n, sizeof *gone.v, bystring);
	for (size_t i = 0; i < prev->skipped.n; i++) {
		char *d = parentof(prev->skipped.v[i] + 1);
		int stays = !instrv(&uniq, d);
		for (char *c = d; stays && *c;) {
			stays = !instrv(&gone, d);
			char *slash = strrchr(d, '/');
			if (slash)
				*slash = 0;
			else
				*c = 0;
		}
		if (stays)
			strvadd(&f.skipped, prev->skipped.v[i]);
		free(d);
	}
	strvfree(&gone);
	strvfree(&uniq);
	/* Merge: what was read now wins over what was kept. One array, sized once, and only the
	 * path bytes of a kept entry copied: a step that changed one file costs a pass over prev. */
	size_t nkept = 0;
	for (size_t i = 0; i < prev->n; i++)
		nkept += !drop[i];
	struct part kp = {0}; /* the kept entries' paths */
	s->v = bigalloc(NULL, (fresh.n + nkept + 1) * sizeof *s->v);
	size_t i = 0, j = 0;
	for (;;) {
		while (j < prev->n && drop[j])
			j++;
		if (i == fresh.n && j == prev->n)
			break;
		int c = i == fresh.n ? 1 : j == prev->n ? -1 : strcmp(fresh.v[i].path, prev->v[j].path);
		if (c <= 0) {
			s->v[s->n++] = fresh.v[i++];
		} else {
			struct sent *y = &s->v[s->n++];
			*y = prev->v[j];
			y->path = pathput(&kp, y->path, strlen(y->path));
		}
		if (c >= 0)
			j++;
	}
	free(drop);
	s->finetime = prev->finetime | fresh.finetime;
	s->blocks = xmalloc((fresh.nblocks + kp.nblocks + 1) * sizeof *s->blocks);
	memcpy(s->blocks, fresh.blocks, fresh.nblocks * sizeof *s->blocks);
	if (kp.nblocks)
		memcpy(s->blocks + fresh.nblocks, kp.blocks, kp.nblocks * sizeof *s->blocks);
	s->nblocks = fresh.nblocks + kp.nblocks;
	free(fresh.v);
	free(fresh.blocks);
	free(kp.blocks);
	finish(s, &f);
	foundfree(&f);
	return 0;
}

int scanunknown(const struct scan *s, const char *path)
{
	for (size_t i = 0; i < s->skipped.n; i++) {
		const char *k = s->skipped.v[i];
		size_t n = strlen(k + 1);
		if (*k != SKIPSPECIAL && strncmp(path, k + 1, n) == 0 && path[n] == '/')
			return 1;
	}
	return 0;
}

const char *scanwhy(int kind)
{
	switch (kind) {
	case SKIPSPECIAL:
		return "not a file, directory or symlink";
	case SKIPDEEP:
		return "directories nest deeper than 256 levels: what is below is not stored";
	case SKIPUNREAD:
		return "a directory that cannot be read: what is below is not stored";
	case SKIPLONG:
		return "a path of 4096 bytes or more, which no restore takes: not stored";
	}
	return "left out";
}

ssize_t scanfind(const struct scan *s, const char *path, size_t len)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *p = s->v[mid].path;
		int c = strncmp(p, path, len);
		if (c == 0)
			c = p[len] ? 1 : 0;
		if (c == 0)
			return (ssize_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void scanfree(struct scan *s)
{
	free(s->v);
	for (size_t i = 0; i < s->nblocks; i++)
		free(s->blocks[i]);
	free(s->blocks);
	strvfree(&s->skipped);
	memset(s, 0, sizeof *s);
}
