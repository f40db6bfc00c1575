/* test_llm: request bodies and reply parsing of both HTTP providers against canned JSON, the retry
 * decisions, Retry-After parsing, opening clients (keys), and --model NAME=SPEC. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <curl/curl.h>
#include "../../llm/http.h"
#include "../../llm/catalog.h"
#include "../../llm/llm.h"
#include "../../llm/modelspec.h"
#include "t.h"

static cJSON *J(const char *text)
{
	cJSON *j = cJSON_Parse(text);
	if (!j)
		fprintf(stderr, "bad JSON in test: %s\n", text);
	return j;
}

/* The value at a path of object keys and array indexes ("messages/1/content/0/type"). */
static const cJSON *at(const cJSON *j, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *tok = strtok(buf, "/"); tok && j; tok = strtok(NULL, "/")) {
		if (cJSON_IsArray(j))
			j = cJSON_GetArrayItem(j, atoi(tok));
		else
			j = cJSON_GetObjectItemCaseSensitive(j, tok);
	}
	return j;
}

static const char *str(const cJSON *j, const char *path)
{
	const char *s = cJSON_GetStringValue(at(j, path));
	return s ? s : "(missing)";
}

static double num(const cJSON *j, const char *path)
{
	const cJSON *v = at(j, path);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static int has(const struct strv *h, const char *line)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->v[i], line) == 0)
			return 1;
	return 0;
}

/* A conversation of every shape: two calls in one reply (one with arguments that are not JSON),
 * their answers (one an error), a text-only reply and the nudge after it. */
static const char convo[] =
	"[{\"role\":\"user\",\"content\":\"Check the data.\"},"
	"{\"role\":\"assistant\",\"content\":\"Looking.\",\"tool_calls\":["
	"{\"id\":\"c1\",\"name\":\"read_file\",\"arguments\":{\"path\":\"a.txt\"}},"
	"{\"id\":\"c2\",\"name\":\"list_dir\",\"arguments\":\"{not json\"}]},"
	"{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"name\":\"read_file\",\"content\":\"hello\"},"
	"{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"name\":\"list_dir\",\"content\":\"denied\",\"is_error\":true},"
	"{\"role\":\"assistant\",\"content\":\"Thinking.\"},"
	"{\"role\":\"user\",\"content\":\"Continue.\"},"
	"{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
	"{\"id\":\"c3\",\"name\":\"final_result\",\"arguments\":{\"verdict\":\"ok\"}}]},"
	"{\"role\":\"tool\",\"tool_call_id\":\"c3\",\"name\":\"final_result\",\"content\":\"rejected\"}]";

static const char tools[] =
	"[{\"name\":\"read_file\",\"description\":\"Read a file\",\"parameters\":{\"type\":\"object\","
	"\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}},"
	"{\"name\":\"final_result\",\"parameters\":{\"type\":\"object\"}}]";

static struct model model(enum provider p, const char *base)
{
	struct model m = {0};
	m.name = (char *)"default";
	m.provider = p;
	m.model = (char *)(p == PROV_OPENAI ? "gpt-test" : "claude-test");
	m.base_url = (char *)base;
	m.temperature = -1;
	m.timeout_ms = 5000;
	return m;
}

static void openairequest(void)
{
	struct model md = model(PROV_OPENAI, NULL);
	struct llm *l;
	struct err e = {0};
	ok(openaiopen(&l, &md, &e) == 0, "openaiopen");
	l->model = &md;
	l->apikey = xstrdup("sk-test");
	cJSON *msgs = J(convo), *t = J(tools), *b = NULL;
	struct chat c = {"Be brief.", t, msgs, 0, NULL, 0};
	char *url = NULL;
	struct strv h = {0};
	ok(l->ops->request(l, &c, &url, &h, &b, &e) == 0, "openai request: %s", e.msg);
	okstr(url, "https://api.openai.com/v1/chat/completions", "openai default url");
	ok(has(&h, "Authorization: Bearer sk-test"), "bearer header");
	okstr(str(b, "model"), "gpt-test", "model");
	okstr(str(b, "messages/0/role"), "system", "system first");
	okstr(str(b, "messages/0/content"), "Be brief.", "system text");
	okstr(str(b, "messages/1/role"), "user", "user");
	okstr(str(b, "tools/0/type"), "function", "tools[].type");
	okstr(str(b, "tools/0/function/name"), "read_file", "tools[].function.name");
	okstr(str(b, "tools/0/function/parameters/type"), "object", "tools[].function.parameters");
	okstr(str(b, "messages/2/tool_calls/0/type"), "function", "tool_calls[].type");
	okstr(str(b, "messages/2/tool_calls/0/id"), "c1", "tool_calls[].id");
	okstr(str(b, "messages/2/tool_calls/0/function/arguments"), "{\"path\":\"a.txt\"}", "arguments as a string");
	okstr(str(b, "messages/2/tool_calls/1/function/arguments"), "{not json", "raw arguments kept");
	okstr(str(b, "messages/3/role"), "tool", "tool message");
	okstr(str(b, "messages/3/tool_call_id"), "c1", "tool_call_id 1");
	okstr(str(b, "messages/4/tool_call_id"), "c2", "tool_call_id 2 in order");
	ok(!at(b, "messages/4/is_error"), "no is_error on the OpenAI wire");
	ok(cJSON_IsNull(at(b, "messages/7/content")), "assistant with only calls: content null");
	ok(num(b, "max_completion_tokens") == 4096 && !at(b, "max_tokens"),
	   "a model the catalog does not know: a 4096 cap, as max_completion_tokens on OpenAI itself");
	ok(!at(b, "temperature") && !at(b, "reasoning_effort"), "unset knobs not sent");
	cJSON_Delete(b);
	free(url);
	strvfree(&h);

	/* A compatible server: base_url with a trailing slash, max_tokens, temperature, no key. */
	md.base_url = (char *)"http://127.0.0.1:8080/v1/";
	md.max_output_tokens = 500;
	md.temperature = 0.2;
	free(l->apikey);
	l->apikey = NULL;
	ok(l->ops->request(l, &c, &url, &h, &b, &e) == 0, "compatible request");
	okstr(url, "http://127.0.0.1:8080/v1/chat/completions", "base_url joined");
	ok(h.n == 0, "no Authorization without a key");
	ok(num(b, "max_tokens") == 500, "max_tokens: the model's max_output_tokens (%g)", num(b, "max_tokens"));
	ok(num(b, "temperature") > 0.19 && num(b, "temperature") < 0.21, "temperature");
	cJSON_Delete(b);
	free(url);
	strvfree(&h);
	md.base_url = NULL;
	b = llmbody(l, &c, &e);
	ok(num(b, "max_completion_tokens") == 500, "OpenAI itself: max_completion_tokens");
	cJSON_Delete(b);
	/* A reasoning model behind a compatible server still gets max_completion_tokens, and its effort;
	 * max_tokens_field overrides. */
	md.base_url = (char *)"http://127.0.0.1:8080/v1";
	md.model = (char *)"o3-mini";
	md.reasoning_effort = (char *)"low";
	b = llmbody(l, &c, &e);
	ok(num(b, "max_completion_tokens") == 500 && !at(b, "max_tokens"), "o3-mini: max_completion_tokens");
	okstr(str(b, "reasoning_effort"), "low", "reasoning_effort sent");
	cJSON_Delete(b);
	md.cap_field = 1;
	b = llmbody(l, &c, &e);
	ok(num(b, "max_tokens") == 500 && !at(b, "max_completion_tokens"), "max_tokens_field: max_tokens");
	cJSON_Delete(b);
	md.cap_field = 0;
	md.reasoning_effort = NULL;
	md.base_url = NULL;
	md.model = (char *)"gpt-test";
	cJSON_Delete(msgs);
	cJSON_Delete(t);
	llmclose(l);
}

