/* claims: what run.json and the job folders claim, held to what the event chains recorded. */
#ifndef NS_CLAIMS_H
#define NS_CLAIMS_H

#include <cjson/cJSON.h>
#include "../util/util.h"

/* The lines of one event log that claims are checked against, noted while its chain is read. */
struct facts {
	char *log;      /* the log, relative to the run */
	cJSON *start;   /* job_start, or NULL */
	cJSON *end;     /* job_end, or the run log's run event */
	cJSON *output;  /* the output event */
	cJSON *files;   /* the file events, in order */
	cJSON *usage;   /* the sum of the model_response events' usage (NULL: none had one) */
	cJSON *changes; /* the changes event (jobs/<job>/changes.patch), or NULL */
	long responses; /* model_response events */
	long startline, endline, outputline, changesline;
	long *filelines;
	long events;
};

/* Whether an event of type is one facts keeps (parse it and hand it to factsnote). */
int factswanted(const char *type);
/* Keep ev (consumed), line lineno (from 1) of the log. */
void factsnote(struct facts *f, cJSON *ev, const char *type, long lineno);
void factsfree(struct facts *f);

/* A job of a finished run: its run.json entry (info) against job_end (or, in a finalized run, for
 * a job a kill cut short, what finalize recovers from its log), job_end's usage against the sum of
 * the model_response events, its output.json against the output event, its declared files
 * against the file events, its changes.patch against the changes event. One line per disagreement is added to
 * problems, naming the file, the field and the event line. */
void claimsjob(const char *dir, const char *job, const cJSON *info, const struct facts *f, int finalized,
               struct strv *problems);
/* run.json against the run event of the run's own log (every field), its totals against the sum of
 * its jobs, its start and end against the jobs' first and last events, its manifest digest against
 * the copy in manifest/ and what each job_start recorded. jobs holds each job's facts (NULL for a
 * job whose log was not read), in the order of run.json's jobs. */
void claimsrun(const char *dir, const cJSON *run, const struct facts *runlog, const struct facts *jobs, size_t njobs,
               struct strv *problems);
/* A job of a merged run (info, at the top) against the entry of the shard that ran it (shard) and
 * the job's folder at the top against the shard's. */
void claimsmerged(const char *dir, const char *shard, const char *job, const cJSON *info, const cJSON *theirs,
                  struct strv *problems);

#endif
