/* rulecheck: a manifest's approval rules checked against the policy engine: patterns that can never
 * match, and examples that the rules do not decide as written. Where manifest and policy meet. */
#include <stdio.h>
#include <string.h>
#include "../util/glob.h"
#include "policy.h"
#include "rulecheck.h"

/* The rules' patterns, as the policy engine reads them. */
static int checkpatterns(const struct worker *w, struct err *e)
{
	return policycheck(&w->approval, e);
}

/* Each approval example must be decided as it says, else name the example and the rule. */
static int checkexamples(const struct worker *w, struct err *e)
{
	const struct strv *lists[] = {&w->approval.allow_examples, &w->approval.deny_examples};
	const struct pos *at[] = {w->approval.allow_pos, w->approval.deny_pos};
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			cJSON *args = cJSON_CreateObject();
			cJSON_AddStringToObject(args, "command", lists[l]->v[i]);
			struct verdict v;
			policydecide(&w->approval, w->name, "shell", args, &v);
			cJSON_Delete(args);
			int allowed = v.decision == DEC_ALLOW;
			if (allowed != (l == 0)) {
				char by[128];
				if (v.rule >= 0)
					snprintf(by, sizeof by, "rule %d (line %d)", rulenum(&w->approval, v.rule), w->approval.rules[v.rule].pos.line);
				else
					snprintf(by, sizeof by, "the default");
				struct pos p = at[l] ? at[l][i] : w->approval.pos;
				errc(e, ERR_INPUT, "%s:%d:%d: worker '%s': example \"%s\" is listed under %s but %s decides %s: %s",
				     p.file, p.line, p.col, w->name, lists[l]->v[i], l == 0 ? "allow" : "deny", by,
				     decisionname(v.decision), v.reason);
				verdictfree(&v);
				return -1;
			}
			verdictfree(&v);
		}
	}
	return 0;
}

/* Whether a rule's tool glob names a tool the worker has. An MCP tool (mcp__SERVER__NAME) is known
 * only once its server answers, so such a pattern is taken as written. */
static int toolexists(const struct worker *w, const char *glob)
{
	if (!glob || strncmp(glob, "mcp__", 5) == 0)
		return 1;
	size_t n = strlen(glob);
	const char *name;
	for (int i = 0; (name = toolnameat(i)); i++)
		if ((w->tools & (1u << i)) && globmatch(glob, n, name, strlen(name)))
			return 1;
	if (globmatch(glob, n, "final_result", 12))
		return 1;
	for (size_t k = 0; k < w->delegates.n; k++)
		if (globmatch(glob, n, w->delegates.v[k], strlen(w->delegates.v[k])))
			return 1;
	return 0;
}

/* A rule whose tool pattern matches no tool of the worker can never fire. */
static int checktools(const struct worker *w, struct err *e)
{
	for (size_t k = 0; k < w->approval.nrules; k++) {
		const struct rule *r = &w->approval.rules[k];
		if (r->admin || toolexists(w, r->tool)) /* the admin's rules are for every worker, whatever it has */
			continue;
		struct buf has = {0};
		const char *name;
		for (int i = 0; (name = toolnameat(i)); i++)
			if (w->tools & (1u << i))
				bufprintf(&has, "%s, ", name);
		for (size_t d = 0; d < w->delegates.n; d++)
			bufprintf(&has, "%s, ", w->delegates.v[d]);
		bufputs(&has, "final_result");
		errc(e, ERR_INPUT, "%s:%d:%d: rule %zu: tool '%s' matches no tool that worker '%s' has (%s): the rule can never %s",
		     r->pos.file ? r->pos.file : "manifest", r->pos.line, r->pos.col, k + 1, r->tool, w->name, has.data,
		     r->decision == DEC_ALLOW ? "allow anything" : "fire");
		buffree(&has);
		return -1;
	}
	return 0;
}

int rulecheck(const struct manifest *m, struct strv *errs, struct err *e)
{
	int rc = 0;
	for (size_t i = 0; i < m->nworkers; i++) {
		const struct worker *w = &m->workers[i];
		int (*const checks[])(const struct worker *, struct err *) = {checkpatterns, checktools, checkexamples};
		for (size_t c = 0; c < sizeof checks / sizeof checks[0]; c++) {
			if (checks[c](w, e) < 0) {
				rc = -1;
				if (errs)
					strvadd(errs, e->msg);
			}
		}
	}
	return rc;
}
