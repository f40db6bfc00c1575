/* httphead: one pass over the bytes, line by line, each line checked as soon as its CRLF came,
   so a malformed head is refused at its first bad line rather than after 16 KiB. */
#include <string.h>
#include "httphead.h"

/* A token character of RFC 9110 (method and header names). */
static int tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The request line (without CRLF). */
static int reqline(const char *p, size_t n, struct reqhead *h, const char **why)
{
	const char *sp1 = memchr(p, ' ', n);
	if (!sp1 || sp1 == p || (size_t)(sp1 - p) >= sizeof h->method) {
		*why = "not an HTTP request line (METHOD TARGET HTTP/1.x)";
		return -1;
	}
	for (const char *q = p; q < sp1; q++)
		if (!tchar((unsigned char)*q)) {
			*why = "the method is not a token";
			return -1;
		}
	const char *t = sp1 + 1, *sp2 = memchr(t, ' ', n - (size_t)(t - p));
	if (!sp2 || sp2 == t) {
		*why = "not an HTTP request line (METHOD TARGET HTTP/1.x)";
		return -1;
	}
	const char *v = sp2 + 1;
	size_t nv = n - (size_t)(v - p);
	if (nv != 8 || (memcmp(v, "HTTP/1.1", 8) != 0 && memcmp(v, "HTTP/1.0", 8) != 0)) {
		*why = "the request line does not end in HTTP/1.0 or HTTP/1.1";
		return -1;
	}
	memcpy(h->method, p, (size_t)(sp1 - p));
	h->method[sp1 - p] = 0;
	h->target = t;
	h->ntarget = (size_t)(sp2 - t);
	return 0;
}

/* A header line (without CRLF): NAME ":" value. */
static int headerline(const char *p, size_t n, const char **why)
{
	const char *colon = memchr(p, ':', n);
	if (p[0] == ' ' || p[0] == '\t') {
		*why = "a folded header line";
		return -1;
	}
	if (!colon || colon == p) {
		*why = "a header line without NAME:";
		return -1;
	}
	for (const char *q = p; q < colon; q++)
		if (!tchar((unsigned char)*q)) {
			*why = "a header name that is not a token";
			return -1;
		}
	return 0;
}

int httphead(const char *p, size_t n, struct reqhead *h, const char **why)
{
	size_t at = 0, lines = 0;
	memset(h, 0, sizeof *h);
	while (at < n) {
		size_t i = at;
		for (; i < n && p[i] != '\r' && p[i] != '\n'; i++) {
			unsigned char c = (unsigned char)p[i];
			if ((c < 0x20 && c != '\t') || c == 0x7f) {
				*why = c ? "a control byte in the request head" : "a NUL byte in the request head";
				return -1;
			}
		}
		if (i >= HEADMAX) {
			*why = "a request head over 16 KiB";
			return -1;
		}
		if (i == n || (p[i] == '\r' && i + 1 == n))
			break; /* the line is not whole yet */
		if (p[i] == '\n' || p[i + 1] != '\n') {
			*why = "a line that does not end in CRLF";
			return -1;
		}
		size_t len = i - at;
		if (lines == 0) {
			if (reqline(p, len, h, why) < 0)
				return -1;
			h->linelen = len + 2;
		} else if (len == 0) {
			h->headlen = i + 2;
			return 1;
		} else if (headerline(p + at, len, why) < 0) {
			return -1;
		}
		lines++;
		at = i + 2;
	}
	if (n >= HEADMAX) {
		*why = "a request head over 16 KiB";
		return -1;
	}
	return 0;
}

int httpheader(const char *p, const struct reqhead *h, size_t *at, const char **line, size_t *nline)
{
	if (*at < h->linelen)
		*at = h->linelen;
	const char *s = p + *at, *e = memchr(s, '\r', h->headlen - *at);
	if (!e || e == s)
		return 0;
	*line = s;
	*nline = (size_t)(e - s);
	*at += *nline + 2;
	return 1;
}
