/* upstream: load finished jobs from verified run directories and hand them to a run as done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../artifacts/runjson.h"
#include "../artifacts/sign.h"
#include "../artifacts/verify.h"
#include "progress.h"
#include "upstream.h"

const struct upjob *upstreamjob(const struct upstream *u, const char *id)
{
	for (size_t i = 0; i < u->n; i++)
		if (strcmp(u->v[i].id, id) == 0)
			return &u->v[i];
	return NULL;
}

/* The run must be signed as u asks, whole and untouched: a run cut short, edited or with a
 * signature that fails is no one's upstream. */
static int checkrun(const struct upstream *u, const char *dir, const char *flag, struct err *e)
{
	char *who = NULL;
	int rc = runsigsource(dir, u->allowed, u->signing, ERR_INPUT, &who, e);
	free(who);
	if (rc < 0)
		return errctx(e, "%s", flag);
	if (rc > 0)
		progressj(NULL, "%s %s: signed, and its signature not checked (--allowed-signers FILE checks it)", flag, dir);
	if (runverified(dir, ERR_INPUT, e) < 0) {
		e->kind = ERR_INPUT;
		return errctx(e, "%s", flag);
	}
	return 0;
}

int upstreamload(struct upstream *u, const char *dir, const struct manifest *m, struct err *e)
{
	const char *flag = u->flag ? u->flag : "--from";
	if (checkrun(u, dir, flag, e) < 0)
		return -1;
	cJSON *r = runjsonread(dir, e), *j;
	if (!r) {
		e->kind = ERR_INPUT;
		return errctx(e, "%s %s", flag, dir);
	}
	int rc = 0;
	const char *runid = jsonstr(r, "run_id", "");
	if (m && !u->edits) {
		char hex[65];
		const char *want = jsonstr(cJSON_GetObjectItemCaseSensitive(r, "manifest"), "sha256", "");
		if (sha256file(m->path, hex, e) < 0)
			rc = -1;
		else if (strcmp(hex, want) != 0)
			rc = errc(e, ERR_INPUT, "%s %s: that run ran another manifest (sha256 %.12s, this one is %.12s)", flag, dir,
			          want, hex);
	}
	cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r, "jobs"))
	{
		if (rc < 0)
			break;
		if (cJSON_GetObjectItemCaseSensitive(j, "parent"))
			continue; /* a delegate's run, part of its parent job */
		if (!runnameok(j->string)) {
			rc = errc(e, ERR_INPUT, "%s %s: run.json names a job '%.80s' that is not a job id", flag, dir, j->string);
			break;
		}
		const struct upjob *had = upstreamjob(u, j->string);
		if (had) {
			rc = errc(e, ERR_INPUT, "%s: job '%s' is in both %s and %s; pass only one of them", flag, j->string, had->run,
			          dir);
			break;
		}
		const cJSON *mx = cJSON_GetObjectItemCaseSensitive(j, "matrix");
		const struct job *mxj = m ? manifestjob(m, jsonstr(mx, "job", "")) : NULL;
		/* a member of a matrix made from a job's output: the matrix is made again here, and this
		 * member is taken when it makes it (upstreamjob by its id and values) */
		int late = mxj && mxj->mxpending && !manifestjob(m, j->string);
		if (m && !late && !manifestjob(m, j->string)) {
			rc = errc(e, ERR_INPUT, "%s %s: job '%s' is not in %s", flag, dir, j->string, m->path);
			break;
		}
		const char *status = jsonstr(j, "status", "");
		cJSON *out = NULL;
		if (strcmp(status, "succeeded") == 0) {
			char *p = xasprintf("%s/jobs/%s/output.json", dir, j->string);
			out = jsonread(p, e);
			free(p);
			if (!out) {
				e->kind = ERR_INPUT;
				rc = errctx(e, "%s %s: job '%s' succeeded but its output cannot be read", flag, dir, j->string);
				break;
			}
		}
		u->v = xrealloc(u->v, (u->n + 1) * sizeof *u->v);
		struct upjob *uj = &u->v[u->n++];
		uj->id = xstrdup(j->string);
		uj->status = xstrdup(status);
		const char *err = jsonstr(j, "error", NULL);
		uj->error = err ? xstrdup(err) : NULL;
		uj->output = out;
		uj->run = xstrdup(dir);
		uj->run_id = xstrdup(runid);
		uj->values = late ? cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(mx, "values"), 1) : NULL;
	}
	cJSON_Delete(r);
	return rc;
}

void upstreamtake(const struct upjob *uj, struct jobresult *r)
{
	enum jobstatus st = JOB_FAILED;
	for (enum jobstatus s = JOB_PENDING; s <= JOB_CANCELLED; s++)
		if (strcmp(jobstatusname(s), uj->status) == 0)
			st = s;
	if (st == JOB_PENDING)
		st = JOB_FAILED; /* a job that never ended is not done */
	r->status = st;
	r->output = st == JOB_SUCCEEDED && uj->output ? cJSON_Duplicate(uj->output, 1) : NULL;
	if (st == JOB_SUCCEEDED && !r->output)
		r->status = JOB_FAILED;
	snprintf(r->error, sizeof r->error, "from run %s%s%.900s", uj->run_id, uj->error ? ": " : "",
	         uj->error ? uj->error : "");
}

int upstreamapply(const struct upstream *u, const struct manifest *m, struct jobresult *res, int *taken)
{
	int n = 0;
	for (size_t i = 0; i < m->njobs; i++) {
		const struct upjob *uj = upstreamjob(u, m->jobs[i].id);
		if (!uj || uj->values)
			continue;
		upstreamtake(uj, &res[i]);
		taken[i] = 1;
		n++;
	}
	return n;
}

cJSON *upstreamjson(const struct upstream *u, const struct manifest *m, const int *taken)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; i < m->njobs; i++) {
		const struct upjob *uj = taken[i] ? upstreamjob(u, m->jobs[i].id) : NULL;
		if (!uj)
			continue;
		cJSON *j = cJSON_AddObjectToObject(o, uj->id);
		cJSON_AddStringToObject(j, "run_id", uj->run_id);
		cJSON_AddStringToObject(j, "status", uj->status);
	}
	return o;
}

void upstreamfree(struct upstream *u)
{
	for (size_t i = 0; i < u->n; i++) {
		free(u->v[i].id);
		free(u->v[i].status);
		free(u->v[i].error);
		cJSON_Delete(u->v[i].output);
		free(u->v[i].run);
		free(u->v[i].run_id);
		cJSON_Delete(u->v[i].values);
	}
	free(u->v);
	memset(u, 0, sizeof *u);
}
