/* zst: zstd streams to and from files, with the SHA-256 of the compressed bytes as they pass.
 * A writer with workers compresses frames on a pool of its own; a reader can decode only some
 * frames (zstrpick) and find a trailer at the file's end (zstrtrailer). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_d_forceIgnoreChecksum, in libzstd since 1.4.7 */
#include <zstd.h>
#include "zst.h"

struct zstw {
	int fd;
	char *path;
	char *tmp;      /* ZSTW_PLACE: what is written, renamed to path at the end */
	ZSTD_CCtx *z;
	int kept;       /* z belongs to a zstc */
	EVP_MD_CTX *md;
	int64_t bytes;
	struct buf out; /* compressed, not yet written */
	int fed;        /* bytes went in since the last frame ended */
	int sealed;     /* the trailer is written: nothing may follow */
	int level;
	int64_t frames; /* frames ended (handed to the workers, or written) */
	int64_t *sizes; /* the compressed length of each written, in order */
	size_t nsizes;
	struct pool *pool; /* workers compressing frames (NULL: this thread, one stream) */
	int ownpool;
	int64_t framelen;
	int64_t endat;     /* without workers: where the last frame zstwframe ended ends */
	size_t fill, tail; /* the slot being filled; the oldest not yet written */
	int inflight;      /* slots handed to the workers, not yet written */
};

struct zstr {
	int fd;
	char *path;
	ZSTD_DCtx *z;
	EVP_MD_CTX *md;
	int64_t bytes;
	char *in;
	ZSTD_inBuffer inb;
	size_t last; /* what the last ZSTD_decompressStream returned: 0 at a frame's end */
	int eof;
	int flags;     /* ZSTR_* */
	int truncated; /* ended inside a frame (ZSTR_CUT) */
	int atframe;   /* the next input byte starts a frame (ZSTR_NOSKIP looks at its magic) */
	int64_t size;  /* the file's size when opened */
	int64_t (*pick)[2]; /* zstrpick: the ranges to decode (NULL: all) */
	size_t npick, ipick;
	const int64_t *mark; /* zstrmarks: frame starts to note, and where each was met */
	int64_t *met;
	size_t nmark, imark;
	int64_t out;         /* decompressed bytes handed out */
};

/* A trailer's skippable frame: its magic, then the payload's length; the payload, then its length
 * again and TRAILTAG, so that it is found from the file's end. */
#define TRAILMAGIC 0x184D2A5Bu
static const char TRAILTAG[4] = {'n', 's', 't', 'r'};

static void le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> 8 * i);
}

static uint32_t get32(const unsigned char *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Where in the file the next byte the decoder has not taken lies. */
static int64_t zstrat(const struct zstr *r)
{
	return r->bytes - (int64_t)(r->inb.size - r->inb.pos);
}

int zstthreads(int n)
{
	if (n <= 0)
		return 0;
	ZSTD_bounds b = ZSTD_cParam_getBounds(ZSTD_c_nbWorkers);
	if (ZSTD_isError(b.error) || b.upperBound <= 0)
		return 0;
	return n > b.upperBound ? b.upperBound : n;
}

/* With workers, a stream is cut into frames of zstframelen bytes (or where zstwframe asks), each
 * compressed alone by the next free worker and written in order by the writer's thread: frames
 * that decode alone (frames.h) and no wait at a frame's end, as zstd's own workers would make. A
 * ring of one slot more than the workers: the writer fills one while they compress the rest. */
enum { FREE, QUEUED, WORKING, DONE };

struct slot {
	struct buf in, out;
	int state, level;
	size_t rc; /* ZSTD_compress2's, to test with ZSTD_isError */
};

struct pool {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	pthread_t *t;
	int nt, stop;
	struct slot *s;
	size_t ns, next; /* next: the slot a worker takes next (slots are queued in ring order) */
};

static void *poolrun(void *arg)
{
	struct pool *p = arg;
	ZSTD_CCtx *z = ZSTD_createCCtx();
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->s[p->next].state != QUEUED)
			pthread_cond_wait(&p->work, &p->mu);
		if (p->stop)
			break;
		struct slot *sl = &p->s[p->next];
		p->next = (p->next + 1) % p->ns;
		sl->state = WORKING;
		pthread_mutex_unlock(&p->mu);
		size_t cap = ZSTD_compressBound(sl->in.len);
		sl->out.len = 0;
		bufgrow(&sl->out, cap);
		if (!z) {
			sl->rc = (size_t)-1; /* an error code: no compressor */
		} else {
			ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
			ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, sl->level);
			ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
			sl->rc = ZSTD_compress2(z, sl->out.data, cap, sl->in.data, sl->in.len);
		}
		if (!ZSTD_isError(sl->rc))
			sl->out.len = sl->rc;
		pthread_mutex_lock(&p->mu);
		sl->state = DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	ZSTD_freeCCtx(z);
	return NULL;
}

