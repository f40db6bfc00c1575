/* shard: split a manifest's jobs into N groups that never need each other, for runners in parallel. */
#ifndef NS_SHARD_H
#define NS_SHARD_H

#include "../manifest/manifest.h"

/* Parse "I/N" (1 <= I <= N <= SHARDMAX); e->code 2 when malformed. */
int shardparse(const char *spec, int *i, int *n, struct err *e);
/* The ids of the jobs of group i of n, in manifest order, appended to jobs; returns how many (0 for an
 * empty group: run nothing, not everything). Jobs joined by needs, directly or not, share a group; the
 * groups are packed largest first onto the least loaded of the n, so the split is the same everywhere. */
int shardjobs(const struct manifest *m, int i, int n, struct strv *jobs, struct err *e);
/* The jobs no group holds: those that need a matrix job's members (directly or not). The members
 * are spread over the groups like independent jobs, so such a job runs after the groups, in a run
 * of its own with `--job ID --from` each group's run. Appended to jobs; returns how many. */
int shardafter(const struct manifest *m, struct strv *jobs);

/* The most groups: a GitHub Actions matrix makes at most 256 jobs. */
#define SHARDMAX 256

#endif
