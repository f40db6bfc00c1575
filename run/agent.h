/* agent: one job's turn loop: ask the model, decide each tool call, snapshot, run it, log it. */
#ifndef NS_AGENT_H
#define NS_AGENT_H

#include <pthread.h>
#include <cjson/cJSON.h>
#include "../artifacts/events.h"
#include "../artifacts/rundir.h"
#include "../snapshot/snapshot.h"
#include "../manifest/manifest.h"
#include "../util/secrets.h"
#include "budget.h"
#include "../llm/gate.h"
#include "../llm/llm.h"

enum jobstatus { JOB_PENDING, JOB_SUCCEEDED, JOB_FAILED, JOB_ABORTED, JOB_SKIPPED, JOB_CANCELLED };

struct jobresult;

/* A job a worker delegated to, run nested inside its caller. */
struct nested {
	char *id, *worker, *parent;
	struct jobresult *res;
};

/* One workspace of a run, with its own chain of snapshot layers. */
struct wspace {
	char *path;         /* absolute host path */
	char *name;         /* its layers are in snapshots/<name>/ when the run has several workspaces */
	char *hidden;       /* the runs folder when it lies inside this workspace (relative to it), else NULL */
	struct snap *snap;
	pthread_mutex_t mu; /* guards snap */
	int lockfd;
};

/* What every job of a run shares; mu guards step and nested. */
struct runstate {
	pthread_mutex_t mu;
	const struct manifest *m;
	struct rundir *rd;
	struct gate *gates; /* by model (as in m->models): its requests across the run */
	struct wspace *ws;  /* the workspaces of the jobs that run (room for wscap: it never moves) */
	size_t nws, wscap;
	int perws;          /* a chain per workspace, snapshots/<name>/ (several, or a matrix made later) */
	struct secrets *sec;
	int step;           /* the last step number given out; steps count from 1 across the run */
	const char *replay; /* replay: the run directory whose model replies are served */
	int live;           /* replay: the live model takes over where the record ends */
	struct nested *nested; /* delegated jobs, in the order they started */
	size_t nnested;
	struct strv setid;     /* files whose set-id bits the end layer removed */
	cJSON *endskipped;     /* what the end layers left out: [{layer, path, reason}], or NULL */
	struct strv carried;   /* layers a resumed run copied in (snapshots/...), which no event of it records */
	int failondeny;        /* run --fail-on-deny */
	pthread_mutex_t bmu;   /* guards every budget of the run */
	struct budget budget;  /* the run's: budget.cost, shared by its jobs (set up with budgetinit) */
	/* the scheduler's, told when a top-level job's MCP servers said whether its tools write */
	void (*toolsknown)(struct runstate *rs, const struct job *j, int writes);
	void *sched;
};

struct jobresult {
	enum jobstatus status;
	int turns, steps;
	struct usage usage;
	double cost;     /* USD at the model's price, this job's own requests (its delegates are jobs too) */
	int denials;     /* calls the approval rules denied */
	cJSON *output;   /* the accepted final_result, or NULL */
	char error[1024];
	char head[65];   /* digest of the last event line */
	int64_t events;  /* number of events written */
	int retries;     /* model requests sent again after a transient failure */
	int64_t waited_ms; /* time spent waiting between those attempts */
	int diverged;    /* replay: a request did not match the record */
	int halt;        /* set (atomically) by the scheduler: end at the next turn, cancelled */
	struct evlog *ev; /* a top-level job's log, left open after job_end for the run's seal to add the
	                   * job's whole change (runchanges); jobresultfree closes it when still open */
};

/* The workspace job j works in (its own, or the manifest's), or NULL when the run has not opened it. */
struct wspace *runws(const struct runstate *rs, const struct job *j);
/* Run one job on input (its expanded input) to its end; the status says how it went. Returns -1 only when its artifacts
 * could not be written (e says why). */
int agentrun(struct runstate *rs, const struct job *j, const char *input, struct jobresult *res, struct err *e);
void jobresultfree(struct jobresult *r);
/* Free the nested jobs of rs. */
void nestedfree(struct runstate *rs);
const char *jobstatusname(enum jobstatus s);

#endif
