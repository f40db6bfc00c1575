/* progress: how the runner tells what it is doing; cmd/ installs the printer (none: silent). */
#ifndef NS_PROGRESS_H
#define NS_PROGRESS_H

#include <stdint.h>

struct progressops {
	/* One finished line of news, e.g. "job a: started (worker w)". */
	void (*line)(const char *msg);
	/* A running job's state; done marks its end. */
	void (*job)(const char *job, int turns, int steps, int64_t tokens, int done);
};

/* Install the printer for this process (before any job starts). */
void progressset(const struct progressops *ops);
/* Report a line; control characters in it are shown as spaces, so no text taken from a model
 * or a tool can start a line of its own. */
void progressf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Report a running job's counters. */
void progressjob(const char *job, int turns, int steps, int64_t tokens, int done);

#endif
