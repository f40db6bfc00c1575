/* jsonb: one pass over the text counts what the tree would hold (values: one per comma, per
   opening bracket, plus the first; depth: open brackets) outside strings, then cJSON parses
   only what passed. A value costs cJSON at most one node (64 bytes) and one key, so the tree of
   an accepted text stays under JSONB_BYTES + JSONB_NODES x ~128 bytes (about 48 MiB). */
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
