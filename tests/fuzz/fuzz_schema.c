/* fuzz_schema: the JSON Schema subset, checked and applied.
 * Input: SCHEMA [\0 VALUE] as JSON texts; without a value the schema validates itself.
 * Invariants: validate never fails silently; with a schema schemacheck accepts, it writes one line
 * per error (up to the cap) and never a "(schema)" error. */
#include "fuzz.h"
#include "../../manifest/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n1, n2;
	const uint8_t *zero = memchr(data, 0, size);
	n1 = zero ? (size_t)(zero - data) : size;
	const uint8_t *p2 = zero ? zero + 1 : data;
	n2 = zero ? size - n1 - 1 : size;
	cJSON *schema = cJSON_ParseWithLength((const char *)data, n1);
	if (!schema)
		return 0;
	cJSON *value = cJSON_ParseWithLength((const char *)p2, n2);
	struct buf ptr = {0}, errs = {0};
	struct err e = {0};
	int ok = schemacheck(schema, &ptr, &e) == 0;
	if (value) {
		int n = schemavalidate(schema, value, &errs);
		fuzzassert(n >= 0);
		fuzzassert((n == 0) == (errs.len == 0));
		if (ok && errs.data)
			fuzzassert(strncmp(errs.data, "(schema)", 8) != 0);
		size_t lines = 0;
		for (size_t i = 0; i < errs.len; i++)
			lines += errs.data[i] == '\n';
		/* One line per error (a model's keys with newlines are escaped); the message about a
		 * schema schemacheck refuses may quote it as written, which only a manifest holds. */
		if (ok)
			fuzzassert(lines == (size_t)n || (n > 25 && lines == 26));
	}
	buffree(&ptr);
	buffree(&errs);
	cJSON_Delete(value);
	cJSON_Delete(schema);
	return 0;
}
