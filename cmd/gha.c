/* gha: what a run shows in GitHub Actions. The runner reads every stdout and stderr line of a step
 * as a possible workflow command: one that starts with "::" once leading whitespace is trimmed, or
 * one that holds "##[" anywhere (the old syntax). A model or a tool that could print such a line
 * could set outputs, mask text, stop commands or fake annotations, so every line made of their text
 * goes through ghaescape, and values go to files, never to the log. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "../artifacts/events.h"
#include "../artifacts/modeltext.h"
#include "../artifacts/runjson.h"
#include "gha.h"
#include "../util/term.h"
#include "../util/utf8.h"

int ghaactive(void)
{
	const char *v = getenv("GITHUB_ACTIONS");
	return v && strcmp(v, "true") == 0;
}

/* The runner's own escapes of a workflow command's data: '%', CR and LF as %25, %0D and %0A; in a
 * property also ':' and ',' as %3A and %2C. */
static char *pct(const char *s, int prop)
{
	struct buf b = {0};
	bufputs(&b, "");
	for (const char *p = s ? s : ""; *p; p++) {
		if (*p == '%')
			bufputs(&b, "%25");
		else if (*p == '\r')
			bufputs(&b, "%0D");
		else if (*p == '\n')
			bufputs(&b, "%0A");
		else if (prop && *p == ':')
			bufputs(&b, "%3A");
		else if (prop && *p == ',')
			bufputs(&b, "%2C");
		else
			bufputc(&b, *p);
	}
	return b.data;
}

/* Escaped as the runner reads it, then through the one sanitiser (util/term.h): no control left,
 * and no "::" opening the line or "##[" anywhere, as under Actions whatever the environment says. */
static char *esc(const char *s, int prop)
{
	char *p = pct(s, prop), *clean = termclean(p, TERM_ACTIONS);
	free(p);
	return clean;
}

char *ghaescape(const char *s)
{
	return esc(s, 0);
}

char *ghadata(const char *s)
{
	return esc(s, 0);
}

char *ghaprop(const char *s)
{
	return esc(s, 1);
}

static void vline(FILE *f, const char *fmt, va_list ap)
{
	char *text;
	if (vasprintf(&text, fmt, ap) < 0)
		return;
	if (ghaactive()) {
		char *safe = ghaescape(text);
		fprintf(f, "%s\n", safe);
		free(safe);
	} else {
		fprintf(f, "%s\n", text);
	}
	free(text);
}

void ghaline(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(f, fmt, ap);
	va_end(ap);
}

void ghagroup(FILE *f, const char *fmt, ...)
{
	if (!ghaactive())
		return;
	char *text;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	char *d = ghadata(text);
	fprintf(f, "::group::%s\n", d);
	free(d);
	free(text);
}

void ghaendgroup(FILE *f)
{
	if (ghaactive())
		fputs("::endgroup::\n", f);
}

/* Output names: what steps.<id>.outputs.<name> can say. */
static int outnameok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-'))
			return 0;
	return 1;
}

int ghaoutput(FILE *f, const char *name, const char *value, struct err *e)
{
	unsigned char rnd[16];
	char delim[64];
	if (!outnameok(name))
		return errf(e, "output name '%.80s' is not [A-Za-z0-9_-]", name);
	if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) {
		/* No entropy source: time and pid still make a delimiter no model output can know ahead. */
		uint64_t t = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)nowms();
		for (size_t i = 0; i < sizeof rnd; i++)
			rnd[i] = (unsigned char)(t >> (8 * (i % 8))) ^ (unsigned char)(i * 131);
	}
	int n = snprintf(delim, sizeof delim, "ghadelimiter_");
	for (size_t i = 0; i < sizeof rnd; i++)
		n += snprintf(delim + n, sizeof delim - (size_t)n, "%02x", rnd[i]);
	if (strstr(value, delim))
		return errf(e, "output %s: the value holds its delimiter; not written", name);
	if (fprintf(f, "%s<<%s\n%s\n%s\n", name, delim, value, delim) < 0)
		return errf(e, "write output %s:", name);
	return 0;
}

/* ---- reading the run back ---- */

struct jobview {
	const char *id;
	const cJSON *info;  /* its entry in run.json */
	char *events;       /* path of its event log */
	char *output;       /* output.json as compact JSON, or NULL */
	long denied;        /* decisions deny or abort */
	long conns, refused; /* connections through the egress proxy, and those it refused */
	int nested;         /* a delegate's run inside another job (it has a "parent") */
};