static void openaiparse(void)
{
	struct model md = model(PROV_OPENAI, NULL);
	struct llm *l;
	struct err e = {0};
	struct llmreply r;
	openaiopen(&l, &md, &e);
	cJSON *b = J("{\"choices\":[{\"index\":0,\"finish_reason\":\"tool_calls\",\"message\":{\"role\":\"assistant\","
	             "\"content\":null,\"tool_calls\":["
	             "{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"x\\\"}\"}},"
	             "{\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"shell\",\"arguments\":\"{bad\"}}]}}],"
	             "\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20,\"prompt_tokens_details\":{\"cached_tokens\":40},"
	             "\"completion_tokens_details\":{\"reasoning_tokens\":7}}}");
	memset(&r, 0, sizeof r);
	ok(l->ops->parse(l, b, &r, &e) == 0, "parse tool calls");
	ok(r.ncalls == 2 && r.finish == FINISH_TOOLS && !r.text, "two calls, finish tools");
	okstr(r.calls[0].id, "call_a", "call id");
	okstr(str(r.calls[0].args, "path"), "x", "arguments parsed");
	ok(!r.calls[1].args, "invalid arguments: args NULL");
	okstr(r.calls[1].rawargs, "{bad", "invalid arguments kept raw");
	ok(r.usage.input == 100 && r.usage.output == 20 && r.usage.cached == 40 && r.usage.reasoning == 7, "usage");
	okstr(r.finish_raw, "tool_calls", "finish raw");
	llmreplyfree(&r);
	cJSON_Delete(b);

	b = J("{\"choices\":[{\"finish_reason\":\"stop\",\"message\":{\"content\":null,\"refusal\":\"I can't help with that.\"}}]}");
	l->ops->parse(l, b, &r, &e);
	ok(r.finish == FINISH_REFUSAL, "refusal");
	okstr(r.text, "I can't help with that.", "refusal text");
	llmreplyfree(&r);
	cJSON_Delete(b);

	/* A refusal that came with text is a refusal all the same. */
	b = J("{\"choices\":[{\"finish_reason\":\"stop\",\"message\":{\"content\":\"Sure, here\",\"refusal\":\"No.\"}}]}");
	l->ops->parse(l, b, &r, &e);
	ok(r.finish == FINISH_REFUSAL, "refusal with text");
	okstr(r.text, "No.", "the refusal is what the job reports");
	llmreplyfree(&r);
	cJSON_Delete(b);

	b = J("{\"choices\":[{\"finish_reason\":\"length\",\"message\":{\"content\":\"\",\"tool_calls\":["
	      "{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"write_file\",\"arguments\":\"{\\\"path\\\":\\\"a\\\"}\"}}]}}]}");
	l->ops->parse(l, b, &r, &e);
	ok(r.finish == FINISH_LENGTH, "length");
	ok(r.ncalls == 1 && !r.calls[0].args, "a call in a truncated reply is never runnable");
	llmreplyfree(&r);
	cJSON_Delete(b);

	b = J("{\"choices\":[{\"finish_reason\":\"content_filter\",\"message\":{\"content\":\"partial\"}}]}");
	l->ops->parse(l, b, &r, &e);
	ok(r.finish == FINISH_REFUSAL, "content_filter is a refusal");
	llmreplyfree(&r);
	cJSON_Delete(b);

	/* Compatible servers: no id, arguments as an object, content as parts, no usage. */
	b = J("{\"choices\":[{\"finish_reason\":\"stop\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
	      "{\"type\":\"text\",\"text\":\"b\"}],\"tool_calls\":[{\"function\":{\"name\":\"list_dir\",\"arguments\":{\"path\":\".\"}}}]}}]}");
	ok(l->ops->parse(l, b, &r, &e) == 0, "lenient parse");
	okstr(r.text, "ab", "content parts joined");
	ok(r.ncalls == 1 && r.calls[0].id && *r.calls[0].id, "an id is made up when missing");
	okstr(str(r.calls[0].args, "path"), ".", "object arguments taken as they are");
	ok(r.finish == FINISH_TOOLS && r.usage.input == 0, "finish tools when calls came with stop");
	llmreplyfree(&r);
	cJSON_Delete(b);

	/* Found by fuzzing: usage a hostile server makes huge or negative is 0, not undefined. */
	b = J("{\"choices\":[{\"message\":{\"content\":\"x\"}}],\"usage\":{\"prompt_tokens\":1e300,"
	      "\"completion_tokens\":-5,\"prompt_tokens_details\":{\"cached_tokens\":-1e300}}}");
	ok(l->ops->parse(l, b, &r, &e) == 0 && r.usage.input == 0 && r.usage.output == 0 && r.usage.cached == 0,
	   "absurd usage counts as 0");
	llmreplyfree(&r);
	cJSON_Delete(b);

	b = J("{\"error\":{\"message\":\"boom\"}}");
	ok(l->ops->parse(l, b, &r, &e) < 0, "no choices is an error");
	llmreplyfree(&r);
	cJSON_Delete(b);
	llmclose(l);
}

