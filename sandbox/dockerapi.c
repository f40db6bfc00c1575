/* dockerapi: HTTP/1.1 to the engine over a unix socket or tcp. One easy handle per
   engine keeps its connection between requests; every socket is opened
   close-on-exec, so that no child of the runner holds a connection (the hooked
   attach connection in particular: its end is what stops the container). */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "dockerapi.h"
#include "../util/cancel.h"

#define BODYMAX (8 << 20) /* bytes kept of an ordinary response */

static curl_socket_t opensock(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	(void)arg;
	(void)purpose;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* The path of a request: below the negotiated version, or unversioned before there is one. */
static char *requrl(const struct dapi *d, const char *path)
{
	return d->version[0] ? xasprintf("%s/v%s%s", d->at.base, d->version, path) : xasprintf("%s%s", d->at.base, path);
}

static void setup(struct dapi *d, CURL *h, const char *method, const char *path, const cJSON *body,
                  int64_t timeout_ms, struct curl_slist **hdr)
{
	char *url = requrl(d, path);
	curl_easy_reset(h);
	d->errbuf[0] = 0;
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, d->errbuf);
	curl_easy_setopt(h, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (d->at.sock)
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, d->at.sock);
	if (d->at.tls) {
		if (d->at.ca)
			curl_easy_setopt(h, CURLOPT_CAINFO, d->at.ca);
		if (d->at.cert)
			curl_easy_setopt(h, CURLOPT_SSLCERT, d->at.cert);
		if (d->at.key)
			curl_easy_setopt(h, CURLOPT_SSLKEY, d->at.key);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, d->at.verify ? 1L : 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, d->at.verify ? 2L : 0L);
	}
	curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, opensock);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	if (timeout_ms > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	*hdr = curl_slist_append(NULL, "Expect:"); /* no 100-continue round trip */
	if (body) {
		char *json = cJSON_PrintUnformatted(body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(json));
		curl_easy_setopt(h, CURLOPT_COPYPOSTFIELDS, json);
		cJSON_free(json);
		*hdr = curl_slist_append(*hdr, "Content-Type: application/json");
	} else if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
		curl_easy_setopt(h, CURLOPT_COPYPOSTFIELDS, "");
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdr);
}

static size_t tobuf(char *p, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t len = size * n;
	if (b->len + len > BODYMAX)
		return 0; /* fails the transfer: no engine answer is that large */
	bufadd(b, p, len);
	return len;
}

static int failed(struct dapi *d, CURLcode rc, const char *method, const char *path, struct err *e)
{
	return errf(e, "docker engine at %s: %s %s: %s", d->url, method, path,
	            d->errbuf[0] ? d->errbuf : curl_easy_strerror(rc));
}

int dapicall(struct dapi *d, const char *method, const char *path, const cJSON *body, int64_t timeout_ms,
             long *status, struct buf *out, struct err *e)
{
	struct curl_slist *hdr = NULL;
	struct buf sink = {0};
	setup(d, d->h, method, path, body, timeout_ms, &hdr);
	curl_easy_setopt(d->h, CURLOPT_WRITEFUNCTION, tobuf);
	curl_easy_setopt(d->h, CURLOPT_WRITEDATA, out ? out : &sink);
	CURLcode rc = curl_easy_perform(d->h);
	curl_slist_free_all(hdr);
	buffree(&sink);
	if (rc != CURLE_OK)
		return failed(d, rc, method, path, e);
	curl_easy_getinfo(d->h, CURLINFO_RESPONSE_CODE, status);
	return 0;
}

/* Wait for the hooked socket to be ready; 0 when it is, -1 on timeout or error. */
static int waitsock(CURL *c, short ev, int ms)
{
	curl_socket_t fd;
	if (curl_easy_getinfo(c, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD)
		return -1;
	struct pollfd p = {.fd = fd, .events = ev};
	int n;
	while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
		;
	return n == 1 ? 0 : -1;
}

int dapisend(CURL *conn, const void *p, size_t n, int64_t deadline, struct err *e)
{
	size_t off = 0;
	while (off < n) {
		size_t k = 0;
		CURLcode rc = curl_easy_send(conn, (const char *)p + off, n - off, &k);
		if (rc == CURLE_AGAIN) {
			int ms = -1;
			if (deadline > 0) {
				int64_t left = deadline - nowms();
				if (left <= 0)
					return errf(e, "docker engine: sending timed out");
				ms = (int)left;
			}
			if (waitsock(conn, POLLOUT, ms) < 0)
				return errf(e, "docker engine: sending timed out");
			continue;
		}
		if (rc != CURLE_OK)
			return errf(e, "docker engine: sending: %s", curl_easy_strerror(rc));
		off += k;
	}
	return 0;
}

void dapishutwr(CURL *conn)
{
	curl_socket_t fd;
	if (curl_easy_getinfo(conn, CURLINFO_ACTIVESOCKET, &fd) == CURLE_OK && fd != CURL_SOCKET_BAD)
		shutdown(fd, SHUT_WR);
}

long dapirecv(CURL *conn, void *p, size_t n, int ms)
{
	for (;;) {
		size_t k = 0;
		CURLcode rc = curl_easy_recv(conn, p, n, &k);
		if (rc == CURLE_OK)
			return (long)k;
		if (rc != CURLE_AGAIN)
			return -1;
		curl_socket_t fd;
		if (curl_easy_getinfo(conn, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD)
			return -1;
		/* A stop request (SIGINT/SIGTERM) ends the wait as the deadline would. */
		struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = cancelfd(), .events = POLLIN}};
		int r;
		while ((r = poll(pf, 2, ms)) < 0 && errno == EINTR)
			;
		if (r < 0)
			return -1;
		if (r == 0 || (pf[1].revents && !pf[0].revents))
			return -2;
	}
}

