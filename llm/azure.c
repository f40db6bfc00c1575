/* azure: Azure OpenAI, chat completions or the Responses API, on the user's resource.

   Chat:      BASE/openai/deployments/DEPLOYMENT/chat/completions?api-version=V
   Responses: BASE/openai/responses?api-version=V, the deployment as the body's model.
   The body is OpenAI's (max_completion_tokens, never max_tokens: Azure's reasoning deployments
   refuse that too). The key goes in an api-key header; with auth: bearer the variable holds a
   Microsoft Entra ID token, sent as Authorization: Bearer (nightshift gets no token itself).
   Requests stream (stream: true) and are read as OpenAI's server-sent events. */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include "cloud.h"

#define CHATVERSION "2024-10-21"              /* the GA version of the data plane */
#define RESPONSESVERSION "2025-04-01-preview" /* the first that serves /openai/responses */

static const struct llmops *inner(const struct llm *l)
{
	return l->model->api == API_RESPONSES ? &responsesops : &openaiops;
}

static int request(struct llm *l, const struct chat *c, char **url, struct strv *headers, cJSON **body, struct err *e)
{
	const struct model *m = l->model;
	if (inner(l)->request(l, c, url, headers, body, e) < 0)
		return -1;
	static const char *const theirs[] = {"authorization", NULL};
	cloudunheader(headers, theirs);
	const char *v = m->api_version ? m->api_version : m->api == API_RESPONSES ? RESPONSESVERSION : CHATVERSION;
	char *ver = curl_easy_escape(NULL, v, 0), *dep = curl_easy_escape(NULL, m->deployment, 0), *path;
	if (m->api == API_RESPONSES) {
		path = xasprintf("/openai/responses?api-version=%s", ver);
		cJSON_ReplaceItemInObjectCaseSensitive(*body, "model", cJSON_CreateString(m->deployment));
	} else {
		path = xasprintf("/openai/deployments/%s/chat/completions?api-version=%s", dep, ver);
		cJSON *mt = cJSON_DetachItemFromObjectCaseSensitive(*body, "max_tokens");
		if (mt)
			cJSON_AddItemToObject(*body, "max_completion_tokens", mt);
	}
	free(*url);
	*url = llmurl(m, "", path);
	free(path);
	curl_free(ver);
	curl_free(dep);
	if (l->apikey) {
		char *h = m->bearer ? xasprintf("Authorization: Bearer %s", l->apikey) : xasprintf("api-key: %s", l->apikey);
		strvadd(headers, h);
		free(h);
	}
	return 0;
}

static int parse(struct llm *l, const cJSON *body, struct llmreply *r, struct err *e)
{
	return inner(l)->parse(l, body, r, e);
}

static void afree(struct llm *l)
{
	inner(l)->free(l);
}

/* Streams as OpenAI's do (chat: stream_options include_usage, which the GA version takes). */
static int stream(struct llm *l, cJSON *body, char **url)
{
	return inner(l)->stream(l, body, url);
}

static cJSON *assemble(struct llm *l, const char *text, size_t len, int *status, struct err *e)
{
	return inner(l)->assemble(l, text, len, status, e);
}

static char *text(struct llm *l, const cJSON *body, size_t hint)
{
	return inner(l)->text ? inner(l)->text(l, body, hint) : cJSON_PrintUnformatted(body);
}

static const struct llmops ops = {request, parse, NULL, afree, stream, assemble, text};

int azureopen(struct llm **l, const struct model *m, struct err *e)
{
	if (!m->base_url || !m->deployment)
		return errc(e, ERR_INPUT, "model '%s': provider azure-openai needs base_url and deployment", m->name);
	if ((m->api == API_RESPONSES ? responsesopen(l, m, e) : openaiopen(l, m, e)) < 0)
		return -1;
	(*l)->ops = &ops;
	return 0;
}
