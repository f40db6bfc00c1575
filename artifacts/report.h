/* report: a run as one self-contained HTML page: jobs, turns, tool calls, decisions, changes. */
#ifndef NS_REPORT_H
#define NS_REPORT_H

#include <stdio.h>
#include "../util/util.h"

/* Write the page of the run directory rundir to out. Everything taken from the run is escaped;
 * the page's Content-Security-Policy lets only its own style and script (by hash) apply. The
 * layers are read within the bound maxbytes (0: the default, see changesread); when they cannot
 * be read the page says why and so does warn (its msg is empty otherwise); so does warn when the
 * page stops reading the logs at its size (64 MiB of markup and text). */
int reportwrite(const char *rundir, int64_t maxbytes, FILE *out, struct err *warn, struct err *e);
/* Append s (n bytes, any bytes) to b as HTML text: escaped, invalid UTF-8 replaced, control and
 * bidirectional characters shown as visible escapes. */
void htmltext(struct buf *b, const char *s, size_t n);

#endif
