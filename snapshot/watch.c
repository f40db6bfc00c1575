/* watch: which directories of a workspace to read again, from inotify.
 *
 * Every directory the scan reads gets a watch for every kind of change to it or its entries:
 * create, delete, move, write, attribute change, a close after writing, and any open of a
 * file (a file mapped for writing is changed without a write call, but was opened). A
 * directory with an event is read again whole, and so is its parent when the event is about
 * the directory itself. Watches are kept in a table by descriptor with the path and inode they
 * were made for; one whose directory was moved or deleted is dead from its first such event,
 * so a directory found at a path later is trusted only when a live watch for that very path
 * and inode exists. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "watch.h"

#define MASK (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_OPEN | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | \
              IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

struct wdent {
	char *path; /* NULL: not ours, or dead */
	uint64_t ino;
};

struct watch {
	int fd;
	pthread_mutex_t mu;
	struct wdent *v; /* by watch descriptor */
	size_t n;
	int lost;
	int broken; /* for good: a watch limit, or a mount inside the tree */
	struct strv dirty;
};

int watchlocal(int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs) < 0)
		return 0;
	switch ((unsigned long)fs.f_type) {
	case 0xEF53UL:     /* ext2/3/4 */
	case 0x58465342UL: /* xfs */
	case 0x9123683EUL: /* btrfs */
	case 0x01021994UL: /* tmpfs */
	case 0xF2F52010UL: /* f2fs */
		return 1;
	}
	return 0;
}

struct watch *watchopen(int rootfd)
{
	if (!watchlocal(rootfd))
		return NULL;
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct watch *w = xcalloc(1, sizeof *w);
	w->fd = fd;
	pthread_mutex_init(&w->mu, NULL);
	return w;
}

int watchadd(struct watch *w, int fd, const char *path, uint64_t ino)
{
	char proc[40];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	int wd = inotify_add_watch(w->fd, proc, MASK);
	pthread_mutex_lock(&w->mu);
	if (wd < 0) {
		w->lost = w->broken = 1;
	} else {
		if ((size_t)wd >= w->n) {
			size_t n = w->n ? w->n : 256;
			while (n <= (size_t)wd)
				n *= 2;
			w->v = xrealloc(w->v, n * sizeof *w->v);
			memset(w->v + w->n, 0, (n - w->n) * sizeof *w->v);
			w->n = n;
		}
		free(w->v[wd].path);
		w->v[wd] = (struct wdent){xstrdup(path), ino};
	}
	pthread_mutex_unlock(&w->mu);
	return wd;
}

int watchlive(struct watch *w, int wd, const char *path, uint64_t ino)
{
	pthread_mutex_lock(&w->mu);
	int live = wd >= 0 && (size_t)wd < w->n && w->v[wd].path && w->v[wd].ino == ino &&
	           strcmp(w->v[wd].path, path) == 0;
	pthread_mutex_unlock(&w->mu);
	return live;
}

static void mark(struct watch *w, const char *path, size_t len)
{
	const char *last = w->dirty.n ? w->dirty.v[w->dirty.n - 1] : NULL;
	if (last && strlen(last) == len && memcmp(last, path, len) == 0)
		return; /* events come in runs for one directory */
	char *p = xstrndup(path, len);
	strvadd(&w->dirty, p);
	free(p);
}

/* The parent of a directory that itself changed; losing track when that is the root. */
static void markparent(struct watch *w, const char *path)
{
	if (!*path) {
		w->lost = 1;
		return;
	}
	const char *slash = strrchr(path, '/');
	mark(w, path, slash ? (size_t)(slash - path) : 0);
}

static void event(struct watch *w, const struct inotify_event *ev, int skipopen)
{
	if (ev->mask & (IN_Q_OVERFLOW | IN_UNMOUNT)) {
		w->lost = 1;
		return;
	}
	if (ev->wd < 0 || (size_t)ev->wd >= w->n || !w->v[ev->wd].path)
		return; /* a watch already dead: its parent saw the move or the deletion */
	struct wdent *x = &w->v[ev->wd];
	if (ev->mask & IN_IGNORED) {
		free(x->path);
		x->path = NULL;
		return;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
		markparent(w, x->path);
		free(x->path);
		x->path = NULL;
		return;
	}
	if ((ev->mask & IN_OPEN) && ((ev->mask & IN_ISDIR) || skipopen) && !(ev->mask & ~(IN_OPEN | IN_ISDIR)))
		return; /* reading a directory changes nothing; the scan's own opens are no news */
	if (ev->len)
		mark(w, x->path, strlen(x->path));
	else
		markparent(w, x->path); /* the directory itself: its entry is in its parent */
}

int watchread(struct watch *w, int skipopen)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	pthread_mutex_lock(&w->mu);
	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN)
				w->lost = 1;
			break;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			event(w, ev, skipopen);
			p += sizeof *ev + ev->len;
		}
	}
	int lost = w->lost;
	pthread_mutex_unlock(&w->mu);
	return lost ? -1 : 0;
}

static int bystring(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void watchdirty(struct watch *w, struct strv *dirty)
{
	pthread_mutex_lock(&w->mu);
	if (w->dirty.n)
		qsort(w->dirty.v, w->dirty.n, sizeof *w->dirty.v, bystring);
	for (size_t i = 0; i < w->dirty.n; i++)
		if (i == 0 || strcmp(w->dirty.v[i], w->dirty.v[i - 1]) != 0)
			strvadd(dirty, w->dirty.v[i]);
	strvfree(&w->dirty);
	pthread_mutex_unlock(&w->mu);
}

void watchkeep(struct watch *w, const struct strv *dirty)
{
	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < dirty->n; i++)
		strvadd(&w->dirty, dirty->v[i]);
	pthread_mutex_unlock(&w->mu);
}

void watchreset(struct watch *w)
{
	pthread_mutex_lock(&w->mu);
	strvfree(&w->dirty);
	w->lost = 0;
	pthread_mutex_unlock(&w->mu);
}

void watchlose(struct watch *w, int forgood)
{
	pthread_mutex_lock(&w->mu);
	w->lost = 1;
	w->broken |= forgood;
	pthread_mutex_unlock(&w->mu);
}

int watchbroken(struct watch *w)
{
	pthread_mutex_lock(&w->mu);
	int b = w->broken;
	pthread_mutex_unlock(&w->mu);
	return b;
}

void watchclose(struct watch *w)
{
	if (!w)
		return;
	close(w->fd);
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].path);
	free(w->v);
	strvfree(&w->dirty);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
