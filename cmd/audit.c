/* audit: nightshift audit RUN [--verify] [--allowed-signers FILE] [--job ID] [--tool T] [--decision D] [--grep TEXT] [--json] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "../artifacts/runjson.h"
#include "../artifacts/calls.h"
#include "../artifacts/sign.h"
#include "../artifacts/verify.h"
#include "../policy/policy.h"
#include "cmd.h"

static const char audithelp[] =
	"usage: nightshift audit RUN [--verify] [--allowed-signers FILE] [--job ID] [--tool T]\n"
	"                        [--decision allow|deny|abort]\n"
	"                        [--grep TEXT] [--json] [--net]\n"
	"\n"
	"Lists the tool calls of a run (step, job, tool, arguments, decision, rule, exit code,\n"
	"duration) and a summary; --json prints one JSON object per call instead. A call the\n"
	"job ended before (one after final_result in the same reply) is listed as not run, with\n"
	"no step and no decision.\n"
	"  --net      list the network connections steps made through the egress proxy\n"
	"             (sandbox.network.allow) instead: step, job, method, host:port, address,\n"
	"             decision, rule, bytes each way, duration; --job, --decision allow|deny,\n"
	"             --grep (host or rule) and --json apply\n"
	"  --verify   check SHA256SUMS, every event chain up to the head in run.json, every snapshot\n"
	"             layer an event references, and every claim of run.json, output.json and\n"
	"             jobs/*/files against the event line that recorded it; exit 4 naming the file,\n"
	"             the field and the event line on failure; exit 4 saying INCOMPLETE when all\n"
	"             that checks out but a snapshot layer failed, was cut short or is missing\n"
	"  --allowed-signers FILE  (implies --verify) SHA256SUMS.sig must be a signature (namespace\n"
	"             nightshift) by a key FILE lists, in ssh-keygen's allowed_signers format; says who\n"
	"             signed\n" MAXUNPACKHELP;

struct filter {
	const char *job, *tool, *decision, *grep;
	struct strv jobs; /* what --job selects: that job, or the members of that matrix job */
};

/* Whether --job (when given) selects job id. */
static int jobkept(const struct filter *f, const char *id)
{
	for (size_t i = 0; f->job && i < f->jobs.n; i++)
		if (strcmp(f->jobs.v[i], id) == 0)
			return 1;
	return !f->job;
}

static int keep(const struct filter *f, const struct call *c, const char *args)
{
	if (!jobkept(f, c->job))
		return 0;
	if (f->tool && (!c->tool || strcmp(f->tool, c->tool) != 0))
		return 0;
	if (f->decision && (!c->decision || strcmp(f->decision, c->decision) != 0))
		return 0;
	if (f->grep && !strstr(args, f->grep) && !(c->reason && strstr(c->reason, f->grep)))
		return 0;
	return 1;
}

/* One line of a table cell: made safe for the terminal first (controls shown, not obeyed), then
   cut to width at a character boundary. */
static void cell(char *out, size_t width, const char *s)
{
	char *safe = termclean(s ? s : "", TERM_ONELINE);
	size_t n = strlen(safe);
	if (n + 1 > width) {
		n = width - 1;
		while (n > 3 && ((unsigned char)safe[n] & 0xc0) == 0x80)
			n--;
		if (n > 3)
			memcpy(safe + n - 3, "...", 3);
	}
	memcpy(out, safe, n);
	out[n] = 0;
	free(safe);
}

/* A tool's name for the table: whole when it fits; an MCP tool's (mcp__SERVER__TOOL) longer than
   width is cut in the middle, keeping its server and the end of its tool name. */
static void toolcell(char *out, size_t width, const char *s)
{
	const char *sep = s && strncmp(s, "mcp__", 5) == 0 ? strstr(s + 5, "__") : NULL;
	size_t n = s ? strlen(s) : 0;
	if (!sep || n + 1 <= width) {
		cell(out, width, s);
		return;
	}
	size_t head = (size_t)(sep + 2 - s), room = width - 1;
	if (head > room / 2)
		head = room / 2;
	size_t tail = room - head - 2;
	char *safe = termclean(s, TERM_ONELINE);
	snprintf(out, width, "%.*s..%s", (int)head, safe, safe + strlen(safe) - (tail < strlen(safe) ? tail : 0));
	free(safe);
}

