/* run: a whole run: the run directory, the jobs in needs order, run.json and SHA256SUMS. */
#ifndef NS_RUN_H
#define NS_RUN_H

#include "../manifest/manifest.h"

struct signkey;

struct runopts {
	const char *outdir;           /* where run directories are made */
	struct strv jobs;             /* --job selections (with what they need), empty = all */
	int parallel;                 /* -j: jobs run at once (0 = 1) */
	const struct strv *overrides; /* --model NAME=SPEC given, recorded in run.json */
	const char *replay;           /* replay: the run whose recorded model replies are served */
	const char *replayof;         /* replay: that run as the user named it (recorded in run.json) */
	int live;                     /* replay: the live model takes over where the record ends */
	int shard, nshards;           /* --shard I/N: only the jobs of group I (shardjobs); nshards 0 = all */
	const struct strv *from;      /* --from RUN...: jobs finished there are taken, not run again */
	const struct signkey *sign;   /* --sign KEY: SHA256SUMS.sig is written with it, or NULL */
	int fail_on_deny;             /* --fail-on-deny: a denied call fails its job, whatever on_deny says */
	const char *resume;           /* --resume RUN: its succeeded jobs are carried over, the rest rerun */
	const char *allowed;          /* --allowed-signers FILE: checks the signatures of --resume and --from runs */
};

/* How a run ended, from the best to the worst outcome; cmd/ gives each its exit code. */
enum runend { RUN_SUCCEEDED, RUN_FAILED, RUN_ABORTED, RUN_CANCELLED };

/* Run the manifest; returns how it ended (enum runend) and the run directory in *rundir,
 * or -1 with e filled when the run could not start or its artifacts could not be written. */
int runmanifest(struct manifest *m, const struct runopts *o, char **rundir, struct err *e);

#endif
