/* test_context: request estimates, elision down to the low-water mark, and elision as a record says. */
#include <limits.h>
#include <stdlib.h>
#include "../../run/context.h"
#include "t.h"

/* A conversation of n turns: a user message, then each an assistant call and a tool result of size bytes. */
static cJSON *talk(int n, size_t size, cJSON *steps)
{
	cJSON *msgs = cJSON_CreateArray();
	cJSON *u = cJSON_CreateObject();
	cJSON_AddStringToObject(u, "role", "user");
	cJSON_AddStringToObject(u, "content", "go");
	cJSON_AddItemToArray(msgs, u);
	char *body = malloc(size + 1);
	memset(body, 'x', size);
	body[size] = 0;
	for (int i = 0; i < n; i++) {
		char id[32];
		snprintf(id, sizeof id, "call_%d", i);
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "role", "assistant");
		cJSON_AddItemToArray(msgs, a);
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "role", "tool");
		cJSON_AddStringToObject(t, "tool_call_id", id);
		cJSON_AddStringToObject(t, "name", "shell");
		cJSON_AddStringToObject(t, "content", body);
		cJSON_AddItemToArray(msgs, t);
		cJSON_AddNumberToObject(steps, id, i + 1);
	}
	free(body);
	return msgs;
}

static const char *content(cJSON *msgs, int i)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(msgs, i), "content"));
}

