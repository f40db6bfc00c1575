/* otlp: a run as OpenTelemetry traces (OTLP/HTTP JSON), after the GenAI semantic conventions.
 *
 * JSON as OTLP/HTTP wants it: trace and span ids in lowercase hex, 64-bit integers as decimal
 * strings, enums as numbers. Span times come from the events' times (milliseconds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "events.h"
#include "otlp.h"
#include "runjson.h"

enum {
	KIND_INTERNAL = 1, KIND_CLIENT = 3, STATUS_OK = 1, STATUS_ERROR = 2,
	EXPORTMAX = 96 << 20 /* bytes the span tree may hold (about 30 000 spans): a log of a few hundred KB can
	                       * decompress to millions of calls */
};

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* "2026-11-22T02:00:00.123Z" as milliseconds since the epoch; 0 when unreadable. */
static long long millis(const char *iso)
{
	struct tm tm = {0};
	const char *rest = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (!rest)
		return 0;
	return (long long)timegm(&tm) * 1000 + (*rest == '.' ? atoi(rest + 1) % 1000 : 0);
}

/* A time as OTLP wants it: nanoseconds since the epoch, in decimal. */
static void nanos(const char *iso, char out[32])
{
	snprintf(out, 32, "%lld", millis(iso) * 1000000);
}

/* An id of n bytes as hex, from the SHA-256 of the run id and a name. */
static void spanid(const char *run, const char *name, int n, char *out)
{
	char *s = xasprintf("%s\n%s", run, name);
	char hex[65];
	sha256hex(s, strlen(s), hex);
	free(s);
	memcpy(out, hex, 2 * n);
	out[2 * n] = 0;
}

static void attrstr(cJSON *attrs, const char *k, const char *v)
{
	if (!v)
		return;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "key", k);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(a, "value"), "stringValue", v);
	cJSON_AddItemToArray(attrs, a);
}

static void attrint(cJSON *attrs, const char *k, long long v)
{
	char s[32];
	snprintf(s, sizeof s, "%lld", v);
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "key", k);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(a, "value"), "intValue", s);
	cJSON_AddItemToArray(attrs, a);
}

static void attrdouble(cJSON *attrs, const char *k, double v)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "key", k);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(a, "value"), "doubleValue", v);
	cJSON_AddItemToArray(attrs, a);
}

static void attrstrs(cJSON *attrs, const char *k, const char *v)
{
	if (!v)
		return;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "key", k);
	cJSON *vals = cJSON_AddArrayToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(a, "value"), "arrayValue"), "values");
	cJSON *one = cJSON_CreateObject();
	cJSON_AddStringToObject(one, "stringValue", v);
	cJSON_AddItemToArray(vals, one);
	cJSON_AddItemToArray(attrs, a);
}

/* A new span in spans; its attributes array is returned. */
static cJSON *span(cJSON *spans, const char *trace, const char *id, const char *parent, const char *name, int kind,
                   const char *start, const char *end, cJSON **attrs)
{
	char s[32], t[32];
	long long a = millis(start), b = millis(end ? end : start);
	snprintf(s, sizeof s, "%lld", a * 1000000);
	snprintf(t, sizeof t, "%lld", (b > a ? b : a) * 1000000);
	cJSON *sp = cJSON_CreateObject();
	cJSON_AddStringToObject(sp, "traceId", trace);
	cJSON_AddStringToObject(sp, "spanId", id);
	if (parent)
		cJSON_AddStringToObject(sp, "parentSpanId", parent);
	cJSON_AddStringToObject(sp, "name", name);
	cJSON_AddNumberToObject(sp, "kind", kind);
	cJSON_AddStringToObject(sp, "startTimeUnixNano", s);
	cJSON_AddStringToObject(sp, "endTimeUnixNano", t);
	*attrs = cJSON_AddArrayToObject(sp, "attributes");
	cJSON_AddItemToArray(spans, sp);
	return sp;
}

static void status(cJSON *sp, int code, const char *msg)
{
	cJSON *st = cJSON_AddObjectToObject(sp, "status");
	if (msg && *msg)
		cJSON_AddStringToObject(st, "message", msg);
	cJSON_AddNumberToObject(st, "code", code);
}

/* The manifest copy's models ({"NAME": {"provider", "model", ...}}), {} when unreadable. */
static cJSON *modelsof(const char *dir, const cJSON *run)
{
	cJSON *m = runmanifestcopy(dir, run);
	cJSON *models = cJSON_DetachItemFromObjectCaseSensitive(m, "models");
	cJSON_Delete(m);
	return cJSON_IsObject(models) ? models : (cJSON_Delete(models), cJSON_CreateObject());
}

