/* yaml: libyaml's document API with positions and typed getters. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "yaml.h"

int yload(struct ydoc *y, const char *file, const char *text, size_t len, int lineoff, struct err *e)
{
	yaml_parser_t p;
	memset(y, 0, sizeof *y);
	y->file = file;
	y->lineoff = lineoff;
	y->e = e;
	if (memchr(text, 0, len))
		return errc(e, ERR_INPUT, "%s: contains a NUL byte", file);
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &y->doc)) {
		yaml_mark_t m = p.problem_mark;
		errc(e, ERR_INPUT, "%s:%d:%d: YAML syntax error: %s%s%s", file, (int)m.line + 1 + lineoff, (int)m.column + 1,
		     p.problem ? p.problem : "unknown", p.context ? " " : "", p.context ? p.context : "");
		yaml_parser_delete(&p);
		return -1;
	}
	y->loaded = 1;
	yaml_document_t extra;
	if (yaml_parser_load(&p, &extra)) {
		yaml_node_t *r = yaml_document_get_root_node(&extra);
		int more = r != NULL;
		int line = r ? (int)r->start_mark.line : 0;
		yaml_document_delete(&extra);
		if (more) {
			yaml_parser_delete(&p);
			yfree(y); /* callers free nothing after a failed load */
			return errc(e, ERR_INPUT, "%s:%d:1: a second YAML document; a manifest is one document", file, line + 1 + lineoff);
		}
	}
	yaml_parser_delete(&p);
	return 0;
}

int yfrompairs(struct ydoc *y, const char *file, const struct strv *pairs, struct err *e)
{
	memset(y, 0, sizeof *y);
	y->file = file;
	y->e = e;
	if (!yaml_document_initialize(&y->doc, NULL, NULL, NULL, 1, 1))
		return errc(e, ERR_INPUT, "%s: out of memory", file);
	y->loaded = 1;
	int map = yaml_document_add_mapping(&y->doc, NULL, YAML_FLOW_MAPPING_STYLE);
	for (size_t i = 0; map && i < pairs->n; i++) {
		const char *kv = pairs->v[i], *eq = strchr(kv, '=');
		if (!eq)
			eq = kv + strlen(kv);
		int k = yaml_document_add_scalar(&y->doc, NULL, (const yaml_char_t *)kv, (int)(eq - kv), YAML_PLAIN_SCALAR_STYLE);
		int v = yaml_document_add_scalar(&y->doc, NULL, (const yaml_char_t *)(*eq ? eq + 1 : eq), -1,
		                                 YAML_PLAIN_SCALAR_STYLE);
		if (!k || !v || !yaml_document_append_mapping_pair(&y->doc, map, k, v)) {
			map = 0;
			break;
		}
		yaml_mark_t at = {0, i, 0};
		yaml_document_get_node(&y->doc, k)->start_mark = at;
		yaml_document_get_node(&y->doc, v)->start_mark = at;
	}
	if (!map) {
		yfree(y);
		return errc(e, ERR_INPUT, "%s: out of memory", file);
	}
	return 0;
}

void yfree(struct ydoc *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	y->loaded = 0;
	free(y->taint);
	y->taint = NULL;
	y->ntaint = 0;
}

long ytainted(const struct ydoc *y, const yaml_node_t *n)
{
	for (size_t i = 0; n && i < y->ntaint; i++)
		if (y->taint[i].node == n)
			return (long)y->taint[i].at;
	return -1;
}

yaml_node_t *yroot(struct ydoc *y)
{
	return yaml_document_get_root_node(&y->doc);
}

struct pos ypos(struct ydoc *y, yaml_node_t *n)
{
	struct pos p = {y->file, 1 + y->lineoff, 1};
	if (n) {
		p.line = (int)n->start_mark.line + 1 + y->lineoff;
		p.col = (int)n->start_mark.column + 1;
	}
	return p;
}

int yfail(struct ydoc *y, yaml_node_t *n, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct pos p = ypos(y, n);
	errc(y->e, ERR_INPUT, "%s:%d:%d: %s", p.file, p.line, p.col, msg);
	ynote(y);
	return -1;
}

void ynote(struct ydoc *y)
{
	struct strv *l = y->errs;
	if (l && y->e->msg[0] && (l->n == 0 || strcmp(l->v[l->n - 1], y->e->msg) != 0))
		strvadd(l, y->e->msg);
}

static const char *kind(yaml_node_t *n)
{
	switch (n ? n->type : YAML_NO_NODE) {
	case YAML_SCALAR_NODE: return "a scalar";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_MAPPING_NODE: return "a mapping";
	default: return "nothing";
	}
}

