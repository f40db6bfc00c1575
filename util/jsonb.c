/* jsonb: one pass over the text counts what the tree would hold (values: one per comma, per
   opening bracket, plus the first; depth: open brackets) outside strings, then cJSON parses
   only what passed. A value costs cJSON at most one node (64 bytes) and one key, so the tree of
   an accepted text stays under JSONB_BYTES + JSONB_NODES x ~128 bytes (about 48 MiB). */
#include <stdlib.h>
#include <string.h>
#include "jsonb.h"

int jsonbfits(const char *s, size_t n, struct err *e)
{
	if (n > JSONB_BYTES)
		return errf(e, "a JSON message of %zu bytes, over the cap of %zu MiB", n, JSONB_BYTES >> 20);
	size_t nodes = 1, depth = 0;
	int instr = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (instr) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				instr = 0;
			continue;
		}
		switch (ch) {
		case '"':
			instr = 1;
			break;
		case '[':
		case '{':
			if (++depth > JSONB_DEPTH)
				return errf(e, "JSON nested deeper than %d", JSONB_DEPTH);
			nodes++;
			break;
		case ']':
		case '}':
			if (depth)
				depth--;
			break;
		case ',':
			nodes++;
			break;
		}
		if (nodes > JSONB_NODES)
			return errf(e, "JSON with more than %zu values", JSONB_NODES);
	}
	return 0;
}

cJSON *jsonbparse(const char *s, size_t n, struct err *e)
{
	if (jsonbfits(s, n, e) < 0)
		return NULL;
	cJSON *j = cJSON_ParseWithLength(s, n);
	if (!j)
		errf(e, "not JSON");
	return j;
}

/* A key as a reader that ignores case sees it: ASCII letters lowered, and the two letters Go's
   encoding/json folds into ASCII (U+017F long s, U+212A Kelvin sign) as 's' and 'k'; exact keeps
   it as it is. */
static char *keyfold(const char *k, int exact)
{
	char *f = xstrdup(k ? k : ""), *o = f;
	if (exact)
		return f;
	for (const char *p = f; *p;) {
		if ((unsigned char)p[0] == 0xc5 && (unsigned char)p[1] == 0xbf)
			*o++ = 's', p += 2;
		else if ((unsigned char)p[0] == 0xe2 && (unsigned char)p[1] == 0x84 && (unsigned char)p[2] == 0xaa)
			*o++ = 'k', p += 3;
		else
			*o++ = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p), p++;
	}
	*o = 0;
	return f;
}

struct keyat {
	char *key; /* folded */
	size_t at; /* the member's place in its object */
};

static int keycmp(const void *a, const void *b)
{
	const struct keyat *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* Marks rep[i] for each member i of object o whose key one before it has; sorted, so an object
   of n members costs n log n, never n squared. Returns the first marked member, or NULL. */
static const cJSON *repeats(const cJSON *o, int exact, unsigned char *rep)
{
	size_t n = 0, i = 0;
	for (const cJSON *m = o->child; m; m = m->next)
		n++;
	if (n < 2)
		return NULL;
	struct keyat *ks = xcalloc(n, sizeof *ks);
	for (const cJSON *m = o->child; m; m = m->next, i++)
		ks[i] = (struct keyat){keyfold(m->string, exact), i};
	qsort(ks, n, sizeof *ks, keycmp);
	size_t first = n;
	for (i = 0; i < n; i++) {
		int twice = i > 0 && strcmp(ks[i].key, ks[i - 1].key) == 0;
		if (twice && rep)
			rep[ks[i].at] = 1;
		if (twice && ks[i].at < first)
			first = ks[i].at;
	}
	for (i = 0; i < n; i++)
		free(ks[i].key);
	free(ks);
	const cJSON *m = o->child;
	for (i = 0; m && i < first; i++)
		m = m->next;
	return m;
}

void jsonbrepeats(const cJSON *o, unsigned char *rep)
{
	if (cJSON_IsObject(o))
		repeats(o, 1, rep);
}

const char *jsonbtwice(const cJSON *v)
{
	if (!v || (!cJSON_IsObject(v) && !cJSON_IsArray(v)))
		return NULL;
	const cJSON *m = cJSON_IsObject(v) ? repeats(v, 0, NULL) : NULL;
	if (m)
		return m->string;
	for (const cJSON *c = v->child; c; c = c->next) {
		const char *k = jsonbtwice(c);
		if (k)
			return k;
	}
	return NULL;
}