int dapihook(struct dapi *d, const char *path, const cJSON *body, long *status, CURL **conn, struct err *e)
{
	*status = 0;
	struct curl_slist *hdr = NULL;
	CURL *c = curl_easy_init();
	if (!c)
		return errf(e, "curl_easy_init failed");
	setup(d, c, "GET", "/_ping", NULL, 0, &hdr);
	curl_easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
	CURLcode rc = curl_easy_perform(c);
	curl_slist_free_all(hdr);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL); /* d->errbuf may be gone before c */
	if (rc != CURLE_OK) {
		curl_easy_cleanup(c);
		return failed(d, rc, "POST", path, e);
	}
	char *json = body ? cJSON_PrintUnformatted(body) : NULL;
	char *req = xasprintf("POST /v%s%s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
	                      "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n%s", d->version, path, d->at.host,
	                      json ? "application/json" : "text/plain", json ? strlen(json) : 0, json ? json : "");
	cJSON_free(json);
	int64_t end = nowms() + 30000;
	int src = dapisend(c, req, strlen(req), end, e);
	free(req);
	if (src < 0) {
		curl_easy_cleanup(c);
		return errctx(e, "%s: POST %s", d->url, path);
	}
	/* The response head, a byte at a time: what follows it belongs to the stream. */
	struct buf head = {0};
	while (head.len < 8192 && (head.len < 4 || memcmp(head.data + head.len - 4, "\r\n\r\n", 4) != 0)) {
		char ch;
		int left = (int)(end - nowms());
		long n = left > 0 ? dapirecv(c, &ch, 1, left) : -2;
		if (n <= 0) {
			buffree(&head);
			curl_easy_cleanup(c);
			return errf(e, "docker engine at %s: POST %s: %s", d->url, path,
			            n == -2 ? "no answer" : "connection closed");
		}
		bufadd(&head, &ch, 1);
	}
	if (strncmp(head.data, "HTTP/1.", 7) == 0 && head.len > 12)
		*status = strtol(head.data + 9, NULL, 10);
	if (*status != 101 && *status != 200) {
		char *nl = strstr(head.data, "\r\n");
		int n = nl ? (int)(nl - head.data) : 0;
		errf(e, "docker engine at %s: POST %s: %.*s", d->url, path, n, head.data);
		buffree(&head);
		curl_easy_cleanup(c);
		return -1;
	}
	buffree(&head);
	*conn = c;
	return 0;
}

void dapiunhook(CURL *conn)
{
	if (conn)
		curl_easy_cleanup(conn);
}

char *dapimsg(const struct buf *body)
{
	cJSON *j = body->data ? cJSON_Parse(body->data) : NULL;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
	char *s;
	if (cJSON_IsString(m)) {
		s = xstrdup(m->valuestring);
	} else {
		size_t n = body->len;
		while (n && (body->data[n - 1] == '\n' || body->data[n - 1] == '\r'))
			n--;
		s = xstrndup(body->data ? body->data : "", n > 300 ? 300 : n);
	}
	cJSON_Delete(j);
	return s;
}

int dapivercmp(const char *a, const char *b)
{
	int am = 0, an = 0, bm = 0, bn = 0;
	int ka = sscanf(a ? a : "", "%d.%d", &am, &an) == 2, kb = sscanf(b ? b : "", "%d.%d", &bm, &bn) == 2;
	if (!ka || !kb)
		return ka - kb;
	return am != bm ? (am < bm ? -1 : 1) : an != bn ? (an < bn ? -1 : 1) : 0;
}

/* A version string of the form MAJOR.MINOR, copied to out (n bytes); 0 when it is one. */
static int verstr(const cJSON *v, char *out, size_t n)
{
	int a, b, len = 0;
	if (!cJSON_IsString(v) || sscanf(v->valuestring, "%d.%d%n", &a, &b, &len) != 2 || v->valuestring[len] ||
	    a < 0 || b < 0 || (size_t)len >= n)
		return -1;
	memcpy(out, v->valuestring, (size_t)len + 1);
	return 0;
}

