/* zst: zstd streams to and from files, with the SHA-256 of the compressed bytes as they pass. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
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
};

static void hexdigest(EVP_MD_CTX *md, char out[65])
{
	static const char x[] = "0123456789abcdef";
	unsigned char d[32];
	unsigned int n = 0;
	EVP_DigestFinal_ex(md, d, &n);
	for (int i = 0; i < 32; i++) {
		out[2 * i] = x[d[i] >> 4];
		out[2 * i + 1] = x[d[i] & 15];
	}
	out[64] = 0;
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

struct zstc {
	ZSTD_CCtx *z;
};

struct zstc *zstcnew(void)
{
	return xcalloc(1, sizeof(struct zstc));
}

void zstcfree(struct zstc *c)
{
	if (c)
		ZSTD_freeCCtx(c->z);
	free(c);
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
	if (c && !c->z)
		c->z = ZSTD_createCCtx();
	if (c && c->z) /* the parameters set afresh below; its workers stay */
		ZSTD_CCtx_reset(c->z, ZSTD_reset_session_and_parameters);
	w->z = c ? c->z : ZSTD_createCCtx();
	w->kept = c != NULL;
	w->md = EVP_MD_CTX_new();
	if (!w->z || !w->md || !EVP_DigestInit_ex(w->md, EVP_sha256(), NULL)) {
		zstwfree(w);
		return errf(e, "zstd: cannot set up a compressor for %s", path);
	}
	ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(w->z, ZSTD_c_checksumFlag, 1);
	int t = zstthreads(threads);
	if (t > 0 && ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_nbWorkers, t)))
		t = 0, ZSTD_CCtx_setParameter(w->z, ZSTD_c_nbWorkers, 0);
	/* Workers take jobs of 4 x the window by default (8 MiB at level 3, each held twice or more).
	 * 3 MiB: a level-3 layer of 360 MB at 2 workers peaks at 56 MB, not 60-67 MB as at 4 MiB, for
	 * 0.6% more bytes (2 MiB: 47 MB for 3.2%). */
	if (t > 0 && level >= 3) /* where the window reaches 2 MiB */
		ZSTD_CCtx_setParameter(w->z, ZSTD_c_jobSize, 3 << 20);
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

/* Write the output buffer to the file, hashing it. */
static int drain(struct zstw *w, struct err *e)
{
	size_t off = 0;
	EVP_DigestUpdate(w->md, w->out.data, w->out.len);
	while (off < w->out.len) {
		ssize_t n = write(w->fd, w->out.data + off, w->out.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errf(e, "write %s:", w->path);
		off += n;
	}
	w->bytes += w->out.len;
	w->out.len = 0;
	return 0;
}

/* Compress with a directive; write out once a block's worth is held, and always after flush or end. */
static int push(struct zstw *w, const void *p, size_t n, ZSTD_EndDirective dir, struct err *e)
{
	if (encode(w->z, p, n, dir, &w->out, e) < 0)
		return errctx(e, "%s", w->path);
	return dir != ZSTD_e_continue || w->out.len >= ZSTD_CStreamOutSize() ? drain(w, e) : 0;
}

int zstwrite(struct zstw *w, const void *p, size_t n, struct err *e)
{
	return n ? push(w, p, n, ZSTD_e_continue, e) : 0;
}

int zstwflush(struct zstw *w, int endframe, int sync, struct err *e)
{
	if (push(w, "", 0, endframe ? ZSTD_e_end : ZSTD_e_flush, e) < 0)
		return -1;
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
		hexdigest(w->md, sha256);
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
	if (w->fd >= 0)
		close(w->fd);
	if (!w->kept)
		ZSTD_freeCCtx(w->z);
	EVP_MD_CTX_free(w->md);
	buffree(&w->out);
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
	r->flags = flags;
	r->atframe = 1;
	r->path = xstrdup(path);
	r->z = dctxget();
	r->md = EVP_MD_CTX_new();
	r->in = xmalloc(ZSTD_DStreamInSize());
	if (!r->z || !r->md || !EVP_DigestInit_ex(r->md, EVP_sha256(), NULL)) {
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
		if ((r->flags & ZSTR_NOSKIP) && r->atframe) {
			/* A frame's first 4 bytes, whole, before the decoder takes them. */
			while (r->inb.size - r->inb.pos < 4 && !r->eof)
				if (zstrfill(r, e) < 0)
					return -1;
			const unsigned char *m = (const unsigned char *)r->in + r->inb.pos;
			if (r->inb.size - r->inb.pos >= 4 && (m[0] & 0xf0) == 0x50 && m[1] == 0x2a && m[2] == 0x4d && m[3] == 0x18)
				return errc(e, ERR_VERIFY, "%s: corrupt zstd data: a skippable frame at byte %lld", r->path,
				            (long long)(r->bytes - (int64_t)(r->inb.size - r->inb.pos)));
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
		if (out.pos > 0)
			return (ssize_t)out.pos;
		if (r->eof && r->inb.pos == r->inb.size) {
			if (r->last != 0 && !(r->flags & ZSTR_CUT))
				return errf(e, "%s: truncated zstd stream", r->path);
			r->truncated = r->last != 0;
			return 0;
		}
	}
}

int zstrtruncated(const struct zstr *r)
{
	return r->truncated;
}

void zstrdigest(struct zstr *r, char sha256[65], int64_t *bytes)
{
	if (sha256)
		hexdigest(r->md, sha256);
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
	free(r->in);
	free(r->path);
	free(r);
}