int main(void)
{
	struct ctx c;
	ctxinit(&c);
	/* Before any usage: 1 token per 2 bytes. */
	ok(ctxestimate(&c, 1000) == 516, "first estimate %lld", (long long)ctxestimate(&c, 1000));
	/* 4000 bytes counted as 1000 tokens: a longer request is that count plus the new bytes at the
	 * rate with its margin; a shorter one (an elision) all of it at that rate. */
	ctxcalibrate(&c, 4000, 1000);
	ok(ctxestimate(&c, 8000) == 1000 + 1100 + 16, "grown: %lld", (long long)ctxestimate(&c, 8000));
	ok(ctxestimate(&c, 4000) == 1000 + 16, "same: %lld", (long long)ctxestimate(&c, 4000));
	ok(ctxestimate(&c, 2000) == 550 + 16, "shrunk: %lld", (long long)ctxestimate(&c, 2000));
	/* never below what the bytes hold at the reported rate */
	for (size_t b = 1; b < 100000; b += 997)
		ok(ctxestimate(&c, b) >= (int64_t)(b / 4), "estimate %zu", b);
	/* a request with no usage reported: the next estimate is a whole one */
	ctxcalibrate(&c, 9000, 0);
	ok(ctxestimate(&c, 10000) == 2750 + 16, "unknown last: %lld", (long long)ctxestimate(&c, 10000));

	/* ctxfit: past the high-water mark, the oldest results go, the newest turn stays. */
	cJSON *steps = cJSON_CreateObject();
	cJSON *msgs = talk(6, 4000, steps);
	ctxinit(&c);
	ctxcalibrate(&c, 30000, 7500);
	int64_t after;
	cJSON *ev = NULL;
	int nofit = ctxfit(&c, msgs, steps, 9000, 500, 9600, &after, &ev);
	ok(!nofit && ev, "an elision (nofit %d)", nofit);
	cJSON *list = cJSON_GetObjectItemCaseSensitive(ev, "elided");
	ok(cJSON_GetArraySize(list) == 5, "five elided: %d", cJSON_GetArraySize(list));
	ok(strstr(content(msgs, 2), "the result of step 1 (shell, 4000 bytes)") != NULL, "note: %s", content(msgs, 2));
	ok(strlen(content(msgs, 12)) == 4000, "the newest result kept");
	ok(after < 9000 * 0.5, "down towards the low-water mark: %lld", (long long)after);

	/* ctxelideid: the same notes from the items of a record, whatever the marks say */
	cJSON *steps2 = cJSON_CreateObject();
	cJSON *again = talk(6, 4000, steps2);
	cJSON *it;
	char why[300];
	cJSON_ArrayForEach(it, list)
		ok(ctxelideid(again, steps2, it, why, sizeof why) == 0, "elide as recorded: %s", why);
	char *x = cJSON_PrintUnformatted(msgs), *y = cJSON_PrintUnformatted(again);
	okstr(y, x, "the same conversation as the elision made");
	free(x);
	free(y);
	/* what cannot be applied says why */
	ok(ctxelideid(again, steps2, cJSON_GetArrayItem(list, 0), why, sizeof why) < 0 && strstr(why, "no whole result"),
	   "an elided result again: %s", why);
	cJSON *bad = cJSON_Parse("{\"call_id\":\"call_5\",\"bytes\":3999}");
	ok(ctxelideid(again, steps2, bad, why, sizeof why) < 0 && strstr(why, "holds 4000 bytes"), "size: %s", why);
	cJSON_Delete(bad);
	bad = cJSON_Parse("{\"call_id\":\"call_77\"}");
	ok(ctxelideid(again, steps2, bad, why, sizeof why) < 0 && strstr(why, "call_77"), "unknown: %s", why);
	cJSON_Delete(bad);
	bad = cJSON_Parse("{\"step\":1}");
	ok(ctxelideid(again, steps2, bad, why, sizeof why) < 0, "no call id");
	cJSON_Delete(bad);
	ok(strlen(content(again, 12)) == 4000, "nothing else touched");

	/* Turns of two calls each (a big result and a small one, as a denied call's), the assistant's
	 * text and thinking: the old turns' calls and results go whole into one note; the newest turn
	 * stays; every call still in the conversation is answered; the event counts what went. */
	cJSON *two = cJSON_Parse("[{\"role\":\"user\",\"content\":\"go\"}]"), *steps3 = cJSON_CreateObject();
	char *big = malloc(6001);
	memset(big, 'y', 6000);
	big[6000] = 0;
	for (int i = 0; i < 8; i++) {
		char a[64], b[64];
		snprintf(a, sizeof a, "t%d_a", i);
		snprintf(b, sizeof b, "t%d_b", i);
		cJSON *m = cJSON_CreateObject(), *calls = cJSON_AddArrayToObject(m, "tool_calls"), *tc;
		cJSON_AddStringToObject(m, "role", "assistant");
		cJSON_AddStringToObject(m, "content", "thinking aloud");
		cJSON_AddItemToObject(m, "thinking", cJSON_Parse("[{\"type\":\"thinking\",\"thinking\":\"hm\"}]"));
		const char *ids[] = {a, b};
		for (int k = 0; k < 2; k++) {
			tc = cJSON_CreateObject();
			cJSON_AddStringToObject(tc, "id", ids[k]);
			cJSON_AddStringToObject(tc, "name", k ? "shell" : "write_file");
			cJSON *args = cJSON_AddObjectToObject(tc, "arguments");
			cJSON_AddStringToObject(args, "content", k ? "rm -rf /" : big);
			cJSON_AddItemToArray(calls, tc);
			cJSON_AddNumberToObject(steps3, ids[k], 2 * i + k + 1);
		}
		cJSON_AddItemToArray(two, m);
		for (int k = 0; k < 2; k++) {
			cJSON *t = cJSON_CreateObject();
			cJSON_AddStringToObject(t, "role", "tool");
			cJSON_AddStringToObject(t, "tool_call_id", ids[k]);
			cJSON_AddStringToObject(t, "name", k ? "shell" : "write_file");
			cJSON_AddStringToObject(t, "content", k ? "denied: no rule allows it" : big);
			cJSON_AddItemToArray(two, t);
		}
	}
	free(big);
	cJSON_Delete(ev);
	ctxinit(&c);
	ctxcalibrate(&c, 100000, 25000);
	nofit = ctxfit(&c, two, steps3, 30000, 1000, 31000, &after, &ev);
	ok(!nofit && ev, "two calls a turn: an elision");
	int removed = ctxcollapse(two, steps3), calls = 0, answers = 0;
	ok(removed > 0, "collapsed %d messages", removed);
	const cJSON *m2;
	cJSON_ArrayForEach(m2, two)
	{
		calls += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m2, "tool_calls"));
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m2, "role"));
		answers += role && strcmp(role, "tool") == 0;
	}
	ok(calls == answers && calls >= 2, "every call kept is answered: %d calls, %d results", calls, answers);
	ok(strstr(content(two, 1), "earlier tool calls (steps 1 to ") != NULL, "one note: %s", content(two, 1));
	ok(strlen(content(two, cJSON_GetArraySize(two) - 2)) == 6000, "the newest turn's result kept");
	ok(ctxcollapse(two, steps3) == 0, "collapsing again changes nothing");
	cJSON_Delete(ev);
	cJSON_Delete(two);
	cJSON_Delete(steps3);

	/* context.compact: summarize. The span a summary stands for keeps the task and the newest turn,
	 * never parts a call from its result, and stays within its bytes. */
	cJSON *steps4 = cJSON_CreateObject(), *conv = talk(10, 500, steps4);
	int span = ctxcompactspan(conv, 1u << 30);
	ok(span == 18, "all but the task and the newest turn: %d of 21", span);
	int small = ctxcompactspan(conv, 2000);
	ok(small >= 2 && small < 18 && small % 2 == 0, "within 2000 bytes, a call with its result: %d", small);
	ok(ctxcompactspan(conv, 100) == 0, "room for less than two messages: none");
	char *tr = ctxtranscript(conv, 1, 2);
	ok(strstr(tr, "[assistant]") && strstr(tr, "[result of shell]"), "a transcript names roles: %.60s", tr);
	free(tr);
	char whyc[300];
	ok(ctxcompact(conv, steps4, 1, 1, "s", whyc, sizeof whyc) < 0, "a range that parts a call from its result: %s", whyc);
	ok(ctxcompact(conv, steps4, 1, 100, "s", whyc, sizeof whyc) < 0, "a range past the end: %s", whyc);
	/* a record's numbers: first + count must not wrap past INT_MAX into a range that "fits" */
	ok(ctxcompact(conv, steps4, 1, INT_MAX, "s", whyc, sizeof whyc) < 0, "a count of INT_MAX: %s", whyc);
	ok(ctxcompact(conv, steps4, INT_MAX, 2, "s", whyc, sizeof whyc) < 0, "a first of INT_MAX: %s", whyc);
	ok(ctxcompact(conv, steps4, INT_MAX, INT_MAX, "s", whyc, sizeof whyc) < 0, "both INT_MAX: %s", whyc);
	ok(cJSON_GetArraySize(conv) == 21, "a refused range leaves the conversation as it was");
	ok(ctxcompact(conv, steps4, 1, span, "the summary", whyc, sizeof whyc) == 0, "compacted");
	ok(cJSON_GetArraySize(conv) == 4 && strstr(content(conv, 1), "the summary") && strcmp(content(conv, 0), "go") == 0,
	   "the task, the summary, the newest turn: %d messages", cJSON_GetArraySize(conv));
	ok(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(conv, 1), "compacted")) == 0 &&
	       cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(conv, 1), "compacted")->valueint == 18,
	   "the summary says what it stands for");
	ok(ctxcompactspan(conv, 1u << 30) == 0, "then nothing more to compact");
	cJSON_Delete(conv);
	cJSON_Delete(steps4);

	cJSON_Delete(msgs);
	cJSON_Delete(again);
	cJSON_Delete(steps);
	cJSON_Delete(steps2);
	return tdone();
}
