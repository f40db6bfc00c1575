/* scripted: the built-in model; answers each turn with the next reply of its list. */
#include <stdlib.h>
#include <string.h>
#include "llm.h"

struct scripted {
	struct llm base;
	int turn;
};

static int complete(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e)
{
	struct scripted *s = (struct scripted *)l;
	const cJSON *reply = cJSON_GetArrayItem(l->model->replies, s->turn);
	x->attempts = 1;
	x->request = cJSON_CreateObject();
	cJSON_AddNumberToObject(x->request, "turn", s->turn + 1);
	cJSON_AddNumberToObject(x->request, "messages", cJSON_GetArraySize(c->messages));
	if (!reply)
		return errf(e, "model '%s': the scripted replies ran out after %d turns", l->model->name, s->turn);
	x->response = cJSON_Duplicate(reply, 1);
	s->turn++;
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(reply, "text"));
	r->text = text ? xstrdup(text) : NULL;
	const cJSON *calls = cJSON_GetObjectItem(reply, "tool_calls"), *tc;
	size_t n = cJSON_GetArraySize(calls);
	r->calls = n ? xcalloc(n, sizeof *r->calls) : NULL;
	cJSON_ArrayForEach(tc, calls)
	{
		struct llmcall *call = &r->calls[r->ncalls];
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(tc, "id"));
		const cJSON *args = cJSON_GetObjectItem(tc, "arguments");
		call->id = id ? xstrdup(id) : xasprintf("call_%d_%zu", s->turn, r->ncalls + 1);
		call->name = xstrdup(cJSON_GetStringValue(cJSON_GetObjectItem(tc, "name")));
		call->args = args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject();
		call->rawargs = cJSON_PrintUnformatted(call->args);
		r->ncalls++;
	}
	r->finish = r->ncalls ? FINISH_TOOLS : FINISH_STOP;
	r->finish_raw = xstrdup(finishname(r->finish));
	return 0;
}

static void sfree(struct llm *l)
{
	free(l);
}

static const struct llmops ops = {NULL, NULL, complete, sfree};

int scriptedopen(struct llm **l, const struct model *m, struct err *e)
{
	if (!cJSON_IsArray(m->replies))
		return errc(e, 2, "model '%s': scripted model without replies", m->name);
	struct scripted *s = xcalloc(1, sizeof *s);
	s->base.ops = &ops;
	s->base.model = m;
	*l = &s->base;
	return 0;
}