static const char *scalar(yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

int yeach(struct ydoc *y, yaml_node_t *map, size_t i, struct ypair *p)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return 0;
	yaml_node_pair_t *pr = map->data.mapping.pairs.start + i;
	if (pr >= map->data.mapping.pairs.top)
		return 0;
	p->knode = yaml_document_get_node(&y->doc, pr->key);
	p->val = yaml_document_get_node(&y->doc, pr->value);
	p->key = p->knode && p->knode->type == YAML_SCALAR_NODE ? scalar(p->knode) : "";
	return 1;
}

yaml_node_t *yget(struct ydoc *y, yaml_node_t *map, const char *key)
{
	struct ypair p;
	for (size_t i = 0; yeach(y, map, i, &p); i++)
		if (strcmp(p.key, key) == 0)
			return p.val;
	return NULL;
}

int ymap(struct ydoc *y, yaml_node_t *n, const char *what, const char *const *known)
{
	struct ypair p, q;
	int rc = 0;
	if (!n || n->type != YAML_MAPPING_NODE)
		return yfail(y, n, "%s must be a mapping, not %s", what, kind(n));
	for (size_t i = 0; yeach(y, n, i, &p); i++) {
		if (p.knode->type != YAML_SCALAR_NODE) {
			rc = yfail(y, p.knode, "keys of %s must be plain names", what);
			continue;
		}
		for (size_t j = 0; j < i && yeach(y, n, j, &q); j++)
			if (strcmp(p.key, q.key) == 0) {
				rc = yfail(y, p.knode, "duplicate key '%s' in %s (first at line %d)", p.key, what,
				           ypos(y, q.knode).line);
				break;
			}
		if (!known)
			continue;
		int found = 0;
		for (size_t k = 0; known[k] && !found; k++)
			found = strcmp(known[k], p.key) == 0;
		if (found)
			continue;
		const char *near = didyoumean(p.key, known);
		if (near) {
			rc = yfail(y, p.knode, "unknown key '%s' in %s; did you mean '%s'?", p.key, what, near);
			continue;
		}
		struct buf all = {0};
		for (size_t k = 0; known[k]; k++)
			bufprintf(&all, "%s%s", k ? ", " : "", known[k]);
		rc = yfail(y, p.knode, "unknown key '%s' in %s (known: %s)", p.key, what, all.data);
		buffree(&all);
	}
	return rc;
}

yaml_node_t *yitem(struct ydoc *y, yaml_node_t *seq, size_t i)
{
	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return NULL;
	yaml_node_item_t *it = seq->data.sequence.items.start + i;
	if (it >= seq->data.sequence.items.top)
		return NULL;
	return yaml_document_get_node(&y->doc, *it);
}

int ystr(struct ydoc *y, yaml_node_t *n, char **out)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return yfail(y, n, "expected a string, not %s", kind(n));
	free(*out);
	*out = xstrndup(scalar(n), n->data.scalar.length);
	if (strlen(*out) != n->data.scalar.length) {
		free(*out); /* nothing for a caller to free after an error */
		*out = NULL;
		return yfail(y, n, "string contains a NUL byte");
	}
	return 0;
}