/* A pool of n workers, or NULL when not one thread could be started. */
static struct pool *poolnew(int n)
{
	struct pool *p = xcalloc(1, sizeof *p);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	p->ns = (size_t)n + 1;
	p->s = xcalloc(p->ns, sizeof *p->s);
	p->t = xcalloc((size_t)n, sizeof *p->t);
	while (p->nt < n && pthread_create(&p->t[p->nt], NULL, poolrun, p) == 0)
		p->nt++;
	if (p->nt)
		return p;
	free(p->t);
	free(p->s);
	free(p);
	return NULL;
}

static void poolfree(struct pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->nt; i++)
		pthread_join(p->t[i], NULL);
	for (size_t i = 0; i < p->ns; i++) {
		buffree(&p->s[i].in);
		buffree(&p->s[i].out);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	free(p->t);
	free(p->s);
	free(p);
}

struct zstc {
	ZSTD_CCtx *z;
	struct pool *pool;
};

struct zstc *zstcnew(void)
{
	return xcalloc(1, sizeof(struct zstc));
}

void zstcfree(struct zstc *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->z);
	poolfree(c->pool);
	free(c);
}

int64_t zstframelen(int level)
{
	/* zstd's windows for a stream of unknown length: 512 KiB at level 1, 1 MiB at 2, 2 MiB at 3
	 * to 7, 4 MiB and more from 8 */
	return level <= 1 ? 1 << 20 : level == 2 ? 2 << 20 : level <= 7 ? 4 << 20 : 8 << 20;
}

int zstwopen(struct zstw **wp, const char *path, int level, int threads, int flags, struct err *e)
{
	return zstwopenc(wp, path, level, threads, flags, NULL, e);
}

int zstwopenc(struct zstw **wp, const char *path, int level, int threads, int flags, struct zstc *c,
              struct err *e)
{
	*wp = NULL;
	if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel())
		return errc(e, ERR_INPUT, "zstd level %d is outside %d..%d", level, ZSTD_minCLevel(), ZSTD_maxCLevel());
	char *tmp = NULL;
	int of = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (flags & ZSTW_APPEND ? O_APPEND : O_TRUNC);
	int fd = flags & ZSTW_PLACE ? tmpcreate(path, &tmp, e) : open(path, of, 0644);
	if (fd < 0)
		return flags & ZSTW_PLACE ? -1 : errf(e, "create %s:", path);
	struct zstw *w = xcalloc(1, sizeof *w);
	w->fd = fd;
	w->path = xstrdup(path);
	w->tmp = tmp;
	w->level = level;
	w->md = EVP_MD_CTX_new();
	int t = zstthreads(threads);
	if (t > 0 && c && (c->pool || (c->pool = poolnew(t))) && c->pool->nt >= t)
		w->pool = c->pool;
	else if (t > 0 && !c && (w->pool = poolnew(t)))
		w->ownpool = 1;
	if (w->pool) {
		w->framelen = zstframelen(level);
		w->fill = w->tail = w->pool->next;
		w->pool->s[w->fill].in.len = 0;
	} else {
		if (c && !c->z)
			c->z = ZSTD_createCCtx();
		if (c && c->z)
			ZSTD_CCtx_reset(c->z, ZSTD_reset_session_and_parameters);
		w->z = c ? c->z : ZSTD_createCCtx();
		w->kept = c != NULL;
	}
	if ((!w->pool && !w->z) || !w->md || !EVP_DigestInit_ex(w->md, EVP_sha256(), NULL)) {
		zstwfree(w);
		return errf(e, "zstd: cannot set up a compressor for %s", path);
	}
	if (w->z) {
		ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, level);
		ZSTD_CCtx_setParameter(w->z, ZSTD_c_checksumFlag, 1);
	}
	*wp = w;
	return 0;
}

