/* llm: open a provider, and the retry loop shared by every HTTP provider. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <curl/curl.h>
#include "../util/jsonout.h"
#include "../util/utf8.h"
#include "gate.h"
#include "http.h"
#include "catalog.h"
#include "llm.h"
#include "sigv4.h"
#include "sse.h"
#include "evstream.h"
#include "../artifacts/events.h"

/* The key an official SDK would read when the manifest names none: only for the provider's own
 * endpoint, so a key is never sent to a base_url nobody gave it for. */
static const char *defaultkeyenv(const struct model *m)
{
	if (m->provider == PROV_AZURE)
		return "AZURE_OPENAI_API_KEY"; /* base_url is the user's own Azure resource */
	if (m->provider == PROV_VERTEX)
		return "GOOGLE_OAUTH_ACCESS_TOKEN"; /* `gcloud auth print-access-token` */
	if (m->base_url)
		return NULL;
	return m->provider == PROV_OPENAI ? "OPENAI_API_KEY" : m->provider == PROV_ANTHROPIC ? "ANTHROPIC_API_KEY" : NULL;
}

cJSON *usagejson(const struct usage *u)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "input", (double)u->input);
	cJSON_AddNumberToObject(o, "output", (double)u->output);
	cJSON_AddNumberToObject(o, "cached", (double)u->cached);
	cJSON_AddNumberToObject(o, "reasoning", (double)u->reasoning);
	return o;
}

void usageread(const cJSON *o, struct usage *u)
{
	static const char *const keys[] = {"input", "output", "cached", "reasoning"};
	int64_t *f[] = {&u->input, &u->output, &u->cached, &u->reasoning};
	for (int k = 0; k < 4; k++) {
		double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, keys[k]));
		*f[k] = v == v && v >= 0 && v <= 1e15 ? (int64_t)v : 0;
	}
}

void usageadd(struct usage *a, const struct usage *b)
{
	a->input += b->input;
	a->output += b->output;
	a->cached += b->cached;
	a->reasoning += b->reasoning;
}

const char *llmkeyenv(const struct model *m)
{
	return m->provider == PROV_SCRIPTED || m->provider == PROV_BEDROCK ? NULL : m->api_key_env ? m->api_key_env : defaultkeyenv(m);
}

