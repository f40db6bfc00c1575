/* vertex: Anthropic models on Google Cloud Vertex AI (rawPredict).

   The body is the Messages API's without "model" and with anthropic_version
   "vertex-2023-10-16"; the model is in the path:
   /v1/projects/PROJECT/locations/REGION/publishers/anthropic/models/MODEL:rawPredict
   at https://REGION-aiplatform.googleapis.com (https://aiplatform.googleapis.com for
   region global). An OAuth access token (`gcloud auth print-access-token`) is read from
   the environment variable api_key_env names (GOOGLE_OAUTH_ACCESS_TOKEN by default) and
   sent as a bearer token; nightshift does no OAuth itself. Requests stream: the same body with
   stream: true to :streamRawPredict, answered with Anthropic's server-sent events. */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include "cloud.h"

static int request(struct llm *l, const struct chat *c, char **url, struct strv *headers, cJSON **body, struct err *e)
{
	const char *key = l->apikey;
	l->apikey = NULL; /* no x-api-key */
	int rc = anthropicops.request(l, c, url, headers, body, e);
	l->apikey = (char *)key;
	if (rc < 0)
		return -1;
	static const char *const theirs[] = {"x-api-key", "anthropic-version", NULL};
	cloudunheader(headers, theirs);
	cloudanthropic(*body, "vertex-2023-10-16");
	const struct model *m = l->model;
	char *def = strcmp(m->region, "global") == 0 ? xstrdup("https://aiplatform.googleapis.com")
	                                              : xasprintf("https://%s-aiplatform.googleapis.com", m->region);
	char *p = curl_easy_escape(NULL, m->project, 0), *r = curl_easy_escape(NULL, m->region, 0);
	char *md = curl_easy_escape(NULL, m->model, 0);
	/* '@' stays as the documentation writes it (claude-sonnet-4-5@20250929) */
	struct buf mm = {0};
	for (const char *s = md; s && *s; s++)
		if (strncmp(s, "%40", 3) == 0) {
			bufputc(&mm, '@');
			s += 2;
		} else {
			bufputc(&mm, *s);
		}
	char *path = xasprintf("/v1/projects/%s/locations/%s/publishers/anthropic/models/%s:rawPredict", p, r,
	                       mm.data ? mm.data : "");
	free(*url);
	*url = llmurl(m, def, path);
	free(path);
	buffree(&mm);
	curl_free(p);
	curl_free(r);
	curl_free(md);
	free(def);
	if (key) {
		char *h = xasprintf("Authorization: Bearer %s", key);
		strvadd(headers, h);
		free(h);
	}
	return 0;
}

static int parse(struct llm *l, const cJSON *body, struct llmreply *r, struct err *e)
{
	return anthropicops.parse(l, body, r, e);
}

static void vfree(struct llm *l)
{
	anthropicops.free(l);
}

/* Streamed: the body says stream: true and goes to :streamRawPredict, which answers with
 * Anthropic's server-sent events. */
static int stream(struct llm *l, cJSON *body, char **url)
{
	size_t n = strlen(*url), k = strlen(":rawPredict");
	if (n < k || strcmp(*url + n - k, ":rawPredict") != 0)
		return 0;
	char *s = xasprintf("%.*s:streamRawPredict", (int)(n - k), *url);
	free(*url);
	*url = s;
	return anthropicops.stream(l, body, url);
}

static cJSON *assemble(struct llm *l, const char *text, size_t len, int *status, struct err *e)
{
	return anthropicops.assemble(l, text, len, status, e);
}

static const struct llmops ops = {request, parse, NULL, vfree, stream, assemble, NULL};

int vertexopen(struct llm **l, const struct model *m, struct err *e)
{
	if (!m->project || !m->region)
		return errc(e, ERR_INPUT, "model '%s': provider vertex needs project and region", m->name);
	if (anthropicopen(l, m, e) < 0)
		return -1;
	(*l)->ops = &ops;
	return 0;
}
