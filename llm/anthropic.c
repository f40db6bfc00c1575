/* anthropic: the Messages API. Headers x-api-key and anthropic-version; the system prompt at the top
 * level; max_tokens always sent; roles alternate starting with user; tool calls are tool_use blocks
 * of the assistant, answered by tool_result blocks first in the next user message. */
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "llm.h"
#include "wire.h"

#define ANTHROPIC_VERSION "2023-06-01"

static cJSON *textblock(const char *text)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "type", "text");
	cJSON_AddStringToObject(b, "text", text);
	return b;
}

static int istype(const cJSON *block, const char *type)
{
	const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(block, "type"));
	return t && strcmp(t, type) == 0;
}

/* Add a block to the conversation under role: merged into the last message when it has the same
 * role (the API wants roles to alternate), tool_result blocks kept ahead of every other block. */
static void addblock(cJSON *msgs, const char *role, cJSON *block)
{
	cJSON *content = wirelast(msgs, role);
	int n = cJSON_GetArraySize(content), at = 0;
	if (!istype(block, "tool_result"))
		at = n;
	else
		while (at < n && istype(cJSON_GetArrayItem(content, at), "tool_result"))
			at++;
	if (at == n)
		cJSON_AddItemToArray(content, block);
	else
		cJSON_InsertItemInArray(content, at, block);
}

/* A tool call's arguments as the object tool_use.input must be. */
static cJSON *toolinput(const cJSON *args)
{
	if (cJSON_IsObject(args))
		return cJSON_Duplicate(args, 1);
	cJSON *o = cJSON_IsString(args) ? cJSON_Parse(args->valuestring) : NULL;
	if (cJSON_IsObject(o))
		return o;
	cJSON_Delete(o);
	return cJSON_CreateObject();
}

/* Check what the API would refuse with a 400, so a bug shows as a clear error: the first message
 * is the user's, and every tool_use is answered first thing in the next message. */
static int checkturns(const cJSON *msgs, struct err *e)
{
	const cJSON *m;
	int i = 0;
	if (cJSON_GetArraySize(msgs) == 0)
		return errf(e, "the conversation is empty");
	cJSON_ArrayForEach(m, msgs)
	{
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "role"));
		if (i == 0 && strcmp(role, "user") != 0)
			return errf(e, "the conversation must start with a user message");
		if (strcmp(role, "assistant") == 0) {
			const cJSON *next = m->next, *b;
			const cJSON *answers = cJSON_GetObjectItemCaseSensitive(next, "content");
			int k = 0;
			cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(m, "content"))
			{
				if (!istype(b, "tool_use"))
					continue;
				const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "id"));
				const cJSON *a = cJSON_GetArrayItem(answers, k++);
				const char *aid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "tool_use_id"));
				if (!istype(a, "tool_result") || !aid || strcmp(aid, id) != 0)
					return errf(e, "tool call %s of message %d has no tool_result in the next message", id, i + 1);
			}
		}
		i++;
	}
	return 0;
}

/* The neutral messages as Messages API messages. */
static cJSON *wiremessages(const struct chat *c)
{
	cJSON *out = cJSON_CreateArray(), *m, *tc;
	cJSON_ArrayForEach(m, c->messages)
	{
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(m, "role"));
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(m, "content"));
		if (role && strcmp(role, "assistant") == 0) {
			/* Thinking blocks go back first and unchanged (their signature covers them), as the API
			 * requires in a tool loop. */
			cJSON *tb;
			cJSON_ArrayForEach(tb, cJSON_GetObjectItem(m, "thinking"))
				addblock(out, "assistant", cJSON_Duplicate(tb, 1));
			/* Text blocks must hold more than white space; an empty turn is left out. */
			if (!wireblank(text))
				addblock(out, "assistant", textblock(text));
			cJSON_ArrayForEach(tc, cJSON_GetObjectItem(m, "tool_calls"))
			{
				cJSON *b = cJSON_CreateObject();
				cJSON_AddStringToObject(b, "type", "tool_use");
				cJSON_AddItemToObject(b, "id", cJSON_Duplicate(cJSON_GetObjectItem(tc, "id"), 1));
				cJSON_AddItemToObject(b, "name", cJSON_Duplicate(cJSON_GetObjectItem(tc, "name"), 1));
				cJSON_AddItemToObject(b, "input", toolinput(cJSON_GetObjectItem(tc, "arguments")));
				addblock(out, "assistant", b);
			}
		} else if (role && strcmp(role, "tool") == 0) {
			cJSON *b = cJSON_CreateObject();
			cJSON_AddStringToObject(b, "type", "tool_result");
			cJSON_AddItemToObject(b, "tool_use_id", cJSON_Duplicate(cJSON_GetObjectItem(m, "tool_call_id"), 1));
			if (text && *text)
				cJSON_AddStringToObject(b, "content", text);
			if (cJSON_IsTrue(cJSON_GetObjectItem(m, "is_error")))
				cJSON_AddTrueToObject(b, "is_error");
			addblock(out, "user", b);
		} else {
			addblock(out, "user", textblock(wireblank(text) ? "(empty)" : text));
		}
	}
	/* One cache breakpoint on the newest block: the next turn reads the whole prefix from the
	 * cache instead of paying for it again (ignored below the model's minimum length). */
	cJSON *last = cJSON_GetArrayItem(out, cJSON_GetArraySize(out) - 1);
	cJSON *content = cJSON_GetObjectItemCaseSensitive(last, "content");
	cJSON *block = cJSON_GetArrayItem(content, cJSON_GetArraySize(content) - 1);
	if (block) {
		cJSON *cc = cJSON_AddObjectToObject(block, "cache_control");
		cJSON_AddStringToObject(cc, "type", "ephemeral");
	}
	return out;
}

