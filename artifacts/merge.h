/* merge: shard runs joined into one run directory that audit --verify accepts. */
#ifndef NS_MERGE_H
#define NS_MERGE_H

#include <cjson/cJSON.h>
#include "../util/util.h"
#include "verify.h"

/* What vouches for the shards: the allowed_signers file of --allowed-signers (or NULL), and
 * whether the merged run is to be signed (see runsigsource). */
struct mergeopts {
	const char *allowed;
	int signing;
};

/* Verify every run of runs (directories of finished runs of one manifest, each job run in one of them),
 * then make outdir/<run-id>/ holding each run whole under shards/<its run-id>/, every job's output.json
 * and files under jobs/<job>/, a run.json that lists the shards and the jobs, and SHA256SUMS over all.
 * Each shard's signature is checked first, as runsigsource says (o may be NULL: none, unsigned).
 * The path goes to *merged; returns the exit code a run with those jobs would have had (0, 1, 3, 130),
 * or -1 with e filled (code 2: the runs do not belong together, 4: one fails verification). */
int runmerge(const struct strv *runs, const char *outdir, const struct mergeopts *o, char **merged, struct err *e);


#endif
