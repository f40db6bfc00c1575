/* policy: a worker's approval rules applied to one tool call; strictest match wins. */
#ifndef NS_POLICY_H
#define NS_POLICY_H

#include <cjson/cJSON.h>
#include "../manifest/manifest.h"
#include "../util/path.h"

struct verdict {
	enum decision decision;
	int rule;             /* index into approval.rules (0-based; people see rule + 1, "rule 1" being
	                       * the first in the YAML), or -1 when the default decided */
	char reason[256];     /* one line, for the event and for the model's error; names the rule
	                       * ("rule 2 (line 14)") and, for shell, the simple command that decided */
	struct strv commands; /* simple commands found by the shell splitter, as written (shell only) */
	struct cmdverdict {
		enum decision decision;
		int rule;    /* as above: -1 for the default */
		int skipped; /* runs nothing (assignments, redirections into the workspace): not judged */
	} *percmd;        /* one per commands entry (shell only), or NULL */
	char *path;           /* normalised workspace-relative path (file tools), or NULL */
};

/* Decide a call of tool with its JSON arguments ({"command"} for shell, {"path", ...} for the file
 * tools, {"input"} for a delegate, which is any tool that is not built in: tool is then the
 * delegate's name). worker names the worker whose rules these are, for the reason (may be NULL).
 * Never fails open: a missing argument, a path outside the workspace or a command line the
 * splitter cannot prove harmless never matches an allow rule, nor an allow default. */
void policydecide(const struct approval *a, const char *worker, const char *tool,
                  const cJSON *args, struct verdict *v);
/* Check the rules' patterns: -1 with "file:line:col: rule N: ..." (code 2) for a command glob
 * with an unbalanced quote, a rule that can never match, and the like. */
int policycheck(const struct approval *a, struct err *e);
/* The number people see for rule k: its place in the YAML list, from 1 (a preset counts as one
 * rule, all its patterns share its number). */
int rulenum(const struct approval *a, int k);
/* How rule k is told in events and lines: "N" (rulenum) or, for the admin policy's, "admin N"
 * (its number in the policy), into dst. */
void ruletag(const struct approval *a, int k, char *dst, size_t cap);
/* A tag as a phrase: "rule N" or "admin rule N", in a static buffer (one at a time). */
const char *ruletold(const char *tag);
/* Free what a verdict owns. */
void verdictfree(struct verdict *v);


#endif
