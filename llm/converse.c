/* converse: Amazon Bedrock's Converse API (POST /model/ID/converse), one shape for every model
   Bedrock serves (Anthropic's, Amazon Nova, Meta Llama, Mistral, ...). Signed by bedrock.c.

   Messages alternate user and assistant, starting with a user one; content is a list of blocks:
   {text}, {toolUse: {toolUseId, name, input}} from the assistant, {toolResult: {toolUseId,
   content: [{text}], status}} in the user message after it (one per toolUse, all in that one
   message). system is [{text}], limits go in inferenceConfig, tools in toolConfig as toolSpec
   with inputSchema.json. The answer: output.message, stopReason, usage {inputTokens,
   outputTokens, cacheReadInputTokens, cacheWriteInputTokens}.

   ConverseStream (POST /model/ID/converse-stream) answers the same in AWS event stream frames
   (evstream.c), one event each, named by :event-type: messageStart {role}, contentBlockStart
   {contentBlockIndex, start: {toolUse: {toolUseId, name}}}, contentBlockDelta {contentBlockIndex,
   delta: {text} or {toolUse: {input: a piece of the JSON text}}}, contentBlockStop, messageStop
   {stopReason}, metadata {usage, metrics}; assembled here into the Converse answer. */
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "evstream.h"
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

/* The Converse answer being rebuilt from ConverseStream's events. */
struct conv {
	cJSON *out, *content;  /* the answer, and its output.message.content */
	struct buf *input;     /* by block: the toolUse input's JSON text so far */
	struct buf *text;      /* by block: the text so far */
	int nblocks;
	int status;            /* an exception's HTTP status, 0 when none came */
};

#define CONVBLOCKS 1024 /* the most content blocks taken in one answer */

/* The block at index i of the answer (made, with the ones before it, when missing), or NULL. */
static cJSON *block(struct conv *c, const cJSON *ix)
{
	if (!cJSON_IsNumber(ix) || ix->valuedouble < 0 || ix->valuedouble >= CONVBLOCKS)
		return NULL;
	int i = ix->valueint;
	while (cJSON_GetArraySize(c->content) <= i)
		cJSON_AddItemToArray(c->content, cJSON_CreateObject());
	if (i >= c->nblocks) {
		c->input = xrealloc(c->input, (size_t)(i + 1) * sizeof *c->input);
		memset(c->input + c->nblocks, 0, (size_t)(i + 1 - c->nblocks) * sizeof *c->input);
		c->text = xrealloc(c->text, (size_t)(i + 1) * sizeof *c->text);
		memset(c->text + c->nblocks, 0, (size_t)(i + 1 - c->nblocks) * sizeof *c->text);
		c->nblocks = i + 1;
	}
	return cJSON_GetArrayItem(c->content, i);
}

static int onframe(void *ctx, const struct evmsg *m)
{
	struct conv *c = ctx;
	if (strcmp(m->msgtype, "event") != 0) { /* exception, error: the answer is that error */
		cJSON_Delete(c->out);
		c->out = evstreamerror(m, &c->status);
		return 1;
	}
	cJSON *ev = cJSON_ParseWithLength((const char *)m->payload, m->plen);
	if (!cJSON_IsObject(ev)) {
		cJSON_Delete(ev);
		return 0; /* a frame this client does not know the shape of (initial-response and the like) */
	}
	const char *t = m->evtype;
	const cJSON *ix = cJSON_GetObjectItemCaseSensitive(ev, "contentBlockIndex");
	if (strcmp(t, "contentBlockStart") == 0) {
		const cJSON *tu = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "start"), "toolUse");
		cJSON *b = block(c, ix);
		if (b && cJSON_IsObject(tu) && !cJSON_GetObjectItemCaseSensitive(b, "toolUse")) {
			cJSON *u = cJSON_AddObjectToObject(b, "toolUse");
			const cJSON *id = cJSON_GetObjectItemCaseSensitive(tu, "toolUseId");
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(tu, "name");
			if (cJSON_IsString(id))
				cJSON_AddItemToObject(u, "toolUseId", cJSON_Duplicate(id, 0));
			if (cJSON_IsString(name))
				cJSON_AddItemToObject(u, "name", cJSON_Duplicate(name, 0));
		}
	} else if (strcmp(t, "contentBlockDelta") == 0) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "delta");
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "text"));
		const char *in = cJSON_GetStringValue(
		        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "toolUse"), "input"));
		cJSON *b = block(c, ix);
		if (b && text)
			bufputs(&c->text[ix->valueint], text);
		if (b && in)
			bufputs(&c->input[ix->valueint], in);
	} else if (strcmp(t, "messageStop") == 0) {
		const cJSON *stop = cJSON_GetObjectItemCaseSensitive(ev, "stopReason");
		if (cJSON_IsString(stop)) {
			cJSON_DeleteItemFromObjectCaseSensitive(c->out, "stopReason");
			cJSON_AddItemToObject(c->out, "stopReason", cJSON_Duplicate(stop, 0));
		}
	} else if (strcmp(t, "metadata") == 0) {
		const cJSON *k;
		cJSON_ArrayForEach(k, ev)
			if (k->string && (strcmp(k->string, "usage") == 0 || strcmp(k->string, "metrics") == 0)) {
				cJSON_DeleteItemFromObjectCaseSensitive(c->out, k->string);
				cJSON_AddItemToObject(c->out, k->string, cJSON_Duplicate(k, 1));
			}
	}
	cJSON_Delete(ev);
	return 0;
}

static cJSON *assemble(struct llm *l, const char *text, size_t len, int *status, struct err *e)
{
	(void)l;
	struct conv c = {0};
	c.out = cJSON_CreateObject();
	cJSON *msg = cJSON_AddObjectToObject(cJSON_AddObjectToObject(c.out, "output"), "message");
	cJSON_AddStringToObject(msg, "role", "assistant");
	c.content = cJSON_AddArrayToObject(msg, "content");
	int rc = evstreameach((const unsigned char *)text, len, onframe, &c, e);
	for (int i = 0; rc == 0 && i < c.nblocks; i++) {
		cJSON *b = cJSON_GetArrayItem(c.content, i), *u = cJSON_GetObjectItemCaseSensitive(b, "toolUse");
		if (c.text[i].data && !u)
			cJSON_AddStringToObject(b, "text", c.text[i].data);
		if (!u)
			continue;
		/* the input as the plain answer has it: an object; a cut one stays text (never runs) */
		const char *js = c.input[i].data && *c.input[i].data ? c.input[i].data : "{}";
		cJSON *in = cJSON_Parse(js);
		cJSON_AddItemToObject(u, "input", in ? in : cJSON_CreateString(js));
	}
	if (rc == 0 && !cJSON_GetObjectItemCaseSensitive(c.out, "stopReason"))
		rc = errf(e, "the stream ended before messageStop");
	for (int i = 0; i < c.nblocks; i++) {
		buffree(&c.input[i]);
		buffree(&c.text[i]);
	}
	free(c.input);
	free(c.text);
	*status = c.status;
	if (rc < 0) {
		cJSON_Delete(c.out);
		return NULL;
	}
	return c.out;
}

const struct llmops converseops = {request, parse, NULL, wirefree, NULL, assemble, NULL};

int converseopen(struct llm **l, const struct model *m, struct err *e)
{
	(void)e;
	*l = wirenew(sizeof(struct llm), &converseops, m);
	return 0;
}
