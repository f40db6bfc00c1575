/* linediff: a unified diff of two texts, line by line (Myers' greedy algorithm). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "linediff.h"

struct lines {
	const char **at; /* start of each line */
	size_t *len;     /* its length, newline included */
	size_t n;
};

/* The lines of s[0..n), up to max + 1: past max is all that matters. */
static size_t countlines(const char *s, size_t n, size_t max)
{
	size_t lines = 0;
	for (const char *p = s, *end = s + n; p < end && lines <= max; lines++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	return lines;
}

static void split(const char *s, size_t n, struct lines *l)
{
	size_t cap = 16;
	l->at = xmalloc(cap * sizeof *l->at);
	l->len = xmalloc(cap * sizeof *l->len);
	l->n = 0;
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - s) + 1 : n;
		if (l->n == cap) {
			cap *= 2;
			l->at = xrealloc(l->at, cap * sizeof *l->at);
			l->len = xrealloc(l->len, cap * sizeof *l->len);
		}
		l->at[l->n] = s + i;
		l->len[l->n++] = end - i;
		i = end;
	}
}

static int same(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && memcmp(a->at[i], b->at[j], a->len[i]) == 0;
}

/* One line of the script: ' ', '-' or '+' and the line it shows. */
struct op {
	char kind;
	size_t i, j; /* line of a (for ' ' and '-') and of b (for ' ' and '+') */
};

/* The edit script from a to b, or NULL when it needs more than max edits. */
static struct op *script(const struct lines *a, const struct lines *b, int max, size_t *nops)
{
	long n = (long)a->n, m = (long)b->n;
	if (n > INT_MAX || m > INT_MAX)
		return NULL; /* the trace holds a line number in an int */
	if (max > n + m)
		max = (int)(n + m); /* no script needs more edits: the arrays are sized by the texts, not the cap */
	long off = max + 1;
	long *v = xcalloc(2 * off + 1, sizeof *v);
	/* trace[d]: the diagonals -d..d after d edits, at [k + d]; only those were reached, so the
	 * trace takes (d + 1)^2 ints, not (max + 1) x (2 max + 3) longs (6.4 GB at 20,000 edits) */
	int **trace = xcalloc(max + 1, sizeof *trace);
	long d, found = -1;
	for (d = 0; d <= max && found < 0; d++) {
		for (long k = -d; k <= d; k += 2) {
			long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
			long y = x - k;
			while (x < n && y < m && same(a, x, b, y))
				x++, y++;
			v[off + k] = x;
			if (x >= n && y >= m) {
				found = d;
				break;
			}
		}
		trace[d] = xmalloc((2 * d + 1) * sizeof **trace);
		for (long k = -d; k <= d; k++)
			trace[d][k + d] = (int)v[off + k];
	}
	struct op *ops = NULL;
	if (found >= 0) {
		size_t cap = (size_t)(n + m + 1), at = cap;
		ops = xmalloc(cap * sizeof *ops);
		long x = n, y = m;
		/* Walk back: each edit d came from diagonal pk of the state after d - 1 edits, then
		 * followed a snake of equal lines to (x, y). */
		for (long dd = found; dd > 0; dd--) {
			const int *pv = trace[dd - 1] + (dd - 1); /* pv[k]: diagonal k after dd - 1 edits */
			long k = x - y;
			int down = k == -dd || (k != dd && pv[k - 1] < pv[k + 1]);
			long pk = down ? k + 1 : k - 1, px = pv[pk], py = px - pk;
			long mx = down ? px : px + 1, my = down ? py + 1 : py; /* just after the edit */
			while (x > mx && y > my) {
				x--, y--;
				ops[--at] = (struct op){' ', (size_t)x, (size_t)y};
			}
			if (down) {
				y--;
				ops[--at] = (struct op){'+', (size_t)x, (size_t)y};
			} else {
				x--;
				ops[--at] = (struct op){'-', (size_t)x, (size_t)y};
			}
		}
		while (x > 0 && y > 0) {
			x--, y--;
			ops[--at] = (struct op){' ', (size_t)x, (size_t)y};
		}
		*nops = cap - at;
		memmove(ops, ops + at, *nops * sizeof *ops);
	}
	for (long i = 0; i <= max; i++)
		free(trace[i]);
	free(trace);
	free(v);
	return ops;
}

static void putline(struct buf *out, char kind, const char *s, size_t n)
{
	bufadd(out, &kind, 1);
	bufadd(out, s, n);
	if (!n || s[n - 1] != '\n')
		bufputs(out, "\n\\ No newline at end of file\n");
}

int linediff(const char *a, size_t na, const char *b, size_t nb, int context, int maxedits, struct buf *out)
{
	if (countlines(a, na, LINEDIFFMAXLINES) > LINEDIFFMAXLINES || countlines(b, nb, LINEDIFFMAXLINES) > LINEDIFFMAXLINES)
		return 1;
	struct lines la, lb;
	split(a, na, &la);
	split(b, nb, &lb);
	size_t nops = 0;
	struct op *ops = script(&la, &lb, maxedits, &nops);
	int rc = ops ? 0 : 1;
	for (size_t i = 0; ops && i < nops;) {
		while (i < nops && ops[i].kind == ' ')
			i++;
		if (i == nops)
			break;
		/* A hunk: from context lines before this change to context after the last change that is
		 * no more than 2 * context lines of equal text away from the one before it. */
		size_t start = i > (size_t)context ? i - context : 0, end = i, last = i;
		for (; end < nops; end++) {
			if (ops[end].kind != ' ')
				last = end;
			else if (end - last > (size_t)(2 * context))
				break;
		}
		end = last + 1 + (size_t)context < nops ? last + 1 + (size_t)context : nops;
		size_t a0 = 0, an = 0, b0 = 0, bn = 0;
		for (size_t t = start; t < end; t++) {
			if (ops[t].kind != '+') {
				if (!an++)
					a0 = ops[t].i;
			}
			if (ops[t].kind != '-') {
				if (!bn++)
					b0 = ops[t].j;
			}
		}
		if (!an)
			a0 = start < nops ? ops[start].i : la.n;
		if (!bn)
			b0 = start < nops ? ops[start].j : lb.n;
		bufprintf(out, "@@ -%zu,%zu +%zu,%zu @@\n", an ? a0 + 1 : a0, an, bn ? b0 + 1 : b0, bn);
		for (size_t t = start; t < end; t++) {
			if (ops[t].kind == '+')
				putline(out, '+', lb.at[ops[t].j], lb.len[ops[t].j]);
			else
				putline(out, ops[t].kind, la.at[ops[t].i], la.len[ops[t].i]);
		}
		i = end;
	}
	free(ops);
	free(la.at);
	free(la.len);
	free(lb.at);
	free(lb.len);
	return rc;
}
