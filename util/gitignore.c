/* gitignore: the rules of gitignore(5). Each folder's patterns are kept under its path; a path is
 * matched against the folders above it from the deepest up, each file's patterns from the last
 * up, and the first that matches decides (so a later or deeper pattern wins, `!` included). A
 * path under an ignored folder is ignored, whatever negations say (git cannot re-include it). */
#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "gitignore.h"
#include "util.h"

enum { MAXLINE = 64 << 10, MAXRULES = 100000 };

struct rule {
	char *pat;   /* without '!', trailing '/' and a leading '/' */
	int neg;     /* '!': re-include */
	int dironly; /* ended in '/' */
	int anchored; /* held a '/' before its end: matched against the path from the folder */
};

struct set {
	char *dir;
	struct rule *v;
	size_t n;
};

struct gitignore {
	pthread_mutex_t mu;
	struct set *sets;
	size_t n;
};

struct gitignore *gitignorenew(void)
{
	struct gitignore *g = xcalloc(1, sizeof *g);
	pthread_mutex_init(&g->mu, NULL);
	return g;
}

static struct set *setof(struct gitignore *g, const char *dir, int add)
{
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->sets[i].dir, dir) == 0)
			return &g->sets[i];
	if (!add)
		return NULL;
	g->sets = xrealloc(g->sets, (g->n + 1) * sizeof *g->sets);
	g->sets[g->n] = (struct set){xstrdup(dir), NULL, 0};
	return &g->sets[g->n++];
}

/* One line into a rule; 0 for a blank line or a comment. */
static int parse(const char *l, size_t n, struct rule *r)
{
	if (n && l[n - 1] == '\r')
		n--;
	/* trailing spaces go, unless quoted with a backslash */
	while (n && l[n - 1] == ' ') {
		size_t bs = 0;
		while (bs + 1 < n && l[n - 2 - bs] == '\\')
			bs++;
		if (bs % 2)
			break;
		n--;
	}
	if (!n || l[0] == '#')
		return 0;
	memset(r, 0, sizeof *r);
	if (l[0] == '!') {
		r->neg = 1;
		l++, n--;
	}
	if (n && l[n - 1] == '/') {
		r->dironly = 1;
		n--;
	}
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (l[i] == '/')
			r->anchored = 1;
	if (l[0] == '/')
		l++, n--;
	if (!n)
		return 0;
	r->pat = xstrndup(l, n);
	return 1;
}

void gitignoreadd(struct gitignore *g, const char *dir, const char *text, size_t n)
{
	pthread_mutex_lock(&g->mu);
	struct set *s = setof(g, dir, 1);
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - text) : n;
		struct rule r;
		if (end - i <= MAXLINE && s->n < MAXRULES && parse(text + i, end - i, &r)) {
			s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
			s->v[s->n++] = r;
		}
		i = end + 1;
	}
	pthread_mutex_unlock(&g->mu);
}

/* The length of the bracket expression at p ('['), or 0 when it is not closed. */
static size_t bracketlen(const char *p)
{
	size_t i = 1;
	if (p[i] == '!' || p[i] == '^')
		i++;
	if (p[i] == ']')
		i++;
	for (; p[i]; i++) {
		if (p[i] == '\\' && p[i + 1])
			i++;
		else if (p[i] == '[' && p[i + 1] == ':') {
			const char *end = strstr(p + i + 2, ":]");
			if (end)
				i = (size_t)(end - p) + 1;
		} else if (p[i] == ']')
			return i + 1;
	}
	return 0;
}

/* git's wildmatch with WM_PATHNAME: '*' and '?' stop at '/', "**" between slashes (or at either
 * end) spans folders, '\' quotes, [sets]. pat0 is the pattern's start (for what is before "**"). */
static int wild(const char *pat0, const char *p, const char *s)
{
	for (; *p; p++, s++) {
		switch (*p) {
		case '\\':
			if (!p[1] || p[1] != *s)
				return 0;
			p++;
			break;
		case '?':
			if (!*s || *s == '/')
				return 0;
			break;
		case '[': {
			size_t bl = bracketlen(p);
			if (!bl)
				return 0; /* a set never closed matches nothing, as in git's wildmatch */
			if (!*s || *s == '/')
				return 0;
			char *set = xstrndup(p, bl), one[2] = {*s, 0};
			/* git takes '^' for '!' at a set's start, as glibc does */
			int ok = fnmatch(set, one, 0) == 0;
			free(set);
			if (!ok)
				return 0;
			p += bl - 1;
			break;
		}
		case '*': {
			const char *q = p;
			while (*q == '*')
				q++;
			if (q - p >= 2 && (p == pat0 || p[-1] == '/') && (!*q || *q == '/')) {
				if (!*q)
					return 1; /* a trailing "**": all below */
				/* "**" and a slash: zero or more folders */
				for (const char *t = s;;) {
					if (wild(pat0, q + 1, t))
						return 1;
					t = strchr(t, '/');
					if (!t)
						return 0;
					t++;
				}
			}
			for (const char *t = s;; t++) {
				if (wild(pat0, q, t))
					return 1;
				if (!*t || *t == '/')
					return 0;
			}
		}
		default:
			if (*p != *s)
				return 0;
		}
		if (!*s)
			return 0;
	}
	return !*s;
}

/* The last rule of the sets above path (from the deepest) that matches it: 1 ignored, 0
 * re-included, -1 none. */
static int decide(struct gitignore *g, const char *path, int isdir)
{
	int verdict = -1;
	pthread_mutex_lock(&g->mu);
	size_t len = strlen(path);
	/* the folders above path, deepest first: "a/b" for "a/b/c", then "a", then "" */
	for (size_t cut = len; verdict < 0;) {
		while (cut > 0 && path[cut - 1] != '/')
			cut--;
		size_t dl = cut ? cut - 1 : 0;
		char *dir = xstrndup(path, dl);
		struct set *s = setof(g, dir, 0);
		free(dir);
		const char *rel = path + (cut ? cut : 0), *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		for (size_t i = s ? s->n : 0; i-- > 0;) {
			const struct rule *r = &s->v[i];
			if (r->dironly && !isdir)
				continue;
			if (wild(r->pat, r->pat, r->anchored ? rel : base)) {
				verdict = !r->neg;
				break;
			}
		}
		if (!cut)
			break;
		cut = dl;
	}
	pthread_mutex_unlock(&g->mu);
	return verdict;
}

int gitignorematch(struct gitignore *g, const char *path, int isdir)
{
	/* a folder above that is ignored ignores all below it */
	for (const char *sl = strchr(path, '/'); sl; sl = strchr(sl + 1, '/')) {
		char *up = xstrndup(path, (size_t)(sl - path));
		int ig = decide(g, up, 1) == 1;
		free(up);
		if (ig)
			return 1;
	}
	return decide(g, path, isdir) == 1;
}

void gitignorefree(struct gitignore *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++) {
		for (size_t k = 0; k < g->sets[i].n; k++)
			free(g->sets[i].v[k].pat);
		free(g->sets[i].v);
		free(g->sets[i].dir);
	}
	free(g->sets);
	pthread_mutex_destroy(&g->mu);
	free(g);
}
