/* http: libcurl easy interface, one request at a time. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <signal.h>
#include <curl/curl.h>
#include "http.h"
#include "sigv4.h"
#include "../util/cancel.h"

void httpinterrupt(void)
{
	cancelnow();
}

int httpinterrupted(void)
{
	return cancelled;
}

/* One transfer's state for the callbacks. */
struct xfer {
	struct httpresp *r;
	int64_t idle_ms, last; /* the watchdog's bound, and when the last byte came (monotonic ms) */
};

/* Called by libcurl about once a second and on every chunk: abort when interrupted, or when no
 * byte came for the idle time. */
static int onprogress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct xfer *x = ud;
	(void)dt, (void)dn, (void)ut, (void)un;
	if (cancelled)
		return 1;
	if (x->idle_ms > 0 && nowms() - x->last >= x->idle_ms) {
		x->r->idle = 1;
		return 1;
	}
	return 0;
}

static size_t onbody(char *p, size_t sz, size_t n, void *ud)
{
	struct xfer *x = ud;
	struct buf *b = &x->r->body;
	x->last = nowms();
	if (b->len + sz * n > HTTPBODYMAX) {
		x->r->toolarge = 1; /* refused: a model's answer is never this long */
		return 0;
	}
	bufadd(b, p, sz * n);
	return sz * n;
}

/* Parse the retry headers the official SDKs honour. */
static size_t onheader(char *p, size_t sz, size_t n, void *ud)
{
	struct xfer *x = ud;
	struct httpresp *r = x->r;
	size_t len = sz * n;
	x->last = nowms();
	char line[512];
	if (len >= sizeof line)
		return len;
	memcpy(line, p, len);
	line[len] = 0;
	char *colon = strchr(line, ':');
	if (!colon)
		return len;
	*colon = 0;
	char *v = colon + 1;
	while (*v == ' ')
		v++;
	v[strcspn(v, "\r\n")] = 0;
	if (strcasecmp(line, "retry-after-ms") == 0) {
		char *end;
		double ms = strtod(v, &end);
		if (end != v && ms >= 0 && ms < 1e12)
			r->retry_ms = (int64_t)ms;
	} else if (strcasecmp(line, "retry-after") == 0 && r->retry_ms < 0) {
		r->retry_ms = httpretryafter(v, time(NULL));
	} else if (strcasecmp(line, "content-type") == 0) {
		r->stream = strncasecmp(v, "text/event-stream", 17) == 0 ||
		            strncasecmp(v, "application/vnd.amazon.eventstream", 34) == 0;
	} else if (strcasecmp(line, "x-should-retry") == 0) {
		r->should_retry = strcmp(v, "true") == 0 ? 1 : strcmp(v, "false") == 0 ? 0 : -1;
	}
	return len;
}

int64_t httpretryafter(const char *v, time_t now)
{
	char *end;
	while (*v == ' ')
		v++;
	double s = strtod(v, &end);
	if (end != v && (*end == 0 || isspace((unsigned char)*end)))
		return s >= 0 && s < 1e9 ? (int64_t)(s * 1000) : -1;
	time_t t = curl_getdate(v, &now);
	if (t < 0)
		return -1;
	return t > now ? ((int64_t)t - now) * 1000 : 0;
}

int httppost(const char *url, const char *const *headers, const char *body, int64_t connect_ms, int64_t total_ms,
             struct httpresp *r)
{
	struct httpopts o = {connect_ms, total_ms, 0, NULL};
	return httpsend(url, headers, body, &o, r);
}

static pthread_once_t handleonce = PTHREAD_ONCE_INIT;
static pthread_key_t handlekey;

static void handlefree(void *c)
{
	curl_easy_cleanup(c);
}

static void handlekeymake(void)
{
	if (pthread_key_create(&handlekey, handlefree) != 0)
		abort();
}

/* This thread's handle: kept between requests (reset after each), so that the next request to
 * the same server goes over the connection the last one opened (no TCP or TLS handshake a turn). */
static CURL *handle(void)
{
	pthread_once(&handleonce, handlekeymake);
	CURL *c = pthread_getspecific(handlekey);
	if (!c && (c = curl_easy_init()) && pthread_setspecific(handlekey, c) != 0) {
		curl_easy_cleanup(c);
		c = NULL;
	}
	return c;
}

int httpsend(const char *url, const char *const *headers, const char *body, const struct httpopts *o,
             struct httpresp *r)
{
	const struct sigv4key *aws = o->aws;
	int64_t connect_ms = o->connect_ms, total_ms = o->total_ms;
	struct xfer x = {r, o->idle_ms, nowms()};
	memset(r, 0, sizeof *r);
	r->retry_ms = -1;
	r->should_retry = -1;
	if (cancelled) {
		snprintf(r->error, sizeof r->error, "interrupted");
		r->interrupted = 1;
		return -1;
	}
	CURL *c = handle();
	if (!c) {
		snprintf(r->error, sizeof r->error, "cannot start libcurl");
		return -1;
	}
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	for (size_t i = 0; headers && headers[i]; i++)
		h = curl_slist_append(h, headers[i]);
	h = curl_slist_append(h, "Expect:");
	if (aws) {
		struct strv sent = {0}, sig = {0};
		struct err se;
		for (struct curl_slist *p = h; p; p = p->next)
			strvadd(&sent, p->data);
		if (sigv4sign(aws, "POST", url, (const char *const *)sent.v, body, strlen(body), time(NULL), &sig, &se) < 0) {
			snprintf(r->error, sizeof r->error, "%.200s", se.msg);
			strvfree(&sent);
			curl_slist_free_all(h);
			return -1;
		}
		for (size_t i = 0; i < sig.n; i++)
			h = curl_slist_append(h, sig.v[i]);
		strvfree(&sent);
		strvfree(&sig);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	size_t blen = strlen(body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
	/* A body goes out through the upload buffer (64 KiB unless told): a 250 KB request is then
	 * four sends and eight polls. One of 1 MiB sends it at once (curl allocates it per request). */
	curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, blen > 65536 ? 1L << 20 : 65536L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onbody);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, onheader);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect_ms > 0 ? connect_ms : 10000));
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(total_ms > 0 ? total_ms : 600000));
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "nightshift/" NS_VERSION);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, onprogress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &x);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	char detail[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	r->status = rc == CURLE_OK ? (int)status : 0;
	if (rc != CURLE_OK) {
		snprintf(r->error, sizeof r->error, "%s", detail[0] ? detail : curl_easy_strerror(rc));
		r->timeout = rc == CURLE_OPERATION_TIMEDOUT;
		if (r->toolarge) {
			snprintf(r->error, sizeof r->error, "the response body passes %zu MiB", HTTPBODYMAX >> 20);
		} else if (rc == CURLE_ABORTED_BY_CALLBACK && r->idle) {
			snprintf(r->error, sizeof r->error, "no byte for %llds (idle_timeout): a stalled connection, "
			         "abandoned", (long long)(o->idle_ms / 1000));
		} else if (rc == CURLE_ABORTED_BY_CALLBACK) {
			snprintf(r->error, sizeof r->error, "interrupted");
			r->interrupted = 1;
		}
	}
	if (!r->body.data)
		bufputs(&r->body, "");
	curl_easy_reset(c); /* its options point at h, body and detail: forgotten; its connections kept */
	curl_slist_free_all(h);
	return rc == CURLE_OK ? 0 : -1;
}

void httprespfree(struct httpresp *r)
{
	buffree(&r->body);
}
