/* mcpjob: the MCP servers of one job: started on first use, their tools offered by the worker's
 * globs, each allowed call run and recorded; in replay, answered from the record instead. */
#ifndef NS_MCPJOB_H
#define NS_MCPJOB_H

#include <cjson/cJSON.h>
#include "../artifacts/events.h"
#include "../manifest/manifest.h"
#include "../sandbox/sandbox.h"
#include "tools.h"

struct mcpjob;

struct mcpjobconf {
	const struct manifest *m;
	const struct worker *w;
	const struct sandboxconf *sc; /* the job's sandbox, as a shell step would get it */
	const char *workspace;        /* the job's workspace (host path), /workspace in the sandbox */
	const struct strv *env;       /* NAME=VALUE passed into every step; a server's own names are added */
	const char *record;           /* replay: the recorded job's events file; NULL runs servers live */
	struct evlog *ev;             /* where server, tools and log events go */
	int64_t deadline;             /* the job's end (monotonic ms), or 0: no start or call passes it */
};

/* Start every server the worker's tools name (or read what they offered from the record) and
 * log an mcp_tools event for each. -1 with e when one cannot be started or the record lacks it. */
int mcpjobopen(struct mcpjob **mj, const struct mcpjobconf *c, struct err *e);
/* 1 when an offered tool may write: its server did not mark it readOnlyHint (MCP tool
 * annotations); 0 when every one is marked, or none is offered. */
int mcpjobwrites(const struct mcpjob *mj);
/* The tool definitions offered to the model (neutral form), borrowed; empty when none. */
const cJSON *mcpjobdefs(const struct mcpjob *mj);
/* 1 when name (mcp__SERVER__TOOL) is offered to the model; 2 when its server runs in the
 * sandbox on the workspace (stdio), so a snapshot must come first. */
int mcpjoboffers(const struct mcpjob *mj, const char *name);
/* Run one allowed call (replay: answer it from the record). r is filled like toolrun's; the
 * server's stderr is logged as an mcp_log event. *diverged is set when the record has no such
 * call. -1 only when an event could not be written. */
int mcpjobcall(struct mcpjob *mj, const char *callid, const char *name, const cJSON *args, struct toolres *r,
               int *diverged, struct err *e);
/* Stop every server. */
void mcpjobclose(struct mcpjob *mj);

#endif
