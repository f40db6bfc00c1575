/* layername: a chain's layer names, made and read in one place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/util.h"
#include "layername.h"

enum layerkind layerparse(const char *name, int *step)
{
	int n = 0;
	enum layerkind k = LAYER_NONE;
	if (strcmp(name, "end.tar.zst") == 0) {
		k = LAYER_END;
	} else {
		size_t digits = strspn(name, "0123456789");
		const char *rest = name + digits;
		if (digits < 4 || digits > 9)
			return LAYER_NONE;
		if (strcmp(rest, ".tar.zst") == 0)
			k = LAYER_STEP;
		else if (strcmp(rest, ".end.tar.zst") == 0)
			k = LAYER_OLDEND;
		else
			return LAYER_NONE;
		n = atoi(name);
		char canon[LAYERBASE];
		layerbase(canon, n);
		if (n < 1 || strlen(canon) != digits || strncmp(canon, name, digits) != 0)
			return LAYER_NONE;
	}
	if (step)
		*step = n;
	return k;
}

void layerbase(char buf[LAYERBASE], int step)
{
	if (step > 0)
		snprintf(buf, LAYERBASE, "%04d", step);
	else
		snprintf(buf, LAYERBASE, "end");
}

char *layerfile(enum layerkind k, int step)
{
	if (k == LAYER_END || step < 1)
		return xstrdup("end.tar.zst");
	return xasprintf(k == LAYER_OLDEND ? "%04d.end.tar.zst" : "%04d.tar.zst", step);
}

char *layerpath(const char *ws, enum layerkind k, int step)
{
	char *f = layerfile(k, step);
	char *p = ws && *ws ? xasprintf("snapshots/%s/%s", ws, f) : xasprintf("snapshots/%s", f);
	free(f);
	return p;
}

/* Where a name sorts: step N at 2N, its carried end at 2N+1, end.tar.zst and others after all. */
static long long rank(const char *name)
{
	int n;
	switch (layerparse(name, &n)) {
	case LAYER_STEP:
		return 2LL * n;
	case LAYER_OLDEND:
		return 2LL * n + 1;
	case LAYER_END:
		return 2LL * LAYERSTEPMAX + 2;
	default:
		return 2LL * LAYERSTEPMAX + 3;
	}
}

int layercmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	long long rx = rank(x), ry = rank(y);
	return rx < ry ? -1 : rx > ry ? 1 : strcmp(x, y);
}
