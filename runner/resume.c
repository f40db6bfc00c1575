/* resume: carry a run's succeeded jobs into a new run and rerun the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../artifacts/calls.h"
#include "../artifacts/carry.h"
#include "../artifacts/runjson.h"
#include "resume.h"

int resumeload(struct resume *r, const char *dir, const struct manifest *m, struct err *e)
{
	memset(r, 0, sizeof *r);
	r->up.flag = "--resume";
	if (upstreamload(&r->up, dir, m, e) < 0)
		return -1;
	r->dir = xstrdup(dir);
	if (!(r->run = runjsonread(dir, e)) || (r->last = runlaststep(dir, e)) < 0) {
		e->code = 2;
		return errctx(e, "--resume %s", dir);
	}
	return 0;
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
			for (size_t d = 0; !a && d < m->jobs[i].needs.n; d++)
				a = again[manifestjob(m, m->jobs[i].needs.v[d]) - m->jobs];
			if (a)
				again[i] = changed = 1;
		}
	}
	for (size_t i = 0; i < m->njobs; i++) {
		if (again[i])
			continue;
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

int resumecarry(const struct resume *r, const struct manifest *m, const int *taken, const char *rundir,
                struct err *e)
{
	cJSON *j;
	cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r->run, "jobs"))
	{
		if (!carried(j, j->string, m, taken))
			continue;
		if (!runnameok(j->string))
			return errc(e, 2, "--resume %s: run.json names a job '%.80s' that is not a job id", r->dir, j->string);
		if (carryjob(r->dir, rundir, j->string, e) < 0)
			return errctx(e, "--resume: carrying job %s", j->string);
	}
	if (carrylayers(r->dir, rundir, e) < 0)
		return errctx(e, "--resume: carrying the layers of %s", r->dir);
	return 0;
}

void resumejson(const struct resume *r, const struct manifest *m, const int *taken, cJSON *runjson)
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
