/* matrix: combinations of a job's matrix and the substitution of their values into the job. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "expr.h"
#include "matrix.h"

static int keychar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static int haskey(const struct strv *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

/* The text of a JSON scalar, or NULL for anything else. */
static char *scalartext(const cJSON *v)
{
	if (cJSON_IsString(v))
		return xstrdup(v->valuestring);
	if (cJSON_IsNumber(v) || cJSON_IsBool(v))
		return cJSON_PrintUnformatted(v);
	return NULL;
}

static cJSON *outputin(void *ctx, const char *job)
{
	return cJSON_GetObjectItemCaseSensitive((const cJSON *)ctx, job);
}

/* A list given as one string: ${{ inputs.K }}, or ${{ jobs.ID.output... }} of a needed job,
 * holding a JSON list. 2 when it comes from a job whose output is not known yet. *fromjob when
 * its values are a job's (untrusted). */
static int listfrom(struct ydoc *y, yaml_node_t *n, const char *key, const struct strv *sets,
                    const struct strv *needs, const cJSON *outputs, struct strv *out, int *fromjobp)
{
	const char *s = (const char *)n->data.scalar.value;
	if (!strstr(s, "${{"))
		return yfail(y, n, "matrix key '%s' wants a list of values, or ${{ inputs.K }} or ${{ jobs.ID.output }} "
		                   "holding a JSON list", key);
	struct err xe = {0};
	int fromjob = strstr(s, "jobs.") != NULL;
	*fromjobp = fromjob;
	if (fromjob) {
		struct exprenv ce = {.sets = sets, .needs = needs};
		if (exprcheck(s, &ce, &xe) < 0)
			return yfail(y, n, "matrix key '%s': %s", key, xe.msg);
		if (!outputs)
			return 2; /* expanded when the jobs it needs have finished */
	}
	struct exprenv env = {.sets = sets, .needs = needs, .output = outputin, .ctx = (void *)outputs};
	char *text = exprexpand(s, &env, &xe);
	if (!text)
		return yfail(y, n, "matrix key '%s': %s", key, xe.msg);
	cJSON *list = cJSON_Parse(text);
	int rc = 0;
	if (!cJSON_IsArray(list) && fromjob)
		rc = yfail(y, n, "matrix key '%s': %s gave %.200s%s, which is not a JSON list of values (e.g. [\"a\",\"b\"])",
		           key, s, text, strlen(text) > 200 ? "..." : "");
	else if (!cJSON_IsArray(list))
		rc = yfail(y, n, "matrix key '%s': %.200s is not a JSON list (e.g. [\"a\",\"b\"])", key, text);
	cJSON *v;
	cJSON_ArrayForEach(v, list)
	{
		char *t = rc == 0 ? scalartext(v) : NULL;
		if (rc == 0 && !t)
			rc = yfail(y, n, "matrix key '%s': the list holds something other than a string, number or boolean", key);
		else if (t)
			strvadd(out, t);
		free(t);
	}
	cJSON_Delete(list);
	free(text);
	return rc;
}

static int parsekey(struct ydoc *y, struct ypair *p, const struct strv *sets, const struct strv *needs,
                    const cJSON *outputs, struct strv *vals, struct strv *tainted)
{
	if (!*p->key)
		return yfail(y, p->knode, "a matrix key may not be empty");
	for (const char *c = p->key; *c; c++)
		if (!keychar(*c))
			return yfail(y, p->knode, "matrix key '%s' may hold only letters, digits, '_' and '-'", p->key);
	if (p->val->type == YAML_SCALAR_NODE) {
		int fromjob = 0, rc = listfrom(y, p->val, p->key, sets, needs, outputs, vals, &fromjob);
		if (fromjob)
			strvadd(tainted, p->key);
		if (rc != 0)
			return rc;
	} else if (p->val->type == YAML_SEQUENCE_NODE) {
		yaml_node_t *it;
		for (size_t i = 0; (it = yitem(y, p->val, i)); i++) {
			if (it->type != YAML_SCALAR_NODE)
				return yfail(y, it, "matrix key '%s': each value must be a string, number or boolean", p->key);
			strvadd(vals, (const char *)it->data.scalar.value);
		}
	} else {
		return yfail(y, p->val, "matrix key '%s' wants a list of values", p->key);
	}
	if (vals->n == 0)
		return yfail(y, p->val, "matrix key '%s' has no values", p->key);
	for (size_t i = 0; i < vals->n; i++)
		for (size_t k = 0; k < i; k++)
			if (strcmp(vals->v[i], vals->v[k]) == 0)
				return yfail(y, p->val, "matrix key '%s' lists '%s' twice", p->key, vals->v[i]);
	return 0;
}

