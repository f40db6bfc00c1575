/* resume: run --resume RUN: the jobs of RUN that did not succeed (and what needs them) run again,
 * the others are carried over from RUN whole, into a new run directory that verifies on its own. */
#ifndef NS_RESUME_H
#define NS_RESUME_H

#include <cjson/cJSON.h>
#include "upstream.h"

struct resume {
	char *dir;        /* the run resumed */
	cJSON *run;       /* its run.json */
	int last;         /* its last step: the new run's steps count on from there */
	struct upstream up;
};

/* Load the finished run at dir, which must verify (its signature with allowed, as runsigsource
 * says for a new run signed or not) and have run manifest m. */
int resumeload(struct resume *r, const char *dir, const struct manifest *m, const char *allowed, int signing,
               struct err *e);
/* taken[i] = 1 (res[i] its status and output) for each job that succeeded in the run and needs no
 * job that runs again; returns how many. */
int resumeapply(const struct resume *r, const struct manifest *m, struct jobresult *res, int *taken);
/* Member j of a matrix made during the run from a needed job's output, about to start with input:
 * when the run resumed has the same member (its id, its matrix values) succeeded with that same
 * input, copy its folder (and its delegates') into rundir, set res as it ended, and return 1; 0
 * when it must run; -1 when it cannot be carried (code 2). */
int resumemember(const struct resume *r, const struct job *j, const char *input, struct jobresult *res,
                 const char *rundir, struct err *e);
/* Copy the taken jobs' folders (their delegates' too) and the run's layers into the run directory
 * rundir (closed: see carrylayers). */
int resumecarry(const struct resume *r, const struct manifest *m, const int *taken, const char *rundir, int closed,
                struct err *e);
/* Into the new run.json: "origin" and the taken jobs' entries as the run recorded them; their
 * usage and cost are added to *total and *cost, which run.json's totals are. */
void resumejson(const struct resume *r, const struct manifest *m, const int *taken, cJSON *runjson,
                struct usage *total, double *cost);
void resumefree(struct resume *r);

#endif
