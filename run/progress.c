/* progress: format and forward to the installed printer. */
#include <stdarg.h>
#include <stdio.h>
#include "progress.h"

static const struct progressops *ops;

void progressset(const struct progressops *o)
{
	ops = o;
}

void progressf(const char *fmt, ...)
{
	char msg[1536];
	va_list ap;
	if (!ops || !ops->line)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	ops->line(msg);
}

void progressjob(const char *job, int turns, int steps, int64_t tokens, int done)
{
	if (ops && ops->job)
		ops->job(job, turns, steps, tokens, done);
}
