/* responses: OpenAI's Responses API (POST /v1/responses), stateless.

   Every request carries the whole conversation as input items and store: false, so nothing is
   kept at OpenAI and a replay sends the same bytes. Reasoning is carried between turns as the API
   asks for stateless use: include ["reasoning.encrypted_content"], and the output items of each
   reply (reasoning with its encrypted content, messages, function calls, in their order) are kept
   in the neutral assistant message as "carry" and sent back as they came. A conversation begun
   elsewhere (no carry) is written as items: {role, content} messages, function_call items from
   its tool calls. Tool results are function_call_output items. Tools are function tools with the
   name at the top level. Usage: input_tokens (cached ones included, input_tokens_details.
   cached_tokens), output_tokens (reasoning ones included, output_tokens_details.reasoning_tokens). */
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "llm.h"
#include "sse.h"
#include "wire.h"

struct responses {
	struct llm base;
	int replies;
};

/* The neutral messages as input items. */
static cJSON *wireinput(const struct chat *c)
{
	cJSON *out = cJSON_CreateArray(), *m;
	cJSON_ArrayForEach(m, c->messages)
	{
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(m, "role"));
		const char *content = cJSON_GetStringValue(cJSON_GetObjectItem(m, "content"));
		if (!role)
			role = "user";
		if (strcmp(role, "tool") == 0) {
			cJSON *w = cJSON_CreateObject();
			cJSON_AddStringToObject(w, "type", "function_call_output");
			cJSON_AddItemToObject(w, "call_id", cJSON_Duplicate(cJSON_GetObjectItem(m, "tool_call_id"), 1));
			cJSON_AddStringToObject(w, "output", content ? content : "");
			cJSON_AddItemToArray(out, w);
			continue;
		}
		const cJSON *carry = cJSON_GetObjectItem(m, "carry"), *it;
		if (strcmp(role, "assistant") == 0 && cJSON_IsArray(carry)) {
			cJSON_ArrayForEach(it, carry)
				cJSON_AddItemToArray(out, cJSON_Duplicate(it, 1));
			continue;
		}
		if (content && *content) {
			cJSON *w = cJSON_CreateObject();
			cJSON_AddStringToObject(w, "role", strcmp(role, "assistant") == 0 ? "assistant" : "user");
			cJSON_AddStringToObject(w, "content", content);
			cJSON_AddItemToArray(out, w);
		}
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(m, "tool_calls"))
		{
			cJSON *w = cJSON_CreateObject();
			cJSON_AddStringToObject(w, "type", "function_call");
			cJSON_AddItemToObject(w, "call_id", cJSON_Duplicate(cJSON_GetObjectItem(it, "id"), 1));
			cJSON_AddItemToObject(w, "name", cJSON_Duplicate(cJSON_GetObjectItem(it, "name"), 1));
			char *a = wireargs(cJSON_GetObjectItem(it, "arguments"), "{}");
			cJSON_AddStringToObject(w, "arguments", a);
			free(a);
			cJSON_AddItemToArray(out, w);
		}
	}
	return out;
}

/* The body of a Responses request (also for azure.c). */
static int request(struct llm *l, const struct chat *c, char **url, struct strv *headers, cJSON **body, struct err *e)
{
	const struct model *m = l->model;
	*url = llmurl(m, "https://api.openai.com/v1", "/responses");
	wirebearer(l, headers);
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "model", m->model);
	if (c->system && *c->system)
		cJSON_AddStringToObject(b, "instructions", c->system);
	cJSON_AddItemToObject(b, "input", wireinput(c));
	if (cJSON_GetArraySize(c->tools)) {
		cJSON *tools = cJSON_AddArrayToObject(b, "tools"), *t;
		cJSON_ArrayForEach(t, c->tools)
		{
			cJSON *w = cJSON_CreateObject(), *v;
			cJSON_AddStringToObject(w, "type", "function");
			cJSON_AddItemToObject(w, "name", cJSON_Duplicate(cJSON_GetObjectItem(t, "name"), 1));
			if ((v = cJSON_GetObjectItem(t, "description")) && cJSON_IsString(v))
				cJSON_AddItemToObject(w, "description", cJSON_Duplicate(v, 1));
			v = cJSON_GetObjectItem(t, "parameters");
			cJSON_AddItemToObject(w, "parameters", v ? cJSON_Duplicate(v, 1) : cJSON_CreateObject());
			cJSON_AddBoolToObject(w, "strict", cJSON_IsTrue(cJSON_GetObjectItem(t, "strict")));
			cJSON_AddItemToArray(tools, w);
		}
		if (c->toolchoice)
			cJSON_AddStringToObject(b, "tool_choice", "required");
	}
	if (m->temperature >= 0)
		cJSON_AddNumberToObject(b, "temperature", m->temperature);
	int64_t maxout = modeloutcap(l->model);
	if (maxout > 0)
		cJSON_AddNumberToObject(b, "max_output_tokens", (double)maxout);
	if (m->reasoning_effort) {
		cJSON *r = cJSON_AddObjectToObject(b, "reasoning");
		cJSON_AddStringToObject(r, "effort", m->reasoning_effort);
	}
	cJSON_AddFalseToObject(b, "store");
	cJSON *inc = cJSON_AddArrayToObject(b, "include");
	cJSON_AddItemToArray(inc, cJSON_CreateString("reasoning.encrypted_content"));
	*body = b;
	(void)e;
	return 0;
}

