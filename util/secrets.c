/* secrets: mask known values in any text before it is written or printed. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "secrets.h"
#include "utf8.h"

/* How much of a value of n bytes is masked where it appears: all of it, or when text was cut
 * (output at its cap, a reason at its width), the first PREFIXMIN bytes or more. */
enum { PREFIXMIN = 8 };

void secretsadd(struct secrets *s, const char *name, const char *value)
{
	if (!value || !*value)
		return;
	if (strlen(value) < SECRETMIN) {
		for (size_t i = 0; i < s->unmasked.n; i++)
			if (strcmp(s->unmasked.v[i], name) == 0)
				return;
		strvadd(&s->unmasked, name);
		return;
	}
	for (size_t i = 0; i < s->values.n; i++)
		if (strcmp(s->values.v[i], value) == 0)
			return;
	strvadd(&s->names, name);
	strvadd(&s->values, value);
	/* Invalid UTF-8 in a value is what text cleaned for a record shows of it: U+FFFD. */
	char *clean = utf8clean(value, strlen(value));
	strvadd(&s->clean, clean);
	free(clean);
	/* Each line of a secret of many lines (a PEM key), found alone: what prints a file puts
	 * something before each line (diff's +, cat -n, a log's prefix). */
	for (const char *l = value, *nl; strchr(value, '\n') && *l; l = nl ? nl + 1 : l + strlen(l)) {
		nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		if (n && l[n - 1] == '\r')
			n--;
		if (n < PREFIXMIN)
			continue;
		char *line = xstrndup(l, n);
		strvadd(&s->lines, line);
		free(line);
		s->lineof = xrealloc(s->lineof, s->lines.n * sizeof *s->lineof);
		s->lineof[s->lines.n - 1] = s->names.n - 1;
	}
}

void secretsenv(struct secrets *s, const struct strv *names)
{
	for (size_t i = 0; i < names->n; i++)
		secretsadd(s, names->v[i], getenv(names->v[i]));
}

static size_t prefixmin(size_t n)
{
	return n < PREFIXMIN ? n : PREFIXMIN;
}

