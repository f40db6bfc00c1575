/* policy: what a worker's approval rules decide for one tool call, and which rule decided. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "../manifest/manifest.h"
#include "../policy/policy.h"
#include "../run/redecide.h"
#include "../util/term.h"
#include "../policy/decide.h"
#include "../util/glob.h"

static const char helptext[] =
	"usage: nightshift policy MANIFEST --worker W --tool T [--command CMD | --path P | --input TEXT |\n"
	"                         --args JSON]\n"
	"                         [--set K=V]... [--json]\n"
	"       nightshift policy MANIFEST --run RUN [--set K=V]... [--json]\n"
	"\n"
	"With --run: decides every call RUN recorded again under MANIFEST's rules (nothing runs) and\n"
	"lists the calls whose decision would change, one a line: the job, the step, the call, the\n"
	"recorded decision and rule, and the new ones ('job j, step 3: shell wc -l x: allow by rule 2\n"
	"-> deny by default'); a count on stderr. A regression test of a rule change on last night's\n"
	"real calls. With --json, one object a line: {\"job\", \"step\", \"tool\", \"arguments\",\n"
	"\"old\": {\"decision\", \"rule\", \"reason\"}, \"new\": {...}}. Exit 0 whatever the list holds.\n"
	"\n"
	"Decides one tool call of worker W by its approval rules, exactly as a run would (a tool the\n"
	"worker is not given, the runs folder and protected paths included), and prints\n"
	"one line: 'allow by rule N', 'deny by rule N', 'abort by rule N', or '... by default'. Rules\n"
	"count from 1 in the order of approval.rules in the YAML (rule 1 is the first). The reason\n"
	"(which rule, which command) goes to stderr, and for a shell line one more line per simple\n"
	"command it would run: the decision for that command, the rule that made it, and the\n"
	"command (\"(runs nothing)\" for an assignment or a redirection alone).\n"
	"\n"
	"  --tool T      shell, read_file, write_file, list_dir, edit_file, mcp__SERVER__TOOL, or a\n"
	"                delegate's name\n"
	"  --command C   the shell command line (shell only, required for it)\n"
	"  --path P      the path argument (file tools only, required for them)\n"
	"  --input TEXT  the input of a delegate call (optional; rules do not look at it)\n"
	"  --args JSON   the arguments of an MCP tool call (mcp__SERVER__TOOL), a JSON object (default {})\n"
	"  --set K=V     the value of ${{ inputs.K }}; repeatable\n"
	"  --json        print {\"decision\", \"rule\" (from 1, \"default\", or \"admin N\" for the admin\n"
	"                policy's, as in the run's decision events), \"line\" (or null; an admin rule's\n"
	"                in its file), \"reason\", \"commands\" (the simple\n"
	"                commands found), \"decisions\" (one {\"decision\", \"rule\"} per command,\n"
	"                \"rule\" null for one that runs nothing), \"path\"} instead\n"
	"\n"
	"  --run RUN     decide RUN's recorded calls again (a run directory or a .tar.zst of one)\n"
	"\n"
	"exit codes: 0 a decision (or the list) was printed, whatever it is, 2 usage or manifest error\n";

/* One line of the call: its tool and its command or path (or its arguments), made safe to print. */
static char *callline(const struct redecided *d)
{
	const char *cmd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d->arguments, "command"));
	const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d->arguments, "path"));
	char *args = cmd || path ? NULL : cJSON_PrintUnformatted(d->arguments);
	char *line = xasprintf("%s %.300s", d->tool, cmd ? cmd : path ? path : args ? args : "");
	free(args);
	return line;
}

/* o.rule as the run's decision events hold it: a number, or a string ("default", "admin N"). */
static void addrule(cJSON *o, const char *tag)
{
	if (tag[0] >= '1' && tag[0] <= '9' && tag[strspn(tag, "0123456789")] == 0)
		cJSON_AddNumberToObject(o, "rule", atoi(tag));
	else
		cJSON_AddStringToObject(o, "rule", tag);
}

