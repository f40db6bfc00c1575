/* fuzz_httphead: the egress proxy's request-head check (net/httphead.c), fed whole and byte by
 * byte as a client could send it.
 * Invariants: a head is never accepted past HEADMAX; an accepted head holds no NUL or control
 * byte, its request line and headers lie inside it and end in CRLF, the method fits; feeding
 * the same bytes in pieces gives the same verdict at the same length (incomplete, then once). */
#include "fuzz.h"
#include "../../net/httphead.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	struct reqhead h;
	const char *why = NULL;
	int rc = httphead(p, size, &h, &why);
	fuzzassert(rc == 1 || rc == 0 || rc == -1);
	if (rc < 0)
		fuzzassert(why && *why);
	if (rc == 0)
		fuzzassert(size < HEADMAX);
	if (rc == 1) {
		fuzzassert(h.headlen <= size && h.headlen <= HEADMAX && h.headlen >= 4);
		fuzzassert(memcmp(p + h.headlen - 4, "\r\n\r\n", 4) == 0 || h.headlen == h.linelen + 2);
		fuzzassert(h.linelen >= 2 && h.linelen <= h.headlen && memcmp(p + h.linelen - 2, "\r\n", 2) == 0);
		fuzzassert(strlen(h.method) > 0 && strlen(h.method) < sizeof h.method);
		fuzzassert(h.target > p && h.target + h.ntarget < p + h.linelen && h.ntarget > 0);
		for (size_t i = 0; i < h.headlen; i++) {
			unsigned char c = (unsigned char)p[i];
			fuzzassert(c >= 0x20 || c == '\t' || c == '\r' || c == '\n');
			fuzzassert(c != 0x7f);
		}
		size_t at = 0, ln;
		const char *l;
		int lines = 0;
		while (httpheader(p, &h, &at, &l, &ln)) {
			fuzzassert(l >= p + h.linelen && l + ln + 2 <= p + h.headlen && ln > 0);
			fuzzassert(memchr(l, ':', ln) != NULL);
			fuzzassert(++lines < HEADMAX);
		}
	}
	/* the same bytes as they could come, one more at a time: the verdict at each length agrees */
	if (size <= 512) {
		int seen = 0;
		for (size_t n = 0; n <= size; n++) {
			struct reqhead g;
			const char *w;
			int r = httphead(p, n, &g, &w);
			if (r != 0) {
				seen = 1;
				if (r == 1)
					fuzzassert(g.headlen <= n);
				break;
			}
		}
		if (rc != 0)
			fuzzassert(seen);
	}
	return 0;
}
