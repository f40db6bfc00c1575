/* openai: chat completions, also for OpenAI-compatible servers (vLLM, llama.cpp, Ollama) via base_url. */
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "llm.h"
#include "wire.h"

struct openai {
	struct llm base;
	int replies; /* parsed so far, to name calls a server left without an id */
};

/* The neutral messages in chat-completions form. */
static cJSON *wiremessages(const struct chat *c)
{
	cJSON *out = cJSON_CreateArray(), *m;
	if (c->system && *c->system) {
		cJSON *s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "role", "system");
		cJSON_AddStringToObject(s, "content", c->system);
		cJSON_AddItemToArray(out, s);
	}
	cJSON_ArrayForEach(m, c->messages)
	{
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(m, "role"));
		if (!role)
			role = "user";
		cJSON *w = cJSON_CreateObject();
		cJSON_AddStringToObject(w, "role", role);
		const char *content = cJSON_GetStringValue(cJSON_GetObjectItem(m, "content"));
		int calls = strcmp(role, "assistant") == 0 && cJSON_GetArraySize(cJSON_GetObjectItem(m, "tool_calls"));
		if (content && (*content || !calls))
			cJSON_AddStringToObject(w, "content", content);
		else if (calls)
			cJSON_AddNullToObject(w, "content");
		else
			cJSON_AddStringToObject(w, "content", "");
		if (strcmp(role, "tool") == 0) {
			cJSON_AddItemToObject(w, "tool_call_id", cJSON_Duplicate(cJSON_GetObjectItem(m, "tool_call_id"), 1));
		} else if (calls) {
			cJSON *wcalls = cJSON_AddArrayToObject(w, "tool_calls"), *tc;
			cJSON_ArrayForEach(tc, cJSON_GetObjectItem(m, "tool_calls"))
			{
				cJSON *wc = cJSON_CreateObject(), *fn = cJSON_CreateObject();
				cJSON_AddItemToObject(wc, "id", cJSON_Duplicate(cJSON_GetObjectItem(tc, "id"), 1));
				cJSON_AddStringToObject(wc, "type", "function");
				cJSON_AddItemToObject(fn, "name", cJSON_Duplicate(cJSON_GetObjectItem(tc, "name"), 1));
				char *s = wireargs(cJSON_GetObjectItem(tc, "arguments"), "{}");
				cJSON_AddStringToObject(fn, "arguments", s);
				free(s);
				cJSON_AddItemToObject(wc, "function", fn);
				cJSON_AddItemToArray(wcalls, wc);
			}
		}
		cJSON_AddItemToArray(out, w);
	}
	return out;
}

static int request(struct llm *l, const struct chat *c, char **url, struct strv *headers, cJSON **body, struct err *e)
{
	const struct model *m = l->model;
	*url = llmurl(m, "https://api.openai.com/v1", "/chat/completions");
	wirebearer(l, headers);
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "model", m->model);
	cJSON_AddItemToObject(b, "messages", wiremessages(c));
	if (cJSON_GetArraySize(c->tools)) {
		cJSON *tools = cJSON_AddArrayToObject(b, "tools"), *t;
		cJSON_ArrayForEach(t, c->tools)
		{
			cJSON *w = cJSON_CreateObject(), *fn = cJSON_Duplicate(t, 1);
			if (m->base_url && m->provider == PROV_OPENAI) /* a compatible server may not know strict */
				cJSON_DeleteItemFromObjectCaseSensitive(fn, "strict");
			cJSON_AddStringToObject(w, "type", "function");
			cJSON_AddItemToObject(w, "function", fn);
			cJSON_AddItemToArray(tools, w);
		}
		/* No text-only reply: the job ends by a call. OpenAI's own API and Azure take "required". */
		if (c->toolchoice && (!m->base_url || m->provider == PROV_AZURE))
			cJSON_AddStringToObject(b, "tool_choice", "required");
	}
	if (m->temperature >= 0)
		cJSON_AddNumberToObject(b, "temperature", m->temperature);
	/* Every request carries its output cap, within the model's limit: the job's budgets reserve it.
	 * OpenAI's own API and its reasoning models want max_completion_tokens (they refuse max_tokens);
	 * compatible servers know max_tokens; max_tokens_field says otherwise. */
	int reasoning = modelreasoning(m);
	int completion = m->cap_field ? m->cap_field == 2 : reasoning || !m->base_url;
	cJSON_AddNumberToObject(b, completion ? "max_completion_tokens" : "max_tokens", (double)modeloutcap(m));
	if (m->reasoning_effort)
		cJSON_AddStringToObject(b, "reasoning_effort", m->reasoning_effort);
	*body = b;
	(void)e;
	return 0;
}