static int request(struct llm *l, const struct chat *c, char **url, struct strv *headers, cJSON **body, struct err *e)
{
	const struct model *m = l->model;
	if (m->temperature > 1)
		return errf(e, "temperature %g is above 1, the most the Messages API takes", m->temperature);
	/* base_url as the SDKs take it (https://api.anthropic.com), or ending in /v1. */
	*url = llmurl(m, "https://api.anthropic.com", "/v1/messages");
	if (l->apikey) {
		char *h = xasprintf("x-api-key: %s", l->apikey);
		strvadd(headers, h);
		free(h);
	}
	strvadd(headers, "anthropic-version: " ANTHROPIC_VERSION);
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "model", m->model);
	/* max_tokens is required: the model's output cap, within its limit (4096 for a model the
	 * catalog does not know, the limit of the older models). */
	int64_t cap = modeloutcap(m);
	cJSON_AddNumberToObject(b, "max_tokens", (double)cap);
	if (m->thinking > 0) {
		if (m->thinking >= cap) {
			cJSON_Delete(b);
			return errf(e, "the thinking budget (%lld) must be below the output cap (%lld)", (long long)m->thinking,
			            (long long)cap);
		}
		cJSON *th = cJSON_AddObjectToObject(b, "thinking");
		cJSON_AddStringToObject(th, "type", "enabled");
		cJSON_AddNumberToObject(th, "budget_tokens", (double)m->thinking);
	}
	if (c->system && !wireblank(c->system))
		cJSON_AddStringToObject(b, "system", c->system);
	cJSON *msgs = wiremessages(c);
	cJSON_AddItemToObject(b, "messages", msgs);
	if (cJSON_GetArraySize(c->tools)) {
		cJSON *tools = cJSON_AddArrayToObject(b, "tools"), *t;
		cJSON_ArrayForEach(t, c->tools)
		{
			cJSON *w = cJSON_CreateObject();
			cJSON *schema = wiretool(w, t);
			cJSON_AddItemToObject(w, "input_schema", schema);
			cJSON_AddItemToArray(tools, w);
		}
	}
	if (m->temperature >= 0)
		cJSON_AddNumberToObject(b, "temperature", m->temperature);
	*body = b;
	if (checkturns(msgs, e) < 0)
		return errctx(e, "cannot send the conversation");
	return 0;
}

static int parse(struct llm *l, const cJSON *body, struct llmreply *r, struct err *e)
{
	(void)l;
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(body, "content"), *b;
	const char *stop = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "stop_reason"));
	if (!cJSON_IsArray(content))
		return errf(e, "no content in the response");
	struct buf text = {0};
	size_t n = 0;
	cJSON_ArrayForEach(b, content) n += istype(b, "tool_use");
	r->calls = n ? xcalloc(n, sizeof *r->calls) : NULL;
	cJSON_ArrayForEach(b, content)
	{
		if (istype(b, "text")) {
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "text"));
			if (t && *t) {
				if (text.len)
					bufputc(&text, '\n');
				bufputs(&text, t);
			}
		} else if (istype(b, "tool_use")) {
			const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "id"));
			const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "name"));
			const cJSON *input = cJSON_GetObjectItemCaseSensitive(b, "input");
			if (!id || !*id || !name || !*name) {
				buffree(&text);
				return errf(e, "a tool_use block without id or name");
			}
			wirecall(r, id, name, input ? cJSON_PrintUnformatted(input) : xstrdup(""));
		}
		else if (istype(b, "thinking") || istype(b, "redacted_thinking")) {
			/* Kept as they came, to be sent back with this turn. */
			if (!r->thinking)
				r->thinking = cJSON_CreateArray();
			cJSON_AddItemToArray(r->thinking, cJSON_Duplicate(b, 1));
		}
		/* server tool blocks are not used: nothing to keep. */
	}
	r->text = text.data;
	r->finish_raw = xstrdup(stop ? stop : "");
	if (!stop)
		r->finish = r->ncalls ? FINISH_TOOLS : FINISH_OTHER;
	else if (strcmp(stop, "max_tokens") == 0)
		r->finish = FINISH_LENGTH;
	else if (strcmp(stop, "model_context_window_exceeded") == 0)
		r->finish = FINISH_CONTEXT;
	else if (strcmp(stop, "refusal") == 0)
		r->finish = FINISH_REFUSAL;
	else if (r->ncalls)
		r->finish = FINISH_TOOLS;
	else if (strcmp(stop, "end_turn") == 0 || strcmp(stop, "stop_sequence") == 0)
		r->finish = FINISH_STOP;
	else
		r->finish = FINISH_OTHER; /* pause_turn and words not known yet */
	wirecut(r);
	/* input_tokens leaves out what was read from or written to the cache: add them back so input
	 * means every prompt token, as on OpenAI. */
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(body, "usage");
	r->usage.cached = wirecount(u, "cache_read_input_tokens", NULL);
	r->usage.input = wirecount(u, "input_tokens", NULL) + r->usage.cached + wirecount(u, "cache_creation_input_tokens", NULL);
	r->usage.output = wirecount(u, "output_tokens", NULL);
	return 0;
}

const struct llmops anthropicops = {request, parse, NULL, wirefree};

int anthropicopen(struct llm **l, const struct model *m, struct err *e)
{
	if (!m->model || !*m->model)
		return errc(e, ERR_INPUT, "model '%s': anthropic needs a model name", m->name);
	*l = wirenew(sizeof(struct llm), &anthropicops, m);
	return 0;
}
