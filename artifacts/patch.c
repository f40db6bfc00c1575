/* patch: a job's or a run's whole change as a git patch. Both states are restored from the layers
 * into temporary folders (so the patch shows what the layers hold, after their exclusions) and
 * compared by util/gitpatch. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "patch.h"
#include "events.h"
#include "runjson.h"
#include "../snapshot/snapshot.h"
#include "../util/gitpatch.h"

static int patchwhole; /* patchrestorewhole */

/* Take away a state restored() made: its private folder, with the tree in it. */
static void unrestore(char *tree)
{
	if (!tree)
		return;
	*strrchr(tree, '/') = 0;
	snapremove(tree);
	free(tree);
}

/* Restore the chain ws (NULL: the only one) before step (0: end) into a new folder, "tree" inside
 * a private one under $TMPDIR (a restore gives its target the workspace root's mode, which a step
 * may have made 1777: only the private folder keeps other users out while the patch is read):
 * only what set names (NULL: all). NULL on failure, and with *whole set when the set cannot be
 * restored alone. */
static char *restored(const char *rundir, const char *ws, int step, int own, int64_t maxbytes,
                      const struct snapset *set, int *whole, struct err *e)
{
	char *t = tmpfolder("nightshift-patch", e);
	if (!t)
		return NULL;
	char *tree = pathjoin(t, "tree");
	int rc = set ? snaprestoreset(rundir, ws, step, tree, own, maxbytes, set, e)
	       : own ? snaprestoreown(rundir, ws, step, tree, e)
	             : snaprestorews(rundir, ws, step, tree, 1, maxbytes, e);
	if (rc != 0) {
		*whole = rc > 0;
		unrestore(tree);
		tree = NULL;
	}
	free(t);
	return tree;
}

/* One of a patch's two states, restored on its own thread. */
struct state {
	const char *rundir, *ws;
	int step, own;
	int64_t maxbytes;
	const struct snapset *set;
	char *dir; /* the folder restored, or NULL */
	int whole;
	struct err e;
};

static void *staterun(void *arg)
{
	struct state *s = arg;
	s->dir = restored(s->rundir, s->ws, s->step, s->own, s->maxbytes, s->set, &s->whole, &s->e);
	return NULL;
}

/* Both states restored at once (each reads the same older layers, mostly CPU: a second core
 * halves the wait): into *a and *b, or both NULL with *whole or e set. */
static void bothstates(const char *rundir, const char *ws, int from, int to, int own, int64_t maxbytes,
                       const struct snapset *set, char **a, char **b, int *whole, struct err *e)
{
	struct state sa = {rundir, ws, from, own, maxbytes, set, NULL, 0, {0}}, sb = sa;
	sb.step = to;
	pthread_t t;
	int threaded = pthread_create(&t, NULL, staterun, &sb) == 0;
	staterun(&sa);
	if (threaded)
		pthread_join(t, NULL);
	else if (sa.dir)
		staterun(&sb);
	*whole = sa.whole || sb.whole;
	if (!sa.dir || !sb.dir) {
		*e = !sa.dir ? sa.e : sb.e;
		unrestore(sa.dir);
		unrestore(sb.dir);
		sa.dir = sb.dir = NULL;
	}
	*a = sa.dir;
	*b = sb.dir;
}

/* The chain's change from before step from to before step to (0: its end). Both states are
 * restored with only the paths the layers between them name (a 100,000-file tree with one change
 * writes a few files, not 200,000), or whole when those layers do not allow it. */
static long chainpatch(const char *rundir, const char *ws, int from, int to, int own, int64_t maxbytes,
                       const char *prefix, const struct secrets *sec, int *masked, struct buf *out, struct err *e)
{
	struct snapset *set = patchwhole ? NULL : snapsetof(rundir, ws, from, to, maxbytes);
	int whole = 0;
	char *a, *b;
	bothstates(rundir, ws, from, to, own, maxbytes, set, &a, &b, &whole, e);
	if (!a && whole) { /* a hard link outside the set: both whole */
		*e = (struct err){0};
		bothstates(rundir, ws, from, to, own, maxbytes, NULL, &a, &b, &whole, e);
	}
	snapsetfree(set);
	long n = b ? gitpatch(a, b, prefix, sec, masked, out, e) : -1;
	unrestore(a);
	unrestore(b);
	return n;
}

/* The step layers of a chain folder, sorted: NNNN of each NNNN.tar.zst. */
static size_t chainsteps(const char *dir, int **out)
{
	size_t n = 0, cap = 0;
	int *v = NULL;
	DIR *d = opendir(dir);
	for (struct dirent *de; d && (de = readdir(d));) {
		char *end;
		long s = strtol(de->d_name, &end, 10);
		if (end == de->d_name || strcmp(end, ".tar.zst") != 0 || s < 1 || s > 999999999)
			continue;
		if (n == cap)
			v = xrealloc(v, (cap = cap ? 2 * cap : 32) * sizeof *v);
		v[n++] = (int)s;
	}
	if (d)
		closedir(d);
	*out = v;
	return n;
}

/* The step of an event line whose first member after prev is "step":N (as the runner writes a
 * decision or a tool result), else 0. For a valid line it is what a parse finds: the first
 * "step" member; a line cut short or a number JSON refuses is left to the parse. */
