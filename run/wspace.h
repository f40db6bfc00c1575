/* wspace: the workspaces of a run: which jobs work where, their locks, their snapshot chains. */
#ifndef NS_WSPACE_H
#define NS_WSPACE_H

#include "agent.h"

/* Lock the workspaces of the jobs ord[0..n) (the manifest's when n is 0) into rs->ws: a flock on
 * each folder itself. With one workspace its layers go in snapshots/, with several (or rs->perws
 * set before) in snapshots/<name>/. */
int spacesopen(struct runstate *rs, const size_t *ord, size_t n, struct err *e);
/* Start each workspace's chain in the run directory rs->rd (the runs folder outdir left out of
 * any workspace holding it, nested workspaces left out of the one holding them). */
int spacessnap(struct runstate *rs, const char *outdir, struct err *e);
/* Open job j's workspace when the run has not yet (a matrix member made during the run): lock it,
 * start its chain, and leave it out of the chains of the workspaces holding it from their next
 * layer on. */
int spacesadd(struct runstate *rs, const struct job *j, const char *outdir, struct err *e);
/* Write each workspace's end layer; set-id bits removed go to rs->setid, what it left out to
 * rs->endskipped. */
int spacesseal(struct runstate *rs, struct err *e);
/* Close the chains, drop the locks, free rs->ws. */
void spacesclose(struct runstate *rs);
/* Whether workspaces a and b of rs hold common files (one is the other or inside it). */
int spacesoverlap(const struct runstate *rs, size_t a, size_t b);

#endif
