/* anthropic: the Messages API. Headers x-api-key and anthropic-version; the system prompt at the top
 * level; max_tokens always sent; roles alternate starting with user; tool calls are tool_use blocks
 * of the assistant, answered by tool_result blocks first in the next user message. */
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "llm.h"
#include "sse.h"
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

static int stream(struct llm *l, cJSON *body, char **url)
{
	(void)l;
	(void)url;
	cJSON_AddTrueToObject(body, "stream");
	return 1;
}

/* The message being rebuilt from the stream's events. */
struct events {
	cJSON *msg;         /* message_start's message, content filled in */
	struct buf *partial; /* by block: input_json_delta text of tool_use blocks */
	int nblocks;
	int status;          /* the HTTP status of an error event's type, 0 when none came */
	int ended;           /* message_stop, or a stop_reason, came: the message is whole */
	struct err *e;
};

/* The HTTP status Anthropic answers each error type with, for an error that comes mid-stream. */
static int errstatus(const char *type)
{
	static const struct {
		const char *type;
		int status;
	} st[] = {{"invalid_request_error", 400}, {"authentication_error", 401}, {"permission_error", 403},
	          {"not_found_error", 404},       {"request_too_large", 413},    {"rate_limit_error", 429},
	          {"api_error", 500},             {"overloaded_error", 529}};
	for (size_t i = 0; type && i < sizeof st / sizeof *st; i++)
		if (strcmp(type, st[i].type) == 0)
			return st[i].status;
	return 500; /* one not known, mid-stream: a server error, retried */
}

/* Append add to the string obj[k] (made when missing). */
static void grow(cJSON *obj, const char *k, const char *add)
{
	const cJSON *have = cJSON_GetObjectItemCaseSensitive(obj, k);
	char *joined = xasprintf("%s%s", cJSON_GetStringValue(have) ? have->valuestring : "", add);
	if (have)
		cJSON_ReplaceItemInObjectCaseSensitive(obj, k, cJSON_CreateString(joined));
	else
		cJSON_AddStringToObject(obj, k, joined);
	free(joined);
}