static int parse(struct llm *l, const cJSON *body, struct llmreply *r, struct err *e)
{
	struct responses *o = (struct responses *)l;
	o->replies++;
	const cJSON *out = cJSON_GetObjectItemCaseSensitive(body, "output"), *it;
	if (!cJSON_IsArray(out))
		return errf(e, "no output in the response");
	const char *status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "status"));
	const char *why = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "incomplete_details"), "reason"));
	if (status && strcmp(status, "failed") == 0) {
		const char *msg = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "error"), "message"));
		return errf(e, "the response failed: %s", msg ? msg : "(no message)");
	}
	struct buf text = {0}, refusal = {0};
	size_t n = 0;
	cJSON_ArrayForEach(it, out)
		n += cJSON_IsString(cJSON_GetObjectItem(it, "type")) && !strcmp(cJSON_GetObjectItem(it, "type")->valuestring,
		                                                               "function_call");
	r->calls = n ? xcalloc(n, sizeof *r->calls) : NULL;
	cJSON_ArrayForEach(it, out)
	{
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "type"));
		if (!type)
			continue;
		if (strcmp(type, "message") == 0) {
			const cJSON *part;
			cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(it, "content"))
			{
				const char *pt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(part, "type"));
				const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(part, "text"));
				const char *rf = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(part, "refusal"));
				if (pt && strcmp(pt, "output_text") == 0 && t)
					bufputs(&text, t);
				else if (pt && strcmp(pt, "refusal") == 0 && rf)
					bufputs(&refusal, rf);
			}
		} else if (strcmp(type, "function_call") == 0) {
			const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "call_id"));
			const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "name"));
			const cJSON *args = cJSON_GetObjectItemCaseSensitive(it, "arguments");
			if (!name || !*name || !id || !*id) {
				buffree(&text);
				buffree(&refusal);
				return errf(e, "function call %zu has no name or call_id", r->ncalls + 1);
			}
			wirecall(r, id, name, wireargs(args, "{}"));
		}
	}
	r->text = text.len ? text.data : refusal.len ? xstrdup(refusal.data) : NULL;
	if (!text.len)
		buffree(&text);
	r->finish_raw = xstrdup(why ? why : status ? status : "");
	if (refusal.len && !text.len)
		r->finish = FINISH_REFUSAL;
	else if (status && strcmp(status, "incomplete") == 0)
		r->finish = why && strcmp(why, "max_output_tokens") == 0 ? FINISH_LENGTH
		            : why && strcmp(why, "content_filter") == 0  ? FINISH_REFUSAL
		                                                         : FINISH_OTHER;
	else
		r->finish = r->ncalls ? FINISH_TOOLS : FINISH_STOP;
	buffree(&refusal);
	wirecut(r);
	r->carry = cJSON_Duplicate(out, 1);
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(body, "usage");
	r->usage.input = wirecount(u, "input_tokens", NULL);
	r->usage.output = wirecount(u, "output_tokens", NULL);
	r->usage.cached = wirecount(u, "input_tokens_details", "cached_tokens");
	r->usage.reasoning = wirecount(u, "output_tokens_details", "reasoning_tokens");
	return 0;
}

static int stream(struct llm *l, cJSON *body, char **url)
{
	(void)l;
	(void)url;
	cJSON_AddTrueToObject(body, "stream");
	return 1;
}

/* The stream's last word: response.completed (or .incomplete, .failed) carries the whole response
 * object a plain request answers with; an error event is an error body. */
static int onevent(void *ctx, const char *event, const char *data)
{
	cJSON **out = ctx;
	cJSON *ev = cJSON_Parse(data);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "type"));
	if (!type)
		type = event;
	int rc = 0;
	if (strcmp(type, "response.completed") == 0 || strcmp(type, "response.incomplete") == 0 ||
	    strcmp(type, "response.failed") == 0) {
		cJSON *r = cJSON_DetachItemFromObjectCaseSensitive(ev, "response");
		const cJSON *err = cJSON_GetObjectItemCaseSensitive(r, "error");
		cJSON_Delete(*out);
		if (strcmp(type, "response.failed") == 0 && cJSON_IsObject(err)) {
			*out = cJSON_CreateObject();
			cJSON_AddItemToObject(*out, "error", cJSON_Duplicate(err, 1));
			cJSON_Delete(r);
		} else {
			*out = r ? r : cJSON_CreateObject();
		}
		rc = 1;
	} else if (strcmp(type, "error") == 0) {
		cJSON_Delete(*out);
		*out = cJSON_CreateObject();
		cJSON *err = cJSON_AddObjectToObject(*out, "error");
		static const char *const keep[] = {"code", "message", "param", NULL};
		for (size_t i = 0; keep[i]; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, keep[i]);
			if (v)
				cJSON_AddItemToObject(err, keep[i], cJSON_Duplicate(v, 1));
		}
		rc = 1;
	}
	cJSON_Delete(ev);
	return rc;
}

static cJSON *assemble(struct llm *l, const char *text, size_t len, int *status, struct err *e)
{
	(void)l;
	(void)status;
	cJSON *out = NULL;
	sseeach(text, len, onevent, &out);
	if (!out)
		errf(e, "the stream ended before response.completed");
	return out;
}

const struct llmops responsesops = {request, parse, NULL, wirefree, stream, assemble, NULL};

int responsesopen(struct llm **l, const struct model *m, struct err *e)
{
	(void)e;
	*l = wirenew(sizeof(struct responses), &responsesops, m);
	return 0;
}
