/* fuzz_llm: a model's 2xx response body as each provider parses it (byte 0 picks the API: even
 * OpenAI chat completions, odd Anthropic messages; the rest is the body).
 * Invariants: a parsed reply has an id, a name and the raw arguments for every call, arguments
 * that are an object or NULL, and no arguments on the last call of an output cut short. */
#include "fuzz.h"
#include "../../llm/llm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int anthropic = data[0] & 1;
	cJSON *body = cJSON_ParseWithLength((const char *)data + 1, size - 1);
	if (!body)
		return 0;
	struct model m = {.name = "m", .provider = anthropic ? PROV_ANTHROPIC : PROV_OPENAI, .model = "x",
	                  .temperature = -1};
	struct llm *l = NULL;
	struct err e = {0};
	int rc = anthropic ? anthropicopen(&l, &m, &e) : openaiopen(&l, &m, &e);
	fuzzassert(rc == 0 && l);
	for (int round = 0; round < 2; round++) { /* twice: the OpenAI client counts its replies */
		struct llmreply r;
		memset(&r, 0, sizeof r);
		if (l->ops->parse(l, body, &r, &e) == 0) {
			fuzzassert(r.finish_raw);
			for (size_t i = 0; i < r.ncalls; i++) {
				const struct llmcall *c = &r.calls[i];
				fuzzassert(c->id && *c->id && c->name && *c->name && c->rawargs);
				fuzzassert(!c->args || cJSON_IsObject(c->args));
			}
			if (r.finish == FINISH_LENGTH && r.ncalls)
				fuzzassert(r.calls[r.ncalls - 1].args == NULL);
			fuzzassert(r.usage.input >= 0 && r.usage.output >= 0 && r.usage.cached >= 0);
		} else {
			fuzzassert(e.msg[0]);
		}
		llmreplyfree(&r);
	}
	llmclose(l);
	cJSON_Delete(body);
	return 0;
}
