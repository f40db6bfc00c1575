/* protect: what no step and no file tool may change. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../util/glob.h"
#include "gitmeta.h"
#include "protect.h"

static int haswild(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

/* rel as a workspace-relative path ("./x", "/workspace/x" and trailing slashes taken off), or
 * NULL when it is none (absolute, "..", empty). */
static char *normal(const char *rel)
{
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	if (strncmp(rel, "/workspace/", 11) == 0)
		rel += 11;
	char *n = xstrdup(rel);
	size_t len = strlen(n);
	while (len > 0 && n[len - 1] == '/')
		n[--len] = 0;
	if (!*n || n[0] == '/' || strstr(n, "//") || strcmp(n, "..") == 0 || strncmp(n, "../", 3) == 0 ||
	    strstr(n, "/../") || (len >= 3 && strcmp(n + len - 3, "/..") == 0)) {
		free(n);
		return NULL;
	}
	return n;
}

/* Add rel (made normalised: no "./", no trailing '/', no empty segment) unless it is listed. */
static void addpath(struct protect *p, const char *rel)
{
	char *n = normal(rel);
	if (!n)
		return;
	for (size_t i = 0; i < p->paths.n; i++)
		if (strcmp(p->paths.v[i], n) == 0) {
			free(n);
			return;
		}
	strvadd(&p->paths, n);
	free(n);
}