/* Check what the Messages API requires of a body: alternating roles from user, and every
 * tool_use answered first thing in the next message, in order. */
static int anthropicvalid(const cJSON *b)
{
	const cJSON *m, *prev = NULL;
	if (!cJSON_IsNumber(at(b, "max_tokens")) || !cJSON_IsString(at(b, "model")))
		return 0;
	cJSON_ArrayForEach(m, at(b, "messages"))
	{
		const char *role = str(m, "role");
		if (!prev && strcmp(role, "user") != 0)
			return 0;
		if (prev && strcmp(role, str(prev, "role")) == 0)
			return 0;
		if (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0)
			return 0;
		if (prev) {
			const cJSON *blk;
			int k = 0;
			cJSON_ArrayForEach(blk, at(prev, "content"))
			{
				if (strcmp(str(blk, "type"), "tool_use") != 0)
					continue;
				const cJSON *a = cJSON_GetArrayItem(at(m, "content"), k++);
				if (strcmp(str(a, "type"), "tool_result") != 0 || strcmp(str(a, "tool_use_id"), str(blk, "id")) != 0)
					return 0;
			}
		}
		prev = m;
	}
	return prev != NULL;
}

static void anthropicrequest(void)
{
	struct model md = model(PROV_ANTHROPIC, NULL);
	struct llm *l;
	struct err e = {0};
	ok(anthropicopen(&l, &md, &e) == 0, "anthropicopen");
	l->apikey = xstrdup("sk-ant-test");
	cJSON *msgs = J(convo), *t = J(tools), *b = NULL;
	struct chat c = {"Be brief.", t, msgs, 0, NULL, 0};
	char *url = NULL;
	struct strv h = {0};
	ok(l->ops->request(l, &c, &url, &h, &b, &e) == 0, "anthropic request: %s", e.msg);
	okstr(url, "https://api.anthropic.com/v1/messages", "anthropic default url");
	ok(has(&h, "x-api-key: sk-ant-test"), "x-api-key header");
	ok(has(&h, "anthropic-version: 2023-06-01"), "anthropic-version header");
	ok(num(b, "max_tokens") == 4096, "max_tokens always sent, 4096 for a model the catalog does not know");
	okstr(str(b, "system"), "Be brief.", "system at the top level");
	ok(anthropicvalid(b), "roles alternate; every tool_use answered first in the next message");
	okstr(str(b, "messages/0/content/0/text"), "Check the data.", "user text block");
	okstr(str(b, "messages/1/content/0/text"), "Looking.", "assistant text first");
	okstr(str(b, "messages/1/content/1/type"), "tool_use", "then tool_use");
	okstr(str(b, "messages/1/content/1/input/path"), "a.txt", "tool_use input is the object");
	ok(cJSON_IsObject(at(b, "messages/1/content/2/input")) && !at(b, "messages/1/content/2/input")->child,
	   "input that was not JSON becomes {}");
	okstr(str(b, "messages/2/role"), "user", "tool results in a user message");
	okstr(str(b, "messages/2/content/0/tool_use_id"), "c1", "first result");
	okstr(str(b, "messages/2/content/1/tool_use_id"), "c2", "second result, in order, same message");
	ok(cJSON_IsTrue(at(b, "messages/2/content/1/is_error")) && !at(b, "messages/2/content/0/is_error"), "is_error");
	okstr(str(b, "messages/3/content/0/text"), "Thinking.", "text-only assistant");
	okstr(str(b, "messages/4/content/0/text"), "Continue.", "nudge");
	ok(at(b, "messages/5/content/0") && !at(b, "messages/5/content/1"), "assistant with a null content: tool_use only");
	ok(cJSON_GetArraySize(at(b, "messages")) == 7, "seven messages (%d)", cJSON_GetArraySize(at(b, "messages")));
	okstr(str(b, "messages/6/content/0/cache_control/type"), "ephemeral", "cache breakpoint on the last block");
	ok(!at(b, "messages/4/content/0/cache_control"), "and only there");
	okstr(str(b, "tools/0/name"), "read_file", "tools[].name");
	okstr(str(b, "tools/0/input_schema/type"), "object", "tools[].input_schema");
	okstr(str(b, "tools/0/description"), "Read a file", "description");
	ok(!at(b, "tools/1/description"), "no empty description");
	ok(!at(b, "tools/0/type"), "client tools carry no type");
	cJSON_Delete(b);
	b = NULL;
	free(url);
	strvfree(&h);
	cJSON_Delete(msgs);

	/* An empty assistant turn is left out and the user messages around it merge. */
	msgs = J("[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":\"  \"},"
	         "{\"role\":\"user\",\"content\":\"b\"},{\"role\":\"assistant\",\"content\":\"ok\"},{\"role\":\"user\",\"content\":\"\"}]");
	c.messages = msgs;
	md.base_url = (char *)"http://127.0.0.1:9/v1/";
	md.max_output_tokens = 1000;
	ok(l->ops->request(l, &c, &url, &h, &b, &e) == 0, "merge request");
	okstr(url, "http://127.0.0.1:9/v1/messages", "base_url ending in /v1");
	ok(num(b, "max_tokens") == 1000, "max_tokens from the model");
	ok(anthropicvalid(b) && cJSON_GetArraySize(at(b, "messages")) == 3, "merged into user, assistant, user");
	okstr(str(b, "messages/0/content/1/text"), "b", "merged user text");
	okstr(str(b, "messages/2/content/0/text"), "(empty)", "an empty user text is never sent empty");
	cJSON_Delete(b);
	b = NULL;
	free(url);
	strvfree(&h);
	md.base_url = (char *)"https://proxy.example";
	b = llmbody(l, &c, &e);
	ok(b != NULL, "llmbody");
	cJSON_Delete(b);
	cJSON_Delete(msgs);

	/* What the API would answer 400 to fails here, clearly. */
	msgs = J("[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
	         "{\"id\":\"x1\",\"name\":\"read_file\",\"arguments\":{}}]},{\"role\":\"user\",\"content\":\"b\"}]");
	c.messages = msgs;
	b = llmbody(l, &c, &e);
	ok(!b && strstr(e.msg, "x1"), "an unanswered tool_use is refused: %s", e.msg);
	cJSON_Delete(msgs);
	msgs = J("[{\"role\":\"assistant\",\"content\":\"hi\"}]");
	c.messages = msgs;
	b = llmbody(l, &c, &e);
	ok(!b && strstr(e.msg, "start with a user"), "must start with user: %s", e.msg);
	cJSON_Delete(msgs);
	msgs = J("[{\"role\":\"user\",\"content\":\"a\"}]");
	c.messages = msgs;
	md.temperature = 1.5;
	b = llmbody(l, &c, &e);
	ok(!b && strstr(e.msg, "temperature"), "temperature above 1 refused");
	cJSON_Delete(msgs);
	cJSON_Delete(t);
	llmclose(l);
}

