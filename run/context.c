/* context: estimating a request's tokens, and (below) eliding old tool results to fit the window. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "context.h"
#include "../util/jsonout.h"
#include "../util/util.h"

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

/* Bytes a string takes in a JSON body, as cJSON prints it (counted, not printed: a call's
 * arguments may be large). */
static size_t jsonlen(const char *s)
{
	size_t n = 2;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += *p == '"' || *p == '\\' || *p == '\b' || *p == '\f' || *p == '\n' || *p == '\r' || *p == '\t' ? 2
		     : *p < 32 ? 6 : 1;
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

/* The arguments of a tool call as the model sent them: a string as it is, another value as JSON. New. */
static char *argtext(const cJSON *args)
{
	if (cJSON_IsString(args))
		return strdup(args->valuestring);
	return args ? cJSON_PrintUnformatted(args) : strdup("");
}

/* The note that stands for a call's elided arguments, naming its step (or not). */
static void argnote(const cJSON *tc, const cJSON *steps, size_t len, char *note, size_t size)
{
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "id"));
	const char *tool = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "name"));
	const cJSON *st = id ? cJSON_GetObjectItemCaseSensitive(steps, id) : NULL;
	if (cJSON_IsNumber(st))
		snprintf(note, size, "[elided to fit the context window: the arguments of step %d (%.60s, %zu bytes)]",
		         st->valueint, tool ? tool : "?", len);
	else
		snprintf(note, size, "[elided to fit the context window: the arguments of this call (%.60s, %zu bytes)]",
		         tool ? tool : "?", len);
}

/* Replace the arguments of tool call tc (of assistant message m) by {"elided": note}; m keeps no
 * text, thinking or carried items (they belong to a turn the model no longer sees whole). The item
 * that says so in a context_elided event; *saved the bytes the request loses (about). */
static cJSON *elidecall(cJSON *m, cJSON *tc, const cJSON *steps, size_t *saved)
{
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "id"));
	const char *tool = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "name"));
	const cJSON *st = id ? cJSON_GetObjectItemCaseSensitive(steps, id) : NULL;
	char *args = argtext(cJSON_GetObjectItemCaseSensitive(tc, "arguments"));
	size_t len = strlen(args), was = jsonlen(args);
	char note[200];
	argnote(tc, steps, len, note, sizeof note);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "elided", note);
	char *now = cJSON_PrintUnformatted(o);
	size_t is = jsonlen(now);
	free(now);
	free(args);
	*saved = was > is ? was - is : 0;
	cJSON_ReplaceItemInObjectCaseSensitive(tc, "arguments", o);
	cJSON_AddTrueToObject(tc, "elided");
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "elided"))) {
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "content"));
		if (text)
			*saved += jsonlen(text);
		cJSON_ReplaceItemInObjectCaseSensitive(m, "content", cJSON_CreateNull());
		cJSON_DeleteItemFromObjectCaseSensitive(m, "thinking");
		cJSON_DeleteItemFromObjectCaseSensitive(m, "carry");
		cJSON_AddTrueToObject(m, "elided");
	}
	cJSON *it = cJSON_CreateObject();
	cJSON_AddStringToObject(it, "call_id", id ? id : "");
	if (cJSON_IsNumber(st))
		cJSON_AddNumberToObject(it, "step", st->valueint);
	cJSON_AddStringToObject(it, "tool", tool ? tool : "");
	cJSON_AddNumberToObject(it, "bytes", (double)len);
	cJSON_AddStringToObject(it, "part", "arguments");
	return it;
}