/* GET /version (unversioned): which engine, and the API version to speak. */
static int negotiate(struct dapi *d, struct err *e)
{
	long status = 0;
	struct buf body = {0};
	char top[16] = "", min[16] = "";
	int rc = -1;
	if (dapicall(d, "GET", "/version", NULL, 10000, &status, &body, e) < 0)
		goto out;
	cJSON *j = cJSON_Parse(body.data ? body.data : ""), *c;
	if (status != 200 || verstr(cJSON_GetObjectItemCaseSensitive(j, "ApiVersion"), top, sizeof top) < 0) {
		char *m = dapimsg(&body);
		errf(e, "the Docker engine at %s answers GET /version with HTTP %ld and no ApiVersion: %s", d->url,
		     status, m);
		free(m);
		cJSON_Delete(j);
		goto out;
	}
	verstr(cJSON_GetObjectItemCaseSensitive(j, "MinAPIVersion"), min, sizeof min);
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(j, "Version");
	snprintf(d->engine, sizeof d->engine, "%s", cJSON_IsString(ev) ? ev->valuestring : "?");
	/* Podman takes some options differently (a seccomp profile is a path there). */
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(j, "Components")) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "Name");
		if (cJSON_IsString(n) && strstr(n->valuestring, "Podman"))
			d->podman = 1;
	}
	cJSON_Delete(j);
	const char *use = dapivercmp(top, DAPIMAX) < 0 ? top : DAPIMAX;
	if (dapivercmp(use, DAPIMIN) < 0)
		errf(e, "the Docker engine at %s (%s) speaks API versions up to %s; nightshift needs %s or newer "
		        "(upgrade the engine)", d->url, d->engine, top, DAPIMIN);
	else if (min[0] && dapivercmp(min, use) > 0)
		errf(e, "the Docker engine at %s (%s) wants API version %s or newer; nightshift speaks %s to %s "
		        "(a newer nightshift may speak it)", d->url, d->engine, min, DAPIMIN, DAPIMAX);
	else {
		snprintf(d->version, sizeof d->version, "%s", use);
		rc = 0;
	}
out:
	buffree(&body);
	return rc;
}

/* Why the unix socket at path takes no connection, in words and with the remedy, for a message;
 * "" when it takes one (the failure was past the connection). */
static void sockwhy(const char *path, char *why, size_t n)
{
	why[0] = 0;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (!path || strlen(path) >= sizeof sa.sun_path)
		return;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa), err = errno;
	close(fd);
	if (rc == 0)
		return;
	struct stat st;
	if (err == EACCES && stat(path, &st) == 0) {
		struct group *g = getgrgid(st.st_gid);
		char gname[64];
		if (g)
			snprintf(gname, sizeof gname, "%s", g->gr_name);
		else
			snprintf(gname, sizeof gname, "%u", (unsigned)st.st_gid);
		snprintf(why, n, "%s: %s for uid %u (the socket is uid %u, group %s, mode %04o). Remedy: add this user to "
		         "group %s (usermod -aG %s USER, then log in again), or point DOCKER_HOST at an engine of its own "
		         "(rootless Docker)", path, strerror(err), (unsigned)geteuid(), (unsigned)st.st_uid, gname,
		         (unsigned)(st.st_mode & 07777), gname, gname);
	} else if (err == ENOENT || err == ECONNREFUSED) {
		snprintf(why, n, "%s: %s (is dockerd running?)", path, strerror(err));
	} else {
		snprintf(why, n, "%s: %s", path, strerror(err));
	}
}

int dapiopen(struct dapi *d, struct err *e)
{
	memset(d, 0, sizeof *d);
	if (dhostfind(&d->at, e) < 0)
		return -1;
	d->url = d->at.url;
	d->h = curl_easy_init();
	if (!d->h) {
		dapiclose(d);
		return errf(e, "curl_easy_init failed");
	}
	long status = 0;
	struct buf body = {0};
	if (dapicall(d, "GET", "/_ping", NULL, 10000, &status, &body, e) < 0) {
		buffree(&body);
		char why[512];
		sockwhy(d->at.sock, why, sizeof why);
		if (why[0])
			errf(e, "cannot reach the Docker engine at %s (from %s): %s", d->url, d->at.via, why);
		else
			errf(e, "cannot reach the Docker engine at %s (from %s): %s (is dockerd running, and may this user use "
			        "its socket?)", d->url, d->at.via, d->errbuf[0] ? d->errbuf : "no answer");
		dapiclose(d);
		return -1;
	}
	if (status != 200) {
		char *m = dapimsg(&body);
		errf(e, "the Docker engine at %s answers /_ping with HTTP %ld: %s", d->url, status, m);
		free(m);
		buffree(&body);
		dapiclose(d);
		return -1;
	}
	buffree(&body);
	if (negotiate(d, e) < 0) {
		dapiclose(d);
		return -1;
	}
	return 0;
}

void dapiclose(struct dapi *d)
{
	if (d->h)
		curl_easy_cleanup(d->h);
	dhostfree(&d->at);
	memset(d, 0, sizeof *d);
}
