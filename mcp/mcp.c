/* mcp: JSON-RPC 2.0 over one transport. The read loop answers what the server asks meanwhile
 * (ping; anything else "method not found": we offer no roots, sampling or elicitation), keeps
 * its log and progress notifications, and notes list_changed, until the answer to our request
 * comes, the time runs out (then notifications/cancelled) or the server is gone. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include "../manifest/netrule.h"
#include "../manifest/mcpconf.h"
#include "../manifest/schema.h"
#include "../util/cancel.h"
#include "mcp.h"
#include "../net/egress.h"
static const struct mcptool *mcpfind(const struct mcp *c, const char *tool);

const char *const mcpversions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL};

enum { LOG_MAX = 64 << 10, LIST_PAGES = 100, TEXT_MAX = 4 << 20, NET_MAX = 1000 };
/* What a server's tool list may keep in the runner (docs/security.md "Hostile bytes"): tools, bytes
 * of one tool (name, description, schemas), bytes of the whole list across its pages. */
enum { LIST_TOOLS = 1000, TOOL_BYTES = 256 << 10, LIST_BYTES = 4 << 20 };

char *mcpname(const char *server, const char *tool)
{
	return xasprintf("mcp__%s__%s", server, tool);
}

static void logadd(struct mcp *c, const char *s, size_t n)
{
	if (c->log.len >= LOG_MAX)
		return;
	if (c->log.len + n > LOG_MAX)
		n = LOG_MAX - c->log.len;
	bufadd(&c->log, s, n);
}

static void die(struct mcp *c, const char *why)
{
	if (!c->dead)
		snprintf(c->deadwhy, sizeof c->deadwhy, "%.250s", why);
	c->dead = 1;
}

/* ---- HTTP (Streamable HTTP): each message is a POST; the answer is JSON or an event stream ---- */

struct http {
	CURL *curl;
	char *session;       /* Mcp-Session-Id, once the server gave one */
	struct strv headers; /* the manifest's, expanded */
	cJSON *inbox;        /* messages received, not yet taken */
	struct buf body, ctype, sid;
	long status;
	struct rpcsse sse; /* an event stream, read as it comes (its id and retry kept for a reconnection) */
	int64_t want; /* the request whose answer ends the stream (then it is closed), or 0 */
	int got;
	struct err over; /* the transfer was cut: a message beyond the caps, or a flood (over.msg) */
	int cut;
	/* the address rules of the egress proxy, applied to each connection curl opens */
	int nethost;                  /* the job's network: host, or else its allow list (copied) */
	struct netrule *allow;
	size_t nallow;
	char host[256];               /* the URL's host, lowercase, without brackets */
	int port;
	const char *rule;             /* the allow entry that names the host (in allow; NULL under host) */
	const char *method;           /* of the exchange under way */
	struct curl_slist *resolve;   /* NIGHTSHIFT_TEST_RESOLVE's names, as egress takes them */
};

/* curl opens a connection: to an address of a special kind (loopback, private, link-local,
 * metadata, ...) only when an allow entry names that address or its range, as the egress proxy
 * decides, so that a name which resolves (or is rebound) to 127.0.0.1 or 169.254.169.254 gets
 * nowhere; network: host lets every address through. Each one is a net_connection event. */
static curl_socket_t hopen(void *ctx, curlsocktype purpose, struct curl_sockaddr *sa)
{
	struct mcp *c = ctx;
	struct http *h = c->http;
	unsigned char a[16];
	int port = 0, fam = sa->family;
	char text[INET6_ADDRSTRLEN] = "?";
	if (fam == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&sa->addr;
		memcpy(a, &in->sin_addr, 4);
		port = ntohs(in->sin_port);
	} else if (fam == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&sa->addr;
		memcpy(a, &in6->sin6_addr, 16);
		port = ntohs(in6->sin6_port);
	}
	if (fam == AF_INET || fam == AF_INET6)
		inet_ntop(fam, a, text, sizeof text);
	const char *cls = fam == AF_INET || fam == AF_INET6 ? egressclass(fam, a) : "unknown-family";
	const struct netrule *holds = NULL;
	for (size_t i = 0; cls && !h->nethost && i < h->nallow && !holds; i++)
		if ((fam == AF_INET || fam == AF_INET6) && netruleport(&h->allow[i], port) && netruleaddr(&h->allow[i], fam, a))
			holds = &h->allow[i];
	int ok = purpose == CURLSOCKTYPE_IPCXN && (!cls || holds || h->nethost);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "mcp_server", c->conf->name);
	cJSON_AddStringToObject(ev, "method", h->method ? h->method : "?");
	cJSON_AddStringToObject(ev, "host", h->host);
	cJSON_AddNumberToObject(ev, "port", port);
	cJSON_AddStringToObject(ev, "address", text);
	cJSON_AddStringToObject(ev, "decision", ok ? "allow" : "deny");
	char rule[600];
	if (!ok)
		snprintf(rule, sizeof rule, "special-address:%s", cls);
	else if (h->nethost)
		snprintf(rule, sizeof rule, "network: host");
	else
		snprintf(rule, sizeof rule, "%s%s%s", h->rule ? h->rule : "?", holds && holds->text != h->rule ? " + " : "",
		         holds && holds->text != h->rule ? holds->text : "");
	cJSON_AddStringToObject(ev, "rule", rule);
	if (!ok) {
		char *why = xasprintf("%s resolves to %s, a %s address, which no entry of sandbox.network.allow names "
		                      "(name the address or its range to allow it)", h->host, text, cls);
		cJSON_AddStringToObject(ev, "reason", why);
		logadd(c, why, strlen(why));
		logadd(c, "\n", 1);
		free(why);
	}
	if (!c->net)
		c->net = cJSON_CreateArray();
	if (cJSON_GetArraySize(c->net) < NET_MAX) /* a server that makes us reconnect forever grows nothing */
		cJSON_AddItemToArray(c->net, ev);
	else
		cJSON_Delete(ev);
	if (!ok)
		return CURL_SOCKET_BAD;
	return socket(sa->family, sa->socktype | SOCK_CLOEXEC, sa->protocol);
}

