/* prune: runs are sorted by the time in their names (then by name), the newest first; what is
 * past the ones to keep and old enough is removed, each while holding its lock, so a runner that
 * still writes it is never raced. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "prune.h"
#include "rundir.h"
#include "runjson.h"
#include "../snapshot/snapshot.h"

struct run {
	char *name;
	int64_t ms; /* when it began, ms since the epoch */
};

/* The time a run name begins with (20261122T020000Z-3f9a), else the folder's mtime. */
static int64_t runtime(const char *name, const struct stat *st)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *end = strptime(name, "%Y%m%dT%H%M%SZ", &tm);
	if (end && (*end == '-' || !*end))
		return (int64_t)timegm(&tm) * 1000;
	return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

static int newestfirst(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	if (x->ms != y->ms)
		return x->ms > y->ms ? -1 : 1;
	return -strcmp(x->name, y->name);
}

/* The first folder of a run this user cannot empty (nftw's callback keeps it). */
static char *stuck;
static int stuckerr;

static int checkdir(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	if (flag == FTW_DNR || flag == FTW_NS || (flag == FTW_D && S_ISDIR(st->st_mode) &&
	                                          faccessat(AT_FDCWD, path, R_OK | W_OK | X_OK, AT_EACCESS) < 0)) {
		stuckerr = errno ? errno : EACCES;
		stuck = xstrdup(path);
		return 1;
	}
	return 0;
}

/* NULL when this user can remove the run at p (its folder's parent and every folder in it are
 * theirs to change), else "why" in a new string: nothing is removed from a run only half its own. */
static char *unremovable(const char *p)
{
	stuck = NULL;
	stuckerr = 0;
	char *parent = dirname_dup(p);
	if (faccessat(AT_FDCWD, parent, W_OK | X_OK, AT_EACCESS) < 0) {
		stuckerr = errno;
		stuck = parent;
		parent = NULL;
	} else {
		errno = 0;
		nftw(p, checkdir, 16, FTW_PHYS);
	}
	free(parent);
	if (!stuck)
		return NULL;
	struct stat st;
	char *why = lstat(stuck, &st) == 0
	            ? xasprintf("%s (owner uid %u): %s for uid %u", stuck, (unsigned)st.st_uid, strerror(stuckerr),
	                        (unsigned)geteuid())
	            : xasprintf("%s: %s", stuck, strerror(stuckerr));
	free(stuck);
	stuck = NULL;
	return why;
}

int runprune(const char *dir, int keep, int64_t olderms, int dry, struct strv *removed, struct strv *inuse,
             struct strv *kept, struct err *e)
{
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return errc(e, ERR_INPUT, "%s: not a folder of runs", dir);
	if (rundirisrun(dir))
		return errc(e, ERR_INPUT, "%s is a run directory itself; give the folder the runs are made in", dir);
	DIR *d = opendir(dir);
	if (!d)
		return errc(e, ERR_INPUT, "%s:", dir);
	struct run *v = NULL;
	size_t n = 0;
	for (struct dirent *de; (de = readdir(d));) {
		if (!runnameok(de->d_name))
			continue;
		char *p = pathjoin(dir, de->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && rundirisrun(p)) {
			v = xrealloc(v, (n + 1) * sizeof *v);
			v[n++] = (struct run){xstrdup(de->d_name), runtime(de->d_name, &st)};
		}
		free(p);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, newestfirst);
	int64_t now = (int64_t)time(NULL) * 1000;
	if (keep < 1)
		keep = 1; /* the newest stays, whatever is asked */
	for (size_t i = 0; i < n; i++) {
		char *p = pathjoin(dir, v[i].name);
		int lock = rundirlock(p);
		if (lock < 0 && errno == EWOULDBLOCK) {
			strvadd(inuse, p); /* a live runner holds it: never removed, nor counted as kept */
		} else if (i >= (size_t)keep && (!olderms || now - v[i].ms > olderms) && lock >= 0) {
			char *why = unremovable(p);
			struct stat left;
			if (why) {
				char *line = xasprintf("%s: not removed: %s", p, why);
				strvadd(kept, line);
				free(line);
				free(why);
				close(lock);
				free(p);
				free(v[i].name);
				continue;
			}
			if (!dry)
				snapremove(p);
			if (!dry && lstat(p, &left) == 0) {
				char *line = xasprintf("%s: not wholly removed", p);
				strvadd(kept, line);
				free(line);
				close(lock);
				free(p);
				free(v[i].name);
				continue;
			}
			strvadd(removed, p);
			/* its report, RUN.html beside it (report's default), goes with it */
			char *html = xasprintf("%s.html", p);
			struct stat hs;
			if (lstat(html, &hs) == 0 && S_ISREG(hs.st_mode) && (dry || unlink(html) == 0))
				strvadd(removed, html);
			free(html);
		}
		if (lock >= 0)
			close(lock);
		free(p);
		free(v[i].name);
	}
	free(v);
	return 0;
}
