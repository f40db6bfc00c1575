/* prune: old run directories removed from a runs folder, never one in use or the newest. */
#ifndef NS_PRUNE_H
#define NS_PRUNE_H

#include <stdint.h>
#include "../util/util.h"

/* In folder dir (where runs are made), remove the run directories past the newest keep (keep >= 1)
 * that are also older than olderms (0: any age), by the UTC time their name begins with (else
 * their folder's mtime). Never the newest, never one a live process holds (rundirlock), never an
 * entry that is not a run directory (a symlink, a hidden or odd name, a folder without jobs/ or
 * run.json): those are not touched. dry: remove nothing, only say. removed gets each removed run's
 * path, inuse each one kept because a live process holds it, kept "PATH: why" for each that this
 * user cannot remove (a folder in it is not theirs to change: left whole, untouched) or that did
 * not wholly go. Errors: code 2 when dir is not a
 * folder or is itself a run directory. */
int runprune(const char *dir, int keep, int64_t olderms, int dry, struct strv *removed, struct strv *inuse,
             struct strv *kept, struct err *e);

#endif
