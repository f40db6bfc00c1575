/* yaml: a libyaml document with positions, typed getters that report file:line:col, and YAML to JSON. */
#ifndef NS_YAML_H
#define NS_YAML_H

#include <stdint.h>
#include <yaml.h>
#include <cjson/cJSON.h>
#include "manifest.h"

struct ydoc {
	yaml_document_t doc;
	const char *file; /* name used in messages */
	int lineoff;      /* added to every line (front matter starts below line 1) */
	struct err *e;
	int loaded;
	struct strv *errs; /* when set, every mistake found is added here (yfail, ynote), not only the last */
	struct ytaint *taint; /* scalars holding a value from a job's output (matrix.h's matrixbind) */
	size_t ntaint;
};

/* A scalar whose bytes from at on hold a value that came from a job's output. */
struct ytaint {
	yaml_node_t *node;
	size_t at;
};

/* Parse text as one YAML document; errors carry file:line:col and code 2. */
int yload(struct ydoc *y, const char *file, const char *text, size_t len, int lineoff, struct err *e);
void yfree(struct ydoc *y);
/* A document of one mapping from "KEY=VALUE" pairs (as a flag gives them): each value a plain
 * scalar taken as it is (never parsed as YAML), pair i at line i + 1 of file, col 1. */
int yfrompairs(struct ydoc *y, const char *file, const struct strv *pairs, struct err *e);
/* Where scalar n's bytes from a job's output begin (ytaint), or -1 when it holds none. */
long ytainted(const struct ydoc *y, const yaml_node_t *n);
/* The root node, or NULL for an empty document. */
yaml_node_t *yroot(struct ydoc *y);
/* The position of a node. */
struct pos ypos(struct ydoc *y, yaml_node_t *n);
/* Fail at a node: "file:line:col: message", exit code 2. Returns -1. */
int yfail(struct ydoc *y, yaml_node_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Add the error in y->e to y->errs (when set) unless it is already the last one there. */
void ynote(struct ydoc *y);
/* A sequence of strings like ystrv, and the position of each item in *pos (freed by the caller). */
int ystrvpos(struct ydoc *y, yaml_node_t *n, struct strv *out, struct pos **pos);

/* One key/value pair of a mapping, walked with yeach. */
struct ypair {
	const char *key;
	yaml_node_t *knode, *val;
};
/* Check n is a mapping whose keys are all in known (NULL-terminated) and unique; 0 or -1. */
int ymap(struct ydoc *y, yaml_node_t *n, const char *what, const char *const *known);
/* The i-th pair of a mapping; 0 when i is past the end. */
int yeach(struct ydoc *y, yaml_node_t *map, size_t i, struct ypair *p);
/* The value of key in a mapping, or NULL. */
yaml_node_t *yget(struct ydoc *y, yaml_node_t *map, const char *key);

/* Typed getters: each fails at the node with a message naming what was expected. */
int ystr(struct ydoc *y, yaml_node_t *n, char **out);
int yint(struct ydoc *y, yaml_node_t *n, int64_t min, int64_t max, int64_t *out);
int ynum(struct ydoc *y, yaml_node_t *n, double min, double max, double *out);
int ybool(struct ydoc *y, yaml_node_t *n, int *out);
int yduration(struct ydoc *y, yaml_node_t *n, int64_t *ms);
int ysize(struct ydoc *y, yaml_node_t *n, int64_t *bytes);
/* A sequence of strings (a single string is taken as a list of one). */
int ystrv(struct ydoc *y, yaml_node_t *n, struct strv *out);
/* The i-th item of a sequence, or NULL. */
yaml_node_t *yitem(struct ydoc *y, yaml_node_t *seq, size_t i);

/* Convert a node to JSON: plain scalars become null/bool/number where they read as one. */
cJSON *yjson(struct ydoc *y, yaml_node_t *n);
/* The node a JSON pointer names below n ("/a/0/b"), or the deepest one found. */
yaml_node_t *yat(struct ydoc *y, yaml_node_t *n, const char *pointer);

#endif
