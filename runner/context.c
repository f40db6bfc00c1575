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
}

int64_t ctxestimate(const struct ctx *c, size_t bytes)
{
	return (int64_t)ceil((double)bytes * c->rate) + 16;
}

void ctxcalibrate(struct ctx *c, size_t bytes, int64_t input)
{
	if (input <= 0 || bytes == 0)
		return;
	/* The rate of the last request, with a 10% margin for what the next one adds: new text may
	 * tokenize denser than the conversation so far. */
	c->rate = (double)input / (double)bytes * 1.1;
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
		cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
		const char *text = cJSON_GetStringValue(content);
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "tool_call_id"));
		const char *tool = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
		const cJSON *st = id ? cJSON_GetObjectItemCaseSensitive(steps, id) : NULL;
		size_t len = text ? strlen(text) : 0;
		char note[300];
		if (cJSON_IsNumber(st))
			snprintf(note, sizeof note, "[elided to fit the context window: the result of step %d (%.60s, %zu bytes) was "
			         "removed from the conversation; call the tool again if you need it]", st->valueint,
			         tool ? tool : "?", len);
		else
			snprintf(note, sizeof note, "[elided to fit the context window: this result (%.60s, %zu bytes) was removed "
			         "from the conversation; call the tool again if you need it]", tool ? tool : "?", len);
		size_t was = text ? jsonlen(text) : 2, is = jsonlen(note);
		if (was <= is)
			continue;
		int64_t saved = (int64_t)floor((double)(was - is) * c->rate / 1.1); /* the rate's margin is not saved */
		if (!list) {
			*ev = cJSON_CreateObject();
			list = cJSON_CreateArray();
		}
		cJSON *it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "call_id", id ? id : "");
		if (cJSON_IsNumber(st))
			cJSON_AddNumberToObject(it, "step", st->valueint);
		cJSON_AddStringToObject(it, "tool", tool ? tool : "");
		cJSON_AddNumberToObject(it, "bytes", (double)len);
		cJSON_AddItemToArray(list, it);
		cJSON_ReplaceItemInObjectCaseSensitive(m, "content", cJSON_CreateString(note));
		cJSON_AddTrueToObject(m, "elided");
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