static void rulestr(const cJSON *rule, char *out, size_t n)
{
	if (cJSON_IsNumber(rule) && rule->valuedouble > -1e9 && rule->valuedouble < 1e9)
		snprintf(out, n, "%d", (int)rule->valuedouble);
	else
		snprintf(out, n, "%s", cJSON_IsString(rule) ? rule->valuestring : "-");
}

struct tally {
	char tool[64], decision[16];
	long n;
};

static void count(struct tally **t, size_t *n, const char *tool, const char *decision)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*t)[i].tool, tool) == 0 && strcmp((*t)[i].decision, decision) == 0) {
			(*t)[i].n++;
			return;
		}
	if (*n >= 256)
		return;
	*t = xrealloc(*t, (*n + 1) * sizeof **t);
	snprintf((*t)[*n].tool, sizeof (*t)[*n].tool, "%s", tool);
	snprintf((*t)[*n].decision, sizeof (*t)[*n].decision, "%s", decision);
	(*t)[*n].n = 1;
	(*n)++;
}

static int table(const char *run, const struct filter *fp, int json);
static int nettable(const char *run, const struct filter *f, int json);

static int verify(const char *run, const char *shown, const char *allowed)
{
	struct verdictrun v;
	struct err e = {0};
	if (runverify(run, &v, &e) < 0)
		return report(&e);
	/* The signature vouches for SHA256SUMS, which vouches for the rest. */
	char *who = NULL, *sig = pathjoin(run, "SHA256SUMS.sig");
	struct stat st;
	if (allowed && runsigcheck(run, allowed, &who, &e) < 0) {
		if (e.kind == ERR_INPUT) {
			free(sig);
			verdictrunfree(&v);
			return report(&e);
		}
		verdictproblem(&v, "%s", e.msg);
	} else if (!allowed && stat(sig, &st) == 0) {
		fprintf(stderr, "nightshift: audit: %s: SHA256SUMS.sig present but not checked (--allowed-signers FILE "
		                "checks it)\n", shown);
	}
	free(sig);
	if (who && !v.failed)
		fprintf(stderr, "nightshift: audit: %s: signed by %s\n", shown, who);
	free(who);
	if (v.failed) {
		termprintf(stderr, "%s", v.report.data);
		if (v.gaps)
			termprintf(stderr, "%s", v.gapreport.data);
		int n = v.failed + v.gaps;
		fprintf(stderr, "nightshift: audit: %s: verification FAILED (%d problem%s)\n", shown, n, n == 1 ? "" : "s");
	} else if (v.gaps) {
		/* Every digest and chain holds, but the workspace's history has holes: not evidence of
		 * what the steps did. Exit 4, as a failed verification. */
		termprintf(stderr, "%s", v.gapreport.data);
		fprintf(stderr, "nightshift: audit: %s: INCOMPLETE: %d snapshot layer%s failed, were cut short or are missing "
		                "(%ld files, %ld events, %ld layers check out)\n", shown, v.gaps, v.gaps == 1 ? "" : "s",
		        v.files, v.events, v.layers);
	} else if (v.incomplete) {
		/* Unsealed (killed, or still writing): what is there holds, but it is not a whole night's
		 * evidence. Exit 4, as for a history with holes. */
		fprintf(stderr, "nightshift: audit: %s: INCOMPLETE: the run was not sealed; what it wrote checks out up to "
		                "its last whole event (%ld files, %ld events, %ld layers); `nightshift finalize` seals a dead "
		                "run\n", shown, v.files, v.events, v.layers);
	} else {
		fprintf(stderr, "nightshift: audit: %s: verified: %ld files, %ld events, %ld layers\n", shown, v.files,
		        v.events, v.layers);
	}
	int rc = v.failed || v.gaps || v.incomplete ? EXIT_DIVERGED : EXIT_OK;
	verdictrunfree(&v);
	return rc;
}

