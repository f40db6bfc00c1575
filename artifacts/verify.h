/* verify: prove a run directory is what was written: digests, event chains, snapshot layers. */
#ifndef NS_VERIFY_H
#define NS_VERIFY_H

#include "../util/util.h"

struct verdictrun {
	int failed;       /* number of problems found */
	int incomplete;   /* the run never finished (no SHA256SUMS or run.json): checked up to its last whole event */
	struct buf report; /* one line per problem: "FILE[:LINE]: what" */
	long files, events, layers;
};

/* Check everything in rundir; returns 0 when it ran (see v->failed), -1 when it could not. */
int runverify(const char *rundir, struct verdictrun *v, struct err *e);
void verdictrunfree(struct verdictrun *v);

#endif
