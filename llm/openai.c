/* openai: chat completions, also for OpenAI-compatible servers (vLLM, llama.cpp, Ollama) via base_url. */
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "llm.h"
#include "sse.h"
#include "wire.h"
#include "../util/jsonout.h"

struct openai {
	struct llm base;
	int replies; /* parsed so far, to name calls a server left without an id */
};

/* One neutral message in chat-completions form. */
static cJSON *wiremessage(const cJSON *m)
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
	return w;
}

/* Drop what was kept from item i on. */
static void keptcut(struct llm *l, int i)
{
	while (cJSON_GetArraySize(l->keptsrc) > i) {
		cJSON_DeleteItemFromArray(l->keptsrc, i);
		cJSON_DeleteItemFromArray(l->keptwire, i);
	}
	l->kepttext.len = i ? l->keptend[i - 1] : 0;
}

/* Keep the text of w, the i-th message kept. */
static void keptadd(struct llm *l, int i, const cJSON *w)
{
	if ((size_t)i >= l->keptcap) {
		l->keptcap = l->keptcap ? 2 * l->keptcap : 64;
		l->keptend = xrealloc(l->keptend, l->keptcap * sizeof *l->keptend);
	}
	if (jsonout(&l->kepttext, w) < 0)
		bufputs(&l->kepttext, "null"); /* none is made here: a type cJSON cannot print */
	bufputc(&l->kepttext, ',');
	l->keptend[i] = l->kepttext.len;
}

/* Whether two trees are equal member by member in the same order (a message kept is a copy of
 * the one it was made from, so an equal one has its order; cJSON_Compare looks every key up, both
 * ways). */
static int same(const cJSON *a, const cJSON *b)
{
	if ((a->type & 0xff) != (b->type & 0xff))
		return 0;
	if (cJSON_IsString(a) || cJSON_IsRaw(a))
		return strcmp(a->valuestring, b->valuestring) == 0;
	if (cJSON_IsNumber(a))
		return a->valuedouble == b->valuedouble;
	if (!cJSON_IsArray(a) && !cJSON_IsObject(a))
		return 1; /* true, false, null */
	const cJSON *x = a->child, *y = b->child;
	for (; x && y; x = x->next, y = y->next)
		if ((cJSON_IsObject(a) && strcmp(x->string, y->string) != 0) || !same(x, y))
			return 0;
	return !x && !y;
}

/* The neutral messages in chat-completions form. The client keeps the messages it converted last
 * time (a copy of each, l->keptsrc) beside their wire form (l->keptwire) and its text (l->kepttext):
 * the prefix that is still equal is taken from there, and only what changed or is new is converted
 * and printed (and kept in its turn). The array is printed by text() from l->sentsystem and
 * l->kepttext; for llmprepare (l->textonly) the array itself stays empty, as only that text is
 * sent. */
static cJSON *wiremessages(struct llm *l, const struct chat *c)
{
	cJSON *out = cJSON_CreateArray(), *m;
	free(l->sentsystem);
	l->sentsystem = NULL;
	if (c->system && *c->system) {
		cJSON *s = cJSON_CreateObject();
		cJSON_AddStringToObject(s, "role", "system");
		cJSON_AddStringToObject(s, "content", c->system);
		l->sentsystem = jsonprint(s);
		if (l->textonly)
			cJSON_Delete(s);
		else
			cJSON_AddItemToArray(out, s);
	}
	if (!l->keptsrc) {
		l->keptsrc = cJSON_CreateArray();
		l->keptwire = cJSON_CreateArray();
	}
	cJSON *src = l->keptsrc->child, *wire = l->keptwire->child;
	int kept = 1, i = 0;
	cJSON_ArrayForEach(m, c->messages)
	{
		if (kept && src && same(src, m)) {
			if (!l->textonly)
				cJSON_AddItemToArray(out, cJSON_Duplicate(wire, 1));
			src = src->next;
			wire = wire->next;
			i++;
			continue;
		}
		if (kept) { /* the first change: what was kept from here on is stale */
			keptcut(l, i);
			kept = 0;
		}
		cJSON *w = wiremessage(m);
		cJSON_AddItemToArray(l->keptsrc, cJSON_Duplicate(m, 1));
		cJSON_AddItemToArray(l->keptwire, w);
		if (!l->textonly)
			cJSON_AddItemToArray(out, cJSON_Duplicate(w, 1));
		keptadd(l, i++, w);
	}
	if (kept)
		keptcut(l, i);
	l->sentmsgs = out;
	return out;
}

