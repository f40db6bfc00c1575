/* modeltext: what a model said, from a recorded response of any provider. */
#include <string.h>
#include "modeltext.h"
#include "../util/util.h"

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* Append each {type: want, key: "..."} of a list of blocks. */
static void blocks(struct buf *b, const cJSON *list, const char *want, const char *key)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, list)
	{
		const char *t = cJSON_GetStringValue(get(it, "type"));
		const char *s = cJSON_GetStringValue(get(it, key));
		if (t && s && strcmp(t, want) == 0)
			bufprintf(b, "%s%s", b->len ? "\n" : "", s);
	}
}

char *modeltext(const cJSON *r)
{
	struct buf b = {0};
	const cJSON *v, *it;
	if ((v = get(r, "text")) && cJSON_IsString(v)) /* scripted */
		bufputs(&b, v->valuestring);
	if ((v = get(r, "choices")) && cJSON_IsArray(v)) { /* chat completions */
		const cJSON *msg = get(cJSON_GetArrayItem(v, 0), "message");
		const char *s = cJSON_GetStringValue(get(msg, "content"));
		const char *refusal = cJSON_GetStringValue(get(msg, "refusal"));
		if (s)
			bufputs(&b, s);
		if (refusal)
			bufprintf(&b, "%s(refusal) %s", b.len ? "\n" : "", refusal);
	}
	if ((v = get(r, "content")) && cJSON_IsArray(v)) /* Anthropic messages */
		blocks(&b, v, "text", "text");
	if ((v = get(r, "output")) && cJSON_IsArray(v)) { /* Responses API */
		cJSON_ArrayForEach(it, v)
		{
			const char *t = cJSON_GetStringValue(get(it, "type"));
			if (t && strcmp(t, "message") == 0) {
				blocks(&b, get(it, "content"), "output_text", "text");
				blocks(&b, get(it, "content"), "refusal", "refusal");
			}
		}
	}
	bufadd(&b, "", 0);
	return b.data;
}