/* A number field as an int, def when missing or out of range. */
static int num(const cJSON *o, const char *k, int def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) && v->valuedouble > -2e9 && v->valuedouble < 2e9 ? (int)v->valuedouble : def;
}

/* Escaped text, at most maxlines lines of at most maxbytes in all, each line on its own. */
static void textlines(FILE *log, const char *indent, const char *text, int maxlines, size_t maxbytes)
{
	int lines = 0;
	size_t used = 0;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (lines >= maxlines || used >= maxbytes) {
			fprintf(log, "%s[... cut: see the event log]\n", indent);
			return;
		}
		if (len > maxbytes - used)
			len = maxbytes - used;
		char *line = xstrndup(p, len), *safe = ghaescape(line);
		fprintf(log, "%s%s\n", indent, safe);
		free(safe);
		free(line);
		used += len;
		lines++;
		p = nl ? nl + 1 : p + strlen(p);
	}
}

/* A JSON value as one escaped line, cut to max bytes. */
static void jsonline(FILE *log, const char *prefix, const cJSON *v, size_t max)
{
	char *raw = v ? cJSON_PrintUnformatted(v) : xstrdup("null");
	if (strlen(raw) > max)
		strcpy(raw + max - 3, "...");
	char *safe = ghaescape(raw);
	fprintf(log, "%s%s\n", prefix, safe);
	free(safe);
	free(raw);
}

/* One event of a job's log as a few lines. */
static void logevent(FILE *log, const char *type, const cJSON *ev)
{
	if (strcmp(type, "job_start") == 0) {
		fprintf(log, "input:\n");
		textlines(log, "  ", jsonstr(ev, "input", ""), 20, 2048);
	} else if (strcmp(type, "model_response") == 0) {
		char *text = modeltext(cJSON_GetObjectItemCaseSensitive(ev, "response"));
		if (*text) {
			fprintf(log, "turn %d, the model says:\n", num(ev, "turn", 0));
			textlines(log, "  ", text, 40, 4096);
		}
		free(text);
	} else if (strcmp(type, "decision") == 0) {
		char *tool = ghaescape(jsonstr(ev, "tool", "?")), *dec = ghaescape(jsonstr(ev, "decision", "?"));
		char prefix[256];
		snprintf(prefix, sizeof prefix, "step %d: %s %s: ", num(ev, "step", 0), dec, tool);
		jsonline(log, prefix, cJSON_GetObjectItemCaseSensitive(ev, "arguments"), 400);
		if (strcmp(jsonstr(ev, "decision", ""), "allow") != 0)
			textlines(log, "  ", jsonstr(ev, "reason", ""), 4, 1024);
		free(tool);
		free(dec);
	} else if (strcmp(type, "tool_result") == 0) {
		fprintf(log, "  exit %d, %d ms\n", num(ev, "exit_code", -1), num(ev, "duration_ms", 0));
		const char *out = jsonstr(ev, "stdout", NULL), *err = jsonstr(ev, "stderr", NULL);
		if (out && *out)
			textlines(log, "  | ", out, 20, 2048);
		if (err && *err)
			textlines(log, "  ! ", err, 20, 2048);
	} else if (strcmp(type, "net_connection") == 0) {
		char *d = ghaescape(jsonstr(ev, "decision", "?")), *m = ghaescape(jsonstr(ev, "method", "?"));
		char *h = ghaescape(jsonstr(ev, "host", "?")), *r = ghaescape(jsonstr(ev, "rule", ""));
		fprintf(log, "  net: %s %s %s:%d (%s), %d bytes sent, %d received\n", d, m, h, num(ev, "port", 0), r,
		        num(ev, "bytes_sent", 0), num(ev, "bytes_received", 0));
		free(d), free(m), free(h), free(r);
	} else if (strcmp(type, "output") == 0) {
		jsonline(log, "output: ", cJSON_GetObjectItemCaseSensitive(ev, "output"), 1024);
	} else if (strcmp(type, "output_rejected") == 0) {
		jsonline(log, "output rejected: ", cJSON_GetObjectItemCaseSensitive(ev, "errors"), 1024);
	} else if (strcmp(type, "job_end") == 0) {
		char *st = ghaescape(jsonstr(ev, "status", "?"));
		fprintf(log, "end: %s\n", st);
		free(st);
		if (jsonstr(ev, "error", NULL))
			textlines(log, "  ", jsonstr(ev, "error", ""), 10, 2048);
	}
}