static void note(struct mcp *c, const cJSON *msg);

/* Sort what just came into inbox: notifications are taken at once (counted against MCPNOTES),
 * answers to requests given up on dropped; what stays is the awaited answer and the server's
 * requests (counted against MCPASKS). -1 once a budget is passed (the server is ended). */
static int triage(struct mcp *c, cJSON *inbox)
{
	cJSON *msg = inbox->child;
	while (msg) {
		cJSON *next = msg->next;
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
		const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
		int drop = 0;
		if (!method) {
			drop = !(cJSON_IsNumber(id) && id->valuedouble == (double)c->want);
		} else if (!id) {
			note(c, msg);
			drop = 1;
			if (++c->notes > MCPNOTES)
				die(c, "the server sent more than 100000 notifications during one call");
		} else if (++c->asks > MCPASKS) {
			drop = 1;
			die(c, "the server sent more than 100 requests during one call");
		}
		if (drop)
			cJSON_Delete(cJSON_DetachItemViaPointer(inbox, msg));
		msg = next;
	}
	return c->dead ? -1 : 0;
}

/* Whether the awaited answer is in inbox. */
static int answered(const struct mcp *c, const cJSON *inbox)
{
	const cJSON *m;
	cJSON_ArrayForEach(m, inbox)
	{
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
		if (!cJSON_GetObjectItemCaseSensitive(m, "method") && cJSON_IsNumber(id) && id->valuedouble == (double)c->want)
			return 1;
	}
	return 0;
}

/* The messages of a whole body (one object or a batch) into the inbox. */
static int hjson(struct mcp *c, const char *s, size_t n)
{
	struct http *h = c->http;
	if (rpcbody(s, n, h->inbox, &h->over) == -2) {
		h->cut = 1;
		errctx(&h->over, "the server's response");
		die(c, h->over.msg);
		return -1;
	}
	return triage(c, h->inbox);
}

static int issse(const struct http *h)
{
	return h->ctype.len >= 17 && strncasecmp(h->ctype.data, "text/event-stream", 17) == 0;
}

/* A piece of the response: an event stream is read as it comes (its messages sorted at once, so
 * a stream of pings or notifications never piles up); a JSON body is kept up to MCPMSGMAX. */
static size_t hwrite(char *p, size_t sz, size_t n, void *ud)
{
	struct mcp *c = ud;
	struct http *h = c->http;
	if (issse(h)) {
		rpcfeed(&h->sse.f, p, sz * n);
		if (rpcevents(&h->sse, 0, h->inbox, &h->over) < 0) {
			h->cut = 1;
			die(c, h->over.msg);
			return 0;
		}
		if (triage(c, h->inbox) < 0) {
			h->cut = 1;
			snprintf(h->over.msg, sizeof h->over.msg, "%s", c->deadwhy);
			return 0;
		}
		h->got = h->want && answered(c, h->inbox);
		if (h->got)
			return 0; /* our answer came: a stream that stays open need not be read further */
		return sz * n;
	}
	if (h->body.len + sz * n > MCPMSGMAX) {
		h->cut = 1;
		errf(&h->over, "the server's response passes %zu MiB", MCPMSGMAX >> 20);
		die(c, h->over.msg);
		return 0;
	}
	bufadd(&h->body, p, sz * n);
	return sz * n;
}

/* libcurl's progress callback: a stop of the run ends the exchange. */
static int hcancel(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)ud, (void)dt, (void)dn, (void)ut, (void)un;
	return cancelled ? 1 : 0;
}

static size_t hheader(char *p, size_t sz, size_t n, void *ud)
{
	struct http *h = ud;
	size_t len = sz * n;
	struct {
		const char *name;
		struct buf *to;
	} want[] = {{"content-type:", &h->ctype}, {"mcp-session-id:", &h->sid}};
	for (size_t i = 0; i < 2; i++) {
		size_t k = strlen(want[i].name);
		if (len > k && strncasecmp(p, want[i].name, k) == 0) {
			const char *v = p + k;
			size_t vl = len - k;
			while (vl && (*v == ' ' || *v == '\t'))
				v++, vl--;
			while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
				vl--;
			want[i].to->len = 0;
			bufadd(want[i].to, v, vl);
		}
	}
	return len;
}

/* One HTTP exchange: POST a message (body), DELETE the session (body NULL, method DELETE), or
 * GET the event stream again after a stream closed before our answer (Last-Event-ID). */
