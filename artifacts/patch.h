/* patch: a workspace's whole change between two states as a git patch (`git apply` takes it). */
#ifndef NS_PATCH_H
#define NS_PATCH_H

#include "../util/util.h"

/* Append to out the git patch that turns tree a into tree b (two folders): text files as unified
 * hunks, binary ones (or texts too far apart to diff) as `GIT binary patch` literals, with modes,
 * new and deleted files, symlinks, and full index lines (git's blob ids); folders and special files
 * are not git's and are left out, and so is every .git. prefix ("" or "NAME/") goes before every path. Paths are quoted
 * as git quotes them. Returns the number of files changed, -1 on error. */
long patchtrees(const char *a, const char *b, const char *prefix, struct buf *out, struct err *e);

/* Job's whole change in rundir: the workspace before the job's first layer against the workspace
 * after its last step (the chain's next layer, or its end layer), as patchtrees writes it. own: the
 * run being sealed by this process (its layers are not yet in SHA256SUMS), else every layer is
 * held to SHA256SUMS as restore does. Returns the files changed (0: none, or the job took no
 * layer), -1 on error (code 2 no such job). */
long patchjob(const char *rundir, const char *job, int own, int64_t maxbytes, struct buf *out, struct err *e);
/* The run's whole change: each chain from its first layer to its end, paths prefixed with the
 * chain's workspace name when the run has several. */
long patchrun(const char *rundir, int64_t maxbytes, struct buf *out, struct err *e);

#endif
