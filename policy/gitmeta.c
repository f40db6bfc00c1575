/* gitmeta: git's metadata kept before a step and put back after it. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../util/beneath.h"
#include "../util/path.h"
#include "gitmeta.h"

/* How deep the walk goes: past any path git can open (PATH_MAX bytes, two a folder at least). */
enum { GITDEPTHMAX = PATH_MAX / 2 + 1 };

struct gitent {
	char *path;  /* workspace-relative */
	mode_t mode; /* type and permissions */
	char *data;  /* a file's content, a link's target */
	size_t len;
};

/* Commit state: folders a commit, fetch, rebase or merge writes into, and files it writes. */
static const char *const statedirs[] = {"objects", "refs", "logs", "rebase-merge", "rebase-apply", "sequencer",
                                        "rr-cache", "lost-found", "reftable", NULL};
static const char *const statefiles[] = {
	"index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR",
	"CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "COMMIT_EDITMSG", "TAG_EDITMSG",
	"SQUASH_MSG", "NOTES_EDITMSG", "packed-refs", "shallow", "description", "gc.pid", "gc.log", "BISECT_LOG",
	"BISECT_START", "BISECT_TERMS", "BISECT_NAMES", "BISECT_EXPECTED_REV", "BISECT_ANCESTORS_OK", "BISECT_RUN",
	"MERGE_AUTOSTASH", "NOTES_MERGE_PARTIAL", "NOTES_MERGE_REF", NULL};

static int inlist(const char *const *l, const char *s, size_t n)
{
	for (size_t i = 0; l[i]; i++)
		if (strlen(l[i]) == n && strncmp(l[i], s, n) == 0)
			return 1;
	return 0;
}

/* Whether names c[i..n) inside a git directory are commit state. A repository of worktrees/NAME
 * or modules/NAME (a module's name may hold '/') is a git directory of its own. */
static int state(char **c, size_t i, size_t n)
{
	if (i >= n)
		return 0;
	if (inlist(statedirs, c[i], strlen(c[i])))
		return !(strcmp(c[i], "objects") == 0 && i + 2 < n + 1 && i + 1 < n && strcmp(c[i + 1], "info") == 0 &&
		         i + 2 < n && (strcmp(c[i + 2], "alternates") == 0 || strcmp(c[i + 2], "http-alternates") == 0));
	if (i == n - 1) {
		size_t l = strlen(c[i]);
		return inlist(statefiles, c[i], l) || (l > 5 && strcmp(c[i] + l - 5, ".lock") == 0) ||
		       strncmp(c[i], "sharedindex.", 12) == 0; /* core.splitIndex */
	}
	if (strcmp(c[i], "modules") == 0 || strcmp(c[i], "worktrees") == 0)
		for (size_t j = i + 2; j < n; j++)
			if (state(c, j, n))
				return 1;
	return 0;
}

/* Split a relative path into its names (c[k] point into copy). */
static size_t names(char *copy, char ***c)
{
	size_t n = 0;
	*c = NULL;
	for (char *s = copy, *save = NULL, *t; (t = strtok_r(s, "/", &save)); s = NULL) {
		*c = xrealloc(*c, (n + 1) * sizeof **c);
		(*c)[n++] = t;
	}
	return n;
}

int gitmetapath(const char *rel)
{
	char *copy = xstrdup(rel), **c;
	size_t n = names(copy, &c), g = n;
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i], ".git") == 0)
			g = i;
	int meta = g < n && (g == n - 1 || !state(c, g + 1, n));
	free(c);
	free(copy);
	return meta;
}

/* Whether path (a git directory's own path gd, then below) is kept: the directory itself, and what
 * in it is not commit state. */
static int kept(const char *gd, const char *path)
{
	size_t gl = strlen(gd);
	if (strcmp(path, gd) == 0)
		return 1;
	char *copy = xstrdup(path + (gl ? gl + 1 : 0)), **c;
	size_t n = names(copy, &c);
	int k = !state(c, 0, n);
	free(c);
	free(copy);
	return k;
}

