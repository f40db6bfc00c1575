/* events: hash-chained JSON lines in one zstd frame. After every line the file on disk is a
 * whole, ended frame: the line's blocks are written followed by an empty last block, which the
 * next line overwrites. A crash or a full disk thus never leaves a log that stock zstd refuses.
 * A write that fails midway is undone by writing back the bytes it overwrote (no new space
 * needed) and cutting the file there; nothing more is written to the log. The frame carries no
 * zstd checksum: the SHA-256 chain covers every line. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "events.h"
#include "../util/jsonout.h"
#include "../util/zst.h"

/* An empty raw block with the last-block bit: ends the frame after the blocks before it. */
static const char lastblock[3] = {1, 0, 0};

struct evlog {
	int fd;
	struct zstmem *z;
	const struct secrets *sec;
	char prev[65];
	int64_t seq;
	struct buf out;
	off_t good;      /* bytes up to the end of the last whole line */
	char tail[32];   /* what ends the frame on disk after good */
	size_t ntail;
	int failed;      /* a write failed: the log was put back as it was and is closed to writes */
	void (*tap)(void *ctx, const char *line); /* told every line written, or NULL */
	void *tapctx;
};

/* Write all of p at off. */
static int pwriteall(int fd, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w, n -= (size_t)w, off += w;
	}
	return 0;
}

int evopen(struct evlog **lp, const char *path, const struct secrets *sec, struct err *e)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return errf(e, "create %s:", path);
	struct evlog *l = xcalloc(1, sizeof *l);
	l->fd = fd;
	l->sec = sec;
	l->z = zstmemnew(1); /* a frame an event, written as it happens: the fastest level */
	memset(l->prev, '0', 64);
	/* Until the first line: an empty frame, so even a log with no line is a valid file. */
	struct buf empty = {0};
	if (zstmemempty(&empty, e) < 0 || empty.len > sizeof l->tail || pwriteall(fd, empty.data, empty.len, 0) < 0) {
		errf(e, "write %s:", path);
		unlink(path);
		close(fd);
		zstmemfree(l->z);
		buffree(&empty);
		free(l);
		return -1;
	}
	memcpy(l->tail, empty.data, empty.len);
	l->ntail = empty.len;
	buffree(&empty);
	*lp = l;
	return 0;
}

/* Compress a line (flushed to a block boundary) into l->out, then the block that ends the frame. */
static int compress(struct evlog *l, const char *data, size_t n, struct err *e)
{
	l->out.len = 0;
	if (zstmemflush(l->z, data, n, &l->out, e) < 0)
		return -1;
	bufadd(&l->out, lastblock, sizeof lastblock);
	return 0;
}

/* Write l->out over the frame's end at good. On failure put back the bytes overwritten (the
 * file held them, so no new space is needed) and cut the file after them. */
static int commit(struct evlog *l, struct err *e)
{
	if (pwriteall(l->fd, l->out.data, l->out.len, l->good) == 0) {
		l->good += (off_t)(l->out.len - sizeof lastblock);
		memcpy(l->tail, lastblock, sizeof lastblock);
		l->ntail = sizeof lastblock;
		return 0;
	}
	int saved = errno;
	l->failed = 1;
	if (pwriteall(l->fd, l->tail, l->ntail, l->good) == 0)
		(void)ftruncate(l->fd, l->good + (off_t)l->ntail);
	errno = saved;
	return errf(e, "write event log:");
}

/* Every string of a tree (keys too) masked in place. */
static void masktree(const struct secrets *sec, cJSON *j)
{
	for (cJSON *c = j ? j->child : NULL; c; c = c->next) {
		char *m = c->string ? secretsmask(sec, c->string) : NULL;
		if (m) {
			if (!(c->type & cJSON_StringIsConst))
				free(c->string);
			c->string = m;
			c->type &= ~cJSON_StringIsConst;
		}
		if (cJSON_IsString(c) && (m = secretsmask(sec, c->valuestring))) {
			free(c->valuestring);
			c->valuestring = m;
		}
		masktree(sec, c);
	}
}

char *jsonmask(const struct secrets *sec, const cJSON *j, const char *printed, int formatted)
{
	char *m = secretsmask(sec, printed);
	if (!m)
		return NULL;
	cJSON *back = cJSON_Parse(m);
	if (back) { /* the usual case: every escaped form masked, and still the JSON it was */
		cJSON_Delete(back);
		return m;
	}
	free(m); /* a mask split an escape: mask each string apart, which cannot */
	cJSON *copy = cJSON_Duplicate(j, 1);
	masktree(sec, copy);
	char *out = formatted ? cJSON_Print(copy) : cJSON_PrintUnformatted(copy);
	cJSON_Delete(copy);
	return out;
}

