/* calls: a k-way merge over the jobs' event logs, joining each decision with its tool_result. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "calls.h"
#include "events.h"
#include "../snapshot/layername.h"

struct stream {
	char *job;
	struct evreader *r;
	cJSON *pending; /* an event read ahead */
	struct call cur;
	int have, done;
	int laststep; /* the step of the stream's last decision: where a call not run stands */
};

struct calls {
	struct stream *s;
	size_t n;
	int last; /* stream whose call was returned last, to be refilled */
};

static void freecall(struct call *c)
{
	cJSON_Delete(c->decided);
	cJSON_Delete(c->result);
	cJSON_Delete(c->net);
	memset(c, 0, sizeof *c);
}

static int iscall(const char *type)
{
	return strcmp(type, "decision") == 0 || strcmp(type, "call_not_run") == 0;
}

/* The next event that matters for calls: a decision, a call_not_run, a tool_result or a net_connection (parsed), or any other
 * (*other set, not parsed: it only ends the call before it). NULL at the end. */
static cJSON *readev(struct stream *s, int *other, struct err *e, int *rc)
{
	const char *line;
	size_t len;
	*other = 0;
	if (s->pending) {
		cJSON *p = s->pending;
		s->pending = NULL;
		*rc = 1;
		return p;
	}
	for (;;) {
		*rc = evrnext(s->r, &line, &len, e);
		if (*rc != 1)
			return NULL;
		long seq;
		char type[32], prev[65];
		if (evfields(line, len, &seq, type, prev) && !iscall(type) && strcmp(type, "tool_result") != 0 &&
		    strcmp(type, "net_connection") != 0) {
			if (strcmp(type, "snapshot") == 0 || strcmp(type, "mcp_log") == 0)
				continue; /* they come between a call's decision and its result */
			*other = 1;
			return NULL;
		}
		cJSON *ev = cJSON_ParseWithLength(line, len);
		if (ev)
			return ev;
	}
}

static const char *str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* A number field, 0 when missing or beyond what an int holds (a tampered log). */
static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) && v->valuedouble > INT_MIN && v->valuedouble < INT_MAX ? v->valuedouble : 0;
}

/* Read the stream's next call: a decision, and its tool_result if one follows; or a call not run. */
static int fill(struct stream *s, struct err *e)
{
	int rc, other;
	cJSON *ev;
	freecall(&s->cur);
	s->have = 0;
	while ((ev = readev(s, &other, e, &rc)) || other) {
		const char *type = ev ? str(ev, "type") : NULL;
		if (!s->have) {
			if (type && strcmp(type, "decision") == 0) {
				struct call *c = &s->cur;
				c->decided = ev;
				c->job = s->job;
				c->step = (int)num(ev, "step");
				c->tool = str(ev, "tool");
				c->arguments = cJSON_GetObjectItemCaseSensitive(ev, "arguments");
				c->decision = str(ev, "decision");
				c->rule = cJSON_GetObjectItemCaseSensitive(ev, "rule");
				c->reason = str(ev, "reason");
				c->exit_code = -1;
				s->have = 1;
				s->laststep = c->step;
				continue;
			}
			if (type && strcmp(type, "call_not_run") == 0) {
				/* Nothing follows it: the call is whole. */
				struct call *c = &s->cur;
				c->decided = ev;
				c->job = s->job;
				c->step = s->laststep;
				c->notrun = 1;
				c->tool = str(ev, "tool");
				c->arguments = cJSON_GetObjectItemCaseSensitive(ev, "arguments");
				c->reason = str(ev, "reason");
				c->exit_code = -1;
				s->have = 1;
				return 1;
			}
			cJSON_Delete(ev);
			continue;
		}
		if (type && strcmp(type, "tool_result") == 0 && (int)num(ev, "step") == s->cur.step && !s->cur.has_result) {
			s->cur.result = ev;
			s->cur.has_result = 1;
			s->cur.exit_code = (int)num(ev, "exit_code");
			s->cur.duration_ms = (int64_t)num(ev, "duration_ms");
			continue; /* its connections follow it */
		}
		if (type && strcmp(type, "net_connection") == 0 && s->cur.has_result && (int)num(ev, "step") == s->cur.step) {
			if (!s->cur.net)
				s->cur.net = cJSON_CreateArray();
			cJSON_AddItemToArray(s->cur.net, ev);
			continue;
		}
		if (type && iscall(type))
			s->pending = ev; /* the next call starts here */
		else
			cJSON_Delete(ev);
		return 1;
	}
	if (rc < 0)
		return -1;
	s->done = !s->have;
	return s->have;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The event logs of a run: jobs/<job>/, or for a merged run shards/<id>/jobs/<job>/; each as
 * "path\tjob" in logs, sorted. */
static void findlogs(const char *rundir, struct strv *logs)
{
	char *jd = pathjoin(rundir, "jobs");
	DIR *d = opendir(jd);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s/events.jsonl.zst\t%s", jd, de->d_name, de->d_name);
		char *tab = strchr(p, '\t');
		*tab = 0;
		if (access(p, F_OK) == 0) {
			*tab = '\t';
			strvadd(logs, p);
		}
		free(p);
	}
	if (d)
		closedir(d);
	free(jd);
	char *sd = pathjoin(rundir, "shards");
	d = opendir(sd);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *shard = pathjoin(sd, de->d_name);
		findlogs(shard, logs);
		free(shard);
	}
	if (d)
		closedir(d);
	free(sd);
}

