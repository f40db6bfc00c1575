/* gitindex: a git index file (.git/index) judged by the entries it lists, not by its bytes. */
#ifndef NS_GITINDEX_H
#define NS_GITINDEX_H

#include <stddef.h>
#include "util.h"

enum { GITINDEX_MAX = 64 << 20 }; /* a bigger index is compared by its bytes */

/* Whether path (relative, "/"-separated) names a git index: ".git/index" or ".../.git/index". */
int gitindexpath(const char *path);
/* The SHA-256 of what the index lists, into out: each entry's path, mode, object id, stage and
 * flags, in order; not the stat data (times, device, inode, owner, size) nor the extensions (caches
 * a mere `git status` rewrites). Versions 2, 3 and 4, SHA-1 or SHA-256 object ids. Returns 0, or -1
 * when data is not an index this reads or is a split index, whose entries (and the shared index
 * its "link" names) are elsewhere (then compare the bytes). */
int gitindexsum(const char *data, size_t n, unsigned char out[32]);
/* The paths the index lists (tracked files), in its order, into paths (caller frees): 0, or -1
 * when data is not an index this reads, is a split index (its entries are in a shared index
 * beside it, which this does not read), or its paths, each whole, pass budget bytes (a version-4
 * index names each path by its change from the one before: a few bytes an entry can list paths
 * without end). */
int gitindexpaths(const char *data, size_t n, size_t budget, struct strv *paths);

#endif
