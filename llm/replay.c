/* replay: a job's model replies served from its recorded events instead of the network. */
#include <stdlib.h>
#include <string.h>
#include "../artifacts/events.h"
#include "llm.h"

static int replaycomplete(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x,
                          struct err *e);

int llmreplayopen(struct llm **l, const struct model *m, const char *events, int live, struct secrets *sec,
                  struct err *e)
{
	int rc;
	*l = NULL;
	if (live)
		rc = llmopen(l, m, sec, e);
	else
		rc = llmwire(l, m, 1, e);
	if (rc < 0)
		return -1;
	(*l)->model = m;
	(*l)->sec = sec;
	(*l)->canlive = live;
	(*l)->recorded = replaycomplete;
	if (evropen(&(*l)->record, events, e) < 0) {
		llmclose(*l);
		*l = NULL;
		return errctx(e, "the record of model '%s'", m->name);
	}
	return 0;
}

/* The next event of the given type into *ev: 1, 0 at the end of the record (*ev NULL), -1 when the
 * record cannot be read. */
static int nextof(struct evreader *r, const char *type, cJSON **ev, struct err *e)
{
	const char *line;
	size_t len;
	int rc;
	*ev = NULL;
	while ((rc = evrnext(r, &line, &len, e)) == 1) {
		cJSON *o = cJSON_ParseWithLength(line, len);
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "type"));
		if (t && strcmp(t, type) == 0) {
			*ev = o;
			return 1;
		}
		cJSON_Delete(o);
	}
	return rc;
}

/* Serve the recorded reply of the next turn, whatever the request holds: a replay goes by turns,
 * and its steps are judged by their effects afterwards (artifacts/diff.h), not by the bytes the
 * tools printed into the conversation. 1 when the live model must answer instead (the record has
 * no more replies, or its reply was an error, and canlive is set). No more replies without live
 * is an error with code 4. */
static int replaycomplete(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x,
                          struct err *e)
{
	int turn = l->turns + 1;
	cJSON *req = NULL, *resp = NULL;
	int rc = nextof(l->record, "model_request", &req, e);
	if (rc == 1)
		rc = nextof(l->record, "model_response", &resp, e);
	if (rc < 0) { /* a record that cannot be read is no record that ended: never the live model */
		cJSON_Delete(req);
		return errctx(e, "turn %d: the record of model '%s'", turn, l->model->name);
	}
	rc = 0;
	char digest[65] = "";
	if (llmdigest(l, c, digest, e) < 0)
		rc = -1;
	else if (!resp)
		rc = errc(e, ERR_VERIFY, "divergence at turn %d: the record has no more model replies", turn);
	if (rc < 0 && e->kind == ERR_VERIFY && l->canlive) {
		l->live = 1;
		cJSON_Delete(req);
		cJSON_Delete(resp);
		return 1;
	}
	const char *failed = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(resp, "error"));
	if (rc == 0 && failed && l->canlive) {
		/* The night failed here; the live model gets to finish it. */
		l->live = 1;
		cJSON_Delete(req);
		cJSON_Delete(resp);
		return 1;
	}
	if (rc == 0) {
		cJSON *body = cJSON_GetObjectItemCaseSensitive(resp, "response");
		cJSON *status = cJSON_GetObjectItemCaseSensitive(resp, "status");
		cJSON *attempts = cJSON_GetObjectItemCaseSensitive(resp, "attempts");
		memcpy(x->digest, digest, sizeof digest);
		x->status = cJSON_IsNumber(status) ? (int)status->valuedouble : 0;
		x->attempts = cJSON_IsNumber(attempts) ? (int)attempts->valuedouble : 1;
		x->response = cJSON_Duplicate(body, 1);
		/* a refusal for the window, as recorded: the job lowers its window again as the night did */
		const cJSON *pw = cJSON_GetObjectItemCaseSensitive(resp, "provider_window");
		if (failed && cJSON_IsNumber(pw) && pw->valuedouble >= -1 && pw->valuedouble <= 1e8)
			x->window = (int64_t)pw->valuedouble;
		if (failed)
			rc = errf(e, "%s (as recorded)", failed);
		else if (!body || l->ops->parse(l, body, r, e) < 0)
			rc = errc(e, ERR_VERIFY, "turn %d: the recorded response cannot be read", turn);
	}
	cJSON_Delete(req);
	cJSON_Delete(resp);
	return rc;
}
