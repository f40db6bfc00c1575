/* fuzz_mcpframe: an MCP server's bytes, as stdio lines or as an event stream (first byte: 's'
 * for stdio, else SSE), fed in pieces whose sizes come from the input, into mcp/rpc.c.
 * Invariants: every message in the inbox is an object; no line, event or pending remainder holds
 * more than MCPMSGMAX bytes; the same bytes fed whole or in pieces give the same messages. */
#include "fuzz.h"
#include "../../mcp/rpc.h"

/* Feed data in pieces (sizes from a simple generator seeded by the input), return the inbox. */
static cJSON *feed(int sse, const char *p, size_t n, size_t step, int *failed)
{
	cJSON *inbox = cJSON_CreateArray();
	struct rpcsse s = {0};
	struct buf junk = {0};
	struct err e;
	*failed = 0;
	for (size_t at = 0; at < n && !*failed;) {
		size_t k = n - at < step ? n - at : step;
		rpcfeed(&s.f, p + at, k);
		at += k;
		*failed = (sse ? rpcevents(&s, 0, inbox, &e) : rpcstdio(&s.f, inbox, &junk, &e)) < 0;
		fuzzassert(s.f.b.len - s.f.start <= MCPMSGMAX + step);
		fuzzassert(s.data.len <= MCPMSGMAX);
		fuzzassert(s.lastid.len < 256);
		fuzzassert(s.retry >= 0 && s.retry <= 60000);
	}
	if (sse && !*failed)
		*failed = rpcevents(&s, 1, inbox, &e) < 0;
	const cJSON *m;
	cJSON_ArrayForEach(m, inbox)
		fuzzassert(cJSON_IsObject(m));
	rpcssefree(&s);
	buffree(&junk);
	return inbox;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	int sse = data[0] != 's';
	size_t step = 1 + data[1] % 64;
	const char *p = (const char *)data + 2;
	size_t n = size - 2;
	int f1, f2;
	cJSON *whole = feed(sse, p, n, n ? n : 1, &f1);
	cJSON *pieces = feed(sse, p, n, step, &f2);
	if (!f1 && !f2) { /* as printed: cJSON_Compare fails an object with a duplicate key against itself */
		char *a = cJSON_PrintUnformatted(whole), *b = cJSON_PrintUnformatted(pieces);
		fuzzassert(a && b && strcmp(a, b) == 0);
		free(a);
		free(b);
	}
	cJSON_Delete(whole);
	cJSON_Delete(pieces);
	/* one body, as a JSON response carries it */
	cJSON *inbox = cJSON_CreateArray();
	struct err e;
	rpcbody(p, n, inbox, &e);
	cJSON_Delete(inbox);
	return 0;
}
