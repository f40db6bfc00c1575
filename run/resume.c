/* resume: carry a run's succeeded jobs into a new run and rerun the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../artifacts/calls.h"
#include "../artifacts/carry.h"
#include "../artifacts/events.h"
#include "../artifacts/runjson.h"
#include "../manifest/yaml.h"
#include "../util/copy.h"
#include "progress.h"
#include "resume.h"

int resumeload(struct resume *r, const char *dir, const struct manifest *m, const char *allowed, int signing,
               struct err *e)
{
	memset(r, 0, sizeof *r);
	r->up.flag = "--resume";
	r->up.allowed = allowed;
	r->up.signing = signing;
	r->up.edits = 1; /* resumeedits compares the manifests job by job */
	if (upstreamload(&r->up, dir, m, e) < 0)
		return -1;
	r->dir = xstrdup(dir);
	if (!(r->run = runjsonread(dir, e)) || (r->last = runlaststep(dir, e)) < 0) {
		e->kind = ERR_INPUT;
		return errctx(e, "--resume %s", dir);
	}
	return 0;
}

/* The entry of run.json's jobs for member id of matrix group in the run resumed, or NULL. */
static const cJSON *oldmember(const struct resume *r, const char *group, const char *id)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r->run, "jobs"), id);
	const cJSON *mx = cJSON_GetObjectItemCaseSensitive(j, "matrix");
	if (!j || cJSON_GetObjectItemCaseSensitive(j, "parent") || strcmp(jsonstr(mx, "job", ""), group) != 0)
		return NULL;
	return j;
}

/* Whether the pending matrix job j (made from a needed job's output) made members in the run
 * resumed and every one of them succeeded: then, when what it needs is carried, it makes the same
 * members again and they are carried, so what needs it need not run again. */
static int membersdone(const struct resume *r, const struct job *j)
{
	const cJSON *x;
	int n = 0;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(r->run, "jobs"))
	{
		if (!oldmember(r, j->id, x->string))
			continue;
		if (strcmp(jsonstr(x, "status", ""), "succeeded") != 0)
			return 0;
		n++;
	}
	return n > 0;
}

int resumeapply(struct resume *r, const struct manifest *m, struct jobresult *res, int *taken)
{
	/* A job runs again when it did not succeed, or when a job it needs runs again: in needs order. */
	int *again = xcalloc(m->njobs ? m->njobs : 1, sizeof *again), n = 0;
	free(r->again);
	r->again = again;
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < m->njobs; i++) {
			if (again[i])
				continue;
			const struct upjob *uj = upstreamjob(&r->up, m->jobs[i].id);
			int a = !uj || strcmp(uj->status, "succeeded") != 0 || !uj->output;
			if (m->jobs[i].mxpending && !uj)
				a = !membersdone(r, &m->jobs[i]);
			for (size_t d = 0; !a && d < m->jobs[i].needs.n; d++)
				a = again[manifestjob(m, m->jobs[i].needs.v[d]) - m->jobs];
			if (a)
				again[i] = changed = 1;
		}
	}
	for (size_t i = 0; i < m->njobs; i++) {
		if (again[i] || m->jobs[i].mxpending)
			continue; /* a pending matrix is made again in the run: its members are carried one by one */
		const struct upjob *uj = upstreamjob(&r->up, m->jobs[i].id);
		res[i].status = JOB_SUCCEEDED;
		res[i].output = cJSON_Duplicate(uj->output, 1);
		snprintf(res[i].error, sizeof res[i].error, "from run %s", uj->run_id);
		taken[i] = 1;
		n++;
	}
	return n;
}

