/* test_gha: escaping for the runner's command parser, the output file's multiline syntax, and a
 * run's summary, outputs and log read back the way GitHub reads them. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "../../artifacts/events.h"
#include "../../cmd/gha.h"
#include "t.h"

static char dir[] = "/tmp/ns-gha.XXXXXX";

/* Bytes of a leading whitespace character as .NET's TrimStart removes it (the runner's view). */
static size_t dotnetws(const unsigned char *p)
{
	static const char *const multi[] = {"\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81",
	                                    "\xe2\x80\x82", "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85",
	                                    "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89",
	                                    "\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf",
	                                    "\xe2\x81\x9f", "\xe3\x80\x80", NULL};
	if ((*p >= 9 && *p <= 13) || *p == ' ')
		return 1;
	for (int i = 0; multi[i]; i++)
		if (strncmp((const char *)p, multi[i], strlen(multi[i])) == 0)
			return strlen(multi[i]);
	return 0;
}

/* Whether the runner would take this line (already split at CR/LF) as a workflow command:
 * "::name..." after TrimStart with a second "::" (v2), or "##[name...]" anywhere (v1). */
static int iscommand(const char *line)
{
	const unsigned char *p = (const unsigned char *)line;
	size_t w;
	while (*p && (w = dotnetws(p)))
		p += w;
	if (p[0] == ':' && p[1] == ':' && strstr((const char *)p + 2, "::"))
		return 1;
	const char *v1 = strstr(line, "##[");
	return v1 && strchr(v1, ']');
}

/* Every line of text as the runner splits it (CR, LF or CRLF) is free of commands. */
static int nocommands(const char *text)
{
	char *copy = xstrdup(text), *save = NULL;
	int clean = 1;
	for (char *l = strtok_r(copy, "\r\n", &save); l; l = strtok_r(NULL, "\r\n", &save))
		if (iscommand(l))
			clean = 0;
	free(copy);
	return clean;
}

/* %XX back to bytes. */
static char *decode(const char *s)
{
	struct buf b = {0};
	bufputs(&b, "");
	for (; *s; s++) {
		if (s[0] == '%' && s[1] && s[2]) {
			char hex[3] = {s[1], s[2], 0};
			bufputc(&b, (char)strtol(hex, NULL, 16));
			s += 2;
		} else {
			bufputc(&b, *s);
		}
	}
	return b.data;
}

static void escapes(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"::error::x", "%3A:error::x"},
		{"  ::warning::x", "  %3A:warning::x"},
		{"\t::set-output name=a::b", "\t%3A:set-output name=a::b"},
		{"\xc2\xa0::error::x", "\xc2\xa0%3A:error::x"},
		{"\xe3\x80\x80::error::x", "\xe3\x80\x80%3A:error::x"},
		{"a\n::error::x", "a%0A::error::x"},
		{"a\r::error::x", "a%0D::error::x"},
		{"100% done", "100%25 done"},
		{"see ##[error]x", "see ##%5Berror]x"},
		{"nightshift: job a::b", "nightshift: job a::b"},
		{":x", ":x"},
		{"", ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = ghaescape(cases[i].in), *back = decode(got);
		okstr(got, cases[i].want, cases[i].in);
		okstr(back, cases[i].in, "decodes back");
		ok(nocommands(got), "no command in %s", got);
		free(got);
		free(back);
	}
	char *p = ghaprop("a:b,c%d\ne");
	okstr(p, "a%3Ab%2Cc%25d%0Ae", "property escapes");
	free(p);
	char *d = ghadata("a:b\r\n%");
	okstr(d, "a:b%0D%0A%25", "data escapes");
	free(d);

	/* Random strings of the characters that matter: never a command, always one line, reversible
	 * but for the controls the sanitiser shows as \xNN (the vertical tab here). */
	static const char *const parts[] = {":", "::", "#", "##[", "[", "]", " ", "\t", "\n", "\r", "%", "a",
	                                    "\xc2\xa0", "\xe3\x80\x80", "\xe2\x80\xa8", "error", "\v"};
	unsigned seed = 12345;
	int bad = 0;
	for (int n = 0; n < 20000; n++) {
		struct buf s = {0}, shown = {0};
		bufputs(&s, "");
		bufputs(&shown, "");
		int len = (int)((seed = seed * 1103515245 + 12345) >> 16) % 12;
		for (int k = 0; k < len; k++) {
			const char *part = parts[((seed = seed * 1103515245 + 12345) >> 16) % (sizeof parts / sizeof parts[0])];
			bufputs(&s, part);
			bufputs(&shown, strcmp(part, "\v") == 0 ? "\\x0b" : part);
		}
		char *e = ghaescape(s.data), *back = decode(e);
		if (!nocommands(e) || strchr(e, '\n') || strchr(e, '\r') || strcmp(back, shown.data) != 0) {
			if (bad++ < 5)
				ok(0, "escaping of [%s] gave [%s]", s.data, e);
		}
		free(e);
		free(back);
		buffree(&s);
		buffree(&shown);
	}
	ok(bad == 0, "20000 random strings escaped safely (%d bad)", bad);
}

