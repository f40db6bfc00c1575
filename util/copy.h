/* copy: files and trees of files copied as they are (a run directory's pieces). */
#ifndef NS_COPY_H
#define NS_COPY_H

#include "util.h"

/* Copy the regular file src to dst, which must not exist (or hard-link it when linkok and the
 * file system allows). Links are not followed. 0, or -1 with e (code 2 when src cannot be read). */
int copyfile(const char *src, const char *dst, int linkok, struct err *e);
/* Copy the regular file fd in holds, whole, into a new file placed at dst (a temporary one, synced,
 * then renamed; never one that was there), by its data extents: its holes stay holes (a sparse
 * file costs what was written), in bounded memory. *bytes and sha256 (hex): its length, and the
 * digest of what it reads as. 0, or -1 with e. */
int copyfdto(int in, const char *dst, int64_t *bytes, char sha256[65], struct err *e);
/* Copy the tree src into dst (made if missing): folders and regular files only, 64 levels at
 * most; anything else is refused (code 2). 0, or -1 with e. */
int copytree(const char *src, const char *dst, struct err *e);

#endif
