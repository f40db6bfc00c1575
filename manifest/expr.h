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
	const cJSON *matrix;       /* a matrix member's values {KEY: value}; NULL = no matrix.* allowed */
	/* checking: the output schema of a job in needs (NULL: any object, not checked); when set, a
	 * jobs.ID.output.PATH the schema can never give a value at is an error */
	const cJSON *(*schema)(void *ctx, const char *job);
	const struct strv *tainted; /* matrix keys whose values came from a job's output */
	size_t *taintat;           /* when set: the offset in the expansion of the first byte of a value that
	                            * came from a job's output (jobs.*, a tainted matrix key), else SIZE_MAX */
};

/* Check every expression of s: syntax, known roots, inputs set, env set, jobs in needs.
 * On error fills e with a message (no position) and returns -1. */
int exprcheck(const char *s, const struct exprenv *env, struct err *e);
/* Expand s in one pass: inputs, env and matrix always; jobs.* only when env->output is given (else
 * left as is). Strings are inserted as they are, other JSON values as compact JSON; what a value
 * inserted holds is never read again as an expression. NULL on error. */
char *exprexpand(const char *s, const struct exprenv *env, struct err *e);

/* From now on ${{ env.NAME }} expands to nothing in this process, never reading the environment
 * (a record's manifest replayed: a stranger's text gets none of the user's variables). */
void exprsealenv(void);
/* How many env.* expressions were met after exprsealenv (each expanded to nothing). */
size_t exprenvdenied(void);

#endif
