/* llm: open a provider, and the retry loop shared by every HTTP provider. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "http.h"
#include "llm.h"

int llmopen(struct llm **l, const struct model *m, struct secrets *sec, struct err *e)
{
	int rc;
	switch (m->provider) {
	case PROV_OPENAI: rc = openaiopen(l, m, e); break;
	case PROV_SCRIPTED: rc = scriptedopen(l, m, e); break;
	default: return errc(e, 2, "model '%s': provider not supported yet", m->name);
	}
	if (rc < 0)
		return -1;
	(*l)->model = m;
	if (m->api_key_env) {
		const char *key = getenv(m->api_key_env);
		if (!key || !*key) {
			llmclose(*l);
			*l = NULL;
			return errc(e, 2, "model '%s': environment variable %s (api_key_env) is not set", m->name,
			            m->api_key_env);
		}
		(*l)->apikey = xstrdup(key);
		secretsadd(sec, m->api_key_env, key);
	}
	return 0;
}

/* Whether a failed attempt may be retried, as the official SDKs decide. */
static int retryable(const struct httpresp *h)
{
	if (h->should_retry >= 0)
		return h->should_retry;
	if (h->status == 0)
		return 1; /* connection error or timeout */
	return h->status == 408 || h->status == 409 || h->status == 429 || h->status >= 500;
}

/* How long to wait before retry number n (0-based) in milliseconds. */
static int64_t backoff(const struct httpresp *h, int n)
{
	if (h->retry_ms > 0 && h->retry_ms <= 60000)
		return h->retry_ms;
	double s = 0.5 * (double)(1 << (n < 5 ? n : 5));
	if (s > 8)
		s = 8;
	unsigned r = 0;
	if (getrandom(&r, sizeof r, 0) < 0)
		r = 0;
	double jitter = 1.0 - 0.25 * ((double)(r % 10000) / 10000.0);
	return (int64_t)(s * jitter * 1000);
}

static void sleepms(int64_t ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&t, &t) < 0)
		;
}

/* The provider's own error message from an error body, when there is one. */
static const char *errmessage(const cJSON *body)
{
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(body, "error");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(err, "message");
	if (cJSON_IsString(msg))
		return msg->valuestring;
	if (cJSON_IsString(err))
		return err->valuestring;
	return NULL;
}

static int httpcomplete(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e)
{
	char *url = NULL;
	struct strv headers = {0};
	cJSON *body = NULL;
	if (l->ops->request(l, c, &url, &headers, &body, e) < 0)
		return -1;
	char *text = cJSON_PrintUnformatted(body);
	x->request = body;
	x->errors = cJSON_CreateArray();
	int rc = -1;
	int tries = l->model->retries + 1;
	for (int n = 0; n < tries; n++) {
		struct httpresp h;
		x->attempts = n + 1;
		httppost(url, (const char *const *)headers.v, text, 30000, l->model->timeout_ms, &h);
		x->status = h.status;
		cJSON *resp = h.status ? cJSON_Parse(h.body.data) : NULL;
		cJSON_Delete(x->response);
		x->response = resp;
		if (!resp && h.status) {
			x->response = cJSON_CreateObject();
			cJSON_AddStringToObject(x->response, "raw", h.body.len > 65536 ? "(over 64 KiB, not kept)" : h.body.data);
		}
		char why[1200];
		int again;
		if (h.status >= 200 && h.status < 300 && resp) {
			memset(r, 0, sizeof *r);
			if (l->ops->parse(l, resp, r, e) == 0) {
				rc = 0;
				httprespfree(&h);
				break;
			}
			llmreplyfree(r);
			snprintf(why, sizeof why, "unusable response: %s", e->msg);
			again = 1;
		} else if (h.status >= 200 && h.status < 300) {
			snprintf(why, sizeof why, "HTTP %d with a body that is not JSON", h.status);
			again = 1;
		} else if (h.status) {
			const char *m = resp ? errmessage(resp) : NULL;
			snprintf(why, sizeof why, "HTTP %d%s%s", h.status, m ? ": " : "", m ? m : "");
			again = retryable(&h);
		} else {
			snprintf(why, sizeof why, "%s", h.error);
			again = 1;
		}
		int64_t wait = again && n + 1 < tries ? backoff(&h, n) : 0;
		cJSON *fe = cJSON_CreateObject();
		cJSON_AddNumberToObject(fe, "attempt", n + 1);
		cJSON_AddNumberToObject(fe, "status", h.status);
		cJSON_AddStringToObject(fe, "error", why);
		cJSON_AddNumberToObject(fe, "wait_ms", (double)wait);
		cJSON_AddItemToArray(x->errors, fe);
		httprespfree(&h);
		if (!again || n + 1 == tries) {
			errf(e, "model '%s': %s%s", l->model->name, why,
			     again ? " (gave up after retries)" : "");
			break;
		}
		sleepms(wait);
	}
	free(text);
	free(url);
	strvfree(&headers);
	return rc;
}

int llmcomplete(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e)
{
	memset(r, 0, sizeof *r);
	memset(x, 0, sizeof *x);
	if (l->ops->complete)
		return l->ops->complete(l, c, r, x, e);
	return httpcomplete(l, c, r, x, e);
}

void llmclose(struct llm *l)
{
	if (!l)
		return;
	free(l->apikey);
	l->ops->free(l);
}

void llmreplyfree(struct llmreply *r)
{
	for (size_t i = 0; i < r->ncalls; i++) {
		free(r->calls[i].id);
		free(r->calls[i].name);
		free(r->calls[i].rawargs);
		cJSON_Delete(r->calls[i].args);
	}
	free(r->calls);
	free(r->text);
	free(r->finish_raw);
	memset(r, 0, sizeof *r);
}

void exchangefree(struct exchange *x)
{
	cJSON_Delete(x->request);
	cJSON_Delete(x->response);
	cJSON_Delete(x->errors);
	memset(x, 0, sizeof *x);
}

const char *finishname(enum finish f)
{
	static const char *const names[] = {"stop", "tool_calls", "length", "refusal", "other"};
	return names[f];
}
