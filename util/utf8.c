/* utf8: text from untrusted bytes made valid UTF-8. */
#include <stdint.h>
#include <string.h>
#include "utf8.h"
#include "util.h"

/* The length of the well-formed UTF-8 sequence at p (1 to 4; no NUL, no overlong form, no
 * surrogate, nothing above U+10FFFF), or 0 when it is not one. */
static size_t seqlen(const unsigned char *p, const unsigned char *end)
{
	size_t len = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
	if (!len || (size_t)(end - p) < len || *p == 0)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (len == 2 && *p < 0xc2)
		return 0;
	if (len == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
		return 0;
	if (len == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90) || p[0] > 0xf4))
		return 0;
	return len;
}

/* Eight bytes of ASCII with no NUL among them? */
static int ascii8(const unsigned char *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	const uint64_t hi = 0x8080808080808080ull, ones = 0x0101010101010101ull;
	return !(w & hi) && !((w - ones) & ~w & hi);
}

char *utf8clean(const char *s, size_t n)
{
	struct buf b = {0};
	const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;
	bufgrow(&b, n);
	/* Valid runs are copied whole; only a bad byte costs a copy of its own (U+FFFD). */
	while (p < end) {
		while (end - p >= 8 && ascii8(p))
			p += 8;
		if (p == end)
			break;
		size_t len = seqlen(p, end);
		if (len) {
			p += len;
			continue;
		}
		bufadd(&b, run, (size_t)(p - run));
		bufputs(&b, "\xef\xbf\xbd");
		run = ++p;
	}
	bufadd(&b, run, (size_t)(p - run)); /* terminates even when nothing was added */
	return b.data;
}

int utf8valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		while (end - p >= 8 && ascii8(p))
			p += 8;
		if (p == end)
			break;
		size_t len = seqlen(p, end);
		if (!len)
			return 0;
		p += len;
	}
	return 1;
}

size_t utf8cut(const char *s, size_t n)
{
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}
