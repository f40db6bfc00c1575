/* replay: an archived night run again offline, its model replies served turn by turn from the
 * record, its tools run for real in the workspace restored from its first snapshot, and each step
 * then compared with the record by what it did (artifacts/diff.h). */
#ifndef NS_REPLAY_H
#define NS_REPLAY_H

#include "../artifacts/diff.h"
#include "../util/util.h"

struct replayopts {
	const char *run;          /* RUN as the user named it (recorded in the new run.json) */
	const char *dir;          /* its run directory (a .tar.zst already unpacked) */
	const char *outdir;       /* where the new run directory is made */
	const char *manifest;     /* --manifest FILE (the user's own), or NULL: the record's, distrusted */
	const struct strv *jobs;  /* --job selections; empty: the jobs the record ran */
	const struct strv *sets;  /* --set KEY=VALUE inputs (the user's; they win over the record's) */
	int live;                 /* --continue-live */
	int64_t maxunpack;        /* bound for the layers restored (0: the default) */
};

struct replayresult {
	char *newrun;           /* the new run directory, or NULL when none was made */
	int end;                /* how the new run ended (enum runend) */
	struct difffound found; /* what differs from the record */
};

/* Replay o->dir into a new run directory and compare it with the record; the workspace made for
 * it is removed again on every way out. -1 with e filled (code 2 for a RUN that cannot be
 * replayed) when it could not run or be compared; r->newrun may be set even then. */
int replayrun(const struct replayopts *o, struct replayresult *r, struct err *e);
void replayresultfree(struct replayresult *r);

#endif