const char *llmkeyproblem(const struct model *m)
{
	const char *env = llmkeyenv(m);
	const char *key = env ? getenv(env) : NULL;
	if (!env)
		return NULL;
	if (!key || !*key)
		return m->api_key_env ? "is not set (api_key_env)" : "is not set (name another with api_key_env)";
	for (const char *p = key; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return "holds a control character";
	return NULL;
}

int llmopen(struct llm **l, const struct model *m, struct secrets *sec, struct err *e)
{
	int rc = llmwire(l, m, 0, e);
	if (rc < 0)
		return -1;
	(*l)->model = m;
	(*l)->sec = sec;
	const char *env = llmkeyenv(m);
	if (env) {
		const char *key = getenv(env);
		const char *bad = llmkeyproblem(m);
		if (bad) {
			llmclose(*l);
			*l = NULL;
			return errc(e, ERR_INPUT, "model '%s': environment variable %s %s", m->name, env, bad);
		}
		(*l)->apikey = xstrdup(key);
		if (sec)
			secretsadd(sec, env, key);
	}
	return 0;
}

int llmretryable(int status, int shouldretry)
{
	if (shouldretry >= 0)
		return shouldretry;
	if (status == 0)
		return 1; /* connection error or timeout */
	return status == 408 || status == 409 || status == 429 || status >= 500;
}

int64_t llmbackoff(int64_t retryms, int n, double r01)
{
	if (retryms > 0 && retryms <= 60000)
		return retryms;
	double s = 0.5 * (double)(1 << (n < 5 ? n : 5));
	if (s > 8)
		s = 8;
	return (int64_t)(s * (1.0 - 0.25 * r01) * 1000);
}

static double random01(void)
{
	uint32_t r = 0;
	if (getrandom(&r, sizeof r, 0) != sizeof r)
		r = (uint32_t)nowms();
	return (double)r / 4294967296.0;
}

char *llmurl(const struct model *m, const char *def, const char *path)
{
	const char *base = m->base_url ? m->base_url : def;
	const char *q = strchr(base, '?');
	size_t n = q ? (size_t)(q - base) : strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	if (strncmp(path, "/v1/", 4) == 0 && n >= 3 && strncmp(base + n - 3, "/v1", 3) == 0)
		path += 3; /* base_url given as the SDKs take it, or ending in /v1 */
	struct buf u = {0};
	bufadd(&u, base, n);
	bufputs(&u, path);
	int first = !strchr(path, '?');
	if (q && q[1]) {
		bufputc(&u, first ? '?' : '&');
		bufputs(&u, q + 1);
		first = 0;
	}
	for (size_t i = 0; i < m->query.n; i++) {
		const char *kv = m->query.v[i], *eq = strchr(kv, '=');
		char *k = curl_easy_escape(NULL, kv, (int)(eq - kv)), *v = curl_easy_escape(NULL, eq + 1, 0);
		bufprintf(&u, "%c%s=%s", first ? '?' : '&', k ? k : "", v ? v : "");
		first = 0;
		curl_free(k);
		curl_free(v);
	}
	return u.data;
}


/* Sleep ms milliseconds, in short slices so an interrupt ends it. */
static void sleepms(int64_t ms)
{
	int64_t end = nowms() + ms;
	for (int64_t left = ms; left > 0 && !httpinterrupted(); left = end - nowms()) {
		int64_t step = left < 100 ? left : 100;
		struct timespec t = {step / 1000, (step % 1000) * 1000000};
		nanosleep(&t, NULL);
	}
}

void llminterrupt(void)
{
	httpinterrupt();
}

/* The provider's own error message from an error body ({"error": {"message", "type"}} on both
 * APIs, or {"error": "text"} on some compatible servers), written into out. */
static int errmessage(const cJSON *body, char *out, size_t n)
{
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(body, "error");
	const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, "message"));
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, "type"));
	if (!msg)
		msg = cJSON_GetStringValue(err);
	if (!msg)
		return 0;
	if (type && *type)
		snprintf(out, n, "%.700s (%.60s)", msg, type);
	else
		snprintf(out, n, "%.700s", msg);
	return 1;
}

/* The words that echo the key partly starred out, first: masking its prefix would hide the echo
 * (the key itself is left to secretsmask, which names it, unless there is no list of secrets). */
static void starred(const struct llm *l, char *msg, size_t cap)
{
	const char *key = l->apikey;
	size_t klen = key ? strlen(key) : 0;
	if (klen < 8)
		return;
	struct buf out = {0};
	int changed = 0;
	for (const char *p = msg; *p;) {
		size_t w = strcspn(p, " \t\n\"'`,;()[]{}");
		while (w > 1 && (p[w - 1] == '.' || p[w - 1] == ':'))
			w--; /* the sentence's full stop is not part of the key */
		if (w == 0) {
			bufputc(&out, *p++);
			continue;
		}
		size_t stars = 0, pre = 0, suf = 0;
		for (size_t i = 0; i < w; i++)
			stars += p[i] == '*';
		while (pre < w && pre < klen && p[pre] == key[pre])
			pre++;
		while (suf < w && suf < klen && p[w - 1 - suf] == key[klen - 1 - suf])
			suf++;
		if ((!l->sec && memmem(p, w, key, klen)) || (stars >= 3 && (pre >= 4 || suf >= 4))) {
			bufputs(&out, "[secret:api key]");
			changed = 1;
		} else {
			bufadd(&out, p, w);
		}
		p += w;
	}
	if (changed)
		snprintf(msg, cap, "%s", out.data);
	buffree(&out);
}

/* Mask secrets in an error message, the key itself, and any word that echoes the key partly
 * starred out ("sk-proj-****abcd", as OpenAI's 401 does). */
static void scrub(const struct llm *l, char *msg, size_t cap)
{
	starred(l, msg, cap);
	char *m = secretsmask(l->sec, msg);
	if (m) {
		snprintf(msg, cap, "%s", m);
		free(m);
	}
}