/* Count the job's denials and, when log is given, print its events. */
static void readevents(struct jobview *jv, FILE *log)
{
	struct evreader *r;
	struct err e = {0};
	if (access(jv->events, F_OK) != 0) {
		if (log)
			ghaline(log, "(the job never started: it has no event log)");
		return;
	}
	if (evropen(&r, jv->events, &e) < 0) {
		if (log)
			ghaline(log, "(no event log: %s)", e.msg);
		return;
	}
	const char *line;
	size_t len;
	long shown = 0, cut = 0;
	int rc;
	while ((rc = evrnext(r, &line, &len, &e)) == 1) {
		long seq;
		char type[32], prev[65];
		if (evfields(line, len, &seq, type, prev) && strcmp(type, "decision") != 0 && strcmp(type, "net_connection") != 0 &&
		    (!log || strcmp(type, "model_request") == 0 || strcmp(type, "snapshot") == 0 || strcmp(type, "file") == 0))
			continue;
		cJSON *ev = cJSON_ParseWithLength(line, len);
		const char *t = jsonstr(ev, "type", "");
		if (strcmp(t, "decision") == 0 && strcmp(jsonstr(ev, "decision", "allow"), "allow") != 0)
			jv->denied++;
		if (strcmp(t, "net_connection") == 0) {
			jv->conns++;
			jv->refused += strcmp(jsonstr(ev, "decision", ""), "allow") != 0;
		}
		if (log && shown < 2000) {
			logevent(log, t, ev);
			shown++;
		} else if (log) {
			cut++;
		}
		cJSON_Delete(ev);
	}
	if (log && cut)
		fprintf(log, "[... %ld more events: nightshift audit RUN --job %s]\n", cut, jv->id);
	if (log && rc < 0)
		ghaline(log, "(the event log cannot be read further: %s)", e.msg);
	evrclose(r);
}

/* Jobs whose group was printed as they ran. */
static struct strv livejobs;

void ghajob(FILE *log, const char *rundir, const char *job)
{
	if (!ghaactive() || !runnameok(job))
		return;
	struct jobview jv = {0};
	jv.id = job;
	jv.events = xasprintf("%s/jobs/%s/events.jsonl.zst", rundir, job);
	readevents(&jv, log);
	free(jv.events);
	strvadd(&livejobs, job);
}

/* ---- the step summary ---- */

/* Text for HTML content (never an attribute): &, < and > escaped. */
static void html(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': bufputs(b, "&amp;"); break;
		case '<': bufputs(b, "&lt;"); break;
		case '>': bufputs(b, "&gt;"); break;
		default: bufputc(b, *s);
		}
	}
}

/* A table cell: HTML-escaped, '|' escaped, on one line. */
static void cell(struct buf *b, const char *s)
{
	struct buf h = {0};
	html(&h, s);
	for (const char *p = h.data; p && *p; p++) {
		if (*p == '|')
			bufputs(b, "\\|");
		else if (*p == '\n' || *p == '\r')
			bufputc(b, ' ');
		else
			bufputc(b, *p);
	}
	buffree(&h);
}

/* Cut b to at most max bytes without splitting an HTML entity or a UTF-8 character. */
static void cutbuf(struct buf *b, size_t max)
{
	if (b->len <= max)
		return;
	size_t n = max;
	for (size_t k = n; k > 0 && k + 8 > n; k--)
		if (b->data[k - 1] == '&') {
			n = k - 1; /* an entity starting here would be cut: drop it whole */
			break;
		} else if (b->data[k - 1] == ';') {
			break;
		}
	n = utf8cut(b->data, n);
	b->len = n;
	b->data[n] = 0;
}

static const char *mark(const char *status)
{
	if (strcmp(status, "succeeded") == 0)
		return "✅ ";
	if (strcmp(status, "failed") == 0 || strcmp(status, "aborted") == 0 || strcmp(status, "error") == 0)
		return "❌ ";
	return "⚪ ";
}

static double usage(const cJSON *info, const char *k)
{
	double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(info, "usage"), k));
	return v == v ? v : 0;
}

/* The most one output or error takes in the summary: the rest stays readable. */
#define BLOCKMAX (64 * 1024)