static int hex4(const char *p, unsigned *u)
{
	*u = 0;
	for (int i = 0; i < 4; i++) {
		int c = (unsigned char)p[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		                                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return 0;
		*u = *u << 4 | (unsigned)d;
	}
	return 1;
}

/* Deeper than any record nests JSON (a run of 2^d - 1 backslashes at depth d): a longer run is
 * text, so a flood of backslashes costs a step's output only once. */
enum { RUNMAX = 64 };

static int octal(int c)
{
	return c >= '0' && c <= '7';
}

/* An escape at p, at any depth (a run of backslashes, then JSON's n r t b f " / or uXXXX, a
 * surrogate pair too; C's and shells' a v e, xHH and octal NNN): the bytes it stands for in out
 * (their count returned, 0 when p holds no escape), *used the text it takes. A run before
 * anything else stands for one backslash. */
static size_t unescape(const char *p, size_t *used, char out[4])
{
	size_t r = 0;
	while (p[r] == '\\' && r <= RUNMAX)
		r++;
	if (!r || r > RUNMAX)
		return 0;
	static const char from[] = "nrtbf\"/ave", to[] = "\n\r\t\b\f\"/\a\v\033";
	const char *c = p[r] ? strchr(from, p[r]) : NULL;
	unsigned u, lo;
	*used = r + 1;
	if (c) {
		out[0] = to[c - from];
		return 1;
	}
	if (p[r] == 'x' && isxdigit((unsigned char)p[r + 1]) && isxdigit((unsigned char)p[r + 2])) {
		char h[3] = {p[r + 1], p[r + 2], 0};
		out[0] = (char)strtoul(h, NULL, 16);
		*used = r + 3;
		return 1;
	}
	if (octal(p[r]) && octal(p[r + 1]) && octal(p[r + 2]) && p[r] <= '3') {
		out[0] = (char)((p[r] - '0') << 6 | (p[r + 1] - '0') << 3 | (p[r + 2] - '0'));
		*used = r + 3;
		return 1;
	}
	if (p[r] != 'u' || !hex4(p + r + 1, &u)) {
		*used = r;
		out[0] = '\\';
		return 1;
	}
	*used = r + 5;
	if (u >= 0xd800 && u < 0xdc00) { /* a pair: the low half escaped at the same depth */
		if (strncmp(p + r + 5, p, r) || p[2 * r + 5] != 'u' || !hex4(p + 2 * r + 6, &lo) || lo < 0xdc00 || lo > 0xdfff)
			return 0;
		u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		*used = 2 * r + 10;
	}
	if (u >= 0xdc80 && u <= 0xdcff) { /* a lone low half: how Python escapes an invalid byte */
		out[0] = (char)(u & 0xff);
		return 1;
	}
	if (u < 0x80) {
		out[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		out[0] = (char)(0xc0 | u >> 6), out[1] = (char)(0x80 | (u & 0x3f));
		return 2;
	}
	if (u < 0x10000) {
		out[0] = (char)(0xe0 | u >> 12), out[1] = (char)(0x80 | ((u >> 6) & 0x3f)), out[2] = (char)(0x80 | (u & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | u >> 18), out[1] = (char)(0x80 | ((u >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((u >> 6) & 0x3f)), out[3] = (char)(0x80 | (u & 0x3f));
	return 4;
}

/* How many bytes of v the text at p spells, as itself or escaped (JSON at any depth, C's and
 * shells' backslashes, a quote spliced into a single-quoted word, a line end as CRLF); *used: the
 * text they take. */
static size_t spelled(const char *v, const char *p, size_t *used)
{
	size_t k = 0, j = 0, u, u2;
	char b[4], b2[4];
	while (v[k] && p[j]) {
		if (v[k] == '\'' && (strncmp(p + j, "'\\''", 4) == 0 || strncmp(p + j, "'\"'\"'", 5) == 0)) {
			k++, j += p[j + 1] == '\\' ? 4 : 5; /* a quote in a single-quoted word: '\'' or '"'"' */
			continue;
		}
		size_t n = unescape(p + j, &u, b);
		if (p[j] == v[k] && (!n || strncmp(v + k, b, n))) { /* itself, unless it escapes what follows */
			k++, j++;
			continue;
		}
		if (!n && p[j] == '\r')
			n = 1, u = 1, b[0] = '\r';
		if (n && strncmp(v + k, b, n) == 0) {
			k += n, j += u;
		} else if (n == 1 && b[0] == '\r' && v[k] == '\n' &&
		           ((p[j + u] == '\n' && (u2 = 1)) || (unescape(p + j + u, &u2, b2) == 1 && b2[0] == '\n'))) {
			k++, j += u + u2;
		} else if (n && b[0] == '\\' && u <= RUNMAX && p[j + u] == v[k]) {
			k++, j += u + 1; /* a shell's or repr's \$, \ , \' ...: the character itself */
		} else {
			break;
		}
	}
	*used = j;
	return k;
}

/* The longest secret (raw or as cleaned) the text at p spells, or a prefix of one at least
 * prefixmin long (what is left where the text was cut): its index, *used the text it takes;
 * -1 when none. */
static long longest(const struct secrets *s, const char *p, size_t *used)
{
	size_t best = 0;
	long which = -1;
	const struct strv *forms[] = {&s->values, &s->clean, &s->lines};
	for (size_t f = 0; f < 3; f++)
		for (size_t i = 0; i < forms[f]->n; i++) {
			const char *v = forms[f]->v[i];
			if (*p != *v && *p != '\\' && *p != '\r')
				continue;
			size_t u, k = spelled(v, p, &u), raw = 0;
			while (v[raw] && p[raw] == v[raw])
				raw++;
			if (raw > k) /* a backslash of its own read as an escape: the raw bytes win */
				k = u = raw;
			size_t len = strlen(v);
			/* a line of a secret: whole, or cut by the end of the text */
			int enough = f < 2 ? k >= prefixmin(len) : k == len || (!p[u] && k >= PREFIXMIN);
			if (enough && k < len) /* a prefix cut at a line's end leaves the line end be */
				while (u > 1 && (p[u - 1] == '\n' || p[u - 1] == '\r'))
					u--;
			if (enough && u > best) {
				best = u;
				which = f < 2 ? (long)i : (long)s->lineof[i];
			}
		}
	*used = best;
	return which;
}

/* A mask never splits an escape (a record's JSON stays JSON): whether the byte at p is escaped
 * (an odd run of backslashes before it, back to start), and a match of u bytes at p shortened so
 * that it does not end on an escape's backslash. */
static int escaped(const char *start, const char *p)
{
	size_t n = 0;
	while (p > start && p[-1] == '\\')
		p--, n++;
	return n & 1;
}

static size_t unsplit(const char *p, size_t u)
{
	size_t n = 0;
	while (n < u && p[u - 1 - n] == '\\')
		n++;
	return n & 1 ? u - 1 : u;
}

/* A copy of text with each tail of a secret (its last PREFIXMIN bytes or more, as raw or cleaned
 * text shows it) masked: what is left where a cut took its head (a sandbox's kept tail, a clip);
 * NULL when there is none. Run after secretsmask's own pass, so whole secrets are gone. */
static char *tails(const struct secrets *s, const char *text)
{
	size_t n = strlen(text), at = 0;
	struct buf out = {0};
	int any = 0;
	while (at < n) {
		size_t best = n, start = 0; /* the first tail after at: where it starts and ends */
		long who = -1;
		for (size_t i = 0; i < s->values.n; i++)
			for (const char *v = s->values.v[i]; v; v = v == s->values.v[i] ? s->clean.v[i] : NULL) {
				size_t len = strlen(v);
				if (len <= PREFIXMIN)
					continue;
				const char *t = v + len - PREFIXMIN;
				for (const char *q = text + at; (q = memmem(q, n - (size_t)(q - text), t, PREFIXMIN)); q++) {
					size_t end = (size_t)(q - text) + PREFIXMIN, k = PREFIXMIN; /* grow it back */
					while (k < len && end - k > at && text[end - k - 1] == v[len - k - 1])
						k++;
					if (k == len) /* the whole of it: secretsmask's own pass */
						continue;
					while (k > PREFIXMIN && escaped(text, text + end - k))
						k--; /* it starts after an escape's backslash: start later */
					if (unsplit(text + end - k, k) < k)
						end--, k--; /* it ends on an escape's backslash: leave that be */
					if (escaped(text, text + end - k) || k < PREFIXMIN - 1)
						continue;
					if (end - k < best) {
						best = end - k;
						start = end;
						who = (long)i;
					}
					break;
				}
			}
		if (who < 0)
			break;
		bufadd(&out, text + at, best - at);
		bufprintf(&out, "[secret:%s]", s->names.v[who]);
		at = start;
		any = 1;
	}
	if (!any)
		return NULL;
	bufputs(&out, text + at);
	return out.data;
}

char *secretsmask(const struct secrets *s, const char *text)
{
	if (!s || !s->values.n || !secretsfound(s, text))
		return NULL;
	struct buf out = {0};
	int any = 0;
	for (const char *p = text; *p;) {
		size_t used = 0;
		long i = escaped(text, p) ? -1 : longest(s, p, &used);
		if (i >= 0 && !(used = unsplit(p, used)))
			i = -1;
		if (i >= 0) {
			bufprintf(&out, "[secret:%s]", s->names.v[i]);
			p += used;
			any = 1;
		} else {
			bufputc(&out, *p++);
		}
	}
	/* then what a cut left of one: its tail, after whole secrets and heads are placeholders */
	char *cut = tails(s, out.data ? out.data : text);
	if (cut) {
		buffree(&out);
		return cut;
	}
	if (!any)
		buffree(&out);
	return any ? out.data : NULL;
}

char *secretsmaskbytes(const struct secrets *s, const char *p, size_t n, size_t *outlen)
{
	if (!s || !s->values.n)
		return NULL;
	struct buf out = {0};
	int any = 0;
	for (size_t at = 0; at <= n;) {
		const char *z = memchr(p + at, 0, n - at);
		size_t k = z ? (size_t)(z - (p + at)) : n - at;
		char *seg = xstrndup(p + at, k), *m = secretsmask(s, seg);
		bufadd(&out, m ? m : seg, m ? strlen(m) : k);
		any |= m != NULL;
		free(m);
		free(seg);
		at += k;
		if (at < n)
			bufputc(&out, 0);
		at++;
	}
	if (!any) {
		buffree(&out);
		return NULL;
	}
	*outlen = out.len;
	return out.data;
}

int secretsfound(const struct secrets *s, const char *text)
{
	if (!s || !s->values.n)
		return 0;
	size_t n = strlen(text);
	for (size_t i = 0; i < s->values.n; i++)
		for (const char *v = s->values.v[i]; v; v = v == s->values.v[i] ? s->clean.v[i] : NULL)
			if (memmem(text, n, v, prefixmin(strlen(v))) ||
			    (strlen(v) > PREFIXMIN && memmem(text, n, v + strlen(v) - PREFIXMIN, PREFIXMIN)))
				return 1;
	for (size_t i = 0; i < s->lines.n; i++)
		if (memmem(text, n, s->lines.v[i], PREFIXMIN))
			return 1;
	/* Spelled with escapes, a spliced quote or CRLF: only then is every place tried. */
	if (!memchr(text, '\\', n) && !memchr(text, '\r', n) && !strstr(text, "'\"'\"'"))
		return 0;
	for (const char *p = text; *p; p++) {
		size_t used;
		if (longest(s, p, &used) >= 0)
			return 1;
	}
	return 0;
}

void secretsfree(struct secrets *s)
{
	strvfree(&s->names);
	strvfree(&s->values);
	strvfree(&s->clean);
	strvfree(&s->lines);
	strvfree(&s->unmasked);
	free(s->lineof);
	s->lineof = NULL;
}
