/* scan: one walk of a workspace into a path-sorted list of entries with the stat fields that
 * detect change, never following a symlink. */
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "scan.h"
#include "../runner/glob.h"

enum { MAXDEPTH = 256, MAXOPEN = 256 /* directories held open in the queue */ };

int openbeneath(int rootfd, const char *path, int flags)
{
	static int noopenat2;
	if (!noopenat2) {
		struct open_how how = {
			.flags = (uint64_t)flags | O_NOFOLLOW | O_CLOEXEC,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		int fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof how);
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
		noopenat2 = 1;
	}
	/* Without openat2: one component at a time, none of them a symlink. */
	if (path[0] == '/')
		return errno = EXDEV, -1;
	char *p = xstrdup(path);
	int dfd = rootfd, fd = -1;
	for (char *c = p;;) {
		char *slash = strchr(c, '/');
		if (slash)
			*slash = 0;
		if (strcmp(c, "..") == 0) {
			errno = EXDEV;
			break;
		}
		if (!slash) {
			fd = openat(dfd, *c ? c : ".", flags | O_NOFOLLOW | O_CLOEXEC);
			break;
		}
		int next = *c ? openat(dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : dup(dfd);
		if (next < 0)
			break;
		if (dfd != rootfd)
			close(dfd);
		dfd = next;
		c = slash + 1;
	}
	int saved = errno;
	if (dfd != rootfd)
		close(dfd);
	free(p);
	errno = saved;
	return fd;
}

static int excluded(const struct scanopt *o, const char *path)
{
	for (size_t i = 0; o->exclude && i < o->exclude->n; i++)
		if (globpath(o->exclude->v[i], path))
			return 1;
	return 0;
}

static int64_t ns(struct timespec t)
{
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
};

static void add(struct part *p, const char *path, size_t len, const struct stat *st)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		p->v = xrealloc(p->v, p->cap * sizeof *p->v);
	}
	if (len + 1 > p->left) {
		size_t n = len + 1 > 65536 ? len + 1 : 65536;
		p->blocks = xrealloc(p->blocks, (p->nblocks + 1) * sizeof *p->blocks);
		p->blocks[p->nblocks++] = p->cur = xmalloc(n);
		p->left = n;
	}
	memcpy(p->cur, path, len + 1);
	struct sent *x = &p->v[p->n++];
	memset(x, 0, sizeof *x);
	x->path = p->cur;
	p->cur += len + 1;
	p->left -= len + 1;
	x->mode = st->st_mode;
	x->nlink = st->st_nlink;
	x->size = S_ISDIR(st->st_mode) ? 0 : st->st_size;
	x->mtime = ns(st->st_mtim);
	x->ctime = ns(st->st_ctim);
	x->ino = st->st_ino;
	x->dev = st->st_dev;
	x->link = -1;
	if (st->st_mtim.tv_nsec || st->st_ctim.tv_nsec)
		p->finetime = 1;
}

/* A directory waiting to be read. */
struct dirjob {
	char *path; /* "" for the root */
	int depth;
	int fd;     /* opened already through its parent, or -1 */
};

/* The shared state of the walking threads: a stack of directories to read. */
struct walker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct dirjob *q;
	size_t qn, qcap;
	int busy, failed;
	int fds; /* queued jobs holding an open directory */
	int rootfd;
	const struct scanopt *o;
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
};

/* Read one directory into k's part; its subdirectories go to *subs. getdents64 rather than readdir:
 * fdopendir's checks cost three system calls a directory. */
