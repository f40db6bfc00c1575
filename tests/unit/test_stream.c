/* test_stream: server-sent events, streamed answers assembled into the plain shape of each API,
 * and the providers' words for a request that does not fit the context window. */
#include <stdlib.h>
#include <string.h>
#include "t.h"
#include "../../llm/llm.h"
#include "../../llm/sse.h"

static int st; /* the status of an error in a stream, from assemble */

static int collect(void *ctx, const char *event, const char *data)
{
	struct buf *b = ctx;
	bufprintf(b, "[%s|%s]", event, data);
	return 0;
}

static char *sse(const char *text)
{
	struct buf b = {0};
	bufputs(&b, "");
	sseeach(text, strlen(text), collect, &b);
	return b.data;
}

/* A reply from a streamed body, parsed by the provider as a plain one. */
static int reply(const struct llmops *ops, struct llm *l, const char *text, struct llmreply *r, cJSON **body)
{
	struct err e = {0};
	memset(r, 0, sizeof *r);
	*body = ops->assemble(l, text, strlen(text), &st, &e);
	if (!*body)
		return -1;
	return ops->parse(l, *body, r, &e);
}

int main(void)
{
	char *s;
	/* sse: names, multi-line data, comments, CRLF, a last event without its blank line */
	s = sse(": hello\n\nevent: a\ndata: 1\n\ndata: x\ndata: y\r\n\r\nevent: b\ndata:2");
	okstr(s, "[a|1][|x\ny][b|2]", "sse events");
	free(s);
	s = sse("data: only\n\n\n\nid: 3\n\n");
	okstr(s, "[|only]", "sse: events without data are skipped");
	free(s);
	ok(ssebody("data: {}", 8) && ssebody("\nevent: x", 9) && ssebody(": ping", 6), "ssebody: streams");
	ok(!ssebody("{\"a\": 1}", 8) && !ssebody("", 0), "ssebody: JSON is not a stream");

	struct model m = {0};
	m.name = "m";
	m.model = "x";
	m.provider = PROV_OPENAI;
	struct llm *l = NULL;
	struct err e = {0};
	struct llmreply r;
	cJSON *body;

	/* OpenAI chat: text in pieces, a call whose arguments come in two chunks, usage last */
	ok(openaiopen(&l, &m, &e) == 0, "openai open");
	const char *chat =
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n"
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"shell\",\"arguments\":\"{\\\"comm\"}}]}}]}\n\n"
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"and\\\":\\\"ls\\\"}\"}}]}}]}\n\n"
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
		"data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5}}\n\n"
		"data: [DONE]\n\n";
	ok(reply(l->ops, l, chat, &r, &body) == 0, "openai: a stream assembles into a reply");
	okstr(r.text, "Hello", "openai: the text joined");
	ok(r.ncalls == 1 && r.calls[0].args, "openai: one call with its arguments");
	if (r.ncalls)
		okstr(cJSON_GetStringValue(cJSON_GetObjectItem(r.calls[0].args, "command")), "ls", "openai: arguments joined");
	ok(r.usage.input == 12 && r.usage.output == 5 && r.finish == FINISH_TOOLS, "openai: usage and finish");
	okstr(cJSON_GetStringValue(cJSON_GetObjectItem(body, "object")), "chat.completion", "openai: the plain shape");
	llmreplyfree(&r);
	cJSON_Delete(body);
	const char *serr = "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n";
	body = l->ops->assemble(l, serr, strlen(serr), &st, &e);
	ok(body && cJSON_GetObjectItem(body, "error"), "openai: an error in the stream is an error body");
	cJSON_Delete(body);
	struct err bad = {0};
	ok(!l->ops->assemble(l, "data: {nope\n\n", 13, &st, &bad) && bad.msg[0], "openai: a chunk that is not JSON is refused");
	cJSON *req = cJSON_CreateObject();
	ok(l->ops->stream(l, req, NULL) == 1 && cJSON_IsTrue(cJSON_GetObjectItem(req, "stream")) &&
	   cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(req, "stream_options"), "include_usage")),
	   "openai: asks for a stream with usage");
	cJSON_Delete(req);
	llmclose(l);

	/* Anthropic: message_start, text and tool_use blocks, input_json_delta, message_delta usage */
	m.provider = PROV_ANTHROPIC;
	ok(anthropicopen(&l, &m, &e) == 0, "anthropic open");
	const char *msgs =
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n"
		"event: ping\ndata: {\"type\":\"ping\"}\n\n"
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Look\"}}\n\n"
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ing\"}}\n\n"
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read_file\",\"input\":{}}}\n\n"
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"a\"}}\n\n"
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\".txt\\\"}\"}}\n\n"
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n"
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
	ok(reply(l->ops, l, msgs, &r, &body) == 0, "anthropic: a stream assembles into a reply");
	okstr(r.text, "Looking", "anthropic: the text joined");
	ok(r.ncalls == 1 && r.calls[0].args, "anthropic: one call");
	if (r.ncalls)
		okstr(cJSON_GetStringValue(cJSON_GetObjectItem(r.calls[0].args, "path")), "a.txt", "anthropic: input joined");
	ok(r.usage.input == 25 && r.usage.output == 15 && r.finish == FINISH_TOOLS, "anthropic: usage and stop reason");
	okstr(cJSON_GetStringValue(cJSON_GetObjectItem(body, "type")), "message", "anthropic: the plain shape");
	llmreplyfree(&r);
	cJSON_Delete(body);
	const char *over = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
	body = l->ops->assemble(l, over, strlen(over), &st, &e);
	ok(body && cJSON_GetObjectItem(body, "error"), "anthropic: an error event is an error body");
	cJSON_Delete(body);
	llmclose(l);

	/* Responses: the completed event carries the whole response */
	m.provider = PROV_OPENAI;
	m.api = API_RESPONSES;
	ok(responsesopen(&l, &m, &e) == 0, "responses open");
	const char *resp =
		"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r1\",\"status\":\"in_progress\",\"output\":[]}}\n\n"
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n"
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r1\",\"status\":\"completed\",\"output\":[{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"list_dir\",\"arguments\":\"{\\\"path\\\":\\\".\\\"}\"}],\"usage\":{\"input_tokens\":9,\"output_tokens\":3}}}\n\n";
	ok(reply(l->ops, l, resp, &r, &body) == 0, "responses: response.completed is the reply");
	ok(r.ncalls == 1 && r.usage.input == 9, "responses: its call and usage");
	llmreplyfree(&r);
	cJSON_Delete(body);
	struct err cut = {0};
	ok(!l->ops->assemble(l, "event: response.created\ndata: {}\n\n", 34, &st, &cut) && strstr(cut.msg, "response.completed"),
	   "responses: a stream cut before its end is refused");
	llmclose(l);

	/* the context window: the providers' words */
	static const struct {
		const char *body;
		int status;
		int64_t want;
	} win[] = {
		{"{\"error\":{\"message\":\"This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens.\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}", 400, 128000},
		{"{\"error\":{\"message\":\"Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 300000 tokens.\",\"code\":\"context_length_exceeded\"}}", 400, 272000},
		{"{\"error\":{\"message\":\"Your input exceeds the context window of this model. Please adjust your input and try again.\",\"code\":\"context_length_exceeded\"}}", 400, -1},
		{"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 208310 tokens > 200000 maximum\"}}", 400, 200000},
		{"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again\"}}", 400, 200000},
		{"{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size, try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":5000,\"n_ctx\":4096}}", 400, 4096},
		{"{\"object\":\"error\",\"message\":\"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).\",\"type\":\"BadRequestError\",\"code\":400}", 400, 8192},
		{"{\"message\":\"The model returned the following errors: prompt is too long: 210000 tokens > 200000 maximum\"}", 400, 200000},
		{"{\"error\":{\"message\":\"Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens\"}}", 400, 4096},
		{"{\"error\":{\"message\":\"max_tokens is too large: 99999. This model supports at most 16384 completion tokens\",\"code\":null}}", 400, 0},
		{"{\"error\":{\"message\":\"Rate limit reached\",\"code\":\"rate_limit_exceeded\"}}", 429, 0},
		{"{\"error\":{\"message\":\"maximum context length is 128000 tokens\"}}", 500, 0},
	};
	for (size_t i = 0; i < sizeof win / sizeof *win; i++) {
		cJSON *b = cJSON_Parse(win[i].body);
		int64_t got = llmwindowerror(win[i].status, b);
		ok(got == win[i].want, "window %zu: got %lld, want %lld", i, (long long)got, (long long)win[i].want);
		cJSON_Delete(b);
	}
	return tdone();
}
