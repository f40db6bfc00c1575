/* beneath: the one way files of a workspace (or a restore's target) are opened: never outside the
 * folder, never through a symlink. openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the kernel
 * has it, else a walk of one component at a time with O_NOFOLLOW, which gives the same answers. */
#ifndef NS_BENEATH_H
#define NS_BENEATH_H

#include <stddef.h>

struct buf;
struct err;

enum {
	BENEATH_NOXDEV = 1, /* refuse (EXDEV) to cross into another mount */
};

/* openat() of path relative to rootfd, never resolving a symlink (ELOOP) nor leaving rootfd
 * (EXDEV: an absolute path, any ".." component, another mount with BENEATH_NOXDEV); flags as for openat,
 * O_CLOEXEC and O_NOFOLLOW added, O_CREAT making 0644. -1 with errno on error. Thread-safe. */
int openbeneath(int rootfd, const char *path, int flags, int opts);
/* Whether openat2 is used: probed once for the process (thread-safe), ENOSYS and EPERM (a seccomp
 * profile's answer) alike meaning no. NIGHTSHIFT_OPENAT2=ENOSYS or =EPERM in the environment
 * makes the probe see that error, for tests of the walk. */
int beneathopenat2(void);
/* Whether rel is a plain relative path a value may name: not empty, not absolute, at most 1024
 * bytes, no control character, no empty, "." or ".." name. NULL when it is, else why not. */
const char *beneathbad(const char *rel);
/* Read the regular file rel beneath the folder root (as openbeneath: no link, no "..", nothing
 * absolute) into out, at most max bytes; 0, or -1 with e (ERR_INPUT) and out freed. */
int readbeneath(const char *root, const char *rel, size_t max, struct buf *out, struct err *e);

#endif