static long leadstep(const char *line, size_t len)
{
	const char *end = line + len, *p = memmem(line, len, "\"prev\":\"", 8);
	static const char key[] = "\",\"step\":";
	if (!p || end - p < 8 + 64 + (long)sizeof key)
		return 0;
	/* prev as the runner writes it, 64 hex digits: a quote in it would open members the text
	 * below is not at (its "step" nested, or not the first), where a parse reads another */
	for (const char *h = p + 8; h < p + 8 + 64; h++)
		if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
			return 0;
	p += 8 + 64;
	if (memcmp(p, key, sizeof key - 1) != 0)
		return 0;
	p += sizeof key - 1;
	long s = 0;
	const char *d = p;
	if (p < end && *p == '0')
		return 0; /* JSON has no leading zero: the parse decides */
	if (line[len - 1] != '}')
		return 0; /* not ending as an object ends: the parse decides */
	while (p < end && *p >= '0' && *p <= '9' && p - d < 9)
		s = s * 10 + (*p++ - '0');
	return p > d && p < end && (*p == ',' || *p == '}') && s >= 1 ? s : 0;
}

long patchjob(const char *rundir, const char *job, int own, int64_t maxbytes, const struct secrets *sec, int *masked,
              struct buf *out, struct err *e)
{
	if (!*job || strchr(job, '/') || !strcmp(job, ".") || !strcmp(job, ".."))
		return errc(e, ERR_INPUT, "no job '%s' in %s", job, rundir);
	char *log = xasprintf("%s/jobs/%s/events.jsonl.zst", rundir, job);
	struct evreader *r;
	if (access(log, F_OK) != 0) {
		free(log);
		return errc(e, ERR_INPUT, "no job '%s' in %s (no jobs/%s/events.jsonl.zst)", job, rundir, job);
	}
	int rc = evropen(&r, log, e);
	free(log);
	if (rc < 0)
		return -1;
	/* Its first layer (the state it began with), its chain, and its last step. */
	int first = 0, last = 0;
	char *ws = NULL;
	const char *line;
	size_t len;
	while ((rc = evrnext(r, &line, &len, e)) == 1) {
		long seq;
		char type0[32], prev[65];
		int known = evfields(line, len, &seq, type0, prev);
		if (known && !strncmp(type0, "model_", 6))
			continue; /* a model's request or answer (the bulk of a log) names no step */
		long quick = known && strcmp(type0, "snapshot") != 0 ? leadstep(line, len) : 0;
		if (quick) { /* a decision's or a result's step, read without parsing its arguments */
			if (quick > last)
				last = (int)quick;
			continue;
		}
		cJSON *ev = cJSON_ParseWithLength(line, len);
		const cJSON *step = cJSON_GetObjectItemCaseSensitive(ev, "step");
		const char *type = jsonstr(ev, "type", ""), *layer = jsonstr(ev, "layer", NULL);
		int s = cJSON_IsNumber(step) && step->valuedouble >= 1 && step->valuedouble < 1e9 ? (int)step->valuedouble : 0;
		if (s > last)
			last = s;
		if (!strcmp(type, "snapshot") && s && layer && !first) {
			first = s;
			const char *p = layer + strlen("snapshots/"), *slash = strchr(p, '/');
			if (strncmp(layer, "snapshots/", 10) == 0 && slash && !strchr(slash + 1, '/'))
				ws = xstrndup(p, slash - p);
		}
		cJSON_Delete(ev);
	}
	evrclose(r);
	if (rc < 0 || !first) {
		free(ws);
		return rc < 0 ? -1 : 0;
	}
	/* Its end: the chain's next layer after its last step, or the chain's end layer. */
	char *dir = ws ? xasprintf("%s/snapshots/%s", rundir, ws) : xasprintf("%s/snapshots", rundir);
	int *steps, to = 0;
	size_t n = chainsteps(dir, &steps);
	for (size_t i = 0; i < n; i++)
		if (steps[i] > last && (!to || steps[i] < to))
			to = steps[i];
	free(steps);
	free(dir);
	long files = chainpatch(rundir, ws, first, to, own, maxbytes, "", sec, masked, out, e);
	free(ws);
	return files;
}

long patchrun(const char *rundir, int64_t maxbytes, struct buf *out, struct err *e)
{
	struct strv chains = {0};
	snapchains(rundir, &chains);
	long files = 0;
	for (size_t i = 0; i < chains.n && files >= 0; i++) {
		const char *ws = *chains.v[i] ? chains.v[i] : NULL;
		char *dir = ws ? xasprintf("%s/snapshots/%s", rundir, ws) : xasprintf("%s/snapshots", rundir);
		int *steps, from = 0;
		size_t n = chainsteps(dir, &steps);
		for (size_t k = 0; k < n; k++)
			if (!from || steps[k] < from)
				from = steps[k];
		free(steps);
		free(dir);
		if (!from)
			continue;
		char *prefix = ws && chains.n > 1 ? xasprintf("%s/", ws) : xstrdup("");
		long k = chainpatch(rundir, ws, from, 0, 0, maxbytes, prefix, NULL, NULL, out, e);
		files = k < 0 ? -1 : files + k;
		free(prefix);
	}
	strvfree(&chains);
	return files;
}

long patchsteps(const char *rundir, const char *ws, int from, int to, int64_t maxbytes, struct buf *out, struct err *e)
{
	return chainpatch(rundir, ws, from, to, 0, maxbytes, "", NULL, NULL, out, e);
}

void patchrestorewhole(int whole)
{
	patchwhole = whole;
}
