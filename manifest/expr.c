/* expr: a tiny expression language: a dotted path into jobs, inputs or env. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "expr.h"

static int namechar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Split "a.b.c" (trimmed) into parts; -1 when a part is empty or holds other characters. */
static int splitpath(const char *s, size_t n, struct strv *parts)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (i == start)
				return -1;
			char *p = xstrndup(s + start, i - start);
			strvadd(parts, p);
			free(p);
			start = i + 1;
		} else if (!namechar(s[i])) {
			return -1;
		}
	}
	return 0;
}

/* Set by exprsealenv: env.* no longer reads the environment; how many reads were refused. */
static int sealed;
static size_t denied;

void exprsealenv(void)
{
	sealed = 1;
}

size_t exprenvdenied(void)
{
	return denied;
}

static const char *setvalue(const struct strv *sets, const char *key)
{
	size_t n = strlen(key);
	for (size_t i = 0; sets && i < sets->n; i++)
		if (strncmp(sets->v[i], key, n) == 0 && sets->v[i][n] == '=')
			return sets->v[i] + n + 1;
	return NULL;
}

static int inlist(const struct strv *l, const char *s)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

/* Whether schema sc's type is only scalars (no object, no array, so no field to reach into). */
static int scalaronly(const cJSON *sc)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(sc, "type"), *it;
	const cJSON *list = cJSON_IsArray(t) ? t : NULL;
	int any = 0, deep = 0;
	if (cJSON_IsString(t))
		return strcmp(t->valuestring, "object") != 0 && strcmp(t->valuestring, "array") != 0;
	cJSON_ArrayForEach(it, list)
	{
		any = 1;
		deep |= cJSON_IsString(it) && (!strcmp(it->valuestring, "object") || !strcmp(it->valuestring, "array"));
	}
	return any && !deep;
}

/* Check parts[from..] against the output schema sc of job: 0 when the schema may give a value
 * there, else -1 with e naming the part. The declared properties are the contract: a name not
 * among them is refused unless additionalProperties gives it a schema. Only plain schemas are read:
 * one that combines others (anyOf, $ref, ...) or names properties by pattern ends the check. */
static int schemapath(const cJSON *sc, const char *job, const struct strv *p, size_t from, struct err *e)
{
	static const char *const open[] = {"anyOf", "oneOf", "allOf", "not", "$ref", "patternProperties", NULL};
	for (size_t i = from; i < p->n; i++) {
		if (!cJSON_IsObject(sc))
			return 0; /* true or no schema: anything */
		for (size_t k = 0; open[k]; k++)
			if (cJSON_GetObjectItemCaseSensitive(sc, open[k]))
				return 0;
		const cJSON *props = cJSON_GetObjectItemCaseSensitive(sc, "properties");
		const cJSON *extra = cJSON_GetObjectItemCaseSensitive(sc, "additionalProperties");
		const cJSON *items = cJSON_GetObjectItemCaseSensitive(sc, "items");
		char *end;
		strtol(p->v[i], &end, 10);
		if (!*end && items) {
			sc = items;
		} else if (cJSON_IsObject(props) && cJSON_GetObjectItemCaseSensitive(props, p->v[i])) {
			sc = cJSON_GetObjectItemCaseSensitive(props, p->v[i]);
		} else if (extra && !cJSON_IsFalse(extra)) {
			sc = extra;
		} else if (cJSON_IsObject(props) || scalaronly(sc)) {
			struct buf names = {0};
			const cJSON *it, *named = cJSON_IsObject(props) ? props : NULL;
			cJSON_ArrayForEach(it, named)
				bufprintf(&names, "%s%s", names.len ? ", " : "", it->string);
			struct buf at = {0};
			for (size_t k = 2; k < i; k++)
				bufprintf(&at, "%s%s", k > 2 ? "." : "", p->v[k]);
			errf(e, "jobs.%s.%s.%s: the output schema of job '%s' has no '%s' there (%s%s)", job, at.data, p->v[i], job,
			     p->v[i], names.len ? "its properties: " : "it is not an object", names.len ? names.data : "");
			buffree(&names);
			buffree(&at);
			return -1;
		} else {
			return 0;
		}
	}
	return 0;
}