/* Read an output file by the documented syntax: name=value, or name<<DELIM, lines, DELIM. */
static cJSON *parseoutputs(const char *path)
{
	struct buf b = {0};
	struct err e = {0};
	if (readfile(path, &b, &e) < 0)
		return NULL;
	struct strv lines = {0};
	for (char *p = b.data, *nl; p && *p; p = nl + 1) {
		if (!(nl = strchr(p, '\n')))
			break; /* every line ends with a newline */
		*nl = 0;
		strvadd(&lines, p);
	}
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; o && i < lines.n; i++) {
		char *line = lines.v[i], *heredoc = strstr(line, "<<"), *eq = strchr(line, '=');
		if (eq && (!heredoc || eq < heredoc)) {
			*eq = 0;
			cJSON_AddStringToObject(o, line, eq + 1);
			continue;
		}
		if (!heredoc) {
			cJSON_Delete(o);
			o = NULL;
			break;
		}
		*heredoc = 0;
		const char *delim = heredoc + 2;
		struct buf v = {0};
		bufputs(&v, "");
		size_t k = i + 1;
		for (; k < lines.n && strcmp(lines.v[k], delim) != 0; k++)
			bufprintf(&v, "%s%s", k == i + 1 ? "" : "\n", lines.v[k]);
		if (k == lines.n) {
			cJSON_Delete(o);
			o = NULL;
		} else {
			cJSON_AddStringToObject(o, line, v.data);
		}
		buffree(&v);
		i = k;
	}
	strvfree(&lines);
	buffree(&b);
	return o;
}

static void outputs(void)
{
	char *path = pathjoin(dir, "out1");
	FILE *f = fopen(path, "w");
	struct err e = {0};
	ok(ghaoutput(f, "multi", "line one\n\nline three\nghadelimiter_x", &e) == 0, "multiline: %s", e.msg);
	ok(ghaoutput(f, "empty", "", &e) == 0, "empty value");
	ok(ghaoutput(f, "bad name", "x", &e) < 0, "a name with a space is refused");
	ok(ghaoutput(f, "a=b", "x", &e) < 0, "a name with = is refused");
	fclose(f);
	cJSON *o = parseoutputs(path);
	ok(o != NULL, "output file parses");
	okstr(cJSON_GetStringValue(cJSON_GetObjectItem(o, "multi")), "line one\n\nline three\nghadelimiter_x", "multi");
	okstr(cJSON_GetStringValue(cJSON_GetObjectItem(o, "empty")), "", "empty");
	ok(cJSON_GetArraySize(o) == 2, "two outputs");
	cJSON_Delete(o);
	free(path);
}

