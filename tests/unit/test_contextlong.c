/* test_contextlong: a long job stays within its window. 2,000 turns that each write a 20 KB file
 * (write_file's arguments are the big part, its result is short) in a 128k window: every request
 * fits, the request and the conversation's message count stop growing, and a replay that applies
 * each recorded context_elided event (items, then the collapse) reaches the same conversation. */
#include <stdlib.h>
#include "../../run/context.h"
#include "t.h"

enum { TURNS = 2000, WRITE = 20 * 1024, WINDOW = 128000, OUTCAP = 4096 };

/* Append turn i: an assistant message calling write_file with WRITE bytes, and its result. */
static void turn(cJSON *msgs, cJSON *steps, int i, const char *body)
{
	char id[32], path[32], res[64];
	snprintf(id, sizeof id, "call_%d", i);
	snprintf(path, sizeof path, "f%d.txt", i % 7);
	snprintf(res, sizeof res, "wrote %d bytes to %s", WRITE, path);
	cJSON *a = cJSON_CreateObject(), *calls = cJSON_CreateArray(), *tc = cJSON_CreateObject(), *args = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "role", "assistant");
	cJSON_AddNullToObject(a, "content");
	cJSON_AddStringToObject(tc, "id", id);
	cJSON_AddStringToObject(tc, "name", "write_file");
	cJSON_AddStringToObject(args, "path", path);
	cJSON_AddStringToObject(args, "content", body);
	cJSON_AddItemToObject(tc, "arguments", args);
	cJSON_AddItemToArray(calls, tc);
	cJSON_AddItemToObject(a, "tool_calls", calls);
	cJSON_AddItemToArray(msgs, a);
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "role", "tool");
	cJSON_AddStringToObject(t, "tool_call_id", id);
	cJSON_AddStringToObject(t, "name", "write_file");
	cJSON_AddStringToObject(t, "content", res);
	cJSON_AddItemToArray(msgs, t);
	cJSON_AddNumberToObject(steps, id, i + 1);
}

static size_t size(const cJSON *msgs)
{
	char *t = cJSON_PrintUnformatted(msgs);
	size_t n = strlen(t);
	free(t);
	return n;
}

int main(void)
{
	char *body = malloc(WRITE + 1);
	for (int i = 0; i < WRITE; i++)
		body[i] = (char)('a' + i % 26);
	body[WRITE] = 0;
	cJSON *live = cJSON_Parse("[{\"role\":\"user\",\"content\":\"write the files\"}]"), *steps = cJSON_CreateObject();
	cJSON *copy = cJSON_Duplicate(live, 1), *steps2 = cJSON_CreateObject();
	struct ctx c;
	ctxinit(&c);
	int fits = 1, elisions = 0, replayed = 1;
	size_t most100 = 0, mostlate = 0;
	int countmid = 0, countlate = 0;
	char why[300] = "";
	for (int i = 0; i < TURNS && fits; i++) {
		turn(live, steps, i, body);
		turn(copy, steps2, i, body);
		size_t bytes = size(live);
		int64_t est = ctxestimate(&c, bytes), after;
		cJSON *ev = NULL;
		if (ctxfit(&c, live, steps, est, OUTCAP, WINDOW, &after, &ev))
			fits = 0;
		if (ev) {
			elisions++;
			int removed = ctxcollapse(live, steps);
			/* the replay: the record's items, then its collapse */
			const cJSON *it;
			cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(ev, "elided"))
				if (ctxelideid(copy, steps2, it, why, sizeof why) < 0)
					replayed = 0;
			if (ctxcollapse(copy, steps2) != removed)
				replayed = 0;
			cJSON_Delete(ev);
			bytes = size(live);
		}
		ctxcalibrate(&c, bytes, (int64_t)(bytes + 3) / 4); /* the provider: a token per 4 bytes */
		if ((int64_t)(bytes + 3) / 4 + OUTCAP > WINDOW)
			fits = 0;
		if (i < 100 && bytes > most100)
			most100 = bytes;
		if (i >= TURNS - 100 && bytes > mostlate)
			mostlate = bytes;
		if (i == TURNS / 2)
			countmid = cJSON_GetArraySize(live);
		if (i == TURNS - 1)
			countlate = cJSON_GetArraySize(live);
	}
	ok(fits, "every one of %d turns of a %d-byte write_file fits a %d-token window", TURNS, WRITE, WINDOW);
	ok(elisions > TURNS / 40, "elided %d times", elisions);
	ok(mostlate <= most100 + most100 / 20, "the largest request of the last 100 turns (%zu bytes) is no larger than of "
	   "the first 100 (%zu)", mostlate, most100);
	ok(countlate > 0 && countlate <= countmid + 60 && countlate < 200, "the conversation's messages stop growing: %d at "
	   "turn %d, %d at the end", countmid, TURNS / 2, countlate);
	ok(cJSON_GetArraySize(steps) == cJSON_GetArraySize(steps2) && cJSON_GetArraySize(steps) < 200,
	   "the steps map holds the calls still in the conversation: %d", cJSON_GetArraySize(steps));
	ok(replayed, "each recorded elision applies to the replayed conversation %s", why);
	char *x = cJSON_PrintUnformatted(live), *y = cJSON_PrintUnformatted(copy);
	ok(x && y && strcmp(x, y) == 0, "the replayed conversation is the one the night sent");
	/* the collapse leaves one note per run, naming the steps, and every call answered */
	const cJSON *m;
	int notes = 0, lastnote = 0, calls = 0, answers = 0;
	cJSON_ArrayForEach(m, live)
	{
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "role"));
		int note = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(m, "collapsed"));
		ok(!(note && lastnote), "no two notes in a row");
		notes += note;
		lastnote = note;
		calls += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m, "tool_calls"));
		answers += role && strcmp(role, "tool") == 0;
	}
	ok(notes == 1 && strstr(x, "steps 1 to") != NULL, "one collapse note naming the steps (%d)", notes);
	ok(calls == answers, "every call kept is answered: %d calls, %d results", calls, answers);
	free(x);
	free(y);
	/* an item of an unknown part, or of a call no longer whole, says why */
	cJSON *bad = cJSON_Parse("{\"call_id\":\"call_1\",\"part\":\"arguments\"}");
	ok(ctxelideid(copy, steps2, bad, why, sizeof why) < 0 && strstr(why, "call_1"), "gone: %s", why);
	cJSON_Delete(bad);
	bad = cJSON_Parse("{\"call_id\":\"call_1\",\"part\":\"other\"}");
	ok(ctxelideid(copy, steps2, bad, why, sizeof why) < 0 && strstr(why, "unknown part"), "part: %s", why);
	cJSON_Delete(bad);
	cJSON_Delete(live);
	cJSON_Delete(copy);
	cJSON_Delete(steps);
	cJSON_Delete(steps2);
	free(body);
	return tdone();
}