struct walk {
	struct gitkeep *k;
	struct strv gitdirs; /* git directories found: .git folders, and where .git files point */
	int over;
	int fail;      /* a folder git could reach was not read (out of descriptors): the walk is not whole */
	int namesonly; /* names and kinds only, no bytes read, no cap: what to remove after a step */
	int first;     /* gitkeep's look before any step: what is closed was closed by the user, not a
	                * step; no mode is changed (a read-only checkout stays read-only) */
};

/* An entry as it is: a file's bytes (up to the cap), a link's target; with namesonly, only a .git
 * file's. */
static struct gitent readent(struct walk *w, int dfd, const char *name, const char *path, const struct stat *st)
{
	struct gitent en = {xstrdup(path), st->st_mode, NULL, 0};
	if (w->namesonly && !(S_ISREG(st->st_mode) && strcmp(name, ".git") == 0)) {
		en.data = xstrdup(""); /* a .git file's bytes still say where its git directory is */
	} else if (S_ISREG(st->st_mode)) {
		int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		struct buf b = {0};
		char tmp[65536];
		ssize_t r;
		while (fd >= 0 && (r = read(fd, tmp, sizeof tmp)) > 0 && b.len < GITKEEPMAX)
			bufadd(&b, tmp, (size_t)r);
		if (fd >= 0)
			close(fd);
		en.data = b.data ? b.data : xstrdup("");
		en.len = b.len;
	} else if (S_ISLNK(st->st_mode)) {
		char t[4096];
		ssize_t r = readlinkat(dfd, name, t, sizeof t - 1);
		en.data = xstrndup(t, r > 0 ? (size_t)r : 0);
		en.len = r > 0 ? (size_t)r : 0;
	}
	return en;
}

static void add(struct walk *w, int dfd, const char *name, const char *path, const struct stat *st)
{
	struct gitent en = readent(w, dfd, name, path, st);
	w->k->bytes += en.len + strlen(path);
	if (w->k->bytes > GITKEEPMAX && !w->namesonly)
		w->over = 1;
	w->k->v = xrealloc(w->k->v, (w->k->n + 1) * sizeof *w->k->v);
	w->k->v[w->k->n++] = en;
}

/* A git directory's HEAD: commit state, which steps may change, but put back when a step leaves
 * it what git cannot read (then git looks further: at the folder above, as a bare repository). */
static void keephead(struct walk *w, int dfd, const char *path, const struct stat *st)
{
	if (w->namesonly || !(S_ISREG(st->st_mode) || S_ISLNK(st->st_mode)) || st->st_size > 4096)
		return;
	struct gitent en = readent(w, dfd, "HEAD", path, st);
	w->k->heads = xrealloc(w->k->heads, (w->k->nheads + 1) * sizeof *w->k->heads);
	w->k->heads[w->k->nheads++] = en;
}

/* Where a .git file at path points ("gitdir: X", relative to its folder), as a workspace-relative
 * path, or NULL when it leaves the workspace. */
static char *pointsto(const char *path, const char *data, size_t len)
{
	if (len < 8 || strncmp(data, "gitdir: ", 8) != 0)
		return NULL;
	char *t = xstrndup(data + 8, len - 8);
	t[strcspn(t, "\r\n")] = 0;
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(dir, ".");
	char *joined = t[0] == '/' ? NULL : xasprintf("%s/%s", dir, t);
	char *clean = joined ? pathclean(joined) : NULL;
	free(joined);
	free(dir);
	free(t);
	if (clean && strcmp(clean, ".") == 0) {
		free(clean);
		clean = NULL;
	}
	return clean;
}

/* What git reads at the top of a folder it takes for a repository although it is not named .git
 * (a bare one): all else in such a folder is the workspace's own. */
static const char *const baremeta[] = {"config", "config.worktree", "commondir", "hooks", "info", "objects",
                                       "branches", "remotes", "worktrees", "modules", NULL};

static int hasname(char **v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i] + 1, name) == 0)
			return 1;
	return 0;
}