/* Tokens per job and failed jobs, from run.json. */
static void runsummary(const char *run)
{
	char *p = pathjoin(run, "run.json");
	struct buf b = {0};
	struct err e = {0};
	cJSON *r = readfile(p, &b, &e) == 0 ? cJSON_Parse(b.data) : NULL, *j;
	free(p);
	buffree(&b);
	if (!r) {
		termprintf(stdout, "\nrun.json missing: the run did not finish\n");
		return;
	}
	termprintf(stdout, "\njobs:\n");
	cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r, "jobs"))
	{
		cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
		const char *err = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "error"));
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(u, "input"), *out = cJSON_GetObjectItemCaseSensitive(u, "output");
		char tokens[64] = "tokens unknown";
		if (cJSON_IsNumber(in) && cJSON_IsNumber(out) && isfinite(in->valuedouble) && isfinite(out->valuedouble))
			snprintf(tokens, sizeof tokens, "tokens in %.0f out %.0f", in->valuedouble, out->valuedouble);
		const cJSON *cost = cJSON_GetObjectItemCaseSensitive(j, "cost");
		char c[48] = "";
		if (cJSON_IsNumber(cost) && isfinite(cost->valuedouble) && cost->valuedouble > 0 && cost->valuedouble < 1e12)
			snprintf(c, sizeof c, " $%.4f", cost->valuedouble);
		const cJSON *rt = cJSON_GetObjectItemCaseSensitive(j, "model_retries");
		const cJSON *wt = cJSON_GetObjectItemCaseSensitive(j, "model_waited_ms");
		char retried[80] = "";
		if (cJSON_IsNumber(rt) && rt->valuedouble >= 1 && rt->valuedouble < 1e9)
			snprintf(retried, sizeof retried, " model retries %.0f (waited %.1fs)", rt->valuedouble,
			         cJSON_IsNumber(wt) && wt->valuedouble >= 0 && wt->valuedouble < 1e12 ? wt->valuedouble / 1000 : 0.0);
		termprintf(stdout, "  %-20s %-10s %s%s%s%s%s\n", j->string, jsonstr(j, "status", "?"), tokens, c, retried,
		           err ? "  " : "", err ? err : "");
	}
	const cJSON *sk = cJSON_GetObjectItemCaseSensitive(r, "end_skipped"), *x;
	if (cJSON_GetArraySize(sk))
		termprintf(stdout, "\nleft out of the end layer (%d):\n", cJSON_GetArraySize(sk));
	cJSON_ArrayForEach(x, sk)
	{
		termprintf(stdout, "  %s  %s: %s\n", jsonstr(x, "layer", "?"), jsonstr(x, "path", "?"), jsonstr(x, "reason", "?"));
	}
	/* The layers of configuration the run was under (docs/install.md). */
	const cJSON *layers = cJSON_GetObjectItemCaseSensitive(r, "layers");
	const cJSON *ap = cJSON_GetObjectItemCaseSensitive(layers, "admin_policy");
	const cJSON *uc = cJSON_GetObjectItemCaseSensitive(layers, "user_config");
	if (ap)
		termprintf(stdout, "admin policy: %s, sha256 %s (copy: %s)\n", jsonstr(ap, "path", "?"),
		           jsonstr(ap, "sha256", "?"), jsonstr(ap, "copy", "?"));
	if (uc)
		termprintf(stdout, "user defaults: %s (copy: %s)\n", jsonstr(uc, "path", "?"), jsonstr(uc, "copy", "?"));
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(r, "cost"), *bc = cJSON_GetObjectItemCaseSensitive(r, "budget_cost");
	if (cJSON_IsNumber(cost) && isfinite(cost->valuedouble) && cost->valuedouble < 1e12 &&
	    (cost->valuedouble > 0 || cJSON_IsNumber(bc))) {
		printf("cost: $%.4f", cost->valuedouble);
		if (cJSON_IsNumber(bc) && isfinite(bc->valuedouble) && bc->valuedouble < 1e12)
			printf(" of a budget.cost of $%.4f", bc->valuedouble);
		printf("\n");
	}
	cJSON_Delete(r);
}

/* --job names a job of the run (in run.json, or a folder under jobs/ of an unfinished run), or a
 * matrix job of it, which stands for its members as it does for run --job: into f->jobs. */
