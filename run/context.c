/* context: estimating a request's tokens, and (below) eliding old tool results to fit the window. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "context.h"

void ctxinit(struct ctx *c)
{
	c->rate = CTX_RATE0;
	c->lastbytes = 0;
	c->lastinput = 0;
}

int64_t ctxestimate(const struct ctx *c, size_t bytes)
{
	/* A request that grew from the last one: what the provider counted for that one, and the new
	 * bytes at the rate with its margin. Any other: all of it at the rate with its margin. */
	if (c->lastinput > 0 && bytes >= c->lastbytes)
		return c->lastinput + (int64_t)ceil((double)(bytes - c->lastbytes) * c->rate) + 16;
	return (int64_t)ceil((double)bytes * c->rate) + 16;
}

void ctxcalibrate(struct ctx *c, size_t bytes, int64_t input)
{
	if (input <= 0 || bytes == 0) {
		c->lastinput = 0; /* nothing known of this request: the next estimate is a whole one */
		return;
	}
	/* The rate of the last request, with a 10% margin for what the next one adds: new text may
	 * tokenize denser than the conversation so far. */
	c->rate = (double)input / (double)bytes * 1.1;
	c->lastbytes = bytes;
	c->lastinput = input;
}

/* Bytes a string takes in a JSON body. */
static size_t jsonlen(const char *s)
{
	cJSON *j = cJSON_CreateString(s);
	char *t = cJSON_PrintUnformatted(j);
	size_t n = strlen(t);
	free(t);
	cJSON_Delete(j);
	return n;
}

static int isrole(const cJSON *m, const char *role)
{
	const char *r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "role"));
	return r && strcmp(r, role) == 0;
}

/* The note that stands for an elided result, naming its step (or not) and how to get it again. */
static void notefor(const cJSON *m, const cJSON *steps, char *note, size_t size)
{
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "content"));
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "tool_call_id"));
	const char *tool = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
	const cJSON *st = id ? cJSON_GetObjectItemCaseSensitive(steps, id) : NULL;
	size_t len = text ? strlen(text) : 0;
	if (cJSON_IsNumber(st))
		snprintf(note, size, "[elided to fit the context window: the result of step %d (%.60s, %zu bytes) was "
		         "removed from the conversation; call the tool again if you need it]", st->valueint,
		         tool ? tool : "?", len);
	else
		snprintf(note, size, "[elided to fit the context window: this result (%.60s, %zu bytes) was removed "
		         "from the conversation; call the tool again if you need it]", tool ? tool : "?", len);
}

/* Replace the tool result m by its note; the item that says so in a context_elided event. */
static cJSON *elide(cJSON *m, const cJSON *steps, const char *note)
{
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "content"));
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "tool_call_id"));
	const char *tool = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
	const cJSON *st = id ? cJSON_GetObjectItemCaseSensitive(steps, id) : NULL;
	cJSON *it = cJSON_CreateObject();
	cJSON_AddStringToObject(it, "call_id", id ? id : "");
	if (cJSON_IsNumber(st))
		cJSON_AddNumberToObject(it, "step", st->valueint);
	cJSON_AddStringToObject(it, "tool", tool ? tool : "");
	cJSON_AddNumberToObject(it, "bytes", (double)(text ? strlen(text) : 0));
	cJSON_ReplaceItemInObjectCaseSensitive(m, "content", cJSON_CreateString(note));
	cJSON_AddTrueToObject(m, "elided");
	return it;
}

int ctxelideid(cJSON *messages, const cJSON *steps, const cJSON *item, char *why, size_t whysize)
{
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "call_id"));
	const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(item, "bytes");
	cJSON *m;
	if (!id || !*id) {
		snprintf(why, whysize, "an elided result names no call");
		return -1;
	}
	cJSON_ArrayForEach(m, messages)
	{
		const char *mid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "tool_call_id"));
		if (!isrole(m, "tool") || !mid || strcmp(mid, id) != 0)
			continue;
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "elided")))
			continue; /* a call id answered twice: the whole one is meant */
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "content"));
		size_t len = text ? strlen(text) : 0;
		if (cJSON_IsNumber(bytes) && bytes->valuedouble != (double)len) {
			snprintf(why, whysize, "the result of call %.80s holds %zu bytes, the record elided one of %.0f",
			         id, len, bytes->valuedouble);
			return -1;
		}
		char note[300];
		notefor(m, steps, note, sizeof note);
		cJSON_Delete(elide(m, steps, note));
		return 0;
	}
	snprintf(why, whysize, "the conversation holds no whole result of call %.80s to elide", id);
	return -1;
}

int ctxfit(const struct ctx *c, cJSON *messages, const cJSON *steps, int64_t input, int64_t outcap, int64_t window,
           int64_t *after, cJSON **ev)
{
	*ev = NULL;
	*after = input;
	int64_t room = window - outcap;
	if (room <= 0)
		return 1;
	if ((double)input <= CTX_HIGH * (double)room)
		return 0;
	/* The newest CTX_KEEP assistant turns and everything after them stay as they are. */
	int n = cJSON_GetArraySize(messages), keep = n, seen = 0;
	for (int i = n - 1; i >= 0 && seen < CTX_KEEP; i--)
		if (isrole(cJSON_GetArrayItem(messages, i), "assistant")) {
			keep = i;
			seen++;
		}
	int64_t target = (int64_t)(CTX_LOW * (double)room), now = input;
	cJSON *list = NULL;
	for (int i = 0; i < keep && now > target; i++) {
		cJSON *m = cJSON_GetArrayItem(messages, i);
		if (!isrole(m, "tool") || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "elided")))
			continue;
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "content"));
		char note[300];
		notefor(m, steps, note, sizeof note);
		size_t was = text ? jsonlen(text) : 2, is = jsonlen(note);
		if (was <= is)
			continue;
		int64_t saved = (int64_t)floor((double)(was - is) * c->rate / 1.1); /* the rate's margin is not saved */
		if (!list) {
			*ev = cJSON_CreateObject();
			list = cJSON_CreateArray();
		}
		cJSON_AddItemToArray(list, elide(m, steps, note));
		now -= saved;
	}
	*after = now;
	if (*ev) {
		cJSON_AddNumberToObject(*ev, "window", (double)window);
		cJSON_AddNumberToObject(*ev, "output_cap", (double)outcap);
		cJSON_AddNumberToObject(*ev, "estimated_before", (double)input);
		cJSON_AddNumberToObject(*ev, "estimated_after", (double)now);
		cJSON_AddItemToObject(*ev, "elided", list);
	}
	return now > room;
}
