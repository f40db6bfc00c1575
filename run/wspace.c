/* wspace: one lock and one chain of snapshot layers per workspace of a run. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "../sandbox/dockerhost.h"
#include "../snapshot/snapshot.h"
#include "../util/term.h"
#include "wspace.h"

/* Who holds a lock on the inode dev:ino, from /proc/locks: "pid N (its command line)". */
static char *lockholder(dev_t dev, ino_t ino)
{
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return NULL;
	char line[512], *who = NULL;
	while (!who && fgets(line, sizeof line, f)) {
		/* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (a "->" marks a waiter) */
		char kind[16], adv[16], mode[16];
		unsigned maj, min;
		unsigned long long i;
		int pid;
		if (strstr(line, "->") ||
		    sscanf(line, "%*[^:]: %15s %15s %15s %d %x:%x:%llu", kind, adv, mode, &pid, &maj, &min, &i) != 7)
			continue;
		if (strcmp(kind, "FLOCK") != 0 || maj != major(dev) || min != minor(dev) || i != (unsigned long long)ino)
			continue;
		char cl[256] = "", *path = xasprintf("/proc/%d/cmdline", pid);
		FILE *c = fopen(path, "re");
		size_t n = c ? fread(cl, 1, sizeof cl - 1, c) : 0;
		for (size_t k = 0; k + 1 < n; k++)
			if (!cl[k])
				cl[k] = ' ';
		cl[n] = 0;
		if (c)
			fclose(c);
		free(path);
		who = *cl ? xasprintf("pid %d, %s", pid, cl) : xasprintf("pid %d", pid);
	}
	fclose(f);
	return who;
}

/* Hold the workspace for this run: an exclusive flock on the workspace folder itself. No file is
 * made anywhere, so nobody can plant one in its way; the lock goes with the process, whatever way
 * it ends, and /proc/locks names its holder. */