static int hpost(struct mcp *c, const char *method, const char *body, int64_t want, int64_t timeout_ms,
                 struct err *e)
{
	struct http *h = c->http;
	struct curl_slist *hl = NULL;
	int get = strcmp(method, "GET") == 0;
	h->body.len = h->ctype.len = 0;
	h->want = want;
	h->got = h->cut = 0;
	struct buf keep = h->sse.lastid;
	if (!get)
		keep.len = 0;
	h->sse.lastid = (struct buf){0};
	long retry = h->sse.retry;
	rpcssefree(&h->sse);
	h->sse.lastid = keep;
	h->sse.retry = retry;
	if (body)
		hl = curl_slist_append(hl, "Content-Type: application/json");
	hl = curl_slist_append(hl, get ? "Accept: text/event-stream" : "Accept: application/json, text/event-stream");
	if (c->version[0]) {
		char v[64];
		snprintf(v, sizeof v, "MCP-Protocol-Version: %s", c->version);
		hl = curl_slist_append(hl, v);
	}
	if (h->session) {
		char *s = xasprintf("Mcp-Session-Id: %s", h->session);
		hl = curl_slist_append(hl, s);
		free(s);
	}
	if (get && h->sse.lastid.len) {
		char *s = xasprintf("Last-Event-ID: %s", h->sse.lastid.data);
		hl = curl_slist_append(hl, s);
		free(s);
	}
	for (size_t i = 0; i < h->headers.n; i++)
		hl = curl_slist_append(hl, h->headers.v[i]);
	CURL *u = h->curl;
	curl_easy_reset(u);
	h->method = method;
	curl_easy_setopt(u, CURLOPT_URL, c->conf->url);
	curl_easy_setopt(u, CURLOPT_OPENSOCKETFUNCTION, hopen);
	curl_easy_setopt(u, CURLOPT_OPENSOCKETDATA, c);
	curl_easy_setopt(u, CURLOPT_NOPROXY, "*"); /* the address checked is the server's own */
	if (h->resolve)
		curl_easy_setopt(u, CURLOPT_RESOLVE, h->resolve);
	curl_easy_setopt(u, CURLOPT_HTTPHEADER, hl);
	if (get)
		curl_easy_setopt(u, CURLOPT_HTTPGET, 1L);
	else
		curl_easy_setopt(u, CURLOPT_CUSTOMREQUEST, method);
	if (body)
		curl_easy_setopt(u, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(u, CURLOPT_WRITEFUNCTION, hwrite);
	curl_easy_setopt(u, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(u, CURLOPT_XFERINFOFUNCTION, hcancel);
	curl_easy_setopt(u, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(u, CURLOPT_HEADERFUNCTION, hheader);
	curl_easy_setopt(u, CURLOPT_HEADERDATA, h);
	curl_easy_setopt(u, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(u, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_ms < 10000 ? timeout_ms : 10000));
	curl_easy_setopt(u, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(u, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(u, CURLOPT_FOLLOWLOCATION, 0L);
	CURLcode rc = curl_easy_perform(u);
	curl_slist_free_all(hl);
	h->status = 0;
	curl_easy_getinfo(u, CURLINFO_RESPONSE_CODE, &h->status);
	if (h->sid.len && !h->session)
		h->session = xstrndup(h->sid.data, h->sid.len);
	if (rc == CURLE_WRITE_ERROR && h->got)
		return 0;
	if (h->cut)
		return errf(e, "%s", h->over.msg);
	if (rc == CURLE_ABORTED_BY_CALLBACK)
		return errc(e, ERR_INTR, "interrupted");
	if (rc == CURLE_OPERATION_TIMEDOUT && !h->got)
		return errc(e, ERR_ABORT, "no answer within %lld ms", (long long)timeout_ms);
	if (rc != CURLE_OK && rc != CURLE_OPERATION_TIMEDOUT)
		return errf(e, "%s: %s", c->conf->url, curl_easy_strerror(rc));
	if (h->status == 404 && h->session)
		return errf(e, "the server ended the session (HTTP 404)");
	if (h->status >= 400)
		return errf(e, "HTTP %ld from the server", h->status);
	if (issse(h)) {
		if (rpcevents(&h->sse, 1, h->inbox, &h->over) < 0 || triage(c, h->inbox) < 0)
			return errf(e, "%s", c->dead ? c->deadwhy : h->over.msg);
	} else if (h->body.len && hjson(c, h->body.data, h->body.len) < 0) {
		return errf(e, "%s", c->deadwhy);
	}
	return 0;
}

/* ---- stdio: one JSON message a line, both ways ---- */

static int ssend(struct mcp *c, const char *s, int64_t deadline, struct err *e)
{
	size_t n = strlen(s), off = 0;
	char *line = xasprintf("%s\n", s);
	n++;
	while (off < n) {
		struct pollfd pf[2] = {{c->proc.in, POLLOUT, 0}, {cancelfd(), POLLIN, 0}};
		int64_t ms = deadline - nowms();
		if (ms <= 0 || cancelled || poll(pf, cancelfd() >= 0 ? 2 : 1, ms > 200 ? 200 : (int)ms) == 0) {
			if (ms > 200 && !cancelled)
				continue;
			free(line);
			return errc(e, ERR_ABORT, "the server does not read its input");
		}
		if (!(pf[0].revents & (POLLOUT | POLLERR | POLLHUP)))
			continue;
		ssize_t w = write(c->proc.in, line + off, n - off);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w < 0) {
			free(line);
			die(c, "the server closed its input");
			return errf(e, "%s", c->deadwhy);
		}
		off += w;
	}
	free(line);
	return 0;
}

/* Read what is there of stdout and stderr for up to ms; lines of stdout go to the inbox. */
static int sread(struct mcp *c, cJSON *inbox, int ms)
{
	struct pollfd pf[2] = {{c->proc.out, POLLIN, 0}, {c->proc.err, POLLIN, 0}};
	int r = poll(pf, c->proc.err >= 0 ? 2 : 1, ms);
	if (r <= 0)
		return 0;
	char tmp[65536];
	if (c->proc.err >= 0 && pf[1].revents) {
		ssize_t n = read(c->proc.err, tmp, sizeof tmp);
		if (n > 0)
			logadd(c, tmp, n);
		else if (n == 0) {
			close(c->proc.err);
			c->proc.err = -1;
		}
	}
	if (pf[0].revents) {
		ssize_t n = read(c->proc.out, tmp, sizeof tmp);
		if (n < 0 && errno == EINTR)
			return 0;
		if (n <= 0) {
			die(c, "the server exited (its output closed)");
			return -1;
		}
		rpcfeed(&c->in, tmp, n);
		struct buf junk = {0};
		struct err fe;
		int rc = rpcstdio(&c->in, inbox, &junk, &fe);
		logadd(c, junk.data ? junk.data : "", junk.len);
		buffree(&junk);
		if (rc < 0) {
			die(c, fe.msg);
			return -1;
		}
		if (triage(c, inbox) < 0)
			return -1;
	}
	return 0;
}

/* ---- messages ---- */

static int sendmsg_(struct mcp *c, cJSON *msg, int64_t deadline, struct err *e)
{
	char *s = cJSON_PrintUnformatted(msg);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	int rc;
	if (c->http) {
		int64_t left = deadline - nowms();
		int request = cJSON_IsNumber(id) && cJSON_GetObjectItemCaseSensitive(msg, "method");
		rc = hpost(c, "POST", s, request ? (int64_t)id->valuedouble : 0, left > 0 ? left : 1, e);
	} else {
		rc = ssend(c, s, deadline, e);
	}
	free(s);
	return rc;
}

static void notify(struct mcp *c, const char *method, cJSON *params)
{
	cJSON *m = cJSON_CreateObject();
	struct err e;
	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	cJSON_AddStringToObject(m, "method", method);
	if (params)
		cJSON_AddItemToObject(m, "params", params);
	sendmsg_(c, m, nowms() + 5000, &e);
	cJSON_Delete(m);
}

/* Answer a request of the server's: ping gets {}, anything else "method not found"; within
 * 5 s, and never past the call's deadline. */
static void answerserver(struct mcp *c, const cJSON *req, int64_t deadline)
{
	const char *method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "method"));
	cJSON *m = cJSON_CreateObject();
	struct err e;
	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	cJSON_AddItemToObject(m, "id", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(req, "id"), 1));
	if (method && strcmp(method, "ping") == 0) {
		cJSON_AddObjectToObject(m, "result");
	} else {
		cJSON *er = cJSON_AddObjectToObject(m, "error");
		cJSON_AddNumberToObject(er, "code", -32601);
		cJSON_AddStringToObject(er, "message", "method not found: this client offers no roots, sampling or elicitation");
	}
	int64_t until = nowms() + 5000;
	if (sendmsg_(c, m, until < deadline ? until : deadline, &e) < 0 && !c->http)
		die(c, "the server does not read its input (an answer to its request could not be written)");
	cJSON_Delete(m);
}

/* A notification of the server's: progress counted, log messages kept (capped), list_changed noted. */
static void note(struct mcp *c, const cJSON *msg)
{
	const char *method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, "method"));
	if (!method)
		return;
	if (strcmp(method, "notifications/tools/list_changed") == 0) {
		c->changed = 1;
	} else if (strcmp(method, "notifications/progress") == 0) {
		c->progress++;
	} else if (strcmp(method, "notifications/message") == 0 && c->log.len < LOG_MAX) {
		char *s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(msg, "params"));
		if (s) {
			logadd(c, "log: ", 5);
			logadd(c, s, strlen(s));
			logadd(c, "\n", 1);
		}
		free(s);
	}
}