/* Whether s is 64 lowercase hex digits (a sha256 as the runner writes it). */
static int hexsha(const char *s)
{
	size_t i = 0;
	for (; s && i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s && !s[64];
}

/* Where two manifests differ: the dotted path of each key (as said and recorded), and the section
 * (top-level key) and the name in it (second-level key, or "") it lies in, taken from the tree
 * itself, never from the path (names may hold dots). */
struct edits {
	struct strv key, top, name;
};

static void editadd(struct edits *d, const char *key, const char *top, const char *name)
{
	strvadd(&d->key, *key ? key : "(the whole manifest)");
	strvadd(&d->top, top ? top : "");
	strvadd(&d->name, name ? name : "");
}

/* Add where JSON a and b differ below path (depth keys deep) to d: objects key by key, anything
 * else whole. */
static void jdiff(const cJSON *a, const cJSON *b, const char *path, int depth, const char *top, const char *name,
                  struct edits *d)
{
	if (!cJSON_IsObject(a) || !cJSON_IsObject(b)) {
		if (!cJSON_Compare(a, b, 1))
			editadd(d, path, top, name);
		return;
	}
	for (int side = 0; side < 2; side++) {
		const cJSON *x, *from = side ? b : a;
		cJSON_ArrayForEach(x, from)
		{
			const cJSON *other = cJSON_GetObjectItemCaseSensitive(side ? a : b, x->string);
			if (side && other)
				continue; /* both have it: compared from a */
			char *p = *path ? xasprintf("%s.%s", path, x->string) : xstrdup(x->string);
			const char *t = depth == 0 ? x->string : top, *n = depth == 1 ? x->string : name;
			if (side)
				editadd(d, p, t, n); /* added */
			else
				jdiff(x, other, p, depth + 1, t, n, d);
			free(p);
		}
	}
}

/* Whether a change in section top (a top-level key), name in it ("" for the whole section),
 * decides job j of m: its own entry (its matrix's), its worker and the workers it delegates to,
 * their models, and every key outside jobs, workers and models (defaults, rules, sandbox, MCP
 * servers...: they apply to every job). */
static int decides(const struct manifest *m, const struct job *j, const char *top, const char *name)
{
	int isjobs = strcmp(top, "jobs") == 0, isworkers = strcmp(top, "workers") == 0;
	if ((!isjobs && !isworkers && strcmp(top, "models") != 0) || !*name)
		return 1;
	if (isjobs)
		return strcmp(name, j->group ? j->group : j->id) == 0;
	/* the workers the job runs: its own and, transitively, those it delegates to */
	const struct worker *ws[64];
	size_t n = 0;
	const struct worker *w0 = manifestworker(m, j->worker);
	if (w0)
		ws[n++] = w0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ws[i]->delegates.n && n < 64; k++) {
			const struct worker *dw = manifestworker(m, ws[i]->delegates.v[k]);
			int had = !dw;
			for (size_t h = 0; !had && h < n; h++)
				had = ws[h] == dw;
			if (!had)
				ws[n++] = dw;
		}
	if (n == 64)
		return 1; /* more than can be told apart: take it as deciding */
	for (size_t i = 0; i < n; i++) {
		const char *x = isworkers ? ws[i]->name : ws[i]->model;
		if (x && strcmp(x, name) == 0)
			return 1;
	}
	return !isworkers && jobmodel(m, j) && strcmp(jobmodel(m, j), name) == 0;
}

/* The manifest file a run directory holds as its own (run.json's manifest.file), as JSON. */
static cJSON *oldmanifest(const struct resume *r, struct err *e)
{
	const char *file = jsonstr(cJSON_GetObjectItemCaseSensitive(r->run, "manifest"), "file", "");
	if (!runnameok(file)) {
		errc(e, ERR_INPUT, "--resume %s: run.json's manifest.file '%.80s' is not a file name", r->dir, file);
		return NULL;
	}
	char *p = xasprintf("%s/manifest/%s", r->dir, file);
	struct buf text = {0};
	struct ydoc y = {0};
	cJSON *j = NULL;
	if (readfile(p, &text, e) == 0 && yload(&y, p, text.data, text.len, 0, e) == 0)
		j = yjson(&y, yroot(&y));
	yfree(&y);
	buffree(&text);
	free(p);
	if (!j && !e->msg[0])
		errc(e, ERR_INPUT, "--resume %s: its manifest cannot be read", r->dir);
	return j;
}

/* Whether job i of m is carried over: taken, or a matrix made during the run that runs not again
 * (its members are carried one by one). */
static int carriedjob(const struct resume *r, const struct manifest *m, const int *taken, size_t i)
{
	return taken[i] || (m->jobs[i].mxpending && r->again && !r->again[i]);
}

