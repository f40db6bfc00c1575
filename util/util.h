/* util: errors, memory, buffers, small file helpers shared by every module. */
#ifndef NS_UTIL_H
#define NS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <sys/stat.h>

#define NS_VERSION "0.1.0"

/* An error filled by library code on the way up; only cmd/ prints it. */
/* What kind of failure an error is; cmd/ alone turns a kind into an exit code (cmd/cli.c). */
enum errkind {
	ERR_FAIL = 0, /* a runtime failure (the default) */
	ERR_INPUT,    /* usage, manifest or input error: nothing ran, nothing was spent */
	ERR_ABORT,    /* an approval rule with abort fired */
	ERR_VERIFY,   /* verification failed or a replay diverged */
	ERR_INTR,     /* interrupted (SIGINT/SIGTERM) */
};

struct err {
	enum errkind kind;
	char msg[1024];
};

/* Set err to the formatted message; a format ending in ':' appends strerror(errno). Returns -1. */
int errf(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same as errf, but also sets the kind of the error. Returns -1. */
int errc(struct err *e, enum errkind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prefix an existing error message with context ("ctx: old message"). Returns -1. */
int errctx(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Allocation that aborts on out-of-memory (the only fatal path in library code). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable byte buffer, always NUL-terminated. */
struct buf {
	char *data;
	size_t len, cap;
};
void bufgrow(struct buf *b, size_t extra);
void bufadd(struct buf *b, const void *p, size_t n);
void bufputs(struct buf *b, const char *s);
void bufputc(struct buf *b, char c);
void bufprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string, quoted and escaped. */
void bufjson(struct buf *b, const char *s);
void buffree(struct buf *b);

/* A growable NULL-terminated list of owned strings. */
struct strv {
	char **v;
	size_t n, cap;
};
void strvadd(struct strv *s, const char *str);
void strvfree(struct strv *s);

/* Append up to max bytes read from fd to out (NUL-terminated); *truncated (may be NULL) tells
 * whether more was left. 0, or -1 with errno. */
int readfd(int fd, size_t max, struct buf *out, int *truncated);
/* Read a whole file into *out (NUL-terminated, caller frees); on error *out is as it was. */
int readfile(const char *path, struct buf *out, struct err *e);
/* The same, refusing (ERR_INPUT) a file of more than max bytes. */
int readfilemax(const char *path, size_t max, struct buf *out, struct err *e);
/* Write all n bytes to fd, retrying short writes and EINTR; 0 or -1 with errno. */
int writeall(int fd, const void *p, size_t n);
/* Write s to an existing control file (/proc, cgroupfs) in one write(2), as such files want it:
 * 0, or -1 with errno. Allocates nothing, so a child may call it between fork and exec. */
int writectl(const char *path, const char *s);
/* Create a new file to become path, beside it under a fresh hidden name (DIR/.NAME.tmp.RANDOM) with
 * O_EXCL and O_NOFOLLOW, so never a file or link that was there; *tmp gets the name (caller frees).
 * The descriptor (mode 0644 less the umask), or -1. */
int tmpcreate(const char *path, char **tmp, struct err *e);
/* Open path for a command's output that the user named: a pipe or character device there
 * (/dev/null, /dev/stdout) as it is, *tmp NULL; else tmpcreate (renamed by tmpplace, which does
 * nothing for a NULL tmp). */
int outopen(const char *path, char **tmp, struct err *e);
/* Put tmp in path's place by rename: a link at path is itself replaced, never followed. On failure
 * tmp is removed. A NULL tmp: nothing to do. */
int tmpplace(const char *tmp, const char *path, struct err *e);
/* Write data to path atomically: tmpcreate, fsync, tmpplace, fsync of the folder. */
int writefile(const char *path, const void *data, size_t n, struct err *e);
/* The folder private temporary folders go in: $TMPDIR when it is an absolute path, else /tmp. */
const char *tmpbase(void);
/* A new private folder (mode 0700) tmpbase()/NAME.XXXXXX, in a new string; NULL with e saying
 * which folder could not take it, naming TMPDIR and the remedy when TMPDIR chose it. */
char *tmpfolder(const char *name, struct err *e);
/* mkdir -p. */
int mkdirs(const char *path, int mode, struct err *e);
/* Join a directory and a name into a new string. */
char *pathjoin(const char *dir, const char *name);
/* The real path of a workspace, mount source or image folder (a real path when the manifest was
   read), with *st what it names; NULL with e filled when a name on its way has become a symbolic
   link since (sandbox and job start ask it: one verdict). */
char *pathstillreal(const char *path, const char *what, struct stat *st, struct err *e);
/* Directory part of path as a new string ("." when none). */
char *dirname_dup(const char *path);

/* SHA-256 of data as 64 lowercase hex characters plus NUL. */
void sha256hex(const void *data, size_t n, char out[65]);
struct evp_md_ctx_st;
/* Finish the SHA-256 of c (OpenSSL's EVP_MD_CTX) and write it in hex, NUL-terminated. */
void sha256done(struct evp_md_ctx_st *c, char out[65]);
/* SHA-256 of texts that mostly grow at their end (a conversation's requests): the hash state is
 * kept every SHA256STEP bytes of the last text, and the next is hashed again only from the last
 * state before the two differ. */
#define SHA256STEP 16384
struct sha256grow {
	char *text;  /* the last text (a copy) */
	size_t len, cap;
	void **at;   /* EVP_MD_CTX after each whole SHA256STEP bytes of it */
	size_t nat;
};
/* sha256hex(text, n, out), from what g kept of the last text; g keeps this one. */
void sha256growhex(struct sha256grow *g, const char *text, size_t n, char out[65]);
void sha256growfree(struct sha256grow *g);
/* SHA-256 of a file's contents. */
int sha256file(const char *path, char out[65], struct err *e);
/* The same of what is left to read on fd (not closed). */
int sha256fd(int fd, char out[65], struct err *e);
/* One line of a SHA256SUMS file, as GNU sha256sum writes it: "HEX  NAME\n", or, for a name
 * holding a backslash, a newline or a carriage return, "\HEX  NAME\n" with those escaped as
 * \\, \n and \r (so `sha256sum -c` reads every name back). */
void sumsput(struct buf *b, const char *hex, const char *name);
/* One line of a SHA256SUMS file (len bytes, no newline) as sumsput writes it ("*" for binary
 * mode taken too): the digest, lowercase, into hex and the name, unescaped, into *name (freed by
 * the caller); -1 for a malformed line. */
int sumsget(const char *line, size_t len, char hex[65], char **name);

/* Milliseconds of the monotonic clock. */
int64_t nowms(void);
/* The CPUs online (at least 1), read once: sysconf reads /sys on every call. */
int ncpus(void);
/* Current UTC time as RFC 3339 with milliseconds, e.g. 2026-11-22T02:00:00.123Z. */
void utcnow(char out[32]);

/* Parse a duration ("120s", "10m", "1h", "500ms", bare number = seconds) into ms. */
int parseduration(const char *s, int64_t *ms);
/* Parse a size ("1G", "512M", "64k", bare number = bytes) into bytes. */
int parsesize(const char *s, int64_t *bytes);

/* The choice (NULL-terminated list) closest to word when it is a plausible typo, else NULL. */
const char *didyoumean(const char *word, const char *const *choices);

#endif