/* Replay: elide the arguments of the call id names, when whole. */
static int elideargs(cJSON *messages, const cJSON *steps, const char *id, const cJSON *bytes, char *why, size_t whysize)
{
	cJSON *m, *tc;
	cJSON_ArrayForEach(m, messages)
	{
		if (!isrole(m, "assistant"))
			continue;
		cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(m, "tool_calls"))
		{
			const char *tid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "id"));
			if (!tid || strcmp(tid, id) != 0 || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tc, "elided")))
				continue;
			char *args = argtext(cJSON_GetObjectItemCaseSensitive(tc, "arguments"));
			size_t len = strlen(args), saved;
			free(args);
			if (cJSON_IsNumber(bytes) && bytes->valuedouble != (double)len) {
				snprintf(why, whysize, "the arguments of call %.80s hold %zu bytes, the record elided %.0f", id, len,
				         bytes->valuedouble);
				return -1;
			}
			cJSON_Delete(elidecall(m, tc, steps, &saved));
			return 0;
		}
	}
	snprintf(why, whysize, "the conversation holds no whole call %.80s to elide", id);
	return -1;
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
	const char *part = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "part"));
	if (part && strcmp(part, "arguments") == 0)
		return elideargs(messages, steps, id, bytes, why, whysize);
	if (part) {
		snprintf(why, whysize, "an elided item names an unknown part");
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

/* The index of the newest CTX_KEEP assistant turns' first message (n when there is none). */
static int keptfrom(const cJSON *messages)
{
	int n = cJSON_GetArraySize(messages), keep = n, seen = 0, i = 0;
	const cJSON **at = xcalloc(n ? (size_t)n : 1, sizeof *at), *m;
	cJSON_ArrayForEach(m, messages) at[i++] = m; /* one walk, not one a message */
	for (i = n - 1; i >= 0 && seen < CTX_KEEP; i--)
		if (isrole(at[i], "assistant")) {
			keep = i;
			seen++;
		}
	free(at);
	return keep;
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
	int keep = keptfrom(messages);
	int64_t target = (int64_t)(CTX_LOW * (double)room), now = input;
	cJSON *list = NULL;
	cJSON *m = messages ? messages->child : NULL, *tc;
	for (int i = 0; m && i < keep && now > target; i++, m = m->next) {
		if (isrole(m, "assistant")) {
			/* its calls' arguments go like results do: a write_file of 20 KB is not kept for ever */
			cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(m, "tool_calls"))
			{
				if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tc, "elided")))
					continue;
				size_t saved;
				if (!list) {
					*ev = cJSON_CreateObject();
					list = cJSON_CreateArray();
				}
				cJSON_AddItemToArray(list, elidecall(m, tc, steps, &saved));
				now -= (int64_t)floor((double)saved * c->rate / 1.1);
			}
			continue;
		}
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

/* Whether m is a collapse note. */
static int isnote(const cJSON *m)
{
	return isrole(m, "user") && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(m, "collapsed"));
}

/* Whether an elided turn starts at m: an assistant message whose calls were elided, and the tool
 * results after it, each elided or no longer than a note. *next is the message after it. */
static int elidedturn(cJSON *m, cJSON **next)
{
	if (!isrole(m, "assistant") || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "elided")))
		return 0;
	for (m = m->next; m && isrole(m, "tool"); m = m->next) {
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "content"));
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "elided")) && text && strlen(text) > 300)
			return 0;
	}
	*next = m;
	return 1;
}

/* Widen [first, last] by the step of call id. */
static void span(const cJSON *steps, const char *id, int *first, int *last)
{
	const cJSON *st = id ? cJSON_GetObjectItemCaseSensitive(steps, id) : NULL;
	if (!cJSON_IsNumber(st))
		return;
	if (*first < 0 || st->valueint < *first)
		*first = st->valueint;
	if (st->valueint > *last)
		*last = st->valueint;
}

int ctxcollapse(cJSON *messages, cJSON *steps)
{
	int removed = 0;
	cJSON *m = messages ? messages->child : NULL;
	while (m) {
		/* a run: notes and elided turns, one after another, holding at least one turn */
		cJSON *end = m, *e = NULL;
		int turns = 0, calls = 0, first = -1, last = -1;
		for (;;) {
			if (end && isnote(end)) {
				const cJSON *f = cJSON_GetObjectItemCaseSensitive(end, "first");
				const cJSON *l = cJSON_GetObjectItemCaseSensitive(end, "last");
				calls += cJSON_GetObjectItemCaseSensitive(end, "collapsed")->valueint;
				if (cJSON_IsNumber(f) && (first < 0 || f->valueint < first))
					first = f->valueint;
				if (cJSON_IsNumber(l) && l->valueint > last)
					last = l->valueint;
				end = end->next;
			} else if (end && elidedturn(end, &e)) {
				const cJSON *tc;
				cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(end, "tool_calls"))
				{
					span(steps, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "id")), &first, &last);
					calls++;
				}
				turns++;
				end = e;
			} else {
				break;
			}
		}
		if (!turns) {
			m = end && end != m ? end : m->next;
			continue;
		}
		char text[300];
		if (first >= 0)
			snprintf(text, sizeof text, "[elided to fit the context window: %d earlier tool call%s (steps %d to %d) with "
			         "%s arguments and results were removed from the conversation; call the tools again if you need "
			         "what they returned]", calls, calls == 1 ? "" : "s", first, last, calls == 1 ? "its" : "their");
		else
			snprintf(text, sizeof text, "[elided to fit the context window: %d earlier tool call%s with %s arguments "
			         "and results were removed from the conversation; call the tools again if you need what they "
			         "returned]", calls, calls == 1 ? "" : "s", calls == 1 ? "its" : "their");
		cJSON *note = cJSON_CreateObject();
		cJSON_AddStringToObject(note, "role", "user");
		cJSON_AddStringToObject(note, "content", text);
		cJSON_AddTrueToObject(note, "elided");
		cJSON_AddNumberToObject(note, "collapsed", calls);
		if (first >= 0) {
			cJSON_AddNumberToObject(note, "first", first);
			cJSON_AddNumberToObject(note, "last", last);
		}
		/* the steps of the calls that go are forgotten: the map holds what the conversation does */
		for (cJSON *x = m; x != end; x = x->next) {
			const cJSON *tc;
			cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(x, "tool_calls"))
			{
				const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "id"));
				if (id)
					cJSON_DeleteItemFromObjectCaseSensitive(steps, id);
			}
		}
		/* the note takes m's place; the rest of the run goes */
		for (cJSON *x = m->next, *nx; x != end; x = nx) {
			nx = x->next;
			cJSON_Delete(cJSON_DetachItemViaPointer(messages, x));
			removed++;
		}
		cJSON_ReplaceItemViaPointer(messages, m, note);
		m = end;
	}
	return removed;
}

