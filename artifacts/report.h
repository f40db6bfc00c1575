/* report: a run as one self-contained HTML page: jobs, turns, tool calls, decisions, changes. */
#ifndef NS_REPORT_H
#define NS_REPORT_H

#include <stdio.h>
#include "../util/util.h"

/* Write the page of the run directory rundir to out. Everything taken from the run is escaped;
 * the page's Content-Security-Policy lets only its own style and script (by hash) apply. */
int reportwrite(const char *rundir, FILE *out, struct err *e);
/* Append s (n bytes, any bytes) to b as HTML text: escaped, invalid UTF-8 replaced, control and
 * bidirectional characters shown as visible escapes. */
void htmltext(struct buf *b, const char *s, size_t n);

#endif
