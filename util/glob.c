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
			if (s[i] == GLOBUNK && c != '*') /* text only known at run time: a '*' alone takes it */
				goto back;
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

/* Could some text put in place of each GLOBUNK of s[0..slen) make it match pat? Dynamic
 * programming over (pattern element, subject byte). */
static int globcould(const char *pat, size_t plen, const char *s, size_t slen)
{
	if (!memchr(s, GLOBUNK, slen))
		return globmatch(pat, plen, s, slen);
	/* the pattern's elements: their start offsets */
	size_t sbuf[128], *el = plen + 1 <= 128 ? sbuf : xmalloc((plen + 1) * sizeof *el), ne = 0;
	for (size_t p = 0; p < plen;) {
		el[ne++] = p;
		size_t end;
		uint32_t cp;
		if (pat[p] == '[' && setmatch(pat, plen, p, 0, &end) >= 0)
			p = end;
		else if (pat[p] == '\\' && p + 1 < plen)
			p += 2;
		else
			p += pat[p] == '*' || pat[p] == '?' ? 1 : step(pat + p, plen - p, &cp);
	}
	el[ne] = plen;
	size_t w = slen + 1;
	unsigned char rbuf[4096], *r = (ne + 1) * w <= sizeof rbuf ? rbuf : xmalloc((ne + 1) * w);
	memset(r, 0, (ne + 1) * w);
	r[0] = 1;
	for (size_t a = 0; a <= ne; a++)
		for (size_t b = 0; b <= slen; b++) {
			if (!r[a * w + b])
				continue;
			char c = a < ne ? pat[el[a]] : 0;
			if (a < ne && c == '*') {
				r[(a + 1) * w + b] = 1;
				if (b < slen)
					r[a * w + b + 1] = 1;
				continue;
			}
			if (b < slen && s[b] == GLOBUNK) {
				r[a * w + b + 1] = 1; /* the unknown text ends */
				if (a < ne)
					r[(a + 1) * w + b] = 1; /* it holds this element */
				continue;
			}
			if (a >= ne || b >= slen)
				continue;
			uint32_t cp;
			size_t len = step(s + b, slen - b, &cp), end;
			int m;
			if (c == '?')
				m = 1;
			else if (c == '[' && (m = setmatch(pat, plen, el[a], cp, &end)) >= 0)
				;
			else if (c == '\\' && el[a] + 1 < plen)
				m = len == 1 && pat[el[a] + 1] == s[b];
			else
				m = el[a + 1] - el[a] == len && !memcmp(pat + el[a], s + b, len);
			if (m && b + len <= slen)
				r[(a + 1) * w + b + len] = 1;
		}
	int hit = r[ne * w + slen];
	if (r != rbuf)
		free(r);
	if (el != sbuf)
		free(el);
	return hit;
}

int globcmdx(const char *pat, char *const *words, const unsigned char *wf, size_t nwords, int could)
{
	if (!could)
		return globcmd(pat, words, nwords);
	char sbuf[512];
	struct pword swords[64];
	size_t n = strlen(pat);
	char *out = 2 * n + 1 <= sizeof sbuf ? sbuf : xmalloc(2 * n + 1);
	struct pword *w = n / 2 + 1 <= 64 ? swords : xmalloc((n / 2 + 1) * sizeof *w);
	long k = pattok(pat, n, out, w);
	int match = 0;
	if (k >= 0) {
		size_t np = (size_t)k, W = nwords + 1;
		unsigned char rb[1024], *r = (np + 1) * W <= sizeof rb ? rb : xmalloc((np + 1) * W);
		memset(r, 0, (np + 1) * W);
		r[0] = 1;
		for (size_t a = 0; a <= np; a++)
			for (size_t b = 0; b <= nwords; b++) {
				if (!r[a * W + b])
					continue;
				if (a < np && w[a].star) {
					r[(a + 1) * W + b] = 1;
					if (b < nwords)
						r[a * W + b + 1] = 1;
					continue;
				}
				if (b < nwords && wf && (wf[b] & 2)) { /* SHW_SPLIT: any number of words */
					r[a * W + b + 1] = 1;
					if (a < np)
						r[(a + 1) * W + b] = 1;
				}
				if (a < np && b < nwords && globcould(out + w[a].off, w[a].len, words[b], strlen(words[b])))
					r[(a + 1) * W + b + 1] = 1;
			}
		match = r[np * W + nwords];
		if (r != rb)
			free(r);
	}
	if (out != sbuf)
		free(out);
	if (w != swords)
		free(w);
	return match;
}

int globcmdwild(const char *pat)
{
	while (*pat == ' ' || *pat == '\t' || *pat == '\n')
		pat++;
	for (; *pat && *pat != ' ' && *pat != '\t' && *pat != '\n'; pat++) {
		if (*pat == '\\' && pat[1])
			pat++;
		else if (*pat == '*' || *pat == '?' || *pat == '[')
			return 1;
		else if (*pat == '\'' || *pat == '"')
			return 0; /* a quoted program name: literal enough */
	}
	return 0;
}

int globnames(const char *pat, const char *key, const char *word)
{
	if (!key || !*key)
		return 0;
	size_t n = strlen(pat), kl = key[0] == '-' ? strcspn(key, "=") : strlen(key);
	char sbuf[512];
	struct pword swords[64];
	char *out = 2 * n + 1 <= sizeof sbuf ? sbuf : xmalloc(2 * n + 1);
	struct pword *w = n / 2 + 1 <= 64 ? swords : xmalloc((n / 2 + 1) * sizeof *w);
	long k = pattok(pat, n, out, w);
	int hit = 0;
	for (long j = 0; j < k && !hit; j++) {
		/* the word's text with the escapes of literal characters removed, up to a wildcard */
		char lit[512];
		size_t o = 0;
		for (size_t i = w[j].off; i < w[j].off + w[j].len && o + 1 < sizeof lit; i++) {
			char c = out[i];
			if (c == '\\' && i + 1 < w[j].off + w[j].len) {
				lit[o++] = out[++i];
				continue;
			}
			if (c == '*' || c == '?' || c == '[')
				break;
			lit[o++] = c;
		}
		lit[o] = 0;
		hit = (o >= kl && !strncmp(lit, key, kl)) || (word && o == w[j].len && !strcmp(lit, word));
		if (!hit && word && !strcmp(lit, word))
			hit = 1;
	}
	if (out != sbuf)
		free(out);
	if (w != swords)
		free(w);
	return hit;
}

int globcmdcheck(const char *pat, struct err *e)
{
	for (const char *c = pat; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\t' && *c != '\n')
			return errf(e, "command pattern has a control character");
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
