/* linediff: a unified diff of two texts, line by line (Myers' greedy algorithm). */
#ifndef NS_LINEDIFF_H
#define NS_LINEDIFF_H

#include <stddef.h>
#include "util.h"

/* Append to out the hunks ("@@ -a,b +c,d @@" and " ", "-", "+" lines, context lines around each
 * change) that turn a into b. 0 when done (nothing appended for equal texts), 1 when the texts
 * differ in more than maxedits lines or either has more than LINEDIFFMAXLINES (nothing appended):
 * each line costs 16 bytes, and 24 more in a script, so 16 MiB of empty lines took 1.35 GB. */
enum { LINEDIFFMAXLINES = 1 << 20 };
int linediff(const char *a, size_t na, const char *b, size_t nb, int context, int maxedits, struct buf *out);

#endif
