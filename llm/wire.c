/* wire: the pieces the providers' wire formats share. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "../util/jsonb.h"
#include "wire.h"

int64_t wirecount(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	return cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 1e15 ? (int64_t)v->valuedouble : 0;
}

int wireblank(const char *s)
{
	for (; s && *s; s++)
		if (!isspace((unsigned char)*s))
			return 0;
	return 1;
}

char *wireargs(const cJSON *args, const char *none)
{
	return cJSON_IsString(args) ? xstrdup(args->valuestring) : args ? cJSON_PrintUnformatted(args) : xstrdup(none);
}

void wirecall(struct llmreply *r, const char *id, const char *name, char *rawargs)
{
	struct llmcall *c = &r->calls[r->ncalls++];
	c->id = xstrdup(id);
	c->name = xstrdup(name);
	c->rawargs = rawargs;
	struct err je;
	c->args = jsonbparse(rawargs, strlen(rawargs), &je);
	if (c->args && !cJSON_IsObject(c->args)) {
		cJSON_Delete(c->args);
		c->args = NULL;
	}
}

void wirecut(struct llmreply *r)
{
	if ((r->finish == FINISH_LENGTH || r->finish == FINISH_CONTEXT) && r->ncalls) {
		cJSON_Delete(r->calls[r->ncalls - 1].args);
		r->calls[r->ncalls - 1].args = NULL;
	}
}

cJSON *wirelast(cJSON *msgs, const char *role)
{
	cJSON *last = cJSON_GetArrayItem(msgs, cJSON_GetArraySize(msgs) - 1);
	const char *lr = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(last, "role"));
	if (!last || !lr || strcmp(lr, role) != 0) {
		last = cJSON_CreateObject();
		cJSON_AddStringToObject(last, "role", role);
		cJSON_AddArrayToObject(last, "content");
		cJSON_AddItemToArray(msgs, last);
	}
	return cJSON_GetObjectItemCaseSensitive(last, "content");
}

cJSON *wiretool(cJSON *w, const cJSON *t)
{
	const cJSON *desc = cJSON_GetObjectItem(t, "description"), *params = cJSON_GetObjectItem(t, "parameters");
	cJSON_AddItemToObject(w, "name", cJSON_Duplicate(cJSON_GetObjectItem(t, "name"), 1));
	if (cJSON_IsString(desc) && *desc->valuestring)
		cJSON_AddItemToObject(w, "description", cJSON_Duplicate(desc, 1));
	if (cJSON_IsObject(params))
		return cJSON_Duplicate(params, 1);
	cJSON *s = cJSON_CreateObject();
	cJSON_AddStringToObject(s, "type", "object");
	return s;
}

struct llm *wirenew(size_t size, const struct llmops *ops, const struct model *m)
{
	struct llm *l = xcalloc(1, size);
	l->ops = ops;
	l->model = m;
	return l;
}

void wirefree(struct llm *l)
{
	free(l);
}

void wirebearer(const struct llm *l, struct strv *headers)
{
	if (!l->apikey)
		return;
	char *h = xasprintf("Authorization: Bearer %s", l->apikey);
	strvadd(headers, h);
	free(h);
}