/* Resolve one expression to a new string, or NULL (e says why); *keep when it is left as written. */
static char *resolve(const char *text, size_t n, const struct exprenv *env, int check, int *keep, struct err *e)
{
	struct strv p = {0};
	char *out = NULL;
	*keep = 0;
	if (splitpath(text, n, &p) < 0 || p.n < 2) {
		errf(e, "bad expression '${{%.*s}}': expected jobs.ID.output.PATH, inputs.KEY or env.NAME", (int)n, text);
	} else if (strcmp(p.v[0], "inputs") == 0) {
		const char *v = p.n == 2 ? setvalue(env->sets, p.v[1]) : NULL;
		if (p.n != 2)
			errf(e, "bad expression: inputs.%s.%s: inputs have no fields", p.v[1], p.v[2]);
		else if (!v)
			errf(e, "input '%s' is not set (pass --set %s=VALUE)", p.v[1], p.v[1]);
		else
			out = xstrdup(v);
	} else if (strcmp(p.v[0], "env") == 0) {
		const char *v = p.n == 2 && !sealed ? getenv(p.v[1]) : NULL;
		if (p.n == 2 && sealed)
			out = xstrdup(""), denied++;
		else if (p.n != 2)
			errf(e, "bad expression: env.%s.%s: environment variables have no fields", p.v[1], p.v[2]);
		else if (!v)
			errf(e, "environment variable %s is not set", p.v[1]);
		else
			out = xstrdup(v);
	} else if (strcmp(p.v[0], "jobs") == 0) {
		int many = p.n >= 3 && strcmp(p.v[2], "outputs") == 0;
		if (env->later)
			out = xstrdup(""), *keep = 1;
		else if (p.n < 3 || (strcmp(p.v[2], "output") != 0 && !many))
			errf(e, "bad expression: jobs.%s...: expected jobs.ID.output or jobs.ID.output.PATH", p.v[1]);
		else if (!env->needs || !inlist(env->needs, p.v[1]))
			errf(e, "expression refers to job '%s', which is not in this job's needs", p.v[1]);
		else if (env->groups && many && !inlist(env->groups, p.v[1]))
			errf(e, "jobs.%s.outputs: '%s' has no matrix; write jobs.%s.output", p.v[1], p.v[1], p.v[1]);
		else if (env->groups && !many && inlist(env->groups, p.v[1]))
			errf(e, "jobs.%s.output: '%s' is a matrix job; write jobs.%s.outputs (a map of its values to "
			        "their outputs)", p.v[1], p.v[1], p.v[1]);
		else if (check && !many && env->schema && schemapath(env->schema(env->ctx, p.v[1]), p.v[1], &p, 3, e) < 0)
			; /* e says why */
		else if (check || !env->output)
			out = xstrdup(""), *keep = !check;
		else {
			cJSON *v = many ? (env->outputs ? env->outputs(env->ctx, p.v[1]) : NULL) : env->output(env->ctx, p.v[1]);
			for (size_t i = 3; v && i < p.n; i++) {
				char *end;
				long idx = strtol(p.v[i], &end, 10);
				v = cJSON_IsArray(v) && !*end ? cJSON_GetArrayItem(v, (int)idx)
				                              : cJSON_GetObjectItemCaseSensitive(v, p.v[i]);
			}
			if (!v)
				errf(e, "jobs.%s.%s has no value at that path", p.v[1], p.v[2]);
			else
				out = cJSON_IsString(v) ? xstrdup(v->valuestring) : cJSON_PrintUnformatted(v);
		}
	} else if (strcmp(p.v[0], "matrix") == 0) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(env->matrix, p.v[1]);
		if (!env->matrix)
			errf(e, "matrix.%s: only a job with a matrix has matrix values", p.v[1]);
		else if (p.n != 2)
			errf(e, "bad expression: matrix.%s.%s: matrix values have no fields", p.v[1], p.v[2]);
		else if (!v)
			errf(e, "${{ matrix.%s }}: the matrix has no key '%s'", p.v[1], p.v[1]);
		else
			out = cJSON_IsString(v) ? xstrdup(v->valuestring) : cJSON_PrintUnformatted(v);
	} else {
		errf(e, "unknown expression root '%s' (jobs, inputs, env or matrix)", p.v[0]);
	}
	strvfree(&p);
	return out;
}

/* Whether an expression's value comes from a job's output: jobs.*, or a tainted matrix key. */
static int untrusted(const char *text, size_t n, const struct exprenv *env)
{
	struct strv p = {0};
	int bad = 1; /* what cannot be read is taken as untrusted */
	if (splitpath(text, n, &p) == 0 && p.n >= 2)
		bad = strcmp(p.v[0], "jobs") == 0 || (strcmp(p.v[0], "matrix") == 0 && inlist(env->tainted, p.v[1]));
	strvfree(&p);
	return bad;
}

/* Walk s, resolving each ${{ }}; builds the expansion when out is given. The text of a value goes
 * into out and the walk goes on after the expression in s: no value is scanned again. */
static int walk(const char *s, const struct exprenv *env, int check, struct buf *out, struct err *e)
{
	const char *p = s;
	if (env->taintat)
		*env->taintat = SIZE_MAX;
	for (;;) {
		const char *open = strstr(p, "${{");
		if (!open) {
			if (out)
				bufputs(out, p);
			return 0;
		}
		const char *close = strstr(open + 3, "}}");
		if (!close)
			return errf(e, "'${{' without a closing '}}'");
		if (out)
			bufadd(out, p, open - p);
		int keep;
		char *v = resolve(open + 3, close - open - 3, env, check, &keep, e);
		if (!v)
			return -1;
		if (out && !keep && env->taintat && *env->taintat == SIZE_MAX && untrusted(open + 3, close - open - 3, env))
			*env->taintat = out->len;
		if (out)
			keep ? bufadd(out, open, close + 2 - open) : bufputs(out, v);
		free(v);
		p = close + 2;
	}
}

int exprcheck(const char *s, const struct exprenv *env, struct err *e)
{
	return walk(s, env, 1, NULL, e);
}

char *exprexpand(const char *s, const struct exprenv *env, struct err *e)
{
	struct buf b = {0};
	if (walk(s, env, 0, &b, e) < 0) {
		buffree(&b);
		return NULL;
	}
	return b.data ? b.data : xstrdup("");
}
