/* redecide: the calls a run recorded decided again under a manifest's rules, nothing run. */
#ifndef NS_REDECIDE_H
#define NS_REDECIDE_H

#include <cjson/cJSON.h>
#include "../manifest/manifest.h"

/* One recorded call whose decision the manifest's rules would change. */
struct redecided {
	char *job;
	int step;
	char *tool;
	cJSON *arguments;  /* as recorded */
	char *olddecision; /* as recorded: allow, deny or abort */
	char *oldrule;     /* "3" (from 1) or "default", as recorded */
	char *oldreason;
	char *newdecision; /* under the manifest's rules */
	char *newrule;
	char *newreason;
};

struct redecision {
	struct redecided *v;
	size_t n;
	int calls;          /* calls decided again */
	struct strv skipped; /* jobs of the run whose worker the manifest lacks: their calls not judged */
};

/* Decide every call rundir recorded (not those never run, nor final_result) again with the
 * approval rules of the worker m gives the call's job (or, for a delegate's job, the delegate
 * worker), exactly as a run would apart from paths protected at run time; the calls whose
 * decision changes go in out, in step order. -1 with e filled when the run cannot be read. */
int redecide(const struct manifest *m, const char *rundir, struct redecision *out, struct err *e);
void redecisionfree(struct redecision *r);

#endif