static int knownjob(const char *dir, const char *shown, struct filter *f)
{
	const char *job = f->job;
	struct err e = {0};
	cJSON *r = runjsonread(dir, &e), *j;
	struct buf names = {0};
	if (r) {
		cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r, "jobs"))
		{
			const char *group = jsonstr(cJSON_GetObjectItemCaseSensitive(j, "matrix"), "job", "");
			if (strcmp(j->string, job) == 0 || strcmp(group, job) == 0)
				strvadd(&f->jobs, j->string);
			bufprintf(&names, "%s%s", names.len ? ", " : "", j->string);
		}
	} else if (runnameok(job)) {
		char *p = xasprintf("%s/jobs/%s", dir, job);
		struct stat st;
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
			strvadd(&f->jobs, job);
		free(p);
	}
	cJSON_Delete(r);
	int rc = f->jobs.n ? EXIT_OK
	               : usage("audit", "--job %s: %s has no such job%s%s%s", job, shown, names.len ? " (its jobs: " : "",
	                       names.len ? names.data : "", names.len ? ")" : "");
	buffree(&names);
	return rc;
}

int cmdaudit(int argc, char **argv)
{
	const char *run = NULL;
	struct filter f = {0};
	int json = 0, doverify = 0, net = 0;
	const char *allowed = NULL;
	int64_t maxu = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], **slot = NULL, *what = NULL;
		int *on = NULL, k;
		if (ishelp(a)) {
			fputs(audithelp, stdout);
			return EXIT_OK;
		} else if ((k = maxunpackflag("audit", argc, argv, &i, &maxu)) >= 0) {
			if (k != EXIT_OK)
				return k;
		} else if (flagis(a, "--json")) {
			on = &json;
		} else if (flagis(a, "--verify")) {
			on = &doverify;
		} else if (flagis(a, "--net")) {
			on = &net;
		} else if (flagis(a, "--allowed-signers")) {
			slot = &allowed, what = "a file";
		} else if (flagis(a, "--job")) {
			slot = &f.job, what = "a job id";
		} else if (flagis(a, "--tool")) {
			slot = &f.tool, what = "a tool name";
		} else if (flagis(a, "--decision")) {
			slot = &f.decision, what = "allow, deny or abort";
		} else if (flagis(a, "--grep")) {
			slot = &f.grep, what = "some text";
		} else if (a[0] == '-') {
			return usage("audit", "unknown flag %s", a);
		} else if (run) {
			return usage("audit", "unexpected argument %s (one run at a time)", a);
		} else {
			run = a;
		}
		if (on && flagnoval("audit", a))
			return EXIT_USAGE;
		if (on)
			*on = 1;
		if (slot && !(*slot = flagarg("audit", argc, argv, &i, what)))
			return EXIT_USAGE;
	}
	if (!run)
		return usage("audit", "missing RUN");
	if (net && (doverify || allowed || (f.tool && strcmp(f.tool, "shell") != 0)))
		return usage("audit", "--net lists connections: it goes with neither --verify nor --tool");
	if (f.decision && strcmp(f.decision, "allow") && strcmp(f.decision, "deny") && strcmp(f.decision, "abort"))
		return usage("audit", "--decision %s: expected allow, deny or abort", f.decision);
	if (signersopt("audit", allowed) != EXIT_OK)
		return EXIT_USAGE;
	struct err e = {0};
	char *dir, *tmp;
	if (runopen(run, maxu, &dir, &tmp, &e) < 0)
		return report(&e);
	int rc = f.job ? knownjob(dir, run, &f) : EXIT_OK;
	if (rc == EXIT_OK)
		rc = doverify || allowed ? verify(dir, run, allowed) : net ? nettable(dir, &f, json) : table(dir, &f, json);
	strvfree(&f.jobs);
	runclose(dir, tmp);
	return rc;
}

/* The call table (or JSON lines) and the summary. */
/* --json: a line {"end_skipped": {"layer", "path", "reason"}} for each entry the end layers left out. */
static void jsonendskipped(const char *run)
{
	struct err e = {0};
	cJSON *r = runjsonread(run, &e), *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(r, "end_skipped"))
	{
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "end_skipped", cJSON_Duplicate(x, 1));
		char *t = cJSON_PrintUnformatted(o);
		if (t)
			termjsonline(stdout, t); /* the run's text: no controls reach the terminal */
		free(t);
		cJSON_Delete(o);
	}
	cJSON_Delete(r);
}

