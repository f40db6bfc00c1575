/* utf8: text from untrusted bytes made valid UTF-8. */
#include "utf8.h"
#include "util.h"

char *utf8clean(const char *s, size_t n)
{
	struct buf b = {0};
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	bufgrow(&b, n);
	while (p < end) {
		size_t len = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
		int good = len && p + len <= end && *p != 0;
		for (size_t i = 1; good && i < len; i++)
			good = (p[i] & 0xc0) == 0x80;
		if (good && len == 2 && *p < 0xc2)
			good = 0;
		if (good && len == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
			good = 0;
		if (good && len == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90) || p[0] > 0xf4))
			good = 0;
		if (good) {
			bufadd(&b, p, len);
			p += len;
		} else {
			bufputs(&b, "\xef\xbf\xbd");
			p++;
		}
	}
	bufadd(&b, "", 0); /* terminate even when nothing was added */
	return b.data;
}
