/* capture: read a step's stdout and stderr pipes while waiting, keeping at most a cap of each. */
#ifndef NS_CAPTURE_H
#define NS_CAPTURE_H

#include <stddef.h>
#include "../../util/util.h"

struct capture {
	int fd[2];         /* read ends of stdout and stderr, -1 once closed; owned */
	struct buf *b[2];  /* where the kept bytes go */
	size_t cap;        /* bytes kept of each */
	int truncated;     /* set when anything past the cap was dropped */
};

/* Read what arrives for up to ms milliseconds (-1: no limit) or until fd extra
   (-1: none) is readable. Returns 1 when extra is readable, 0 otherwise (also at once when a
   stop was requested, see cancel.h), -1 on error. */
int capturewait(struct capture *c, int extra, int ms, struct err *e);
/* Read until both pipes close or ms milliseconds pass; then close them. */
void capturedrain(struct capture *c, int ms);
/* Close whatever is still open. */
void captureclose(struct capture *c);

#endif