int resumeedits(struct resume *r, const struct manifest *m, const int *taken, struct err *e)
{
	char hex[65];
	const cJSON *om = cJSON_GetObjectItemCaseSensitive(r->run, "manifest"), *x;
	const char *osha = jsonstr(om, "sha256", "");
	if (sha256file(m->path, hex, e) < 0)
		return -1;
	/* the manifests carried jobs ran under: the run's own, and those its own carried jobs ran under */
	r->manifests = cJSON_CreateArray();
	struct strv shas = {0};
	if (strcmp(osha, hex) != 0)
		strvadd(&shas, osha);
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r->run, "origin"), "manifests"))
	{
		const char *s = jsonstr(x, "sha256", "");
		int had = strcmp(s, hex) == 0;
		for (size_t i = 0; !had && i < shas.n; i++)
			had = strcmp(shas.v[i], s) == 0;
		if (!had)
			strvadd(&shas, s);
	}
	for (size_t i = 0; i < shas.n; i++) {
		if (!hexsha(shas.v[i])) {
			strvfree(&shas);
			return errc(e, ERR_INPUT, "--resume %s: run.json names a manifest sha256 '%.80s' that is not one", r->dir,
			            shas.v[i]);
		}
		cJSON_AddItemToArray(r->manifests, cJSON_CreateObject());
		cJSON_AddStringToObject(cJSON_GetArrayItem(r->manifests, (int)i), "sha256", shas.v[i]);
	}
	strvfree(&shas);
	r->edits = cJSON_CreateArray();
	if (strcmp(osha, hex) == 0)
		return 0; /* the same manifest, byte for byte */
	cJSON *old = oldmanifest(r, e);
	if (!old)
		return -1;
	struct ydoc y = {0};
	struct buf text = {0};
	cJSON *now = NULL;
	if (readfile(m->path, &text, e) == 0 && yload(&y, m->path, text.data, text.len, 0, e) == 0)
		now = yjson(&y, yroot(&y));
	yfree(&y);
	buffree(&text);
	if (!now) {
		cJSON_Delete(old);
		if (!e->msg[0])
			errc(e, ERR_INPUT, "%s: cannot be read", m->path);
		return -1;
	}
	struct edits d = {0};
	jdiff(old, now, "", 0, NULL, NULL, &d);
	const struct strv keys = d.key;
	cJSON_Delete(old);
	cJSON_Delete(now);
	int rc = 0;
	for (size_t k = 0; k < keys.n; k++) {
		cJSON *ed = cJSON_CreateObject(), *ids = cJSON_CreateArray();
		int carried = 0;
		cJSON_AddStringToObject(ed, "key", keys.v[k]);
		for (size_t i = 0; i < m->njobs; i++) {
			if (!decides(m, &m->jobs[i], d.top.v[k], d.name.v[k]))
				continue;
			cJSON_AddItemToArray(ids, cJSON_CreateString(m->jobs[i].id));
			if (carriedjob(r, m, taken, i)) {
				progressj(m->jobs[i].id, "manifest key %s changed since run %s, and the job is carried over", keys.v[k],
				          r->dir);
				if (rc == 0)
					rc = errc(e, ERR_INPUT,
					          "--resume %s: job %s is carried over (it succeeded there), and the manifest changed its "
					          "key %s; undo that change, or run the night anew",
					          r->dir, m->jobs[i].id, keys.v[k]);
				carried = 1;
			} else
				progressj(m->jobs[i].id, "manifest key %s changed since run %s: the job runs again", keys.v[k], r->dir);
		}
		if (!cJSON_GetArraySize(ids))
			progressj(NULL, "manifest key %s changed since run %s: no job uses it", keys.v[k], r->dir);
		cJSON_AddItemToObject(ed, "jobs", ids);
		cJSON_AddBoolToObject(ed, "carried", carried);
		cJSON_AddItemToArray(r->edits, ed);
	}
	/* A matrix made during the run whose definition changed makes members that all run again (its
	 * worker may come from its values: then any change of a worker or a model counts). */
	for (size_t i = 0; i < m->njobs; i++) {
		const struct job *j = &m->jobs[i];
		int hit = 0;
		for (size_t k = 0; j->mxpending && !hit && k < keys.n; k++)
			hit = decides(m, j, d.top.v[k], d.name.v[k]) ||
			      (!manifestworker(m, j->worker) && strcmp(d.top.v[k], "jobs") != 0);
		if (hit)
			strvadd(&r->fresh, j->id);
	}
	strvfree(&d.key);
	strvfree(&d.top);
	strvfree(&d.name);
	return rc;
}

