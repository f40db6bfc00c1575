/* export: nightshift export RUN --otlp FILE|URL: the run as OpenTelemetry traces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../util/term.h"
#include "cmd.h"
#include "../artifacts/otlp.h"
#include "../llm/http.h"

static const char helptext[] =
	"usage: nightshift export RUN --otlp FILE|URL\n"
	"\n"
	"Writes the run as OpenTelemetry traces in OTLP/HTTP JSON, after the GenAI semantic\n"
	"conventions: a span for the run, one per job (invoke_agent), per model request (chat, with\n"
	"token usage) and per tool call (execute_tool, with the approval decision and rule). Built from\n"
	"the artifacts alone, so any archived run can be exported later; exporting twice gives the\n"
	"same ids. A URL (http:// or https://, e.g. http://localhost:4318/v1/traces) gets a POST;\n"
	"headers come from OTEL_EXPORTER_OTLP_HEADERS or OTEL_EXPORTER_OTLP_TRACES_HEADERS\n"
	"(\"key=value,key2=value2\"). Anything else is a file (- for stdout).\n"
	"\n" MAXUNPACKHELP
	"\n"
	"exit codes: 0 exported, 2 usage or input error (not a run), 1 the file or the POST failed\n";

/* OTEL_EXPORTER_OTLP_*HEADERS ("k=v,k2=v2", values percent-decoded as the spec says) as curl
 * headers. */
static void envheaders(struct strv *h)
{
	const char *v = getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS");
	if (!v || !*v)
		v = getenv("OTEL_EXPORTER_OTLP_HEADERS");
	strvadd(h, "Content-Type: application/json");
	for (const char *p = v; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *kv = xstrndup(p, n), *eq = strchr(kv, '=');
		if (eq && eq > kv) {
			*eq = 0;
			struct buf val = {0};
			for (const char *q = eq + 1; *q; q++) {
				unsigned x;
				if (*q == '%' && sscanf(q + 1, "%2x", &x) == 1 && q[1] && q[2]) {
					char c = (char)x;
					bufadd(&val, &c, 1);
					q += 2;
				} else if (*q != '\r' && *q != '\n') {
					bufadd(&val, q, 1);
				}
			}
			char *line = xasprintf("%s: %s", kv, val.data ? val.data : "");
			strvadd(h, line);
			free(line);
			buffree(&val);
		}
		free(kv);
		p = end ? end + 1 : NULL;
	}
}

int cmdexport(int argc, char **argv)
{
	const char *run = NULL, *to = NULL;
	int64_t maxu = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int k;
		if (ishelp(a)) {
			fputs(helptext, stdout);
			return EXIT_OK;
		}
		if ((k = maxunpackflag("export", argc, argv, &i, &maxu)) >= 0) {
			if (k != EXIT_OK)
				return k;
		} else if (flagis(a, "--otlp")) {
			if (!(to = flagarg("export", argc, argv, &i, "a FILE or URL")))
				return EXIT_USAGE;
		} else if (positional("export", a, &run, "RUN") != 0) {
			return EXIT_USAGE;
		}
	}
	if (!run)
		return usage("export", "missing RUN (a run directory or its .tar.zst)");
	if (!to)
		return usage("export", "missing --otlp FILE|URL");
	struct err e = {0};
	char *dir, *tmp;
	if (runopen(run, maxu, &dir, &tmp, &e) < 0)
		return report(&e);
	int cut = 0;
	cJSON *req = otlptraces(dir, &cut, &e);
	runclose(dir, tmp);
	if (!req)
		return report(&e);
	if (cut)
		fprintf(stderr, "nightshift: export: WARNING: the spans passed 96 MiB in memory; the rest of the run's "
		                "events are not exported\n");
	char *body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	if (!body) {
		errc(&e, ERR_FAIL, "export: out of memory printing the traces");
		return report(&e);
	}
	int code = EXIT_OK;
	if (strncmp(to, "http://", 7) == 0 || strncmp(to, "https://", 8) == 0) {
		struct strv h = {0};
		envheaders(&h);
		struct httpresp r;
		httppost(to, (const char *const *)h.v, body, 10000, 60000, &r);
		if (r.status < 200 || r.status > 299) {
			if (r.status)
				termprintf(stderr, "nightshift: export: %s answered %d: %.300s\n", to, r.status, /* a stranger's body */
				        r.body.data ? r.body.data : "");
			else
				termprintf(stderr, "nightshift: export: %s: %s\n", to, r.error);
			code = EXIT_FAILED;
		} else {
			fprintf(stderr, "nightshift: export: sent to %s (HTTP %d)\n", to, r.status);
		}
		httprespfree(&r);
		strvfree(&h);
	} else if (strcmp(to, "-") == 0) {
		termjsonline(stdout, body); /* the run's text: no controls reach the terminal */
	} else {
		/* A new file renamed into place: a link at FILE is replaced, never written through. */
		char *part;
		int fd = outopen(to, &part, &e), rc = fd < 0 ? -1 : 0;
		/* a terminal, or the step's log under Actions by another name than "-": the same JSON, inert */
		char *out = fd >= 0 && (isatty(fd) || termactionsout(fd)) ? termjson(body) : NULL;
		const char *w = out ? out : body;
		size_t n = strlen(w);
		if (rc == 0 && (writeall(fd, w, n) < 0 || writeall(fd, "\n", 1) < 0))
			rc = errf(&e, "write %s:", to);
		if (fd >= 0 && close(fd) < 0 && rc == 0)
			rc = errf(&e, "write %s:", to);
		if (rc < 0 && part)
			unlink(part);
		if (rc < 0 || tmpplace(part, to, &e) < 0) {
			fprintf(stderr, "nightshift: export: cannot write %s: %s\n", to, e.msg);
			code = EXIT_FAILED;
		}
		free(part);
		free(out);
	}
	free(body);
	return code;
}