struct jobctx {
	const char *runid, *job, *trace;
	char jid[17];
	cJSON *spans;
	size_t *held; /* bytes the spans hold so far (nodes and their strings) */
};

/* The bytes the nodes from n on (its siblings after it, and all below them) hold. */
static size_t treesize(const cJSON *n)
{
	size_t s = 0;
	for (; n; n = n->next)
		s += sizeof *n + (n->string ? strlen(n->string) : 0) + (n->valuestring ? strlen(n->valuestring) : 0) +
		     treesize(n->child);
	return s;
}

/* The last span of spans, NULL when there is none. */
static const cJSON *lastspan(const cJSON *spans)
{
	return spans->child ? spans->child->prev : NULL;
}

/* A tool call: from its decision d to its result res (NULL for a refused call, which ends there). */
static void toolspan(const struct jobctx *c, const cJSON *d, const cJSON *res)
{
	char id[17];
	int step = (int)cJSON_GetNumberValue(get(d, "step"));
	char *key = xasprintf("tool/%d/%s", step, c->job);
	spanid(c->runid, key, 8, id);
	free(key);
	char *name = xasprintf("execute_tool %s", jsonstr(d, "tool", "?"));
	cJSON *a, *sp = span(c->spans, c->trace, id, c->jid, name, KIND_INTERNAL, jsonstr(d, "time", NULL),
	                     jsonstr(res ? res : d, "time", NULL), &a);
	free(name);
	attrstr(a, "gen_ai.operation.name", "execute_tool");
	attrstr(a, "gen_ai.tool.name", jsonstr(d, "tool", "?"));
	attrstr(a, "gen_ai.tool.type", "function");
	attrstr(a, "gen_ai.tool.call.id", jsonstr(d, "call_id", NULL));
	attrint(a, "nightshift.step", step);
	const char *decision = jsonstr(d, "decision", "allow");
	attrstr(a, "nightshift.decision", decision);
	const cJSON *rule = get(d, "rule");
	if (cJSON_IsNumber(rule))
		attrint(a, "nightshift.rule", rule->valueint);
	else if (cJSON_IsString(rule) && strncmp(rule->valuestring, "admin ", 6) == 0 && atoi(rule->valuestring + 6) > 0)
		attrint(a, "nightshift.admin_rule", atoi(rule->valuestring + 6));
	else
		attrstr(a, "nightshift.rule", "default");
	attrstr(a, "nightshift.reason", jsonstr(d, "reason", NULL));
	if (res && cJSON_IsNumber(get(res, "exit_code")))
		attrint(a, "process.exit.code", get(res, "exit_code")->valueint);
	if (strcmp(decision, "allow") != 0) {
		attrstr(a, "error.type", strcmp(decision, "abort") == 0 ? "aborted" : "denied");
		status(sp, STATUS_ERROR, jsonstr(d, "reason", decision));
	} else if (res && cJSON_IsNumber(get(res, "exit_code")) && get(res, "exit_code")->valueint != 0) {
		attrstr(a, "error.type", "nonzero_exit");
		status(sp, STATUS_ERROR, NULL);
	}
}

