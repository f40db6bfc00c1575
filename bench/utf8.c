/* utf8: utf8clean on a ~250 KB ASCII request body, against memcpy (the floor: a copy it must make)
 * and against the byte-by-byte path it replaced (each sequence checked and appended on its own),
 * in the same run. Prints "utf8clean MS memcpy MS bytewise MS" (milliseconds per body, best of 200). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../util/utf8.h"
#include "../util/util.h"

enum { SIZE = 250 * 1024, REPS = 200 };

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The old path: every sequence checked (as seqlen does) and appended through bufadd on its own. */
static char *bytewise(const char *s, size_t n)
{
	struct buf b = {0};
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		size_t len = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
		if (!len || (size_t)(end - p) < len || *p == 0) {
			bufputs(&b, "\xef\xbf\xbd");
			p++;
			continue;
		}
		bufadd(&b, p, len);
		p += len;
	}
	if (!b.data)
		bufadd(&b, "", 0);
	return b.data;
}

int main(void)
{
	char *body = malloc(SIZE + 1);
	const char *piece = "{\"role\":\"tool\",\"tool_call_id\":\"call_12_0\",\"content\":\"1 2 3 4 5 6 7 8 9 10\\n\"},";
	size_t pl = strlen(piece);
	for (size_t i = 0; i < SIZE; i++)
		body[i] = piece[i % pl];
	body[SIZE] = 0;
	double best[3] = {1e9, 1e9, 1e9};
	volatile size_t sink = 0;
	for (int r = 0; r < REPS; r++) {
		double t0 = now();
		char *a = utf8clean(body, SIZE);
		double t1 = now();
		char *b = malloc(SIZE + 1);
		memcpy(b, body, SIZE + 1);
		double t2 = now();
		char *c = bytewise(body, SIZE);
		double t3 = now();
		if (strcmp(a, body) != 0 || strcmp(c, body) != 0) {
			fprintf(stderr, "utf8: a clean body came out changed\n");
			return 1;
		}
		sink += (size_t)a[SIZE / 2] + (size_t)b[SIZE / 3] + (size_t)c[SIZE / 4];
		free(a);
		free(b);
		free(c);
		double d[3] = {t1 - t0, t2 - t1, t3 - t2};
		for (int i = 0; i < 3; i++)
			if (d[i] < best[i])
				best[i] = d[i];
	}
	printf("utf8clean %.4f memcpy %.4f bytewise %.4f\n", best[0] * 1e3, best[1] * 1e3, best[2] * 1e3);
	free(body);
	return sink == 1; /* never: keeps the copies from being optimised away */
}