static int table(const char *run, const struct filter *fp, int json)
{
	struct filter f = *fp;
	struct calls *c;
	struct err e = {0};
	if (callsopen(&c, run, &e) < 0)
		return report(&e);
	struct call call;
	struct tally *t = NULL;
	size_t nt = 0;
	long shown = 0, refused = 0;
	long notrun = 0;
	struct buf denials = {0}, notruns = {0}, line = {0};
	int rc;
	if (!json)
		printf("%5s  %-14s %-28s %-40s %-8s %-7s %5s %8s\n", "STEP", "JOB", "TOOL", "ARGUMENTS", "DECISION", "RULE",
		       "EXIT", "MS");
	while ((rc = callsnext(c, &call, &e)) == 1) {
		char *args = cJSON_PrintUnformatted(call.arguments);
		if (keep(&f, &call, args ? args : "")) {
			shown++;
			count(&t, &nt, call.tool ? call.tool : "?", call.notrun ? "not run" : call.decision ? call.decision : "?");
			if (call.notrun && notrun++ < 100) {
				char why[160];
				cell(why, sizeof why, call.reason ? call.reason : "");
				bufprintf(&notruns, "  after step %d  %s  %s: %s\n", call.step, call.job, call.tool ? call.tool : "?", why);
			}
			if (call.decision && strcmp(call.decision, "allow") != 0 && refused++ < 100) {
				char rule[16], why[160];
				rulestr(call.rule, rule, sizeof rule);
				cell(why, sizeof why, call.reason ? call.reason : "");
				bufprintf(&denials, "  step %d  %s  %s %s by %s: %s\n", call.step, call.job,
				          call.tool ? call.tool : "?", call.decision, ruletold(rule), why);
			}
			if (json) {
				/* Written directly: a night's audit may print a million of these. */
				line.len = 0;
				bufputs(&line, "{\"job\":");
				bufjson(&line, call.job);
				if (call.notrun)
					bufputs(&line, ",\"step\":null,\"not_run\":true,\"tool\":");
				else
					bufprintf(&line, ",\"step\":%d,\"tool\":", call.step);
				bufjson(&line, call.tool ? call.tool : "");
				bufprintf(&line, ",\"arguments\":%s,\"decision\":", args ? args : "null");
				bufjson(&line, call.notrun ? "not run" : call.decision ? call.decision : "");
				bufputs(&line, ",\"rule\":");
				if (cJSON_IsNumber(call.rule))
					bufprintf(&line, "%d", (int)call.rule->valuedouble);
				else if (cJSON_IsString(call.rule))
					bufjson(&line, call.rule->valuestring);
				else
					bufputs(&line, "null");
				bufputs(&line, ",\"reason\":");
				bufjson(&line, call.reason ? call.reason : "");
				if (call.has_result)
					bufprintf(&line, ",\"exit_code\":%d,\"duration_ms\":%lld}", call.exit_code,
					          (long long)call.duration_ms);
				else
					bufputs(&line, ",\"exit_code\":null,\"duration_ms\":null}");
				termjsonline(stdout, line.data); /* recorded text: C1 and bidi controls as \u escapes */
			} else {
				char a[41], job[15], tool[29], rule[16], ex[8] = "-", ms[16] = "-";
				const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(call.arguments, "command");
				const cJSON *path = cJSON_GetObjectItemCaseSensitive(call.arguments, "path");
				cell(a, sizeof a, cJSON_IsString(cmd) ? cmd->valuestring : cJSON_IsString(path) ? path->valuestring : args);
				cell(job, sizeof job, call.job);
				toolcell(tool, sizeof tool, call.tool);
				rulestr(call.rule, rule, sizeof rule);
				if (call.has_result) {
					snprintf(ex, sizeof ex, "%d", call.exit_code);
					snprintf(ms, sizeof ms, "%lld", (long long)call.duration_ms);
				}
				char st[16] = "-";
				if (!call.notrun)
					snprintf(st, sizeof st, "%d", call.step);
				termprintf(stdout, "%5s  %-14s %-28s %-40s %-8s %-7s %5s %8s\n", st, job, tool, a,
				       call.notrun ? "not run" : call.decision ? call.decision : "?", rule, ex, ms);
			}
		}
		free(args);
	}
	callsclose(c);
	if (rc < 0) {
		free(t);
		return report(&e);
	}
	if (json && !f.job && !f.tool && !f.decision && !f.grep)
		jsonendskipped(run);
	if (!json) {
		termprintf(stdout, "\n%ld tool calls", shown);
		for (size_t i = 0; i < nt; i++)
			termprintf(stdout, "%s %s %s: %ld", i ? "," : ":", t[i].tool, t[i].decision, t[i].n);
		termprintf(stdout, "\n");
		if (refused)
			termprintf(stdout, "\ndenied and aborted (%ld):\n%s%s", refused, denials.data, refused > 100 ? "  ...\n" : "");
		if (notrun)
			termprintf(stdout, "\nnot run, the job ended before them (%ld):\n%s%s", notrun, notruns.data,
			           notrun > 100 ? "  ...\n" : "");
		runsummary(run);
	}
	buffree(&denials);
	buffree(&notruns);
	buffree(&line);
	free(t);
	return EXIT_OK;
}

