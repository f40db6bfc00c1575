/* calls: the tool calls of a run, read back from its event logs in step order. */
#ifndef NS_CALLS_H
#define NS_CALLS_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "../util/util.h"

struct call {
	int step;          /* for a call not run: the step before it in its job (its place in the order) */
	int notrun;        /* 1: a call_not_run event (the job ended before it): no decision, no result */
	const char *job;
	const char *tool;
	cJSON *arguments;
	const char *decision;
	cJSON *rule;       /* number or "default" */
	const char *reason;
	int has_result;
	int exit_code;
	int64_t duration_ms;
	cJSON *decided;    /* owns the strings above */
	cJSON *result;     /* the tool_result event, or NULL */
	cJSON *net;        /* the step's net_connection events (network.allow), an array, or NULL */
};

struct calls;

/* Open every job's event log of rundir; memory stays in proportion to the number of jobs. */
int callsopen(struct calls **c, const char *rundir, struct err *e);
/* The next call in step order into *out (valid until the next call); 1, 0 at the end, -1 on error. */
int callsnext(struct calls *c, struct call *out, struct err *e);
void callsclose(struct calls *c);
/* The number of rundir's last step: the highest of its decisions and its snapshot layers (0 when
 * none), -1 with e filled when a log cannot be read. */
int runlaststep(const char *rundir, struct err *e);

#endif