/* Whether a folder holding these names is one git would take for a repository when run in it or
 * below it (HEAD, and objects and refs or a commondir), whatever HEAD holds: a step may make it
 * valid later. */
static int barelike(char **v, size_t n)
{
	return hasname(v, n, "HEAD") && ((hasname(v, n, "objects") && hasname(v, n, "refs")) || hasname(v, n, "commondir"));
}

/* A folder's names, but . and ..; each prefixed with its kind (readdir's d_type, as one byte). */
static size_t readnames(int dfd, char ***v, int *fail)
{
	size_t n = 0;
	*v = NULL;
	int own = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own offset */
	if (own < 0 && (errno == EMFILE || errno == ENFILE))
		*fail = 1;
	DIR *d = own >= 0 ? fdopendir(own) : NULL;
	if (own >= 0 && !d)
		close(own);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			*v = xrealloc(*v, (n + 1) * sizeof **v);
			(*v)[n++] = xasprintf("%c%s", de->d_type ? de->d_type : 0x7f, de->d_name);
		}
	if (d)
		closedir(d);
	return n;
}

/* A folder of ours that a step made unreadable or unwritable to us (chmod 311, 555) is made ours
 * to read and change again, as it was before the step: what git can reach, the walk must read and
 * the undo change. 0, or -1 when it stays closed to us. */
static int ownrwx(int dfd, const char *name, const struct stat *st)
{
	if ((st->st_mode & 0700) == 0700 || st->st_uid != geteuid())
		return (st->st_mode & 0700) == 0700 || geteuid() == 0 ? 0 : -1;
	return fchmodat(dfd, name, (st->st_mode | 0700) & 07777, 0);
}

/* Walk the folder dfd (at path; "" for the root): every .git entry, and all below a git directory
 * that is kept. gd: the git directory we are in, or NULL. */
static void walk(struct walk *w, int dfd, const char *path, const char *gd, const char *hidden, int depth)
{
	/* As deep as git itself can reach: a path of at most PATH_MAX bytes (a repository planted deeper
	 * is one no git command can open, as the kernel refuses its paths). */
	if (depth > GITDEPTHMAX || strlen(path) >= PATH_MAX)
		return;
	char **nv;
	size_t nn = readnames(dfd, &nv, &w->fail);
	/* A folder git would take for a bare repository: what it reads there is kept like a .git's. */
	int bare = !gd && barelike(nv, nn);
	for (size_t ni = 0; ni < nn && !w->over; ni++) {
		const char *name = nv[ni] + 1;
		unsigned char type = (unsigned char)nv[ni][0];
		const char *here = bare && inlist(baremeta, name, strlen(name)) ? path : gd;
		/* Outside git's directories only folders and what is named .git matter: most of a
		 * workspace is passed by its kind alone, without a stat. */
		if (!here && type != 0x7f && type != DT_DIR && strcmp(name, ".git") && strcmp(name, "HEAD"))
			continue;
		char *p = *path ? xasprintf("%s/%s", path, name) : xstrdup(name);
		struct stat st;
		if ((!*path && hidden && strcmp(p, hidden) == 0) || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			free(p);
			continue;
		}
		if (strcmp(name, "HEAD") == 0 && (bare || (gd && strcmp(gd, path) == 0)))
			keephead(w, dfd, p, &st);
		int isgit = strcmp(name, ".git") == 0;
		for (size_t i = 0; !here && !isgit && i < w->gitdirs.n; i++)
			if (strcmp(w->gitdirs.v[i], p) == 0)
				here = w->gitdirs.v[i], isgit = 1;
		if (isgit && S_ISDIR(st.st_mode))
			here = p;
		if (isgit || (here && kept(here, p)))
			add(w, dfd, name, p, &st);
		if (isgit && S_ISREG(st.st_mode)) {
			char *to = pointsto(p, w->k->v[w->k->n - 1].data, w->k->v[w->k->n - 1].len);
			if (to)
				strvadd(&w->gitdirs, to);
			free(to);
		}
		size_t pl = strlen(p);
		int objinfo = (pl >= 7 && strcmp(p + pl - 7, "objects") == 0) || (pl >= 12 && strcmp(p + pl - 12, "objects/info") == 0);
		if (S_ISDIR(st.st_mode) && (!here || here == p || objinfo || kept(here, p))) { /* commit state is not read */
			int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if ((sub < 0 && errno == EACCES) || (sub >= 0 && (here || bare) && (st.st_mode & 0700) != 0700)) {
				/* Closed to us by a step: opened up, or, when not ours but still searchable
				 * (git run by us could reach in), the walk is not whole. */
				if (sub >= 0 && w->first) {
					/* readable as the user left it: walked as it is */
				} else {
					if (sub >= 0)
						close(sub);
					if ((w->first ? -1 : ownrwx(dfd, name, &st)) < 0 && faccessat(dfd, name, X_OK, AT_EACCESS) == 0)
						w->fail = 1;
					sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				}
			}
			if (sub < 0 && errno != ENOENT && errno != EACCES)
				w->fail = 1;
			if (sub >= 0) {
				walk(w, sub, p, here == p ? p : here, hidden, depth + 1);
				close(sub);
			}
		}
		free(p);
	}
	for (size_t i = 0; i < nn; i++)
		free(nv[i]);
	free(nv);
}