/* One collapsible block, cut to BLOCKMAX; false when not even a cut one fits in budget. */
static int details(struct buf *md, const char *title, const char *body, const char *whole, size_t budget)
{
	struct buf blk = {0}, h = {0};
	int more = budget > BLOCKMAX + 1024; /* what is left after this block can still take another */
	if (more)
		budget = BLOCKMAX + 1024;
	bufputs(&blk, "<details><summary>");
	html(&blk, title);
	bufputs(&blk, "</summary>\n\n<pre>");
	html(&h, body);
	static const char tail[] = "</pre>\n\n</details>\n\n";
	size_t fixed = blk.len + sizeof tail + 200;
	int fits = 1;
	if (fixed + h.len > budget) {
		if (budget < fixed + 256) {
			fits = 0;
		} else {
			size_t full = h.len;
			cutbuf(&h, budget - fixed);
			bufadd(&blk, h.data, h.len);
			bufprintf(&blk, "\n[... cut at %zu of %zu bytes%s; the whole text is ", h.len, full,
			          more ? "" : " to keep the summary below 1 MiB");
			html(&blk, whole);
			bufputs(&blk, " in the run directory]");
		}
	} else {
		bufadd(&blk, h.data, h.len);
	}
	if (fits) {
		bufputs(&blk, tail);
		bufadd(md, blk.data, blk.len);
	}
	buffree(&blk);
	buffree(&h);
	return fits;
}

static void summary(struct buf *md, const char *rundir, const cJSON *run, struct jobview *jv, size_t nj,
                    size_t budget)
{
	const char *id = jsonstr(run, "run_id", "?"), *status = jsonstr(run, "status", "error");
	bufputs(md, "### nightshift run <code>");
	html(md, id);
	bufputs(md, "</code>: ");
	cell(md, mark(status));
	cell(md, status);
	bufputs(md, "\n\n| job | status | turns | steps | tokens in | tokens out | cost | denied calls |\n"
	            "|---|---|---:|---:|---:|---:|---:|---:|\n");
	size_t rows = 0;
	for (; rows < nj; rows++) {
		const cJSON *i = jv[rows].info;
		struct buf row = {0};
		const char *st = jsonstr(i, "status", "?");
		bufputs(&row, "| ");
		cell(&row, jv[rows].id);
		bufputs(&row, " | ");
		bufputs(&row, mark(st));
		cell(&row, st);
		bufprintf(&row, " | %d | %d | %.0f | %.0f | ", num(i, "turns", 0), num(i, "steps", 0), usage(i, "input"),
		          usage(i, "output"));
		/* The job's own cost (run.json; a delegate has its own row); a model without a price says none. */
		const cJSON *cost = cJSON_GetObjectItemCaseSensitive(i, "cost");
		if (cJSON_IsNumber(cost) && cost->valuedouble > 0)
			bufprintf(&row, cost->valuedouble >= 0.01 ? "$%.4f" : "$%.6f", cost->valuedouble);
		else
			bufputs(&row, "—");
		bufprintf(&row, " | %ld |\n", jv[rows].denied);
		int fits = md->len + row.len + 1024 < budget;
		if (fits)
			bufadd(md, row.data, row.len);
		buffree(&row);
		if (!fits)
			break;
	}
	if (rows < nj)
		bufprintf(md, "\n%zu more jobs not listed: the summary stays below 1 MiB.\n", nj - rows);
	long conns = 0, refused = 0;
	for (size_t k = 0; k < nj; k++)
		conns += jv[k].conns, refused += jv[k].refused;
	if (conns)
		bufprintf(md, "\nNetwork: %ld connections through the egress proxy, %ld refused (`nightshift audit RUN --net` "
		              "lists them).\n", conns, refused);
	bufprintf(md, "\nTokens: %.0f in, %.0f out.", usage(run, "input"), usage(run, "output"));
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(run, "cost");
	if (cJSON_IsNumber(cost) && cost->valuedouble > 0)
		bufprintf(md, " Cost: $%.4f.", cost->valuedouble);
	bufputs(md, " Run directory: <code>");
	html(md, rundir);
	bufputs(md, "</code>\n\n");
	size_t shown = 0, wanted = 0;
	for (size_t k = 0; k < rows; k++) {
		const char *err = jsonstr(jv[k].info, "error", NULL);
		char *title, *whole;
		if (err && *err) {
			wanted++;
			title = xasprintf("%s: error", jv[k].id);
			whole = xasprintf("run.json (jobs.%s.error)", jv[k].id);
			shown += details(md, title, err, whole, md->len < budget ? budget - md->len : 0);
			free(title);
			free(whole);
		}
		if (jv[k].output) {
			wanted++;
			cJSON *o = cJSON_Parse(jv[k].output);
			char *pretty = o ? cJSON_Print(o) : xstrdup(jv[k].output);
			cJSON_Delete(o);
			title = xasprintf("%s: output", jv[k].id);
			whole = xasprintf("jobs/%s/output.json", jv[k].id);
			shown += details(md, title, pretty, whole, md->len < budget ? budget - md->len : 0);
			free(pretty);
			free(title);
			free(whole);
		}
	}
	if (shown < wanted)
		bufprintf(md, "%zu more blocks not shown: the summary stays below 1 MiB.\n\n", wanted - shown);
}

