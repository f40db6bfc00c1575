/* test_events: the hash chain, secrets masking, reading a log cut short by a crash, a log
 * whose writes fail (a full disk), and lines at and past EVLINEMAX (written and read). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../../artifacts/events.h"
#include "../../util/zst.h"
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

/* A zstd file at path holding n bytes of 'a', then the text tail. */
static int longline(const char *path, size_t n, const char *tail)
{
	struct zstw *w;
	struct err e = {0};
	static char chunk[1 << 16];
	memset(chunk, 'a', sizeof chunk);
	if (zstwopen(&w, path, 1, 0, 0, &e) < 0)
		return -1;
	int rc = 0;
	for (size_t k; rc == 0 && n; n -= k) {
		k = n < sizeof chunk ? n : sizeof chunk;
		rc = zstwrite(w, chunk, k, &e);
	}
	if (rc == 0)
		rc = zstwrite(w, tail, strlen(tail), &e);
	if (rc < 0) {
		zstwfree(w);
		return -1;
	}
	return zstwclose(w, NULL, NULL, &e);
}

/* Lines at and past the cap: a reader keeps at most EVLINEMAX bytes of one, a writer writes none
 * longer. */
static void linecap(void)
{
	struct err e = {0};
	struct evreader *r;
	const char *line;
	size_t len;
	char *p = pathjoin(dir, "long.jsonl.zst");
	ok(longline(p, EVLINEMAX, "\nnext\n") == 0, "a log with a line of EVLINEMAX bytes");
	ok(evropen(&r, p, &e) == 0, "evropen: %s", e.msg);
	ok(evrnext(r, &line, &len, &e) == 1 && len == EVLINEMAX && line[0] == 'a' && line[len - 1] == 'a',
	   "a line of EVLINEMAX bytes reads");
	ok(evrnext(r, &line, &len, &e) == 1 && len == 4 && !strcmp(line, "next"), "and the line after it");
	ok(evrnext(r, &line, &len, &e) == 0 && !evrtruncated(r), "then the end");
	evrclose(r);
	unlink(p);
	ok(longline(p, EVLINEMAX + 1, "\nnext\n") == 0, "a log with a line one byte longer");
	ok(evropen(&r, p, &e) == 0, "evropen: %s", e.msg);
	e.kind = ERR_FAIL;
	ok(evrnext(r, &line, &len, &e) == -1 && e.kind == ERR_VERIFY && strstr(e.msg, p) && strstr(e.msg, "longer than 64 MiB"),
	   "a line past EVLINEMAX is an error naming the file: %s", e.msg);
	ok(evrnext(r, &line, &len, &e) == -1, "and stays one (the line after it is not read)");
	evrclose(r);
	unlink(p);

	struct evlog *l;
	ok(evopen(&l, p, NULL, &e) == 0, "evopen: %s", e.msg);
	ok(evadd(l, "test", NULL, &e) == 0, "a line");
	char *big = xmalloc(EVLINEMAX + 1);
	memset(big, 'b', EVLINEMAX);
	big[EVLINEMAX] = 0;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "text", big);
	free(big);
	ok(evadd(l, "test", o, &e) < 0 && strstr(e.msg, "more than an event line may hold"),
	   "a line past EVLINEMAX is not written: %s", e.msg);
	ok(evadd(l, "test", NULL, &e) == 0 && evcount(l) == 2, "the log goes on");
	ok(evclose(l, &e) == 0, "evclose: %s", e.msg);
	int chain, trunc;
	ok(readchain(p, &chain, &trunc) == 2 && chain && !trunc, "both lines read back, the chain whole");
	unlink(p);
	free(p);
}