/* The body printed as cJSON_PrintUnformatted prints it, with the messages array's text taken from
 * wiremessages (the bulk of a request, printed once a message, not once a turn). */
static char *text(struct llm *l, const cJSON *body, size_t hint)
{
	struct buf b = {0};
	bufgrow(&b, hint + 4096);
	bufputc(&b, '{');
	const cJSON *ch;
	cJSON_ArrayForEach(ch, body)
	{
		if (!ch->string || ch->string[strcspn(ch->string, "\"\\\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r"
		                                               "\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19"
		                                               "\x1a\x1b\x1c\x1d\x1e\x1f")]) {
			buffree(&b); /* a key cJSON would escape: none is made here, but print it whole */
			return cJSON_PrintUnformatted(body);
		}
		bufprintf(&b, "%s\"%s\":", b.len > 1 ? "," : "", ch->string);
		if (ch == l->sentmsgs) {
			bufputc(&b, '[');
			if (l->sentsystem) {
				bufputs(&b, l->sentsystem);
				if (l->kepttext.len)
					bufputc(&b, ',');
			}
			if (l->kepttext.len) /* without the last comma */
				bufadd(&b, l->kepttext.data, l->kepttext.len - 1);
			bufputc(&b, ']');
		} else {
			jsonout(&b, ch);
		}
	}
	bufputc(&b, '}');
	return b.data;
}

static int request(struct llm *l, const struct chat *c, char **url, struct strv *headers, cJSON **body, struct err *e)
{
	const struct model *m = l->model;
	*url = llmurl(m, "https://api.openai.com/v1", "/chat/completions");
	wirebearer(l, headers);
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "model", m->model);
	cJSON_AddItemToObject(b, "messages", wiremessages(l, c));
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

/* Streaming: chunks with include_usage, so the last one carries the usage a plain answer has. */
static int stream(struct llm *l, cJSON *body, char **url)
{
	(void)l;
	(void)url;
	cJSON_AddTrueToObject(body, "stream");
	cJSON_AddTrueToObject(cJSON_AddObjectToObject(body, "stream_options"), "include_usage");
	return 1;
}

/* The chat.completion being rebuilt from chat.completion.chunk events. */
struct chunks {
	cJSON *out, *msg, *calls;
	struct buf text, refusal;
	int gottext, gotrefusal;
	int ended; /* [DONE] or a finish_reason came: the answer is whole */
	struct err *e;
};

/* Append the string at o[k] to a string item of obj named k, making it when missing. */
static void appendstr(cJSON *obj, const char *k, const char *add)
{
	const cJSON *have = cJSON_GetObjectItemCaseSensitive(obj, k);
	char *joined = xasprintf("%s%s", cJSON_GetStringValue(have) ? have->valuestring : "", add);
	if (have)
		cJSON_ReplaceItemInObjectCaseSensitive(obj, k, cJSON_CreateString(joined));
	else
		cJSON_AddStringToObject(obj, k, joined);
	free(joined);
}

