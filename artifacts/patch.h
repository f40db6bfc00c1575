/* patch: a workspace's whole change between two states as a git patch (`git apply` takes it). */
#ifndef NS_PATCH_H
#define NS_PATCH_H

#include "../util/util.h"

/* Job's whole change in rundir: the workspace before the job's first layer against the workspace
 * after its last step (the chain's next layer, or its end layer), as util/gitpatch.h writes it. own: the
 * run being sealed by this process (its layers are not yet in SHA256SUMS), else every layer is
 * held to SHA256SUMS as restore does. Returns the files changed (0: none, or the job took no
 * layer), -1 on error (code 2 no such job). */
struct secrets;
/* sec (may be NULL): every file's bytes masked before they go in (gitpatch); *masked counts the
 * files that held a secret. */
long patchjob(const char *rundir, const char *job, int own, int64_t maxbytes, const struct secrets *sec, int *masked,
              struct buf *out, struct err *e);
/* The run's whole change: each chain from its first layer to its end, paths prefixed with the
 * chain's workspace name when the run has several. */
long patchrun(const char *rundir, int64_t maxbytes, struct buf *out, struct err *e);
/* The change of a chain (ws NULL: the only one) from before step from to before step to (0: its
 * end), every layer held to SHA256SUMS. */
long patchsteps(const char *rundir, const char *ws, int from, int to, int64_t maxbytes, struct buf *out, struct err *e);
/* For tests and benches: restore both states whole (1), as patches were made before they
 * restored only the paths that changed (0, the default). */
void patchrestorewhole(int whole);

#endif