static int entcmp(const void *a, const void *b)
{
	return strcmp(((const struct gitent *)a)->path, ((const struct gitent *)b)->path);
}

/* Two passes: a .git file found late may point to a folder walked before it. namesonly: no bytes
 * read, so no cap (gitundo's list of what is there now, when it is too much to keep). */
static int take(struct gitkeep *k, int wsfd, const char *hidden, int namesonly, int first, struct err *e)
{
	memset(k, 0, sizeof *k);
	struct walk w = {k, {0}, 0, 0, namesonly, first};
	struct stat rst;
	if (fstat(wsfd, &rst) == 0 && (rst.st_mode & 0700) != 0700 && rst.st_uid == geteuid() &&
	    (!first || (rst.st_mode & 0500) != 0500)) {
		char self[64]; /* wsfd may be an O_PATH descriptor: through /proc, as fchmod cannot */
		snprintf(self, sizeof self, "/proc/self/fd/%d", wsfd);
		if (chmod(self, (rst.st_mode | 0700) & 07777) < 0)
			return errf(e, "the workspace was closed to the runner by a step (chmod) and cannot be opened again:");
	}
	int root = openat(wsfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return errf(e, "the workspace cannot be read for its git metadata:");
	walk(&w, root, "", NULL, hidden, 0);
	if (w.gitdirs.n) {
		gitkeepfree(k);
		walk(&w, root, "", NULL, hidden, 0); /* may add the same targets again: harmless */
	}
	close(root);
	strvfree(&w.gitdirs);
	if (w.fail) {
		gitkeepfree(k);
		return errf(e, "the workspace's git metadata could not all be read (out of descriptors, or a folder closed to the runner)");
	}
	if (w.over) {
		gitkeepfree(k);
		return errf(e, "the workspace's git metadata (config, hooks, ...) is larger than %d MiB", GITKEEPMAX >> 20);
	}
	if (k->n > 1)
		qsort(k->v, k->n, sizeof *k->v, entcmp);
	return 0;
}

int gitkeep(struct gitkeep *k, int wsfd, const char *hidden, struct err *e)
{
	return take(k, wsfd, hidden, 0, 1, e);
}

static const struct gitent *find(const struct gitkeep *k, const char *path)
{
	struct gitent key = {(char *)path, 0, NULL, 0};
	return k->n ? bsearch(&key, k->v, k->n, sizeof *k->v, entcmp) : NULL;
}

static int same(const struct gitent *a, const struct gitent *b)
{
	if (a->mode != b->mode)
		return 0;
	if (S_ISDIR(a->mode))
		return 1;
	return a->len == b->len && (!a->len || memcmp(a->data, b->data, a->len) == 0);
}

/* Remove name under dfd, all below it too, never through a link. */
static int rmbeneath(int dfd, const char *name, int depth)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0);
	ownrwx(dfd, name, &st);
	int fd = depth > GITDEPTHMAX ? -1 : openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rmbeneath(dirfd(d), de->d_name, depth + 1);
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	return unlinkat(dfd, name, AT_REMOVEDIR);
}