/* The job entries of the resumed run that belong to taken job i: its own and its delegates'. */
static int carried(const cJSON *entry, const char *id, const struct manifest *m, const int *taken)
{
	const char *parent = jsonstr(entry, "parent", NULL);
	const struct job *j = manifestjob(m, parent ? parent : id);
	return j && taken[j - m->jobs];
}

int resumecarry(const struct resume *r, const struct manifest *m, const int *taken, const char *rundir, int closed,
                struct err *e)
{
	cJSON *j;
	cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r->run, "jobs"))
	{
		if (!carried(j, j->string, m, taken))
			continue;
		if (!runnameok(j->string))
			return errc(e, ERR_INPUT, "--resume %s: run.json names a job '%.80s' that is not a job id", r->dir, j->string);
		if (carryjob(r->dir, rundir, j->string, e) < 0)
			return errctx(e, "--resume: carrying job %s", j->string);
	}
	if (carrylayers(r->dir, rundir, r->last, closed, e) < 0)
		return errctx(e, "--resume: carrying the layers of %s", r->dir);
	/* the manifests the carried jobs ran under, each checked against its sha256 */
	const char *osha = jsonstr(cJSON_GetObjectItemCaseSensitive(r->run, "manifest"), "sha256", "");
	const char *ofile = jsonstr(cJSON_GetObjectItemCaseSensitive(r->run, "manifest"), "file", "");
	cJSON_ArrayForEach(j, r->manifests)
	{
		const char *sha = jsonstr(j, "sha256", "");
		char hex[65];
		char *src = strcmp(sha, osha) == 0 && runnameok(ofile) ? xasprintf("%s/manifest/%s", r->dir, ofile)
		                                                       : xasprintf("%s/manifest/origin-%s.yaml", r->dir, sha);
		char *dst = xasprintf("%s/manifest/origin-%s.yaml", rundir, sha);
		int rc = sha256file(src, hex, e);
		if (rc == 0 && strcmp(hex, sha) != 0)
			rc = errc(e, ERR_INPUT, "%s has sha256 %.16s..., run.json says %.16s...", src, hex, sha);
		if (rc == 0)
			rc = copyfile(src, dst, 0, e);
		free(src);
		free(dst);
		if (rc < 0)
			return errctx(e, "--resume %s: the manifest its jobs ran under", r->dir);
	}
	return 0;
}

/* The input job id was given in the run resumed (its job_start event), or NULL. */
static char *oldinput(const struct resume *r, const char *id, struct err *e)
{
	char *p = xasprintf("%s/jobs/%s/events.jsonl.zst", r->dir, id), *in = NULL;
	struct evreader *er;
	const char *line;
	size_t len;
	if (evropen(&er, p, e) == 0) {
		if (evrnext(er, &line, &len, e) == 1) {
			cJSON *ev = cJSON_ParseWithLength(line, len);
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, "input");
			if (strcmp(jsonstr(ev, "type", ""), "job_start") == 0 && cJSON_IsString(v))
				in = xstrdup(v->valuestring);
			cJSON_Delete(ev);
		}
		evrclose(er);
	}
	free(p);
	return in;
}

/* A job entry's usage and cost as the run resumed recorded them (missing numbers count 0). */
static void oldusage(const cJSON *entry, struct usage *u, double *cost)
{
	usageread(cJSON_GetObjectItemCaseSensitive(entry, "usage"), u);
	double c = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(entry, "cost"));
	*cost = c == c && c >= 0 && c <= 1e12 ? c : 0;
}

