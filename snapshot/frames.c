/* frames: a layer's index of its zstd frames (the record format, and its checks). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "frames.h"

/* The index: TAG, then each frame as its length (8 bytes) and its first path's length (2) and
 * bytes, little-endian. */
static const char TAG[4] = {'n', 's', 'f', '1'};

static void putle(struct buf *b, uint64_t v, int n)
{
	unsigned char p[8];
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> 8 * i);
	bufadd(b, p, n);
}

static uint64_t getle(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void framesput(struct buf *b, int64_t len, const char *first)
{
	if (!b->len)
		bufadd(b, TAG, sizeof TAG);
	size_t n = strlen(first);
	putle(b, (uint64_t)len, 8);
	putle(b, n, 2);
	bufadd(b, first, n);
}

int framesread(const struct buf *b, int64_t end, struct frames *f, struct err *e)
{
	memset(f, 0, sizeof *f);
	const unsigned char *p = (const unsigned char *)b->data, *stop = p + b->len;
	if (b->len < sizeof TAG || memcmp(p, TAG, sizeof TAG) != 0)
		return errc(e, ERR_VERIFY, "its frame index is not one");
	p += sizeof TAG;
	size_t cap = 0;
	int64_t at = 0;
	while (p < stop) {
		if (stop - p < 10)
			goto bad;
		uint64_t len = getle(p, 8);
		size_t n = getle(p + 8, 2);
		p += 10;
		if ((size_t)(stop - p) < n || n >= PATH_MAX || memchr(p, 0, n) || len == 0 || len > (uint64_t)(end - at))
			goto bad;
		char *first = xstrndup((const char *)p, n);
		p += n;
		/* the first frame's path is "", every other's after the one before it */
		int inorder = f->n ? n && strcmp(first, f->v[f->n - 1].first) > 0 : n == 0;
		if (f->n == cap)
			f->v = xrealloc(f->v, (cap = cap ? 2 * cap : 16) * sizeof *f->v);
		f->v[f->n++] = (struct frame){at, (int64_t)len, first};
		at += (int64_t)len;
		if (!inorder)
			goto bad;
	}
	if (at == end && f->n)
		return 0;
bad:
	framesfree(f);
	return errc(e, ERR_VERIFY, "its frame index does not describe its frames");
}

void framesfree(struct frames *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].first);
	free(f->v);
	memset(f, 0, sizeof *f);
}
