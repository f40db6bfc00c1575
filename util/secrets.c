/* secrets: mask known values in any text before it is written or printed. */
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "secrets.h"

void secretsadd(struct secrets *s, const char *name, const char *value)
{
	if (!value || !*value)
		return;
	for (size_t i = 0; i < s->values.n; i++)
		if (strcmp(s->values.v[i], value) == 0)
			return;
	strvadd(&s->names, name);
	strvadd(&s->values, value);
	/* The JSON-escaped form, without its quotes, so escaped copies are found too. */
	cJSON *j = cJSON_CreateString(value);
	char *p = cJSON_PrintUnformatted(j);
	size_t n = strlen(p);
	p[n - 1] = 0;
	strvadd(&s->quoted, p + 1);
	free(p);
	cJSON_Delete(j);
}

void secretsenv(struct secrets *s, const struct strv *names)
{
	for (size_t i = 0; i < names->n; i++)
		secretsadd(s, names->v[i], getenv(names->v[i]));
}

/* How much of a value of n bytes is masked where it appears: all of it, or when text was cut
 * (output at its cap, a reason at its width), the first PREFIXMIN bytes or more. */
enum { PREFIXMIN = 8 };

static size_t prefixmin(size_t n)
{
	return n < PREFIXMIN ? n : PREFIXMIN;
}

/* Replace every occurrence of any secret, raw or in its JSON-escaped form, and every prefix of one
 * at least prefixmin long (what is left of it where the text was cut). Both forms are tried at
 * each place and the longest match wins: a value holding '"' or '\\' is masked whole in JSON text
 * too, not only up to the character JSON escapes. */
static void replaceall(const struct secrets *s, struct buf *out, const char *text)
{
	const struct strv *lists[] = {&s->values, &s->quoted};
	const char *p = text;
	while (*p) {
		size_t best = 0, which = 0;
		for (size_t l = 0; l < 2; l++)
			for (size_t i = 0; i < lists[l]->n; i++) {
				const char *v = lists[l]->v[i];
				size_t k = 0;
				while (v[k] && p[k] == v[k])
					k++;
				if (k > best && k >= prefixmin(strlen(v))) {
					best = k;
					which = i;
				}
			}
		if (best) {
			bufprintf(out, "[secret:%s]", s->names.v[which]);
			p += best;
		} else {
			bufputc(out, *p++);
		}
	}
}

char *secretsmask(const struct secrets *s, const char *text)
{
	if (!s || !s->values.n || !secretsfound(s, text))
		return NULL;
	struct buf a = {0};
	replaceall(s, &a, text);
	if (!a.data)
		a.data = xstrdup("");
	return a.data;
}

int secretsfound(const struct secrets *s, const char *text)
{
	if (!s)
		return 0;
	size_t n = strlen(text);
	for (size_t i = 0; i < s->values.n; i++) {
		const char *v = s->values.v[i], *q = s->quoted.v[i];
		if (memmem(text, n, v, prefixmin(strlen(v))) || memmem(text, n, q, prefixmin(strlen(q))))
			return 1;
	}
	return 0;
}

void secretsfree(struct secrets *s)
{
	strvfree(&s->names);
	strvfree(&s->values);
	strvfree(&s->quoted);
}