/* Send a request and wait for its answer until deadline (monotonic ms): the result (owned by the
 * caller), or NULL with e (ERR_ABORT for a timeout or a stop of the run, after
 * notifications/cancelled; "error" for a JSON-RPC error). Every wait checks the deadline and the run's cancellation; what the server
 * sends meanwhile is bounded by MCPASKS and MCPNOTES. */
static cJSON *request(struct mcp *c, const char *method, cJSON *params, int64_t deadline, int *progress,
                      struct err *e)
{
	if (c->dead) {
		cJSON_Delete(params);
		errf(e, "the server is not running: %s", c->deadwhy);
		return NULL;
	}
	int64_t id = ++c->nextid, start = nowms();
	c->want = id;
	c->asks = c->notes = c->progress = 0;
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	cJSON_AddNumberToObject(m, "id", (double)id);
	cJSON_AddStringToObject(m, "method", method);
	if (!params)
		params = cJSON_CreateObject();
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	if (!meta && strcmp(method, "tools/call") == 0) {
		meta = cJSON_AddObjectToObject(params, "_meta");
		cJSON_AddNumberToObject(meta, "progressToken", (double)id);
	}
	cJSON_AddItemToObject(m, "params", params);
	c->requests++;
	int rc = sendmsg_(c, m, deadline, e);
	cJSON_Delete(m);
	struct http *h = c->http;
	cJSON *inbox = h ? h->inbox : cJSON_CreateArray();
	cJSON *answer = NULL;
	if (rc < 0 && e->kind != ERR_ABORT) {
		if (!h)
			cJSON_Delete(inbox);
		if (h)
			die(c, e->msg);
		if (progress)
			*progress = c->progress;
		return NULL;
	}
	int timedout = rc < 0, reconnects = 0;
	while (!answer && !timedout && !c->dead) {
		cJSON *msg;
		while (!answer && !c->dead && (msg = cJSON_DetachItemFromArray(inbox, 0))) {
			const cJSON *mid = cJSON_GetObjectItemCaseSensitive(msg, "id");
			if (!cJSON_GetObjectItemCaseSensitive(msg, "method") && cJSON_IsNumber(mid) &&
			    mid->valuedouble == (double)id) {
				answer = msg;
				break;
			}
			if (nowms() >= deadline || cancelled) {
				cJSON_Delete(msg);
				timedout = 1;
				break;
			}
			answerserver(c, msg, deadline); /* only the server's requests stay in the inbox */
			cJSON_Delete(msg);
		}
		if (answer || timedout || c->dead)
			break;
		if (nowms() >= deadline || cancelled) {
			timedout = 1;
			break;
		}
		if (h && h->sse.lastid.len && reconnects++ < 5) {
			/* the event stream closed before our answer: wait as the server asked, then take the
			   stream up again where it left off */
			int64_t wait = h->sse.retry > 0 ? h->sse.retry : 1000, left = deadline - nowms();
			if (wait > left)
				wait = left;
			struct pollfd pf = {cancelfd(), POLLIN, 0};
			poll(&pf, cancelfd() >= 0 ? 1 : 0, (int)wait);
			left = deadline - nowms();
			if (left > 0 && !cancelled && hpost(c, "GET", NULL, id, left, e) < 0 && e->kind != ERR_ABORT) {
				errctx(e, "taking up the event stream again");
				if (progress)
					*progress = c->progress;
				return NULL;
			}
			continue;
		}
		if (h) { /* every answer came with the POST's own response */
			if (!cJSON_GetArraySize(inbox)) {
				errf(e, "the server's response held no answer to %s", method);
				if (progress)
					*progress = c->progress;
				return NULL;
			}
			continue; /* the server's requests, answered above, may bring it */
		}
		int64_t left = deadline - nowms();
		if (sread(c, inbox, left > 200 ? 200 : (int)left) < 0)
			break;
	}
	if (!h)
		cJSON_Delete(inbox);
	else
		while (cJSON_GetArraySize(inbox))
			cJSON_DeleteItemFromArray(inbox, 0);
	if (progress)
		*progress = c->progress;
	if (c->dead && !answer) {
		errf(e, "%s", c->deadwhy);
		return NULL;
	}
	if (timedout) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "requestId", (double)id);
		cJSON_AddStringToObject(p, "reason", cancelled ? "the run was interrupted" : "timed out");
		if (!cancelled)
			notify(c, "notifications/cancelled", p);
		else
			cJSON_Delete(p);
		if (cancelled)
			errc(e, ERR_ABORT, "%s: the run was interrupted; cancelled", method);
		else
			errc(e, ERR_ABORT, "%s: no answer within %lld ms; cancelled", method, (long long)(deadline - start));
		return NULL;
	}
	cJSON *er = cJSON_GetObjectItemCaseSensitive(answer, "error");
	if (er) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(er, "code");
		const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(er, "message"));
		errf(e, "JSON-RPC error %d: %.600s", cJSON_IsNumber(code) ? code->valueint : 0, msg ? msg : "(no message)");
		cJSON_Delete(answer);
		return NULL;
	}
	cJSON *res = cJSON_DetachItemFromObjectCaseSensitive(answer, "result");
	cJSON_Delete(answer);
	if (!cJSON_IsObject(res)) {
		cJSON_Delete(res);
		errf(e, "%s: the answer has no result object", method);
		return NULL;
	}
	return res;
}

