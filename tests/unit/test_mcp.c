/* test_mcp: the `mcp:` manifest section and its errors with file:line:col, mcp__ tool globs,
 * and approval rules on MCP arguments (paths resolved, arrays, fail-closed values). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../manifest/manifest.h"
#include "../../policy/policy.h"
#include "../../policy/rulecheck.h"
#include "t.h"

static char dir[] = "/tmp/ns-mcp.XXXXXX";

/* Load a manifest whose mcp: section and worker tools/rules are given; 0 or -1 with e. */
static int load(const char *mcp, const char *tools, const char *rules, struct manifest *m, struct err *e)
{
	char *text = xasprintf("version: 1\n"
	                       "models: { default: { provider: scripted, replies: [] } }\n"
	                       "%s"
	                       "workers:\n"
	                       "  w:\n"
	                       "    instructions: x\n"
	                       "    tools: %s\n"
	                       "    approval: { rules: %s }\n"
	                       "jobs: { j: { worker: w, input: go } }\n",
	                       mcp, tools, rules);
	char *p = pathjoin(dir, "m.yaml");
	writefile(p, text, strlen(text), e);
	memset(m, 0, sizeof *m);
	int rc = manifestload(m, p, e);
	if (rc == 0 && rulecheck(m, NULL, e) < 0) {
		manifestfree(m);
		rc = -1;
	}
	free(p);
	free(text);
	return rc;
}

