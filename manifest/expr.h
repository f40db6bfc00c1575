/* expr: ${{ jobs.ID.output.PATH }}, ${{ jobs.ID.outputs.KEY... }} (a matrix job), ${{ inputs.KEY }} and ${{ env.NAME }} in manifest strings. */
#ifndef NS_EXPR_H
#define NS_EXPR_H

#include <cjson/cJSON.h>
#include "../util/util.h"

/* Where an expression's values come from; any may be NULL. */
struct exprenv {
	const struct strv *sets;   /* KEY=VALUE from --set */
	const struct strv *needs;  /* jobs a jobs.* reference may name; NULL = no jobs.* allowed */
	cJSON *(*output)(void *ctx, const char *job); /* a finished job's output, or NULL */
	cJSON *(*outputs)(void *ctx, const char *group); /* a matrix job's {key: output}, or NULL */
	void *ctx;
	const struct strv *groups; /* matrix jobs: only they have .outputs; NULL = not checked */
	int later;                 /* jobs.* are left as they are, unchecked (checked once all jobs are known) */
};

/* Check every expression of s: syntax, known roots, inputs set, env set, jobs in needs.
 * On error fills e with a message (no position) and returns -1. */
int exprcheck(const char *s, const struct exprenv *env, struct err *e);
/* Expand s. inputs and env always; jobs.* only when env->output is given (else left as is).
 * Strings are inserted as they are, other JSON values as compact JSON. NULL on error. */
char *exprexpand(const char *s, const struct exprenv *env, struct err *e);

#endif