int resumemember(const struct resume *r, const struct job *j, const char *input, struct jobresult *res,
                 const char *rundir, struct err *e)
{
	for (size_t i = 0; j->group && i < r->fresh.n; i++)
		if (strcmp(r->fresh.v[i], j->group) == 0)
			return 0; /* the manifest changed what makes it: it runs */
	const cJSON *old = j->group ? oldmember(r, j->group, j->id) : NULL;
	if (!old || strcmp(jsonstr(old, "status", ""), "succeeded") != 0 ||
	    !cJSON_Compare(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(old, "matrix"), "values"),
	                   j->mxvalues, 1))
		return 0;
	struct err ie = {0};
	char *in = oldinput(r, j->id, &ie);
	int same = in && strcmp(in, input) == 0;
	free(in);
	if (!same)
		return 0; /* the same member given another input (what it needs gave other outputs): it runs */
	char *p = xasprintf("%s/jobs/%s/output.json", r->dir, j->id);
	cJSON *out = jsonread(p, e);
	free(p);
	if (!out) {
		e->kind = ERR_INPUT;
		return errctx(e, "--resume %s: job '%s' succeeded but its output cannot be read", r->dir, j->id);
	}
	/* its folder, and its delegates' */
	int rc = carryjob(r->dir, rundir, j->id, e);
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(r->run, "jobs"))
	{
		if (rc < 0)
			break;
		if (strcmp(jsonstr(x, "parent", ""), j->id) != 0)
			continue;
		if (!runnameok(x->string))
			rc = errc(e, ERR_INPUT, "--resume %s: run.json names a job '%.80s' that is not a job id", r->dir, x->string);
		else
			rc = carryjob(r->dir, rundir, x->string, e);
	}
	if (rc < 0) {
		cJSON_Delete(out);
		return errctx(e, "--resume: carrying job %s", j->id);
	}
	jobresultfree(res);
	memset(res, 0, sizeof *res);
	res->status = JOB_SUCCEEDED;
	res->output = out;
	oldusage(old, &res->usage, &res->cost); /* what it spent, counted in the run's totals */
	snprintf(res->error, sizeof res->error, "from run %s", jsonstr(r->run, "run_id", ""));
	return 1;
}

void resumejson(const struct resume *r, const struct manifest *m, const int *taken, cJSON *runjson,
                struct usage *total, double *cost)
{
	cJSON *o = cJSON_AddObjectToObject(runjson, "origin");
	const char *id = jsonstr(r->run, "run_id", "");
	cJSON_AddStringToObject(o, "run_id", id);
	cJSON_AddStringToObject(o, "dir", r->dir);
	cJSON_AddStringToObject(o, "status", jsonstr(r->run, "status", ""));
	cJSON_AddNumberToObject(o, "last_step", r->last);
	const cJSON *om = cJSON_GetObjectItemCaseSensitive(r->run, "manifest");
	cJSON_AddStringToObject(o, "manifest_sha256", jsonstr(om, "sha256", ""));
	if (cJSON_GetArraySize(r->manifests))
		cJSON_AddItemToObject(o, "manifests", cJSON_Duplicate(r->manifests, 1));
	if (cJSON_GetArraySize(r->edits))
		cJSON_AddItemToObject(o, "edits", cJSON_Duplicate(r->edits, 1));
	cJSON *jobs = cJSON_GetObjectItemCaseSensitive(runjson, "jobs"), *j;
	if (!jobs)
		jobs = cJSON_AddObjectToObject(runjson, "jobs");
	cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r->run, "jobs"))
	{
		if (!carried(j, j->string, m, taken) || cJSON_GetObjectItemCaseSensitive(jobs, j->string))
			continue;
		cJSON *c = cJSON_Duplicate(j, 1);
		struct usage u;
		double jc;
		oldusage(j, &u, &jc);
		usageadd(total, &u);
		*cost += jc;
		if (!cJSON_GetObjectItemCaseSensitive(c, "carried_from"))
			cJSON_AddStringToObject(c, "carried_from", id); /* carried twice: the run it ran in */
		cJSON_AddItemToObject(jobs, j->string, c);
	}
}

void resumefree(struct resume *r)
{
	upstreamfree(&r->up);
	cJSON_Delete(r->run);
	cJSON_Delete(r->edits);
	cJSON_Delete(r->manifests);
	free(r->again);
	strvfree(&r->fresh);
	free(r->dir);
	memset(r, 0, sizeof *r);
}
