/* finalize: seal a run that was killed before it could: every event log ended after its last
 * whole line, leftovers of unfinished writes removed, run.json and SHA256SUMS written. */
#ifndef NS_FINALIZE_H
#define NS_FINALIZE_H

#include "../util/util.h"

/* Seal the unfinished run dir (one without run.json); its jobs are marked "incomplete". */
int runfinalize(const char *dir, struct err *e);
/* Whether dir looks like a run directory that never finished (jobs/ but no run.json). */
int rununfinished(const char *dir);

#endif