/* policy MANIFEST --run RUN: the calls whose decision the manifest's rules change. */
static int rerun(const char *manifest, const char *run, const struct strv *sets, int json)
{
	struct manifest m = {0};
	struct err e = {0};
	char *real = NULL, *unpacked = NULL;
	int rc = loadmanifest(&m, manifest, &(struct loadopts){.sets = sets}, &e);
	if (rc < 0) {
		manifestfree(&m);
		return report(&e);
	}
	if (runopen(run, 0, &real, &unpacked, &e) < 0) {
		manifestfree(&m);
		return report(&e);
	}
	struct redecision r;
	if (redecide(&m, real, &r, &e) < 0) {
		errctx(&e, "policy: %s", run);
		manifestfree(&m);
		runclose(real, unpacked);
		return report(&e);
	}
	for (size_t i = 0; i < r.n; i++) {
		const struct redecided *d = &r.v[i];
		if (json) {
			cJSON *o = cJSON_CreateObject(), *old, *nw;
			cJSON_AddStringToObject(o, "job", d->job);
			cJSON_AddNumberToObject(o, "step", d->step);
			cJSON_AddStringToObject(o, "tool", d->tool);
			cJSON_AddItemToObject(o, "arguments", cJSON_Duplicate(d->arguments, 1));
			cJSON_AddItemToObject(o, "old", old = cJSON_CreateObject());
			cJSON_AddItemToObject(o, "new", nw = cJSON_CreateObject());
			cJSON_AddStringToObject(old, "decision", d->olddecision);
			cJSON_AddStringToObject(nw, "decision", d->newdecision);
			addrule(old, d->oldrule);
			addrule(nw, d->newrule);
			cJSON_AddStringToObject(old, "reason", d->oldreason);
			cJSON_AddStringToObject(nw, "reason", d->newreason);
			char *s = cJSON_PrintUnformatted(o);
			termjsonline(stdout, s); /* the recorded call: no controls reach the terminal */
			free(s);
			cJSON_Delete(o);
		} else {
			char *line = callline(d);
			char was[48];
			snprintf(was, sizeof was, "%s", strcmp(d->oldrule, "default") ? ruletold(d->oldrule) : "default");
			termprintf(stdout, "job %s, step %d: %s: %s by %s -> %s by %s\n", d->job, d->step, line, d->olddecision,
			           was, d->newdecision, strcmp(d->newrule, "default") ? ruletold(d->newrule) : "default");
			free(line);
		}
	}
	for (size_t i = 0; i < r.skipped.n; i++)
		termprintf(stderr, "nightshift: policy: note: %s has no job or worker for job %s of the run: its calls are not "
		                   "decided again\n", manifest, r.skipped.v[i]);
	fprintf(stderr, "nightshift: policy: %d recorded call%s decided again, %zu would be decided otherwise\n", r.calls,
	        r.calls == 1 ? "" : "s", r.n);
	redecisionfree(&r);
	manifestfree(&m);
	runclose(real, unpacked);
	return EXIT_OK;
}

static int filetool(const char *t)
{
	return !strcmp(t, "read_file") || !strcmp(t, "write_file") || !strcmp(t, "list_dir") || !strcmp(t, "edit_file");
}

