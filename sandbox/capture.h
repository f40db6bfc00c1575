/* capture: read a step's stdout and stderr pipes while waiting, keeping at most a cap of each. */
#ifndef NS_CAPTURE_H
#define NS_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "../util/util.h"

/* The last bytes of a stream past its kept head, in a ring. */
struct ring {
	char *data;        /* cap - cap/2 bytes once used; owned */
	size_t len, pos;   /* bytes held, where the next one goes */
	uint64_t dropped;  /* bytes between the head and the ring that were not kept */
};

/* Room left for the line that says how much was dropped, so that head, line and tail stay within cap. */
enum { RING_NOTE = 80 };
/* Bytes of the head kept of a stream for a cap: cap/2 less RING_NOTE (all of a cap up to 4 RING_NOTE:
 * no tail then). */
size_t ringhead(size_t cap);
/* Keep n bytes of a stream whose head goes to b: the first ringhead(cap) bytes in b, the last
 * cap - cap/2 in r. Returns 1 when a byte was dropped. */
int ringkeep(struct buf *b, struct ring *r, size_t cap, const char *p, size_t n);
/* Move what r holds to the end of b, after a line saying how many bytes were dropped between
 * them when some were; frees r. */
void ringend(struct buf *b, struct ring *r);

struct capture {
	int fd[2];         /* read ends of stdout and stderr, -1 once closed; owned */
	struct buf *b[2];  /* where the kept bytes go: the head and the tail of each stream */
	size_t cap;        /* bytes kept of each */
	int truncated;     /* set when anything past the cap was dropped */
	struct ring ring[2];
};

/* Read what arrives for up to ms milliseconds (-1: no limit) or until fd extra
   (-1: none) is readable. Returns 1 when extra is readable, 0 otherwise (also at once when a
   stop was requested, see cancel.h), -1 on error. */
int capturewait(struct capture *c, int extra, int ms, struct err *e);
/* Read until both pipes close or ms milliseconds pass; then close them. */
void capturedrain(struct capture *c, int ms);
/* Close whatever is still open, and put each stream's kept tail after its head. */
void captureclose(struct capture *c);

#endif
