/* term: the one sanitiser for text printed to a terminal or into a GitHub Actions log. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "term.h"
#include "util.h"

static int termactions(void)
{
	const char *v = getenv("GITHUB_ACTIONS");
	return v && strcmp(v, "true") == 0;
}

int termactionslog(int fd)
{
	struct stat st;
	return termactions() && !(fstat(fd, &st) == 0 && S_ISREG(st.st_mode));
}

int termactionsout(int fd)
{
	struct stat a, b;
	if (!termactionslog(fd) || fstat(fd, &a) != 0)
		return 0;
	for (int std = 1; std <= 2; std++)
		if (fstat(std, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return 1;
	return 0;
}

/* Decode one UTF-8 character at p (n bytes left): its length, or 0 when the bytes are not UTF-8
 * (overlong, surrogate, past U+10FFFF, cut). */
static size_t u8(const unsigned char *p, size_t n, uint32_t *c)
{
	if (p[0] < 0x80) {
		*c = p[0];
		return 1;
	}
	size_t len = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
	if (!len || len > n)
		return 0;
	uint32_t v = p[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (len == 4 && (v < 0x10000 || v > 0x10ffff)))
		return 0;
	*c = v;
	return len;
}

/* Bidirectional controls: they reorder what a reader sees. */
static int bidi(uint32_t c)
{
	return c == 0x061c || c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/* Bytes of the whitespace character at p as .NET's char.IsWhiteSpace sees it (what the Actions
 * runner's TrimStart removes before it looks for "::"), 0 when p is not one. */
static size_t wslen(const unsigned char *p, size_t n)
{
	uint32_t c;
	size_t len = u8(p, n, &c);
	if (!len)
		return 0;
	if ((c >= 9 && c <= 13) || c == ' ' || c == 0x85 || c == 0xa0 || c == 0x1680 || c == 0x180e ||
	    (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000)
		return len;
	return 0;
}

char *termclean(const char *s, int flags)
{
	struct buf b = {0};
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	int actions = (flags & TERM_ACTIONS) || (!(flags & TERM_NOACTIONS) && termactions());
	int lead = 1; /* in the line's leading whitespace */
	bufputs(&b, "");
	for (size_t i = 0; i < n;) {
		uint32_t c = 0;
		size_t len = u8(p + i, n - i, &c);
		if (actions && lead) {
			size_t w = wslen(p + i, n - i);
			if (!w && p[i] == ':' && i + 1 < n && p[i + 1] == ':') {
				bufputs(&b, "%3A:");
				i += 2;
				lead = 0;
				continue;
			}
			if (!w)
				lead = 0;
		}
		if (actions && p[i] == '#' && i + 2 < n && p[i + 1] == '#' && p[i + 2] == '[') {
			bufputs(&b, "##%5B");
			i += 3;
			continue;
		}
		if (!len)
			bufprintf(&b, "\\x%02x", p[i++]);
		else if (c == '\n' || c == '\t') {
			bufputc(&b, flags & TERM_ONELINE ? ' ' : (char)c);
			if (c == '\n') /* a tab keeps the line in its leading whitespace */
				lead = 1;
			i++;
		} else if (c < 0x20 || c == 0x7f)
			bufprintf(&b, "\\x%02x", p[i++]);
		else if ((c >= 0x80 && c <= 0x9f) || bidi(c)) {
			bufprintf(&b, "\\u%04x", (unsigned)c);
			i += len;
		} else {
			bufadd(&b, p + i, len);
			i += len;
		}
	}
	return b.data;
}

char *termjson(const char *json)
{
	struct buf b = {0};
	const unsigned char *p = (const unsigned char *)(json ? json : "");
	size_t n = strlen((const char *)p);
	bufgrow(&b, n + 1);
	bufputs(&b, "");
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && p[j] < 0x7f && p[j] != '#') /* ASCII passes as it is, a run at a time */
			j++;
		if (j > i) {
			bufadd(&b, p + i, j - i);
			i = j;
			continue;
		}
		uint32_t c = 0;
		size_t len = u8(p + i, n - i, &c);
		if (!len) {
			bufputs(&b, "\\ufffd"); /* not UTF-8: what cleaned text shows of it */
			i++;
		} else if (c == 0x7f || (c >= 0x80 && c <= 0x9f) || bidi(c) || c == 0x2028 || c == 0x2029) {
			bufprintf(&b, "\\u%04x", (unsigned)c);
			i += len;
		} else if (c == '#' && i + 2 < n && p[i + 1] == '#' && p[i + 2] == '[') {
			bufputs(&b, "##\\u005b"); /* the same JSON, no Actions command */
			i += 3;
		} else {
			bufadd(&b, p + i, len);
			i += len;
		}
	}
	return b.data;
}

void termjsonline(FILE *f, const char *json)
{
	char *safe = termjson(json);
	fputs(safe, f);
	fputc('\n', f);
	free(safe);
}

void termprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	char *text;
	va_start(ap, fmt);
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	char *safe = termclean(text, 0);
	fputs(safe, f);
	free(safe);
	free(text);
}
