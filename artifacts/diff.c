/* diff: replays are checked against their record, step by step, by effects. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "../util/glob.h"
#include "../util/linediff.h"
#include "calls.h"
#include "changes.h"
#include "diff.h"

enum { MAXSHOWN = 10, MAXFILES = 10 }; /* divergences and drifts told in full; files per step */

/* One call as compared: everything a replay must reproduce. */
struct seen {
	char *job;
	int step;
	char *tool, *args, *decision, *digest;
	char *pretty; /* the arguments, indented: what the text diff reads */
	char *out;    /* stdout and stderr as recorded, or NULL when the event holds no text */
	char *status; /* "exit 0", "signal 9", "timed out", ...; "" when it has no result */
	int replayed; /* answered from a record (an MCP call of a replay): no effect on the workspace */
};

struct seenlist {
	struct seen *v;
	size_t n;
};

static char *outputdigest(const cJSON *result)
{
	const char *names[] = {"stdout_sha256", "stderr_sha256", "output_sha256"};
	struct buf b = {0};
	for (int i = 0; i < 3; i++) {
		const char *d = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, names[i]));
		if (d)
			bufprintf(&b, "%s%s", b.len ? "+" : "", d);
	}
	return b.data ? b.data : xstrdup("-");
}

static int num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) && v->valuedouble > -1e9 && v->valuedouble < 1e9 ? (int)v->valuedouble : 0;
}

/* How a step ended, as compared: its exit code, signal, timeout and out-of-memory kill. */
static char *exitstatus(const struct call *c)
{
	if (!c->has_result)
		return xstrdup("");
	struct buf b = {0};
	bufprintf(&b, "exit %d", c->exit_code);
	if (num(c->result, "signal"))
		bufprintf(&b, ", signal %d", num(c->result, "signal"));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c->result, "timed_out")))
		bufputs(&b, ", timed out");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c->result, "oom")))
		bufputs(&b, ", out of memory");
	return b.data;
}

static int collect(const char *run, struct seenlist *l, struct err *e)
{
	struct calls *c;
	struct call call;
	int rc;
	if (callsopen(&c, run, e) < 0)
		return -1;
	while ((rc = callsnext(c, &call, e)) == 1) {
		l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
		struct seen *s = &l->v[l->n++];
		s->job = xstrdup(call.job);
		s->step = call.step;
		s->tool = xstrdup(call.tool ? call.tool : "");
		s->args = call.arguments ? cJSON_PrintUnformatted(call.arguments) : xstrdup("null");
		s->decision = xstrdup(call.notrun ? "not run" : call.decision ? call.decision : "");
		s->status = exitstatus(&call);
		s->digest = call.has_result ? outputdigest(call.result) : xstrdup("-");
		s->pretty = call.arguments ? cJSON_Print(call.arguments) : xstrdup("null");
		s->replayed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call.result, "replayed"));
		const char *so = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(call.result, "stdout"));
		const char *se = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(call.result, "stderr"));
		s->out = NULL;
		if (so || se) {
			struct buf b = {0};
			bufprintf(&b, "%s%s%s", so ? so : "", se && *se ? "--- stderr ---\n" : "", se ? se : "");
			s->out = b.data ? b.data : xstrdup("");
		}
	}
	callsclose(c);
	return rc;
}

static void seenfree(struct seenlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].job);
		free(l->v[i].tool);
		free(l->v[i].args);
		free(l->v[i].decision);
		free(l->v[i].digest);
		free(l->v[i].pretty);
		free(l->v[i].out);
		free(l->v[i].status);
	}
	free(l->v);
}

/* The k-th call of job in l, or NULL. */
static struct seen *nth(struct seenlist *l, const char *job, size_t k)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].job, job) == 0 && k-- == 0)
			return &l->v[i];
	return NULL;
}

static cJSON *loadjson(const char *dir, const char *name)
{
	char *p = pathjoin(dir, name);
	struct buf b = {0};
	struct err e;
	cJSON *j = readfile(p, &b, &e) == 0 ? cJSON_Parse(b.data) : NULL;
	buffree(&b);
	free(p);
	return j;
}

