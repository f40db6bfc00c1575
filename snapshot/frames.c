/* frames: a layer's index of its zstd frames (the record format, and its checks). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <archive.h>
#include <archive_entry.h>
#include "frames.h"
#include "../util/zst.h"

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
		/* a first path is a scan's: no '/' last, which would sort it apart from its entry */
		if ((size_t)(stop - p) < n || n >= PATH_MAX || memchr(p, 0, n) || (n && p[n - 1] == '/') || len == 0 ||
		    len > (uint64_t)(end - at))
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

int framecheckopen(struct framecheck *c, struct zstr *z, struct err *e)
{
	memset(c, 0, sizeof *c);
	struct buf b = {0};
	int64_t end;
	int rc = zstrtrailer(z, &b, &end, e);
	if (rc > 0 && framesread(&b, end, &c->f, e) < 0)
		rc = -1;
	buffree(&b);
	if (rc <= 0)
		return rc;
	c->at = xmalloc(c->f.n * sizeof *c->at);
	c->met = xmalloc(c->f.n * sizeof *c->met);
	for (size_t i = 0; i < c->f.n; i++)
		c->at[i] = c->f.v[i].at;
	zstrmarks(z, c->at, c->met, c->f.n);
	return 0;
}

/* Where frame k was met: its place in the stream, or one of ZST* (zst.h). */
static int64_t met(const struct framecheck *c, size_t k)
{
	return __atomic_load_n(&c->met[k], __ATOMIC_ACQUIRE);
}

/* Paths compared without a folder's '/' last. */
static int pathcmp(const char *a, const char *b)
{
	size_t al = strlen(a), bl = strlen(b);
	al -= al > 1 && a[al - 1] == '/';
	bl -= bl > 1 && b[bl - 1] == '/';
	int d = memcmp(a, b, al < bl ? al : bl);
	return d ? d : al < bl ? -1 : al > bl;
}

int framecheckentry(struct framecheck *c, struct archive *a, struct archive_entry *en, int special, struct err *e)
{
	const char *path = archive_entry_pathname(en);
	if (!c->f.n || !path)
		return 0;
	int64_t pos = archive_read_header_position(a);
	for (; c->next < c->f.n; c->next++) { /* the frames that start before or at this entry */
		int64_t m = met(c, c->next);
		if (m == ZSTSKIPPED)
			continue;
		if (m == ZSTINSIDE || (m >= 0 && m < pos))
			return errc(e, ERR_VERIFY, "its frame index starts a frame (%zu) where no entry starts", c->next);
		if (m != pos)
			break; /* later */
		if (c->next > 0 && (special || pathcmp(path, c->f.v[c->next].first) != 0))
			return errc(e, ERR_VERIFY, "entry %.200s starts frame %zu, which its index says starts at %.200s", path,
			            c->next, c->f.v[c->next].first);
		c->cur = c->next;
	}
	if (special) {
		if (c->cur || c->last)
			return errc(e, ERR_VERIFY, "entry %.200s: a mark or whiteout after the layer's entries", path);
		return 0;
	}
	if (c->last && pathcmp(path, c->last) <= 0)
		return errc(e, ERR_VERIFY, "entry %.200s after %.200s: a layer's entries are in order, each once", path, c->last);
	if (c->cur + 1 < c->f.n && pathcmp(path, c->f.v[c->cur + 1].first) >= 0)
		return errc(e, ERR_VERIFY, "entry %.200s in frame %zu, which its index says ends before %.200s", path, c->cur,
		            c->f.v[c->cur + 1].first);
	free(c->last);
	c->last = xstrdup(path);
	return 0;
}

int framecheckend(struct framecheck *c, struct err *e)
{
	for (; c->next < c->f.n; c->next++)
		if (met(c, c->next) != ZSTSKIPPED)
			return errc(e, ERR_VERIFY, "its frame index names a frame (%zu) that starts no entry", c->next);
	return 0;
}

void framecheckfree(struct framecheck *c)
{
	framesfree(&c->f);
	free(c->at);
	free(c->met);
	free(c->last);
	memset(c, 0, sizeof *c);
}
