/* test_evstream: the AWS event stream decoder (frames, both CRCs, the caps, malformed headers), and
 * the streamed answers of Bedrock (ConverseStream, InvokeModelWithResponseStream), Vertex
 * (streamRawPredict) and Azure assembled into their plain shape, exceptions with their class. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <openssl/evp.h>
#include "t.h"
#include "../../llm/llm.h"
#include "../../llm/evstream.h"

static void put32(struct buf *b, uint32_t v)
{
	unsigned char p[4] = {v >> 24, v >> 16 & 255, v >> 8 & 255, v & 255};
	bufadd(b, (const char *)p, 4);
}

static void strheader(struct buf *h, const char *name, const char *value)
{
	size_t n = strlen(name), v = strlen(value);
	bufputc(h, (char)n);
	bufadd(h, name, n);
	bufputc(h, 7);
	bufputc(h, (char)(v >> 8));
	bufputc(h, (char)(v & 255));
	bufadd(h, value, v);
}

/* Append one frame: :message-type msgtype, NAME: value (:event-type or :exception-type), an int
 * and a uuid header to skip, and the payload. */
static void frame(struct buf *b, const char *msgtype, const char *name, const char *value, const char *payload)
{
	struct buf h = {0};
	bufputs(&h, "");
	strheader(&h, ":message-type", msgtype);
	strheader(&h, name, value);
	bufadd(&h, "\x03num\x04\0\0\0\x07", 9);
	bufadd(&h, "\x02id\x09" "0123456789abcdef", 20);
	strheader(&h, ":content-type", "application/json");
	size_t start = b->len, pl = strlen(payload);
	put32(b, (uint32_t)(16 + h.len + pl));
	put32(b, (uint32_t)h.len);
	put32(b, (uint32_t)crc32(0, (const unsigned char *)b->data + start, 8));
	bufadd(b, h.data, h.len);
	bufadd(b, payload, pl);
	put32(b, (uint32_t)crc32(0, (const unsigned char *)b->data + start, (uInt)(b->len - start)));
	buffree(&h);
}

static int count(void *ctx, const struct evmsg *m)
{
	struct buf *b = ctx;
	bufprintf(b, "[%s|%s|%s|%.*s]", m->msgtype, m->evtype, m->exctype, (int)m->plen, (const char *)m->payload);
	return 0;
}

static int decode(const struct buf *b, struct buf *out, struct err *e)
{
	out->len = 0;
	bufputs(out, "");
	memset(e, 0, sizeof *e);
	return evstreameach((const unsigned char *)b->data, b->len, count, out, e);
}

/* The frame's bytes with byte i changed. */
static void flip(struct buf *b, size_t i)
{
	b->data[i] ^= 0x20;
}

/* A chunk of InvokeModelWithResponseStream: {"bytes": base64 of json}. */
static void chunk(struct buf *b, const char *json)
{
	size_t n = strlen(json);
	char *enc = malloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)json, (int)n);
	char *pl = xasprintf("{\"bytes\":\"%s\",\"p\":\"abcdefgh\"}", enc);
	frame(b, "event", ":event-type", "chunk", pl);
	free(pl);
	free(enc);
}

