/* beneath: opening a path that a stranger chose, beneath a root, never through a link. */
#ifndef NS_BENEATH_H
#define NS_BENEATH_H

/* openat() of a relative path under rootfd that fails (ELOOP, EXDEV) rather than resolve a
 * symlink or leave rootfd; flags as for openat (O_PATH too). openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS where the kernel has it, else one component at a time, refusing "..". */
int openbeneath(int rootfd, const char *path, int flags);
/* Whether rel is a plain relative path a value may name: not empty, not absolute, at most 1024
 * bytes, no control character, no empty, "." or ".." name. NULL when it is, else why not. */
const char *beneathbad(const char *rel);

#endif
