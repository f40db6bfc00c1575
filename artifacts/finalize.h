/* finalize: seal a run that was killed before it could: every event log ended after its last
 * whole line, leftovers of unfinished writes removed, run.json and SHA256SUMS written. */
#ifndef NS_FINALIZE_H
#define NS_FINALIZE_H

#include <cjson/cJSON.h>
#include "../util/util.h"

/* What a job's event log says of the job, read up to its last whole line. */
struct recovered {
	cJSON *job;       /* run.json's entry: job_end's fields when the job ended, else status "incomplete"
	                   * with turns, steps and usage counted from the log; worker from job_start */
	cJSON *manifest;  /* job_start's manifest {file, sha256}, or NULL */
	char started[32]; /* job_start's time, "" when missing */
	char ended[32];   /* the last line's time */
	long events;
	char head[65];    /* the digest of the last whole line */
	int cut;          /* the log ends inside a line or a frame */
	struct buf lines; /* the whole lines, each with its newline (only when asked) */
};

/* Seal the unfinished run dir (one without run.json); its jobs are marked "incomplete". */
int runfinalize(const char *dir, struct err *e);
/* Read the log at path into r (zeroed first); keep the lines when keep. */
int jobrecover(const char *path, int keep, struct recovered *r, struct err *e);
void recoveredfree(struct recovered *r);
/* Whether dir looks like a run directory that never finished (jobs/ but no run.json). */
int rununfinished(const char *dir);

#endif