/* Feed n bytes of p to z with a directive until it has taken them all (and, for flush or end, put
 * out all it holds), appending what comes out to out. */
static int encode(ZSTD_CCtx *z, const void *p, size_t n, ZSTD_EndDirective dir, struct buf *out, struct err *e)
{
	ZSTD_inBuffer in = {p, n, 0};
	for (;;) {
		size_t cap = ZSTD_CStreamOutSize();
		bufgrow(out, cap);
		ZSTD_outBuffer o = {out->data + out->len, cap, 0};
		size_t left = ZSTD_compressStream2(z, &o, &in, dir);
		if (ZSTD_isError(left))
			return errf(e, "zstd: %s", ZSTD_getErrorName(left));
		out->len += o.pos;
		if (dir == ZSTD_e_continue ? in.pos == in.size : left == 0)
			return 0;
	}
}

/* Write a buffer to the file, hashing it, and empty it. */
static int drainbuf(struct zstw *w, struct buf *b, struct err *e)
{
	size_t off = 0;
	EVP_DigestUpdate(w->md, b->data, b->len);
	while (off < b->len) {
		ssize_t n = write(w->fd, b->data + off, b->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errf(e, "write %s:", w->path);
		off += n;
	}
	w->bytes += b->len;
	b->len = 0;
	return 0;
}

static int drain(struct zstw *w, struct err *e)
{
	return drainbuf(w, &w->out, e);
}

/* Compress with a directive; write out once a block's worth is held, and always after flush or end. */
static int push(struct zstw *w, const void *p, size_t n, ZSTD_EndDirective dir, struct err *e)
{
	if (encode(w->z, p, n, dir, &w->out, e) < 0)
		return errctx(e, "%s", w->path);
	return dir != ZSTD_e_continue || w->out.len >= ZSTD_CStreamOutSize() ? drain(w, e) : 0;
}

/* A frame's compressed length, in the order they are written. */
static void sized(struct zstw *w, int64_t n)
{
	if (w->nsizes % 64 == 0)
		w->sizes = xrealloc(w->sizes, (w->nsizes + 64) * sizeof *w->sizes);
	w->sizes[w->nsizes++] = n;
}

/* Write the oldest slot once its worker is done (wait: wait for it; drop: free it unwritten, e may
 * be NULL): 1 when one was taken, 0 when none is waiting (or, without wait, done yet), -1 on error. */
static int poolwrite(struct zstw *w, int wait, int drop, struct err *e)
{
	struct pool *p = w->pool;
	struct slot *sl = &p->s[w->tail];
	pthread_mutex_lock(&p->mu);
	while (wait && (sl->state == QUEUED || sl->state == WORKING))
		pthread_cond_wait(&p->done, &p->mu);
	int ready = sl->state == DONE && w->inflight > 0;
	pthread_mutex_unlock(&p->mu);
	if (!ready)
		return 0;
	int rc = 0;
	if (drop) {
		sl->out.len = 0;
	} else if (ZSTD_isError(sl->rc)) {
		rc = errf(e, "%s: zstd: %s", w->path, ZSTD_getErrorName(sl->rc));
	} else {
		sized(w, (int64_t)sl->out.len);
		rc = drainbuf(w, &sl->out, e);
	}
	pthread_mutex_lock(&p->mu);
	sl->state = FREE;
	pthread_mutex_unlock(&p->mu);
	w->tail = (w->tail + 1) % p->ns;
	w->inflight--;
	return rc < 0 ? -1 : 1;
}

/* Hand the slot being filled to the workers (an empty one too when force: an empty stream's one
 * frame) and wait for the next to be free, writing what is done meanwhile. */
static int poolsubmit(struct zstw *w, int force, struct err *e)
{
	struct pool *p = w->pool;
	struct slot *sl = &p->s[w->fill];
	if (!sl->in.len && !force)
		return 0;
	pthread_mutex_lock(&p->mu);
	sl->level = w->level;
	sl->state = QUEUED;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	w->fill = (w->fill + 1) % p->ns;
	w->inflight++;
	w->frames++;
	for (int r; (r = poolwrite(w, w->fill == w->tail, 0, e)) != 0;)
		if (r < 0)
			return -1;
	p->s[w->fill].in.len = 0;
	return 0;
}

/* Write every frame handed to the workers. */
static int pooldrain(struct zstw *w, struct err *e)
{
	while (w->inflight > 0)
		if (poolwrite(w, 1, 0, e) < 0)
			return -1;
	return 0;
}

int zstwrite(struct zstw *w, const void *p, size_t n, struct err *e)
{
	if (w->sealed && n) {
		errno = EINVAL;
		return errf(e, "%s: written after its trailer", w->path);
	}
	w->fed |= n > 0;
	if (!w->pool)
		return n ? push(w, p, n, ZSTD_e_continue, e) : 0;
	const char *b = p;
	while (n) {
		struct buf *in = &w->pool->s[w->fill].in;
		size_t k = (size_t)(2 * w->framelen) - in->len;
		if (k > n)
			k = n;
		bufadd(in, b, k);
		b += k, n -= k;
		if ((int64_t)in->len >= 2 * w->framelen && poolsubmit(w, 0, e) < 0)
			return -1;
	}
	return 0;
}

/* Without workers: end the frame, and note its length. */
static int endone(struct zstw *w, struct err *e)
{
	if (push(w, "", 0, ZSTD_e_end, e) < 0)
		return -1;
	sized(w, w->bytes - w->endat); /* push drained all after the end */
	w->endat = w->bytes;
	w->frames++;
	w->fed = 0;
	return 0;
}

int zstwframe(struct zstw *w, int64_t *k, struct err *e)
{
	if (w->pool) {
		if (poolsubmit(w, 0, e) < 0)
			return -1;
	} else if (w->fed && endone(w, e) < 0) {
		return -1;
	}
	w->fed = 0;
	*k = w->frames;
	return 0;
}

const int64_t *zstwsizes(struct zstw *w, size_t *n, struct err *e)
{
	if (w->pool && pooldrain(w, e) < 0)
		return NULL;
	*n = w->nsizes;
	return w->sizes;
}

int zstwtrailer(struct zstw *w, const void *p, size_t n, struct err *e)
{
	int64_t k;
	if (n > ZSTTRAILMAX)
		return errc(e, ERR_FAIL, "%s: a trailer of %zu bytes", w->path, n);
	if (zstwframe(w, &k, e) < 0 || (w->pool && pooldrain(w, e) < 0))
		return -1;
	unsigned char h[8], t[8];
	le32(h, TRAILMAGIC);
	le32(h + 4, (uint32_t)n + 8);
	le32(t, (uint32_t)n);
	memcpy(t + 4, TRAILTAG, 4);
	bufadd(&w->out, h, 8);
	bufadd(&w->out, p, n);
	bufadd(&w->out, t, 8);
	w->sealed = 1;
	return drain(w, e);
}

int zstwflush(struct zstw *w, int endframe, int sync, struct err *e)
{
	if (w->pool) { /* frames only: every flush ends one */
		if (!w->sealed && (poolsubmit(w, w->frames == 0, e) < 0 || pooldrain(w, e) < 0))
			return -1;
		w->fed = 0;
	} else {
		/* An ended frame is a complete stream already (and nothing may follow a trailer); an
		 * empty file still gets its one empty frame. */
		int skip = w->sealed || (endframe && !w->fed && w->bytes > 0);
		if (!skip && (endframe ? endone(w, e) : push(w, "", 0, ZSTD_e_flush, e)) < 0)
			return -1;
	}
	if (sync && fsync(w->fd) < 0)
		return errf(e, "fsync %s:", w->path);
	return 0;
}

int zstwclose(struct zstw *w, char sha256[65], int64_t *bytes, struct err *e)
{
	int rc = zstwflush(w, 1, 0, e);
	if (close(w->fd) < 0 && rc == 0)
		rc = errf(e, "close %s:", w->path);
	w->fd = -1;
	if (sha256)
		sha256done(w->md, sha256);
	if (bytes)
		*bytes = w->bytes;
	if (rc == 0 && w->tmp) {
		rc = tmpplace(w->tmp, w->path, e); /* removes it on failure */
		free(w->tmp);
		w->tmp = NULL;
	}
	zstwfree(w);
	return rc;
}

void zstwfree(struct zstw *w)
{
	if (!w)
		return;
	if (w->pool) { /* what the workers hold is dropped: a writer given up on */
		while (w->inflight > 0)
			poolwrite(w, 1, 1, NULL);
		w->pool->s[w->fill].in.len = 0;
		if (w->ownpool)
			poolfree(w->pool);
	}
	if (w->fd >= 0)
		close(w->fd);
	if (!w->kept)
		ZSTD_freeCCtx(w->z);
	EVP_MD_CTX_free(w->md);
	buffree(&w->out);
	free(w->sizes);
	if (w->tmp)
		unlink(w->tmp);
	free(w->tmp);
	free(w->path);
	free(w);
}

struct zstmem {
	ZSTD_CCtx *z;
};

struct zstmem *zstmemnew(int level)
{
	struct zstmem *m = xcalloc(1, sizeof *m);
	m->z = ZSTD_createCCtx();
	if (!m->z)
		abort(); /* out of memory, as xmalloc */
	ZSTD_CCtx_setParameter(m->z, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(m->z, ZSTD_c_checksumFlag, 0);
	return m;
}

int zstmemflush(struct zstmem *m, const void *p, size_t n, struct buf *out, struct err *e)
{
	return encode(m->z, p, n, ZSTD_e_flush, out, e);
}

int zstmemempty(struct buf *out, struct err *e)
{
	struct zstmem *m = zstmemnew(1);
	int rc = encode(m->z, "", 0, ZSTD_e_end, out, e);
	zstmemfree(m);
	return rc;
}

void zstmemfree(struct zstmem *m)
{
	if (!m)
		return;
	ZSTD_freeCCtx(m->z);
	free(m);
}

/* One decoder kept per thread between readers. A decoder is ~160 KB that malloc maps afresh and
 * the first use faults in: restoring a chain of 3,000 small layers spent 38% of its time making
 * them. The spare is freed when its thread ends. */
static pthread_key_t sparekey;
static pthread_once_t spareonce = PTHREAD_ONCE_INIT;
static int sparekeyed; /* 0: no key to be had, so no spare either */

static void sparefree(void *z)
{
	ZSTD_freeDCtx(z);
}

static void sparemake(void)
{
	sparekeyed = pthread_key_create(&sparekey, sparefree) == 0;
}

/* A decoder in its first state: this thread's spare, or a new one. */
static ZSTD_DCtx *dctxget(void)
{
	pthread_once(&spareonce, sparemake);
	ZSTD_DCtx *z = sparekeyed ? pthread_getspecific(sparekey) : NULL;
	if (!z)
		return ZSTD_createDCtx();
	pthread_setspecific(sparekey, NULL);
	ZSTD_DCtx_reset(z, ZSTD_reset_session_and_parameters);
	return z;
}

/* Give a decoder back: this thread's spare if it has none and holds no large window (a frame's
 * window stays allocated in it). */
static void dctxput(ZSTD_DCtx *z)
{
	pthread_once(&spareonce, sparemake);
	int keep = z && sparekeyed && ZSTD_sizeof_DCtx(z) <= (4u << 20) && !pthread_getspecific(sparekey);
	if (keep && pthread_setspecific(sparekey, z) == 0)
		return;
	ZSTD_freeDCtx(z);
}

int zstropen(struct zstr **rp, const char *path, int flags, struct err *e)
{
	*rp = NULL;
	/* A fifo or a device is no compressed file: refused at once rather than waited on. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (flags & ZSTR_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0)
		return errf(e, "%s:", path);
	return zstrfdopen(rp, fd, path, flags, e);
}

int zstrfdopen(struct zstr **rp, int fd, const char *path, int flags, struct err *e)
{
	*rp = NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return errc(e, ERR_VERIFY, "%s: not a regular file", path);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	struct zstr *r = xcalloc(1, sizeof *r);
	r->fd = fd;
	r->size = st.st_size;
	r->flags = flags;
	r->atframe = 1;
	r->path = xstrdup(path);
	r->z = dctxget();
	r->md = EVP_MD_CTX_new();
	r->in = xmalloc(ZSTD_DStreamInSize());
	if (!r->z || !r->md || !EVP_DigestInit_ex(r->md, EVP_sha256(), NULL) ||
	    ((flags & ZSTR_DIGESTED) && ZSTD_isError(ZSTD_DCtx_setParameter(r->z, ZSTD_d_forceIgnoreChecksum, 1)))) {
		zstrfree(r);
		return errf(e, "zstd: cannot set up a decompressor for %s", path);
	}
	*rp = r;
	return 0;
}

/* Read more of the file after the input not yet decoded (moved to the front of the buffer): 0 at
 * the end of the file, -1 on error. */
static ssize_t zstrfill(struct zstr *r, struct err *e)
{
	size_t left = r->inb.size - r->inb.pos;
	if (left && r->inb.pos)
		memmove(r->in, r->in + r->inb.pos, left);
	for (;;) {
		ssize_t got = read(r->fd, r->in + left, ZSTD_DStreamInSize() - left);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return errf(e, "read %s:", r->path);
		if (got == 0)
			r->eof = 1;
		EVP_DigestUpdate(r->md, r->in + left, got);
		r->bytes += got;
		r->inb = (ZSTD_inBuffer){r->in, left + (size_t)got, 0};
		return got;
	}
}

ssize_t zstread(struct zstr *r, void *p, size_t n, struct err *e)
{
	ZSTD_outBuffer out = {p, n, 0};
	if (!n)
		return 0;
	for (;;) {
		if (r->inb.pos == r->inb.size && !r->eof) {
			ssize_t got = read(r->fd, r->in, ZSTD_DStreamInSize());
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				return errf(e, "read %s:", r->path);
			if (got == 0) {
				r->eof = 1;
			} else {
				EVP_DigestUpdate(r->md, r->in, got);
				r->bytes += got;
				r->inb = (ZSTD_inBuffer){r->in, (size_t)got, 0};
			}
		}
		if (r->eof && r->bytes == 0)
			return r->flags & ZSTR_CUT ? 0 : errf(e, "%s: empty file, not a zstd stream", r->path);
		if (r->pick && r->atframe) {
			int64_t at = zstrat(r);
			while (r->ipick < r->npick && at >= r->pick[r->ipick][1])
				r->ipick++;
			if (r->ipick == r->npick || at < r->pick[r->ipick][0]) {
				/* not picked: hashed as it is read, never decoded */
				int64_t to = r->ipick < r->npick ? r->pick[r->ipick][0] : INT64_MAX;
				size_t skip = r->inb.size - r->inb.pos;
				if (!skip && r->eof) {
					if (to != INT64_MAX)
						return errc(e, ERR_VERIFY, "%s: truncated zstd stream: it ends before byte %lld", r->path,
						            (long long)to);
					r->last = 0;
					return 0;
				}
				if ((int64_t)skip > to - at)
					skip = (size_t)(to - at);
				while (r->imark < r->nmark && r->mark[r->imark] < at + (int64_t)skip)
					__atomic_store_n(&r->met[r->imark++], ZSTSKIPPED, __ATOMIC_RELEASE);
				r->inb.pos += skip;
				continue;
			}
		}
		if (r->imark < r->nmark && r->atframe) {
			int64_t at = zstrat(r);
			while (r->imark < r->nmark && r->mark[r->imark] <= at)
				__atomic_store_n(&r->met[r->imark], r->mark[r->imark] == at ? r->out : ZSTINSIDE, __ATOMIC_RELEASE),
				r->imark++;
		}
		if ((r->flags & ZSTR_NOSKIP) && r->atframe) {
			/* A frame's first 8 bytes (a skippable frame's magic and length), whole, before the
			 * decoder takes them. */
			while (r->inb.size - r->inb.pos < 8 && !r->eof)
				if (zstrfill(r, e) < 0)
					return -1;
			const unsigned char *m = (const unsigned char *)r->in + r->inb.pos;
			size_t have = r->inb.size - r->inb.pos;
			int64_t at = zstrat(r);
			if (have >= 4 && (m[0] & 0xf0) == 0x50 && m[1] == 0x2a && m[2] == 0x4d && m[3] == 0x18 &&
			    !(have >= 8 && get32(m) == TRAILMAGIC && get32(m + 4) <= ZSTTRAILMAX + 8 &&
			      at + 8 + (int64_t)get32(m + 4) == r->size))
				return errc(e, ERR_VERIFY, "%s: corrupt zstd data: a skippable frame at byte %lld", r->path,
				            (long long)at);
		}
		/* Called with no input left too: the decoder may still hold output. */
		size_t before = r->inb.pos;
		size_t ret = ZSTD_decompressStream(r->z, &out, &r->inb);
		if (ZSTD_isError(ret))
			return errf(e, "%s: corrupt zstd data: %s", r->path, ZSTD_getErrorName(ret));
		if (r->inb.pos != before || out.pos) {
			r->last = ret; /* a call that did nothing says nothing about the frame */
			r->atframe = ret == 0;
		}
		if (out.pos > 0) {
			r->out += (int64_t)out.pos;
			return (ssize_t)out.pos;
		}
		if (r->eof && r->inb.pos == r->inb.size) {
			if (r->last != 0 && !(r->flags & ZSTR_CUT))
				return errf(e, "%s: truncated zstd stream", r->path);
			r->truncated = r->last != 0;
			return 0;
		}
	}
}

int zstrtrailer(struct zstr *r, struct buf *out, int64_t *where, struct err *e)
{
	out->len = 0;
	*where = r->size;
	unsigned char t[8], h[8];
	if (r->size < 16)
		return 0;
	if (pread(r->fd, t, 8, r->size - 8) != 8)
		return errf(e, "read %s:", r->path);
	if (memcmp(t + 4, TRAILTAG, 4) != 0)
		return 0;
	uint32_t n = get32(t);
	int64_t at = r->size - 16 - (int64_t)n;
	if (n > ZSTTRAILMAX || at < 0 || pread(r->fd, h, 8, at) != 8 || get32(h) != TRAILMAGIC || get32(h + 4) != n + 8)
		return errc(e, ERR_VERIFY, "%s: its end names a trailer of %u bytes that is not there", r->path, n);
	bufgrow(out, n);
	if (pread(r->fd, out->data, n, at + 8) != (ssize_t)n)
		return errf(e, "read %s:", r->path);
	out->len = n;
	*where = at;
	return 1;
}

void zstrmarks(struct zstr *r, const int64_t *at, int64_t *met, size_t n)
{
	for (size_t i = 0; i < n; i++)
		__atomic_store_n(&met[i], ZSTNOTYET, __ATOMIC_RELEASE);
	r->mark = at;
	r->met = met;
	r->nmark = n;
	r->imark = 0;
}

void zstrpick(struct zstr *r, const int64_t (*at)[2], size_t n)
{
	/* A file with holes is decoded whole: what is passed over is still read, and holes read
	 * through cost time for no byte on disk (attack12). nightshift writes none. */
	off_t hole = lseek(r->fd, 0, SEEK_HOLE);
	lseek(r->fd, 0, SEEK_SET);
	if (hole >= 0 && hole < r->size)
		return;
	free(r->pick);
	r->pick = xmalloc((n ? n : 1) * sizeof *r->pick);
	memcpy(r->pick, at, n * sizeof *at);
	r->npick = n;
	r->ipick = 0;
}

int zstrtruncated(const struct zstr *r)
{
	return r->truncated;
}

void zstrdigest(struct zstr *r, char sha256[65], int64_t *bytes)
{
	if (sha256)
		sha256done(r->md, sha256);
	if (bytes)
		*bytes = r->bytes;
}

void zstrfree(struct zstr *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	dctxput(r->z);
	EVP_MD_CTX_free(r->md);
	free(r->pick);
	free(r->in);
	free(r->path);
	free(r);
}