static void anthropicparse(void)
{
	struct model md = model(PROV_ANTHROPIC, NULL);
	struct llm *l;
	struct err e = {0};
	struct llmreply r;
	anthropicopen(&l, &md, &e);
	cJSON *b = J("{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":["
	             "{\"type\":\"thinking\",\"thinking\":\"hmm\",\"signature\":\"s\"},"
	             "{\"type\":\"text\",\"text\":\"Reading both.\"},"
	             "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read_file\",\"input\":{\"path\":\"a\"}},"
	             "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"read_file\",\"input\":{\"path\":\"b\"}}],"
	             "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":60,\"output_tokens\":12,"
	             "\"cache_read_input_tokens\":40,\"cache_creation_input_tokens\":5}}");
	memset(&r, 0, sizeof r);
	ok(l->ops->parse(l, b, &r, &e) == 0, "parse tool_use");
	okstr(r.text, "Reading both.", "text, thinking left out");
	ok(r.ncalls == 2 && r.finish == FINISH_TOOLS, "two calls, finish tools");
	okstr(r.calls[1].id, "toolu_2", "second id");
	okstr(str(r.calls[1].args, "path"), "b", "second input");
	okstr(r.calls[0].rawargs, "{\"path\":\"a\"}", "raw arguments");
	ok(r.usage.input == 105 && r.usage.cached == 40 && r.usage.output == 12 && r.usage.reasoning == 0,
	   "usage normalised: input includes cache reads and writes (%lld)", (long long)r.usage.input);
	llmreplyfree(&r);
	cJSON_Delete(b);
	static const struct {
		const char *stop;
		int calls;
		enum finish want;
	} cases[] = {
		{"end_turn", 0, FINISH_STOP},       {"stop_sequence", 0, FINISH_STOP},
		{"max_tokens", 0, FINISH_LENGTH},   {"max_tokens", 1, FINISH_LENGTH},
		{"refusal", 0, FINISH_REFUSAL},     {"pause_turn", 0, FINISH_OTHER},
		{"model_context_window_exceeded", 0, FINISH_CONTEXT},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *text = xasprintf("{\"content\":[{\"type\":\"text\",\"text\":\"t\"}%s],\"stop_reason\":\"%s\"}",
		                       cases[i].calls ? ",{\"type\":\"tool_use\",\"id\":\"u\",\"name\":\"write_file\",\"input\":{\"path\":\"p\"}}" : "",
		                       cases[i].stop);
		b = J(text);
		ok(l->ops->parse(l, b, &r, &e) == 0 && r.finish == cases[i].want, "stop_reason %s -> %s", cases[i].stop,
		   finishname(r.finish));
		okstr(r.finish_raw, cases[i].stop, "raw stop_reason kept");
		if (cases[i].calls)
			ok(r.ncalls == 1 && !r.calls[0].args, "a tool_use cut off by max_tokens is never runnable");
		llmreplyfree(&r);
		cJSON_Delete(b);
		free(text);
	}
	/* Found by fuzzing: the sum of huge counts overflowed. */
	b = J("{\"content\":[],\"usage\":{\"input_tokens\":9e18,\"cache_read_input_tokens\":9e18,"
	      "\"output_tokens\":1e300}}");
	ok(l->ops->parse(l, b, &r, &e) == 0 && r.usage.input == 0 && r.usage.output == 0, "absurd usage counts as 0");
	llmreplyfree(&r);
	cJSON_Delete(b);
	b = J("{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}");
	ok(l->ops->parse(l, b, &r, &e) < 0, "an error body is not a reply");
	llmreplyfree(&r);
	cJSON_Delete(b);
	llmclose(l);
}

static void retries(void)
{
	int retry[] = {0, 408, 409, 429, 500, 502, 503, 504, 529};
	int never[] = {400, 401, 403, 404, 422, 413};
	for (size_t i = 0; i < sizeof retry / sizeof *retry; i++)
		ok(llmretryable(retry[i], -1), "%d is retried", retry[i]);
	for (size_t i = 0; i < sizeof never / sizeof *never; i++)
		ok(!llmretryable(never[i], -1), "%d is never retried", never[i]);
	ok(!llmretryable(503, 0), "x-should-retry: false wins");
	ok(llmretryable(400, 1), "x-should-retry: true wins");
	ok(llmbackoff(1000, 0, 0.5) == 1000, "retry-after obeyed");
	ok(llmbackoff(60000, 3, 0.5) == 60000, "up to 60 s");
	ok(llmbackoff(60001, 0, 0) == 500, "over 60 s: backoff instead");
	ok(llmbackoff(0, 0, 0) == 500 && llmbackoff(-1, 0, 0) == 500, "0 or absent: backoff");
	int64_t want[] = {500, 1000, 2000, 4000, 8000, 8000, 8000};
	for (int n = 0; n < 7; n++)
		ok(llmbackoff(-1, n, 0) == want[n], "backoff %d = %lld", n, (long long)llmbackoff(-1, n, 0));
	ok(llmbackoff(-1, 0, 0.999999) >= 375 && llmbackoff(-1, 0, 0.999999) <= 376, "jitter takes off at most 25%%");
	ok(llmbackoff(-1, 40, 0.5) == 7000, "no overflow at high n");

	time_t now = time(NULL);
	ok(httpretryafter("1", now) == 1000, "retry-after seconds");
	ok(httpretryafter("1.5", now) == 1500, "retry-after fractional seconds");
	ok(httpretryafter("abc", now) == -1, "retry-after garbage");
	char date[64];
	time_t later = now + 5;
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime(&later));
	ok(httpretryafter(date, now) == 5000, "retry-after HTTP date: %s -> %lld", date, (long long)httpretryafter(date, now));
	ok(httpretryafter("Wed, 21 Oct 2015 07:28:00 GMT", now) == 0, "a date in the past waits 0");
}

