/* diff: a replay compared with the run it replays, job by job and step by step, by what each step
 * did (its exit status, its workspace change, its decision), apart from what it printed. */
#ifndef NS_DIFF_H
#define NS_DIFF_H

#include "../util/util.h"

/* Which of paths (relative to workspace chain ws: "" for a run with one workspace; a directory
 * ends with "/") are not effects: flags[i] = 1 for those the workspace's .gitignore files ignore. */
typedef void diffignorefn(void *arg, const char *ws, const struct strv *paths, unsigned char *flags);

struct diffopts {
	const struct strv *exclude; /* the manifest's snapshot.exclude: a step that used one is told */
	int64_t maxbytes;           /* bound for reading the layers (0: the default) */
	diffignorefn *ignored;      /* NULL: every changed path is an effect */
	void *arg;
	int whole;                  /* the replay ran every job of the record: one it lacks diverged */
};

struct difffound {
	int steps;             /* steps compared */
	int diverged;          /* divergences: steps (or jobs) whose effects differ */
	int drifted;           /* steps whose only difference is their printed output */
	struct buf divergence; /* each divergence: "job J, step N: what" and its details, the first ones */
	struct buf drift;      /* each drift: "job J, step N: ..." and a short diff of the output */
};

/* Compare every job of replay with the same job of orig, call by call in each job's order: the
 * tool, its arguments, whether it ran, its decision, its exit status (code, signal, timeout, out of
 * memory), the change its step made to the workspace (files added, removed, changed in content,
 * mode or kind; not times; a git index by its entries; paths ignored as o->ignored says left out),
 * then the job's status, output.json and declared files: a difference there is a divergence.
 * Output alone differing is drift. Calls answered from the record (MCP) are not compared on the
 * workspace. f is filled (free with difffoundfree); -1 on error. */
int rundiff(const char *orig, const char *replay, const struct diffopts *o, struct difffound *f, struct err *e);
void difffoundfree(struct difffound *f);

#endif