/* A body as sent: compact JSON, and only UTF-8, which is all the APIs take (tool output may hold
 * any bytes; invalid ones become U+FFFD). */
static char *wiretext(struct llm *l, const cJSON *body, size_t hint)
{
	/* printed into a buffer the size of the last body and some, not grown from 256 bytes */
	char *raw;
	if (l->ops->text) {
		raw = l->ops->text(l, body, hint);
	} else {
		struct buf b = {0};
		bufgrow(&b, hint + hint / 4 + 4096);
		jsonout(&b, body);
		raw = b.data;
	}
	size_t n = strlen(raw);
	if (utf8valid(raw, n))
		return raw; /* the usual case: no second copy */
	char *text = utf8clean(raw, n);
	free(raw);
	return text;
}

/* The text of body asking for a stream (the members the client's stream op adds, printed into
 * text, which is body as sent, before its closing brace), or NULL when it has no stream here. The
 * body is left as it was: the record and the digest are of the request, streamed or not. */
static char *streamed(struct llm *l, cJSON *body, const char *text, char **url)
{
	cJSON *last = body->child ? body->child->prev : NULL; /* cJSON keeps the last item there */
	int on = l->ops->stream(l, body, url);
	struct buf b = {0};
	size_t len = strlen(text);
	if (on && len >= 2 && text[len - 1] == '}') {
		bufgrow(&b, len + 256);
		bufadd(&b, text, len - 1);
		for (const cJSON *m = last ? last->next : body->child; m; m = m->next) {
			if (b.len > 1)
				bufputc(&b, ',');
			jsonout(&b, &(cJSON){.type = cJSON_String, .valuestring = m->string}); /* the key */
			bufputc(&b, ':');
			jsonout(&b, m);
		}
		bufputc(&b, '}');
	}
	for (cJSON *m; (m = last ? last->next : body->child);)
		cJSON_Delete(cJSON_DetachItemViaPointer(body, m));
	return b.data;
}

/* The neutral chat as one JSON value, for the digest of a local provider's request. */
static cJSON *neutral(const struct chat *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "system", c->system ? c->system : "");
	cJSON_AddItemToObject(o, "tools", c->tools ? cJSON_Duplicate(c->tools, 1) : cJSON_CreateArray());
	cJSON_AddItemToObject(o, "messages", c->messages ? cJSON_Duplicate(c->messages, 1) : cJSON_CreateArray());
	return o;
}

static cJSON *answerparse(struct llm *l, struct httpresp *h, struct exchange *x, char *bad, size_t badsize);

/* An attempt's answer as a body: a stream assembled into the provider's plain shape, JSON parsed,
 * or NULL (no answer, one that is neither, or one the record could not hold); *bad says why. The
 * record prints it escaped: raw control bytes in its strings (cJSON takes them) print six times
 * their size, so 15 MiB of them made a 90 MiB event line, which the log refuses. */
static cJSON *answerbody(struct llm *l, struct httpresp *h, struct exchange *x, char *bad, size_t badsize)
{
	cJSON *resp = answerparse(l, h, x, bad, badsize);
	size_t printed = resp ? jsonoutlen(resp) : 0;
	if (printed > HTTPBODYMAX) {
		snprintf(bad, badsize, "the answer takes %zu MiB escaped for the record, past %zu MiB", printed >> 20,
		         (size_t)HTTPBODYMAX >> 20);
		cJSON_Delete(resp);
		return NULL;
	}
	return resp;
}

static cJSON *answerparse(struct llm *l, struct httpresp *h, struct exchange *x, char *bad, size_t badsize)
{
	bad[0] = 0;
	if (!h->status)
		return NULL;
	/* a stream is known by its Content-Type, or by its first bytes when a proxy says otherwise */
	if (l->ops->assemble && (h->stream || ssebody(h->body.data, h->body.len) ||
	                         evstreamlike((const unsigned char *)h->body.data, h->body.len))) {
		struct err ae = {0};
		int status = 0;
		cJSON *resp = l->ops->assemble(l, h->body.data, h->body.len, &status, &ae);
		x->streamed = 1;
		if (!resp)
			snprintf(bad, badsize, "%.290s", ae.msg);
		else if (status && h->status >= 200 && h->status < 300)
			h->status = status; /* an error in the stream: retried (or not) as its class is */
		return resp;
	}
	x->streamed = 0;
	struct err je = {0};
	cJSON *resp = jsonbparse(h->body.data, h->body.len, &je); /* within the JSON budget */
	if (!resp && je.msg[0])
		snprintf(bad, badsize, "%.290s", je.msg);
	return resp;
}