int ctxcompactspan(const cJSON *messages, size_t maxbytes)
{
	int keep = keptfrom(messages), count = 0, i = 1;
	size_t bytes = 0;
	const cJSON *m = cJSON_GetArrayItem(messages, 1);
	for (; m && i < keep; i++, m = m->next) {
		char *t = jsonprint(m);
		bytes += t ? strlen(t) : 0;
		free(t);
		if (bytes > maxbytes)
			break;
		if (!m->next || !isrole(m->next, "tool")) /* an end that keeps each call with its results */
			count = i;
	}
	return count >= 2 ? count : 0;
}

/* Add one message to a transcript: its role, text, calls and their arguments. */
static void transcribe(struct buf *b, const cJSON *m)
{
	const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "role"));
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "content"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
	if (role && strcmp(role, "tool") == 0)
		bufprintf(b, "[result of %s]\n", name ? name : "a tool call");
	else
		bufprintf(b, "[%s]\n", role ? role : "user");
	if (text && *text) {
		bufputs(b, text);
		bufputc(b, '\n');
	}
	const cJSON *tc;
	cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(m, "tool_calls"))
	{
		const char *call = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "name"));
		char *args = jsonprint(cJSON_GetObjectItemCaseSensitive(tc, "arguments"));
		bufprintf(b, "[call of %s] ", call ? call : "a tool");
		bufputs(b, args ? args : "{}");
		bufputc(b, '\n');
		free(args);
	}
	bufputc(b, '\n');
}

char *ctxtranscript(const cJSON *messages, int first, int count)
{
	struct buf b = {0};
	bufputs(&b, "");
	const cJSON *m = cJSON_GetArrayItem(messages, first);
	for (int i = 0; m && i < count; i++, m = m->next)
		transcribe(&b, m);
	return b.data;
}

int ctxcompact(cJSON *messages, cJSON *steps, int first, int count, const char *summary, char *why, size_t whysize)
{
	int n = cJSON_GetArraySize(messages);
	if (first < 1 || count < 1 || first >= n || count > n - first) { /* never first + count: a record's may wrap */
		snprintf(why, whysize, "the conversation has %d messages, not the %d from message %d a summary stands for", n,
		         count, first);
		return -1;
	}
	cJSON *m = cJSON_GetArrayItem(messages, first);
	const cJSON *after = cJSON_GetArrayItem(messages, first + count);
	if (isrole(m, "tool") || (after && isrole(after, "tool"))) {
		snprintf(why, whysize, "messages %d to %d part a call from its results", first, first + count - 1);
		return -1;
	}
	char *text = xasprintf("[compacted to fit the context window: the %d messages before this one (after the task) "
	                       "were replaced by this summary of them; call the tools again if you need what they "
	                       "returned]\n%s", count, summary);
	cJSON *note = cJSON_CreateObject();
	cJSON_AddStringToObject(note, "role", "user");
	cJSON_AddStringToObject(note, "content", text);
	free(text);
	cJSON_AddNumberToObject(note, "compacted", count);
	/* the note takes the first one's place and the rest go (cJSON 1.7.15 does not insert after a
	 * delete: InsertItemInArray finds a detached neighbour's link and refuses) */
	for (int i = 0; i < count; i++, m = m->next) {
		const cJSON *tc;
		cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(m, "tool_calls"))
		{
			const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "id"));
			if (id)
				cJSON_DeleteItemFromObjectCaseSensitive(steps, id);
		}
	}
	cJSON *x = cJSON_GetArrayItem(messages, first);
	for (int i = 1; i < count; i++)
		cJSON_Delete(cJSON_DetachItemViaPointer(messages, x->next));
	cJSON_ReplaceItemViaPointer(messages, x, note);
	return 0;
}
