/* converse: Amazon Bedrock's Converse API (POST /model/ID/converse), one shape for every model
   Bedrock serves (Anthropic's, Amazon Nova, Meta Llama, Mistral, ...). Signed by bedrock.c.

   Messages alternate user and assistant, starting with a user one; content is a list of blocks:
   {text}, {toolUse: {toolUseId, name, input}} from the assistant, {toolResult: {toolUseId,
   content: [{text}], status}} in the user message after it (one per toolUse, all in that one
   message). system is [{text}], limits go in inferenceConfig, tools in toolConfig as toolSpec
   with inputSchema.json. The answer: output.message, stopReason, usage {inputTokens,
   outputTokens, cacheReadInputTokens, cacheWriteInputTokens}. */
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "llm.h"
#include "wire.h"

static cJSON *textblock(const char *t)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "text", t);
	return b;
}

/* Append a block to the last message when it has this role, else to a new message. */
static void add(cJSON *msgs, const char *role, cJSON *block)
{
	cJSON_AddItemToArray(wirelast(msgs, role), block);
}

static int request(struct llm *l, const struct chat *c, char **url, struct strv *headers, cJSON **body, struct err *e)
{
	const struct model *m = l->model;
	(void)e;
	(void)headers;
	*url = NULL; /* bedrock.c names it */
	cJSON *b = cJSON_CreateObject(), *msgs = cJSON_CreateArray(), *mm;
	if (c->system && !wireblank(c->system)) {
		cJSON *s = cJSON_AddArrayToObject(b, "system");
		cJSON_AddItemToArray(s, textblock(c->system));
	}
	cJSON_ArrayForEach(mm, c->messages)
	{
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(mm, "role"));
		const char *content = cJSON_GetStringValue(cJSON_GetObjectItem(mm, "content"));
		if (role && strcmp(role, "tool") == 0) {
			cJSON *tr = cJSON_CreateObject(), *r = cJSON_AddObjectToObject(tr, "toolResult");
			cJSON_AddItemToObject(r, "toolUseId", cJSON_Duplicate(cJSON_GetObjectItem(mm, "tool_call_id"), 1));
			cJSON *cc = cJSON_AddArrayToObject(r, "content");
			cJSON_AddItemToArray(cc, textblock(wireblank(content) ? "(no output)" : content));
			cJSON_AddStringToObject(r, "status", cJSON_IsTrue(cJSON_GetObjectItem(mm, "is_error")) ? "error" : "success");
			add(msgs, "user", tr);
		} else if (role && strcmp(role, "assistant") == 0) {
			const cJSON *tc;
			if (!wireblank(content))
				add(msgs, "assistant", textblock(content));
			cJSON_ArrayForEach(tc, cJSON_GetObjectItem(mm, "tool_calls"))
			{
				cJSON *tu = cJSON_CreateObject(), *u = cJSON_AddObjectToObject(tu, "toolUse");
				cJSON_AddItemToObject(u, "toolUseId", cJSON_Duplicate(cJSON_GetObjectItem(tc, "id"), 1));
				cJSON_AddItemToObject(u, "name", cJSON_Duplicate(cJSON_GetObjectItem(tc, "name"), 1));
				const cJSON *args = cJSON_GetObjectItem(tc, "arguments");
				cJSON_AddItemToObject(u, "input", cJSON_IsObject(args) ? cJSON_Duplicate(args, 1) : cJSON_CreateObject());
				add(msgs, "assistant", tu);
			}
		} else {
			add(msgs, "user", textblock(wireblank(content) ? "(empty)" : content));
		}
	}
	cJSON_AddItemToObject(b, "messages", msgs);
	cJSON *inf = cJSON_AddObjectToObject(b, "inferenceConfig");
	cJSON_AddNumberToObject(inf, "maxTokens", (double)modeloutcap(l->model));
	if (m->temperature >= 0)
		cJSON_AddNumberToObject(inf, "temperature", m->temperature);
	if (cJSON_GetArraySize(c->tools)) {
		cJSON *tc = cJSON_AddObjectToObject(b, "toolConfig"), *tools = cJSON_AddArrayToObject(tc, "tools"), *t;
		cJSON_ArrayForEach(t, c->tools)
		{
			cJSON *w = cJSON_CreateObject(), *spec = cJSON_AddObjectToObject(w, "toolSpec");
			cJSON *schema = wiretool(spec, t);
			cJSON_AddItemToObject(cJSON_AddObjectToObject(spec, "inputSchema"), "json", schema);
			cJSON_AddItemToArray(tools, w);
		}
	}
	*body = b;
	return 0;
}

static int parse(struct llm *l, const cJSON *body, struct llmreply *r, struct err *e)
{
	(void)l;
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "output"), "message");
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content"), *bl;
	if (!cJSON_IsArray(content))
		return errf(e, "no output.message.content in the response");
	const char *stop = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "stopReason"));
	struct buf text = {0};
	size_t n = 0;
	cJSON_ArrayForEach(bl, content)
		n += cJSON_GetObjectItemCaseSensitive(bl, "toolUse") != NULL;
	r->calls = n ? xcalloc(n, sizeof *r->calls) : NULL;
	cJSON_ArrayForEach(bl, content)
	{
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(bl, "text"));
		const cJSON *tu = cJSON_GetObjectItemCaseSensitive(bl, "toolUse");
		if (t)
			bufputs(&text, t);
		if (tu) {
			const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tu, "toolUseId"));
			const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tu, "name"));
			const cJSON *in = cJSON_GetObjectItemCaseSensitive(tu, "input");
			if (!id || !*id || !name || !*name) {
				buffree(&text);
				return errf(e, "toolUse %zu has no toolUseId or name", r->ncalls + 1);
			}
			wirecall(r, id, name, in ? cJSON_PrintUnformatted(in) : xstrdup(""));
		}
	}
	r->text = text.len ? text.data : NULL;
	if (!text.len)
		buffree(&text);
	r->finish_raw = xstrdup(stop ? stop : "");
	if (stop && strcmp(stop, "max_tokens") == 0)
		r->finish = FINISH_LENGTH;
	else if (stop && (strcmp(stop, "guardrail_intervened") == 0 || strcmp(stop, "content_filtered") == 0))
		r->finish = FINISH_REFUSAL;
	else if (r->ncalls)
		r->finish = FINISH_TOOLS;
	else if (!stop || strcmp(stop, "end_turn") == 0 || strcmp(stop, "stop_sequence") == 0)
		r->finish = FINISH_STOP;
	else
		r->finish = FINISH_OTHER;
	wirecut(r);
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(body, "usage");
	/* As Anthropic counts: inputTokens leaves out what the cache read and wrote. */
	r->usage.cached = wirecount(u, "cacheReadInputTokens", NULL);
	r->usage.input = wirecount(u, "inputTokens", NULL) + r->usage.cached + wirecount(u, "cacheWriteInputTokens", NULL);
	r->usage.output = wirecount(u, "outputTokens", NULL);
	return 0;
}

const struct llmops converseops = {request, parse, NULL, wirefree, NULL, NULL};

int converseopen(struct llm **l, const struct model *m, struct err *e)
{
	(void)e;
	*l = wirenew(sizeof(struct llm), &converseops, m);
	return 0;
}