/* Send the chat, retrying transient failures for up to the model's retry_for (and at most its
 * retries, when set); x records the last attempt and every failure. */
static int httpcomplete(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e)
{
	const struct model *md = l->model;
	struct llmreq own = {0}, *q = c->req && c->req->text ? c->req : &own;
	if (q == &own && llmprepare(l, c, q, e) < 0)
		return errctx(e, "model '%s'", md->name);
	/* The request as prepared is taken, not copied: it is sent once. */
	char *url = q->url, *text = q->text;
	struct strv headers = q->headers;
	cJSON *body = q->body;
	memcpy(x->digest, q->digest, sizeof x->digest);
	memset(q, 0, sizeof *q);
	for (size_t i = 0; i < md->headers.n; i++)
		strvadd(&headers, md->headers.v[i]);
	/* The stream switch goes on what is sent, not into the digest or the record: a request is the
	 * same request streamed or not, and a replay matches it either way. */
	char *sent = NULL, *streamurl = NULL;
	if (l->ops->stream && !l->plain) {
		streamurl = xstrdup(url);
		sent = streamed(l, body, text, &streamurl);
	}
	x->request = body;
	x->errors = cJSON_CreateArray();
	int64_t total = md->timeout_ms > 0 ? md->timeout_ms : 600000;
	int64_t connect = l->model->connect_timeout_ms > 0 ? l->model->connect_timeout_ms : total < 10000 ? total : 10000;
	int64_t start = nowms(), until = start + md->retry_for_ms;
	/* The job's timeout bounds the whole exchange: each attempt, each wait, the retries. */
	int jobbound = c->deadline && c->deadline < until;
	if (jobbound)
		until = c->deadline;
	int rc = -1, tries = md->retries >= 0 ? md->retries + 1 : 0; /* 0: as many as retry_for allows */
	for (int n = 0;; n++) {
		struct httpresp h;
		x->attempts = n + 1;
		if (n && l->onattempt)
			l->onattempt(l->retryctx, n + 1);
		if (l->gate && gateenter(l->gate, c->deadline) < 0) {
			errf(e, "model '%s': %s while waiting for its turn", md->name,
			     httpinterrupted() ? "interrupted" : "the job's timeout ran out");
			break;
		}
		int64_t cut = c->deadline ? c->deadline - nowms() : total;
		if (cut < 1)
			cut = 1;
		/* The watchdog needs a stream: a plain answer is silent until it is whole. */
		struct httpopts ho = {connect < cut ? connect : cut, total < cut ? total : cut,
		                      sent ? md->idle_timeout_ms : 0, l->aws};
		httpsend(sent ? streamurl : url, (const char *const *)headers.v, sent ? sent : text, &ho, &h);
		char bad[300];
		cJSON *resp = answerbody(l, &h, x, bad, sizeof bad); /* before the gate: a stream may say 429 */
		if (l->gate) {
			/* told to slow down: every job on this model waits, not only this one (the hold is set
			 * before the place is given up, so that no waiting job slips through between) */
			if ((h.status == 429 || h.status == 529 || h.status == 503) && h.retry_ms > 0 && h.retry_ms <= 60000)
				gatehold(l->gate, h.retry_ms);
			else if (h.status == 429 || h.status == 529)
				gatehold(l->gate, llmbackoff(-1, n, 0));
			gateleave(l->gate);
		}
		x->status = h.status;
		cJSON_Delete(x->response);
		x->response = resp;
		if (!resp && h.status) {
			x->response = cJSON_CreateObject();
			cJSON_AddStringToObject(x->response, "raw", h.body.len > 65536 ? "(over 64 KiB, not kept)"
			                        : memchr(h.body.data, 0, h.body.len) ? "(binary, not kept)" : h.body.data);
		}
		char why[900], msg[800];
		int again;
		int64_t window = 0;
		if (h.status >= 200 && h.status < 300 && resp) {
			memset(r, 0, sizeof *r);
			int parsed = l->ops->parse(l, resp, r, e) == 0;
			if (parsed && r->ncalls > LLMCALLSMAX) {
				errf(e, "%zu tool calls in one reply, more than %d", r->ncalls, LLMCALLSMAX);
				parsed = 0;
			}
			if (parsed) {
				/* a server that answered a stream with a plain reply does not stream: asked plainly
				 * from now on (an error in a 200, a proxy's page, is no such answer) */
				if (sent && !x->streamed)
					l->plain = 1;
				rc = 0;
				httprespfree(&h);
				break;
			}
			llmreplyfree(r);
			/* A 2xx that is not a reply (a proxy's page, an error in a 200) counts as transient. */
			if (errmessage(resp, msg, sizeof msg))
				snprintf(why, sizeof why, "HTTP %d with an error: %s", h.status, msg);
			else
				snprintf(why, sizeof why, "HTTP %d with an unusable reply: %.700s", h.status, e->msg);
			again = 1;
		} else if (h.status >= 200 && h.status < 300) {
			if (bad[0])
				snprintf(why, sizeof why, "HTTP %d with a %s that could not be read: %.700s", h.status,
				         x->streamed ? "stream" : "body", bad);
			else
				snprintf(why, sizeof why, "HTTP %d with a body that is not JSON", h.status);
			again = 1;
		} else if (h.status) {
			int has = resp && errmessage(resp, msg, sizeof msg);
			snprintf(why, sizeof why, "HTTP %d%s%s", h.status, has ? ": " : "", has ? msg : "");
			window = llmwindowerror(h.status, resp);
			again = !window && llmretryable(h.status, h.should_retry);
		} else if (h.interrupted) {
			snprintf(why, sizeof why, "interrupted");
			again = 0;
		} else {
			snprintf(why, sizeof why, "%s%s", h.timeout ? "timed out: " : h.idle ? "" : "no response: ", h.error);
			again = 1;
		}
		scrub(l, why, sizeof why);
		int64_t wait = llmbackoff(h.retry_ms, n, random01());
		int64_t left = until - nowms() - wait;
		int more = again && (tries ? n + 1 < tries : 1) && left >= 0;
		int64_t next = wait; /* the wait that would have come: told when it is what ends the retries */
		/* the wait is the server's only when llmbackoff took its retry-after (within 60 s) */
		int hinted = h.retry_ms > 0 && h.retry_ms <= 60000;
		char asked[96] = "";
		if (hinted)
			snprintf(asked, sizeof asked, " as the server's retry-after asked");
		else if (h.retry_ms > 60000)
			snprintf(asked, sizeof asked, ", the backoff's: the server's retry-after (%llds) is past 60s",
			         (long long)(h.retry_ms / 1000));
		if (!more)
			wait = 0;
		cJSON *fe = cJSON_CreateObject();
		cJSON_AddNumberToObject(fe, "attempt", n + 1);
		cJSON_AddNumberToObject(fe, "status", h.status);
		cJSON_AddStringToObject(fe, "error", why);
		if (h.retry_ms >= 0)
			cJSON_AddNumberToObject(fe, "retry_after_ms", (double)h.retry_ms);
		if (h.idle)
			cJSON_AddTrueToObject(fe, "idle");
		cJSON_AddNumberToObject(fe, "wait_ms", (double)wait);
		cJSON_AddItemToArray(x->errors, fe);
		httprespfree(&h);
		if (!more) {
			if (h.interrupted)
				errf(e, "model '%s': interrupted", md->name);
			else if (window) {
				x->window = window;
				errf(e, "model '%s': %s (the request does not fit the model's context window)", md->name, why);
			} else if (!again)
				errf(e, "model '%s': %s (not retried)", md->name, why);
			else if (n == 0 && tries == 1)
				errf(e, "model '%s': %s (retries: 0)", md->name, why);
			else if (tries && n + 1 == tries)
				errf(e, "model '%s': %s (gave up after %d attempts)", md->name, why, n + 1);
			else if (jobbound)
				errf(e, "model '%s': %s (gave up after %d attempts in %llds: the job's timeout ran out)", md->name,
				     why, n + 1, (long long)((nowms() - start) / 1000));
			else
				errf(e, "model '%s': %s (gave up after %d attempt%s in %llds: retry_for %llds; the next wait, %.1fs%s, "
				     "would pass it)", md->name, why, n + 1, n ? "s" : "", (long long)((nowms() - start) / 1000),
				     (long long)(md->retry_for_ms / 1000), next / 1000.0, asked);
			break;
		}
		if (l->onretry) {
			struct llmretry lr = {n + 1, h.status, why, wait, left};
			l->onretry(l->retryctx, &lr);
		}
		sleepms(wait);
		x->waited_ms += wait;
		if (httpinterrupted()) {
			errf(e, "model '%s': interrupted while waiting to retry", md->name);
			break;
		}
	}
	free(sent);
	free(streamurl);
	free(text);
	free(url);
	strvfree(&headers);
	return rc;
}

