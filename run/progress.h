/* progress: how the runner tells what it is doing; cmd/ installs the printer (none: silent). */
#ifndef NS_PROGRESS_H
#define NS_PROGRESS_H

#include <stdint.h>
#include <cjson/cJSON.h>

struct progressops {
	/* One finished line of news; job is the job it is about, or NULL for the run's own. */
	void (*line)(const char *job, const char *msg);
	/* A running job's state: what it is doing now ("waiting for the model", "step 4: shell");
	 * done marks its end. */
	void (*job)(const char *job, int turns, int steps, int64_t tokens, const char *doing, int done);
	/* One event as JSON text, as written to a job's event log (job NULL: the run's own). */
	void (*event)(const char *job, const char *json);
	/* The run directory, as soon as it exists. */
	void (*rundir)(const char *path);
};

/* Install the printer for this process (before any job starts). */
void progressset(const struct progressops *ops);
/* Report a line about job (shown "job ID: ..."; NULL: the run's own); control characters in it
 * are shown as spaces, so no text taken from a model or a tool can start a line of its own. */
void progressj(const char *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report a running job's counters and what it is doing (may be NULL). */
void progressjob(const char *job, int turns, int steps, int64_t tokens, const char *doing, int done);
/* Hand on an event line as a job's event log wrote it (ctx: the job's id), for --events. */
void progresstap(void *ctx, const char *json);
/* Hand on an event that is in no log (the run's start and end, a retry as it happens):
 * {"time", "type", fields...}; fields is consumed (may be NULL). */
void progressevent(const char *job, const char *type, cJSON *fields);
/* Tell the run directory, as soon as it exists. */
void progressrundir(const char *path);

#endif