/* ---- lifecycle ---- */

static void toolsfree(struct mcp *c)
{
	for (size_t i = 0; i < c->ntools; i++) {
		free(c->tools[i].name);
		free(c->tools[i].description);
		cJSON_Delete(c->tools[i].input);
		cJSON_Delete(c->tools[i].output);
	}
	free(c->tools);
	c->tools = NULL;
	c->ntools = 0;
}

static int toolname_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 128)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-' || *s == '.'))
			return 0;
	return 1;
}

/* The bytes a copy of j holds in memory (its nodes and strings); depth is bounded by JSONB_DEPTH. */
static size_t jsonsize(const cJSON *j)
{
	size_t n = 0;
	for (; j; j = j->next) {
		n += sizeof *j + (j->string ? strlen(j->string) + 1 : 0) + (j->valuestring ? strlen(j->valuestring) + 1 : 0);
		n += jsonsize(j->child);
	}
	return n;
}

/* A tool list too large to keep: the whole list is refused (starting the server puts its name first). */
static int listover(struct mcp *c, char *cursor, struct err *e, const char *what)
{
	free(cursor);
	toolsfree(c);
	return errc(e, ERR_FAIL, "tools/list: %s; a server's list is kept to %d tools, %d KiB a "
	                         "tool and %d MiB in all (docs/security.md, \"Hostile bytes\")",
	            what, LIST_TOOLS, TOOL_BYTES >> 10, LIST_BYTES >> 20);
}

/* The end of an exchange begun now (a request, or a whole tool list): the server's timeout, and
 * never past the job's end (jobend, monotonic ms; 0: none). */
static int64_t exchangeend(const struct mcp *c, int64_t jobend)
{
	int64_t end = nowms() + c->conf->timeout_ms;
	return jobend && jobend < end ? jobend : end;
}