int evadd(struct evlog *l, const char *type, cJSON *obj, struct err *e)
{
	if (l->failed) {
		cJSON_Delete(obj);
		return errf(e, "event log: not written since an earlier write failed");
	}
	char now[32];
	utcnow(now);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddNumberToObject(ev, "seq", (double)l->seq);
	cJSON_AddStringToObject(ev, "time", now);
	cJSON_AddStringToObject(ev, "type", type);
	cJSON_AddStringToObject(ev, "prev", l->prev);
	if (obj) {
		cJSON *c;
		while ((c = obj->child)) {
			cJSON_DetachItemViaPointer(obj, c);
			cJSON_AddItemToObject(ev, c->string, c);
		}
		cJSON_Delete(obj);
	}
	char *line = jsonprint(ev);
	char *masked = jsonmask(l->sec, ev, line, 0);
	cJSON_Delete(ev);
	if (masked) {
		free(line);
		line = masked;
	}
	size_t n = strlen(line);
	if (n > EVLINEMAX) {
		free(line);
		return errc(e, ERR_FAIL, "event %s: %zu MiB, more than an event line may hold (%zu MiB): not written", type,
		            n >> 20, EVLINEMAX >> 20);
	}
	line[n] = '\n';
	int rc = compress(l, line, n + 1, e);
	if (rc == 0)
		rc = commit(l, e);
	line[n] = 0;
	if (rc == 0) {
		sha256hex(line, n, l->prev);
		l->seq++;
		if (l->tap)
			l->tap(l->tapctx, line);
	}
	free(line);
	return rc;
}

void evtap(struct evlog *l, void (*fn)(void *ctx, const char *line), void *ctx)
{
	l->tap = fn;
	l->tapctx = ctx;
}

const char *evhead(const struct evlog *l)
{
	return l->prev;
}

int64_t evcount(const struct evlog *l)
{
	return l->seq;
}

int evclose(struct evlog *l, struct err *e)
{
	int rc = 0;
	if (fsync(l->fd) < 0)
		rc = errf(e, "fsync event log:");
	close(l->fd);
	zstmemfree(l->z);
	buffree(&l->out);
	free(l);
	return rc;
}

int evfields(const char *line, size_t len, long *seq, char type[32], char prev[65])
{
	const char *p = line, *end = line + len;
	if (len < 40 || strncmp(p, "{\"seq\":", 7) != 0)
		return 0;
	p += 7;
	char *q;
	*seq = strtol(p, &q, 10);
	if (q == p || q >= end || strncmp(q, ",\"time\":\"", 9) != 0)
		return 0;
	p = memchr(q + 9, '"', end - q - 9);
	if (!p || end - p < 10 || strncmp(p, "\",\"type\":\"", 10) != 0)
		return 0;
	p += 10;
	const char *t = p;
	while (p < end && *p != '"' && *p != '\\' && p - t < 31)
		p++;
	if (p >= end || *p != '"')
		return 0;
	memcpy(type, t, p - t);
	type[p - t] = 0;
	if (end - p < 11 + 64 || strncmp(p, "\",\"prev\":\"", 10) != 0 || p[10 + 64] != '"')
		return 0;
	memcpy(prev, p + 10, 64);
	prev[64] = 0;
	return 1;
}

struct evreader {
	struct zstr *z;
	char *path;
	struct buf data; /* decompressed bytes not yet returned */
	size_t off;      /* start of the next line in data */
	size_t scanned;  /* bytes of it from off already searched for its newline */
	int eof, truncated;
};

int evropen(struct evreader **rp, const char *path, struct err *e)
{
	struct zstr *z;
	if (zstropen(&z, path, ZSTR_CUT | ZSTR_NOFOLLOW, e) < 0)
		return -1;
	struct evreader *r = xcalloc(1, sizeof *r);
	r->z = z;
	r->path = xstrdup(path);
	*rp = r;
	return 0;
}

/* Decompress more into r->data; 0 when nothing more will come. A log cut inside its frame (a
 * crash) or corrupt is truncated: the lines before the cut are read. */
static int fill(struct evreader *r, struct err *e)
{
	enum { CHUNK = 128 << 10 };
	if (r->eof)
		return 0;
	bufgrow(&r->data, CHUNK);
	ssize_t n = zstread(r->z, r->data.data + r->data.len, CHUNK, e);
	if (n <= 0) {
		r->eof = 1;
		r->truncated = n < 0 || zstrtruncated(r->z);
		return n < 0 ? -1 : 0;
	}
	r->data.len += (size_t)n;
	r->data.data[r->data.len] = 0;
	return 1;
}

/* Each byte is searched for a newline once (a line arriving in many fills is not searched again
 * from its start), and a line is kept only up to EVLINEMAX: time and memory stay linear in the
 * bytes read, whatever the file holds. */
int evrnext(struct evreader *r, const char **line, size_t *len, struct err *e)
{
	for (;;) {
		char *start = r->data.data ? r->data.data + r->off : NULL;
		char *nl = start ? memchr(start + r->scanned, '\n', r->data.len - r->off - r->scanned) : NULL;
		size_t n = nl ? (size_t)(nl - start) : r->data.len - r->off;
		if (n > EVLINEMAX)
			return errc(e, ERR_VERIFY, "%s: a line longer than %zu MiB (no event line is written that long)", r->path,
			            EVLINEMAX >> 20);
		if (nl) {
			*nl = 0;
			*line = start;
			*len = n;
			r->off = nl + 1 - r->data.data;
			r->scanned = 0;
			return 1;
		}
		r->scanned = n;
		/* Keep the partial line, drop what was returned. */
		if (r->off) {
			memmove(r->data.data, r->data.data + r->off, r->data.len - r->off);
			r->data.len -= r->off;
			r->off = 0;
		}
		int f = fill(r, e);
		if (f < 0)
			return -1;
		if (f == 0) {
			if (r->data.len > r->off)
				r->truncated = 1;
			return 0;
		}
	}
}

int evrtruncated(const struct evreader *r)
{
	return r->truncated;
}

void evrclose(struct evreader *r)
{
	if (!r)
		return;
	zstrfree(r->z);
	free(r->path);
	buffree(&r->data);
	free(r);
}