/* The text of a message's content: a string, or the text parts of an array some servers send. */
static char *contenttext(const cJSON *content)
{
	if (cJSON_IsString(content))
		return xstrdup(content->valuestring);
	if (!cJSON_IsArray(content))
		return NULL;
	struct buf b = {0};
	const cJSON *part;
	cJSON_ArrayForEach(part, content)
	{
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(part, "text"));
		if (t)
			bufputs(&b, t);
	}
	return b.data;
}

static int parse(struct llm *l, const cJSON *body, struct llmreply *r, struct err *e)
{
	struct openai *o = (struct openai *)l;
	o->replies++;
	const cJSON *choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(body, "choices"), 0);
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(choice, "message");
	if (!cJSON_IsObject(msg))
		return errf(e, "no choices[0].message in the response");
	char *content = contenttext(cJSON_GetObjectItemCaseSensitive(msg, "content"));
	const char *refusal = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, "refusal"));
	const char *fin = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(choice, "finish_reason"));
	if (content && !*content) {
		free(content);
		content = NULL;
	}
	r->text = content ? content : refusal ? xstrdup(refusal) : NULL;
	r->finish_raw = xstrdup(fin ? fin : "");
	const cJSON *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls"), *tc;
	size_t n = cJSON_GetArraySize(calls);
	r->calls = n ? xcalloc(n, sizeof *r->calls) : NULL;
	cJSON_ArrayForEach(tc, calls)
	{
		const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "id"));
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fn, "name"));
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
		if (!name || !*name)
			return errf(e, "tool call %zu has no function name", r->ncalls + 1);
		/* Some compatible servers leave out the id; the conversation needs one. */
		char *made = id && *id ? NULL : xasprintf("call_%d_%zu", o->replies, r->ncalls + 1);
		/* The API sends a JSON string; some compatible servers send the object itself. */
		wirecall(r, made ? made : id, name, wireargs(args, ""));
		free(made);
	}
	if (refusal && *refusal) {
		/* A refusal is one even when text came with it: the text is not an answer. */
		free(r->text);
		r->text = xstrdup(refusal);
		r->finish = FINISH_REFUSAL;
	} else if (fin && strcmp(fin, "length") == 0)
		r->finish = FINISH_LENGTH;
	else if (fin && strcmp(fin, "content_filter") == 0)
		r->finish = FINISH_REFUSAL;
	else if (r->ncalls)
		r->finish = FINISH_TOOLS;
	else if (fin && *fin && strcmp(fin, "stop") != 0 && strcmp(fin, "tool_calls") != 0)
		r->finish = FINISH_OTHER;
	else
		r->finish = FINISH_STOP;
	wirecut(r);
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(body, "usage");
	r->usage.input = wirecount(u, "prompt_tokens", NULL);
	r->usage.output = wirecount(u, "completion_tokens", NULL);
	r->usage.cached = wirecount(u, "prompt_tokens_details", "cached_tokens");
	r->usage.reasoning = wirecount(u, "completion_tokens_details", "reasoning_tokens");
	return 0;
}

const struct llmops openaiops = {request, parse, NULL, wirefree};

int openaiopen(struct llm **l, const struct model *m, struct err *e)
{
	(void)e;
	*l = wirenew(sizeof(struct openai), &openaiops, m);
	return 0;
}
