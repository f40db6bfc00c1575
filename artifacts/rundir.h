/* rundir: the run directory: its id, the manifest copy, and SHA256SUMS over everything. */
#ifndef NS_RUNDIR_H
#define NS_RUNDIR_H

/* Where a run keeps the admin policy and the user's defaults that were in force, under manifest/. */
#define RUNADMINPOLICY "layers/admin-policy.yaml"
#define RUNUSERCONFIG "layers/user-config.yaml"

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
/* Every entry under dir that is neither a regular file nor a folder (a symbolic link, a fifo, a
 * socket, a device), as "REL: what it is", sorted; links are not followed. */
int rundirodd(const char *dir, struct strv *odd, struct err *e);
/* 0 when every file under dir whose path begins with under (e.g. "snapshots/") is in dir's
 * SHA256SUMS with its digest; else -1 (ERR_VERIFY naming the first that is not, or no SHA256SUMS). */
int rundirheld(const char *dir, const char *under, struct err *e);
/* 0 when dir holds only regular files and folders; else -1, e (of kind) naming the first other. */
int rundirshape(const char *dir, enum errkind kind, struct err *e);
/* A descriptor of the regular file rel beneath the run directory dir, reached through no symbolic
 * link (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS); -1 (ERR_VERIFY for a link, a fifo, a device...)
 * otherwise. Never waits on a fifo. The caller closes it. */
int rundiropen(const char *dir, const char *rel, struct err *e);
/* The SHA-256 of rel beneath dir, opened as rundiropen does. */
int rundirsha(const char *dir, const char *rel, char out[65], struct err *e);
/* Write RUN/SHA256SUMS for every file under RUN, sorted by path, atomically. */
int rundirsums(struct rundir *r, struct err *e);
/* An exclusive flock on run folder dir, taken without waiting: the descriptor holding it (close it
 * to let go), or -1 with errno EWOULDBLOCK when a live process holds it (its runner), or another. */
int rundirlock(const char *dir);
/* The process holding run directory dir's lock: its pid (as /proc/locks shows it), -1 when a
 * live process holds it but its pid cannot be read, 0 when none does (the run is dead). */
long rundirholder(const char *dir);
/* The layers under dir/snapshots/ that no event of the run records, with their SHA-256, as run.json's
 * sealed_layers ({"snapshots/end.tar.zst": "HEX", ...}): every end layer (end.tar.zst,
 * NNNN.end.tar.zst) and the paths in carried (layers a resumed run copied in) that are still there.
 * NULL with e set when one cannot be read. */
cJSON *rundirsealed(const char *dir, const struct strv *carried, struct err *e);
/* Every file under dir/snapshots/ as paths relative to dir ("snapshots/0001.tar.zst"), sorted. */
int rundirlayers(const char *dir, struct strv *files, struct err *e);
/* True when dir holds run.json, SHA256SUMS or a jobs/ folder: a run, finished or not. */
int rundirisrun(const char *dir);
void rundirfree(struct rundir *r);

#endif