/* A run directory with one job whose model and tool wrote command-like text and a huge output. */
static char *fakerun(size_t outbytes)
{
	char *run = pathjoin(dir, "run"), *jd = pathjoin(run, "jobs/x");
	struct err e = {0};
	mkdirs(jd, 0755, &e);
	mkdir(jd, 0755);
	char *evp = pathjoin(jd, "events.jsonl.zst");
	struct evlog *l;
	ok(evopen(&l, evp, NULL, &e) == 0, "evopen: %s", e.msg);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "input", "Do it.\n::add-mask::oops");
	evadd(l, "job_start", ev, &e);
	ev = cJSON_CreateObject();
	cJSON_AddNumberToObject(ev, "turn", 1);
	cJSON *r = cJSON_AddObjectToObject(ev, "response");
	cJSON_AddStringToObject(r, "text", "::error::x\nthen\r::stop-commands::tok");
	evadd(l, "model_response", ev, &e);
	ev = cJSON_CreateObject();
	cJSON_AddNumberToObject(ev, "step", 1);
	cJSON_AddStringToObject(ev, "tool", "shell");
	cJSON_AddItemToObject(ev, "arguments", cJSON_Parse("{\"command\":\"echo ::error::y\"}"));
	cJSON_AddStringToObject(ev, "decision", "deny");
	cJSON_AddStringToObject(ev, "reason", "no rule\n::warning::z");
	evadd(l, "decision", ev, &e);
	ev = cJSON_CreateObject();
	cJSON_AddNumberToObject(ev, "exit_code", 0);
	cJSON_AddStringToObject(ev, "stdout", "::error::y\n##[error]w\n");
	evadd(l, "tool_result", ev, &e);
	ok(evclose(l, &e) == 0, "evclose");
	struct buf big = {0};
	bufputs(&big, "{\"text\":\"");
	for (size_t i = 0; i < outbytes; i++)
		bufputc(&big, i % 64 == 63 ? '<' : 'a');
	bufputs(&big, "\"}");
	char *op = pathjoin(jd, "output.json");
	writefile(op, big.data, big.len, &e);
	char *rj = pathjoin(run, "run.json");
	const char *runjson = "{\"run_id\":\"20261122T020000Z-abcd\",\"status\":\"failed\",\"jobs\":{"
	                      "\"x\":{\"status\":\"failed\",\"error\":\"bad\\n::error::forged\",\"turns\":2,\"steps\":1,"
	                      "\"usage\":{\"input\":10,\"output\":5}},"
	                      "\"../evil\":{\"status\":\"failed\"}},\"usage\":{\"input\":10,\"output\":5}}";
	writefile(rj, runjson, strlen(runjson), &e);
	buffree(&big);
	free(op);
	free(rj);
	free(evp);
	free(jd);
	return run;
}

