/* verify: prove a run directory is what was written: digests, event chains, snapshot layers. */
#ifndef NS_VERIFY_H
#define NS_VERIFY_H

#include "../util/util.h"

struct verdictrun {
	int failed;       /* number of problems found */
	int incomplete;   /* the run never finished (no SHA256SUMS or run.json): checked up to its last whole event */
	struct buf report; /* one line per problem: "FILE[:LINE]: what" */
	int gaps;         /* a sealed run whose workspace history has holes: a layer that failed, was cut
	                     short, or is missing (end.tar.zst); the evidence is INCOMPLETE */
	struct buf gapreport; /* one line per gap */
	long files, events, layers;
};

/* Check everything in rundir; returns 0 when it ran (see v->failed), -1 when it could not. */
int runverify(const char *rundir, struct verdictrun *v, struct err *e);
/* Record a problem in v (the first 50 are kept in its report). */
void verdictproblem(struct verdictrun *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0 when dir is a finished run that verifies; else -1, e naming the first problem, of kind. */
int runverified(const char *dir, enum errkind kind, struct err *e);
void verdictrunfree(struct verdictrun *v);

#endif
