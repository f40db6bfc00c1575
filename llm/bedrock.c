/* bedrock: Amazon Bedrock: Anthropic models through InvokeModel (api: chat, the default), or any
   model through the Converse API (api: converse, converse.c); signed with AWS SigV4 (sigv4.c, at each
   attempt: a retry gets a fresh x-amz-date).

   The body is the Messages API's without "model" and with anthropic_version
   "bedrock-2023-05-31"; the model id is in the path, /model/ID/invoke; the answer
   is a Messages response. Credentials come from the standard environment:
   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, for temporary ones,
   AWS_SESSION_TOKEN (sent as x-amz-security-token, signed too).
   The region is the model's `region`, else AWS_REGION, else AWS_DEFAULT_REGION. */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include "cloud.h"
#include "sigv4.h"

static const struct llmops *inner(const struct llm *l)
{
	return l->model->api == API_CONVERSE ? &converseops : &anthropicops;
}

static int request(struct llm *l, const struct chat *c, char **url, struct strv *headers, cJSON **body, struct err *e)
{
	const struct model *m = l->model;
	if (inner(l)->request(l, c, url, headers, body, e) < 0)
		return -1;
	static const char *const theirs[] = {"x-api-key", "anthropic-version", NULL};
	cloudunheader(headers, theirs);
	if (m->api != API_CONVERSE)
		cloudanthropic(*body, "bedrock-2023-05-31");
	char *def = xasprintf("https://bedrock-runtime.%s.amazonaws.com", l->aws->region);
	char *id = curl_easy_escape(NULL, m->model, 0), *path = xasprintf("/model/%s/%s", id ? id : "", m->api == API_CONVERSE ? "converse" : "invoke");
	free(*url);
	*url = llmurl(m, def, path);
	curl_free(id);
	free(path);
	free(def);
	strvadd(headers, "Accept: application/json");
	return 0;
}

static int parse(struct llm *l, const cJSON *body, struct llmreply *r, struct err *e)
{
	return inner(l)->parse(l, body, r, e);
}

static void bfree(struct llm *l)
{
	inner(l)->free(l);
}

static const struct llmops ops = {request, parse, NULL, bfree, NULL, NULL};

int bedrockopen(struct llm **l, const struct model *m, int offline, struct err *e)
{
	const char *id = getenv("AWS_ACCESS_KEY_ID"), *secret = getenv("AWS_SECRET_ACCESS_KEY");
	const char *region = m->region ? m->region : getenv("AWS_REGION");
	if (!region || !*region)
		region = getenv("AWS_DEFAULT_REGION");
	if (offline) { /* replay: the bodies only, never sent */
		id = secret = "offline";
		if (!region || !*region)
			region = "offline";
	}
	if (!id || !*id || !secret || !*secret)
		return errc(e, ERR_INPUT, "model '%s': provider bedrock needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
		                  "AWS_SESSION_TOKEN for temporary credentials) in the environment", m->name);
	if (!region || !*region || strspn(region, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(region))
		return errc(e, ERR_INPUT, "model '%s': provider bedrock needs a region (region: us-east-1, or AWS_REGION)",
		            m->name);
	if ((m->api == API_CONVERSE ? converseopen(l, m, e) : anthropicopen(l, m, e)) < 0)
		return -1;
	(*l)->ops = &ops;
	(*l)->aws = sigv4new(id, secret, getenv("AWS_SESSION_TOKEN"), region, "bedrock");
	return 0;
}