static int readone(struct worker *k, const struct dirjob *j, struct dirjob **subs, size_t *nsubs, size_t *capsubs,
                   struct err *e)
{
	struct walker *w = k->w;
	int fd = j->fd;
	if (fd >= 0)
		__atomic_fetch_sub(&w->fds, 1, __ATOMIC_RELAXED);
	else if (j->path[0])
		fd = openbeneath(w->rootfd, j->path, O_RDONLY | O_DIRECTORY);
	else
		fd = openat(w->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : errf(e, "open %s:", j->path[0] ? j->path : "workspace");
	struct buf *path = &k->path;
	path->len = 0;
	bufputs(path, j->path);
	size_t base = path->len;
	int rc = 0;
	for (;;) {
		ssize_t got = getdents64(fd, k->dbuf, DBUF);
		if (got < 0 && errno == EINTR)
			continue;
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
			path->len = base;
			if (base)
				bufputc(path, '/');
			bufputs(path, name);
			struct stat st;
			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				if (errno == ENOENT)
					continue; /* gone since it was listed */
				rc = errf(e, "stat %s:", path->data);
				break;
			}
			if (excluded(w->o, path->data))
				continue;
			if (S_ISDIR(st.st_mode) && w->o->haveskip && st.st_dev == w->o->skipdev && st.st_ino == w->o->skipino)
				continue;
			if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
				strvadd(&k->p.skipped, path->data);
				continue;
			}
			add(&k->p, path->data, path->len, &st);
			if (!S_ISDIR(st.st_mode))
				continue;
			if (j->depth + 1 >= MAXDEPTH) {
				rc = errf(e, "%s: directories nest deeper than %d levels", path->data, MAXDEPTH);
				break;
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
			(*subs)[(*nsubs)++] = (struct dirjob){xstrdup(path->data), j->depth + 1, sfd};
		}
		if (rc)
			break;
	}
	close(fd);
	return rc;
}

static int bypath(const void *a, const void *b)
{
	return strcmp(((const struct sent *)a)->path, ((const struct sent *)b)->path);
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
	/* Each thread sorts what it found; scanrun merges the runs. */
	if (k->p.n)
		qsort(k->p.v, k->p.n, sizeof *k->p.v, bypath);
	return NULL;
}

static void partfree(struct part *p)
{
	for (size_t i = 0; i < p->nblocks; i++)
		free(p->blocks[i]);
	free(p->blocks);
	free(p->v);
	strvfree(&p->skipped);
}

static int bystring(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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

int scanrun(struct scan *s, int rootfd, const struct scanopt *o, struct err *e)
{
	memset(s, 0, sizeof *s);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	s->start = ns(now);
	int n = o->threads;
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c < 1 ? 1 : c > 4 ? 4 : (int)c;
	}
	struct walker w = {.rootfd = rootfd, .o = o};
	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	w.qcap = 256;
	w.q = xmalloc(w.qcap * sizeof *w.q);
	w.q[w.qn++] = (struct dirjob){xstrdup(""), 0, -1};
	struct worker *k = xcalloc(n, sizeof *k);
	for (int i = 0; i < n; i++) {
		k[i].w = &w;
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
	for (size_t i = 0; i < w.qn; i++) {
		if (w.q[i].fd >= 0)
			close(w.q[i].fd);
		free(w.q[i].path);
	}
	free(w.q);
	pthread_mutex_destroy(&w.mu);
	pthread_cond_destroy(&w.cv);
	if (w.failed) {
		*e = w.err;
		for (int i = 0; i < n; i++)
			partfree(&k[i].p);
		free(k);
		return -1;
	}
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += k[i].p.n;
	s->v = xmalloc((total + 1) * sizeof *s->v);
	size_t *at = xcalloc(n, sizeof *at);
	while (s->n < total) {
		int best = -1;
		for (int i = 0; i < n; i++)
			if (at[i] < k[i].p.n && (best < 0 || strcmp(k[i].p.v[at[i]].path, k[best].p.v[at[best]].path) < 0))
				best = i;
		s->v[s->n++] = k[best].p.v[at[best]++];
	}
	free(at);
	for (int i = 0; i < n; i++) {
		struct part *p = &k[i].p;
		s->blocks = xrealloc(s->blocks, (s->nblocks + p->nblocks + 1) * sizeof *s->blocks);
		if (p->nblocks)
			memcpy(s->blocks + s->nblocks, p->blocks, p->nblocks * sizeof *p->blocks);
		s->nblocks += p->nblocks;
		for (size_t j = 0; j < p->skipped.n; j++)
			strvadd(&s->skipped, p->skipped.v[j]);
		s->finetime |= p->finetime;
		free(p->v);
		free(p->blocks);
		strvfree(&p->skipped);
	}
	free(k);
	s->cap = s->n;
	if (s->skipped.n)
		qsort(s->skipped.v, s->skipped.n, sizeof *s->skipped.v, bystring);
	hardlinks(s);
	for (size_t i = 0; i < s->n; i++)
		if (S_ISREG(s->v[i].mode) && (s->v[i].link < 0 || s->v[i].link == (int32_t)i))
			s->bytes += s->v[i].size;
	return 0;
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
