/* glob: wildcard matching for approval rules; greedy two-pointer matching, no allocation for
 * ordinary patterns, time bounded by pattern length times subject length. */
#include <stdlib.h>
#include <string.h>
#include "glob.h"

int u8dec(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c = u[0], min;
	int len;
	*cp = c;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, c &= 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, c &= 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, c &= 0x07, min = 0x10000;
	else
		return -1;
	if (n < (size_t)len)
		return -1;
	for (int i = 1; i < len; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return -1;
		c = c << 6 | (u[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return -1;
	*cp = c;
	return len;
}

/* Length of the character at s (1 for a byte that is not UTF-8). */
static size_t step(const char *s, size_t n, uint32_t *cp)
{
	int len = u8dec(s, n, cp);
	return len < 0 ? 1 : (size_t)len;
}

static int classmatch(const char *name, size_t n, uint32_t c)
{
#define IS(s) (n == sizeof s - 1 && memcmp(name, s, n) == 0)
	int up = c >= 'A' && c <= 'Z', lo = c >= 'a' && c <= 'z', dg = c >= '0' && c <= '9';
	if (IS("alpha"))
		return up || lo;
	if (IS("digit"))
		return dg;
	if (IS("alnum"))
		return up || lo || dg;
	if (IS("upper"))
		return up;
	if (IS("lower"))
		return lo;
	if (IS("xdigit"))
		return dg || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	if (IS("space"))
		return c == ' ' || (c >= '\t' && c <= '\r');
	if (IS("blank"))
		return c == ' ' || c == '\t';
	if (IS("punct"))
		return c > ' ' && c < 0x7f && !up && !lo && !dg;
	return 0;
#undef IS
}

/* Match character c against the set opening at pat[p] == '['. Returns 1 or 0, and *end past its
 * ']'; -1 when the set never closes (the '[' is then an ordinary character). */
static int setmatch(const char *pat, size_t plen, size_t p, uint32_t c, size_t *end)
{
	size_t i = p + 1;
	int neg = 0, hit = 0, first = 1;
	if (i < plen && (pat[i] == '!' || pat[i] == '^'))
		neg = 1, i++;
	for (;; first = 0) {
		if (i >= plen)
			return -1;
		if (pat[i] == ']' && !first)
			break;
		if (pat[i] == '[' && i + 1 < plen && pat[i + 1] == ':') {
			const char *close = NULL;
			for (size_t j = i + 2; j + 1 < plen; j++)
				if (pat[j] == ':' && pat[j + 1] == ']') {
					close = pat + j;
					break;
				}
			if (close) {
				hit |= classmatch(pat + i + 2, (size_t)(close - pat) - i - 2, c);
				i = (size_t)(close - pat) + 2;
				continue;
			}
		}
		uint32_t lo, hi;
		if (pat[i] == '\\' && i + 1 < plen)
			i++;
		i += step(pat + i, plen - i, &lo);
		hi = lo;
		if (i + 1 < plen && pat[i] == '-' && pat[i + 1] != ']') {
			i++;
			if (pat[i] == '\\' && i + 1 < plen)
				i++;
			i += step(pat + i, plen - i, &hi);
		}
		if (lo <= c && c <= hi)
			hit = 1;
	}
	*end = i + 1;
	return hit != neg;
}

int globmatch(const char *pat, size_t plen, const char *s, size_t slen)
{
	size_t p = 0, i = 0, sp = (size_t)-1, si = 0;
	uint32_t cp;
	for (p = 0; p < plen && pat[p] != '*' && pat[p] != '?' && pat[p] != '[' && pat[p] != '\\'; p++)
		;
	if (p == plen) /* no wildcard at all */
		return plen == slen && memcmp(pat, s, plen) == 0;
	p = 0;
	while (i < slen) {
		if (p < plen) {
			char c = pat[p];
			if (c == '*') {
				while (p < plen && pat[p] == '*')
					p++;
				sp = p, si = i;
				continue;
			}
			size_t len = step(s + i, slen - i, &cp);
			if (c == '?') {
				p++, i += len;
				continue;
			}
			if (c == '[') {
				size_t end;
				int r = setmatch(pat, plen, p, cp, &end);
				if (r == 1) {
					p = end, i += len;
					continue;
				}
				if (r == 0)
					goto back;
			}
			if (c == '\\' && p + 1 < plen) {
				if (pat[p + 1] == s[i]) {
					p += 2, i++;
					continue;
				}
			} else if (c == s[i]) {
				p++, i++;
				continue;
			}
		}
	back:
		if (sp == (size_t)-1)
			return 0;
		si += step(s + si, slen - si, &cp);
		i = si, p = sp;
	}
	while (p < plen && pat[p] == '*')
		p++;
	return p == plen;
}

/* The next segment of s[*at..n), skipping empty and "." ones; 0 at the end. */
static int nextseg(const char *s, size_t n, size_t *at, size_t *start, size_t *len)
{
	size_t i = *at;
	for (;;) {
		while (i < n && s[i] == '/')
			i++;
		if (i >= n) {
			*at = i;
			return 0;
		}
		size_t j = i;
		while (j < n && s[j] != '/')
			j++;
		if (j - i == 1 && s[i] == '.') {
			i = j;
			continue;
		}
		*start = i, *len = j - i, *at = j;
		return 1;
	}
}

static int isstarstar(const char *s, size_t n)
{
	return n == 2 && s[0] == '*' && s[1] == '*';
}

int globpath(const char *pat, const char *path)
{
	size_t pn = strlen(pat), sn = strlen(path);
	if (strncmp(pat, "/workspace", 10) == 0 && (pn == 10 || pat[10] == '/'))
		pat += 10, pn -= 10;
	else if (pat[0] == '/')
		return 0; /* an absolute pattern outside the workspace matches nothing */
	size_t p = 0, i = 0, sp = (size_t)-1, si = 0, ps, pl, ss, sl;
	for (;;) {
		size_t i0 = i;
		if (!nextseg(path, sn, &i, &ss, &sl))
			break;
		int have = nextseg(pat, pn, &p, &ps, &pl);
		if (have && isstarstar(pat + ps, pl)) {
			sp = p, si = i0, i = i0;
			continue;
		}
		if (have && globmatch(pat + ps, pl, path + ss, sl))
			continue;
		if (sp == (size_t)-1)
			return 0;
		nextseg(path, sn, &si, &ss, &sl); /* the '**' takes one more segment */
		i = si, p = sp;
	}
	while (nextseg(pat, pn, &p, &ps, &pl))
		if (!isstarstar(pat + ps, pl))
			return 0;
	return 1;
}

struct pword {
	size_t off, len;
	int star; /* a bare unquoted '*' (or '**'): any number of words */
};

/* Split a command glob into words in out (characters made literal by quoting are escaped with
 * '\'). out holds 2 * n + 1 bytes, w n / 2 + 1 entries. Returns the word count, -1 when a quote
 * is unbalanced. */
static long pattok(const char *pat, size_t n, char *out, struct pword *w)
{
	size_t o = 0, k = 0, i = 0;
#define LIT(ch) do { char c_ = (ch); if (strchr("*?[]\\", c_)) out[o++] = '\\'; out[o++] = c_; } while (0)
	for (;;) {
		while (i < n && (pat[i] == ' ' || pat[i] == '\t' || pat[i] == '\n'))
			i++;
		if (i >= n)
			break;
		size_t start = o;
		int quoted = 0;
		while (i < n && pat[i] != ' ' && pat[i] != '\t' && pat[i] != '\n') {
			char c = pat[i];
			if (c == '\'' || c == '"') {
				size_t j = i + 1;
				for (; j < n && pat[j] != c; j++) {
					if (c == '"' && pat[j] == '\\' && j + 1 < n && strchr("\"\\$`", pat[j + 1]))
						j++;
					LIT(pat[j]);
				}
				if (j >= n)
					return -1;
				i = j + 1, quoted = 1;
			} else if (c == '\\' && i + 1 < n) {
				LIT(pat[i + 1]);
				i += 2, quoted = 1;
			} else {
				out[o++] = c;
				i++;
			}
		}
		w[k].off = start, w[k].len = o - start;
		w[k].star = !quoted && (o - start == 1 || isstarstar(out + start, o - start)) && out[start] == '*';
		k++;
	}
#undef LIT
	return (long)k;
}

static int isblank_(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* The common shape, plain words then maybe a last bare '*', decided without tokenising: 1 or 0,
 * or -1 when the pattern needs the full matcher. */
static int fastcmd(const char *p, char *const *words, size_t nwords)
{
	for (size_t j = 0;; j++) {
		while (isblank_(*p))
			p++;
		if (!*p)
			return j == nwords;
		static const unsigned char special[256] = {['*'] = 1, ['?'] = 1, ['['] = 1, [']'] = 1, ['\\'] = 1,
		                                           ['\''] = 1, ['"'] = 1};
		if (!special[(unsigned char)*p] && (j >= nwords || words[j][0] != *p))
			return 0; /* a literal first character must be the word's first */
		size_t k = 0;
		while (p[k] && !isblank_(p[k]))
			k++;
		if (k == 1 && *p == '*') {
			const char *q = p + 1;
			while (isblank_(*q))
				q++;
			return *q ? -1 : 1;
		}
		for (size_t i = 0; i < k; i++)
			if (special[(unsigned char)p[i]])
				return -1;
		if (strncmp(words[j], p, k) != 0 || words[j][k])
			return 0;
		p += k;
	}
}

int globcmd(const char *pat, char *const *words, size_t nwords)
{
	int fast = fastcmd(pat, words, nwords);
	if (fast >= 0)
		return fast;
	char sbuf[512];
	struct pword swords[64];
	size_t n = strlen(pat);
	char *out = 2 * n + 1 <= sizeof sbuf ? sbuf : xmalloc(2 * n + 1);
	struct pword *w = n / 2 + 1 <= 64 ? swords : xmalloc((n / 2 + 1) * sizeof *w);
	long k = pattok(pat, n, out, w);
	int match = 0;
	if (k >= 0) {
		size_t p = 0, i = 0, sp = (size_t)-1, si = 0, np = (size_t)k;
		for (;;) {
			if (i >= nwords) {
				while (p < np && w[p].star)
					p++;
				match = p == np;
				break;
			}
			if (p < np && w[p].star) {
				sp = ++p, si = i;
				continue;
			}
			if (p < np && globmatch(out + w[p].off, w[p].len, words[i], strlen(words[i]))) {
				p++, i++;
				continue;
			}
			if (sp == (size_t)-1)
				break;
			i = ++si, p = sp;
		}
	}
	if (out != sbuf)
		free(out);
	if (w != swords)
		free(w);
	return match;
}

int globcmdcheck(const char *pat, struct err *e)
{
	size_t n = strlen(pat);
	char *out = xmalloc(2 * n + 1);
	struct pword *w = xmalloc((n / 2 + 1) * sizeof *w);
	long k = pattok(pat, n, out, w);
	free(out);
	free(w);
	if (k < 0)
		return errf(e, "command pattern \"%s\" has an unbalanced quote", pat);
	if (k == 0)
		return errf(e, "command pattern is empty");
	return 0;
}
