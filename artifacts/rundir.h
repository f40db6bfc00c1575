/* rundir: the run directory: its id, the manifest copy, and SHA256SUMS over everything. */
#ifndef NS_RUNDIR_H
#define NS_RUNDIR_H

#include "../manifest/manifest.h"

struct rundir {
	char *path; /* outdir/<run-id> */
	char id[64];
	int lock; /* 1 + the descriptor holding an flock on the folder while this process writes it
	           * (0: none): a live run is told from a dead one by it (rundirlock) */
};

/* Make outdir/<UTC time>-<random>/ with manifest/, jobs/ and snapshots/ inside. */
int rundircreate(struct rundir *r, const char *outdir, struct err *e);
/* Copy every file the manifest was read from into RUN/manifest/, keeping paths relative to it. */
int rundircopy(struct rundir *r, const struct manifest *m, struct err *e);
/* Make RUN/jobs/<job>/ and return its path. */
char *rundirjob(struct rundir *r, const char *job, struct err *e);
/* Every regular file under dir but SHA256SUMS and SHA256SUMS.sig (at its top), as paths relative
 * to it, sorted by bytes. */
int rundirfiles(const char *dir, struct strv *files, struct err *e);
/* Write RUN/SHA256SUMS for every file under RUN, sorted by path, atomically. */
int rundirsums(struct rundir *r, struct err *e);
/* An exclusive flock on run folder dir, taken without waiting: the descriptor holding it (close it
 * to let go), or -1 with errno EWOULDBLOCK when a live process holds it (its runner), or another. */
int rundirlock(const char *dir);
/* True when dir holds run.json, SHA256SUMS or a jobs/ folder: a run, finished or not. */
int rundirisrun(const char *dir);
void rundirfree(struct rundir *r);

#endif
