/* httphead: the request head a step sends the egress proxy, checked on a buffer before anything
   acts on it: bounded in bytes (HEADMAX), one request line of three parts, header lines of a
   name and a value, CRLF line ends, no NUL or other control byte, no folded lines. */
#ifndef NS_HTTPHEAD_H
#define NS_HTTPHEAD_H

#include <stddef.h>

#define HEADMAX (16 * 1024)

struct reqhead {
	char method[16];       /* CONNECT, GET, ... */
	const char *target;    /* into the buffer, ntarget bytes */
	size_t ntarget;
	size_t linelen;        /* the request line, CRLF included */
	size_t headlen;        /* the whole head, the blank line included; bytes after it are the body's */
};

/* Look at the n bytes of p a client sent so far: 1 a whole valid head (h filled), 0 valid so far
   but incomplete (read more, while n < HEADMAX), -1 refused (why says what is wrong). */
int httphead(const char *p, size_t n, struct reqhead *h, const char **why);
/* The next header line of a checked head after offset *at (its bytes in *line, CRLF excluded):
   1, or 0 at the blank line that ends the head. */
int httpheader(const char *p, const struct reqhead *h, size_t *at, const char **line, size_t *nline);

#endif
