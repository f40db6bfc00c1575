/* t.h: a tiny test harness; every test binary ends with "N passed, N failed". */
#ifndef NS_T_H
#define NS_T_H

#include <stdio.h>
#include <string.h>

static int t_pass, t_fail;

/* Record one check; print the failing ones with their location. */
#define ok(cond, ...) do { \
	if (cond) { t_pass++; } else { t_fail++; \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } \
} while (0)

/* Compare two strings, showing both on failure. */
#define okstr(got, want, name) do { const char *g_ = (got), *w_ = (want); \
	ok(g_ && w_ && strcmp(g_, w_) == 0, "%s: got \"%s\", want \"%s\"", name, g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

/* Print the closing line and return the exit status for main. */
static inline int tdone(void)
{
	printf("%d passed, %d failed\n", t_pass, t_fail);
	return t_fail != 0;
}

#endif
