/* fuzz_jsonb: a model's JSON (tool-call arguments, a final result) measured, parsed and searched
 * for a key given twice.
 * Input: a JSON text.
 * Invariants: what jsonbparse accepts fits the caps; jsonbtwice names a key some object holds twice
 * (case folded as a reader that ignores case folds it), and finds one whenever a plain pairwise
 * search does; jsonbrepeats marks exactly the members whose exact key an earlier member has. */
#include "fuzz.h"
#include "../../util/jsonb.h"

/* a byte at a time: ASCII lowered, U+017F as 's', U+212A as 'k' */
static size_t fold(const char *k, char *o)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)k; *p;) {
		if (p[0] == 0xc5 && p[1] == 0xbf)
			o[n++] = 's', p += 2;
		else if (p[0] == 0xe2 && p[1] == 0x84 && p[2] == 0xaa)
			o[n++] = 'k', p += 3;
		else
			o[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p), p++;
	}
	o[n] = 0;
	return n;
}

static int samekey(const char *x, const char *y, int exact)
{
	if (exact)
		return strcmp(x, y) == 0;
	char *fx = malloc(strlen(x) + 1), *fy = malloc(strlen(y) + 1);
	fold(x, fx);
	fold(y, fy);
	int same = strcmp(fx, fy) == 0;
	free(fx);
	free(fy);
	return same;
}

/* Whether some object in v holds key (folded) twice; any such key into *any. */
static int twice(const cJSON *v, const char *key, int *any)
{
	int hit = 0;
	if (cJSON_IsObject(v))
		for (const cJSON *m = v->child; m; m = m->next)
			for (const cJSON *o = m->next; o; o = o->next)
				if (samekey(m->string, o->string, 0)) {
					*any = 1;
					hit |= key && samekey(m->string, key, 0);
				}
	if (cJSON_IsObject(v) || cJSON_IsArray(v))
		for (const cJSON *c = v->child; c; c = c->next)
			hit |= twice(c, key, any);
	return hit;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0; /* the pairwise search is quadratic */
	struct err e = {0};
	cJSON *v = jsonbparse((const char *)data, size, &e);
	if (!v)
		return 0;
	fuzzassert(jsonbfits((const char *)data, size, &e) == 0);
	const char *k = jsonbtwice(v);
	int any = 0, hit = twice(v, k, &any);
	fuzzassert(!k || hit);
	fuzzassert(!!k == any);
	if (cJSON_IsObject(v)) {
		size_t n = 0, i = 0;
		for (const cJSON *m = v->child; m; m = m->next)
			n++;
		unsigned char *rep = calloc(n + 1, 1);
		jsonbrepeats(v, rep);
		for (const cJSON *m = v->child; m; m = m->next, i++) {
			int earlier = 0;
			for (const cJSON *o = v->child; o != m; o = o->next)
				earlier |= samekey(o->string, m->string, 1);
			fuzzassert(rep[i] == earlier);
		}
		free(rep);
	}
	cJSON_Delete(v);
	return 0;
}
