/* pump: move bytes between two connected sockets in both directions, non-blocking, through
   a pipe per direction with splice() (no copy through user memory), or through a buffer
   where a socket type cannot splice. Used by the egress proxy and by the sandbox's relay. */
#ifndef NS_PUMP_H
#define NS_PUMP_H

#include <poll.h>
#include <stdint.h>

/* One direction: from src to dst. */
struct pumpdir {
	int src, dst;
	int pipe[2];      /* -1 when copying through buf */
	char *buf;        /* the copy fallback's buffer */
	size_t held, off; /* bytes in the pipe or buf; buf's first unsent byte */
	int eof;          /* src said end of file */
	int full;         /* src had nothing to give or no room was left: wait until dst takes some */
	int done;         /* eof and everything passed on; dst's write side shut */
	int64_t bytes;    /* passed on so far */
};

struct pump {
	struct pumpdir d[2]; /* a to b, b to a */
};

/* Set up a pump between sockets a and b (made non-blocking; the pump does not own them). */
int pumpinit(struct pump *p, int a, int b);
/* The poll events the pump waits for: fill pf[0] for a, pf[1] for b. */
void pumppoll(const struct pump *p, struct pollfd pf[2]);
/* Move what can move now; 1 when both directions are done, -1 on a socket error, else 0. */
int pumpstep(struct pump *p);
/* Release the pipes and buffers (not the sockets). */
void pumpfree(struct pump *p);

#endif
