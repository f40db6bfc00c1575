/* fuzz_linediff: the line diff of two hostile texts, applied back.
 * Input: two bytes (the context lines, the most edits: their low bits), then A \0 B.
 * Invariants: equal texts give nothing; a diff within the edits, applied to A hunk by hunk (each
 * context and removed line checked against A), gives B exactly; over the edits, nothing is
 * appended. */
#include "fuzz.h"
#include "../../util/linediff.h"

/* The next line of s[*at..n) with its newline; its length, 0 at the end. */
static size_t nextline(const char *s, size_t n, size_t *at, const char **line)
{
	if (*at >= n)
		return 0;
	const char *nl = memchr(s + *at, '\n', n - *at);
	size_t len = nl ? (size_t)(nl - (s + *at)) + 1 : n - *at;
	*line = s + *at;
	*at += len;
	return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	int context = data[0] % 8, maxedits = data[1] % 64;
	const char *a = (const char *)data + 2, *z = memchr(a, 0, size - 2);
	size_t na = z ? (size_t)(z - a) : size - 2;
	const char *b = z ? z + 1 : a + na;
	size_t nb = z ? size - 2 - na - 1 : 0;
	struct buf out = {0};
	int rc = linediff(a, na, b, nb, context, maxedits, &out);
	fuzzassert(rc == 0 || rc == 1);
	if (rc == 1 || (na == nb && !memcmp(a, b, na))) {
		fuzzassert(out.len == 0);
		buffree(&out);
		return 0;
	}
	fuzzassert(out.len > 0);
	/* apply it */
	struct buf got = {0};
	size_t ia = 0, io = 0, aline = 0; /* read position in a, in out; lines of a consumed */
	const char *d = out.data, *l;
	size_t len;
	while ((len = nextline(d, out.len, &io, &l))) {
		unsigned long a0, an, b0, bn;
		fuzzassert(sscanf(l, "@@ -%lu,%lu +%lu,%lu @@", &a0, &an, &b0, &bn) == 4);
		size_t first = an ? a0 - 1 : a0; /* lines of a before the hunk */
		fuzzassert(first >= aline);
		const char *al;
		size_t alen;
		for (; aline < first; aline++) {
			fuzzassert((alen = nextline(a, na, &ia, &al)));
			bufadd(&got, al, alen);
		}
		unsigned long sa = 0, sb = 0;
		while (sa < an || sb < bn) {
			fuzzassert((len = nextline(d, out.len, &io, &l)) > 0);
			char kind = l[0];
			const char *text = l + 1;
			size_t tlen = len - 1;
			size_t peek = io;
			const char *m;
			size_t mlen = nextline(d, out.len, &peek, &m);
			if (mlen && m[0] == '\\') { /* "\ No newline at end of file": the line ends without one */
				fuzzassert(tlen && text[tlen - 1] == '\n');
				tlen--;
				io = peek;
			}
			fuzzassert(kind == ' ' || kind == '-' || kind == '+');
			if (kind != '+') {
				fuzzassert((alen = nextline(a, na, &ia, &al)));
				fuzzassert(alen == tlen && !memcmp(al, text, tlen));
				aline++, sa++;
			}
			if (kind != '-') {
				bufadd(&got, text, tlen);
				sb++;
			}
		}
		fuzzassert(sa == an && sb == bn);
	}
	const char *al;
	size_t alen;
	while ((alen = nextline(a, na, &ia, &al)))
		bufadd(&got, al, alen);
	fuzzassert(got.len == nb && (!nb || !memcmp(got.data, b, nb)));
	buffree(&got);
	buffree(&out);
	return 0;
}
