/* capture: a poll loop over the two output pipes and one extra descriptor
   (the step's pidfd or the zygote's control socket). Past the cap, output is
   still read, so that the writer never blocks, and dropped. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture.h"
#include "../util/cancel.h"

static void readone(struct capture *c, int i)
{
	char tmp[65536];
	ssize_t n = read(c->fd[i], tmp, sizeof tmp);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(c->fd[i]);
		c->fd[i] = -1;
		return;
	}
	if (ringkeep(c->b[i], &c->ring[i], c->cap, tmp, (size_t)n))
		c->truncated = 1;
}

size_t ringhead(size_t cap)
{
	return cap > 4 * RING_NOTE ? cap / 2 - RING_NOTE : cap; /* a small cap keeps only the head */
}

int ringkeep(struct buf *b, struct ring *r, size_t cap, const char *p, size_t n)
{
	size_t head = ringhead(cap), size = head < cap ? cap - cap / 2 : 0;
	if (!r->data && b->len < head) {
		size_t k = head - b->len < n ? head - b->len : n;
		bufadd(b, p, k);
		p += k, n -= k;
	}
	if (!n || !size)
		return n > 0;
	if (!r->data)
		r->data = xmalloc(size);
	int dropped = 0;
	if (n > size) { /* only the last size bytes can stay */
		r->dropped += r->len + (n - size);
		dropped = r->len + (n - size) > 0;
		p += n - size, n = size;
		r->len = 0, r->pos = 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (r->len == size) {
			r->dropped++;
			dropped = 1;
		} else {
			r->len++;
		}
		r->data[r->pos] = p[i];
		r->pos = (r->pos + 1) % size;
	}
	return dropped;
}

void ringend(struct buf *b, struct ring *r)
{
	if (!r->data)
		return;
	size_t size = r->len, start = 0;
	if (r->dropped) {
		if (b->len && b->data[b->len - 1] != '\n')
			bufputc(b, '\n');
		bufprintf(b, "[... %llu bytes not kept by the sandbox ...]\n", (unsigned long long)r->dropped);
		start = r->pos; /* the ring is full: its oldest byte is where the next would go */
	}
	for (size_t i = 0; i < size; i++)
		bufputc(b, r->data[(start + i) % size]);
	free(r->data);
	memset(r, 0, sizeof *r);
}

int capturewait(struct capture *c, int extra, int ms, struct err *e)
{
	int64_t end = ms < 0 ? -1 : nowms() + ms;
	for (int first = 1;; first = 0) {
		struct pollfd p[4];
		int np = 0, left = -1;
		for (int i = 0; i < 2; i++)
			p[np++] = (struct pollfd){.fd = c->fd[i], .events = POLLIN};
		p[np++] = (struct pollfd){.fd = extra, .events = POLLIN};
		/* While waiting on a step (extra given), a stop request ends the wait as its deadline would. */
		p[np++] = (struct pollfd){.fd = extra >= 0 ? cancelfd() : -1, .events = POLLIN};
		if (end >= 0) {
			int64_t d = end - nowms();
			left = d < 0 ? 0 : (int)d;
		}
		if (c->fd[0] < 0 && c->fd[1] < 0 && extra < 0) {
			if (first && left > 0) /* nothing to watch: just wait */
				usleep(left * 1000);
			return 0;
		}
		int n = poll(p, np, left); /* negative fds are ignored by poll */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errf(e, "poll:");
		}
		for (int i = 0; i < 2; i++)
			if (p[i].revents)
				readone(c, i);
		if (p[2].fd >= 0 && p[2].revents)
			return 1;
		if (p[3].fd >= 0 && p[3].revents)
			return 0;
		if (n == 0 || (end >= 0 && nowms() >= end))
			return 0;
	}
}

void capturedrain(struct capture *c, int ms)
{
	int64_t end = nowms() + ms;
	while ((c->fd[0] >= 0 || c->fd[1] >= 0) && nowms() < end)
		capturewait(c, -1, (int)(end - nowms()), NULL);
	captureclose(c);
}

void captureclose(struct capture *c)
{
	for (int i = 0; i < 2; i++) {
		if (c->fd[i] >= 0) {
			close(c->fd[i]);
			c->fd[i] = -1;
		}
		ringend(c->b[i], &c->ring[i]);
	}
}