static void printjson(const struct verdict *v, const struct worker *w)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "decision", decisionname(v->decision));
	char tag[24];
	if (v->rule >= 0) {
		ruletag(&w->approval, v->rule, tag, sizeof tag);
		addrule(o, tag);
		cJSON_AddNumberToObject(o, "line", w->approval.rules[v->rule].pos.line);
	} else {
		cJSON_AddStringToObject(o, "rule", "default");
		cJSON_AddNullToObject(o, "line");
	}
	cJSON_AddStringToObject(o, "reason", v->reason);
	cJSON *cmds = cJSON_AddArrayToObject(o, "commands");
	for (size_t k = 0; k < v->commands.n; k++)
		cJSON_AddItemToArray(cmds, cJSON_CreateString(v->commands.v[k]));
	cJSON *decs = cJSON_AddArrayToObject(o, "decisions");
	for (size_t k = 0; v->percmd && k < v->commands.n; k++) {
		cJSON *d = cJSON_CreateObject();
		const struct cmdverdict *c = &v->percmd[k];
		cJSON_AddStringToObject(d, "decision", c->skipped ? "none" : decisionname(c->decision));
		if (c->skipped)
			cJSON_AddNullToObject(d, "rule");
		else if (c->rule >= 0) {
			ruletag(&w->approval, c->rule, tag, sizeof tag);
			addrule(d, tag);
		}
		else
			cJSON_AddStringToObject(d, "rule", "default");
		cJSON_AddItemToArray(decs, d);
	}
	if (v->path)
		cJSON_AddStringToObject(o, "path", v->path);
	else
		cJSON_AddNullToObject(o, "path");
	char *s = cJSON_PrintUnformatted(o);
	termjsonline(stdout, s);
	free(s);
	cJSON_Delete(o);
}

