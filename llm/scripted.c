/* scripted: the built-in model; answers each turn with the next reply of its list. */
#include <stdlib.h>
#include <string.h>
#include "llm.h"

struct scripted {
	struct llm base;
};

/* A scripted reply, {text?, tool_calls?}, as a model reply; ids follow the turn number. */
static int parse(struct llm *l, const cJSON *reply, struct llmreply *r, struct err *e)
{
	(void)e;
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(reply, "text"));
	r->text = text ? xstrdup(text) : NULL;
	const cJSON *calls = cJSON_GetObjectItem(reply, "tool_calls"), *tc;
	size_t n = cJSON_GetArraySize(calls);
	r->calls = n ? xcalloc(n, sizeof *r->calls) : NULL;
	cJSON_ArrayForEach(tc, calls)
	{
		struct llmcall *call = &r->calls[r->ncalls];
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(tc, "id"));
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(tc, "name"));
		const cJSON *args = cJSON_GetObjectItem(tc, "arguments");
		call->id = id ? xstrdup(id) : xasprintf("call_%d_%zu", l->turns + 1, r->ncalls + 1);
		call->name = xstrdup(name ? name : "");
		call->args = args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject();
		call->rawargs = cJSON_PrintUnformatted(call->args);
		r->ncalls++;
	}
	r->finish = r->ncalls ? FINISH_TOOLS : FINISH_STOP;
	r->finish_raw = xstrdup(finishname(r->finish));
	return 0;
}

static int complete(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e)
{
	(void)c;
	const cJSON *reply = cJSON_GetArrayItem(l->model->replies, l->turns);
	x->attempts = 1;
	if (!reply)
		return errf(e, "model '%s': the scripted replies ran out after %d turns", l->model->name, l->turns);
	x->response = cJSON_Duplicate(reply, 1);
	return parse(l, reply, r, e);
}

static void sfree(struct llm *l)
{
	free(l);
}

static const struct llmops ops = {NULL, parse, complete, sfree, NULL, NULL, NULL};

int scriptedopen(struct llm **l, const struct model *m, struct err *e)
{
	if (!cJSON_IsArray(m->replies))
		return errc(e, ERR_INPUT, "model '%s': scripted model without replies", m->name);
	struct scripted *s = xcalloc(1, sizeof *s);
	s->base.ops = &ops;
	s->base.model = m;
	*l = &s->base;
	return 0;
}
