/* keyreach: a signing key must lie where no step of a run could read it. */
#ifndef NS_KEYREACH_H
#define NS_KEYREACH_H

#include "../manifest/manifest.h"

/* 0 when no step of any job of m (its workspace, its mounts, what its sandbox's image shows, its
 * worker's skills; backend none shows everything) could read the file key, nor any other name of
 * it (a hard link); else -1 (ERR_INPUT) naming the job, why, and where to keep the key instead. */
int keyreach(const struct manifest *m, const char *key, struct err *e);

#endif