/* A model request and its response: a chat span. */
static void chatspan(const struct jobctx *c, const cJSON *models, const char *model, const cJSON *req,
                     const cJSON *ev)
{
	char id[17];
	char *key = xasprintf("chat/%s/%d", c->job, (int)cJSON_GetNumberValue(get(ev, "turn")));
	spanid(c->runid, key, 8, id);
	free(key);
	const cJSON *m = get(models, model);
	const char *mname = jsonstr(m, "model", model);
	char *name = xasprintf("chat %s", mname);
	cJSON *a, *sp = span(c->spans, c->trace, id, c->jid, name, KIND_CLIENT, jsonstr(req ? req : ev, "time", NULL),
	                     jsonstr(ev, "time", NULL), &a);
	free(name);
	const cJSON *u = get(ev, "usage");
	attrstr(a, "gen_ai.operation.name", "chat");
	attrstr(a, "gen_ai.provider.name", jsonstr(m, "provider", NULL));
	attrstr(a, "gen_ai.request.model", mname);
	const char *names[][2] = {{"input", "gen_ai.usage.input_tokens"},
	                          {"output", "gen_ai.usage.output_tokens"},
	                          {"cached", "gen_ai.usage.cache_read.input_tokens"},
	                          {"reasoning", "gen_ai.usage.reasoning.output_tokens"}};
	for (int i = 0; i < 4; i++)
		if (cJSON_IsNumber(get(u, names[i][0])))
			attrint(a, names[i][1], (long long)get(u, names[i][0])->valuedouble);
	attrstrs(a, "gen_ai.response.finish_reasons", jsonstr(ev, "finish", NULL));
	attrint(a, "nightshift.turn", (long long)cJSON_GetNumberValue(get(ev, "turn")));
	/* retries: how many, the time waited between, and each failed attempt as a span event */
	const cJSON *fails = get(ev, "errors"), *f;
	int nf = cJSON_GetArraySize(fails);
	if (nf > 0) {
		attrint(a, "nightshift.retries", nf);
		attrint(a, "nightshift.retry_wait_ms", (long long)cJSON_GetNumberValue(get(ev, "waited_ms")));
		cJSON *evs = cJSON_AddArrayToObject(sp, "events");
		cJSON_ArrayForEach(f, fails)
		{
			cJSON *se = cJSON_CreateObject(), *sa;
			cJSON_AddStringToObject(se, "timeUnixNano", cJSON_GetStringValue(get(sp, "startTimeUnixNano")) ?
			                        cJSON_GetStringValue(get(sp, "startTimeUnixNano")) : "0");
			cJSON_AddStringToObject(se, "name", "retry");
			sa = cJSON_AddArrayToObject(se, "attributes");
			attrint(sa, "nightshift.attempt", (long long)cJSON_GetNumberValue(get(f, "attempt")));
			attrint(sa, "http.response.status_code", (long long)cJSON_GetNumberValue(get(f, "status")));
			attrstr(sa, "error.message", jsonstr(f, "error", ""));
			attrint(sa, "nightshift.wait_ms", (long long)cJSON_GetNumberValue(get(f, "wait_ms")));
			cJSON_AddItemToArray(evs, se);
		}
	}
	const char *err = jsonstr(ev, "error", NULL);
	if (err) {
		attrstr(a, "error.type", "model_error");
		status(sp, STATUS_ERROR, err);
	}
}

/* The spans of one job under the run's span; *full set when they passed EXPORTMAX before its log ended. */
static int jobspans(const char *dir, const char *runid, const char *job, const char *trace, const char *root,
                    const cJSON *models, cJSON *spans, size_t *held, int *full, struct err *e)
{
	char *path = xasprintf("%s/jobs/%s/events.jsonl.zst", dir, job);
	struct evreader *r;
	int rc = evropen(&r, path, e);
	free(path);
	if (rc < 0)
		return 0; /* a job that never started has no log */
	struct jobctx c = {runid, job, trace, "", spans, held};
	char *key = xasprintf("job/%s", job);
	spanid(runid, key, 8, c.jid);
	free(key);
	cJSON *jattrs = NULL, *jspan = NULL, *req = NULL, *dec = NULL;
	char *model = xstrdup("default");
	const char *line;
	size_t len;
	while (!(*full = *held > EXPORTMAX) && (rc = evrnext(r, &line, &len, e)) == 1) {
		cJSON *ev = cJSON_ParseWithLength(line, len);
		const char *type = jsonstr(ev, "type", ""), *time = jsonstr(ev, "time", NULL);
		const cJSON *was = lastspan(spans);
		if (strcmp(type, "job_start") == 0 && !jspan) {
			free(model);
			model = xstrdup(jsonstr(ev, "model", "default"));
			char *name = xasprintf("invoke_agent %s", jsonstr(ev, "worker", job));
			jspan = span(spans, trace, c.jid, root, name, KIND_INTERNAL, time, time, &jattrs);
			free(name);
			attrstr(jattrs, "gen_ai.operation.name", "invoke_agent");
			attrstr(jattrs, "gen_ai.agent.name", jsonstr(ev, "worker", job));
			attrstr(jattrs, "gen_ai.agent.id", job);
			attrstr(jattrs, "gen_ai.provider.name", jsonstr(get(models, model), "provider", NULL));
			attrstr(jattrs, "gen_ai.request.model", jsonstr(get(models, model), "model", NULL));
		} else if (strcmp(type, "model_request") == 0) {
			cJSON_Delete(req);
			req = ev, ev = NULL;
		} else if (strcmp(type, "model_response") == 0) {
			chatspan(&c, models, model, req, ev);
			cJSON_Delete(req);
			req = NULL;
		} else if (strcmp(type, "decision") == 0) {
			if (strcmp(jsonstr(ev, "decision", "allow"), "allow") != 0) {
				toolspan(&c, ev, NULL);
			} else {
				cJSON_Delete(dec);
				dec = ev, ev = NULL;
			}
		} else if (strcmp(type, "tool_result") == 0) {
			toolspan(&c, dec ? dec : ev, ev);
			cJSON_Delete(dec);
			dec = NULL;
		} else if (strcmp(type, "job_end") == 0 && jspan) {
			char t[32];
			nanos(time, t);
			cJSON_ReplaceItemInObjectCaseSensitive(jspan, "endTimeUnixNano", cJSON_CreateString(t));
			const cJSON *u = get(ev, "usage");
			if (cJSON_IsNumber(get(u, "input")))
				attrint(jattrs, "gen_ai.usage.input_tokens", (long long)get(u, "input")->valuedouble);
			if (cJSON_IsNumber(get(u, "output")))
				attrint(jattrs, "gen_ai.usage.output_tokens", (long long)get(u, "output")->valuedouble);
			const char *st = jsonstr(ev, "status", "unknown");
			attrstr(jattrs, "nightshift.status", st);
			if (strcmp(st, "succeeded") == 0)
				status(jspan, STATUS_OK, NULL);
			else
				status(jspan, STATUS_ERROR, jsonstr(ev, "error", st));
		}
		const cJSON *now = lastspan(spans);
		if (now != was)
			*held += sizeof *now + treesize(now->child);
		cJSON_Delete(ev);
	}
	cJSON_Delete(req);
	cJSON_Delete(dec);
	free(model);
	evrclose(r);
	return rc < 0 ? -1 : 0;
}

