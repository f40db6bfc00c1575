/* copy: files and trees of files copied as they are (a run directory's pieces). */
#ifndef NS_COPY_H
#define NS_COPY_H

#include "util.h"

/* Copy the regular file src to dst, which must not exist (or hard-link it when linkok and the
 * file system allows). Links are not followed. 0, or -1 with e (code 2 when src cannot be read). */
int copyfile(const char *src, const char *dst, int linkok, struct err *e);
/* Copy what fd in holds, from where it stands to its end, into a new file placed at dst (a
 * temporary one, synced, then renamed; never one that was there), a buffer at a time: any size
 * in bounded memory, at most max bytes (0: any; a sparse file's holes are bytes here, written as
 * zeros): more is refused (ERR_INPUT, before a byte is written when its size says so) and dst
 * is not made. *bytes and sha256 (hex): how many, and their digest, read once. 0, or -1 with e. */
int copyfdto(int in, const char *dst, int64_t max, int64_t *bytes, char sha256[65], struct err *e);
/* Copy the tree src into dst (made if missing): folders and regular files only, 64 levels at
 * most; anything else is refused (code 2). 0, or -1 with e. */
int copytree(const char *src, const char *dst, struct err *e);

#endif
