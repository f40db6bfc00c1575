/* util: errors, memory, buffers, small file helpers. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <openssl/evp.h>
#include "util.h"

static int verr(struct err *e, enum errkind kind, const char *fmt, va_list ap)
{
	int saved = errno;
	if (!e)
		return -1;
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	size_t n = strlen(e->msg);
	if (n && e->msg[n - 1] == ':')
		snprintf(e->msg + n, sizeof e->msg - n, " %s", strerror(saved));
	e->kind = kind;
	return -1;
}

int errf(struct err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verr(e, ERR_FAIL, fmt, ap);
	va_end(ap);
	return -1;
}

int errc(struct err *e, enum errkind kind, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verr(e, kind, fmt, ap);
	va_end(ap);
	return -1;
}

int errctx(struct err *e, const char *fmt, ...)
{
	char old[sizeof e->msg], pre[512];
	va_list ap;
	if (!e)
		return -1;
	memcpy(old, e->msg, sizeof old);
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	if (snprintf(e->msg, sizeof e->msg, "%s: %s", pre, old) >= (int)sizeof e->msg)
		memcpy(e->msg + sizeof e->msg - 4, "...", 4); /* cut: say so */
	return -1;
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		abort();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

char *xstrdup(const char *s)
{
	return s ? xstrndup(s, strlen(s)) : NULL;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

void bufgrow(struct buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	if (extra > SIZE_MAX / 4 - b->len) /* a length from hostile bytes: never a doubling that wraps */
		abort();
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void bufadd(struct buf *b, const void *p, size_t n)
{
	bufgrow(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

void bufputs(struct buf *b, const char *s)
{
	bufadd(b, s, strlen(s));
}

void bufputc(struct buf *b, char c)
{
	bufadd(b, &c, 1);
}

void bufprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	bufgrow(b, n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

void bufjson(struct buf *b, const char *s)
{
	static const char hexd[] = "0123456789abcdef";
	bufputc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			bufputc(b, '\\');
			bufputc(b, (char)*p);
		} else if (*p == '\n') {
			bufputs(b, "\\n");
		} else if (*p < 0x20) {
			char esc[7] = {'\\', 'u', '0', '0', hexd[*p >> 4], hexd[*p & 15], 0};
			bufputs(b, esc);
		} else {
			bufputc(b, (char)*p);
		}
	}
	bufputc(b, '"');
}

void buffree(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* Add str itself (taken: freed with s). */
static void strvaddown(struct strv *s, char *str)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

void strvadd(struct strv *s, const char *str)
{
	strvaddown(s, xstrdup(str));
}

void strvfree(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

int readfd(int fd, size_t max, struct buf *out, int *truncated)
{
	size_t start = out->len;
	if (truncated)
		*truncated = 0;
	bufgrow(out, 0);
	for (;;) {
		size_t want = max - (out->len - start);
		if (want == 0) {
			char c;
			if (truncated)
				*truncated = read(fd, &c, 1) > 0;
			break;
		}
		bufgrow(out, want < 65536 ? want : 65536);
		ssize_t n = read(fd, out->data + out->len, want < 65536 ? want : 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		out->len += n;
	}
	out->data[out->len] = 0;
	return 0;
}

int readfile(const char *path, struct buf *out, struct err *e)
{
	return readfilemax(path, SIZE_MAX, out, e);
}

int readfilemax(const char *path, size_t max, struct buf *out, struct err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errc(e, ERR_INPUT, "%s:", path);
	int had = out->data != NULL, trunc = 0;
	size_t len = out->len;
	int rc = readfd(fd, max, out, &trunc) < 0 ? errf(e, "read %s:", path) : 0;
	if (rc == 0 && trunc)
		rc = errc(e, ERR_INPUT, "%s: larger than %zu bytes", path, max);
	close(fd);
	if (rc < 0 && had) {
		out->len = len; /* as it was */
		out->data[len] = 0;
	} else if (rc < 0) {
		buffree(out); /* nothing for the caller to free */
	}
	return rc;
}

int writeall(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		c += w;
		n -= w;
	}
	return 0;
}

int writectl(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, s, strlen(s));
	int saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

int tmpcreate(const char *path, char **tmp, struct err *e)
{
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path + 1) : 0;
	int fd = -1;
	*tmp = NULL;
	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		unsigned long r;
		if (getrandom(&r, sizeof r, 0) != sizeof r)
			r = (unsigned long)nowms() * 2654435761u + (unsigned long)getpid() * 40503u + (unsigned long)tries;
		free(*tmp);
		*tmp = xasprintf("%.*s.%s.tmp.%012lx", dlen, path, path + dlen, r & 0xffffffffffffUL);
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		errf(e, "create %s:", *tmp);
		free(*tmp);
		*tmp = NULL;
	}
	return fd;
}

int outopen(const char *path, char **tmp, struct err *e)
{
	struct stat st;
	*tmp = NULL;
	if (stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
		int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			errf(e, "open %s:", path);
		return fd;
	}
	return tmpcreate(path, tmp, e);
}

int tmpplace(const char *tmp, const char *path, struct err *e)
{
	if (!tmp || rename(tmp, path) == 0)
		return 0;
	errf(e, "rename %s:", path);
	unlink(tmp);
	return -1;
}

int writefile(const char *path, const void *data, size_t n, struct err *e)
{
	char *tmp;
	int fd = tmpcreate(path, &tmp, e);
	if (fd < 0)
		return -1;
	if (writeall(fd, data, n) < 0 || fsync(fd) < 0) {
		errf(e, "write %s:", path);
		close(fd);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	close(fd);
	int rc = tmpplace(tmp, path, e);
	free(tmp);
	if (rc < 0)
		return -1;
	/* The rename itself survives a power cut only once its folder is synced. */
	char *dir = dirname_dup(path);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
	return 0;
}

const char *tmpbase(void)
{
	const char *t = getenv("TMPDIR");
	return t && t[0] == '/' ? t : "/tmp";
}

char *tmpfolder(const char *name, struct err *e)
{
	const char *base = tmpbase();
	char *t = xasprintf("%s/%s.XXXXXX", base, name);
	if (mkdtemp(t))
		return t;
	int saved = errno;
	free(t);
	errno = saved;
	if (strcmp(base, "/tmp") != 0)
		errc(e, ERR_INPUT, "cannot make a private temporary folder in TMPDIR=%s: %s (set TMPDIR to a folder you "
		                   "can write, or unset it for /tmp)", base, strerror(saved));
	else
		errc(e, ERR_INPUT, "cannot make a private temporary folder in /tmp: %s (set TMPDIR to a folder you can "
		                   "write)", strerror(saved));
	return NULL;
}

int mkdirs(const char *path, int mode, struct err *e)
{
	char p[PATH_MAX]; /* no malloc: the sandbox's init calls this after fork */
	if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) {
		errno = ENAMETOOLONG;
		return errf(e, "mkdir %s:", path);
	}
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return errf(e, "mkdir %s:", p);
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return errf(e, "mkdir %s:", p);
	return 0;
}

char *pathjoin(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	if (n && dir[n - 1] == '/')
		return xasprintf("%s%s", dir, name);
	return xasprintf("%s/%s", dir, name);
}

/* The real path of a workspace, mount source or image folder, which the manifest gave as a real
   path, with *st what it names; NULL (e filled) when it is no longer its own real path: a name on
   its way became a symbolic link after the manifest was read, as a step can make one in a workspace
   (a source there, or below another job's). A link followed here, or by the sandbox's bind, would
   show the step whatever the link names on the host. */
char *pathstillreal(const char *path, const char *what, struct stat *st, struct err *e)
{
	char *real = realpath(path, NULL);
	if (!real || stat(real, st) < 0) {
		errc(e, ERR_INPUT, "sandbox %s %s: %s", what, path, strerror(errno));
		free(real);
		return NULL;
	}
	if (strcmp(real, path) != 0) {
		errc(e, ERR_INPUT, "sandbox %s %s now leads to %s: a name on its way became a symbolic link after the "
		                   "manifest was read (a step may have made it); refused", what, path, real);
		free(real);
		return NULL;
	}
	return real;
}

char *dirname_dup(const char *path)
{
	const char *s = strrchr(path, '/');
	if (!s)
		return xstrdup(".");
	if (s == path)
		return xstrdup("/");
	return xstrndup(path, s - path);
}

static void hex(const unsigned char *d, size_t n, char *out)
{
	static const char x[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = x[d[i] >> 4];
		out[2 * i + 1] = x[d[i] & 15];
	}
	out[2 * n] = 0;
}

/* The fetched SHA-256 and a context per thread: OpenSSL 3 looks the algorithm up on every
 * EVP_sha256() init otherwise, which dominates hashing a short event line. A thread's context
 * is freed when it exits (a job's thread, say). */
static EVP_MD *sha256md;
static pthread_key_t sha256key;

static void sha256ctxfree(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static void sha256fetch(void)
{
	sha256md = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (pthread_key_create(&sha256key, sha256ctxfree) != 0)
		abort();
}

static EVP_MD_CTX *sha256ctx(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, sha256fetch);
	const EVP_MD *md = sha256md ? sha256md : EVP_sha256();
	EVP_MD_CTX *ctx = pthread_getspecific(sha256key);
	if (!ctx && (!(ctx = EVP_MD_CTX_new()) || pthread_setspecific(sha256key, ctx) != 0))
		abort();
	EVP_DigestInit_ex(ctx, md, NULL);
	return ctx;
}

void sha256done(EVP_MD_CTX *c, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;
	EVP_DigestFinal_ex(c, md, &len);
	hex(md, 32, out);
}

void sha256hex(const void *data, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;
	EVP_MD_CTX *c = sha256ctx();
	EVP_DigestUpdate(c, data, n);
	EVP_DigestFinal_ex(c, md, &len);
	hex(md, 32, out);
}

void sha256growhex(struct sha256grow *g, const char *text, size_t n, char out[65])
{
	size_t same = 0, lim = n < g->len ? n : g->len;
	while (same < lim) {
		size_t k = lim - same < SHA256STEP ? lim - same : SHA256STEP;
		if (memcmp(text + same, g->text + same, k) != 0)
			break;
		same += k;
	}
	size_t use = same / SHA256STEP; /* kept states of whole steps both texts share */
	while (g->nat > use)
		EVP_MD_CTX_free(g->at[--g->nat]);
	EVP_MD_CTX *c = sha256ctx();
	if (use && !EVP_MD_CTX_copy_ex(c, g->at[use - 1]))
		abort();
	g->at = xrealloc(g->at, (n / SHA256STEP + 1) * sizeof *g->at);
	for (size_t off = use * SHA256STEP; off < n;) {
		size_t k = n - off < SHA256STEP ? n - off : SHA256STEP;
		EVP_DigestUpdate(c, text + off, k);
		off += k;
		if (k == SHA256STEP) {
			EVP_MD_CTX *keep = EVP_MD_CTX_new();
			if (!keep || !EVP_MD_CTX_copy_ex(keep, c))
				abort();
			g->at[g->nat++] = keep;
		}
	}
	unsigned char md[32];
	unsigned int len = 0;
	EVP_DigestFinal_ex(c, md, &len);
	hex(md, 32, out);
	if (n + 1 > g->cap) {
		free(g->text); /* its bytes are not needed: copied afresh below */
		g->cap = n + n / 4 + 1;
		g->text = xmalloc(g->cap);
	}
	memcpy(g->text, text, n);
	g->len = n;
}

void sha256growfree(struct sha256grow *g)
{
	while (g->nat)
		EVP_MD_CTX_free(g->at[--g->nat]);
	free(g->at);
	free(g->text);
	memset(g, 0, sizeof *g);
}

int sha256file(const char *path, char out[65], struct err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errf(e, "%s:", path);
	int rc = sha256fd(fd, out, e) < 0 ? errf(e, "read %s:", path) : 0;
	close(fd);
	return rc;
}

int sha256fd(int fd, char out[65], struct err *e)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	static __thread char block[1 << 16];
	ssize_t n;
	while ((n = read(fd, block, sizeof block)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			EVP_DigestUpdate(c, block, n);
	int rc = n < 0 ? errf(e, "read:") : 0;
	unsigned char md[32];
	unsigned int len = 0;
	EVP_DigestFinal_ex(c, md, &len);
	EVP_MD_CTX_free(c);
	hex(md, 32, out);
	return rc;
}

int64_t nowms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void utcnow(char out[32])
{
	struct timespec t;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &t);
	gmtime_r(&t.tv_sec, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03ldZ", t.tv_nsec / 1000000);
}

/* A number followed by one unit from the table; returns 0 on success. */
static int parseunit(const char *s, int64_t *out, const char *const *units, const int64_t *mult)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return -1;
	for (int i = 0; units[i]; i++) {
		if (strcmp(end, units[i]) == 0) {
			double r = v * (double)mult[i];
			if (r > 9.0e18)
				return -1;
			*out = (int64_t)r;
			return 0;
		}
	}
	return -1;
}

int parseduration(const char *s, int64_t *ms)
{
	static const char *const u[] = {"", "ms", "s", "m", "h", NULL};
	static const int64_t m[] = {1000, 1, 1000, 60000, 3600000};
	return parseunit(s, ms, u, m);
}

int parsesize(const char *s, int64_t *bytes)
{
	static const char *const u[] = {"", "k", "K", "M", "G", "T", "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", NULL};
	static const int64_t K = 1024;
	static const int64_t m[] = {1, K, K, K * K, K * K * K, K * K * K * K, K, K * K, K * K * K, K * K * K * K, K, K * K, K * K * K};
	return parseunit(s, bytes, u, m);
}

static int editdist(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 64 || m > 64)
		return 99;
	int row[65];
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		int diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			int up = row[j];
			int best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[m];
}

const char *didyoumean(const char *word, const char *const *choices)
{
	const char *best = NULL;
	int bestd = 99;
	for (size_t i = 0; choices[i]; i++) {
		int d = editdist(word, choices[i]);
		if (d < bestd) {
			bestd = d;
			best = choices[i];
		}
	}
	size_t len = strlen(word);
	int limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
	return bestd <= limit ? best : NULL;
}

static long cpus = 1;

static void cpusread(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpus = n < 1 ? 1 : n;
}

int ncpus(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, cpusread);
	return cpus > INT32_MAX ? INT32_MAX : (int)cpus;
}

void sumsput(struct buf *b, const char *hex, const char *name)
{
	int esc = strpbrk(name, "\\\n\r") != NULL;
	bufprintf(b, "%s%s  ", esc ? "\\" : "", hex);
	for (const char *c = name; *c; c++) {
		if (esc && (*c == '\\' || *c == '\n' || *c == '\r'))
			bufputs(b, *c == '\\' ? "\\\\" : *c == '\n' ? "\\n" : "\\r");
		else
			bufputc(b, *c);
	}
	bufputc(b, '\n');
}

int sumsget(const char *line, size_t len, char hex[65], char **name)
{
	int esc = len > 0 && line[0] == '\\';
	line += esc;
	len -= esc;
	if (len < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*'))
		return -1;
	for (int i = 0; i < 64; i++) {
		char c = line[i] >= 'A' && line[i] <= 'F' ? (char)(line[i] + 32) : line[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -1;
		hex[i] = c;
	}
	hex[64] = 0;
	struct buf n = {0};
	for (size_t i = 66; i < len; i++) {
		char c = line[i];
		if (!c) {
			buffree(&n);
			return -1;
		}
		if (esc && c == '\\') {
			c = ++i < len ? line[i] : 0;
			if (c != '\\' && c != 'n' && c != 'r') {
				buffree(&n);
				return -1;
			}
			c = c == 'n' ? '\n' : c == 'r' ? '\r' : c;
		}
		bufputc(&n, c);
	}
	bufputc(&n, 0);
	*name = n.data;
	return 0;
}