static void opening(void)
{
	struct model md = model(PROV_OPENAI, NULL);
	struct secrets sec = {0};
	struct llm *l = NULL;
	struct err e = {0};
	unsetenv("OPENAI_API_KEY");
	ok(llmopen(&l, &md, &sec, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, "OPENAI_API_KEY"),
	   "OpenAI without a key: its SDK's variable named: %s", e.msg);
	setenv("OPENAI_API_KEY", "sk-default-123456", 1);
	ok(llmopen(&l, &md, &sec, &e) == 0 && l->apikey && strcmp(l->apikey, "sk-default-123456") == 0, "default key");
	ok(sec.values.n == 1, "the key is a secret");
	llmclose(l);
	md.base_url = (char *)"http://127.0.0.1:8080/v1";
	ok(llmopen(&l, &md, &sec, &e) == 0 && !l->apikey, "a base_url gets no key unless api_key_env names one");
	llmclose(l);
	md.api_key_env = (char *)"NS_TEST_KEY";
	setenv("NS_TEST_KEY", "bad\r\nX-Evil: 1", 1);
	ok(llmopen(&l, &md, &sec, &e) < 0 && strstr(e.msg, "control character"), "a key with CR LF refused");
	ok(!strstr(e.msg, "Evil"), "without showing it");
	unsetenv("NS_TEST_KEY");
	ok(llmopen(&l, &md, &sec, &e) < 0 && strstr(e.msg, "NS_TEST_KEY"), "named variable unset");
	md.provider = PROV_ANTHROPIC;
	md.base_url = NULL;
	md.api_key_env = NULL;
	unsetenv("ANTHROPIC_API_KEY");
	ok(llmopen(&l, &md, &sec, &e) < 0 && strstr(e.msg, "ANTHROPIC_API_KEY"), "Anthropic: its variable");
	secretsfree(&sec);
	unsetenv("OPENAI_API_KEY");

	/* Failing fast against a port nobody listens on: one attempt with retries 0; the message
	 * never holds the key. */
	md = model(PROV_OPENAI, "http://127.0.0.1:9/v1");
	md.api_key_env = (char *)"NS_TEST_KEY";
	setenv("NS_TEST_KEY", "sk-never-shown-42", 1);
	struct secrets s2 = {0};
	ok(llmopen(&l, &md, &s2, &e) == 0, "open");
	cJSON *msgs = J("[{\"role\":\"user\",\"content\":\"sk-never-shown-42\"}]");
	struct chat c = {"", NULL, msgs, 0, NULL, 0};
	struct llmreply r;
	struct exchange x;
	ok(llmcomplete(l, &c, &r, &x, &e) < 0 && x.attempts == 1, "connection refused, retries 0: one attempt");
	ok(strstr(e.msg, "retries: 0") && !strstr(e.msg, "sk-never"), "message: %s", e.msg);
	ok(strlen(x.digest) == 64, "request digest recorded");
	char dg[65] = "";
	ok(llmdigest(l, &c, dg, &e) == 0 && strcmp(dg, x.digest) == 0, "llmdigest names the same request");
	exchangefree(&x);
	llmreplyfree(&r);
	cJSON_Delete(msgs);
	llmclose(l);
	secretsfree(&s2);
	unsetenv("NS_TEST_KEY");
}

static void scripted(void)
{
	struct model md = model(PROV_SCRIPTED, NULL);
	md.replies = J("[{\"text\":\"hi\"},{\"tool_calls\":[{\"name\":\"final_result\",\"arguments\":{\"v\":1}}]}]");
	struct llm *l;
	struct err e = {0};
	ok(llmopen(&l, &md, NULL, &e) == 0, "scripted open");
	cJSON *msgs = J("[{\"role\":\"user\",\"content\":\"go\"}]");
	struct chat c = {"sys", NULL, msgs, 0, NULL, 0};
	struct llmreply r;
	struct exchange x;
	ok(llmcomplete(l, &c, &r, &x, &e) == 0 && r.text && strcmp(r.text, "hi") == 0 && r.finish == FINISH_STOP, "reply 1");
	char dg[65] = "";
	ok(strlen(x.digest) == 64 && llmdigest(l, &c, dg, &e) == 0 && strcmp(dg, x.digest) == 0, "local digest");
	exchangefree(&x);
	llmreplyfree(&r);
	ok(llmcomplete(l, &c, &r, &x, &e) == 0 && r.ncalls == 1 && r.finish == FINISH_TOOLS, "reply 2");
	ok(r.calls[0].id && r.calls[0].args && strcmp(r.calls[0].rawargs, "{\"v\":1}") == 0, "call with id and arguments");
	exchangefree(&x);
	llmreplyfree(&r);
	ok(llmcomplete(l, &c, &r, &x, &e) < 0 && strstr(e.msg, "ran out"), "replies run out: %s", e.msg);
	exchangefree(&x);
	llmreplyfree(&r);
	cJSON_Delete(msgs);
	cJSON_Delete(md.replies);
	llmclose(l);
}

static void *interrupter(void *arg)
{
	(void)arg;
	struct timespec t = {0, 200 * 1000000};
	nanosleep(&t, NULL);
	llminterrupt();
	return NULL;
}