/* The server's tools, every page asked for by deadline. */
static int mcprelist(struct mcp *c, int64_t deadline, struct err *e)
{
	char *cursor = NULL;
	size_t total = 0;
	toolsfree(c);
	c->changed = 0;
	for (int page = 0; page < LIST_PAGES; page++) {
		cJSON *p = cJSON_CreateObject();
		if (cursor)
			cJSON_AddStringToObject(p, "cursor", cursor);
		free(cursor);
		cursor = NULL;
		cJSON *res = request(c, "tools/list", p, deadline, NULL, e);
		if (!res)
			return errctx(e, "tools/list");
		cJSON *tools = cJSON_GetObjectItemCaseSensitive(res, "tools"), *t;
		cJSON_ArrayForEach(t, tools)
		{
			const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "name"));
			cJSON *in = cJSON_GetObjectItemCaseSensitive(t, "inputSchema");
			if (!name || !toolname_ok(name) || !cJSON_IsObject(in) || mcpfind(c, name))
				continue; /* a name a model API would refuse, or a tool without a schema */
			const char *d = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "description"));
			cJSON *out = cJSON_GetObjectItemCaseSensitive(t, "outputSchema");
			size_t size = strlen(name) + (d ? strlen(d) : 0) + jsonsize(in->child) +
			              (cJSON_IsObject(out) ? jsonsize(out->child) : 0);
			char what[200];
			if (c->ntools >= LIST_TOOLS)
				snprintf(what, sizeof what, "more than %d tools", LIST_TOOLS);
			else if (size > TOOL_BYTES)
				snprintf(what, sizeof what, "tool %s takes %zu KiB (description and schemas)", name, size >> 10);
			else if (total + size > LIST_BYTES)
				snprintf(what, sizeof what, "the tools take more than %d MiB", LIST_BYTES >> 20);
			else
				what[0] = 0;
			if (what[0]) {
				cJSON_Delete(res);
				return listover(c, cursor, e, what);
			}
			total += size;
			c->tools = xrealloc(c->tools, (c->ntools + 1) * sizeof *c->tools);
			struct mcptool *mt = &c->tools[c->ntools++];
			memset(mt, 0, sizeof *mt);
			mt->name = xstrdup(name);
			mt->description = d ? xstrdup(d) : NULL;
			mt->input = cJSON_Duplicate(in, 1);
			const cJSON *ann = cJSON_GetObjectItemCaseSensitive(t, "annotations");
			mt->readonly = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ann, "readOnlyHint"));
			if (cJSON_IsObject(out)) {
				struct buf ptr = {0};
				struct err se;
				mt->output = cJSON_Duplicate(out, 1);
				mt->checkable = schemacheck(out, &ptr, &se) == 0;
				buffree(&ptr);
			}
		}
		const char *next = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "nextCursor"));
		if (next && *next)
			cursor = xstrdup(next);
		cJSON_Delete(res);
		if (!cursor)
			return 0;
	}
	free(cursor);
	return errf(e, "tools/list: more than %d pages", LIST_PAGES);
}

static int initialize(struct mcp *c, int64_t jobend, struct err *e)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "protocolVersion", mcpversions[0]);
	cJSON_AddObjectToObject(p, "capabilities");
	cJSON *info = cJSON_AddObjectToObject(p, "clientInfo");
	cJSON_AddStringToObject(info, "name", "nightshift");
	cJSON_AddStringToObject(info, "version", NS_VERSION);
	cJSON *res = request(c, "initialize", p, exchangeend(c, jobend), NULL, e);
	if (!res)
		return errctx(e, "initialize");
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "protocolVersion"));
	int known = 0;
	for (size_t i = 0; v && mcpversions[i]; i++)
		known |= strcmp(v, mcpversions[i]) == 0;
	if (!known) {
		errf(e, "initialize: the server speaks protocol revision %.40s, not one of ours (%s, %s, %s, %s)",
		     v ? v : "(none)", mcpversions[0], mcpversions[1], mcpversions[2], mcpversions[3]);
		cJSON_Delete(res);
		return -1;
	}
	snprintf(c->version, sizeof c->version, "%s", v);
	c->serverinfo = cJSON_DetachItemFromObjectCaseSensitive(res, "serverInfo");
	int tools = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "capabilities"),
	                                                             "tools"));
	cJSON_Delete(res);
	notify(c, "notifications/initialized", NULL);
	if (!tools)
		return 0; /* no tools capability: nothing to list */
	return mcprelist(c, exchangeend(c, jobend), e);
}

/* Whether the job's network setting lets the runner reach url: host lets everything through,
 * none nothing, an allow list the entries that name its host (or hold its address) and port.
 * Fills h's host, port and the entry that admits it. */
static int netallows(struct http *h, const struct sandboxconf *sc, const char *url)
{
	h->nethost = sc->network_host;
	h->allow = sc->network_allow && sc->nallow ? xcalloc(sc->nallow, sizeof *h->allow) : NULL;
	for (size_t i = 0; h->allow && i < sc->nallow; i++)
		netrulecopy(&h->allow[i], &sc->allow[i]);
	h->nallow = h->allow ? sc->nallow : 0;
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL;
	int ok = 0;
	if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
		size_t n = strlen(host);
		if (n > 2 && host[0] == '[' && host[n - 1] == ']')
			memmove(host, host + 1, n - 2), host[n - 2] = 0;
		for (char *p = host; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p += 'a' - 'A';
		snprintf(h->host, sizeof h->host, "%s", host);
		h->port = atoi(port);
		unsigned char addr[16];
		int fam = inet_pton(AF_INET, host, addr) == 1 ? AF_INET : inet_pton(AF_INET6, host, addr) == 1 ? AF_INET6 : 0;
		ok = sc->network_host;
		for (size_t i = 0; i < h->nallow && !ok; i++)
			if (netruleport(&h->allow[i], h->port) &&
			    (fam ? netruleaddr(&h->allow[i], fam, addr) : netrulename(&h->allow[i], host)))
				ok = 1, h->rule = h->allow[i].text;
	}
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return ok;
}

