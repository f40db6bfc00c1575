/* sandbox: run one step's shell command isolated; one file per backend behind this seam. */
#ifndef NS_SANDBOX_H
#define NS_SANDBOX_H

#include <stdint.h>
#include <stdlib.h>
#include "../manifest/manifest.h"
#include "../net/egress.h"

#define SBX_STEPID 1000 /* the uid and gid steps run as (namespace: inside) unless sandbox.uid says */

struct sbxconf {
	const struct sandboxconf *conf;
	const char *workspace; /* absolute host path, mounted read-write at /workspace */
	char **env;            /* NAME=VALUE strings passed in, NULL-terminated; nothing else is */
	size_t output_cap;     /* bytes kept of stdout and of stderr each (0 = 1 MiB) */
};

struct sbxresult {
	int exit_code; /* exit status, or -1 when killed by a signal */
	int signal;    /* the signal that ended it, or 0 */
	int timed_out;   /* killed at the step's time limit */
	int interrupted; /* killed because the run was cancelled (a signal), before its time limit */
	int late;        /* killed (timed_out) at the caller's end (sbxexecby), before the step's own limit */
	int oom;
	int64_t duration_ms;
	struct buf out, err; /* captured output, capped */
	int truncated;       /* 1 when output was cut at the cap */
	char limits[128];    /* which limits were enforced, e.g. "cgroup1 memory pids cpu; rlimit core" */
	char note[256];      /* what went wrong on the way and was overcome (a set-up tried twice), or "" */
	int leftover;        /* a process of the step may outlive it (none: its keeper was killed), so
	                        the change feed cannot vouch for the workspace from now on */
	struct netconn *net; /* network.allow: the connections the step made through the egress proxy */
	size_t nnet;
	struct netmore netmore; /* those past the proxy's record cap: counted only */
};

struct sbx;

/* Prepare a sandbox for one job (a warm one where the backend can). */
int sbxopen(struct sbx **s, const struct sbxconf *c, struct err *e);
/* Run `/bin/sh -c command` in /workspace with stdin /dev/null; fills r (overwritten, free with sbxresultfree). */
int sbxexec(struct sbx *s, const char *command, struct sbxresult *r, struct err *e);
/* sbxexec, killed at until (a nowms() time; 0: none) if the step's own limit has not come first:
 * a job's timeout bounds its steps. */
int sbxexecby(struct sbx *s, const char *command, int64_t until, struct sbxresult *r, struct err *e);
/* A long-running program in a sandbox (an MCP server), spoken to over pipes. */
struct sbxproc {
	int in, out, err; /* write to in, read from out and err; owned by the caller */
};
/* Start argv (program first, looked up in PATH) in /workspace with its standard streams on
 * pipes, and return at once. The sandbox then serves nothing else: open one per program;
 * sbxclose ends it. Backends that cannot do this say so. */
int sbxspawn(struct sbx *s, char *const argv[], struct sbxproc *p, struct err *e);
/* The connections a spawned program made through the sandbox's egress proxy since the last call
 * (egresstake; *out freed by the caller); with ending (the program is about to be ended) those
 * still open are cut first, so that they are on the record too. 0 without a proxy. */
size_t sbxnet(struct sbx *s, struct netconn **out, struct netmore *more, int ending);
/* Is the backend ready for this configuration (docker: the engine answers and has the image)? Runs
   nothing; the error says what is missing. */
int sbxcheck(const struct sandboxconf *c, struct err *e);
/* Whether a step in a sandbox of c, with workspace (a host folder) at /workspace, could read the
 * host file path (absolute, without symbolic links): 1 with why (n bytes: where, or how), 0 when
 * not. Where the backend's view cannot be planned (a folder missing yet) the workspace and the
 * mounts' sources count whole. */
int sbxreads(const struct sandboxconf *c, const char *workspace, const char *path, char *why, size_t n);
/* Could the steps of a sandbox of c write workspace (a host folder) and its mode: rw mounts? 0
 * when they can (or the backend is none: the runner itself); -1 (ERR_INPUT) naming the steps'
 * uid (docker: sandbox.uid; namespace: the runner's outside), the owner, and the fixes (chown,
 * sandbox.uid) when they cannot.
 * What a missing folder is, is said elsewhere: it passes. */
int sbxwritable(const struct sandboxconf *c, const char *workspace, struct err *e);
/* Tear the sandbox down, killing anything left in it. */
void sbxclose(struct sbx *s);
/* Wait for the helpers of closed sandboxes that are still exiting (10 s at most, then kill
 * them), so that the process's resource accounting (wait4, /usr/bin/time) holds all they cost. */
void sbxreap(void);
/* Free the buffers of a result. */
static inline void sbxresultfree(struct sbxresult *r)
{
	buffree(&r->out);
	buffree(&r->err);
	free(r->net);
	r->net = NULL;
	r->nnet = 0;
	r->netmore = (struct netmore){0, 0};
}



/* For backends: each backend's handle starts with struct sbx, and one ops table per file. */
struct sbxops {
	const char *name;
	int (*open)(struct sbx **s, const struct sbxconf *c, struct err *e);
	int (*exec)(struct sbx *s, const char *command, struct sbxresult *r, struct err *e);
	void (*close)(struct sbx *s);
	int (*spawn)(struct sbx *s, const char *command, int fds[3], struct err *e); /* NULL: not supported;
	                             * command is a sh -c line, fds stdin, stdout, stderr (the sandbox's ends, taken) */
	int (*check)(const struct sandboxconf *c, struct err *e); /* NULL: always ready */
	struct egress *(*egress)(struct sbx *s); /* the sandbox's egress proxy, or NULL; NULL: none */
};

struct sbx {
	const struct sbxops *ops;
	int64_t until; /* the exec under way ends by then (nowms(); 0: no end but its own limit) */
};

/* A step's end (nowms(); -1: none) from its start, its own limit (0: none) and s->until; *late
 * says whether s->until comes first. Inline: each backend asks it, and sandbox.c calls them. */
static inline int64_t sbxdeadline(const struct sbx *s, int64_t start, int64_t timeout_ms, int *late)
{
	int64_t own = timeout_ms > 0 ? start + timeout_ms : -1;
	*late = s->until > 0 && (own < 0 || s->until < own);
	return *late ? s->until : own;
}

extern const struct sbxops sbxnamespace; /* namespace.c */
extern const struct sbxops sbxdocker;    /* docker.c */
extern const struct sbxops sbxnone;      /* none.c */

#endif