/* The folder holding path, opened beneath wsfd; *name its last name. */
static int parentof(int wsfd, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	if (!slash)
		return dup(wsfd);
	char *dir = xstrndup(path, (size_t)(slash - path));
	int fd = openbeneath(wsfd, dir, O_RDONLY | O_DIRECTORY, 0);
	free(dir);
	return fd;
}

static int putback(int wsfd, const struct gitent *en)
{
	const char *name;
	int pfd = parentof(wsfd, en->path, &name), rc = -1;
	if (pfd < 0)
		return -1;
	struct stat st;
	int isdir = fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
	if (S_ISDIR(en->mode) && isdir) {
		rc = 0;
	} else if (rmbeneath(pfd, name, 0) < 0) {
		rc = -1;
	} else if (S_ISDIR(en->mode)) {
		rc = mkdirat(pfd, name, 0700);
	} else if (S_ISLNK(en->mode)) {
		rc = symlinkat(en->data, pfd, name);
	} else if (S_ISREG(en->mode)) {
		int fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		rc = fd < 0 ? -1 : 0;
		for (size_t off = 0; rc == 0 && off < en->len;) {
			ssize_t w = write(fd, en->data + off, en->len - off);
			if (w <= 0)
				rc = -1;
			else
				off += (size_t)w;
		}
		if (fd >= 0)
			close(fd);
	} else {
		rc = 0; /* a special file is not made again */
	}
	if (rc == 0 && !S_ISLNK(en->mode))
		rc = fchmodat(pfd, name, en->mode & 07777, 0) < 0 && errno != ENOENT ? -1 : 0;
	close(pfd);
	return rc;
}

/* Whether a HEAD git can read: "ref: refs/..." or an object name, or the link it was. */
static int headok(int pfd, const char *name, const struct gitent *was)
{
	struct stat st;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		char t[4096];
		ssize_t r = readlinkat(pfd, name, t, sizeof t);
		return S_ISLNK(was->mode) && r >= 0 && (size_t)r == was->len && memcmp(t, was->data, was->len) == 0;
	}
	char b[256];
	int fd = S_ISREG(st.st_mode) ? openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) : -1;
	ssize_t r = fd >= 0 ? read(fd, b, sizeof b - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (r <= 0)
		return 0;
	b[r] = 0;
	size_t n = strcspn(b, "\n"), hex = strspn(b, "0123456789abcdef");
	if (strncmp(b, "ref: refs/", 10) == 0)
		return n > 10 && strcspn(b + 5, "\t\r ") >= n - 5 && b[n + (b[n] == '\n')] == 0;
	return (hex == 40 || hex == 64) && n == hex && b[n + (b[n] == '\n')] == 0;
}

/* A .git folder a step moved aside and replaced with a .git file pointing at it (mv .git x, then
 * "gitdir: x"): moved back, so the history stays where it was and its config is compared. */
static int moveback(const struct gitkeep *k, int wsfd, struct strv *undone)
{
	int rc = 0;
	for (size_t i = 0; i < k->n; i++) {
		const struct gitent *was = &k->v[i];
		const char *base = strrchr(was->path, '/');
		if (!S_ISDIR(was->mode) || strcmp(base ? base + 1 : was->path, ".git"))
			continue;
		const char *name;
		int pfd = parentof(wsfd, was->path, &name);
		struct stat st;
		char b[4096];
		int fd = pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)
		           ? -1 : openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		ssize_t r = fd >= 0 ? read(fd, b, sizeof b) : -1;
		if (fd >= 0)
			close(fd);
		char *to = r > 0 ? pointsto(was->path, b, (size_t)r) : NULL;
		const char *toname;
		int tfd = to && !find(k, to) ? parentof(wsfd, to, &toname) : -1;
		if (tfd >= 0 && fstatat(tfd, toname, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
			if (unlinkat(pfd, name, 0) == 0 && renameat(tfd, toname, pfd, name) == 0) {
				strvadd(undone, to);
				strvadd(undone, was->path);
			} else {
				rc = -1;
			}
		}
		if (tfd >= 0)
			close(tfd);
		if (pfd >= 0)
			close(pfd);
		free(to);
	}
	return rc;
}