static int isplain(yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

int ynum(struct ydoc *y, yaml_node_t *n, double min, double max, double *out)
{
	char *end;
	if (!n || !isplain(n) || !*scalar(n))
		return yfail(y, n, "expected a number, not %s", n && n->type == YAML_SCALAR_NODE ? "a string" : kind(n));
	double v = strtod(scalar(n), &end);
	if (*end || !isfinite(v))
		return yfail(y, n, "expected a number, not '%s'", scalar(n));
	if (v < min || v > max)
		return yfail(y, n, "%s is out of range (%g to %g)", scalar(n), min, max);
	*out = v;
	return 0;
}

int yint(struct ydoc *y, yaml_node_t *n, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	if (!n || !isplain(n) || !*scalar(n))
		return yfail(y, n, "expected an integer, not %s", n && n->type == YAML_SCALAR_NODE ? "a string" : kind(n));
	long long v = strtoll(scalar(n), &end, 10);
	if (*end)
		return yfail(y, n, "expected an integer, not '%s'", scalar(n));
	if (v < min || v > max)
		return yfail(y, n, "%s is out of range (%lld to %lld)", scalar(n), (long long)min, (long long)max);
	*out = v;
	return 0;
}

int ybool(struct ydoc *y, yaml_node_t *n, int *out)
{
	if (n && isplain(n) && strcmp(scalar(n), "true") == 0)
		return *out = 1, 0;
	if (n && isplain(n) && strcmp(scalar(n), "false") == 0)
		return *out = 0, 0;
	return yfail(y, n, "expected true or false");
}

int yduration(struct ydoc *y, yaml_node_t *n, int64_t *ms)
{
	if (!n || n->type != YAML_SCALAR_NODE || parseduration(scalar(n), ms) < 0)
		return yfail(y, n, "expected a duration like 120s, 10m, 1h or 500ms, not '%s'",
		             n && n->type == YAML_SCALAR_NODE ? scalar(n) : kind(n));
	return 0;
}

int ysize(struct ydoc *y, yaml_node_t *n, int64_t *bytes)
{
	if (!n || n->type != YAML_SCALAR_NODE || parsesize(scalar(n), bytes) < 0)
		return yfail(y, n, "expected a size like 512M, 1G or 64k, not '%s'",
		             n && n->type == YAML_SCALAR_NODE ? scalar(n) : kind(n));
	return 0;
}

int ystrv(struct ydoc *y, yaml_node_t *n, struct strv *out)
{
	return ystrvpos(y, n, out, NULL);
}

int ystrvpos(struct ydoc *y, yaml_node_t *n, struct strv *out, struct pos **pos)
{
	if (pos) {
		free(*pos);
		*pos = NULL;
	}
	strvfree(out);
	if (n && n->type == YAML_SCALAR_NODE) {
		char *s = NULL;
		if (ystr(y, n, &s) < 0)
			return -1;
		strvadd(out, s);
		free(s);
		if (pos) {
			*pos = xmalloc(sizeof **pos);
			**pos = ypos(y, n);
		}
		return 0;
	}
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return yfail(y, n, "expected a list of strings, not %s", kind(n));
	yaml_node_t *it;
	for (size_t i = 0; (it = yitem(y, n, i)); i++) {
		char *s = NULL;
		if (ystr(y, it, &s) < 0)
			return -1;
		strvadd(out, s);
		free(s);
		if (pos) {
			*pos = xrealloc(*pos, out->n * sizeof **pos);
			(*pos)[out->n - 1] = ypos(y, it);
		}
	}
	return 0;
}

/* Convert with a budget so that alias bombs ("billion laughs") cannot explode. */
static cJSON *tojson(struct ydoc *y, yaml_node_t *n, int depth, long *budget)
{
	if (!n || depth > 64 || --*budget < 0)
		return NULL;
	if (n->type == YAML_SCALAR_NODE) {
		const char *s = scalar(n);
		if (!isplain(n))
			return cJSON_CreateString(s);
		if (!*s || strcmp(s, "null") == 0 || strcmp(s, "~") == 0)
			return cJSON_CreateNull();
		if (strcmp(s, "true") == 0)
			return cJSON_CreateTrue();
		if (strcmp(s, "false") == 0)
			return cJSON_CreateFalse();
		char *end;
		double v = strtod(s, &end);
		if (!*end && isfinite(v) && (s[0] == '-' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9')) &&
		    !(s[0] == '0' && s[1] == 'x'))
			return cJSON_CreateNumber(v);
		return cJSON_CreateString(s);
	}
	cJSON *j = n->type == YAML_SEQUENCE_NODE ? cJSON_CreateArray() : cJSON_CreateObject();
	if (n->type == YAML_SEQUENCE_NODE) {
		yaml_node_t *it;
		for (size_t i = 0; (it = yitem(y, n, i)); i++) {
			cJSON *c = tojson(y, it, depth + 1, budget);
			if (!c)
				return cJSON_Delete(j), NULL;
			cJSON_AddItemToArray(j, c);
		}
	} else {
		struct ypair p;
		for (size_t i = 0; yeach(y, n, i, &p); i++) {
			cJSON *c = tojson(y, p.val, depth + 1, budget);
			if (!c)
				return cJSON_Delete(j), NULL;
			cJSON_AddItemToObject(j, p.key, c);
		}
	}
	return j;
}

cJSON *yjson(struct ydoc *y, yaml_node_t *n)
{
	long budget = 100000;
	cJSON *j = tojson(y, n, 0, &budget);
	if (!j)
		yfail(y, n, "value is too deep or too large (aliases expand past 100000 nodes)");
	return j;
}

yaml_node_t *yat(struct ydoc *y, yaml_node_t *n, const char *pointer)
{
	char tok[256];
	while (n && *pointer == '/') {
		pointer++;
		size_t k = 0;
		while (*pointer && *pointer != '/' && k + 1 < sizeof tok) {
			if (pointer[0] == '~' && (pointer[1] == '0' || pointer[1] == '1')) {
				tok[k++] = pointer[1] == '0' ? '~' : '/';
				pointer += 2;
			} else {
				tok[k++] = *pointer++;
			}
		}
		tok[k] = 0;
		yaml_node_t *next = NULL;
		if (n->type == YAML_MAPPING_NODE) {
			struct ypair p;
			for (size_t i = 0; yeach(y, n, i, &p); i++)
				if (strcmp(p.key, tok) == 0)
					next = pointer[0] ? p.val : p.knode; /* point at the key itself when it's last */
			if (next && next->type == YAML_SCALAR_NODE && pointer[0])
				return next;
		} else if (n->type == YAML_SEQUENCE_NODE) {
			next = yitem(y, n, strtoul(tok, NULL, 10));
		}
		if (!next)
			return n;
		n = next;
	}
	return n;
}
