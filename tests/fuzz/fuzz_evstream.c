/* fuzz_evstream: a Bedrock streamed answer (AWS event stream frames) as the client reads it (byte
 * 0 picks the API: even ConverseStream, odd InvokeModelWithResponseStream; the rest is the body).
 * Invariants: every message's payload lies inside the input and the frames cover at most all of
 * it; the decoder either takes the whole input or fails with a message; an assembled answer is an
 * error body with an HTTP status of 400 to 599, or a body that parses into a reply, or is refused
 * with a message, and a parsed reply has an id and a name for every call. */
#include "fuzz.h"
#include "../../llm/llm.h"
#include "../../llm/evstream.h"

struct span {
	const uint8_t *data;
	size_t size, covered;
};

static int within(void *ctx, const struct evmsg *m)
{
	struct span *s = ctx;
	fuzzassert(m->payload >= s->data && m->payload + m->plen <= s->data + s->size);
	fuzzassert(strlen(m->msgtype) < sizeof m->msgtype && strlen(m->evtype) < sizeof m->evtype);
	s->covered += m->plen + 16;
	fuzzassert(s->covered <= s->size);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int invoke = data[0] & 1;
	data++, size--;
	struct span s = {data, size, 0};
	struct err e = {0};
	if (evstreameach(data, size, within, &s, &e) < 0)
		fuzzassert(e.msg[0]);
	struct model m = {.name = "m", .provider = PROV_BEDROCK, .api = invoke ? API_CHAT : API_CONVERSE,
	                  .model = "anthropic.x", .temperature = -1, .region = "us-east-1"};
	struct llm *l = NULL;
	fuzzassert(bedrockopen(&l, &m, 1, &e) == 0 && l);
	int status = 0;
	memset(&e, 0, sizeof e);
	cJSON *body = l->ops->assemble(l, (const char *)data, size, &status, &e);
	if (!body) {
		fuzzassert(e.msg[0]);
	} else if (cJSON_GetObjectItemCaseSensitive(body, "error")) {
		fuzzassert(status == 0 || (status >= 400 && status < 600));
	} else {
		struct llmreply r;
		memset(&r, 0, sizeof r);
		if (l->ops->parse(l, body, &r, &e) == 0) {
			for (size_t i = 0; i < r.ncalls; i++)
				fuzzassert(r.calls[i].id && *r.calls[i].id && r.calls[i].name && *r.calls[i].name);
		} else {
			fuzzassert(e.msg[0]);
		}
		llmreplyfree(&r);
	}
	cJSON_Delete(body);
	llmclose(l);
	return 0;
}