int callsopen(struct calls **cp, const char *rundir, struct err *e)
{
	struct stat st;
	if (stat(rundir, &st) < 0 || !S_ISDIR(st.st_mode))
		return errc(e, ERR_INPUT, "%s: not a run directory:", rundir);
	struct strv logs = {0};
	findlogs(rundir, &logs);
	if (logs.n)
		qsort(logs.v, logs.n, sizeof *logs.v, cmpstr);
	struct calls *c = xcalloc(1, sizeof *c);
	c->s = xcalloc(logs.n + 1, sizeof *c->s);
	c->last = -1;
	for (size_t i = 0; i < logs.n; i++) {
		char *tab = strchr(logs.v[i], '\t');
		*tab = 0;
		struct stream *s = &c->s[c->n];
		if (evropen(&s->r, logs.v[i], e) == 0) {
			s->job = xstrdup(tab + 1);
			c->n++;
			if (fill(s, e) < 0) {
				strvfree(&logs);
				callsclose(c);
				return -1;
			}
		}
	}
	strvfree(&logs);
	*cp = c;
	return 0;
}

int callsnext(struct calls *c, struct call *out, struct err *e)
{
	if (c->last >= 0 && fill(&c->s[c->last], e) < 0)
		return -1;
	c->last = -1;
	int best = -1;
	for (size_t i = 0; i < c->n; i++)
		if (c->s[i].have && (best < 0 || c->s[i].cur.step < c->s[best].cur.step))
			best = (int)i;
	if (best < 0)
		return 0;
	*out = c->s[best].cur;
	c->last = best;
	return 1;
}

void callsclose(struct calls *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		freecall(&c->s[i].cur);
		cJSON_Delete(c->s[i].pending);
		evrclose(c->s[i].r);
		free(c->s[i].job);
	}
	free(c->s);
	free(c);
}

/* The highest numbered layer in dir (and, when sub, in each workspace's folder of it) above last. */
static int lastlayer(const char *dir, int last, int sub)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		struct stat st;
		char *p = pathjoin(dir, de->d_name);
		int n;
		if (layerparse(de->d_name, &n) == LAYER_STEP && n > last)
			last = n;
		else if (sub && de->d_name[0] != '.' && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			last = lastlayer(p, last, 0);
		free(p);
	}
	if (d)
		closedir(d);
	return last;
}

int runlaststep(const char *rundir, struct err *e)
{
	struct calls *c;
	struct call call;
	int last = 0, rc;
	if (callsopen(&c, rundir, e) < 0)
		return -1;
	while ((rc = callsnext(c, &call, e)) == 1)
		if (call.step > last)
			last = call.step;
	callsclose(c);
	if (rc < 0)
		return -1;
	char *snaps = pathjoin(rundir, "snapshots");
	last = lastlayer(snaps, last, 1);
	free(snaps);
	return last;
}