/* A server that accepts and never answers; the interrupt must end the call, and no retry follows. */
static void interrupt(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t n = sizeof a;
	ok(bind(s, (struct sockaddr *)&a, n) == 0 && listen(s, 8) == 0 && getsockname(s, (struct sockaddr *)&a, &n) == 0,
	   "listen");
	char *base = xasprintf("http://127.0.0.1:%d/v1", ntohs(a.sin_port));
	struct model md = model(PROV_OPENAI, base);
	md.retries = 5;
	md.timeout_ms = 60000;
	struct llm *l;
	struct err e = {0};
	llmopen(&l, &md, NULL, &e);
	cJSON *msgs = J("[{\"role\":\"user\",\"content\":\"go\"}]");
	struct chat c = {"", NULL, msgs, 0, NULL, 0};
	struct llmreply r;
	struct exchange x;
	pthread_t th;
	pthread_create(&th, NULL, interrupter, NULL);
	int rc = llmcomplete(l, &c, &r, &x, &e);
	pthread_join(th, NULL);
	ok(rc < 0 && x.attempts == 1 && strstr(e.msg, "interrupted"), "interrupted, not retried: %s (%d attempts)", e.msg,
	   x.attempts);
	exchangefree(&x);
	llmreplyfree(&r);
	ok(llmcomplete(l, &c, &r, &x, &e) < 0 && strstr(e.msg, "interrupted"), "and no new call starts");
	exchangefree(&x);
	llmreplyfree(&r);
	cJSON_Delete(msgs);
	llmclose(l);
	free(base);
	close(s);
}

static struct manifest onemodel(void)
{
	struct manifest m;
	memset(&m, 0, sizeof m);
	m.nmodels = 2;
	m.models = xcalloc(2, sizeof *m.models);
	m.models[0].name = xstrdup("default");
	m.models[0].provider = PROV_OPENAI;
	m.models[0].model = xstrdup("gpt-4.1");
	m.models[0].api_key_env = xstrdup("MY_OPENAI");
	m.models[0].temperature = 0.5;
	m.models[0].timeout_ms = 30000;
	m.models[0].retries = 4;
	m.models[1].name = xstrdup("claude");
	m.models[1].provider = PROV_ANTHROPIC;
	m.models[1].model = xstrdup("claude-sonnet-4-5");
	m.models[1].temperature = -1;
	return m;
}

static void specs(void)
{
	struct manifest m = onemodel();
	struct err e = {0};
	struct model *d = &m.models[0];
	ok(modelspec(&m, "default=openai:gpt-4.1-mini", &e) == 0, "openai:MODEL: %s", e.msg);
	okstr(d->model, "gpt-4.1-mini", "model");
	ok(d->provider == PROV_OPENAI && !d->base_url, "provider, no url");
	okstr(d->api_key_env, "MY_OPENAI", "same endpoint keeps api_key_env");
	ok(d->retries == 4 && d->timeout_ms == 30000 && d->temperature == 0.5, "knobs kept");
	ok(modelspec(&m, "default=openai:qwen2.5:7b@http://127.0.0.1:11434/v1", &e) == 0, "@URL");
	okstr(d->model, "qwen2.5:7b", "a model name with a colon");
	okstr(d->base_url, "http://127.0.0.1:11434/v1", "base_url");
	ok(!d->api_key_env, "a new URL gets no key");
	ok(modelspec(&m, "default=openai:m@https://h.example/v1?a=1,2,key=LOCAL_KEY,retries=0,timeout=2s,"
	                 "max_output_tokens=77,temperature=0",
	             &e) == 0,
	   "options: %s", e.msg);
	okstr(d->base_url, "https://h.example/v1?a=1,2", "a comma in the URL that is not an option");
	okstr(d->api_key_env, "LOCAL_KEY", "key=");
	ok(d->retries == 0 && d->timeout_ms == 2000 && d->max_output_tokens == 77 && d->temperature == 0, "options applied");
	ok(modelspec(&m, "default=anthropic:claude-haiku-4-5", &e) == 0, "anthropic");
	ok(d->provider == PROV_ANTHROPIC && !d->api_key_env && d->temperature < 0, "provider changed: key and temperature reset");
	ok(d->max_output_tokens == 77, "max_output_tokens kept");
	okstr(d->name, "default", "name");
	okstr(m.models[1].model, "claude-sonnet-4-5", "other model untouched");

	char path[] = "/tmp/ns-llm-replies.XXXXXX";
	int fd = mkstemp(path);
	const char *yaml = "- text: hello\n- tool_calls:\n    - { name: final_result, arguments: { verdict: ok } }\n";
	ok(write(fd, yaml, strlen(yaml)) == (ssize_t)strlen(yaml), "write replies");
	close(fd);
	char *arg = xasprintf("default=scripted:%s", path);
	ok(modelspec(&m, arg, &e) == 0, "scripted:FILE: %s", e.msg);
	ok(d->provider == PROV_SCRIPTED && cJSON_GetArraySize(d->replies) == 2, "replies loaded");
	okstr(str(d->replies, "1/tool_calls/0/arguments/verdict"), "ok", "reply content");
	free(arg);
	fd = open(path, O_WRONLY | O_TRUNC);
	yaml = "replies:\n  - { text: hi, oops: 1 }\n";
	ok(write(fd, yaml, strlen(yaml)) == (ssize_t)strlen(yaml), "write bad replies");
	close(fd);
	arg = xasprintf("default=scripted:%s", path);
	ok(modelspec(&m, arg, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, "oops"), "bad reply named: %s", e.msg);
	ok(d->provider == PROV_SCRIPTED && cJSON_GetArraySize(d->replies) == 2, "a failed override changes nothing");
	free(arg);
	unlink(path);

	static const char *const bad[][2] = {
		{"defualt=openai:x", "no model 'defualt'"},
		{"=openai:x", "NAME=SPEC"},
		{"default", "NAME=SPEC"},
		{"default=gemini:x", "unknown provider"},
		{"default=openai:", "no model name"},
		{"default=openai:@http://h", "no model name"},
		{"default=scripted:", "needs a file"},
		{"default=scripted:/nonexistent/r.yaml", "nonexistent"},
		{"default=openai:x,retries=-1", "retries=-1"},
		{"default=openai:x,timeout=soon", "timeout=soon"},
		{"default=openai:x,key=not a name", "key=not a name"},
		{"default=openai:x,temperature=3", "temperature=3"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&e, 0, sizeof e);
		ok(modelspec(&m, bad[i][0], &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, bad[i][1]), "%s -> %s", bad[i][0], e.msg);
	}
	manifestfree(&m);
}

