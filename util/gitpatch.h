/* gitpatch: the change between two folders as a git patch (`git apply` takes it). */
#ifndef NS_GITPATCH_H
#define NS_GITPATCH_H

#include "util.h"

/* Append to out the git patch that turns tree a into tree b (two folders): text files as unified
 * hunks, binary ones (or texts too far apart to diff) as `GIT binary patch` literals, with modes,
 * new and deleted files, symlinks, and full index lines (git's blob ids); folders, special files
 * and every .git folder are not git's to apply and are left out. prefix ("" or "NAME/") goes
 * before every path; paths are quoted as git quotes them. A file over GITPATCHFILEMAX, or one
 * whose hunks or literals could take out past GITPATCHMAX, is not carried: git's "Binary files
 * a/X and b/X differ" stands for it (no memory or time goes to it). Once out passes GITPATCHMAX
 * with such a line, the files after it are not listed at all. Returns the files changed (listed),
 * -1 on error. */
enum { GITPATCHFILEMAX = 16 << 20, GITPATCHMAX = 64 << 20 };

struct secrets;
/* With sec (may be NULL), every file's bytes and link's target are masked (util/secrets.h) before
 * they are compared or written, so that a secret is in no hunk, literal or blob id; *masked (may be
 * NULL) counts the files that held one. */
long gitpatch(const char *a, const char *b, const char *prefix, const struct secrets *sec, int *masked,
              struct buf *out, struct err *e);

#endif
