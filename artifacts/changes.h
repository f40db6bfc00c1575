/* changes: what the steps of a run changed in its workspace, read from the snapshot layers. */
#ifndef NS_CHANGES_H
#define NS_CHANGES_H

#include <stdint.h>
#include "../util/util.h"

enum { CHANGE_TEXT_MAX = 64 << 10 }; /* regular files up to this size are read as text for diffs */

struct change {
	const char *path;
	char kind;            /* 'A' added, 'M' changed, 'D' deleted */
	char type;            /* 'f' file, 'd' directory, 'l' symlink, '?' other */
	int64_t size;         /* after (before for a deletion) */
	const char *before;   /* a small regular file's bytes before and after, or NULL (too big, not a */
	const char *after;    /* regular file, or not there) */
	size_t nbefore, nafter;
	unsigned mode;        /* permission bits after (before for a deletion) */
	unsigned char sum[32]; /* what it holds after: a file's bytes or a symlink's target, digested; a
	                        * git index (.git/index) by the entries it lists (gitindex.h) */
	int cosmetic;         /* 1: only bytes that mean nothing changed (a git index's stat data) */
};

/* The changes found in one layer: what happened in the workspace after the layer before it was
 * taken (before step from) and before this one was (before step to; 0 for the end layer). A full
 * layer past a chain's first is compared with the state before it (what it lacks is deleted); a
 * resumed run's carried NNNN.end.tar.zst (the run it resumed ended after step NNNN) ends at step
 * NNNN + 1, and the chain's next layer, from there, holds what changed between the two runs. */
struct layerchanges {
	char *layer;          /* e.g. "snapshots/0004.tar.zst", or "snapshots/<ws>/0004.tar.zst" */
	char *ws;             /* the workspace whose chain it is in: "" for a run with one workspace */
	int from, to;
	int base;             /* a full layer past a chain's first (a resumed run's own first layer, where
	                       * the run resumed had no end layer carried): what differs from the state
	                       * before it, since step from, not the changes of one step */
	struct change *v;
	size_t n;
};

struct runchanges {
	struct layerchanges *v;
	size_t n;
};

/* Read every layer of rundir's chains (snapshots/, or one chain per workspace in snapshots/<ws>/),
 * each chain in order, all of them sorted by the step their changes began at; only the contents
 * of paths that change after a chain's first layer are kept. A run without layers gives n = 0.
 * Each chain is read within the bounds of bound.h for maxbytes (0: the default for its
 * compressed bytes); past them, -1 with code 4 naming the layer and the bound. */
int changesread(const char *rundir, int64_t maxbytes, struct runchanges *rc, struct err *e);
/* The layer whose changes step made (the first layer after the step) in the chain of workspace ws
 * (NULL: any chain), or NULL. */
const struct layerchanges *changesofstep(const struct runchanges *rc, const char *ws, int step);
/* The workspace whose chain holds step's changes: the one with a layer for the step, else the
 * workspace of the job that made it (run.json, or its snapshot events); "" for a run with one
 * chain in snapshots/ itself. NULL with e filled when that cannot be told. Owned by the caller. */
char *changesstepws(const char *rundir, int step, struct err *e);
void changesfree(struct runchanges *rc);
/* Whether bytes read as text (UTF-8 without NUL). */
int changestext(const char *s, size_t n);

#endif