int main(void)
{
	struct buf b = {0}, out = {0};
	struct err e = {0};
	int st = 0;

	/* --- the decoder --- */
	frame(&b, "event", ":event-type", "messageStart", "{\"role\":\"assistant\"}");
	frame(&b, "exception", ":exception-type", "throttlingException", "{\"message\":\"slow down\"}");
	ok(decode(&b, &out, &e) == 0, "two frames decode: %s", e.msg);
	okstr(out.data, "[event|messageStart||{\"role\":\"assistant\"}][exception||throttlingException|{\"message\":\"slow down\"}]",
	      "types and payloads, other headers skipped");
	ok(evstreamlike((const unsigned char *)b.data, b.len), "a frame looks like one");
	ok(!evstreamlike((const unsigned char *)"data: {}\n\n", 10), "server-sent events do not");

	struct buf bad = {0};
	frame(&bad, "event", ":event-type", "messageStart", "{}");
	flip(&bad, 9); /* the prelude CRC */
	ok(decode(&bad, &out, &e) < 0 && strstr(e.msg, "prelude CRC"), "a bad prelude CRC is refused: %s", e.msg);
	bad.len = 0;
	frame(&bad, "event", ":event-type", "messageStart", "{\"x\":1}");
	flip(&bad, bad.len - 6); /* in the payload */
	ok(decode(&bad, &out, &e) < 0 && strstr(e.msg, "message CRC"), "a bad message CRC is refused: %s", e.msg);
	bad.len = 0;
	frame(&bad, "event", ":event-type", "messageStart", "{}");
	size_t whole = bad.len;
	size_t refused = 0;
	for (size_t cut = 1; cut < whole; cut++) { /* every truncation: an error, never a read past */
		bad.len = cut;
		refused += decode(&bad, &out, &e) == -1 && strstr(e.msg, "cut short");
	}
	ok(refused == whole - 1, "every truncation is refused as cut short (%zu of %zu)", refused, whole - 1);

	/* a prelude that says 1 GiB (its CRC right): refused before anything is read or kept */
	unsigned char big[16] = {0x40, 0, 0, 0, 0, 0, 0, 0};
	uint32_t c = (uint32_t)crc32(0, big, 8);
	big[8] = c >> 24, big[9] = c >> 16 & 255, big[10] = c >> 8 & 255, big[11] = c & 255;
	memset(&e, 0, sizeof e);
	ok(evstreameach(big, sizeof big, count, &out, &e) < 0 && strstr(e.msg, "at most"), "an oversize frame is refused: %s",
	   e.msg);
	unsigned char small[16] = {0, 0, 0, 8, 0, 0, 0, 0};
	c = (uint32_t)crc32(0, small, 8);
	small[8] = c >> 24, small[9] = c >> 16 & 255, small[10] = c >> 8 & 255, small[11] = c & 255;
	ok(evstreameach(small, sizeof small, count, &out, &e) < 0, "a frame shorter than its prelude is refused");
	unsigned char hl[16] = {0, 0, 0, 16, 0, 0, 0, 9};
	c = (uint32_t)crc32(0, hl, 8);
	hl[8] = c >> 24, hl[9] = c >> 16 & 255, hl[10] = c >> 8 & 255, hl[11] = c & 255;
	ok(evstreameach(hl, sizeof hl, count, &out, &e) < 0 && strstr(e.msg, "header bytes"),
	   "headers longer than the frame are refused: %s", e.msg);
	/* a header whose value runs past the headers: malformed (CRCs right) */
	struct buf mh = {0};
	bufputs(&mh, "");
	const char hdr[] = "\x05:abcd\x07\x00\x40xyz";
	put32(&mh, (uint32_t)(16 + sizeof hdr - 1));
	put32(&mh, (uint32_t)(sizeof hdr - 1));
	put32(&mh, (uint32_t)crc32(0, (const unsigned char *)mh.data, 8));
	bufadd(&mh, hdr, sizeof hdr - 1);
	put32(&mh, (uint32_t)crc32(0, (const unsigned char *)mh.data, (uInt)mh.len));
	ok(decode(&mh, &out, &e) < 0 && strstr(e.msg, "malformed headers"), "a header past its end is refused: %s", e.msg);
	/* a control byte in a type name does not come out */
	struct buf ctl = {0};
	frame(&ctl, "event", ":event-type", "chunk\x1b[31m", "{}");
	ok(decode(&ctl, &out, &e) == 0 && !strchr(out.data, 0x1b), "no control byte in a type name");

	/* --- ConverseStream assembled into the Converse answer --- */
	struct model m = {.name = "m", .provider = PROV_BEDROCK, .api = API_CONVERSE, .model = "anthropic.claude-x",
	                  .temperature = -1, .region = "us-east-1"};
	struct llm *l = NULL;
	ok(bedrockopen(&l, &m, 1, &e) == 0, "bedrock converse open");
	struct buf cs = {0};
	frame(&cs, "event", ":event-type", "messageStart", "{\"role\":\"assistant\",\"p\":\"abc\"}");
	frame(&cs, "event", ":event-type", "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"Look\"}}");
	frame(&cs, "event", ":event-type", "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"ing.\"}}");
	frame(&cs, "event", ":event-type", "contentBlockStop", "{\"contentBlockIndex\":0}");
	frame(&cs, "event", ":event-type", "contentBlockStart",
	      "{\"contentBlockIndex\":1,\"start\":{\"toolUse\":{\"toolUseId\":\"tu_1\",\"name\":\"shell\"}}}");
	frame(&cs, "event", ":event-type", "contentBlockDelta",
	      "{\"contentBlockIndex\":1,\"delta\":{\"toolUse\":{\"input\":\"{\\\"command\\\": \\\"ec\"}}}");
	frame(&cs, "event", ":event-type", "contentBlockDelta",
	      "{\"contentBlockIndex\":1,\"delta\":{\"toolUse\":{\"input\":\"ho a\\\"}\"}}}");
	frame(&cs, "event", ":event-type", "contentBlockStop", "{\"contentBlockIndex\":1}");
	frame(&cs, "event", ":event-type", "messageStop", "{\"stopReason\":\"tool_use\"}");
	frame(&cs, "event", ":event-type", "metadata",
	      "{\"usage\":{\"inputTokens\":90,\"outputTokens\":12,\"cacheReadInputTokens\":10},\"metrics\":{\"latencyMs\":5}}");
	cJSON *body = l->ops->assemble(l, cs.data, cs.len, &st, &e);
	struct llmreply r;
	memset(&r, 0, sizeof r);
	ok(body && l->ops->parse(l, body, &r, &e) == 0, "converse: a stream assembles into a reply: %s", e.msg);
	okstr(r.text, "Looking.", "converse: the text joined");
	ok(r.ncalls == 1 && r.calls[0].args && r.finish == FINISH_TOOLS, "converse: one call, finish tools");
	if (r.ncalls) {
		okstr(r.calls[0].id, "tu_1", "converse: the call's id");
		okstr(cJSON_GetStringValue(cJSON_GetObjectItem(r.calls[0].args, "command")), "echo a", "converse: input joined");
	}
	ok(r.usage.input == 100 && r.usage.output == 12 && r.usage.cached == 10 && st == 0, "converse: usage");
	llmreplyfree(&r);
	cJSON_Delete(body);
	struct buf cut = {0};
	bufadd(&cut, cs.data, cs.len);
	cut.len -= 3;
	ok(!l->ops->assemble(l, cut.data, cut.len, &st, &e) && strstr(e.msg, "cut short"), "converse: a cut frame: %s", e.msg);
	struct buf nostop = {0};
	frame(&nostop, "event", ":event-type", "messageStart", "{\"role\":\"assistant\"}");
	ok(!l->ops->assemble(l, nostop.data, nostop.len, &st, &e) && strstr(e.msg, "messageStop"),
	   "converse: a stream that ends before messageStop: %s", e.msg);
	static const struct {
		const char *type;
		int status;
	} exc[] = {{"throttlingException", 429}, {"serviceUnavailableException", 503}, {"modelStreamErrorException", 500},
	           {"internalServerException", 500}, {"validationException", 400}, {"somethingNewException", 500}};
	for (size_t i = 0; i < sizeof exc / sizeof *exc; i++) {
		struct buf x = {0};
		frame(&x, "event", ":event-type", "messageStart", "{\"role\":\"assistant\"}");
		frame(&x, "exception", ":exception-type", exc[i].type, "{\"message\":\"no luck\"}");
		st = 0;
		body = l->ops->assemble(l, x.data, x.len, &st, &e);
		const cJSON *er = cJSON_GetObjectItem(body, "error");
		ok(er && st == exc[i].status && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(er, "type")), exc[i].type) == 0 &&
		   strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(er, "message")), "no luck") == 0,
		   "converse: %s is an error body with status %d (got %d)", exc[i].type, exc[i].status, st);
		cJSON_Delete(body);
		buffree(&x);
	}
	char *url = xstrdup("https://h/model/anthropic.claude-x/converse");
	cJSON *req = cJSON_CreateObject();
	ok(l->ops->stream(l, req, &url) == 1 && strcmp(url, "https://h/model/anthropic.claude-x/converse-stream") == 0 &&
	   !cJSON_GetObjectItem(req, "stream"), "converse: streams to converse-stream, the body unchanged");
	free(url);
	cJSON_Delete(req);
	llmclose(l);

	/* --- InvokeModelWithResponseStream: base64 chunks of the Messages API's events --- */
	m.api = API_CHAT;
	ok(bedrockopen(&l, &m, 1, &e) == 0, "bedrock invoke open");
	struct buf iv = {0};
	chunk(&iv, "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}");
	chunk(&iv, "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read_file\",\"input\":{}}}");
	chunk(&iv, "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\\n\\\"a\"}}");
	chunk(&iv, "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\".txt\\\"}\"}}");
	chunk(&iv, "{\"type\":\"content_block_stop\",\"index\":0}");
	chunk(&iv, "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":15}}");
	chunk(&iv, "{\"type\":\"message_stop\",\"amazon-bedrock-invocationMetrics\":{\"inputTokenCount\":25}}");
	body = l->ops->assemble(l, iv.data, iv.len, &st, &e);
	memset(&r, 0, sizeof r);
	ok(body && l->ops->parse(l, body, &r, &e) == 0, "invoke: a stream assembles into a reply: %s", e.msg);
	ok(r.ncalls == 1 && r.calls[0].args && r.usage.input == 25 && r.usage.output == 15, "invoke: the call and usage");
	if (r.ncalls)
		okstr(cJSON_GetStringValue(cJSON_GetObjectItem(r.calls[0].args, "path")), "a.txt", "invoke: input joined");
	llmreplyfree(&r);
	cJSON_Delete(body);
	struct buf ix = {0};
	chunk(&ix, "{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[]}}");
	frame(&ix, "exception", ":exception-type", "throttlingException", "{\"message\":\"Too many tokens\"}");
	body = l->ops->assemble(l, ix.data, ix.len, &st, &e);
	ok(body && cJSON_GetObjectItem(body, "error") && st == 429, "invoke: throttlingException is a 429 error body");
	cJSON_Delete(body);
	struct buf nb = {0};
	frame(&nb, "event", ":event-type", "chunk", "{\"bytes\":\"not base64!\"}");
	ok(!l->ops->assemble(l, nb.data, nb.len, &st, &e) && e.msg[0], "invoke: bytes that are not base64 are refused");
	const char *ov = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
	body = l->ops->assemble(l, ov, strlen(ov), &st, &e);
	ok(body && st == 529, "anthropic's overloaded_error mid-stream is a 529 (got %d)", st);
	cJSON_Delete(body);
	url = xstrdup("https://h/model/anthropic.claude-x/invoke");
	req = cJSON_CreateObject();
	ok(l->ops->stream(l, req, &url) == 1 && strcmp(url, "https://h/model/anthropic.claude-x/invoke-with-response-stream") == 0,
	   "invoke: streams to invoke-with-response-stream");
	free(url);
	cJSON_Delete(req);
	llmclose(l);

	/* --- Vertex: streamRawPredict with stream: true --- */
	struct model v = {.name = "v", .provider = PROV_VERTEX, .model = "claude-x@1", .temperature = -1,
	                  .region = "us-east5", .project = "p"};
	ok(vertexopen(&l, &v, &e) == 0, "vertex open");
	url = xstrdup("https://h/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-x@1:rawPredict");
	req = cJSON_CreateObject();
	ok(l->ops->stream(l, req, &url) == 1 && strstr(url, "models/claude-x@1:streamRawPredict") &&
	   cJSON_IsTrue(cJSON_GetObjectItem(req, "stream")), "vertex: streams to :streamRawPredict with stream: true");
	free(url);
	cJSON_Delete(req);
	llmclose(l);

	/* --- Azure: OpenAI's chunks, with usage --- */
	struct model a = {.name = "a", .provider = PROV_AZURE, .model = "gpt", .temperature = -1,
	                  .base_url = "https://r.openai.azure.com", .deployment = "d"};
	ok(azureopen(&l, &a, &e) == 0, "azure open");
	req = cJSON_CreateObject();
	url = xstrdup("u");
	ok(l->ops->stream(l, req, &url) == 1 && cJSON_IsTrue(cJSON_GetObjectItem(req, "stream")) &&
	   cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(req, "stream_options"), "include_usage")) && !strcmp(url, "u"),
	   "azure: asks for a stream with usage");
	const char *ch = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
	                 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	                 "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n";
	body = l->ops->assemble(l, ch, strlen(ch), &st, &e);
	memset(&r, 0, sizeof r);
	ok(body && l->ops->parse(l, body, &r, &e) == 0 && r.text && !strcmp(r.text, "hi") && r.usage.input == 3,
	   "azure: chunks assemble into a reply");
	llmreplyfree(&r);
	cJSON_Delete(body);
	free(url);
	cJSON_Delete(req);
	llmclose(l);

	buffree(&b), buffree(&out), buffree(&bad), buffree(&mh), buffree(&ctl), buffree(&cs), buffree(&cut);
	buffree(&nostop), buffree(&iv), buffree(&ix), buffree(&nb);
	return tdone();
}
