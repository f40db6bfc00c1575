/* pump: each direction fills its pipe from src (splice, non-blocking) while there is room,
   and drains it into dst while dst takes it; at src's end of file, once drained, dst's
   write side is shut, so the far end sees the end as well. A socket that cannot splice
   (EINVAL) switches that direction to read/write through a 64 KiB buffer. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "pump.h"

#define PIPECAP (256 * 1024)
#define BUFCAP (64 * 1024)

static int dirinit(struct pumpdir *d, int src, int dst)
{
	memset(d, 0, sizeof *d);
	d->src = src;
	d->dst = dst;
	d->pipe[0] = d->pipe[1] = -1;
	if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
		return -1;
	fcntl(d->pipe[1], F_SETPIPE_SZ, PIPECAP); /* fewer round trips; the default 64 KiB still works */
	return 0;
}

int pumpinit(struct pump *p, int a, int b)
{
	fcntl(a, F_SETFL, fcntl(a, F_GETFL) | O_NONBLOCK);
	fcntl(b, F_SETFL, fcntl(b, F_GETFL) | O_NONBLOCK);
	if (dirinit(&p->d[0], a, b) < 0)
		return -1;
	if (dirinit(&p->d[1], b, a) < 0) {
		pumpfree(p);
		return -1;
	}
	return 0;
}

void pumppoll(const struct pump *p, struct pollfd pf[2])
{
	pf[0] = (struct pollfd){p->d[0].src, 0, 0};
	pf[1] = (struct pollfd){p->d[1].src, 0, 0};
	for (int i = 0; i < 2; i++) {
		const struct pumpdir *d = &p->d[i];
		if (d->done)
			continue;
		if (!d->eof && !d->full && (d->pipe[0] >= 0 || d->held < BUFCAP))
			pf[i].events |= POLLIN; /* pf[i].fd is d->src */
		if (d->held)
			pf[!i].events |= POLLOUT; /* pf[!i].fd is d->dst */
	}
}

/* Switch a direction whose socket cannot splice to the buffer; only while its pipe is empty. */
static int tobuffer(struct pumpdir *d)
{
	if (d->held || d->pipe[0] < 0)
		return -1;
	close(d->pipe[0]);
	close(d->pipe[1]);
	d->pipe[0] = d->pipe[1] = -1;
	d->buf = malloc(BUFCAP);
	return d->buf ? 0 : -1;
}

/* Move what one direction can; -1 on a socket error. */
static int dirstep(struct pumpdir *d)
{
	for (int progress = 1; progress && !d->done;) {
		progress = 0;
		if (!d->eof) {
			ssize_t n;
			if (d->pipe[0] >= 0) {
				n = splice(d->src, NULL, d->pipe[1], NULL, PIPECAP, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
				if (n < 0 && errno == EINVAL && tobuffer(d) == 0)
					continue;
			} else {
				n = d->held < BUFCAP ? recv(d->src, d->buf + d->held, BUFCAP - d->held, 0) : -1;
				if (d->held >= BUFCAP)
					errno = EAGAIN;
			}
			if (n > 0) {
				d->held += n;
				progress = 1;
			} else if (n == 0) {
				d->eof = 1;
				progress = 1;
			} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
				d->full = d->held > 0; /* the pipe may be what is full: wait for dst first */
			} else if (errno != EINTR) {
				if (errno != ECONNRESET)
					return -1;
				d->eof = 1; /* a reset is an end too; what we hold still goes on */
			}
		}
		if (d->held) {
			ssize_t n;
			if (d->pipe[0] >= 0)
				n = splice(d->pipe[0], NULL, d->dst, NULL, d->held, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			else
				n = send(d->dst, d->buf + d->off, d->held - d->off, MSG_NOSIGNAL);
			if (n > 0) {
				d->bytes += n;
				if (d->pipe[0] >= 0) {
					d->held -= n;
				} else {
					d->off += n;
					if (d->off == d->held)
						d->off = d->held = 0;
				}
				d->full = 0;
				progress = 1;
			} else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				return -1;
			}
		}
		if (d->eof && !d->held) {
			shutdown(d->dst, SHUT_WR);
			d->done = 1;
		}
	}
	return 0;
}

int pumpstep(struct pump *p)
{
	if (dirstep(&p->d[0]) < 0 || dirstep(&p->d[1]) < 0)
		return -1;
	return p->d[0].done && p->d[1].done;
}

void pumpfree(struct pump *p)
{
	for (int i = 0; i < 2; i++) {
		struct pumpdir *d = &p->d[i];
		if (d->pipe[0] >= 0)
			close(d->pipe[0]), close(d->pipe[1]);
		d->pipe[0] = d->pipe[1] = -1;
		free(d->buf);
		d->buf = NULL;
	}
}