static int httpopen(struct mcp *c, const struct manifest *m, const struct sbxconf *sc, struct err *e)
{
	struct http *h = xcalloc(1, sizeof *h);
	c->http = h;
	h->inbox = cJSON_CreateArray();
	if (!netallows(h, sc->conf, c->conf->url))
		return errf(e, "the job's sandbox.network does not allow %s: set it to host, or name the server's host "
		               "in network.allow", c->conf->url);
	/* the test-only table of names the egress proxy takes too (name=address, comma-separated) */
	const char *t = getenv("NIGHTSHIFT_TEST_RESOLVE");
	if (t && *t) {
		char *copy = xstrdup(t), *save = NULL;
		for (char *p = strtok_r(copy, ", ", &save); p; p = strtok_r(NULL, ", ", &save)) {
			char *eq = strchr(p, '=');
			if (!eq || (size_t)(eq - p) != strlen(h->host) || strncmp(p, h->host, eq - p) != 0)
				continue;
			char *r = xasprintf(strchr(eq + 1, ':') ? "%s:%d:[%s]" : "%s:%d:%s", h->host, h->port, eq + 1);
			h->resolve = curl_slist_append(h->resolve, r);
			free(r);
		}
		free(copy);
	}
	if (!(h->curl = curl_easy_init()))
		return errf(e, "curl_easy_init failed");
	for (size_t i = 0; i < c->conf->headers.n; i++) {
		char *v = mcpheaderexpand(m, c->conf->headers.v[i], e);
		if (!v)
			return -1;
		strvadd(&h->headers, v);
		free(v);
	}
	return 0;
}

cJSON *mcpnet(struct mcp *c, int ending)
{
	if (c && c->sbx) { /* a stdio server: what its sandbox's proxy recorded */
		struct netconn *v;
		struct netmore more;
		size_t n = sbxnet(c->sbx, &v, &more, ending);
		for (size_t i = 0; i < n + (more.n > 0); i++) {
			if (!c->net)
				c->net = cJSON_CreateArray();
			cJSON *ev = cJSON_CreateObject();
			cJSON_AddStringToObject(ev, "mcp_server", c->conf->name);
			if (i == n) { /* past EGRESSKEEP: counted */
				char why[160];
				snprintf(why, sizeof why, "%lld more connections (%lld refused) past the %d recorded",
				         (long long)more.n, (long long)more.refused, EGRESSKEEP);
				cJSON_AddStringToObject(ev, "decision", more.refused ? "deny" : "allow");
				cJSON_AddStringToObject(ev, "rule", "unrecorded");
				cJSON_AddStringToObject(ev, "reason", why);
				cJSON_AddNumberToObject(ev, "connections_unrecorded", (double)more.n);
				cJSON_AddItemToArray(c->net, ev);
				break;
			}
			cJSON_AddStringToObject(ev, "method", v[i].method);
			cJSON_AddStringToObject(ev, "host", v[i].host);
			cJSON_AddNumberToObject(ev, "port", v[i].port);
			cJSON_AddStringToObject(ev, "address", v[i].addr);
			cJSON_AddStringToObject(ev, "decision", v[i].allowed ? "allow" : "deny");
			cJSON_AddStringToObject(ev, "rule", v[i].rule);
			if (v[i].reason[0])
				cJSON_AddStringToObject(ev, "reason", v[i].reason);
			cJSON_AddNumberToObject(ev, "bytes_sent", (double)v[i].sent);
			cJSON_AddNumberToObject(ev, "bytes_received", (double)v[i].received);
			cJSON_AddNumberToObject(ev, "duration_ms", (double)v[i].duration_ms);
			cJSON_AddItemToArray(c->net, ev);
		}
		free(v);
	}
	cJSON *n = c ? c->net : NULL;
	if (c)
		c->net = NULL;
	return n;
}

int mcpopen(struct mcp **cp, const struct mcpserver *conf, const struct sbxconf *sc, const struct manifest *m,
            int64_t jobend, cJSON **net, struct err *e)
{
	struct mcp *c = xcalloc(1, sizeof *c);
	c->conf = conf;
	c->proc.in = c->proc.out = c->proc.err = -1;
	*cp = NULL;
	int rc;
	if (conf->url) {
		rc = httpopen(c, m, sc, e);
	} else {
		rc = sbxopen(&c->sbx, sc, e);
		if (rc == 0)
			rc = sbxspawn(c->sbx, conf->command.v, &c->proc, e);
		if (rc == 0)
			fcntl(c->proc.in, F_SETFL, O_NONBLOCK);
	}
	if (rc == 0)
		rc = initialize(c, jobend, e);
	if (rc < 0) {
		if (!conf->url && c->proc.out >= 0) {
			/* what the server said on its way out is the best explanation */
			cJSON *junk = cJSON_CreateArray();
			for (int i = 0; i < 5 && c->proc.err >= 0; i++)
				sread(c, junk, 100);
			cJSON_Delete(junk);
			char *log = mcplog(c);
			if (log) {
				size_t n = strlen(log);
				while (n && log[n - 1] == '\n')
					log[--n] = 0;
				size_t at = strlen(e->msg);
				snprintf(e->msg + at, sizeof e->msg - at, " (its stderr: %.300s)", n > 300 ? log + n - 300 : log);
			}
			free(log);
		}
		if (conf->url && c->log.len) { /* a connection refused: why */
			char *log = mcplog(c);
			size_t n = strlen(log), at = strlen(e->msg);
			while (n && log[n - 1] == '\n')
				log[--n] = 0;
			snprintf(e->msg + at, sizeof e->msg - at, " (%.400s)", log);
			free(log);
		}
		if (net)
			*net = mcpnet(c, 1);
		mcpclose(c);
		return errctx(e, "MCP server '%s'", conf->name);
	}
	if (net)
		*net = mcpnet(c, 0);
	*cp = c;
	return 0;
}

static const struct mcptool *mcpfind(const struct mcp *c, const char *tool)
{
	for (size_t i = 0; i < c->ntools; i++)
		if (strcmp(c->tools[i].name, tool) == 0)
			return &c->tools[i];
	return NULL;
}