/* ---- outputs ---- */

static int writeoutputs(const char *path, const char *rundir, const char *status, int exitcode,
                        struct jobview *jv, size_t nj, struct err *e)
{
	FILE *f = fopen(path, "a");
	if (!f)
		return errf(e, "open $GITHUB_OUTPUT %s:", path);
	char code[16];
	snprintf(code, sizeof code, "%d", exitcode);
	int rc = 0;
	if (rundir)
		rc = ghaoutput(f, "run-dir", rundir, e);
	if (rc == 0)
		rc = ghaoutput(f, "status", status, e);
	if (rc == 0)
		rc = ghaoutput(f, "exit-code", code, e);
	struct buf all = {0};
	bufputc(&all, '{');
	for (size_t k = 0; k < nj; k++) {
		if (!jv[k].output || jv[k].nested)
			continue;
		bufprintf(&all, "%s\"%s\":%s", all.len > 1 ? "," : "", jv[k].id, jv[k].output);
	}
	bufputc(&all, '}');
	if (rc == 0)
		rc = ghaoutput(f, "outputs", all.data, e);
	for (size_t k = 0; rc == 0 && k < nj; k++) {
		if (!jv[k].output || jv[k].nested)
			continue;
		char *name = xasprintf("output-%s", jv[k].id);
		rc = ghaoutput(f, name, jv[k].output, e);
		free(name);
	}
	buffree(&all);
	if (fclose(f) != 0 && rc == 0)
		rc = errf(e, "write $GITHUB_OUTPUT %s:", path);
	return rc;
}

static int writesummary(const char *path, const char *rundir, const cJSON *run, struct jobview *jv, size_t nj,
                        FILE *log, struct err *e)
{
	struct stat st;
	size_t have = stat(path, &st) == 0 ? (size_t)st.st_size : 0;
	if (have + 4096 > GHASUMMARYMAX) {
		if (log)
			fprintf(log, "nightshift: the step summary already holds %zu bytes; nothing added (GitHub drops "
			             "one over 1 MiB)\n", have);
		return 0;
	}
	struct buf md = {0};
	summary(&md, rundir, run, jv, nj, GHASUMMARYMAX - have);
	FILE *f = fopen(path, "a");
	if (!f) {
		buffree(&md);
		return errf(e, "open $GITHUB_STEP_SUMMARY %s:", path);
	}
	int rc = fwrite(md.data, 1, md.len, f) == md.len ? 0 : -1;
	if (fclose(f) != 0 || rc < 0)
		rc = errf(e, "write $GITHUB_STEP_SUMMARY %s:", path);
	buffree(&md);
	return rc;
}

static void annotate(FILE *log, const char *level, const char *title, const char *msg)
{
	char *t = ghaprop(title), *m = ghadata(msg);
	fprintf(log, "::%s title=%s::%s\n", level, t, m);
	free(t);
	free(m);
}

void ghamistake(FILE *log, const char *raw)
{
	if (!ghaactive())
		return;
	char *msg = termclean(raw, TERM_ONELINE | TERM_NOACTIONS); /* ghadata escapes for Actions */
	char file[1024];
	int line = 0, col = 0, n = 0;
	const char *colon = msg;
	/* "FILE:LINE:COL: message", FILE holding no ':' of its own past its last one before LINE */
	for (const char *p = strchr(msg, ':'); p; p = strchr(p + 1, ':'))
		if (sscanf(p, ":%d:%d: %n", &line, &col, &n) == 2 && n > 0 && (size_t)(p - msg) < sizeof file) {
			colon = p;
			break;
		}
	if (n > 0 && colon > msg) {
		memcpy(file, msg, colon - msg);
		file[colon - msg] = 0;
		char *f = ghaprop(file), *m = ghadata(colon + n);
		fprintf(log, "::error file=%s,line=%d,col=%d,title=nightshift::%s\n", f, line, col, m);
		free(f);
		free(m);
	} else {
		annotate(log, "error", "nightshift", msg);
	}
	free(msg);
}