/* The output cap a provider's body carries, wherever its API puts it (0: none). */
static double capof(const cJSON *b)
{
	static const char *const keys[] = {"max_tokens", "max_completion_tokens", "max_output_tokens", NULL};
	for (size_t i = 0; keys[i]; i++)
		if (num(b, keys[i]) > 0)
			return num(b, keys[i]);
	return num(b, "inferenceConfig/maxTokens"); /* Bedrock Converse */
}

/* Whatever the manifest says, no request of any provider carries an output cap above the model's
 * own limit, every one carries one, and one with an Anthropic thinking budget leaves room above it. */
static void caps(void)
{
	static const struct {
		const char *name;
		int64_t limit; /* what the provider documents; 0: unknown (then the 4096 default) */
	} models[] = {
		{"gpt-4o", 16384},          {"gpt-4o-mini-2024-07-18", 16384}, {"gpt-4-turbo", 4096},
		{"gpt-4.1-mini", 32768},    {"gpt-5", 128000},                 {"gpt-5-chat-latest", 16384},
		{"o1-mini", 65536},         {"o3", 100000},                    {"o4-mini-2025-04-16", 100000},
		{"gpt-3.5-turbo", 4096},    {"claude-3-haiku-20240307", 4096}, {"claude-3-opus-latest", 4096},
		{"claude-3-5-sonnet-20241022", 8192}, {"claude-3-5-haiku-latest", 8192},
		{"claude-3-7-sonnet-20250219", 64000}, {"claude-sonnet-4-20250514", 64000},
		{"claude-opus-4-1-20250805", 32000},   {"us.anthropic.claude-3-5-sonnet-20240620-v1:0", 8192},
		{"claude-3-5-sonnet-v2@20241022", 8192}, {"my-local-llama", 0}, {"o100", 0},
	};
	/* Every client: its provider, API, and whether it speaks Anthropic's (a thinking budget). */
	static const struct {
		const char *what;
		enum provider prov;
		enum api api;
		int anthropic;
	} clients[] = {
		{"openai chat", PROV_OPENAI, API_CHAT, 0},          {"openai responses", PROV_OPENAI, API_RESPONSES, 0},
		{"anthropic", PROV_ANTHROPIC, API_CHAT, 1},         {"azure-openai chat", PROV_AZURE, API_CHAT, 0},
		{"azure-openai responses", PROV_AZURE, API_RESPONSES, 0}, {"bedrock converse", PROV_BEDROCK, API_CONVERSE, 0},
		{"vertex", PROV_VERTEX, API_CHAT, 1},
	};
	static const int64_t asks[] = {0, 1, 1000, 4096, 50000, 2000000, 10000000};
	struct err e = {0};
	cJSON *msgs = J("[{\"role\":\"user\",\"content\":\"hi\"}]");
	struct chat c = {"s", NULL, msgs, 0, NULL, 0};
	int bad = 0, n = 0, seen[sizeof clients / sizeof *clients] = {0};
	for (size_t i = 0; i < sizeof models / sizeof *models; i++)
		for (size_t p = 0; p < sizeof clients / sizeof *clients; p++)
			for (size_t k = 0; k < sizeof asks / sizeof *asks; k++)
				for (int think = 0; think < 2; think++) {
					if (think && !clients[p].anthropic)
						continue;
					struct model md = model(clients[p].prov, clients[p].anthropic ? NULL : "http://127.0.0.1:1/v1");
					md.api = clients[p].api;
					md.model = (char *)models[i].name;
					md.deployment = (char *)"dep";
					md.region = (char *)"us-east-1";
					md.project = (char *)"proj";
					md.max_output_tokens = asks[k];
					md.thinking = think ? 2048 : 0;
					struct llm *l = NULL;
					if (llmwire(&l, &md, 1, &e) < 0) {
						if (bad++ < 5)
							fprintf(stderr, "%s: cannot open: %s\n", clients[p].what, e.msg);
						continue;
					}
					l->model = &md;
					cJSON *b = llmbody(l, &c, &e);
					double cap = capof(b);
					int64_t limit = models[i].limit ? models[i].limit : asks[k] ? asks[k] : md.thinking ? md.thinking + 4096 : 4096;
					n++;
					if (!b && md.thinking && asks[k] && asks[k] <= md.thinking) {
						llmclose(l);
						continue; /* refused: the manifest check says so at load */
					}
					seen[p] += b != NULL;
					if (!b || cap <= 0 || cap > (double)limit || (md.thinking && cap <= md.thinking)) {
						if (bad++ < 5)
							fprintf(stderr, "%s %s max_output_tokens=%lld thinking=%lld: cap %g (limit %lld)",
							     clients[p].what, models[i].name, (long long)asks[k],
							     (long long)md.thinking, cap, (long long)limit), fputc(10, stderr);
					}
					cJSON_Delete(b);
					llmclose(l);
				}
	for (size_t p = 0; p < sizeof clients / sizeof *clients; p++)
		ok(seen[p] >= (int)(sizeof models / sizeof *models * sizeof asks / sizeof *asks), "%s: %d bodies built",
		   clients[p].what, seen[p]);
	ok(bad == 0, "no request's output cap is above the model's limit (%d of %d bodies checked)", n - bad, n);
	struct modelinfo mi;
	catalogfind("o100", &mi);
	ok(!mi.known && mi.context == 128000, "an unknown name: 128000 tokens of context");
	catalogfind("claude-sonnet-4-5", &mi);
	ok(mi.known && mi.context == 200000 && mi.limit == 64000, "claude-sonnet-4-5 by prefix");
	catalogfind("gpt-4.1", &mi);
	ok(mi.context == 1047576, "gpt-4.1: its own window, not gpt-4's");
	cJSON_Delete(msgs);
}

