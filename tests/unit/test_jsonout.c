/* test_jsonout: jsonprint's bytes are cJSON_PrintUnformatted's, on fixed cases and random trees
 * (strings of every byte, numbers of every kind, nesting, raw items, invalid items). */
#include <math.h>
#include <stdlib.h>
#include "t.h"
#include "../../util/jsonout.h"

static unsigned long long seed = 88172645463325252ull;

static unsigned rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (unsigned)(seed >> 11);
}

static char *randstr(void)
{
	size_t n = rnd() % 5 == 0 ? rnd() % 300 : rnd() % 24;
	char *s = malloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		unsigned k = rnd() % 10;
		s[i] = (char)(k < 5 ? 'a' + rnd() % 26 : k < 7 ? 1 + rnd() % 0x2f : k < 8 ? (unsigned)"\"\\/"[rnd() % 3] : 1 + rnd() % 255);
	}
	s[n] = 0;
	return s;
}

static double randnum(void)
{
	static const double fixed[] = {0, -0.0, 1, -1, 0.1, 1e300, -1e-300, 2147483647, 2147483648.0, -2147483649.0,
	                               1e15, 123456789012345678.0, 0.30000000000000004, 5e-324, 1.7976931348623157e308};
	switch (rnd() % 5) {
	case 0: return fixed[rnd() % (sizeof fixed / sizeof *fixed)];
	case 1: return (double)(int)rnd() - 1e9;
	case 2: return (double)rnd() / (double)(rnd() | 1);
	case 3: return ldexp((double)rnd(), (int)(rnd() % 200) - 100);
	default: return (double)(rnd() % 1000);
	}
}

static cJSON *randtree(int depth)
{
	unsigned k = rnd() % (depth > 4 ? 6 : 9);
	char *s;
	cJSON *j;
	switch (k) {
	case 0: return cJSON_CreateNull();
	case 1: return cJSON_CreateBool(rnd() & 1);
	case 2: return cJSON_CreateNumber(randnum());
	case 3:
	case 4:
	case 5:
		s = randstr();
		j = cJSON_CreateString(s);
		free(s);
		return j;
	case 6:
		j = cJSON_CreateArray();
		for (unsigned n = rnd() % 5; n > 0; n--)
			cJSON_AddItemToArray(j, randtree(depth + 1));
		return j;
	default:
		j = cJSON_CreateObject();
		for (unsigned n = rnd() % 5; n > 0; n--) {
			s = randstr();
			cJSON_AddItemToObject(j, s, randtree(depth + 1));
			free(s);
		}
		return j;
	}
}

static void same(const cJSON *j, const char *what)
{
	char *want = cJSON_PrintUnformatted(j), *got = jsonprint(j);
	ok((!want && !got) || (want && got && strcmp(want, got) == 0), "%s: cJSON %.200s, jsonprint %.200s", what,
	   want ? want : "(null)", got ? got : "(null)");
	if (got)
		ok(jsonoutlen(j) == strlen(got), "%s: jsonoutlen %zu, printed %zu", what, jsonoutlen(j), strlen(got));
	free(want);
	free(got);
}

int main(void)
{
	cJSON *j = cJSON_Parse("{\"a\":[1,2.5,-0.001,1e+300,\"x\\u0001\\\"\\\\\\n\\t\\r\\b\\f/\\u00e9\"],\"\":{},\"b\":[]}");
	same(j, "fixed");
	cJSON_Delete(j);
	j = cJSON_CreateArray();
	cJSON_AddItemToArray(j, cJSON_CreateNumber(NAN));
	cJSON_AddItemToArray(j, cJSON_CreateNumber(INFINITY));
	cJSON_AddItemToArray(j, cJSON_CreateRaw("{\"raw\": 1}"));
	same(j, "nan, infinity, raw");
	cJSON_Delete(j);
	j = cJSON_CreateObject();
	cJSON_AddItemToObject(j, "k", cJSON_CreateString("v"));
	free(j->child->string);
	j->child->string = NULL;
	same(j, "a member without a name");
	cJSON_Delete(j);
	cJSON *bad = cJSON_CreateArray(), *inv = cJSON_CreateNull();
	inv->type = cJSON_Invalid;
	cJSON_AddItemToArray(bad, inv);
	ok(jsonprint(bad) == NULL && cJSON_PrintUnformatted(bad) == NULL, "an invalid item prints nothing, as in cJSON");
	cJSON_Delete(bad);
	struct buf b = {0};
	bufputs(&b, "keep");
	cJSON *wrap = cJSON_CreateArray();
	cJSON_AddItemToArray(wrap, cJSON_CreateString("x"));
	inv = cJSON_CreateNull();
	inv->type = cJSON_Invalid;
	cJSON_AddItemToArray(wrap, inv);
	ok(jsonout(&b, wrap) < 0 && strcmp(b.data, "keep") == 0, "a failed print leaves the buffer as it was");
	cJSON_Delete(wrap);
	buffree(&b);
	int bad1 = 0;
	for (int i = 0; i < 20000; i++) {
		cJSON *t = randtree(0);
		char *want = cJSON_PrintUnformatted(t), *got = jsonprint(t);
		if (!want || !got || strcmp(want, got) != 0 || jsonoutlen(t) != strlen(got)) {
			if (!bad1++)
				ok(0, "random tree %d: cJSON %.300s, jsonprint %.300s", i, want ? want : "(null)", got ? got : "(null)");
		}
		free(want);
		free(got);
		cJSON_Delete(t);
	}
	ok(bad1 == 0, "20,000 random trees print the same, jsonoutlen their length (%d differ)", bad1);
	/* raw control bytes in a string (cJSON parses them) print six times their size */
	char raw[] = "[\"\x01\x02\x1f\"]";
	j = cJSON_Parse(raw);
	ok(j && jsonoutlen(j) == 4 + 18, "three raw control bytes print as 18: %zu", j ? jsonoutlen(j) : 0);
	cJSON_Delete(j);
	return tdone();
}
