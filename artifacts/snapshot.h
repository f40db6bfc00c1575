/* snapshot: workspace layers as deterministic tar.zst, incremental from a stat cache. */
#ifndef NS_SNAPSHOT_H
#define NS_SNAPSHOT_H

#include <stdint.h>
#include "../manifest/manifest.h"

struct snapinfo {
	char path[4096];    /* the layer file written */
	char sha256[65];    /* digest of the layer file */
	int64_t bytes;      /* size of the layer file */
	int full;           /* 1 for a full tar (the first layer, end) */
	size_t added, changed, deleted;
	struct strv skipped; /* sockets, fifos, devices left out */
	size_t entries;      /* entries in the workspace (files, directories, symlinks) */
	int64_t treebytes;   /* bytes of its regular files, each inode once */
};

struct snap;

/* Start snapshotting workspace into dir (the run's snapshots/ folder). */
int snapopen(struct snap **s, const char *workspace, const struct snapconf *c, const char *dir, struct err *e);
/* Write layer dir/NAME.tar.zst: full the first time, else only what changed since the last. */
int snaptake(struct snap *s, const char *name, struct snapinfo *info, struct err *e);
/* Write dir/NAME.tar.zst as a full tar of the workspace now (for end). */
int snapfull(struct snap *s, const char *name, struct snapinfo *info, struct err *e);
void snapclose(struct snap *s);
void snapinfofree(struct snapinfo *i);

/* Restore rundir's layers up to step (a number, or 0 for end) into to; verifies SHA256SUMS. */
int snaprestore(const char *rundir, int step, const char *to, int force, struct err *e);

#endif