int cmdpolicy(int argc, char **argv)
{
	const char *manifest = NULL, *worker = NULL, *tool = NULL, *command = NULL, *path = NULL, *input = NULL, *argsjson = NULL;
	const char *run = NULL;
	int json = 0;
	static struct strv sets; /* reachable until exit, whichever way policy returns */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], **slot = NULL, *what = NULL;
		if (ishelp(a)) {
			fputs(helptext, stdout);
			return EXIT_OK;
		}
		if (flagis(a, "--json")) {
			if (flagnoval("policy", a))
				return EXIT_USAGE;
			json = 1;
		} else if (flagis(a, "--set")) {
			if (setflag("policy", argc, argv, &i, &sets))
				return EXIT_USAGE;
		} else if (flagis(a, "--worker")) {
			slot = &worker, what = "a worker name";
		} else if (flagis(a, "--tool")) {
			slot = &tool, what = "a tool name";
		} else if (flagis(a, "--command")) {
			slot = &command, what = "a command line";
		} else if (flagis(a, "--path")) {
			slot = &path, what = "a path";
		} else if (flagis(a, "--input")) {
			slot = &input, what = "a delegate's input";
		} else if (flagis(a, "--args")) {
			slot = &argsjson, what = "a JSON object";
		} else if (flagis(a, "--run")) {
			slot = &run, what = "a run";
		} else if (a[0] == '-' && a[1]) {
			return usage("policy", "unknown flag %s", a);
		} else if (manifest) {
			return usage("policy", "one MANIFEST only (got %s and %s)", manifest, a);
		} else {
			manifest = a;
		}
		if (slot && !(*slot = flagarg("policy", argc, argv, &i, what)))
			return EXIT_USAGE;
	}
	if (!manifest)
		return usage("policy", "missing MANIFEST");
	if (run && (worker || tool || command || path || input || argsjson))
		return usage("policy", "--run decides a run's recorded calls: no --worker, --tool or call of your own with it");
	if (run) {
		int rc = rerun(manifest, run, &sets, json);
		strvfree(&sets);
		return rc;
	}
	if (!worker || !*worker)
		return usage("policy", "missing --worker W");
	if (!tool || !*tool)
		return usage("policy", "missing --tool T");
	if (command && path)
		return usage("policy", "--command and --path exclude each other");
	int shell = !strcmp(tool, "shell"), file = filetool(tool);
	if (command && !shell)
		return usage("policy", "--command is for --tool shell, not %s", tool);
	if (path && !file)
		return usage("policy", "--path is for the file tools (read_file, write_file, list_dir, edit_file), not %s",
		             tool);
	if (input && (shell || file))
		return usage("policy", "--input is for a delegate, not %s", tool);
	int mcp = !strncmp(tool, "mcp__", 5);
	if (argsjson && !mcp)
		return usage("policy", "--args is for MCP tools (mcp__SERVER__TOOL), not %s", tool);
	cJSON *mcpargs = NULL;
	if (mcp && !(mcpargs = argsjson ? cJSON_Parse(argsjson) : cJSON_CreateObject()))
		return usage("policy", "--args is not JSON");
	if (mcpargs && !cJSON_IsObject(mcpargs)) {
		cJSON_Delete(mcpargs);
		return usage("policy", "--args must be a JSON object");
	}
	if (shell && !command)
		return usage("policy", "--tool shell needs --command CMD");
	if (file && !path)
		return usage("policy", "--tool %s needs --path P", tool);
	if (!strcmp(tool, "final_result"))
		return usage("policy", "final_result is not decided by rules");

	struct manifest m = {0};
	struct err e = {0};
	int rcload = loadmanifest(&m, manifest, &(struct loadopts){.sets = &sets}, &e);
	strvfree(&sets);
	if (rcload < 0) {
		cJSON_Delete(mcpargs);
		manifestfree(&m);
		return report(&e);
	}
	struct worker *w = manifestworker(&m, worker);
	if (!w) {
		fprintf(stderr, "nightshift: policy: %s has no worker '%s'; its workers:", manifest, worker);
		for (size_t k = 0; k < m.nworkers; k++)
			fprintf(stderr, " %s", m.workers[k].name);
		fputc('\n', stderr);
		cJSON_Delete(mcpargs);
		manifestfree(&m);
		return EXIT_USAGE;
	}
	int offered = shell || file ? (w->tools & toolbyname(tool)) != 0 : 0, live = 0;
	if (mcp) { /* a glob of the worker's tools names it; whether its server offers it is known only at run time */
		for (size_t k = 0; k < w->mcptools.n; k++)
			live |= globmatch(w->mcptools.v[k], strlen(w->mcptools.v[k]), tool, strlen(tool));
		if (!live)
			fprintf(stderr, "nightshift: policy: note: no entry of worker '%s''s tools names %s, so its model never "
			                "sees it\n", worker, tool);
		offered = 1;
	}
	for (size_t k = 0; !shell && !file && k < w->delegates.n; k++)
		offered |= !strcmp(w->delegates.v[k], tool);
	if (!offered)
		fprintf(stderr, "nightshift: policy: note: worker '%s' is not given %s %s, so its model never sees it\n",
		        worker, shell || file ? "the tool" : "a delegate named", tool);

	cJSON *args = mcpargs ? mcpargs : cJSON_CreateObject();
	if (mcpargs)
		;
	else if (shell)
		cJSON_AddStringToObject(args, "command", command);
	else if (file)
		cJSON_AddStringToObject(args, "path", path);
	else
		cJSON_AddStringToObject(args, "input", input ? input : "");
	struct verdict v;
	char *outdir = pathjoin(m.dir, "runs"); /* as `nightshift run` makes them */
	decideoffline(&m, w, outdir, tool, args, live, &v);
	free(outdir);
	cJSON_Delete(args);
	if (json) {
		printjson(&v, w);
	} else {
		if (v.rule >= 0 && w->approval.rules[v.rule].admin) /* where the decision came from */
			printf("%s by admin rule %d (%s)\n", decisionname(v.decision), w->approval.rules[v.rule].admin,
			       w->approval.rules[v.rule].pos.file);
		else if (v.rule >= 0)
			printf("%s by rule %d\n", decisionname(v.decision), rulenum(&w->approval, v.rule));
		else
			printf("%s by default\n", decisionname(v.decision));
		termprintf(stderr, "nightshift: policy: %s\n", v.reason);
		for (size_t k = 0; v.percmd && k < v.commands.n; k++) {
			const struct cmdverdict *c = &v.percmd[k];
			char by[48];
			if (c->skipped)
				snprintf(by, sizeof by, "(runs nothing)");
			else if (c->rule >= 0) {
				char tag[24];
				ruletag(&w->approval, c->rule, tag, sizeof tag);
				snprintf(by, sizeof by, "%s by %s", decisionname(c->decision), ruletold(tag));
			}
			else
				snprintf(by, sizeof by, "%s by default", decisionname(c->decision));
			termprintf(stderr, "  %-20s %s\n", by, v.commands.v[k]);
		}
	}
	verdictfree(&v);
	manifestfree(&m);
	return EXIT_OK;
}