/* Whether two files hold the same bytes (both missing counts as the same). */
static int samefile(const char *a, const char *b)
{
	struct buf x = {0}, y = {0};
	struct err e;
	int ra = readfile(a, &x, &e), rb = readfile(b, &y, &e);
	int same = ra == rb && (ra < 0 || (x.len == y.len && memcmp(x.data, y.data, x.len) == 0));
	buffree(&x);
	buffree(&y);
	return same;
}

/* Compare the files/ trees of a job; the first difference goes to out. */
static int samefiles(const char *a, const char *b, const char *rel, const char *job, struct buf *out)
{
	char *da = pathjoin(a, rel), *db = pathjoin(b, rel);
	DIR *d = opendir(da);
	int same = 1;
	struct dirent *de;
	while (same && d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char *r = pathjoin(rel, de->d_name), *fa = pathjoin(a, r), *fb = pathjoin(b, r);
		struct stat st;
		if (lstat(fa, &st) == 0 && S_ISDIR(st.st_mode))
			same = samefiles(a, b, r, job, out);
		else if (!samefile(fa, fb)) {
			size_t skip = strlen("jobs/") + strlen(job) + strlen("/files/"); /* r is jobs/J/files/... */
			bufprintf(out, "job %s: declared file %s differs from the record\n", job, strlen(r) > skip ? r + skip : r);
			same = 0;
		}
		free(r);
		free(fa);
		free(fb);
	}
	if (d)
		closedir(d);
	free(da);
	free(db);
	return same;
}

/* Up to max lines of text, each indented, cut when longer. */
static void indent(struct buf *out, const char *text, int max)
{
	int n = 0;
	for (const char *l = text; l && *l && n < max; n++) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		bufprintf(out, "    %.*s%s\n", (int)(len > 200 ? 200 : len), l, len > 200 ? "..." : "");
		l = nl ? nl + 1 : l + len;
		if (n + 1 == max && *l)
			bufputs(out, "    ...\n");
	}
}

/* A unified diff of recorded and new text, at most max lines of it; what is cut is said. */
static void textdiff(struct buf *out, const char *label, const char *a, const char *b, int max)
{
	struct buf d = {0};
	bufprintf(out, "  %s (- recorded, + replayed):\n", label);
	if (linediff(a, strlen(a), b, strlen(b), 2, 400, &d) == 1) {
		bufputs(out, "    recorded:\n");
		indent(out, a, max / 4);
		bufputs(out, "    replayed:\n");
		indent(out, b, max / 4);
	} else {
		indent(out, d.data ? d.data : "", max);
	}
	buffree(&d);
}

/* The workspace paths a call names: its path argument, and the words of its command. */
static const char *excludedpath(const struct seen *c, const struct strv *exclude, char *hit, size_t n)
{
	cJSON *args = cJSON_Parse(c->args);
	const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "path"));
	const char *cmd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "command"));
	struct strv words = {0};
	if (path)
		strvadd(&words, path);
	char *copy = cmd ? xstrdup(cmd) : NULL, *save;
	for (char *w = copy ? strtok_r(copy, " \t\n;|&<>()'\"", &save) : NULL; w; w = strtok_r(NULL, " \t\n;|&<>()'\"", &save))
		strvadd(&words, w);
	const char *found = NULL;
	for (size_t i = 0; !found && i < words.n; i++) {
		const char *w = words.v[i];
		while (strncmp(w, "./", 2) == 0)
			w += 2;
		if (strncmp(w, "/workspace/", 11) == 0)
			w += 11;
		if (!*w || *w == '-' || *w == '/')
			continue;
		size_t len = strlen(w);
		char *t = xstrdup(w);
		while (len > 1 && t[len - 1] == '/')
			t[--len] = 0;
		for (size_t k = 0; !found && exclude && k < exclude->n; k++)
			if (globpath(exclude->v[k], t)) {
				snprintf(hit, n, "%s", t);
				found = hit;
			}
		free(t);
	}
	strvfree(&words);
	free(copy);
	cJSON_Delete(args);
	return found;
}

/* The changes of both runs, and which of their paths are not effects. */
struct effects {
	struct runchanges a, b;
	struct strv ignored; /* "ws\npath", sorted */
};