static int lockworkspace(const char *ws, int *fd, struct err *e)
{
	*fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return errc(e, ERR_INPUT, "workspace %s:", ws);
	if (flock(*fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	int err = errno;
	struct stat st;
	char *who = err == EWOULDBLOCK && fstat(*fd, &st) == 0 ? lockholder(st.st_dev, st.st_ino) : NULL;
	char *clean = who ? termclean(who, TERM_ONELINE) : NULL;
	if (err == EWOULDBLOCK)
		errc(e, ERR_INPUT, "workspace %s is in use by another run (%s): wait for it or stop it", ws,
		     clean ? clean : "holder unknown");
	else
		errc(e, ERR_INPUT, "cannot lock the workspace %s: %s", ws, strerror(err));
	free(clean);
	free(who);
	close(*fd);
	*fd = -1;
	return -1;
}

/* Whether a step on this backend leaves no process that could change the workspace unseen, so
 * that the snapshots may take the kernel's change feed's word for what changed. Inotify is told
 * of every change made through this kernel's VFS, whoever makes it, in whatever mount namespace;
 * what it misses is a write through a shared mapping made by a process whose open came before
 * the last layer: one that outlives its step.
 *   namespace: the step's sandbox ends with its step.
 *   docker: each step's wrapper kills every process of the steps' user before it reports, and a
 *     step that did not report, or ran out of time, has its container removed (docker.c); the
 *     workspace is a bind mount, whose writes pass through the host's VFS. Only with an engine
 *     on this machine (a unix socket): a remote engine's workspace is another kernel's.
 *   none: the step's keeper kills what the step left, escaped processes included, before the
 *     step ends; when it cannot vouch (it was killed) the runner drops the feed for good
 *     (sbxresult.leftover, snapdistrust).
 * Whatever else changes the workspace (a process started outside the run) is no step's, and is
 * seen as long as it writes with write calls. An MCP server lives across steps on every backend:
 * the same holds for it. */
static int feedbackend(const struct sandboxconf *sc, int *local)
{
	switch (sc->backend) {
	case BACKEND_NAMESPACE:
	case BACKEND_NONE:
		return 1;
	case BACKEND_DOCKER:
		if (*local < 0) {
			struct dhost h = {0};
			struct err e = {0};
			*local = dhostfind(&h, &e) == 0 && h.sock != NULL;
			dhostfree(&h);
		}
		return *local;
	}
	return 0; /* a backend added later: scan until it is thought through */
}

/* Whether every step of the run may take the change feed's word (feedbackend). */
static int feedtrusted(const struct manifest *m)
{
	int local = -1;
	for (size_t i = 0; i < m->nworkers; i++)
		if (!feedbackend(&m->workers[i].sandbox, &local))
			return 0;
	for (size_t i = 0; i < m->njobs; i++)
		if (!feedbackend(&m->jobs[i].sandbox, &local))
			return 0;
	return 1;
}

/* Whether path is inside dir (not dir itself); *rel gets the part below it. */
static int inside(const char *path, const char *dir, const char **rel)
{
	size_t l = strlen(dir);
	if (strcmp(dir, "/") == 0)
		l = 0;
	if (strncmp(path, dir, l) != 0 || path[l] != '/' || !path[l + 1])
		return 0;
	*rel = path + l + 1;
	return 1;
}

int spacesoverlap(const struct runstate *rs, size_t a, size_t b)
{
	const char *rel;
	return a == b || inside(rs->ws[a].path, rs->ws[b].path, &rel) || inside(rs->ws[b].path, rs->ws[a].path, &rel);
}

static void wsadd(struct runstate *rs, const char *path, const char *name)
{
	for (size_t i = 0; i < rs->nws; i++)
		if (strcmp(rs->ws[i].path, path) == 0)
			return;
	if (!rs->ws) {
		/* room for a workspace per job, a matrix's members made later included: running jobs
		 * hold pointers into the array, which never moves */
		const struct manifest *m = rs->m;
		rs->wscap = (m->jobcap > m->njobs ? m->jobcap : m->njobs) + 1;
		rs->ws = xcalloc(rs->wscap, sizeof *rs->ws);
	}
	if (rs->nws == rs->wscap)
		return;
	struct wspace *w = &rs->ws[rs->nws];
	memset(w, 0, sizeof *w);
	w->path = xstrdup(path);
	w->name = xstrdup(name);
	w->lockfd = -1;
	pthread_mutex_init(&w->mu, NULL);
	__atomic_store_n(&rs->nws, rs->nws + 1, __ATOMIC_RELEASE); /* running jobs look workspaces up (runws) */
}

int spacesopen(struct runstate *rs, const size_t *ord, size_t n, struct err *e)
{
	const struct manifest *m = rs->m;
	for (size_t k = 0; k < n; k++) {
		const struct job *j = &m->jobs[ord[k]];
		wsadd(rs, j->workspace ? j->workspace : m->workspace, j->workspace ? j->wsname : WSDEFAULT);
	}
	if (rs->nws == 0)
		wsadd(rs, m->workspace, WSDEFAULT);
	/* a matrix whose workspaces are known only once a job has finished: a chain per workspace
	 * from the start (snapshots/<name>/), as the run may end with several */
	rs->perws |= rs->nws > 1; /* set already when resuming a run that had a chain per workspace */
	for (size_t k = 0; k < n; k++)
		rs->perws |= m->jobs[ord[k]].mxpending;
	for (size_t i = 0; i < rs->nws; i++)
		if (lockworkspace(rs->ws[i].path, &rs->ws[i].lockfd, e) < 0)
			return -1;
	return 0;
}

/* Leave folder rel out of a chain: the pattern rel and everything below it. */
static void excludeboth(struct strv *v, const char *rel)
{
	char *all = xasprintf("%s/**", rel);
	strvadd(v, rel);
	strvadd(v, all);
	free(all);
}

/* Start the chain of workspace i: the runs folder and every other workspace of the run inside it
 * left out, so that each file is in one chain. */
static int openchain(struct runstate *rs, size_t i, struct err *e)
{
	const struct manifest *m = rs->m;
	struct wspace *w = &rs->ws[i];
	struct snapconf sconf = m->snapshot;
	memset(&sconf.exclude, 0, sizeof sconf.exclude);
	for (size_t k = 0; k < m->snapshot.exclude.n; k++)
		strvadd(&sconf.exclude, m->snapshot.exclude.v[k]);
	for (size_t k = 0; k < rs->nws + 1; k++) {
		const char *rel = NULL;
		if (k == rs->nws)
			rel = w->hidden;
		else if (k != i && !inside(rs->ws[k].path, w->path, &rel))
			rel = NULL;
		if (rel)
			excludeboth(&sconf.exclude, rel);
	}
	/* one workspace: today's layout, snapshots/NNNN.tar.zst */
	char *snapdir = pathjoin(rs->rd->path, "snapshots");
	const char *sub = rs->perws ? w->name : NULL;
	char *dir = sub ? pathjoin(snapdir, sub) : xstrdup(snapdir);
	int rc = sub ? mkdirs(dir, 0755, e) : 0;
	if (rc == 0)
		rc = snapopen(&w->snap, w->path, &sconf, dir, e);
	if (rc == 0 && feedtrusted(m))
		snapfeed(w->snap);
	if (rc < 0 && sub)
		errctx(e, "workspace %s", sub);
	free(dir);
	free(snapdir);
	strvfree(&sconf.exclude);
	return rc;
}

/* The runs folder outdir, when it lies inside workspace w, is no part of it. */
static int hideruns(struct wspace *w, const char *outdir, struct err *e)
{
	char outreal[PATH_MAX];
	const char *rel;
	if (!realpath(outdir, outreal))
		return 0;
	if (strcmp(outreal, w->path) == 0)
		return errc(e, ERR_INPUT, "--out %s is the workspace %s itself; make the run directories elsewhere", outdir, w->path);
	if (inside(outreal, w->path, &rel))
		w->hidden = xstrdup(rel);
	return 0;
}

int spacesadd(struct runstate *rs, const struct job *j, const char *outdir, struct err *e)
{
	if (runws(rs, j))
		return 0;
	size_t had = rs->nws;
	wsadd(rs, j->workspace ? j->workspace : rs->m->workspace, j->workspace ? j->wsname : WSDEFAULT);
	if (rs->nws == had)
		return errc(e, ERR_INPUT, "workspace %s: the run has no room for another workspace", j->workspace);
	struct wspace *w = &rs->ws[had];
	if (lockworkspace(w->path, &w->lockfd, e) < 0 || hideruns(w, outdir, e) < 0 || openchain(rs, had, e) < 0)
		return -1;
	/* its files leave the chains of the workspaces holding it, from their next layer on */
	for (size_t k = 0; k < had; k++) {
		const char *rel;
		if (!rs->ws[k].snap || !inside(w->path, rs->ws[k].path, &rel))
			continue;
		pthread_mutex_lock(&rs->ws[k].mu);
		snapexclude(rs->ws[k].snap, rel);
		pthread_mutex_unlock(&rs->ws[k].mu);
	}
	return 0;
}

int spacessnap(struct runstate *rs, const char *outdir, struct err *e)
{
	/* Runs kept inside a workspace (workspace: . and runs/ beside the manifest) are no part of
	 * it: left out of snapshots, read-only to steps, refused to file tools. */
	for (size_t i = 0; i < rs->nws; i++)
		if (hideruns(&rs->ws[i], outdir, e) < 0)
			return -1;
	int rc = 0;
	for (size_t i = 0; i < rs->nws && rc == 0; i++)
		rc = openchain(rs, i, e);
	return rc;
}

int spacesseal(struct runstate *rs, struct err *e)
{
	int rc = 0;
	for (size_t i = 0; i < rs->nws; i++) {
		struct wspace *w = &rs->ws[i];
		struct snapinfo si;
		struct err se = {0};
		memset(&si, 0, sizeof si);
		if (w->snap && snapend(w->snap, "end", &si, rc < 0 ? &se : e) < 0 && rc == 0)
			rc = -1;
		for (size_t k = 0; k < si.skipped.n; k++) {
			/* left out of the end layer: said in run.json, as a step's layer says it in its event */
			if (!rs->endskipped)
				rs->endskipped = cJSON_CreateArray();
			cJSON *one = cJSON_CreateObject();
			char *layer = layerpath(rs->perws ? w->name : NULL, LAYER_END, 0);
			cJSON_AddStringToObject(one, "layer", layer);
			cJSON_AddStringToObject(one, "path", si.skipped.v[k]);
			cJSON_AddStringToObject(one, "reason", si.why.v[k]);
			cJSON_AddItemToArray(rs->endskipped, one);
			free(layer);
		}
		for (size_t k = 0; k < si.setid.n; k++) {
			char *p = rs->perws ? xasprintf("%s/%s", w->name, si.setid.v[k]) : xstrdup(si.setid.v[k]);
			strvadd(&rs->setid, p);
			free(p);
		}
		snapinfofree(&si);
		snapclose(w->snap);
		w->snap = NULL;
	}
	return rc;
}

void spacesclose(struct runstate *rs)
{
	for (size_t i = 0; i < rs->nws; i++) {
		struct wspace *w = &rs->ws[i];
		snapclose(w->snap);
		if (w->lockfd >= 0)
			close(w->lockfd);
		pthread_mutex_destroy(&w->mu);
		free(w->path);
		free(w->name);
		free(w->hidden);
	}
	free(rs->ws);
	rs->ws = NULL;
	rs->nws = 0;
}