int llmcomplete(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e)
{
	memset(r, 0, sizeof *r);
	memset(x, 0, sizeof *x);
	int rc = 1;
	if (l->recorded && !l->live)
		rc = l->recorded(l, c, r, x, e);
	if (rc == 1)
		rc = l->ops->complete ? l->ops->complete(l, c, r, x, e) : httpcomplete(l, c, r, x, e);
	l->turns++;
	if (!x->digest[0] && l->ops->complete)
		llmdigest(l, c, x->digest, NULL);
	if (rc < 0)
		scrub(l, e->msg, sizeof e->msg);
	return rc;
}

cJSON *llmbody(struct llm *l, const struct chat *c, struct err *e)
{
	char *url = NULL;
	struct strv headers = {0};
	cJSON *body = NULL;
	if (!l->ops->request)
		return NULL;
	if (l->ops->request(l, c, &url, &headers, &body, e) < 0) {
		cJSON_Delete(body);
		body = NULL;
	}
	free(url);
	strvfree(&headers);
	return body;
}

void llmreqfree(struct llmreq *q)
{
	free(q->url);
	strvfree(&q->headers);
	cJSON_Delete(q->body);
	free(q->text);
	memset(q, 0, sizeof *q);
}

int llmprepare(struct llm *l, const struct chat *c, struct llmreq *q, struct err *e)
{
	llmreqfree(q);
	if (l->ops->request) {
		l->textonly = 1;
		int rc = l->ops->request(l, c, &q->url, &q->headers, &q->body, e);
		l->textonly = 0;
		if (rc < 0) {
			llmreqfree(q);
			return -1;
		}
	} else {
		q->body = neutral(c);
	}
	q->text = wiretext(l, q->body, l->lastlen);
	q->len = strlen(q->text);
	l->lastlen = q->len;
	sha256growhex(&l->sent, q->text, q->len, q->digest);
	if (!l->ops->request) {
		cJSON_Delete(q->body); /* a local provider sends no body */
		q->body = NULL;
	}
	return 0;
}

int llmdigest(struct llm *l, const struct chat *c, char out[65], struct err *e)
{
	if (c->req && c->req->digest[0]) {
		memcpy(out, c->req->digest, 65);
		return 0;
	}
	struct err ignored;
	cJSON *body = l->ops->request ? llmbody(l, c, e ? e : &ignored) : neutral(c);
	if (!body)
		return -1;
	char *text = wiretext(l, body, l->lastlen);
	sha256hex(text, strlen(text), out);
	free(text);
	cJSON_Delete(body);
	return 0;
}

void llmclose(struct llm *l)
{
	if (!l)
		return;
	sigv4free(l->aws);
	evrclose(l->record);
	cJSON_Delete(l->keptsrc);
	cJSON_Delete(l->keptwire);
	buffree(&l->kepttext);
	free(l->keptend);
	sha256growfree(&l->sent);
	free(l->sentsystem);
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
	cJSON_Delete(r->carry);
	cJSON_Delete(r->thinking);
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
	static const char *const names[] = {"stop", "tool_calls", "length", "refusal", "other", "context"};
	return names[f];
}