int gharun(const char *rundir, int exitcode, FILE *log, struct err *e)
{
	if (!ghaactive())
		return 0;
	const char *outpath = getenv("GITHUB_OUTPUT"), *sumpath = getenv("GITHUB_STEP_SUMMARY");
	if (outpath && !*outpath)
		outpath = NULL;
	if (sumpath && !*sumpath)
		sumpath = NULL;
	struct err re = {0};
	cJSON *run = rundir ? runjsonread(rundir, &re) : NULL;
	char *abs = rundir ? realpath(rundir, NULL) : NULL;
	const char *dir = abs ? abs : rundir;
	if (!run) {
		if (log)
			annotate(log, "error", "nightshift", rundir ? re.msg : "nothing ran");
		int rc = outpath ? writeoutputs(outpath, dir, "error", exitcode, NULL, 0, e) : 0;
		free(abs);
		return rc;
	}
	const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(run, "jobs"), *j;
	size_t nj = (size_t)cJSON_GetArraySize(jobs), k = 0;
	struct jobview *jv = xcalloc(nj ? nj : 1, sizeof *jv);
	cJSON_ArrayForEach(j, jobs)
	{
		if (!runnameok(j->string))
			continue; /* not a job id: not a path to read */
		const char *sub = jsonstr(j, "run", NULL);
		if (sub && (strncmp(sub, "shards/", 7) != 0 || !runnameok(sub + 7)))
			sub = NULL;
		jv[k].id = j->string;
		jv[k].info = j;
		jv[k].nested = cJSON_GetObjectItemCaseSensitive(j, "parent") != NULL;
		jv[k].events = sub ? xasprintf("%s/%s/jobs/%s/events.jsonl.zst", rundir, sub, j->string)
		                   : xasprintf("%s/jobs/%s/events.jsonl.zst", rundir, j->string);
		char *op = xasprintf("%s/jobs/%s/output.json", rundir, j->string);
		struct err oe = {0};
		cJSON *o = access(op, F_OK) == 0 ? jsonread(op, &oe) : NULL;
		jv[k].output = o ? cJSON_PrintUnformatted(o) : NULL;
		cJSON_Delete(o);
		free(op);
		k++;
	}
	nj = k;
	for (k = 0; k < nj; k++) {
		const char *st = jsonstr(jv[k].info, "status", "?");
		int shown = 0;
		for (size_t i = 0; i < livejobs.n && !shown; i++)
			shown = strcmp(livejobs.v[i], jv[k].id) == 0;
		if (log && !shown) {
			ghagroup(log, "nightshift job %s: %s", jv[k].id, st);
			readevents(&jv[k], log);
			ghaendgroup(log);
		} else {
			readevents(&jv[k], NULL);
		}
	}
	const char *status = jsonstr(run, "status", "error");
	for (k = 0; log && k < nj; k++) {
		const char *st = jsonstr(jv[k].info, "status", "?"), *err = jsonstr(jv[k].info, "error", "");
		int bad = strcmp(st, "failed") == 0 || strcmp(st, "aborted") == 0;
		if (!bad && strcmp(st, "skipped") != 0 && strcmp(st, "cancelled") != 0)
			continue;
		size_t sl = strlen(st); /* an error that opens with the status ("skipped: ...") says it once */
		if (strncmp(err, st, sl) == 0 && strncmp(err + sl, ": ", 2) == 0)
			err += sl + 2;
		char *title = xasprintf("nightshift: job %s %s", jv[k].id, st);
		char *msg = xasprintf("job %s %s%s%s", jv[k].id, st, *err ? ": " : "", err);
		annotate(log, bad ? "error" : "warning", title, msg);
		free(title);
		free(msg);
	}
	int cancelled = strcmp(status, "cancelled") == 0 || exitcode == 130;
	if (log && (strcmp(status, "error") == 0 || cancelled)) {
		char *msg = xasprintf("the run %s ended %s (exit %d)", jsonstr(run, "run_id", "?"),
		                      cancelled ? "by an interrupt" : "in an error", exitcode);
		annotate(log, "error", "nightshift", msg);
		free(msg);
	}
	int rc = 0;
	if (sumpath)
		rc = writesummary(sumpath, dir, run, jv, nj, log, e);
	if (rc == 0 && outpath)
		rc = writeoutputs(outpath, dir, status, exitcode, jv, nj, e);
	for (k = 0; k < nj; k++) {
		free(jv[k].events);
		free(jv[k].output);
	}
	free(jv);
	free(abs);
	cJSON_Delete(run);
	return rc;
}
