/* matrix: a job's `matrix:`: its combinations, their ids, and ${{ matrix.KEY }} put into the job. */
#ifndef NS_MATRIX_H
#define NS_MATRIX_H

#include <cjson/cJSON.h>
#include "yaml.h"

/* The combinations of a matrix, in order: the first key varies slowest (as GitHub lists them). */
struct matrix {
	struct strv keys;  /* in the order written */
	struct strv *vals; /* vals[k]: the values of keys.v[k], as text */
	size_t ncombos;
	int fail_fast;     /* default 1, as on GitHub */
	int max_parallel;  /* 0 = no cap beyond -j */
	int pending;       /* a list comes from a needed job's output, not known yet: no combinations */
	struct strv tainted; /* keys whose list came from a job's output: untrusted values */
};

enum { MATRIXMAX = 256 }; /* combinations of one matrix, as GitHub allows */

/* Read the job node's matrix, fail_fast and max_parallel. Lists are literal, or ${{ inputs.K }} or
 * ${{ jobs.ID.output[.PATH] }} (ID in the job's needs) holding a JSON list of strings, numbers or
 * booleans; outputs ({ID: output}) has the outputs of the jobs finished, NULL before the run. 0
 * when the job has no matrix, 1 when it has one, 2 when a list comes from a job's output and
 * outputs is NULL (mx->pending), -1 on an error at its file:line:col. */
int matrixparse(struct ydoc *y, yaml_node_t *job, const struct strv *sets, const cJSON *outputs, struct matrix *mx);
/* The id of combination c of job id: "ID-V1-V2" (each value with characters other than letters,
 * digits, '_' and '-' made '_'). Owned by the caller. */
char *matrixid(const char *id, const struct matrix *mx, size_t c);
/* Its key in ${{ jobs.ID.outputs }}: the values of c joined by '-', as written. */
char *matrixkey(const struct matrix *mx, size_t c);
/* Its values as a JSON object {KEY: value}. */
cJSON *matrixvalues(const struct matrix *mx, size_t c);

/* Scalars of a node's subtree whose ${{ matrix.KEY }} were replaced, to be put back. */
struct mxbound {
	struct ydoc *y;
	yaml_node_t **nodes;
	yaml_char_t **old;
	size_t *oldlen;
	size_t n;
};
/* Put combination c's values into every ${{ matrix.KEY }} of the scalars under n (mx may be NULL:
 * then any ${{ matrix.* }} is an error), once: the result is never expanded again. The job's input
 * and workspace are only checked here: expr.c puts the values in, in the same pass as their other
 * expressions. A value of a tainted key may go only where its sink is guarded (a model, files, a
 * mount's source, target, protect; y->taint says where it begins); elsewhere it is an error. Undo
 * with matrixunbind, also after an error. */
int matrixbind(struct ydoc *y, yaml_node_t *n, const struct matrix *mx, size_t c, struct mxbound *b);
void matrixunbind(struct mxbound *b);
void matrixfree(struct matrix *mx);

#endif
