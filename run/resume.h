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
	int *again;       /* by job of the manifest: runs again (resumeapply) */
	cJSON *edits;     /* [{"key", "jobs": [ids], "carried": bool}]: how the manifest differs (resumeedits) */
	cJSON *manifests; /* [{"sha256"}]: the manifests carried jobs ran under, other than this run's */
	struct strv fresh; /* matrices made during the run that an edit decides: no member is carried */
};

/* Load the finished run at dir, which must verify (its signature with allowed, as runsigsource
 * says for a new run signed or not); its manifest may differ from m (resumeedits). */
int resumeload(struct resume *r, const char *dir, const struct manifest *m, const char *allowed, int signing,
               struct err *e);
/* taken[i] = 1 (res[i] its status and output) for each job that succeeded in the run and needs no
 * job that runs again; returns how many. */
int resumeapply(struct resume *r, const struct manifest *m, struct jobresult *res, int *taken);
/* Compare m with the manifest the run resumed ran, key by key: say on stderr each key that changed
 * and the jobs it decides, record it for run.json, and refuse (code 2, naming the job and the key)
 * a change that decides a job carried over (taken, or a matrix whose members may be carried).
 * After resumeapply. */
int resumeedits(struct resume *r, const struct manifest *m, const int *taken, struct err *e);
/* Member j of a matrix made during the run from a needed job's output, about to start with input:
 * when the run resumed has the same member (its id, its matrix values) succeeded with that same
 * input, copy its folder (and its delegates') into rundir, set res as it ended, and return 1; 0
 * when it must run; -1 when it cannot be carried (code 2). */
int resumemember(const struct resume *r, const struct job *j, const char *input, struct jobresult *res,
                 const char *rundir, struct err *e);
/* Copy the taken jobs' folders (their delegates' too), the run's layers and the manifests carried
 * jobs ran under (as manifest/origin-SHA256.yaml) into the run directory rundir (closed: see
 * carrylayers). */
int resumecarry(const struct resume *r, const struct manifest *m, const int *taken, const char *rundir, int closed,
                struct err *e);
/* Into the new run.json: "origin" (with "manifests" and "edits", see resumeedits) and the taken jobs' entries as the run recorded them; their
 * usage and cost are added to *total and *cost, which run.json's totals are. */
void resumejson(const struct resume *r, const struct manifest *m, const int *taken, cJSON *runjson,
                struct usage *total, double *cost);
void resumefree(struct resume *r);

#endif