static double jnum(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0;
}

/* The connections of the egress proxy, one line each (or JSON lines), and their totals. */
static int nettable(const char *run, const struct filter *f, int json)
{
	struct calls *c;
	struct err e = {0};
	struct call call;
	long n = 0, allowed = 0, refused = 0;
	double sent = 0, received = 0;
	int rc;
	if (callsopen(&c, run, &e) < 0)
		return report(&e);
	if (!json)
		termprintf(stdout, "%5s  %-14s %-8s %-32s %-16s %-8s %-24s %9s %9s %6s\n", "STEP", "JOB", "METHOD", "HOST:PORT", "ADDRESS",
		       "DECISION", "RULE", "SENT", "RECEIVED", "MS");
	while ((rc = callsnext(c, &call, &e)) == 1) {
		const cJSON *x;
		if (!jobkept(f, call.job))
			continue;
		cJSON_ArrayForEach(x, call.net)
		{
			const char *host = jsonstr(x, "host", ""), *dec = jsonstr(x, "decision", "?"), *rule = jsonstr(x, "rule", "");
			if (f->decision && strcmp(f->decision, dec) != 0)
				continue;
			if (f->grep && !strstr(host, f->grep) && !strstr(rule, f->grep))
				continue;
			n++;
			if (strcmp(dec, "allow") == 0)
				allowed++;
			else
				refused++;
			sent += jnum(x, "bytes_sent");
			received += jnum(x, "bytes_received");
			if (json) {
				cJSON *o = cJSON_Duplicate(x, 1);
				cJSON_DeleteItemFromObjectCaseSensitive(o, "prev");
				cJSON_DeleteItemFromObjectCaseSensitive(o, "seq");
				cJSON_AddStringToObject(o, "job", call.job);
				char *t = cJSON_PrintUnformatted(o);
				termjsonline(stdout, t);
				free(t);
				cJSON_Delete(o);
				continue;
			}
			char hp[33], addr[17], job[15], method[9], r[25], hostport[300];
			snprintf(hostport, sizeof hostport, strchr(host, ':') ? "[%s]:%.0f" : "%s:%.0f", host, jnum(x, "port"));
			cell(hp, sizeof hp, hostport);
			cell(addr, sizeof addr, jsonstr(x, "address", ""));
			cell(job, sizeof job, call.job);
			cell(method, sizeof method, jsonstr(x, "method", ""));
			cell(r, sizeof r, rule);
			char d[9];
			cell(d, sizeof d, dec);
			termprintf(stdout, "%5d  %-14s %-8s %-32s %-16s %-8s %-24s %9.0f %9.0f %6.0f\n", call.step, job, method, hp,
			       *addr ? addr : "-", d, r, jnum(x, "bytes_sent"), jnum(x, "bytes_received"), jnum(x, "duration_ms"));
		}
	}
	callsclose(c);
	if (rc < 0)
		return report(&e);
	if (!json)
		termprintf(stdout, "\n%ld connections: %ld allowed, %ld refused; %.0f bytes sent, %.0f received\n", n, allowed, refused, sent,
		       received);
	return EXIT_OK;
}
