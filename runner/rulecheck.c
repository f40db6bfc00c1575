/* rulecheck: a manifest's approval rules checked against the policy engine: patterns that can never
 * match, and examples that the rules do not decide as written. Where manifest and policy meet. */
#include <stdio.h>
#include <string.h>
#include "policy.h"
#include "rulecheck.h"

/* Each approval example must be decided as it says, else name the example and the rule. */
static int checkexamples(const struct worker *w, struct err *e)
{
	const struct strv *lists[] = {&w->approval.allow_examples, &w->approval.deny_examples};
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
					snprintf(by, sizeof by, "rule %d (line %d)", v.rule + 1, w->approval.rules[v.rule].pos.line);
				else
					snprintf(by, sizeof by, "the default");
				struct pos p = w->approval.pos;
				errc(e, 2, "%s:%d:%d: worker '%s': example \"%s\" is listed under %s but %s decides %s: %s",
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

int rulecheck(const struct manifest *m, struct err *e)
{
	for (size_t i = 0; i < m->nworkers; i++) {
		const struct worker *w = &m->workers[i];
		if (policycheck(&w->approval, e) < 0 || checkexamples(w, e) < 0)
			return -1;
	}
	return 0;
}