static void manifest(void)
{
	struct manifest m;
	struct err e = {0};
	setenv("MCP_T_TOKEN", "sekrit", 1);
	int rc = load("mcp:\n"
	              "  fs: { command: [node, /mcp/fs.js, /workspace], env: [NODE_OPTIONS], timeout: 5s }\n"
	              "  gh: { url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${{ env.MCP_T_TOKEN }}' } }\n",
	              "[shell, 'mcp__fs__*', mcp__gh__create_issue]",
	              "[ { tool: 'mcp__fs__write_*', args: { path: '/workspace/reports/**' }, decision: allow } ]", &m, &e);
	ok(rc == 0, "a good mcp section loads: %s", e.msg);
	if (rc == 0) {
		ok(m.nmcp == 2, "two servers");
		okstr(m.mcp[0].command.v[2], "/workspace", "argv");
		ok(m.mcp[0].timeout_ms == 5000, "timeout");
		okstr(m.mcp[1].headers.v[0], "Authorization: Bearer ${{ env.MCP_T_TOKEN }}", "header kept unexpanded");
		ok(m.workers[0].mcptools.n == 2 && m.workers[0].tools == TOOL_SHELL, "tools split into built-in and MCP");
		ok(m.workers[0].approval.rules[0].argkeys.n == 1, "rule args");
		manifestfree(&m);
	}
	static const struct {
		const char *mcp, *tools, *rules, *want;
	} bad[] = {
		{"mcp: { fs: { command: [node], url: 'http://x' } }\n", "[]", "[]", "m.yaml:3:12: MCP server 'fs' needs exactly one"},
		{"mcp: { fs: {} }\n", "[]", "[]", "m.yaml:3:12: MCP server 'fs' needs exactly one"},
		{"mcp: { f__s: { command: [node] } }\n", "[]", "[]", "m.yaml:3:8: MCP server name 'f__s' may not hold"},
		{"mcp: { fs: { command: node } }\n", "[]", "[]", "m.yaml:3:23: command must be a list"},
		{"mcp: { fs: { command: [node], env: ['A-B'] } }\n", "[]", "[]", "m.yaml:3:37: env lists variable names"},
		{"mcp: { fs: { url: 'ftp://x' } }\n", "[]", "[]", "m.yaml:3:19: url must start with http"},
		{"mcp: { fs: { url: 'http://x', headers: { A: '${{ env.MCP_T_UNSET_XX }}' } } }\n", "[]", "[]", "m.yaml:3:45:"},
		{"mcp: { fs: { command: [node], comand: [x] } }\n", "[]", "[]", "m.yaml:3:31:"},
		{"", "['mcp__fs__*']", "[]", "m.yaml:6:13: 'mcp__fs__*' names MCP server 'fs', which is not declared"},
		{"mcp: { fs: { command: [node] } }\n", "['mcp__fs']", "[]", "m.yaml:7:13: MCP tools are named mcp__SERVER__TOOL"},
		{"mcp: { fs: { command: [node] } }\n", "['mcp__fs__*']", "[ { args: { path: 'a' }, decision: allow } ]",
		 "rule 1: args patterns apply to MCP tools only"},
		{"mcp: { fs: { command: [node] } }\n", "[shell, 'mcp__fs__*']", "[ { tool: shell, args: { command: '*' }, decision: allow } ]",
		 "rule 1: args patterns apply to MCP tools only"},
		{"mcp: { fs: { command: [node] } }\n", "['mcp__fs__*']", "[ { tool: 'mcp__fs__*', args: {}, decision: allow } ]",
		 "args needs at least one"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct err be = {0};
		int r = load(bad[i].mcp, bad[i].tools, bad[i].rules, &m, &be);
		char *full = pathjoin(dir, bad[i].want);
		ok(r < 0 && be.kind == ERR_INPUT && (strstr(be.msg, full) == be.msg || strstr(be.msg, bad[i].want)), "bad %zu: want \"%s\", got \"%s\"", i,
		   bad[i].want, be.msg);
		free(full);
		manifestfree(&m); /* a failed load leaves what it parsed for the caller to free */
	}
}

static enum decision decide(const struct approval *a, const char *tool, const char *json)
{
	cJSON *args = cJSON_Parse(json);
	struct verdict v;
	policydecide(a, "w", tool, args, &v);
	cJSON_Delete(args);
	verdictfree(&v);
	return v.decision;
}

static void rules(void)
{
	struct rule r[3];
	memset(r, 0, sizeof r);
	r[0].tool = "mcp__fs__write_*";
	strvadd(&r[0].argkeys, "path");
	strvadd(&r[0].argglobs, "/workspace/reports/**");
	r[0].decision = DEC_ALLOW;
	r[1].tool = "mcp__fs__read_multiple_files";
	strvadd(&r[1].argkeys, "paths");
	strvadd(&r[1].argglobs, "/workspace/*");
	r[1].decision = DEC_ALLOW;
	r[2].tool = "mcp__fs__*";
	strvadd(&r[2].argkeys, "path");
	strvadd(&r[2].argglobs, "/workspace/secrets/**");
	r[2].decision = DEC_DENY;
	struct approval a = {.def = DEC_DENY, .rules = r, .nrules = 3};
	struct approval open = {.def = DEC_ALLOW, .rules = r + 2, .nrules = 1};
	ok(decide(&a, "mcp__fs__write_file", "{\"path\":\"/workspace/reports/a.md\"}") == DEC_ALLOW, "allowed path");
	ok(decide(&a, "mcp__fs__write_file", "{\"path\":\"/workspace/reports/x/../../notes.txt\"}") == DEC_DENY,
	   ".. is resolved before matching");
	ok(decide(&a, "mcp__fs__write_file", "{\"path\":\"/workspace/reports//./b.md\"}") == DEC_ALLOW, "// and ./");
	ok(decide(&a, "mcp__fs__write_file", "{\"path\":\"/workspace/notes.txt\"}") == DEC_DENY, "outside reports");
	ok(decide(&a, "mcp__fs__write_file", "{}") == DEC_DENY, "a missing argument never matches allow");
	ok(decide(&a, "mcp__fs__write_file", "{\"path\":[\"/workspace/reports/a\"]}") == DEC_ALLOW,
	   "an array whose every element matches");
	ok(decide(&a, "mcp__fs__write_file", "{\"path\":{\"x\":1}}") == DEC_DENY, "an object never matches allow");
	ok(decide(&a, "mcp__fs__write_file", "{\"path\":\"/workspace/reports/a\\nb\"}") == DEC_DENY,
	   "a control character never matches allow");
	ok(decide(&a, "mcp__fs__read_multiple_files", "{\"paths\":[\"/workspace/a\",\"/workspace/b\"]}") == DEC_ALLOW,
	   "every element matches");
	ok(decide(&a, "mcp__fs__read_multiple_files", "{\"paths\":[\"/workspace/a\",\"/etc/passwd\"]}") == DEC_DENY,
	   "one element outside denies");
	ok(decide(&a, "mcp__fs__read_multiple_files", "{\"paths\":[]}") == DEC_DENY, "an empty array never matches allow");
	/* deny rules under an allow default: any element, and .. resolved, and unreadable values */
	ok(decide(&open, "mcp__fs__write_file", "{\"path\":\"/workspace/reports/../secrets/k\"}") == DEC_DENY,
	   "a deny rule sees through ..");
	ok(decide(&open, "mcp__fs__write_file", "{\"path\":[\"/workspace/a\",\"/workspace/secrets/k\"]}") == DEC_DENY,
	   "a deny rule matches any element");
	ok(decide(&open, "mcp__fs__write_file", "{\"path\":\"/../../x\"}") == DEC_DENY,
	   "a value climbing above / matches the deny rule");
	ok(decide(&open, "mcp__fs__write_file", "{\"path\":\"/workspace/ok\"}") == DEC_ALLOW, "the default allows the rest");
	ok(decide(&open, "mcp__fs__write_file", "{}") == DEC_ALLOW, "no such argument: the deny rule does not match");
	/* numbers and booleans match as JSON text */
	struct rule n = {.tool = "mcp__ev__get-sum", .decision = DEC_ALLOW};
	strvadd(&n.argkeys, "a");
	strvadd(&n.argglobs, "[0-9]");
	struct approval na = {.def = DEC_DENY, .rules = &n, .nrules = 1};
	ok(decide(&na, "mcp__ev__get-sum", "{\"a\":7}") == DEC_ALLOW, "a number as text");
	ok(decide(&na, "mcp__ev__get-sum", "{\"a\":17}") == DEC_DENY, "a number that does not match");
	/* an MCP tool is no delegate: worker rules do not match it */
	struct rule d = {.tool = "mcp__*", .worker = "*", .decision = DEC_ALLOW};
	struct approval da = {.def = DEC_DENY, .rules = &d, .nrules = 1};
	ok(decide(&da, "mcp__fs__read_file", "{}") == DEC_DENY, "worker: rules are for delegates only");
	for (int i = 0; i < 3; i++) {
		strvfree(&r[i].argkeys);
		strvfree(&r[i].argglobs);
	}
	strvfree(&n.argkeys);
	strvfree(&n.argglobs);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	manifest();
	rules();
	char *cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	free(cmd);
	return tdone();
}
