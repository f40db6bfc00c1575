/* sigv4: canonical request, string to sign, derived key, signature. */
#include <ctype.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include "sigv4.h"

static void hmac(const unsigned char *key, size_t klen, const char *msg, unsigned char out[32])
{
	unsigned int n = 32;
	HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &n);
}

/* RFC 3986 encoding as AWS wants it: everything but A-Z a-z 0-9 - _ . ~ as %XX (upper case). */
static void enc(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
			bufputc(b, (char)c);
		else
			bufprintf(b, "%%%02X", c);
	}
}

/* Percent-decode n bytes of s into a new string. */
static char *dec(const char *s, size_t n)
{
	int len = 0;
	char *t = curl_easy_unescape(NULL, s, (int)n, &len);
	char *r = xstrndup(t ? t : "", t ? (size_t)len : 0);
	curl_free(t);
	return r;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct sigv4key *sigv4new(const char *access, const char *secret, const char *token, const char *region,
                          const char *service)
{
	struct sigv4key *k = xcalloc(1, sizeof *k);
	k->access = xstrdup(access);
	k->secret = xstrdup(secret);
	k->token = token && *token ? xstrdup(token) : NULL;
	k->region = xstrdup(region);
	k->service = xstrdup(service);
	return k;
}

void sigv4free(struct sigv4key *k)
{
	if (!k)
		return;
	explicit_bzero((char *)k->secret, strlen(k->secret));
	free((char *)k->access);
	free((char *)k->secret);
	free((char *)k->token);
	free((char *)k->region);
	free((char *)k->service);
	free(k);
}

int sigv4sign(const struct sigv4key *k, const char *method, const char *url, const char *const *headers,
              const char *body, size_t bodylen, time_t now, struct strv *out, struct err *e)
{
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, *path = NULL, *query = NULL;
	if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK) {
		curl_url_cleanup(u);
		return errf(e, "sigv4: %s is not a URL", url);
	}
	curl_url_get(u, CURLUPART_PORT, &port, 0); /* only when the URL names one */
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	char date[17];
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", &tm);
	char payload[65];
	sha256hex(body, bodylen, payload);

	/* The headers signed: the request's own, host, and ours; lower-case names, trimmed values, sorted. */
	struct strv hs = {0};
	char *h = port ? xasprintf("host:%s:%s", host, port) : xasprintf("host:%s", host);
	strvadd(&hs, h);
	free(h);
	h = xasprintf("x-amz-date:%s", date);
	strvadd(&hs, h);
	free(h);
	h = xasprintf("x-amz-content-sha256:%s", payload);
	strvadd(&hs, h);
	free(h);
	if (k->token) {
		h = xasprintf("x-amz-security-token:%s", k->token);
		strvadd(&hs, h);
		free(h);
	}
	for (size_t i = 0; headers && headers[i]; i++) {
		const char *c = strchr(headers[i], ':');
		if (!c || !c[1 + strspn(c + 1, " \t")])
			continue; /* "Name:" only removes a header curl would add: nothing is sent */
		struct buf b = {0};
		for (const char *p = headers[i]; p < c; p++)
			bufputc(&b, (char)tolower((unsigned char)*p));
		bufputc(&b, ':');
		const char *v = c + 1 + strspn(c + 1, " \t");
		int sp = 0;
		for (; *v; v++) { /* sequential spaces as one, trailing ones dropped */
			if (*v == ' ' || *v == '\t') {
				sp = 1;
				continue;
			}
			if (sp && b.data[b.len - 1] != ':')
				bufputc(&b, ' ');
			sp = 0;
			bufputc(&b, *v);
		}
		strvadd(&hs, b.data);
		buffree(&b);
	}
	qsort(hs.v, hs.n, sizeof *hs.v, cmpstr);
	struct buf canon = {0}, names = {0};
	bufprintf(&canon, "%s\n", method);
	/* The path: each segment decoded, then encoded twice (every service but S3). */
	for (const char *p = path; *p == '/';) {
		const char *s = p + 1;
		size_t n = strcspn(s, "/");
		char *raw = dec(s, n);
		struct buf once = {0};
		enc(&once, raw, strlen(raw));
		bufputc(&canon, '/');
		enc(&canon, once.data ? once.data : "", once.len);
		buffree(&once);
		free(raw);
		p = s + n;
	}
	bufputc(&canon, '\n');
	/* The query: name=value pairs encoded, sorted. */
	struct strv qs = {0};
	for (const char *p = query; p && *p;) {
		size_t n = strcspn(p, "&");
		const char *eq = memchr(p, '=', n);
		char *kd = dec(p, eq ? (size_t)(eq - p) : n), *vd = eq ? dec(eq + 1, n - (size_t)(eq + 1 - p)) : xstrdup("");
		struct buf kv = {0};
		enc(&kv, kd, strlen(kd));
		bufputc(&kv, '=');
		enc(&kv, vd, strlen(vd));
		strvadd(&qs, kv.data);
		buffree(&kv);
		free(kd);
		free(vd);
		p += n + (p[n] == '&');
	}
	if (qs.n)
		qsort(qs.v, qs.n, sizeof *qs.v, cmpstr);
	for (size_t i = 0; i < qs.n; i++)
		bufprintf(&canon, "%s%s", i ? "&" : "", qs.v[i]);
	bufputc(&canon, '\n');
	for (size_t i = 0; i < hs.n; i++) {
		bufprintf(&canon, "%s\n", hs.v[i]);
		bufprintf(&names, "%s%.*s", i ? ";" : "", (int)strcspn(hs.v[i], ":"), hs.v[i]);
	}
	bufprintf(&canon, "\n%s\n%s", names.data, payload);

	char creqhash[65], scope[128];
	sha256hex(canon.data, canon.len, creqhash);
	snprintf(scope, sizeof scope, "%.8s/%s/%s/aws4_request", date, k->region, k->service);
	char *sts = xasprintf("AWS4-HMAC-SHA256\n%s\n%s\n%s", date, scope, creqhash);
	unsigned char key[32], tmp[32];
	char *kinit = xasprintf("AWS4%s", k->secret), d8[9];
	snprintf(d8, sizeof d8, "%.8s", date);
	hmac((unsigned char *)kinit, strlen(kinit), d8, key);
	hmac(key, 32, k->region, tmp);
	hmac(tmp, 32, k->service, key);
	hmac(key, 32, "aws4_request", tmp);
	unsigned char sig[32];
	hmac(tmp, 32, sts, sig);
	char hex[65];
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", sig[i]);

	h = xasprintf("x-amz-date: %s", date);
	strvadd(out, h);
	free(h);
	h = xasprintf("x-amz-content-sha256: %s", payload);
	strvadd(out, h);
	free(h);
	if (k->token) {
		h = xasprintf("x-amz-security-token: %s", k->token);
		strvadd(out, h);
		free(h);
	}
	h = xasprintf("Authorization: AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s", k->access,
	              scope, names.data, hex);
	strvadd(out, h);
	free(h);

	explicit_bzero(kinit, strlen(kinit));
	explicit_bzero(key, sizeof key);
	explicit_bzero(tmp, sizeof tmp);
	free(kinit);
	free(sts);
	buffree(&canon);
	buffree(&names);
	strvfree(&hs);
	strvfree(&qs);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_free(query);
	curl_url_cleanup(u);
	return 0;
}
