/* rulecheck: a manifest's approval rules checked against the policy engine. */
#ifndef NS_RULECHECK_H
#define NS_RULECHECK_H

#include "../manifest/manifest.h"

/* Every worker's rules: -1 with "file:line:col: ..." (code 2) for a pattern that can never match, a
 * tool pattern that names no tool of the worker, or an approval example the rules do not decide as
 * it says; every such mistake is added to errs (may be NULL), e holds the last. */
int rulecheck(const struct manifest *m, struct strv *errs, struct err *e);

#endif
