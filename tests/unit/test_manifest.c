/* test_manifest: the format end to end: defaults, overrides, worker files, expressions, scripts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../manifest/manifest.h"
#include "t.h"

static char dir[] = "/tmp/ns-manifest.XXXXXX";

static void put(const char *name, const char *text)
{
	char *p = pathjoin(dir, name);
	char *d = dirname_dup(p);
	struct err e;
	mkdirs(d, 0755, &e);
	writefile(p, text, strlen(text), &e);
	free(d);
	free(p);
}

static const char manifest[] =
	"version: 1\n"
	"name: t\n"
	"models:\n"
	"  default: { provider: scripted, script: s.yaml }\n"
	"  o: { provider: openai, model: m1, base_url: 'http://127.0.0.1:1/v1', temperature: 0.5, retries: 4, timeout: 30s }\n"
	"sandbox: { timeout: 10s, memory: 512M, env: [HOME], mounts: [ { source: data, target: /data } ] }\n"
	"snapshot: { level: 5, exclude: ['node_modules/**'], max_size: 1G }\n"
	"secrets: [TOKEN]\n"
	"workers:\n"
	"  inline:\n"
	"    description: the same worker\n"
	"    model: o\n"
	"    instructions: |\n"
	"      Review ${{ inputs.day }}.\n"
	"    tools: [shell, read_file]\n"
	"    approval:\n"
	"      rules:\n"
	"        - { tool: shell, command: 'git log *', decision: allow }\n"
	"    output: { type: object, required: [ok], properties: { ok: { type: boolean } } }\n"
	"    max_turns: 7\n"
	"    sandbox: { network: host }\n"
	"  filed:\n"
	"    file: workers/filed.md\n"
	"jobs:\n"
	"  a: { worker: inline, input: 'on ${{ inputs.day }}' }\n"
	"  b: { worker: filed, needs: [a], input: 'got ${{ jobs.a.output.ok }}', sandbox: { timeout: 5s }, max_turns: 3 }\n";

static const char workerfile[] =
	"---\n"
	"description: the same worker\n"
	"model: o\n"
	"tools: [shell, read_file]\n"
	"approval:\n"
	"  rules:\n"
	"    - { tool: shell, command: 'git log *', decision: allow }\n"
	"output: { type: object, required: [ok], properties: { ok: { type: boolean } } }\n"
	"max_turns: 7\n"
	"sandbox: { network: host }\n"
	"---\n"
	"Review ${{ inputs.day }}.\n";

int main(void)
{
	struct manifest m;
	struct err e = {0};
	struct strv sets = {0};
	ok(mkdtemp(dir) != NULL, "mkdtemp");
	char *dd = pathjoin(dir, "data");
	mkdirs(dd, 0755, &e);
	free(dd);
	put("m.yaml", manifest);
	put("workers/filed.md", workerfile);
	put("s.yaml", "- text: hello\n- tool_calls: [ { name: final_result, arguments: { ok: true, n: 1.5, s: 'x' } } ]\n");
	strvadd(&sets, "day=monday");
	char *path = pathjoin(dir, "m.yaml");
	ok(manifestloadset(&m, path, &sets, &e) == 0, "load: %s", e.msg);
	if (e.msg[0])
		return tdone();

	okstr(m.name, "t", "name");
	ok(m.sandbox.timeout_ms == 10000 && m.sandbox.memory == 512 << 20, "sandbox durations and sizes");
	ok(m.sandbox.nmounts == 1 && !m.sandbox.mounts[0].rw && m.sandbox.mounts[0].source[0] == '/', "mount defaults to ro, absolute");
	ok(m.snapshot.level == 5 && m.snapshot.exclude.n == 1 && m.snapshot.max_size == 1 << 30, "snapshot");
	ok(m.secrets.n == 1, "secrets");
	struct model *o = manifestmodel(&m, "o");
	ok(o && o->provider == PROV_OPENAI && o->retries == 4 && o->timeout_ms == 30000 && o->temperature == 0.5, "model keys");
	struct model *d = manifestmodel(&m, "default");
	ok(d && cJSON_GetArraySize(d->replies) == 2, "script file loaded");
	ok(m.files.n == 3, "three files read (manifest, worker file, script): %zu", m.files.n);

	/* The inline worker and the same worker in a file are the same worker. */
	struct worker *a = manifestworker(&m, "inline"), *b = manifestworker(&m, "filed");
	ok(a && b, "both workers");
	okstr(a->instructions, "Review monday.\n", "inline instructions expanded");
	okstr(b->instructions, "Review monday.\n", "file body is the instructions");
	okstr(a->description, b->description, "description");
	okstr(a->model, b->model, "model");
	ok(a->tools == b->tools && a->tools == (TOOL_SHELL | TOOL_READ_FILE), "tools");
	ok(a->max_turns == 7 && b->max_turns == 7, "max_turns");
	ok(a->approval.nrules == 1 && b->approval.nrules == 1 && a->approval.def == DEC_DENY, "approval and default deny");
	okstr(a->approval.rules[0].command, b->approval.rules[0].command, "rule");
	ok(cJSON_Compare(a->output, b->output, 1), "output schema");
	ok(a->sandbox.network_host && b->sandbox.network_host, "worker sandbox override");
	ok(a->sandbox.timeout_ms == 10000, "worker inherits the top-level sandbox");
	ok(b->file && strstr(b->file, "filed.md"), "worker remembers its file");

	struct job *ja = manifestjob(&m, "a"), *jb = manifestjob(&m, "b");
	okstr(ja->input, "on ${{ inputs.day }}", "job input: checked at load, expanded once when the job starts");
	okstr(jb->input, "got ${{ jobs.a.output.ok }}", "job input: jobs.* left for run time");
	ok(jb->sandbox.timeout_ms == 5000 && jb->sandbox.network_host && jb->sandbox.memory == 512 << 20, "job sandbox override on the worker's");
	ok(jb->max_turns == 3 && ja->max_turns == 7, "job max_turns override");
	manifestfree(&m);

	/* Without --set, the input is an error at the spot that uses it. */
	ok(manifestload(&m, path, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, "m.yaml:13:19:") && strstr(e.msg, "input 'day' is not set"),
	   "unset input: %s", e.msg);
	manifestfree(&m);

	/* A YAML alias bomb is refused, not expanded. */
	put("bomb.yaml", "version: 1\nmodels:\n  d:\n    provider: scripted\n    replies:\n"
	                 "      - text: x\n        tool_calls:\n          - name: a\n            arguments:\n"
	                 "              a: &a [1,1,1,1,1,1,1,1,1,1]\n              b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
	                 "              c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n              d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
	                 "              e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n              f: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
	                 "workers: { w: { instructions: x, model: d } }\njobs: { j: { worker: w } }\n");
	char *bomb = pathjoin(dir, "bomb.yaml");
	ok(manifestload(&m, bomb, &e) < 0 && strstr(e.msg, "too deep or too large"), "alias bomb: %s", e.msg);
	manifestfree(&m);
	free(bomb);

	char *rm = xasprintf("rm -rf %s", dir);
	if (system(rm) != 0)
		t_fail++;
	free(rm);
	free(path);
	strvfree(&sets);
	return tdone();
}
