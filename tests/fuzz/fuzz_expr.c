/* fuzz_expr: ${{ }} expressions, checked then expanded.
 * Input: TEXT [\0 OUTPUT], OUTPUT the JSON a finished job "a" produced (job "b" has none).
 * Invariants: what exprcheck accepts with outputs known expands or says why; text without "${{"
 * expands to itself. */
#include "fuzz.h"
#include "../../manifest/expr.h"

static cJSON *out;

static cJSON *output(void *ctx, const char *job)
{
	(void)ctx;
	return strcmp(job, "a") == 0 ? out : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *zero = memchr(data, 0, size);
	size_t tn = zero ? (size_t)(zero - data) : size;
	char *text = strndup((const char *)data, tn);
	out = zero ? cJSON_ParseWithLength((const char *)zero + 1, size - tn - 1) : NULL;
	struct strv sets = {0}, needs = {0};
	strvadd(&sets, "day=monday");
	strvadd(&sets, "nested=${{ inputs.day }}");
	strvadd(&needs, "a");
	strvadd(&needs, "b");
	setenv("NS_FUZZ_ENV", "value", 1);
	struct exprenv env = {.sets = &sets, .needs = &needs, .output = output};
	struct exprenv noout = {.sets = &sets, .needs = &needs};
	struct err e = {0};
	int ok = exprcheck(text, &env, &e) == 0;
	fuzzassert(ok || e.msg[0]);
	char *s = exprexpand(text, &env, &e);
	fuzzassert(s || e.msg[0]);
	if (s && !strstr(text, "${{"))
		fuzzassert(strcmp(s, text) == 0);
	free(s);
	s = exprexpand(text, &noout, &e);
	if (ok)
		fuzzassert(s != NULL); /* jobs.* are left as written without outputs */
	free(s);
	strvfree(&sets);
	strvfree(&needs);
	cJSON_Delete(out);
	free(text);
	return 0;
}