cJSON *otlptraces(const char *dir, int *cut, struct err *e)
{
	cJSON *run = runjsonread(dir, e);
	if (!run) {
		errc(e, ERR_INPUT, "%s is not a run directory: %s", dir, e->msg);
		return NULL;
	}
	const char *runid = jsonstr(run, "run_id", "run");
	char trace[33], root[17];
	spanid(runid, "trace", 16, trace);
	spanid(runid, "run", 8, root);
	cJSON *models = modelsof(dir, run);
	cJSON *req = cJSON_CreateObject();
	cJSON *rs = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(req, "resourceSpans"), rs);
	cJSON *rattrs = cJSON_AddArrayToObject(cJSON_AddObjectToObject(rs, "resource"), "attributes");
	attrstr(rattrs, "service.name", "nightshift");
	attrstr(rattrs, "service.version", jsonstr(run, "nightshift", NULL));
	cJSON *ss = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(rs, "scopeSpans"), ss);
	cJSON *scope = cJSON_AddObjectToObject(ss, "scope");
	cJSON_AddStringToObject(scope, "name", "nightshift");
	cJSON_AddStringToObject(scope, "version", jsonstr(run, "nightshift", "0"));
	cJSON *spans = cJSON_AddArrayToObject(ss, "spans");
	const char *mname = jsonstr(get(run, "manifest"), "name", NULL);
	char *name = xasprintf("nightshift run%s%s", mname ? " " : "", mname ? mname : "");
	cJSON *a, *sp = span(spans, trace, root, NULL, name, KIND_INTERNAL, jsonstr(run, "started", NULL),
	                     jsonstr(run, "ended", jsonstr(run, "started", NULL)), &a);
	free(name);
	attrstr(a, "nightshift.run.id", runid);
	attrstr(a, "nightshift.status", jsonstr(run, "status", "unfinished"));
	const cJSON *u = get(run, "usage");
	if (cJSON_IsNumber(get(u, "input")))
		attrint(a, "gen_ai.usage.input_tokens", (long long)get(u, "input")->valuedouble);
	if (cJSON_IsNumber(get(u, "output")))
		attrint(a, "gen_ai.usage.output_tokens", (long long)get(u, "output")->valuedouble);
	if (cJSON_IsNumber(get(run, "cost")))
		attrdouble(a, "nightshift.cost.usd", get(run, "cost")->valuedouble);
	status(sp, strcmp(jsonstr(run, "status", ""), "succeeded") == 0 ? STATUS_OK : STATUS_ERROR, NULL);
	const cJSON *j;
	int rc = 0, full = 0;
	size_t held = 0;
	cJSON_ArrayForEach(j, get(run, "jobs"))
	{
		if (runnameok(j->string) &&
		    (rc = jobspans(dir, runid, j->string, trace, root, models, spans, &held, &full, e)) < 0)
			break;
		if (full)
			break;
	}
	if (full)
		attrstr(a, "nightshift.export.truncated", "the spans passed 96 MiB in memory; the rest is not exported");
	*cut = full;
	cJSON_Delete(models);
	cJSON_Delete(run);
	if (rc < 0) {
		cJSON_Delete(req);
		return NULL;
	}
	return req;
}
