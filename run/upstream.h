/* upstream: jobs that finished in other runs (--from RUN), taken instead of run again. */
#ifndef NS_UPSTREAM_H
#define NS_UPSTREAM_H

#include <cjson/cJSON.h>
#include "../manifest/manifest.h"
#include "agent.h"

struct upjob {
	char *id;
	char *status;  /* as that run's run.json says: succeeded, failed, aborted, skipped, ... */
	char *error;   /* its error, or NULL */
	cJSON *output; /* jobs/ID/output.json when it succeeded, else NULL */
	char *run;     /* the run directory it came from */
	char *run_id;
	cJSON *values; /* a member of a matrix made from a job's output: its values; else NULL */
};

struct upstream {
	struct upjob *v;
	size_t n;
	const char *flag; /* named in messages: "--from" when NULL, or "--resume" */
	const char *allowed; /* --allowed-signers: the file that checks each run's signature, or NULL */
	int signing;      /* the new run is signed (--sign): see runsigsource */
	int edits;        /* --resume: the manifest may differ from the run's (resumeedits compares) */
};

/* Add every job of the finished run at dir: its signature must be as u->allowed and u->signing ask
 * (runsigsource), it must pass verification (SHA256SUMS, event chains) and,
 * when m is given, have run the same manifest file (unless u->edits). A job found in two runs is an error (code 2). */
int upstreamload(struct upstream *u, const char *dir, const struct manifest *m, struct err *e);
/* The job with this id, or NULL. */
const struct upjob *upstreamjob(const struct upstream *u, const char *id);
/* For every job of m found in u (members of matrices made later aside): res[i] gets its status, a copy of its output and an error naming the
 * run it came from, and taken[i] is set to 1. Returns how many jobs were taken. */
int upstreamapply(const struct upstream *u, const struct manifest *m, struct jobresult *res, int *taken);
/* r gets uj's status, a copy of its output and an error naming the run it came from. */
void upstreamtake(const struct upjob *uj, struct jobresult *r);
/* {"ID": {"run_id": ..., "status": ...}} for the taken jobs of m, for run.json's "upstream". */
cJSON *upstreamjson(const struct upstream *u, const struct manifest *m, const int *taken);
/* Free what u holds and empty it. */
void upstreamfree(struct upstream *u);

#endif