static int onchunk(void *ctx, const char *event, const char *data)
{
	struct chunks *c = ctx;
	(void)event;
	if (strcmp(data, "[DONE]") == 0) {
		c->ended = 1;
		return 0;
	}
	cJSON *ch = cJSON_Parse(data);
	if (!ch)
		return errf(c->e, "a stream chunk that is not JSON: %.200s", data), -1;
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(ch, "error");
	if (err) {
		/* an error in the stream: kept as the answer, which the caller reads as an error body */
		cJSON_Delete(c->out);
		c->out = cJSON_CreateObject();
		cJSON_AddItemToObject(c->out, "error", cJSON_Duplicate(err, 1));
		cJSON_Delete(ch);
		return 1;
	}
	static const char *const top[] = {"id", "created", "model", "system_fingerprint", "service_tier", NULL};
	for (size_t i = 0; top[i]; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(ch, top[i]);
		if (v && !cJSON_IsNull(v) && !cJSON_GetObjectItemCaseSensitive(c->out, top[i]))
			cJSON_AddItemToObject(c->out, top[i], cJSON_Duplicate(v, 1));
	}
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(ch, "usage");
	if (cJSON_IsObject(u)) {
		cJSON_DeleteItemFromObjectCaseSensitive(c->out, "usage");
		cJSON_AddItemToObject(c->out, "usage", cJSON_Duplicate(u, 1));
	}
	const cJSON *choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ch, "choices"), 0);
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(choice, "delta");
	const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "content"));
	const char *r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "refusal"));
	if (t)
		bufputs(&c->text, t), c->gottext = 1;
	if (r)
		bufputs(&c->refusal, r), c->gotrefusal = 1;
	const cJSON *tc;
	cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(d, "tool_calls"))
	{
		const cJSON *ix = cJSON_GetObjectItemCaseSensitive(tc, "index");
		int i = cJSON_IsNumber(ix) && ix->valuedouble >= 0 && ix->valuedouble < 1024 ? ix->valueint
		      : cJSON_GetArraySize(c->calls);
		while (cJSON_GetArraySize(c->calls) <= i) {
			cJSON *n = cJSON_CreateObject();
			cJSON_AddStringToObject(n, "type", "function");
			cJSON_AddObjectToObject(n, "function");
			cJSON_AddItemToArray(c->calls, n);
		}
		cJSON *call = cJSON_GetArrayItem(c->calls, i), *fn = cJSON_GetObjectItemCaseSensitive(call, "function");
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "id"));
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(tc, "function");
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "name"));
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(f, "arguments");
		if (id && *id)
			appendstr(call, "id", id);
		if (name)
			appendstr(fn, "name", name);
		if (cJSON_IsString(args))
			appendstr(fn, "arguments", args->valuestring);
		else if (args && !cJSON_IsNull(args)) /* a whole object, as some compatible servers send */
			cJSON_ReplaceItemInObjectCaseSensitive(fn, "arguments", cJSON_Duplicate(args, 1));
	}
	const char *fin = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(choice, "finish_reason"));
	cJSON *ch0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c->out, "choices"), 0);
	if (fin) {
		cJSON_ReplaceItemInObjectCaseSensitive(ch0, "finish_reason", cJSON_CreateString(fin));
		c->ended = 1;
	}
	cJSON_Delete(ch);
	return 0;
}

static cJSON *assemble(struct llm *l, const char *text, size_t len, int *status, struct err *e)
{
	(void)l;
	(void)status;
	struct chunks c = {.e = e};
	c.out = cJSON_CreateObject();
	cJSON_AddStringToObject(c.out, "object", "chat.completion");
	cJSON *choice = cJSON_CreateObject();
	cJSON_AddNumberToObject(choice, "index", 0);
	c.msg = cJSON_AddObjectToObject(choice, "message");
	cJSON_AddStringToObject(c.msg, "role", "assistant");
	cJSON_AddNullToObject(choice, "finish_reason");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(c.out, "choices"), choice);
	c.calls = cJSON_CreateArray();
	int rc = sseeach(text, len, onchunk, &c);
	/* a stream cut before its end (a proxy's clean close) is no answer: its last call may be half */
	if (rc == 0 && !c.ended)
		rc = errf(e, "the stream ended before a finish_reason or [DONE]");
	if (rc == 0) {
		if (c.gottext)
			cJSON_AddStringToObject(c.msg, "content", c.text.data);
		else
			cJSON_AddNullToObject(c.msg, "content");
		if (c.gotrefusal)
			cJSON_AddStringToObject(c.msg, "refusal", c.refusal.data);
		if (cJSON_GetArraySize(c.calls)) {
			cJSON_AddItemToObject(c.msg, "tool_calls", c.calls);
			c.calls = NULL;
		}
	}
	cJSON_Delete(c.calls);
	buffree(&c.text);
	buffree(&c.refusal);
	if (rc < 0) {
		cJSON_Delete(c.out);
		return NULL;
	}
	return c.out;
}

const struct llmops openaiops = {request, parse, NULL, wirefree, stream, assemble, text};

int openaiopen(struct llm **l, const struct model *m, struct err *e)
{
	(void)e;
	*l = wirenew(sizeof(struct openai), &openaiops, m);
	return 0;
}