void protectinit(struct protect *p, const struct manifest *m, const char *ws, const char *hidden,
                 const struct sandboxconf *sc)
{
	memset(p, 0, sizeof *p);
	char *real = realpath(ws, NULL);
	size_t rl = real ? strlen(real) : 0;
	for (size_t i = 0; real && m && i < m->files.n; i++) {
		char *f = realpath(m->files.v[i], NULL);
		if (f && strncmp(f, real, rl) == 0 && f[rl] == '/')
			addpath(p, f + rl + 1);
		free(f);
	}
	addpath(p, ".git/config");
	addpath(p, ".git/hooks");
	addpath(p, ".git/info");
	if (hidden)
		addpath(p, hidden);
	int wfd = real ? open(real, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	struct stat st;
	for (size_t i = 0; sc && i < sc->protect.n; i++) {
		if (haswild(sc->protect.v[i])) {
			strvadd(&p->globs, sc->protect.v[i]);
			continue;
		}
		addpath(p, sc->protect.v[i]);
		char *n = normal(sc->protect.v[i]);
		if (n && wfd >= 0 && fstatat(wfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			strvadd(&p->absent, n); /* nothing to bind: protectmade watches it */
		free(n);
	}
	if (wfd >= 0)
		close(wfd);
	free(real);
}

void protecthooks(const char *ws)
{
	char *real = realpath(ws, NULL);
	int wfd = real ? open(real, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	struct stat st;
	if (wfd >= 0 && fstatat(wfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		int g = openat(wfd, ".git", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (g >= 0) {
			mkdirat(g, "hooks", 0755);
			mkdirat(g, "info", 0755);
			close(g);
		}
	}
	if (wfd >= 0)
		close(wfd);
	free(real);
}

/* The walk of protectlinks: nftw has no argument for its callback, and jobs walk at once. */
struct linkname {
	dev_t dev;
	ino_t ino;
	nlink_t nlink;
	char *path;
};
struct linkwalk {
	size_t root, n, cap;
	const char *hidden;
	struct linkname *v;
};
static __thread struct linkwalk *walking;

static int linkvisit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct linkwalk *w = walking;
	(void)ftw;
	const char *rel = strlen(path) > w->root ? path + w->root + 1 : "";
	if (type == FTW_D && w->hidden && strcmp(rel, w->hidden) == 0)
		return FTW_SKIP_SUBTREE;
	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_nlink < 2)
		return FTW_CONTINUE;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->v = xrealloc(w->v, w->cap * sizeof *w->v);
	}
	w->v[w->n++] = (struct linkname){st->st_dev, st->st_ino, st->st_nlink, xstrdup(rel)};
	return FTW_CONTINUE;
}

static int cmpinode(const void *a, const void *b)
{
	const struct linkname *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int protectlinks(struct protect *p, const char *ws, const char *hidden, size_t cap, struct err *e)
{
	char *real = realpath(ws, NULL);
	if (!real)
		return errf(e, "workspace %s:", ws);
	struct linkwalk w = {strcmp(real, "/") == 0 ? 0 : strlen(real), 0, 0, hidden, NULL};
	walking = &w;
	/* no symlink followed, no other file system entered (a hard link never crosses one) */
	int rc = 0, walked = nftw(real, linkvisit, 64, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
	walking = NULL;
	if (walked < 0) /* what was found is still bound; the caller warns */
		errf(e, "the search for hard links did not see all of the workspace %s:", real);
	if (w.n)
		qsort(w.v, w.n, sizeof *w.v, cmpinode);
	for (size_t i = 0, j; rc == 0 && i < w.n; i = j) {
		for (j = i + 1; j < w.n && w.v[j].dev == w.v[i].dev && w.v[j].ino == w.v[i].ino; j++)
			;
		if (w.v[i].nlink <= j - i)
			continue; /* every name of it is inside */
		for (size_t k = i; k < j; k++)
			strvadd(&p->linked, w.v[k].path);
	}
	if (rc == 0 && p->linked.n > cap) {
		rc = errf(e, "the workspace %s holds %zu files with hard links outside it (%s, ...), more than the %zu "
		          "that can be bound read-only: break the links first (cp without --link, git clone "
		          "--no-hardlinks, UV_LINK_MODE=copy, pnpm's package-import-method copy)",
		          real, p->linked.n, p->linked.v[0], cap);
	}
	if (p->linked.n > 1)
		qsort(p->linked.v, p->linked.n, sizeof *p->linked.v, cmpstr);
	for (size_t i = 0; i < w.n; i++)
		free(w.v[i].path);
	free(w.v);
	free(real);
	return rc < 0 ? -1 : walked < 0 ? 1 : 0;
}

const char *protectmatch(const struct protect *p, const char *path)
{
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	for (size_t i = 0; i < p->linked.n; i++)
		if (strcmp(path, p->linked.v[i]) == 0)
			return p->linked.v[i];
	for (size_t i = 0; i < p->paths.n; i++) {
		size_t n = strlen(p->paths.v[i]);
		if (strncmp(path, p->paths.v[i], n) == 0 && (path[n] == 0 || path[n] == '/'))
			return p->paths.v[i];
	}
	for (size_t i = 0; i < p->globs.n; i++)
		if (globpath(p->globs.v[i], path))
			return p->globs.v[i];
	if (gitmetapath(path))
		return "git's metadata: what git reads as configuration or runs as code";
	return NULL;
}

/* Is rel under ws a real entry of the workspace, no component a symlink? Sets *dir. */
static int plain(int wfd, const char *rel, int *dir)
{
	char *c = xstrdup(rel), *s = c;
	int ok = 1;
	for (;;) {
		char *slash = strchr(s, '/');
		if (slash)
			*slash = 0;
		struct stat st;
		if (fstatat(wfd, c, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK(st.st_mode) ||
		    (slash && !S_ISDIR(st.st_mode)) || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))) {
			ok = 0;
			break;
		}
		*dir = S_ISDIR(st.st_mode);
		if (!slash)
			break;
		*slash = '/';
		s = slash + 1;
	}
	free(c);
	return ok;
}

static void addmount(struct sandboxconf *sc, const char *ws, const char *rel, int rw)
{
	for (size_t i = 0; i < sc->nmounts; i++) /* bound once; read-only when any says so */
		if (strncmp(sc->mounts[i].target, "/workspace/", 11) == 0 && strcmp(sc->mounts[i].target + 11, rel) == 0) {
			sc->mounts[i].rw &= rw;
			return;
		}
	sc->mounts = xrealloc(sc->mounts, (sc->nmounts + 1) * sizeof *sc->mounts);
	struct mount *mt = &sc->mounts[sc->nmounts++];
	memset(mt, 0, sizeof *mt);
	mt->source = pathjoin(ws, rel);
	mt->target = xasprintf("/workspace/%s", rel);
	mt->rw = rw;
}

void protectmounts(const struct protect *p, const char *ws, struct sandboxconf *sc)
{
	int wfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (wfd < 0)
		return;
	for (size_t i = 0; i < p->paths.n; i++) {
		const char *rel = p->paths.v[i];
		int dir = 0;
		if (!plain(wfd, rel, &dir))
			continue; /* missing, or through a link: nothing to bind (the file tools still refuse it) */
		/* Each parent bound onto itself: a mount point cannot be renamed or removed. */
		char *c = xstrdup(rel);
		for (char *s = strchr(c, '/'); s; s = strchr(s + 1, '/')) {
			*s = 0;
			addmount(sc, ws, c, 1);
			*s = '/';
		}
		free(c);
		addmount(sc, ws, rel, 0);
	}
	for (size_t i = 0; i < p->linked.n; i++) {
		int dir = 0;
		if (plain(wfd, p->linked.v[i], &dir) && !dir)
			addmount(sc, ws, p->linked.v[i], 0);
	}
	close(wfd);
}

const char *protectmade(const struct protect *p, int wsfd)
{
	struct stat st;
	for (size_t i = 0; i < p->absent.n; i++)
		if (fstatat(wsfd, p->absent.v[i], &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			return p->absent.v[i];
	return NULL;
}

void protectfree(struct protect *p)
{
	strvfree(&p->absent);
	strvfree(&p->paths);
	strvfree(&p->globs);
	strvfree(&p->linked);
}