/* Anthropic thinking blocks: kept from the reply, sent back first and unchanged; the budget sent. */
static void thinking(void)
{
	struct model md = model(PROV_ANTHROPIC, NULL);
	md.model = (char *)"claude-sonnet-4-20250514";
	md.thinking = 4000;
	struct llm *l;
	struct err e = {0};
	struct llmreply r;
	anthropicopen(&l, &md, &e);
	cJSON *b = J("{\"content\":[{\"type\":\"thinking\",\"thinking\":\"hmm\",\"signature\":\"sig1\"},"
	             "{\"type\":\"redacted_thinking\",\"data\":\"xyz\"},{\"type\":\"text\",\"text\":\"Reading.\"},"
	             "{\"type\":\"tool_use\",\"id\":\"u1\",\"name\":\"read_file\",\"input\":{\"path\":\"a\"}}],"
	             "\"stop_reason\":\"tool_use\"}");
	memset(&r, 0, sizeof r);
	ok(l->ops->parse(l, b, &r, &e) == 0 && cJSON_GetArraySize(r.thinking) == 2, "two thinking blocks kept");
	cJSON_Delete(b);
	cJSON *msgs = J("[{\"role\":\"user\",\"content\":\"go\"}]");
	cJSON *a = J("{\"role\":\"assistant\",\"content\":\"Reading.\",\"tool_calls\":[{\"id\":\"u1\","
	             "\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}]}");
	cJSON_AddItemToObject(a, "thinking", r.thinking);
	r.thinking = NULL;
	cJSON_AddItemToArray(msgs, a);
	cJSON_AddItemToArray(msgs, J("{\"role\":\"tool\",\"tool_call_id\":\"u1\",\"name\":\"read_file\",\"content\":\"x\"}"));
	struct chat c = {"s", NULL, msgs, 0, NULL, 0};
	b = llmbody(l, &c, &e);
	okstr(str(b, "messages/1/content/0/type"), "thinking", "thinking block first");
	okstr(str(b, "messages/1/content/0/signature"), "sig1", "with its signature");
	okstr(str(b, "messages/1/content/1/data"), "xyz", "redacted_thinking unchanged");
	okstr(str(b, "messages/1/content/2/text"), "Reading.", "then the text");
	ok(num(b, "thinking/budget_tokens") == 4000 && num(b, "max_tokens") > 4000, "thinking budget below max_tokens (%g)",
	   num(b, "max_tokens"));
	ok(anthropicvalid(b), "still a valid conversation");
	cJSON_Delete(b);
	cJSON_Delete(msgs);
	llmreplyfree(&r);
	llmclose(l);
}

/* The wire messages kept between turns: after an append, a change in place (an elision) and a
 * shorter conversation, the body is what a fresh client builds, and the prepared request's size
 * and digest are those of the bytes sent. */
static void openaikept(void)
{
	struct model md = model(PROV_OPENAI, NULL);
	struct llm *l, *fresh;
	struct err e = {0};
	ok(openaiopen(&l, &md, &e) == 0 && openaiopen(&fresh, &md, &e) == 0, "two clients");
	cJSON *msgs = J(convo), *t = J(tools);
	struct chat c = {"Be brief.", t, msgs, 0, NULL, 0};
	for (int round = 0; round < 8; round++) {
		if (round == 6) /* no system message: the array starts with the kept text */
			c.system = NULL;
		if (round == 7) /* nothing at all: an empty array */
			while (cJSON_GetArraySize(msgs))
				cJSON_DeleteItemFromArray(msgs, 0);
		if (round == 4) /* escapes, non-ASCII, a control character */
			cJSON_AddItemToArray(msgs, J("{\"role\":\"tool\",\"tool_call_id\":\"c\\\"1\",\"content\":\"\\u00e4 \\t \\u0001 \\\" \\\\ </x>\"}"));
		/* round 5: the same again, all of it from what was kept */
		if (round == 1)
			cJSON_AddItemToArray(msgs, J("{\"role\":\"user\",\"content\":\"more\"}"));
		if (round == 2)
			cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetArrayItem(msgs, 1), "content", cJSON_CreateString("changed"));
		if (round == 3)
			cJSON_DeleteItemFromArray(msgs, cJSON_GetArraySize(msgs) - 1);
		struct llmreq q = {0};
		ok(llmprepare(l, &c, &q, &e) == 0, "prepare, round %d", round);
		cJSON *want = llmbody(fresh, &c, &e), *sent = llmbody(l, &c, &e);
		ok(cJSON_Compare(sent, want, 1), "kept messages give a fresh client's body, round %d", round);
		ok(cJSON_GetArraySize(cJSON_GetObjectItem(q.body, "messages")) == 0,
		   "a prepared body holds no copy of the messages (its text does), round %d", round);
		cJSON_Delete(sent);
		char *text = cJSON_PrintUnformatted(want), dg[65];
		sha256hex(text, strlen(text), dg);
		ok(q.len == strlen(text) && strcmp(q.digest, dg) == 0, "size and digest of the bytes, round %d", round);
		ok(strcmp(q.text, text) == 0, "the text from kept messages is cJSON's own print, round %d", round);
		free(text);
		cJSON_Delete(want);
		llmreqfree(&q);
		llmclose(fresh);
		openaiopen(&fresh, &md, &e);
	}
	cJSON_Delete(msgs);
	cJSON_Delete(t);
	llmclose(fresh);
	llmclose(l);
}

/* A request's digest from the states kept of the last one: equal to a whole hash whatever the
 * next text does (grows, changes in its middle, at a step's edge, shrinks, is empty). */
static void growdigest(void)
{
	struct sha256grow g = {0};
	size_t cap = 5 * SHA256STEP + 7;
	char *t = xmalloc(cap), want[65], got[65];
	for (size_t i = 0; i < cap; i++)
		t[i] = (char)('a' + (i * 7919) % 26);
	size_t lens[] = {0, 10, SHA256STEP, SHA256STEP + 1, 3 * SHA256STEP, 3 * SHA256STEP, cap, cap, 2 * SHA256STEP - 1, 0, cap};
	for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
		if (k == 5)
			t[SHA256STEP + 3]++; /* a change in the second step */
		if (k == 7)
			t[2 * SHA256STEP]++; /* at the first byte of a step */
		if (k == 10)
			t[cap - 1]++; /* at the last byte */
		sha256hex(t, lens[k], want);
		sha256growhex(&g, t, lens[k], got);
		ok(strcmp(want, got) == 0, "grown digest of %zu bytes equals the whole hash (case %zu)", lens[k], k);
	}
	sha256growfree(&g);
	free(t);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	openairequest();
	openaikept();
	growdigest();
	openaiparse();
	anthropicrequest();
	anthropicparse();
	caps();
	thinking();
	retries();
	opening();
	specs();
	scripted();
	interrupt(); /* last: the interrupt cannot be undone */
	curl_global_cleanup();
	return tdone();
}