/* The content blocks as text for the model; what cannot be shown is noted. */
static void content(const cJSON *blocks, struct buf *out, cJSON *kinds)
{
	const cJSON *b;
	cJSON_ArrayForEach(b, blocks)
	{
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "type"));
		const char *mime = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "mimeType"));
		cJSON_AddItemToArray(kinds, cJSON_CreateString(type ? type : "?"));
		if (out->len)
			bufputc(out, '\n');
		if (type && strcmp(type, "text") == 0) {
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "text"));
			bufputs(out, t ? t : "");
		} else if (type && (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0)) {
			const char *d = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "data"));
			bufprintf(out, "[%s content (%s, %zu bytes of base64) not shown: this runner passes text only]", type,
			          mime ? mime : "no type", d ? strlen(d) : (size_t)0);
		} else if (type && strcmp(type, "resource") == 0) {
			const cJSON *r = cJSON_GetObjectItemCaseSensitive(b, "resource");
			const char *uri = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "uri"));
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "text"));
			mime = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "mimeType"));
			if (t)
				bufprintf(out, "[resource %s]\n%s", uri ? uri : "", t);
			else
				bufprintf(out, "[resource %s (%s): binary, not shown]", uri ? uri : "", mime ? mime : "no type");
		} else if (type && strcmp(type, "resource_link") == 0) {
			const char *uri = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "uri"));
			const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "name"));
			bufprintf(out, "[resource link %s%s%s]", uri ? uri : "", name ? " " : "", name ? name : "");
		} else {
			bufprintf(out, "[content of type %s not shown]", type ? type : "(none)");
		}
	}
}

void mcpcall(struct mcp *c, const char *tool, const cJSON *args, int64_t jobend, struct mcpresult *r)
{
	struct err e = {0};
	int progress = 0;
	memset(r, 0, sizeof *r);
	r->event = cJSON_CreateObject();
	if (c->changed) {
		struct err le;
		if (mcprelist(c, exchangeend(c, jobend), &le) < 0)
			cJSON_AddStringToObject(r->event, "relist_error", le.msg);
		else
			cJSON_AddTrueToObject(r->event, "relisted");
	}
	const struct mcptool *t = mcpfind(c, tool);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "name", tool);
	cJSON_AddItemToObject(p, "arguments", args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject());
	int64_t start = nowms();
	cJSON *res = request(c, "tools/call", p, exchangeend(c, jobend), &progress, &e);
	r->server_ms = nowms() - start;
	if (progress)
		cJSON_AddNumberToObject(r->event, "progress_notifications", progress);
	if (!res) {
		r->failed = 1;
		r->text = xasprintf("MCP server %s, tool %s: %s", c->conf->name, tool, e.msg);
		cJSON_AddStringToObject(r->event, "error", e.msg);
		if (e.kind == ERR_ABORT)
			cJSON_AddTrueToObject(r->event, "timed_out");
		return;
	}
	struct buf out = {0};
	cJSON *kinds = cJSON_AddArrayToObject(r->event, "content");
	content(cJSON_GetObjectItemCaseSensitive(res, "content"), &out, kinds);
	r->failed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "isError"));
	cJSON *sc = cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
	if (sc && out.len == 0) {
		char *s = cJSON_PrintUnformatted(sc);
		bufputs(&out, s);
		free(s);
	}
	if (t && t->output && !r->failed) {
		struct buf errs = {0};
		if (!t->checkable) {
			cJSON_AddStringToObject(r->event, "output_schema", "not checked: it uses keywords beyond nightshift's subset");
		} else if (!cJSON_IsObject(sc)) {
			r->failed = 1;
			bufputs(&out, "\n[the tool declares an outputSchema but its result has no structuredContent object]");
			cJSON_AddStringToObject(r->event, "output_schema", "no structuredContent");
		} else if (schemavalidate(t->output, sc, &errs) > 0) {
			r->failed = 1;
			bufprintf(&out, "\n[structuredContent does not match the tool's outputSchema:\n%s]", errs.data);
			cJSON_AddStringToObject(r->event, "output_schema", errs.data);
		} else {
			cJSON_AddStringToObject(r->event, "output_schema", "valid");
		}
		buffree(&errs);
	}
	if (out.len > TEXT_MAX) {
		out.len = TEXT_MAX;
		out.data[out.len] = 0;
		bufputs(&out, "\n[cut at 4 MiB]");
	}
	r->text = out.data ? out.data : xstrdup("");
	cJSON_Delete(res);
}

char *mcplog(struct mcp *c)
{
	if (!c->log.len)
		return NULL;
	char *s = c->log.data;
	memset(&c->log, 0, sizeof c->log);
	return s;
}

void mcpclose(struct mcp *c)
{
	if (!c)
		return;
	struct http *h = c->http;
	if (h) {
		if (h->session && h->curl) {
			struct err e;
			hpost(c, "DELETE", NULL, 0, 2000, &e); /* end the session; a server may refuse (405) */
		}
		if (h->curl)
			curl_easy_cleanup(h->curl);
		curl_slist_free_all(h->resolve);
		for (size_t i = 0; i < h->nallow; i++)
			netrulefree(&h->allow[i]);
		free(h->allow);
		free(h->session);
		strvfree(&h->headers);
		cJSON_Delete(h->inbox);
		buffree(&h->body);
		buffree(&h->ctype);
		buffree(&h->sid);
		rpcssefree(&h->sse);
		free(h);
	}
	/* stdio: closing its input is the polite end; the sandbox's close is the sure one */
	if (c->proc.in >= 0)
		close(c->proc.in);
	sbxclose(c->sbx);
	if (c->proc.out >= 0)
		close(c->proc.out);
	if (c->proc.err >= 0)
		close(c->proc.err);
	toolsfree(c);
	cJSON_Delete(c->serverinfo);
	cJSON_Delete(c->net);
	buffree(&c->log);
	buffree(&c->in.b);
	free(c);
}

void mcpresultfree(struct mcpresult *r)
{
	free(r->text);
	cJSON_Delete(r->event);
	memset(r, 0, sizeof *r);
}
