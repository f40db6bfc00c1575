/* bedrock: Amazon Bedrock: Anthropic models through InvokeModel (api: chat, the default), or any
   model through the Converse API (api: converse, converse.c); signed with AWS SigV4 (sigv4.c, at each
   attempt: a retry gets a fresh x-amz-date).

   The body is the Messages API's without "model" and with anthropic_version
   "bedrock-2023-05-31"; the model id is in the path, /model/ID/invoke; the answer
   is a Messages response. Credentials come from the standard environment:
   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, for temporary ones,
   AWS_SESSION_TOKEN (sent as x-amz-security-token, signed too).
   The region is the model's `region`, else AWS_REGION, else AWS_DEFAULT_REGION.

   Requests stream: to /model/ID/invoke-with-response-stream (the answer: AWS event stream frames
   (evstream.c) of :event-type chunk, each {"bytes": base64 of one Messages API stream event}) or
   /model/ID/converse-stream (ConverseStream's events, converse.c). An exception frame is the
   answer's error, retried as the HTTP status of its class would be (throttlingException as 429). */
#include <curl/curl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include "cloud.h"
#include "sigv4.h"
#include "evstream.h"
#include "sse.h"

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

/* The streaming endpoint of the request's: invoke-with-response-stream, converse-stream. */
static int stream(struct llm *l, cJSON *body, char **url)
{
	(void)body;
	const char *plain = l->model->api == API_CONVERSE ? "/converse" : "/invoke";
	size_t n = strlen(*url), k = strlen(plain);
	if (n < k || strcmp(*url + n - k, plain) != 0)
		return 0;
	char *s = xasprintf("%s%s", *url, l->model->api == API_CONVERSE ? "-stream" : "-with-response-stream");
	free(*url);
	*url = s;
	return 1;
}

/* InvokeModelWithResponseStream's chunks, rewritten as the Messages API's server-sent events. */
struct chunks {
	struct buf sse;
	cJSON *error; /* an exception frame's error body, or NULL */
	int status;
	struct err *e;
};

static int onchunk(void *ctx, const struct evmsg *m)
{
	struct chunks *c = ctx;
	if (strcmp(m->msgtype, "event") != 0) {
		c->error = evstreamerror(m, &c->status);
		return 1;
	}
	if (strcmp(m->evtype, "chunk") != 0)
		return 0;
	cJSON *pl = cJSON_ParseWithLength((const char *)m->payload, m->plen);
	const char *b64 = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pl, "bytes"));
	size_t n = b64 ? strlen(b64) : 0;
	if (!b64 || n % 4 || n > EVFRAMEMAX) {
		cJSON_Delete(pl);
		return errf(c->e, "event stream: a chunk without its base64 bytes");
	}
	unsigned char *raw = xmalloc(n / 4 * 3 + 1);
	int got = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)n);
	if (got < 0) {
		free(raw);
		cJSON_Delete(pl);
		return errf(c->e, "event stream: a chunk whose bytes are not base64");
	}
	while (got > 0 && n && b64[n - 1] == '=') /* EVP_DecodeBlock counts the padding as bytes */
		got--, n--;
	/* one event: its JSON on data: lines (a line break inside it starts another data: line) */
	bufputs(&c->sse, "data: ");
	for (int i = 0; i < got; i++) {
		if (raw[i] == '\n' || raw[i] == '\r')
			bufputs(&c->sse, "\ndata: ");
		else
			bufputc(&c->sse, (char)raw[i]);
	}
	bufputs(&c->sse, "\n\n");
	free(raw);
	cJSON_Delete(pl);
	return 0;
}

static cJSON *assemble(struct llm *l, const char *text, size_t len, int *status, struct err *e)
{
	*status = 0;
	if (ssebody(text, len)) /* a proxy that speaks the Messages API's own stream */
		return l->model->api == API_CONVERSE ? (errf(e, "server-sent events where an event stream was asked for"), NULL)
		                                     : anthropicops.assemble(l, text, len, status, e);
	if (l->model->api == API_CONVERSE)
		return converseops.assemble(l, text, len, status, e);
	struct chunks c = {.e = e};
	bufputs(&c.sse, "");
	int rc = evstreameach((const unsigned char *)text, len, onchunk, &c, e);
	cJSON *out = NULL;
	if (c.error) {
		out = c.error;
		*status = c.status;
	} else if (rc == 0) {
		out = anthropicops.assemble(l, c.sse.data, c.sse.len, status, e);
	}
	buffree(&c.sse);
	return out;
}

static const struct llmops ops = {request, parse, NULL, bfree, stream, assemble, NULL};

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
