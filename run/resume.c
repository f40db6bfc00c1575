/* resume: carry a run's succeeded jobs into a new run and rerun the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../artifacts/calls.h"
#include "../artifacts/carry.h"
#include "../artifacts/events.h"
#include "../artifacts/runjson.h"
#include "resume.h"

int resumeload(struct resume *r, const char *dir, const struct manifest *m, const char *allowed, int signing,
               struct err *e)
{
	memset(r, 0, sizeof *r);
	r->up.flag = "--resume";
	r->up.allowed = allowed;
	r->up.signing = signing;
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

int resumeapply(const struct resume *r, const struct manifest *m, struct jobresult *res, int *taken)
{
	/* A job runs again when it did not succeed, or when a job it needs runs again: in needs order. */
	int *again = xcalloc(m->njobs ? m->njobs : 1, sizeof *again), n = 0;
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
	free(again);
	return n;
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
	const cJSON *us = cJSON_GetObjectItemCaseSensitive(entry, "usage");
	static const char *const keys[] = {"input", "output", "cached", "reasoning"};
	int64_t *f[] = {&u->input, &u->output, &u->cached, &u->reasoning};
	for (int k = 0; k < 4; k++) {
		double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(us, keys[k]));
		*f[k] = v == v && v >= 0 && v <= 1e15 ? (int64_t)v : 0;
	}
	double c = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(entry, "cost"));
	*cost = c == c && c >= 0 && c <= 1e12 ? c : 0;
}

int resumemember(const struct resume *r, const struct job *j, const char *input, struct jobresult *res,
                 const char *rundir, struct err *e)
{
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
	free(r->dir);
	memset(r, 0, sizeof *r);
}