int main(void)
{
	struct err e = {0};
	ok(mkdtemp(dir) != NULL, "mkdtemp");
	char *path = pathjoin(dir, "a.jsonl.zst");
	struct secrets sec = {0};
	secretsadd(&sec, "API_KEY", "sk-test-0123456789");
	secretsadd(&sec, "QUOTE", "pa\"ss\\word");
	secretsadd(&sec, "GCP", "{\"type\": \"service_account\", \"project_id\": \"p\"}");
	struct evlog *l;
	ok(evopen(&l, path, &sec, &e) == 0, "evopen: %s", e.msg);
	for (int i = 0; i < 100; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "i", i);
		/* 9: the public head of a JSON credential, ending in a backslash: a mask of the printed
		 * text would end inside the escape before the closing quote */
		cJSON_AddStringToObject(o, "text", i == 7 ? "key sk-test-0123456789 here" : i == 8 ? "pa\"ss\\word"
		                                   : i == 9 ? "{\"type\": \"service_account\\" : "x");
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
	ok(strstr(b.data, "[secret:GCP]") != NULL && !strstr(b.data, "service_account"), "a credential's head masked");
	int lines = 0, parsed = 0;
	for (char *ln = b.data, *nl; ln && *ln; ln = nl ? nl + 1 : NULL, lines++) {
		nl = strchr(ln, '\n');
		cJSON *j = cJSON_ParseWithLength(ln, nl ? (size_t)(nl - ln) : strlen(ln));
		parsed += j != NULL;
		cJSON_Delete(j);
	}
	ok(lines == 100 && parsed == 100, "every masked line is still JSON (%d of %d)", parsed, lines);
	buffree(&b);

	/* A log whose writer died between lines: the file is an ended frame with every line. */
	char *cut = pathjoin(dir, "cut.jsonl.zst");
	ok(evopen(&l, cut, NULL, &e) == 0, "evopen cut");
	struct stat st0;
	ok(stat(cut, &st0) == 0 && st0.st_size > 0, "a log with no line yet is already a frame");
	char *t0 = xasprintf("zstd -tq %s", cut);
	ok(system(t0) == 0, "stock zstd accepts the log before its first line");
	free(t0);
	for (int i = 0; i < 10; i++)
		evadd(l, "test", cJSON_CreateObject(), &e);
	/* Simulate SIGKILL: copy the file while the writer still holds it. */
	char *copy = xasprintf("cp %s %s.copy && zstd -tq %s.copy", cut, cut, cut);
	ok(system(copy) == 0, "a log left between lines is accepted by stock zstd");
	free(copy);
	evclose(l, &e);
	char *cutcopy = xasprintf("%s.copy", cut);
	ok(readchain(cutcopy, &chain, &trunc) == 10, "all 10 lines of a log left between lines read");
	ok(chain && !trunc, "chain intact, the frame ended");
	/* Killed inside a write: the frame's end is missing; the whole lines still read. */
	struct stat stc;
	ok(stat(cutcopy, &stc) == 0 && truncate(cutcopy, stc.st_size - 2) == 0, "cut the last block");
	ok(readchain(cutcopy, &chain, &trunc) == 10, "all 10 lines of a frame cut short read");
	ok(chain && trunc, "chain intact and the unfinished frame reported");
	free(cutcopy);

	/* A write that fails midway (a full disk, here a file size limit): the partial line is
	 * cut off again and the frame ended after the last whole line; nothing more is written. */
	for (int k = 0; k < 24; k++) {
		int nlines = k % 2 ? 3 : 0, room = k / 2; /* the disk fills room bytes past the frame */
		char *full = xasprintf("%s/full%d.jsonl.zst", dir, k);
		ok(evopen(&l, full, NULL, &e) == 0, "evopen full");
		int added = 0;
		for (int i = 0; i < nlines; i++)
			added += evadd(l, "test", cJSON_CreateObject(), &e) == 0;
		struct stat st;
		stat(full, &st);
		struct rlimit old, lim;
		getrlimit(RLIMIT_FSIZE, &old);
		lim = old;
		lim.rlim_cur = (rlim_t)st.st_size + room;
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &lim);
		cJSON *big = cJSON_CreateObject();
		cJSON_AddStringToObject(big, "text", "a line longer than the few bytes the limit leaves for it");
		int rc = evadd(l, "test", big, &e);
		setrlimit(RLIMIT_FSIZE, &old);
		ok(rc < 0 && strstr(e.msg, "write event log"), "a failed write is an error: %s", e.msg);
		ok(evadd(l, "test", cJSON_CreateObject(), &e) < 0, "nothing is written after a failed write");
		ok(evcount(l) == added, "the count is of whole lines (%d)", added);
		ok(evclose(l, &e) == 0, "close after a failed write: %s", e.msg);
		ok(readchain(full, &chain, &trunc) == nlines && chain && !trunc,
		   "%d whole lines read back, chain intact, the frame ended (disk full %d bytes on)", nlines, room);
		char *t = xasprintf("zstd -tq %s", full);
		ok(system(t) == 0, "stock zstd accepts the log");
		free(t);
		free(full);
	}

	linecap();

	char *rm = xasprintf("rm -rf %s", dir);
	system(rm);
	free(rm);
	free(cut);
	free(plain);
	free(path);
	secretsfree(&sec);
	return tdone();
}
