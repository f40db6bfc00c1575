/* progress: format and forward to the installed printer. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "progress.h"
#include "../util/util.h"

static const struct progressops *ops;

void progressset(const struct progressops *o)
{
	ops = o;
}

static void vsay(const char *job, const char *fmt, va_list ap)
{
	char msg[1536];
	vsnprintf(msg, sizeof msg, fmt, ap);
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	ops->line(job, msg);
}

void progressj(const char *job, const char *fmt, ...)
{
	va_list ap;
	if (!ops || !ops->line)
		return;
	va_start(ap, fmt);
	vsay(job, fmt, ap);
	va_end(ap);
}

void progressjob(const char *job, int turns, int steps, int64_t tokens, const char *doing, int done)
{
	if (ops && ops->job)
		ops->job(job, turns, steps, tokens, doing, done);
}

void progresstap(void *ctx, const char *json)
{
	if (ops && ops->event)
		ops->event(ctx, json);
}

void progressevent(const char *job, const char *type, cJSON *fields)
{
	if (!ops || !ops->event) {
		cJSON_Delete(fields);
		return;
	}
	char now[32];
	utcnow(now);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "time", now);
	cJSON_AddStringToObject(ev, "type", type);
	cJSON *c;
	while (fields && (c = fields->child)) {
		cJSON_DetachItemViaPointer(fields, c);
		cJSON_AddItemToObject(ev, c->string, c);
	}
	cJSON_Delete(fields);
	char *line = cJSON_PrintUnformatted(ev);
	cJSON_Delete(ev);
	ops->event(job, line);
	free(line);
}

void progressrundir(const char *path)
{
	if (ops && ops->rundir)
		ops->rundir(path);
}
