/* diff: replays are checked against their record, call by call. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "../util/glob.h"
#include "../util/linediff.h"
#include "calls.h"
#include "diff.h"

/* One call as compared: everything a replay must reproduce. */
struct seen {
	char *job;
	int step;
	char *tool, *args, *decision, *digest;
	char *pretty; /* the arguments, indented: what the text diff reads */
	char *out;    /* stdout and stderr as recorded, or NULL when the event holds no text */
	int exit_code;
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
		s->exit_code = call.has_result ? call.exit_code : -1;
		s->digest = call.has_result ? outputdigest(call.result) : xstrdup("-");
		s->pretty = call.arguments ? cJSON_Print(call.arguments) : xstrdup("null");
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

/* Compare the files/ trees of a job; the first difference goes to first. */
static int samefiles(const char *a, const char *b, const char *rel, const char *job, struct buf *first)
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
			same = samefiles(a, b, r, job, first);
		else if (!samefile(fa, fb)) {
			bufprintf(first, "job %s: declared file %s differs from the record", job, strchr(r, '/') ? strchr(r, '/') + 1 : r);
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

/* A unified diff of recorded and new text, at most 40 lines of it; what is cut is said. */
static void textdiff(struct buf *out, const char *label, const char *a, const char *b)
{
	struct buf d = {0};
	bufprintf(out, "  %s (- recorded, + replayed):\n", label);
	if (linediff(a, strlen(a), b, strlen(b), 2, 400, &d) == 1) {
		bufputs(out, "    recorded:\n");
		indent(out, a, 10);
		bufputs(out, "    replayed:\n");
		indent(out, b, 10);
	} else {
		indent(out, d.data ? d.data : "", 40);
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

/* The first divergence, for a person: job, step, what differed, and a text diff of it. */
static void explain(struct buf *out, const char *job, const struct seen *x, const struct seen *y, const char *what,
                    const struct strv *exclude)
{
	const struct seen *c = x ? x : y;
	bufprintf(out, "job %s, step %d: %s\n", job, c->step, what);
	if (!x || !y) {
		bufprintf(out, "  %s: %s %s -> %s\n", x ? "recorded" : "replayed", c->tool, c->args, c->decision);
	} else if (strcmp(x->tool, y->tool) != 0) {
		bufprintf(out, "  tool: recorded %s, replayed %s\n", x->tool, y->tool);
	} else if (strcmp(x->args, y->args) != 0) {
		textdiff(out, "arguments", x->pretty, y->pretty);
	} else if (strcmp(x->decision, y->decision) != 0) {
		bufprintf(out, "  decision: recorded %s, replayed %s (the rules changed?)\n", x->decision, y->decision);
	} else {
		if (x->exit_code != y->exit_code)
			bufprintf(out, "  exit code: recorded %d, replayed %d\n", x->exit_code, y->exit_code);
		if (x->out && y->out && strcmp(x->out, y->out) != 0)
			textdiff(out, "output", x->out, y->out);
		else if (strcmp(x->digest, y->digest) != 0)
			bufprintf(out, "  output: digest recorded %.16s, replayed %.16s (the record holds no text of it)\n",
			          x->digest, y->digest);
	}
	char hit[512];
	if (excludedpath(c, exclude, hit, sizeof hit))
		bufprintf(out, "  the step used %s, which snapshot.exclude leaves out of the snapshots: replay restored the "
		               "workspace without it, so the step could not see what it saw the night it ran\n", hit);
	if (out->len && out->data[out->len - 1] == '\n')
		out->data[--out->len] = 0;
}

int rundiff(const char *orig, const char *replay, const struct strv *exclude, struct buf *first, struct err *e)
{
	struct seenlist a = {0}, b = {0};
	int rc = collect(orig, &a, e) < 0 || collect(replay, &b, e) < 0 ? -1 : 0;
	cJSON *ra = loadjson(orig, "run.json"), *rb = loadjson(replay, "run.json"), *j;
	if (rc == 0 && (!ra || !rb))
		rc = errf(e, "run.json missing in %s", ra ? replay : orig);
	cJSON *jobs = rc == 0 ? cJSON_GetObjectItemCaseSensitive(rb, "jobs") : NULL;
	cJSON_ArrayForEach(j, jobs)
	{
		const char *job = j->string;
		for (size_t k = 0; rc == 0; k++) {
			struct seen *x = nth(&a, job, k), *y = nth(&b, job, k);
			if (!x && !y)
				break;
			const char *what = NULL;
			if (!x)
				what = "a call the record does not have";
			else if (!y)
				what = "no call where the record has one";
			else if (strcmp(x->tool, y->tool) != 0)
				what = "another tool";
			else if (strcmp(x->args, y->args) != 0)
				what = "other arguments";
			else if (strcmp(x->decision, y->decision) != 0)
				what = "another decision";
			else if (x->exit_code != y->exit_code)
				what = "another exit code";
			else if (strcmp(x->digest, y->digest) != 0)
				what = "other output";
			if (what) {
				explain(first, job, x, y, what, exclude);
				rc = 1;
			}
		}
		if (rc)
			break;
		cJSON *oj = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ra, "jobs"), job);
		const char *sa = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(oj, "status"));
		const char *sb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "status"));
		if (!sa || !sb || strcmp(sa, sb) != 0) {
			bufprintf(first, "job %s: status %s, the record says %s", job, sb ? sb : "?", sa ? sa : "(job not in the record)");
			rc = 1;
			break;
		}
		char *rel = xasprintf("jobs/%s/output.json", job), *pa = pathjoin(orig, rel), *pb = pathjoin(replay, rel);
		int same = samefile(pa, pb);
		free(pa);
		free(pb);
		free(rel);
		if (!same) {
			bufprintf(first, "job %s: output.json differs from the record", job);
			rc = 1;
			break;
		}
		rel = xasprintf("jobs/%s/files", job);
		if (!samefiles(orig, replay, rel, job, first) || !samefiles(replay, orig, rel, job, first))
			rc = 1;
		free(rel);
		if (rc)
			break;
	}
	cJSON_Delete(ra);
	cJSON_Delete(rb);
	seenfree(&a);
	seenfree(&b);
	return rc;
}