/* Each HEAD a step left unreadable, or removed, is written again (where its folder still is). */
static int heads(const struct gitkeep *k, int wsfd, struct strv *undone)
{
	int rc = 0;
	for (size_t i = 0; i < k->nheads; i++) {
		const char *name;
		int pfd = parentof(wsfd, k->heads[i].path, &name);
		if (pfd < 0) {
			rc = errno == ENOENT ? rc : -1;
			continue;
		}
		if (!headok(pfd, name, &k->heads[i])) {
			if (putback(wsfd, &k->heads[i]) == 0)
				strvadd(undone, k->heads[i].path);
			else
				rc = -1;
		}
		close(pfd);
	}
	return rc;
}

int gitundo(const struct gitkeep *k, int wsfd, const char *hidden, struct strv *undone, struct err *e)
{
	struct gitkeep now;
	struct err te = {0};
	int rc = 0, blind = 0;
	if (moveback(k, wsfd, undone) < 0)
		rc = errf(e, "a .git folder moved aside could not be moved back:");
	/* First a look that changes no mode: when nothing differs, folders the user (or a step) left
	 * closed stay as they are; only an undo opens them up. */
	if (take(&now, wsfd, hidden, 0, 1, &te) == 0) {
		int differ = now.n != k->n;
		for (size_t i = 0; i < k->n && !differ; i++) {
			const struct gitent *is = find(&now, k->v[i].path);
			differ = !is || !same(&k->v[i], is);
		}
		gitkeepfree(&now);
		if (!differ) {
			if (heads(k, wsfd, undone) < 0)
				rc = errf(e, "a git directory's HEAD could not be put back:");
			return rc;
		}
	}
	memset(&te, 0, sizeof te);
	if (take(&now, wsfd, hidden, 0, 0, &te) < 0) {
		/* Too much of it now to compare: what is new is still found by name and removed, and
		 * everything kept is written again below. */
		blind = 1;
		if (take(&now, wsfd, hidden, 1, 0, &te) < 0)
			return errf(e, "the workspace's git metadata cannot be read again: %s", te.msg);
	}
	/* what is new goes, the deepest first */
	for (size_t i = now.n; i-- > 0;) {
		if (find(k, now.v[i].path))
			continue;
		const char *name;
		int pfd = parentof(wsfd, now.v[i].path, &name);
		if (pfd >= 0 && rmbeneath(pfd, name, 0) == 0)
			strvadd(undone, now.v[i].path);
		else if (errno != ENOENT)
			rc = errf(e, "%s could not be removed:", now.v[i].path);
		if (pfd >= 0)
			close(pfd);
	}
	/* what changed or went is written again, folders first */
	for (size_t i = 0; i < k->n; i++) {
		const struct gitent *was = &k->v[i], *is = find(&now, was->path);
		if (is && same(was, is) && !blind)
			continue;
		if (putback(wsfd, was) == 0)
			strvadd(undone, was->path);
		else if (errno != ENOENT)
			rc = errf(e, "%s could not be put back:", was->path);
		/* else its folder is gone, and no git can read what it held (a bare repository's) */
	}
	if (heads(k, wsfd, undone) < 0)
		rc = errf(e, "a git directory's HEAD could not be put back:");
	gitkeepfree(&now);
	return rc;
}

void gitkeepfree(struct gitkeep *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->v[i].path);
		free(k->v[i].data);
	}
	for (size_t i = 0; i < k->nheads; i++) {
		free(k->heads[i].path);
		free(k->heads[i].data);
	}
	free(k->heads);
	free(k->v);
	memset(k, 0, sizeof *k);
}