static int bystr(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static int isignored(const struct effects *fx, const char *ws, const char *path)
{
	if (!fx->ignored.n)
		return 0;
	char *key = xasprintf("%s\n%s", ws, path);
	int hit = bsearch(&key, fx->ignored.v, fx->ignored.n, sizeof *fx->ignored.v, bystr) != NULL;
	free(key);
	return hit;
}

/* Ask o->ignored about every path either run changed, once per workspace. */
static void askignored(struct effects *fx, const struct diffopts *o)
{
	if (!o->ignored)
		return;
	struct strv chains = {0};
	for (int r = 0; r < 2; r++) {
		const struct runchanges *rc = r ? &fx->b : &fx->a;
		for (size_t i = 0; i < rc->n; i++) {
			size_t k;
			for (k = 0; k < chains.n && strcmp(chains.v[k], rc->v[i].ws) != 0; k++)
				;
			if (k == chains.n)
				strvadd(&chains, rc->v[i].ws);
		}
	}
	for (size_t w = 0; w < chains.n; w++) {
		struct strv paths = {0}, keys = {0};
		for (int r = 0; r < 2; r++) {
			const struct runchanges *rc = r ? &fx->b : &fx->a;
			for (size_t i = 0; i < rc->n; i++) {
				if (strcmp(rc->v[i].ws, chains.v[w]) != 0)
					continue;
				for (size_t k = 0; k < rc->v[i].n; k++) {
					const struct change *c = &rc->v[i].v[k];
					char *p = c->type == 'd' ? xasprintf("%s/", c->path) : xstrdup(c->path);
					strvadd(&paths, p);
					strvadd(&keys, c->path);
					free(p);
				}
			}
		}
		if (paths.n) {
			unsigned char *flags = xcalloc(paths.n, 1);
			o->ignored(o->arg, chains.v[w], &paths, flags);
			for (size_t i = 0; i < paths.n; i++)
				if (flags[i]) {
					char *key = xasprintf("%s\n%s", chains.v[w], keys.v[i]);
					strvadd(&fx->ignored, key);
					free(key);
				}
			free(flags);
		}
		strvfree(&paths);
		strvfree(&keys);
	}
	strvfree(&chains);
	if (fx->ignored.n > 1)
		qsort(fx->ignored.v, fx->ignored.n, sizeof *fx->ignored.v, bystr);
}

/* The layer holding exactly what step changed (its own layer to the next), or NULL. */
static const struct layerchanges *stepchanges(const struct runchanges *rc, int step)
{
	for (size_t i = 0; i < rc->n; i++)
		if (rc->v[i].from == step && !rc->v[i].base)
			return &rc->v[i];
	return NULL;
}

/* The next change of l from *i on that is an effect, or NULL. */
static const struct change *nexteffect(const struct effects *fx, const struct layerchanges *l, size_t *i)
{
	for (; l && *i < l->n; (*i)++) {
		const struct change *c = &l->v[*i];
		if (!c->cosmetic && !isignored(fx, l->ws, c->path))
			return c;
	}
	return NULL;
}

static const char *typename(char t)
{
	return t == 'f' ? "file" : t == 'd' ? "directory" : t == 'l' ? "symlink" : "special file";
}

static void describe(struct buf *out, const struct change *c)
{
	if (!c) {
		bufputs(out, "no change");
		return;
	}
	bufprintf(out, "%s (%s", c->kind == 'A' ? "added" : c->kind == 'D' ? "removed" : "changed", typename(c->type));
	if (c->kind != 'D')
		bufprintf(out, ", mode %04o", c->mode & 07777);
	bufputs(out, ")");
}

static int sameeffect(const struct change *x, const struct change *y)
{
	if (x->kind != y->kind || x->type != y->type)
		return 0;
	if (x->kind == 'D')
		return 1;
	return x->mode == y->mode && (x->type == 'd' || memcmp(x->sum, y->sum, 32) == 0);
}

/* One path whose change differs: what each run did to it, with a text diff where both are text. */
static void filediff(struct buf *out, const struct change *x, const struct change *y)
{
	const struct change *c = x ? x : y;
	bufprintf(out, "  %s %s: recorded ", typename(c->type), c->path);
	describe(out, x);
	bufputs(out, ", replayed ");
	describe(out, y);
	bufputs(out, "\n");
	if (!x || !y || x->kind == 'D' || y->kind == 'D' || x->type != 'f' || y->type != 'f' ||
	    memcmp(x->sum, y->sum, 32) == 0)
		return;
	if (x->after && y->after && changestext(x->after, x->nafter) && changestext(y->after, y->nafter)) {
		textdiff(out, "content", x->after, y->after, 20);
	} else {
		char hx[65], hy[65];
		for (int i = 0; i < 32; i++) {
			snprintf(hx + 2 * i, 3, "%02x", x->sum[i]);
			snprintf(hy + 2 * i, 3, "%02x", y->sum[i]);
		}
		bufprintf(out, "  content: digest recorded %.16s, replayed %.16s (binary or large)\n", hx, hy);
	}
}

/* Compare the workspace changes of recorded step x and replayed step y; 1 with what differs in
 * out when they differ. */
static int workspacediff(const struct effects *fx, int x, int y, struct buf *out)
{
	const struct layerchanges *la = stepchanges(&fx->a, x), *lb = stepchanges(&fx->b, y);
	size_t i = 0, k = 0;
	int shown = 0, differ = 0;
	for (;;) {
		const struct change *ca = nexteffect(fx, la, &i), *cb = nexteffect(fx, lb, &k);
		if (!ca && !cb)
			break;
		int c = !ca ? 1 : !cb ? -1 : strcmp(ca->path, cb->path);
		const struct change *p = c <= 0 ? ca : NULL, *q = c >= 0 ? cb : NULL;
		if (c <= 0)
			i++;
		if (c >= 0)
			k++;
		if (p && q && sameeffect(p, q))
			continue;
		differ++;
		if (shown++ < MAXFILES)
			filediff(out, p, q);
	}
	if (shown > MAXFILES)
		bufprintf(out, "  ... and %d more paths\n", shown - MAXFILES);
	return differ > 0;
}

/* The output of two calls, as a short text diff (or their digests when the record holds no text). */
static void outputdiff(struct buf *out, const struct seen *x, const struct seen *y, int max)
{
	if (x->out && y->out && strcmp(x->out, y->out) != 0)
		textdiff(out, "output", x->out, y->out, max);
	else
		bufprintf(out, "  output: digest recorded %.16s, replayed %.16s (the record holds no text of it)\n", x->digest,
		          y->digest);
}

/* Add one finding to list: its head line, then its details. */
static void finding(struct buf *list, int *count, const char *job, int step, const char *what, const struct buf *details)
{
	if ((*count)++ >= MAXSHOWN)
		return;
	if (step)
		bufprintf(list, "job %s, step %d: %s\n", job, step, what);
	else
		bufprintf(list, "job %s: %s\n", job, what);
	if (details->len)
		bufputs(list, details->data);
}

/* Compare one pair of calls (either may be missing). */
static void compare(const struct effects *fx, const struct diffopts *o, const char *job, const struct seen *x,
                    const struct seen *y, struct difffound *f)
{
	const struct seen *c = x ? x : y;
	struct buf d = {0};
	const char *what = NULL;
	f->steps++;
	if (!x || !y) {
		what = x ? "no call where the record has one" : "a call the record does not have";
		bufprintf(&d, "  %s: %s %s -> %s\n", x ? "recorded" : "replayed", c->tool, c->args, c->decision);
	} else if (strcmp(x->tool, y->tool) != 0) {
		what = "another tool";
		bufprintf(&d, "  tool: recorded %s, replayed %s\n", x->tool, y->tool);
	} else if (strcmp(x->args, y->args) != 0) {
		what = "other arguments";
		textdiff(&d, "arguments", x->pretty, y->pretty, 40);
	} else if (strcmp(x->decision, y->decision) != 0) {
		what = strcmp(x->decision, "not run") == 0 || strcmp(y->decision, "not run") == 0 ? "the call happened in one only"
		                                                                                   : "another decision";
		bufprintf(&d, "  decision: recorded %s, replayed %s\n", x->decision, y->decision);
	} else if (y->replayed) {
		/* answered from the record (an MCP call): its result is the record's, nothing ran */
	} else if (strcmp(x->status, y->status) != 0) {
		what = "another exit status";
		bufprintf(&d, "  exit status: recorded %s, replayed %s\n", x->status, y->status);
		if (strcmp(x->digest, y->digest) != 0)
			outputdiff(&d, x, y, 40);
	} else if (!x->replayed && workspacediff(fx, x->step, y->step, &d)) {
		what = "another change to the workspace";
	}
	if (what) {
		char hit[512];
		if (excludedpath(c, o->exclude, hit, sizeof hit))
			bufprintf(&d, "  the step used %s, which snapshot.exclude leaves out of the snapshots: replay restored the "
			              "workspace without it, so the step could not see what it saw the night it ran\n", hit);
		finding(&f->divergence, &f->diverged, job, y ? y->step : x->step, what, &d);
	} else if (!y->replayed && strcmp(x->digest, y->digest) != 0) {
		outputdiff(&d, x, y, 12);
		finding(&f->drift, &f->drifted, job, y->step, "other output (drift: the step did the same)", &d);
	}
	buffree(&d);
}

int rundiff(const char *orig, const char *replay, const struct diffopts *o, struct difffound *f, struct err *e)
{
	struct seenlist a = {0}, b = {0};
	struct effects fx;
	memset(&fx, 0, sizeof fx);
	memset(f, 0, sizeof *f);
	int rc = collect(orig, &a, e) < 0 || collect(replay, &b, e) < 0 ? -1 : 0;
	if (rc == 0 && changesread(orig, o->maxbytes, &fx.a, e) < 0)
		rc = errctx(e, "the record's snapshots");
	else if (rc == 0 && changesread(replay, o->maxbytes, &fx.b, e) < 0)
		rc = errctx(e, "the replay's snapshots");
	if (rc == 0)
		askignored(&fx, o);
	cJSON *ra = loadjson(orig, "run.json"), *rb = loadjson(replay, "run.json"), *j;
	if (rc == 0 && (!ra || !rb))
		rc = errf(e, "run.json missing in %s", ra ? replay : orig);
	cJSON *jobs = rc == 0 ? cJSON_GetObjectItemCaseSensitive(rb, "jobs") : NULL;
	cJSON_ArrayForEach(j, jobs)
	{
		const char *job = j->string;
		for (size_t k = 0;; k++) {
			struct seen *x = nth(&a, job, k), *y = nth(&b, job, k);
			if (!x && !y)
				break;
			compare(&fx, o, job, x, y, f);
		}
		struct buf d = {0};
		cJSON *oj = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ra, "jobs"), job);
		const char *sa = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(oj, "status"));
		const char *sb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "status"));
		if (!sa || !sb || strcmp(sa, sb) != 0) {
			char *what = xasprintf("status %s, the record says %s", sb ? sb : "?", sa ? sa : "(job not in the record)");
			finding(&f->divergence, &f->diverged, job, 0, what, &d);
			free(what);
		}
		char *rel = xasprintf("jobs/%s/output.json", job), *pa = pathjoin(orig, rel), *pb = pathjoin(replay, rel);
		if (!samefile(pa, pb))
			finding(&f->divergence, &f->diverged, job, 0, "output.json differs from the record", &d);
		free(pa);
		free(pb);
		free(rel);
		rel = xasprintf("jobs/%s/files", job);
		if (!samefiles(orig, replay, rel, job, &d) || !samefiles(replay, orig, rel, job, &d)) {
			f->diverged++;
			if (f->diverged <= MAXSHOWN)
				bufputs(&f->divergence, d.data);
		}
		free(rel);
		buffree(&d);
	}
	/* a job of the record the replay never made (a matrix from an output that came out otherwise) */
	cJSON *recorded = o->whole && rc == 0 ? cJSON_GetObjectItemCaseSensitive(ra, "jobs") : NULL;
	cJSON_ArrayForEach(j, recorded)
	{
		if (cJSON_GetObjectItemCaseSensitive(j, "parent") ||
		    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rb, "jobs"), j->string))
			continue;
		struct buf d = {0};
		finding(&f->divergence, &f->diverged, j->string, 0, "the record ran it, the replay did not", &d);
		buffree(&d);
	}
	if (f->diverged > MAXSHOWN)
		bufprintf(&f->divergence, "... and %d more divergences\n", f->diverged - MAXSHOWN);
	if (f->drifted > MAXSHOWN)
		bufprintf(&f->drift, "... and %d more steps with other output\n", f->drifted - MAXSHOWN);
	cJSON_Delete(ra);
	cJSON_Delete(rb);
	seenfree(&a);
	seenfree(&b);
	changesfree(&fx.a);
	changesfree(&fx.b);
	strvfree(&fx.ignored);
	return rc;
}

void difffoundfree(struct difffound *f)
{
	buffree(&f->divergence);
	buffree(&f->drift);
}