int matrixparse(struct ydoc *y, yaml_node_t *job, const struct strv *sets, const cJSON *outputs, struct matrix *mx)
{
	memset(mx, 0, sizeof *mx);
	mx->fail_fast = 1;
	yaml_node_t *n = yget(y, job, "matrix"), *v;
	if (!n) {
		if ((v = yget(y, job, "fail_fast")) || (v = yget(y, job, "max_parallel")))
			return yfail(y, v, "fail_fast and max_parallel apply to a job with a matrix");
		return 0;
	}
	if (ymap(y, n, "a matrix", NULL) < 0)
		return -1;
	struct ypair p;
	struct strv needs = {0};
	yaml_node_t *nn = yget(y, job, "needs");
	if (nn && nn->type == YAML_SEQUENCE_NODE)
		for (size_t i = 0; (v = yitem(y, nn, i)); i++)
			if (v->type == YAML_SCALAR_NODE)
				strvadd(&needs, (const char *)v->data.scalar.value);
	mx->ncombos = 1;
	int rc = 0;
	for (size_t i = 0; rc >= 0 && yeach(y, n, i, &p); i++) {
		strvadd(&mx->keys, p.key);
		mx->vals = xrealloc(mx->vals, mx->keys.n * sizeof *mx->vals);
		memset(&mx->vals[i], 0, sizeof mx->vals[i]);
		int k = parsekey(y, &p, sets, &needs, outputs, &mx->vals[i], &mx->tainted);
		if (k == 2)
			mx->pending = 1;
		else if (k < 0)
			rc = -1;
		else if ((mx->ncombos *= mx->vals[i].n) > MATRIXMAX)
			rc = yfail(y, n, "the matrix makes more than %d jobs", MATRIXMAX);
	}
	strvfree(&needs);
	if (rc < 0)
		return -1;
	if (mx->keys.n == 0)
		return yfail(y, n, "the matrix has no keys");
	if ((v = yget(y, job, "fail_fast")) && ybool(y, v, &mx->fail_fast) < 0)
		return -1;
	int64_t cap;
	if ((v = yget(y, job, "max_parallel"))) {
		if (yint(y, v, 1, MATRIXMAX, &cap) < 0)
			return -1;
		mx->max_parallel = (int)cap;
	}
	if (mx->pending)
		mx->ncombos = 0;
	return mx->pending ? 2 : 1;
}

/* The index of key k's value in combination c (the first key varies slowest). */
static size_t pick(const struct matrix *mx, size_t c, size_t k)
{
	size_t stride = 1;
	for (size_t i = mx->keys.n; i-- > k + 1;)
		stride *= mx->vals[i].n;
	return (c / stride) % mx->vals[k].n;
}

char *matrixid(const char *id, const struct matrix *mx, size_t c)
{
	struct buf b = {0};
	bufputs(&b, id);
	for (size_t k = 0; k < mx->keys.n; k++) {
		const char *v = mx->vals[k].v[pick(mx, c, k)];
		bufputc(&b, '-');
		if (!*v)
			bufputc(&b, '_');
		for (; *v; v++)
			bufputc(&b, keychar(*v) ? *v : '_');
	}
	return b.data;
}

char *matrixkey(const struct matrix *mx, size_t c)
{
	struct buf b = {0};
	for (size_t k = 0; k < mx->keys.n; k++) {
		if (k)
			bufputc(&b, '-');
		bufputs(&b, mx->vals[k].v[pick(mx, c, k)]);
	}
	return b.data ? b.data : xstrdup("");
}

cJSON *matrixvalues(const struct matrix *mx, size_t c)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t k = 0; k < mx->keys.n; k++)
		cJSON_AddStringToObject(o, mx->keys.v[k], mx->vals[k].v[pick(mx, c, k)]);
	return o;
}

/* s with each ${{ matrix.KEY }} replaced; NULL with an error at n. *changed when one was; *at the
 * offset of the first value of a tainted key (SIZE_MAX: none). */
static char *substitute(struct ydoc *y, yaml_node_t *n, const char *s, const struct matrix *mx, size_t c,
                        int *changed, size_t *at)
{
	struct buf b = {0};
	*changed = 0;
	*at = SIZE_MAX;
	for (const char *p = s;;) {
		const char *open = strstr(p, "${{"), *close = open ? strstr(open + 3, "}}") : NULL;
		if (!open || !close) {
			bufputs(&b, p);
			break;
		}
		const char *t = open + 3, *te = close;
		while (t < te && (*t == ' ' || *t == '\t'))
			t++;
		while (te > t && (te[-1] == ' ' || te[-1] == '\t'))
			te--;
		if (te - t < 6 || strncmp(t, "matrix", 6) != 0 || (te - t > 6 && t[6] != '.')) {
			bufadd(&b, p, close + 2 - p); /* not ours: expr.c reads it */
			p = close + 2;
			continue;
		}
		size_t kl = te - t > 7 ? (size_t)(te - t - 7) : 0;
		const char *key = t + 7;
		size_t k = 0;
		while (mx && k < mx->keys.n && !(strlen(mx->keys.v[k]) == kl && strncmp(mx->keys.v[k], key, kl) == 0))
			k++;
		if (!mx || k == mx->keys.n) {
			buffree(&b);
			if (!mx)
				yfail(y, n, "${{ %.*s }}: this job has no matrix", (int)(te - t), t);
			else
				yfail(y, n, "${{ %.*s }}: the matrix has no key '%.*s'", (int)(te - t), t, (int)kl, key);
			return NULL;
		}
		bufadd(&b, p, open - p);
		if (*at == SIZE_MAX && haskey(&mx->tainted, mx->keys.v[k]))
			*at = b.len;
		bufputs(&b, mx->vals[k].v[pick(mx, c, k)]);
		*changed = 1;
		p = close + 2;
	}
	return b.data ? b.data : xstrdup("");
}