static int onevent(void *ctx, const char *event, const char *data)
{
	struct events *s = ctx;
	cJSON *ev = cJSON_Parse(data);
	if (!ev)
		return errf(s->e, "a stream event that is not JSON: %.200s", data);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "type"));
	if (!type)
		type = event;
	int rc = 0;
	const cJSON *ix = cJSON_GetObjectItemCaseSensitive(ev, "index");
	int i = cJSON_IsNumber(ix) && ix->valuedouble >= 0 && ix->valuedouble < 4096 ? ix->valueint : -1;
	cJSON *content = cJSON_GetObjectItemCaseSensitive(s->msg, "content");
	if (strcmp(type, "error") == 0) {
		/* overloaded and the like, mid-stream: kept as an error body for the caller to read */
		cJSON_Delete(s->msg);
		s->msg = cJSON_Duplicate(ev, 1);
		s->status = errstatus(cJSON_GetStringValue(
		        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "error"), "type")));
		rc = 1;
	} else if (strcmp(type, "message_start") == 0) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(ev, "message");
		if (cJSON_IsObject(m)) {
			cJSON_Delete(s->msg);
			s->msg = cJSON_Duplicate(m, 1);
			cJSON_DeleteItemFromObjectCaseSensitive(s->msg, "content");
			cJSON_AddArrayToObject(s->msg, "content");
		}
	} else if (strcmp(type, "content_block_start") == 0 && i >= 0) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(ev, "content_block");
		while (cJSON_GetArraySize(content) < i)
			cJSON_AddItemToArray(content, cJSON_CreateObject());
		if (i >= s->nblocks) {
			s->partial = xrealloc(s->partial, (size_t)(i + 1) * sizeof *s->partial);
			memset(s->partial + s->nblocks, 0, (size_t)(i + 1 - s->nblocks) * sizeof *s->partial);
			s->nblocks = i + 1;
		}
		cJSON *copy = cJSON_IsObject(b) ? cJSON_Duplicate(b, 1) : cJSON_CreateObject();
		if (cJSON_GetArraySize(content) > i)
			cJSON_ReplaceItemInArray(content, i, copy);
		else
			cJSON_AddItemToArray(content, copy);
	} else if (strcmp(type, "content_block_delta") == 0 && i >= 0 && i < cJSON_GetArraySize(content)) {
		cJSON *b = cJSON_GetArrayItem(content, i);
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "delta");
		const char *dt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "type"));
		static const char *const fields[][2] = {{"text_delta", "text"}, {"thinking_delta", "thinking"},
		                                        {"signature_delta", "signature"}, {"citations_delta", NULL}};
		for (size_t k = 0; dt && k < sizeof fields / sizeof *fields; k++)
			if (strcmp(dt, fields[k][0]) == 0 && fields[k][1]) {
				const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, fields[k][1]));
				if (v)
					grow(b, fields[k][1], v);
			}
		const char *pj = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "partial_json"));
		if (dt && strcmp(dt, "input_json_delta") == 0 && pj && i < s->nblocks)
			bufputs(&s->partial[i], pj);
	} else if (strcmp(type, "message_stop") == 0) {
		s->ended = 1;
	} else if (strcmp(type, "message_delta") == 0) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "delta"), *it;
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(d, "stop_reason")))
			s->ended = 1;
		cJSON_ArrayForEach(it, d)
			if (it->string) {
				cJSON_DeleteItemFromObjectCaseSensitive(s->msg, it->string);
				cJSON_AddItemToObject(s->msg, it->string, cJSON_Duplicate(it, 1));
			}
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(ev, "usage");
		cJSON *mu = cJSON_GetObjectItemCaseSensitive(s->msg, "usage");
		if (!mu)
			mu = cJSON_AddObjectToObject(s->msg, "usage");
		cJSON_ArrayForEach(it, u)
			if (it->string && !cJSON_IsNull(it)) {
				cJSON_DeleteItemFromObjectCaseSensitive(mu, it->string);
				cJSON_AddItemToObject(mu, it->string, cJSON_Duplicate(it, 1));
			}
	}
	cJSON_Delete(ev);
	return rc;
}

static cJSON *assemble(struct llm *l, const char *text, size_t len, int *status, struct err *e)
{
	(void)l;
	struct events s = {.e = e};
	s.msg = cJSON_CreateObject();
	cJSON_AddArrayToObject(s.msg, "content");
	int rc = sseeach(text, len, onevent, &s);
	/* a stream cut before its end (a proxy's clean close) is no answer: its last block may be half */
	if (rc == 0 && !s.ended)
		rc = errf(e, "the stream ended before message_stop");
	cJSON *content = cJSON_GetObjectItemCaseSensitive(s.msg, "content");
	for (int i = 0; rc == 0 && i < s.nblocks && i < cJSON_GetArraySize(content); i++) {
		cJSON *b = cJSON_GetArrayItem(content, i);
		if (!istype(b, "tool_use"))
			continue;
		/* input is {} at the block's start, filled by the deltas; a cut one stays text (never runs) */
		const char *pj = s.partial[i].data;
		if (pj && *pj) {
			cJSON *in = cJSON_Parse(pj);
			cJSON_DeleteItemFromObjectCaseSensitive(b, "input");
			cJSON_AddItemToObject(b, "input", in ? in : cJSON_CreateString(pj));
		}
	}
	for (int i = 0; i < s.nblocks; i++)
		buffree(&s.partial[i]);
	free(s.partial);
	*status = s.status;
	if (rc < 0) {
		cJSON_Delete(s.msg);
		return NULL;
	}
	return s.msg;
}

const struct llmops anthropicops = {request, parse, NULL, wirefree, stream, assemble, NULL};

int anthropicopen(struct llm **l, const struct model *m, struct err *e)
{
	if (!m->model || !*m->model)
		return errc(e, ERR_INPUT, "model '%s': anthropic needs a model name", m->name);
	*l = wirenew(sizeof(struct llm), &anthropicops, m);
	return 0;
}
