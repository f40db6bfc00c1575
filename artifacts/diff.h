/* diff: a replay compared with the run it replays, job by job and step by step. */
#ifndef NS_DIFF_H
#define NS_DIFF_H

#include "../util/util.h"

/* Compare every job of replay with the same job of orig: each call's tool, arguments, decision,
 * exit code and output digest in order, then the job's status, output.json and declared files.
 * Returns 0 when they agree, 1 with the first divergence described in first (job, step, what
 * differed, a short text diff of the recorded and the replayed arguments or output, and the path
 * of exclude, the manifest's snapshot.exclude, that the step used, if any), -1 on error. */
int rundiff(const char *orig, const char *replay, const struct strv *exclude, struct buf *first, struct err *e);

#endif
