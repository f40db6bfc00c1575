/* test_events: the hash chain, secrets masking, and reading a log cut short by a crash. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../artifacts/events.h"
#include "t.h"

static char dir[] = "/tmp/ns-events.XXXXXX";

/* Read every line of path; returns the count, checks the chain as it goes. */
static int readchain(const char *path, int *chainok, int *truncated)
{
	struct evreader *r;
	struct err e = {0};
	const char *line;
	size_t len;
	char prev[65];
	memset(prev, '0', 64);
	prev[64] = 0;
	int n = 0, rc;
	*chainok = 1;
	if (evropen(&r, path, &e) < 0)
		return -1;
	while ((rc = evrnext(r, &line, &len, &e)) == 1) {
		cJSON *j = cJSON_Parse(line);
		const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(j, "prev"));
		cJSON *seq = cJSON_GetObjectItem(j, "seq");
		if (!p || strcmp(p, prev) != 0 || !seq || (int)seq->valuedouble != n)
			*chainok = 0;
		sha256hex(line, len, prev);
		cJSON_Delete(j);
		n++;
	}
	*truncated = evrtruncated(r);
	evrclose(r);
	return n;
}

int main(void)
{
	struct err e = {0};
	ok(mkdtemp(dir) != NULL, "mkdtemp");
	char *path = pathjoin(dir, "a.jsonl.zst");
	struct secrets sec = {0};
	secretsadd(&sec, "API_KEY", "sk-test-0123456789");
	secretsadd(&sec, "QUOTE", "pa\"ss\\word");
	struct evlog *l;
	ok(evopen(&l, path, &sec, &e) == 0, "evopen: %s", e.msg);
	for (int i = 0; i < 100; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "i", i);
		cJSON_AddStringToObject(o, "text", i == 7 ? "key sk-test-0123456789 here" : i == 8 ? "pa\"ss\\word" : "x");
		ok(evadd(l, "test", o, &e) == 0, "evadd %d", i);
	}
	char head[65];
	memcpy(head, evhead(l), 65);
	ok(evcount(l) == 100, "count");
	ok(evclose(l, &e) == 0, "evclose: %s", e.msg);
	int chain, trunc;
	ok(readchain(path, &chain, &trunc) == 100, "100 lines read back");
	ok(chain, "every prev is the SHA-256 of the line before, seq contiguous");
	ok(!trunc, "a closed log is not truncated");

	/* No byte of a secret reaches the file, raw or JSON-escaped. */
	char *cmd = xasprintf("zstd -dcq %s > %s/plain", path, dir);
	ok(system(cmd) == 0, "stock zstd opens the log");
	free(cmd);
	char *plain = pathjoin(dir, "plain");
	struct buf b = {0};
	ok(readfile(plain, &b, &e) == 0, "read plain");
	ok(!strstr(b.data, "sk-test-0123456789"), "API key masked");
	ok(!strstr(b.data, "pa\\\"ss\\\\word"), "escaped secret masked");
	ok(strstr(b.data, "[secret:API_KEY]") != NULL, "placeholder names the secret");
	ok(strstr(b.data, "[secret:QUOTE]") != NULL, "placeholder for the escaped secret");
	buffree(&b);

	/* A log whose writer died: every flushed line is readable, the end is marked truncated. */
	char *cut = pathjoin(dir, "cut.jsonl.zst");
	ok(evopen(&l, cut, NULL, &e) == 0, "evopen cut");
	for (int i = 0; i < 10; i++)
		evadd(l, "test", cJSON_CreateObject(), &e);
	/* Simulate SIGKILL: leave without ending the frame. */
	char *copy = xasprintf("cp %s %s.copy", cut, cut);
	ok(system(copy) == 0, "copy");
	free(copy);
	evclose(l, &e);
	char *cutcopy = xasprintf("%s.copy", cut);
	ok(readchain(cutcopy, &chain, &trunc) == 10, "all 10 flushed lines of an unfinished frame read");
	ok(chain && trunc, "chain intact and the unfinished frame reported");
	free(cutcopy);

	char *rm = xasprintf("rm -rf %s", dir);
	system(rm);
	free(rm);
	free(cut);
	free(plain);
	free(path);
	secretsfree(&sec);
	return tdone();
}