/* Where a value from a job's output may go: keys whose sink is guarded (a declared model is
 * picked by name; files and a mount's target are checked paths inside the sandbox; a mount's
 * source is resolved beneath its root, links refused; protect only adds). */
static const char *const taintok[] = {"model", "files", "sandbox.mounts.source", "sandbox.mounts.target",
                                      "sandbox.protect", NULL};

/* The keys read as they are by expr.c, with the matrix values in the same pass. */
static const char *const exprkeys[] = {"input", "workspace", NULL};

static int listed(const char *const *l, const char *s)
{
	for (size_t i = 0; l[i]; i++)
		if (strcmp(l[i], s) == 0)
			return 1;
	return 0;
}

/* Scalars under n, at key path `where` (dotted, sequences left out). */
static int bind(struct ydoc *y, yaml_node_t *n, const struct matrix *mx, size_t c, struct mxbound *b, int depth,
                const char *where)
{
	if (!n || depth > 64)
		return 0;
	if (n->type == YAML_SCALAR_NODE) {
		int changed;
		size_t at;
		char *s = substitute(y, n, (const char *)n->data.scalar.value, mx, c, &changed, &at);
		if (!s)
			return -1;
		if (!changed || listed(exprkeys, where)) {
			free(s);
			return 0;
		}
		if (at != SIZE_MAX && !listed(taintok, where)) {
			free(s);
			return yfail(y, n, "a value from a job's output may not set %s (only input, workspace, model, files, "
			                   "and a mount's source and target, and protect)", *where ? where : "this");
		}
		if (at != SIZE_MAX) {
			y->taint = xrealloc(y->taint, (y->ntaint + 1) * sizeof *y->taint);
			y->taint[y->ntaint++] = (struct ytaint){n, at};
		}
		b->nodes = xrealloc(b->nodes, (b->n + 1) * sizeof *b->nodes);
		b->old = xrealloc(b->old, (b->n + 1) * sizeof *b->old);
		b->oldlen = xrealloc(b->oldlen, (b->n + 1) * sizeof *b->oldlen);
		b->nodes[b->n] = n;
		b->old[b->n] = n->data.scalar.value;
		b->oldlen[b->n++] = n->data.scalar.length;
		n->data.scalar.value = (yaml_char_t *)s;
		n->data.scalar.length = strlen(s);
		return 0;
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
			if (bind(y, yaml_document_get_node(&y->doc, *it), mx, c, b, depth + 1, where) < 0)
				return -1;
	} else if (n->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node(&y->doc, pr->key);
			const char *name = k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "?";
			if (depth == 0 && strcmp(name, "matrix") == 0)
				continue; /* the matrix itself is read as written */
			char *sub = *where ? xasprintf("%s.%s", where, name) : xstrdup(name);
			int rc = bind(y, yaml_document_get_node(&y->doc, pr->value), mx, c, b, depth + 1, sub);
			free(sub);
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}

int matrixbind(struct ydoc *y, yaml_node_t *n, const struct matrix *mx, size_t c, struct mxbound *b)
{
	memset(b, 0, sizeof *b);
	b->y = y;
	return bind(y, n, mx, c, b, 0, "");
}

void matrixunbind(struct mxbound *b)
{
	for (size_t i = b->n; i-- > 0;) {
		free(b->nodes[i]->data.scalar.value);
		b->nodes[i]->data.scalar.value = b->old[i];
		b->nodes[i]->data.scalar.length = b->oldlen[i];
	}
	free(b->nodes);
	free(b->old);
	free(b->oldlen);
	if (b->y) {
		free(b->y->taint);
		b->y->taint = NULL;
		b->y->ntaint = 0;
	}
	memset(b, 0, sizeof *b);
}

void matrixfree(struct matrix *mx)
{
	for (size_t k = 0; k < mx->keys.n; k++)
		strvfree(&mx->vals[k]);
	free(mx->vals);
	strvfree(&mx->keys);
	strvfree(&mx->tainted);
	memset(mx, 0, sizeof *mx);
}
