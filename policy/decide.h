/* decide: the one decision of a tool call, for a run, `nightshift policy` and `policy --run`: the
 * worker's rules (policy.h), then what no rule can allow there: a tool the worker is not given,
 * the runs folder, protected paths (protect.h). */
#ifndef NS_DECIDE_H
#define NS_DECIDE_H

#include "policy.h"
#include "protect.h"

/* Where a call is decided: the workspace it would change. */
struct place {
	struct protect prot; /* what no file tool may change there */
	char *hidden;        /* the runs folder inside the workspace (relative), or NULL */
};

/* One call of worker w with its JSON arguments (NULL: they were not a JSON object). A tool that is
 * neither built in nor a delegate of w (an MCP tool) is offered when live says so (its server
 * offers it to w). p may be NULL: the rules alone, and whether the tool is offered. */
void decide(const struct worker *w, const char *tool, const cJSON *args, int live,
            const struct place *p, struct verdict *v);
/* Free what a place holds (its protected paths and runs folder). */
void placefree(struct place *p);
/* Decide a call of worker w as every run of m into outdir would: in the place of each job running
 * w (the manifest's workspace when none does), the strictest verdict, the first job's on a tie. */
void decideoffline(const struct manifest *m, const struct worker *w, const char *outdir, const char *tool,
                   const cJSON *args, int live, struct verdict *v);

#endif