static void runsummary(void)
{
	char *run = fakerun(2 * 1024 * 1024), *out = pathjoin(dir, "gh-out"), *sum = pathjoin(dir, "gh-sum");
	char *logp = pathjoin(dir, "gh-log");
	setenv("GITHUB_ACTIONS", "true", 1);
	setenv("GITHUB_OUTPUT", out, 1);
	setenv("GITHUB_STEP_SUMMARY", sum, 1);
	FILE *log = fopen(logp, "w");
	struct err e = {0};
	ok(gharun(run, 1, log, &e) == 0, "gharun: %s", e.msg);
	fclose(log);
	struct buf b = {0};
	readfile(sum, &b, &e);
	ok(b.len > 1000 && b.len < 1024 * 1024, "summary below 1 MiB with a 2 MiB output: %zu bytes", b.len);
	ok(strstr(b.data, "| x | ") != NULL, "table row for job x");
	ok(strstr(b.data, "| 1 |\n") != NULL, "one denied call counted");
	ok(strstr(b.data, "cut at") != NULL, "the big output is cut, and says so");
	ok(strstr(b.data, "&lt;") != NULL && !strstr(b.data, "a<a"), "HTML in the output is escaped");
	ok(!strstr(b.data, "evil"), "a job name that is not an id is left out");
	buffree(&b);

	readfile(logp, &b, &e);
	ok(nocommands(b.data) == 0, "the log holds our own commands");
	int ours = 1, forged = 0;
	char *copy = xstrdup(b.data), *save = NULL;
	for (char *l = strtok_r(copy, "\r\n", &save); l; l = strtok_r(NULL, "\r\n", &save)) {
		if (!iscommand(l))
			continue;
		if (strncmp(l, "::group::", 9) && strcmp(l, "::endgroup::") && strncmp(l, "::error title=", 14) &&
		    strncmp(l, "::warning title=", 16))
			ours = 0;
		if (strncmp(l, "::error title=", 14) == 0 && strstr(l, "%0A::error::forged"))
			forged++;
	}
	free(copy);
	ok(ours, "every command in the log is a group or an annotation nightshift made");
	ok(forged == 1, "the job's error went into its annotation's message, escaped");
	ok(strstr(b.data, "%3A:error::x") != NULL, "the model's ::error::x shown escaped");
	ok(strstr(b.data, "%3A:error::y") != NULL, "the tool's ::error::y shown escaped");
	ok(strstr(b.data, "##%5Berror]w") != NULL, "the tool's ##[error]w shown escaped");
	ok(strstr(b.data, "%0D::stop-commands::tok") != NULL || strstr(b.data, "%3A:stop-commands") != NULL,
	   "stop-commands shown escaped");
	buffree(&b);

	cJSON *o = parseoutputs(out);
	ok(o != NULL, "GITHUB_OUTPUT parses by the documented syntax");
	okstr(cJSON_GetStringValue(cJSON_GetObjectItem(o, "status")), "failed", "status");
	okstr(cJSON_GetStringValue(cJSON_GetObjectItem(o, "exit-code")), "1", "exit-code");
	const char *rd = cJSON_GetStringValue(cJSON_GetObjectItem(o, "run-dir"));
	ok(rd && rd[0] == '/' && strstr(rd, "/run"), "run-dir is absolute: %s", rd ? rd : "(null)");
	cJSON *x = cJSON_Parse(cJSON_GetStringValue(cJSON_GetObjectItem(o, "output-x")));
	ok(x && strlen(cJSON_GetStringValue(cJSON_GetObjectItem(x, "text"))) == 2 * 1024 * 1024, "output-x whole");
	cJSON_Delete(x);
	cJSON *all = cJSON_Parse(cJSON_GetStringValue(cJSON_GetObjectItem(o, "outputs")));
	ok(all && cJSON_GetObjectItem(all, "x"), "outputs holds x");
	cJSON_Delete(all);
	cJSON_Delete(o);

	/* Twenty jobs of 100 KB outputs: blocks are cut to 64 KiB each and stop before 1 MiB. */
	char *many = pathjoin(dir, "many");
	struct buf rj = {0};
	bufputs(&rj, "{\"run_id\":\"r\",\"status\":\"succeeded\",\"jobs\":{");
	for (int i = 0; i < 20; i++) {
		char *jd = xasprintf("%s/jobs/j%d", many, i), *op = xasprintf("%s/output.json", jd);
		struct buf ob = {0};
		bufputs(&ob, "{\"t\":\"");
		for (int k = 0; k < 100000; k++)
			bufputc(&ob, 'a' + k % 26);
		bufputs(&ob, "\"}");
		mkdirs(jd, 0755, &e);
		writefile(op, ob.data, ob.len, &e);
		bufprintf(&rj, "%s\"j%d\":{\"status\":\"succeeded\"}", i ? "," : "", i);
		buffree(&ob);
		free(op);
		free(jd);
	}
	bufputs(&rj, "}}");
	char *rjp = pathjoin(many, "run.json");
	writefile(rjp, rj.data, rj.len, &e);
	unlink(sum);
	ok(gharun(many, 0, NULL, &e) == 0, "gharun of 20 jobs: %s", e.msg);
	readfile(sum, &b, &e);
	ok(b.len > 900 * 1024 && b.len < 1024 * 1024, "summary of 20 x 100 KB outputs: %zu bytes", b.len);
	ok(strstr(b.data, "more blocks not shown") != NULL, "says some outputs are not shown");
	ok(strstr(b.data, "j0: output") && strstr(b.data, "j12: output"), "the first ones are shown");
	buffree(&b);
	buffree(&rj);
	free(rjp);
	free(many);

	/* A summary already near the cap gets nothing more: GitHub would drop all of it. */
	struct buf full = {0};
	for (int i = 0; i < 1024 * 1024 - 2048; i++)
		bufputc(&full, 'x');
	writefile(sum, full.data, full.len, &e);
	log = fopen(logp, "w");
	ok(gharun(run, 1, log, &e) == 0, "gharun again");
	fclose(log);
	struct stat st;
	stat(sum, &st);
	ok((size_t)st.st_size == full.len, "nothing appended to a nearly full summary");
	buffree(&full);

	/* Outside Actions: nothing at all. */
	unlink(out);
	setenv("GITHUB_ACTIONS", "false", 1);
	ok(gharun(run, 1, stderr, &e) == 0 && access(out, F_OK) < 0, "no outputs outside Actions");
	unsetenv("GITHUB_ACTIONS");
	free(run);
	free(out);
	free(sum);
	free(logp);
}

int main(void)
{
	ok(mkdtemp(dir) != NULL, "mkdtemp");
	escapes();
	outputs();
	runsummary();
	char *cmd = xasprintf("rm -rf '%s'", dir);
	ok(system(cmd) == 0, "cleanup");
	free(cmd);
	return tdone();
}
