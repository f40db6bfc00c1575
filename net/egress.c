/* egress: one thread accepts on the unix socket, one thread per connection serves it.
   A connection: read the request head (at most 16 KiB, 30 s); CONNECT host:port, or an
   absolute http:// URL; find an allow entry for host:port (name, *.domain, or an address
   or range holding the literal); resolve the name here (the sandbox has no DNS); drop every
   address of a special kind (loopback, private, link-local, metadata, ...) that no address
   entry holds, so that a name which resolves to 127.0.0.1 or 169.254.169.254 gets nowhere;
   connect to the first address left; then pass bytes both ways with splice (pump.c) until
   both sides end. A refusal is an HTTP 403 whose body names the rule; an upstream that
   cannot be reached a 502. The record of each connection is kept for egresstake.

   NIGHTSHIFT_TEST_RESOLVE="name=address,..." (for tests only) answers those names without
   DNS; the address checks apply to its answers as to any. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "../manifest/netrule.h"
#include "../util/cancel.h"
#include "egress.h"
#include "httphead.h"
#include "pump.h"

#define HEADMS 30000
#define CONNECTMS 10000
#define MAXCONNS 256  /* connections one proxy serves at once, at most */
#define CONNFDS 6     /* descriptors a tunnel holds: client, upstream, a pipe each way */
#define FDRESERVE 256 /* descriptors kept for the runner itself, at least (a quarter of the limit) */
#define MAXADDRS 16
#define CUTMS 2000 /* how long egresstake waits for the connections it cut to end */

struct conn {
	struct egress *g;
	int client, upstream;
	struct netconn rec;
	struct conn *next;
};

struct egress {
	struct netrule *allow;
	size_t nallow;
	char *dir, *sock;
	int lfd, wake[2];
	int tcp;     /* egresslisten's listener, or -1 */
	int retired; /* the one it replaced, closed by the acceptor once it no longer polls it */
	pthread_t acceptor;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stopping;
	struct conn *open; /* being served */
	int nopen;
	struct netconn *done; /* ended, not yet taken */
	size_t ndone;
	struct netmore more; /* ended past EGRESSKEEP, not yet taken */
	struct strv resolve; /* the test-only table: name=address */
	int64_t seq;         /* connections accepted so far */
};

/* ---- addresses ---- */

static int in4(const unsigned char *a, unsigned net, int bits)
{
	uint32_t v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	return bits == 0 || (v >> (32 - bits)) == (net >> (32 - bits));
}

static const char *class4(const unsigned char *a)
{
	if (a[0] == 169 && a[1] == 254 && a[2] == 169 && a[3] == 254)
		return "cloud-metadata";
	if (in4(a, 0x64646400, 24) && a[3] == 200)
		return "cloud-metadata";
	static const struct { unsigned net; int bits; const char *what; } special[] = {
		{0x00000000, 8, "this-network"},   {0x0a000000, 8, "private"},        {0x64400000, 10, "shared"},
		{0x7f000000, 8, "loopback"},       {0xa9fe0000, 16, "link-local"},    {0xac100000, 12, "private"},
		{0xc0000000, 24, "ietf-protocol"}, {0xc0a80000, 16, "private"},       {0xc6120000, 15, "benchmarking"},
		{0xe0000000, 4, "multicast"},      {0xf0000000, 4, "reserved"},       {0xc0000200, 24, "documentation"},
		{0xc6336400, 24, "documentation"}, {0xcb007100, 24, "documentation"},
	};
	for (size_t i = 0; i < sizeof special / sizeof *special; i++)
		if (in4(a, special[i].net, special[i].bits))
			return special[i].what;
	return NULL;
}

/* How this machine's routing table (of the runner's network namespace) takes a connection to
   a: "this-host" when it stays on this machine (an address of one of its interfaces, or a
   local route), "broadcast", or NULL when it leaves. Asked of the kernel (RTM_GETROUTE), as the
   connection would be routed; when the kernel cannot be asked, "unroutable" (fail closed). */
static const char *routeclass(int family, const unsigned char *a)
{
	size_t alen = family == AF_INET ? 4 : 16;
	struct {
		struct nlmsghdr n;
		struct rtmsg r;
		char attr[64];
	} req;
	memset(&req, 0, sizeof req);
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof req.r);
	req.n.nlmsg_type = RTM_GETROUTE;
	req.n.nlmsg_flags = NLM_F_REQUEST;
	req.n.nlmsg_seq = 1;
	req.r.rtm_family = (unsigned char)family;
	req.r.rtm_dst_len = (unsigned char)(alen * 8);
	struct rtattr *rta = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.n.nlmsg_len));
	rta->rta_type = RTA_DST;
	rta->rta_len = (unsigned short)RTA_LENGTH(alen);
	memcpy(RTA_DATA(rta), a, alen);
	req.n.nlmsg_len = NLMSG_ALIGN(req.n.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return "unroutable";
	struct timeval tv = {1, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	const char *cls = "unroutable";
	union {
		struct nlmsghdr n;
		char b[8192];
	} resp;
	if (sendto(fd, &req, req.n.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0)
		goto out;
	for (int tries = 0; tries < 8; tries++) {
		ssize_t r = recv(fd, resp.b, sizeof resp.b, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (struct nlmsghdr *h = &resp.n; NLMSG_OK(h, (size_t)r); h = NLMSG_NEXT(h, r)) {
			if (h->nlmsg_seq != 1)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) { /* no route: it goes nowhere, and not here */
				cls = NULL;
				goto out;
			}
			if (h->nlmsg_type == RTM_NEWROUTE) {
				const struct rtmsg *m = NLMSG_DATA(h);
				cls = m->rtm_type == RTN_LOCAL ? "this-host" : m->rtm_type == RTN_BROADCAST ? "broadcast" : NULL;
				goto out;
			}
		}
	}
out:
	close(fd);
	return cls;
}

/* The kind by the address alone (the ranges of RFC 6890 and the like). */
static const char *addrclass(int family, const unsigned char *a)
{
	static const unsigned char zero[16];
	if (family == AF_INET)
		return class4(a);
	if (memcmp(a, zero, 15) == 0 && (a[15] == 0 || a[15] == 1))
		return a[15] ? "loopback" : "unspecified";
	/* Forms that carry an IPv4 address: mapped, compatible, NAT64, 6to4. */
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
	if (memcmp(a, mapped, 12) == 0 || memcmp(a, zero, 12) == 0 || memcmp(a, nat64, 12) == 0) {
		const char *c = class4(a + 12);
		return c ? c : memcmp(a, nat64, 12) == 0 ? NULL : "ipv4-mapped";
	}
	if (a[0] == 0x20 && a[1] == 0x02)
		return class4(a + 2) ? class4(a + 2) : NULL;
	if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b && a[4] == 0 && a[5] == 1)
		return "local-nat64";
	if ((a[0] & 0xfe) == 0xfc)
		return a[0] == 0xfd && a[1] == 0x00 && a[2] == 0x0e && a[3] == 0xc2 ? "cloud-metadata" : "unique-local";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return "link-local";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
		return "site-local";
	if (a[0] == 0xff)
		return "multicast";
	if (a[0] == 0x01 && a[1] == 0 && memcmp(a + 2, zero, 6) == 0)
		return "discard";
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0)
		return "teredo";
	if ((a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8) || (a[0] == 0x3f && a[1] == 0xff && a[2] < 0x10))
		return "documentation";
	return NULL;
}

const char *egressclass(int family, const unsigned char *a)
{
	const char *cls = addrclass(family, a);
	return cls ? cls : routeclass(family, a);
}

/* ---- decisions ---- */

/* The entry that admits host:port, or NULL. */
static const struct netrule *admits(const struct egress *g, const char *host, int port)
{
	unsigned char a[16];
	int fam = inet_pton(AF_INET, host, a) == 1 ? AF_INET : inet_pton(AF_INET6, host, a) == 1 ? AF_INET6 : 0;
	for (size_t i = 0; i < g->nallow; i++) {
		const struct netrule *r = &g->allow[i];
		if (!netruleport(r, port))
			continue;
		if (fam ? netruleaddr(r, fam, a) : netrulename(r, host))
			return r;
	}
	return NULL;
}

/* The address entry that holds a special address for this port, or NULL. */
static const struct netrule *holds(const struct egress *g, int family, const unsigned char *a, int port)
{
	for (size_t i = 0; i < g->nallow; i++)
		if (netruleport(&g->allow[i], port) && netruleaddr(&g->allow[i], family, a))
			return &g->allow[i];
	return NULL;
}

struct addr {
	int family;
	unsigned char a[16];
};

/* Resolve host: an IP literal, the test table, or getaddrinfo. The count, or -1 with why. */
static int resolve(const struct egress *g, const char *host, struct addr *out, int max, char *why, size_t wn)
{
	int n = 0;
	if (inet_pton(AF_INET, host, out[0].a) == 1) {
		out[0].family = AF_INET;
		return 1;
	}
	if (inet_pton(AF_INET6, host, out[0].a) == 1) {
		out[0].family = AF_INET6;
		return 1;
	}
	size_t hl = strlen(host);
	for (size_t i = 0; i < g->resolve.n && n < max; i++) {
		const char *t = g->resolve.v[i];
		if (strncmp(t, host, hl) == 0 && t[hl] == '=') {
			if (inet_pton(AF_INET, t + hl + 1, out[n].a) == 1)
				out[n++].family = AF_INET;
			else if (inet_pton(AF_INET6, t + hl + 1, out[n].a) == 1)
				out[n++].family = AF_INET6;
		}
	}
	if (n)
		return n;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0) {
		snprintf(why, wn, "%s does not resolve: %s", host, gai_strerror(rc));
		return -1;
	}
	for (struct addrinfo *ai = res; ai && n < max; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET) {
			memcpy(out[n].a, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
			out[n++].family = AF_INET;
		} else if (ai->ai_family == AF_INET6) {
			memcpy(out[n].a, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
			out[n++].family = AF_INET6;
		}
	}
	freeaddrinfo(res);
	if (!n)
		snprintf(why, wn, "%s has no IPv4 or IPv6 address", host);
	return n ? n : -1;
}

static void addrtext(const struct addr *a, char *out, size_t n)
{
	inet_ntop(a->family, a->a, out, n);
}

/* ---- the connection ---- */

static int stopping(struct egress *g)
{
	pthread_mutex_lock(&g->mu);
	int s = g->stopping;
	pthread_mutex_unlock(&g->mu);
	return s || cancelled;
}

static void sendall(int fd, const char *p, size_t n)
{
	int64_t end = nowms() + 5000;
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w > 0) {
			p += w, n -= w;
			continue;
		}
		if (w < 0 && (errno == EAGAIN || errno == EINTR) && nowms() < end) {
			struct pollfd pf = {fd, POLLOUT, 0};
			poll(&pf, 1, 100);
			continue;
		}
		return;
	}
}

/* Answer with a status and a plain-text body, and record it as the reason. */
static void answer(struct conn *c, int status, const char *title, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void answer(struct conn *c, int status, const char *title, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->rec.reason, sizeof c->rec.reason, fmt, ap);
	va_end(ap);
	char head[256];
	int body = (int)strlen(c->rec.reason) + (int)strlen("nightshift egress: \n");
	int hn = snprintf(head, sizeof head,
	                  "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n"
	                  "Connection: close\r\nX-Nightshift-Egress: %s\r\n\r\n",
	                  status, title, body, c->rec.allowed ? "upstream" : "refused");
	sendall(c->client, head, (size_t)hn);
	sendall(c->client, "nightshift egress: ", strlen("nightshift egress: "));
	sendall(c->client, c->rec.reason, strlen(c->rec.reason));
	sendall(c->client, "\n", 1);
	/* A lingering close: what the client still sends is read and dropped for a while (1 s, 1 MiB at
	 * most), as closing with unread bytes resets the connection and can take the answer with it. */
	shutdown(c->client, SHUT_WR);
	char sink[16384];
	int64_t end = nowms() + 1000;
	for (size_t got = 0; got < ((size_t)1 << 20) && nowms() < end;) {
		struct pollfd pf = {c->client, POLLIN, 0};
		if (poll(&pf, 1, (int)(end - nowms())) <= 0)
			break;
		ssize_t n = recv(c->client, sink, sizeof sink, MSG_DONTWAIT);
		if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
			break;
		got += n > 0 ? (size_t)n : 0;
	}
}

static void refuse(struct conn *c, const char *rule, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(struct conn *c, const char *rule, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	c->rec.allowed = 0;
	snprintf(c->rec.rule, sizeof c->rec.rule, "%s", rule);
	answer(c, 403, "Forbidden", "refused by rule %s: %s", rule, why);
}

/* Read the request head into b and check it (httphead.c) as it comes: 1 with h filled, or -1
   with why (malformed, over HEADMAX, not whole within HEADMS, or the proxy stopping). */
static int readhead(struct conn *c, struct buf *b, struct reqhead *h, const char **why)
{
	int64_t end = nowms() + HEADMS;
	for (;;) {
		int rc = httphead(b->data ? b->data : "", b->len, h, why);
		if (rc != 0)
			return rc;
		if (nowms() >= end || stopping(c->g)) {
			*why = "no complete request head came within 30 s";
			return -1;
		}
		struct pollfd pf = {c->client, POLLIN, 0};
		if (poll(&pf, 1, 200) <= 0)
			continue;
		bufgrow(b, HEADMAX - b->len);
		ssize_t r = recv(c->client, b->data + b->len, HEADMAX - b->len, 0);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			*why = "the client ended before a complete request head";
			return -1;
		}
		b->len += r;
		b->data[b->len] = 0;
	}
}

/* Split "host:port", "[v6]:port" or "host" (port def) into c->rec; 0, or -1 when malformed. */
static int hostport(struct conn *c, const char *s, size_t n, int def)
{
	char tmp[300];
	if (n == 0 || n >= sizeof tmp)
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	char *host = tmp, *port = NULL;
	if (tmp[0] == '[') {
		char *close = strchr(tmp, ']');
		if (!close || (close[1] && close[1] != ':'))
			return -1;
		*close = 0;
		host = tmp + 1;
		port = close[1] ? close + 2 : NULL;
		unsigned char a[16];
		if (inet_pton(AF_INET6, host, a) != 1)
			return -1;
	} else {
		char *colon = strrchr(tmp, ':');
		if (colon) {
			*colon = 0;
			port = colon + 1;
		}
		if (strchr(tmp, ':'))
			return -1;
	}
	c->rec.port = def;
	if (port) {
		char *end;
		long p = strtol(port, &end, 10);
		if (!isdigit((unsigned char)*port) || *end || p < 1 || p > 65535)
			return -1;
		c->rec.port = (int)p;
	}
	size_t hl = strlen(host);
	while (hl && host[hl - 1] == '.')
		host[--hl] = 0;
	if (!hl || hl > 253) /* the longest name DNS has */
		return -1;
	for (size_t i = 0; i < hl; i++) {
		unsigned char ch = (unsigned char)host[i];
		if (!(isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == ':'))
			return -1;
		host[i] = (char)tolower(ch);
	}
	memcpy(c->rec.host, host, hl + 1);
	return 0;
}

/* Connect to the first address the policy leaves; the socket, or -1 (refused or failed, answered). */
static int dial(struct conn *c)
{
	struct egress *g = c->g;
	const struct netrule *r = admits(g, c->rec.host, c->rec.port);
	if (!r) {
		refuse(c, "no-entry", "no entry of sandbox.network.allow admits %s:%d (an entry without a port admits "
		                      "443 and 80)", c->rec.host, c->rec.port);
		return -1;
	}
	snprintf(c->rec.rule, sizeof c->rec.rule, "%s", r->text);
	struct addr addrs[MAXADDRS];
	char why[300] = "";
	int n = resolve(g, c->rec.host, addrs, MAXADDRS, why, sizeof why);
	if (n < 0) {
		c->rec.allowed = 1;
		answer(c, 502, "Bad Gateway", "%s", why);
		return -1;
	}
	const char *firstclass = NULL;
	int tried = 0;
	for (int i = 0; i < n; i++) {
		const char *cls = egressclass(addrs[i].family, addrs[i].a);
		const struct netrule *h = cls ? holds(g, addrs[i].family, addrs[i].a, c->rec.port) : NULL;
		if (cls && !h) {
			if (!firstclass) {
				firstclass = cls;
				addrtext(&addrs[i], c->rec.addr, sizeof c->rec.addr);
			}
			continue;
		}
		if (h && h != r) /* the address entry is what let it through */
			snprintf(c->rec.rule, sizeof c->rec.rule, "%s + %s", r->text, h->text);
		addrtext(&addrs[i], c->rec.addr, sizeof c->rec.addr);
		tried++;
		union {
			struct sockaddr sa;
			struct sockaddr_in in;
			struct sockaddr_in6 in6;
		} sa;
		socklen_t len;
		memset(&sa, 0, sizeof sa);
		if (addrs[i].family == AF_INET) {
			sa.in.sin_family = AF_INET;
			sa.in.sin_port = htons((uint16_t)c->rec.port);
			memcpy(&sa.in.sin_addr, addrs[i].a, 4);
			len = sizeof sa.in;
		} else {
			sa.in6.sin6_family = AF_INET6;
			sa.in6.sin6_port = htons((uint16_t)c->rec.port);
			memcpy(&sa.in6.sin6_addr, addrs[i].a, 16);
			len = sizeof sa.in6;
		}
		int fd = socket(addrs[i].family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			snprintf(why, sizeof why, "socket: %s", strerror(errno));
			continue;
		}
		int rc = connect(fd, &sa.sa, len), err = rc < 0 ? errno : 0;
		if (rc < 0 && err == EINPROGRESS) {
			int64_t end = nowms() + CONNECTMS;
			err = ETIMEDOUT;
			while (nowms() < end && !stopping(g)) {
				struct pollfd pf = {fd, POLLOUT, 0};
				if (poll(&pf, 1, 100) == 1) {
					socklen_t el = sizeof err;
					getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
					break;
				}
			}
		}
		if (!err) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			c->rec.allowed = 1;
			return fd;
		}
		snprintf(why, sizeof why, "connect to %s port %d: %s", c->rec.addr, c->rec.port, strerror(err));
		close(fd);
	}
	if (!tried) {
		char rule[64];
		snprintf(rule, sizeof rule, "special-address:%s", firstclass);
		refuse(c, rule, "%s resolves to %s, a %s address, which no entry of sandbox.network.allow names "
		                "(name the address or its range to allow it)",
		       c->rec.host, c->rec.addr, firstclass);
		return -1;
	}
	c->rec.allowed = 1;
	answer(c, 502, "Bad Gateway", "%s", why);
	return -1;
}

/* Does this header line (without CRLF) name a header that stays with the proxy? */
static int hopheader(const char *l, size_t n)
{
	static const char *const hop[] = {"proxy-connection:", "proxy-authorization:", "connection:", "keep-alive:"};
	for (size_t i = 0; i < sizeof hop / sizeof *hop; i++)
		if (n >= strlen(hop[i]) && strncasecmp(l, hop[i], strlen(hop[i])) == 0)
			return 1;
	return 0;
}

struct flow {
	int src, dst;
	int64_t moved;
};

static void *flowmain(void *arg)
{
	struct flow *f = arg;
	f->moved = pumpflow(f->src, f->dst);
	return NULL;
}

/* Pass bytes both ways until both sides end: the step's way on a second thread, blocking
   splice each way (egressclose shuts both sockets, which ends them). */
static void pass(struct conn *c, const char *early, size_t nearly)
{
	if (nearly)
		sendall(c->upstream, early, nearly);
	c->rec.sent += (int64_t)nearly;
	fcntl(c->client, F_SETFL, fcntl(c->client, F_GETFL) & ~O_NONBLOCK);
	fcntl(c->upstream, F_SETFL, fcntl(c->upstream, F_GETFL) & ~O_NONBLOCK);
	struct flow up = {c->client, c->upstream, 0};
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 * 1024);
	int threaded = pthread_create(&t, &at, flowmain, &up) == 0;
	pthread_attr_destroy(&at);
	if (!threaded) {
		shutdown(c->client, SHUT_RDWR);
		return;
	}
	int64_t down = pumpflow(c->upstream, c->client);
	if (down < 0)
		shutdown(c->client, SHUT_RDWR); /* no pipe: end the other way too */
	pthread_join(t, NULL);
	c->rec.sent += up.moved > 0 ? up.moved : 0;
	c->rec.received += down > 0 ? down : 0;
}

/* The first byte: a handover (EGRESSHANDOVER and a stream socket attached), which becomes
   the client, or the first byte of a request, kept in b. -1 when nothing usable came. */
static int takeover(struct conn *c, struct buf *b)
{
	int64_t end = nowms() + HEADMS;
	for (;;) {
		struct pollfd pf = {c->client, POLLIN, 0};
		if (poll(&pf, 1, 200) == 1)
			break;
		if (nowms() >= end || stopping(c->g))
			return -1;
	}
	char byte, cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = {&byte, 1};
	struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	ssize_t r = recvmsg(c->client, &h, MSG_CMSG_CLOEXEC);
	int fd = -1;
	for (struct cmsghdr *m = r >= 0 ? CMSG_FIRSTHDR(&h) : NULL; m; m = CMSG_NXTHDR(&h, m)) {
		if (m->cmsg_level != SOL_SOCKET || m->cmsg_type != SCM_RIGHTS)
			continue;
		int n = (int)((m->cmsg_len - CMSG_LEN(0)) / sizeof(int)), got[4];
		memcpy(got, CMSG_DATA(m), (n > 4 ? 4 : n) * sizeof(int));
		for (int i = 0; i < n && i < 4; i++) {
			if (fd < 0)
				fd = got[i];
			else
				close(got[i]);
		}
	}
	if (r <= 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (byte != EGRESSHANDOVER || fd < 0) {
		if (fd >= 0)
			close(fd);
		bufadd(b, &byte, 1);
		return 0;
	}
	struct stat st;
	int type = 0;
	socklen_t tl = sizeof type;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ||
	    type != SOCK_STREAM) {
		close(fd); /* only a connection is served: anything else a step sends is dropped */
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	pthread_mutex_lock(&c->g->mu);
	close(c->client);
	c->client = fd;
	pthread_mutex_unlock(&c->g->mu);
	return 0;
}

static void badrequest(struct conn *c, const char *why)
{
	snprintf(c->rec.rule, sizeof c->rec.rule, "bad-request");
	c->rec.allowed = 0;
	answer(c, 400, "Bad Request", "%s", why);
}

static void serveconn(struct conn *c)
{
	struct buf b = {0};
	struct reqhead rh;
	const char *why = "no request came within 30 s";
	if (takeover(c, &b) < 0 || readhead(c, &b, &rh, &why) < 0) {
		badrequest(c, why);
		buffree(&b);
		return;
	}
	size_t hl = rh.headlen;
	snprintf(c->rec.method, sizeof c->rec.method, "%s", rh.method);
	const char *target = rh.target, *tend = rh.target + rh.ntarget;
	if (strcmp(c->rec.method, "CONNECT") == 0) {
		if (hostport(c, target, rh.ntarget, 443) < 0) {
			badrequest(c, "CONNECT needs HOST:PORT");
		} else if ((c->upstream = dial(c)) >= 0) {
			static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
			sendall(c->client, ok, sizeof ok - 1);
			pass(c, b.data + hl, b.len - hl);
		}
		buffree(&b);
		return;
	}
	/* Plain HTTP: an absolute http:// URL, sent on as origin-form, one request per connection. */
	if (rh.ntarget < 7 || strncasecmp(target, "http://", 7) != 0) {
		badrequest(c, "this is a proxy: ask CONNECT HOST:PORT, or a plain request for an absolute "
		              "http:// URL (https:// goes through CONNECT)");
		buffree(&b);
		return;
	}
	const char *auth = target + 7, *path = auth;
	while (path < tend && *path != '/' && *path != '?')
		path++;
	if (memchr(auth, '@', path - auth) || hostport(c, auth, path - auth, 80) < 0) {
		badrequest(c, "the URL's host is not HOST[:PORT]");
		buffree(&b);
		return;
	}
	if ((c->upstream = dial(c)) < 0) {
		buffree(&b);
		return;
	}
	struct buf h = {0};
	bufputs(&h, c->rec.method);
	bufputs(&h, " ");
	if (path == tend || *path == '?')
		bufputs(&h, "/");
	bufadd(&h, path, tend - path);
	bufadd(&h, tend, rh.linelen - (size_t)(tend - b.data)); /* " HTTP/1.x\r\n" */
	const char *l;
	size_t ln, at = 0;
	while (httpheader(b.data, &rh, &at, &l, &ln))
		if (!hopheader(l, ln)) {
			bufadd(&h, l, ln);
			bufputs(&h, "\r\n");
		}
	bufputs(&h, "Connection: close\r\n\r\n");
	bufadd(&h, b.data + hl, b.len - hl);
	pass(c, h.data, h.len);
	buffree(&h);
	buffree(&b);
}

/* Tunnels open in every proxy of the process, against the descriptor limit: all proxies together
   leave the runner FDRESERVE (or a quarter of the limit) and each may hold half of the rest, so
   that no job's proxy can take every descriptor from the runner or from another job's proxy. */
static pthread_mutex_t fdmu = PTHREAD_MUTEX_INITIALIZER;
static int tunnels;

static int tunnelcap(void)
{
	struct rlimit rl;
	long lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 1 << 20;
	long reserve = lim / 4 > FDRESERVE ? lim / 4 : FDRESERVE;
	long all = (lim - reserve) / CONNFDS;
	return all > 0 ? (int)all : 0;
}

/* Connections one proxy serves at once: half of what all may hold, at most MAXCONNS. */
static int egresscap(void)
{
	int half = tunnelcap() / 2;
	return half < MAXCONNS ? half : MAXCONNS;
}

/* Take a place for one more tunnel of g (g->mu held): 0, or -1 when its cap or the process's is reached. */
static int tunneltake(struct egress *g)
{
	int ok;
	pthread_mutex_lock(&fdmu);
	ok = g->nopen < egresscap() && tunnels < tunnelcap();
	if (ok)
		tunnels++;
	pthread_mutex_unlock(&fdmu);
	return ok ? 0 : -1;
}

static void tunnelgive(void)
{
	pthread_mutex_lock(&fdmu);
	tunnels--;
	pthread_mutex_unlock(&fdmu);
}

/* Put an ended connection on the record (g->mu held): the first EGRESSKEEP whole, the rest counted. */
static void keep(struct egress *g, const struct netconn *rec)
{
	if (g->ndone < EGRESSKEEP) {
		g->done = xrealloc(g->done, (g->ndone + 1) * sizeof *g->done);
		g->done[g->ndone++] = *rec;
	} else {
		g->more.n++;
		g->more.refused += !rec->allowed;
	}
}

static void *connmain(void *arg)
{
	struct conn *c = arg;
	struct egress *g = c->g;
	serveconn(c);
	c->rec.duration_ms = nowms() - c->rec.start_ms;
	pthread_mutex_lock(&g->mu);
	for (struct conn **pp = &g->open; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	g->nopen--;
	tunnelgive();
	keep(g, &c->rec);
	if (c->upstream >= 0)
		close(c->upstream);
	close(c->client);
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	free(c);
	return NULL;
}

/* Serve one accepted connection on a thread of its own (or answer 503 when too many are open). */
static void start(struct egress *g, int fd)
{
	struct conn *c = xcalloc(1, sizeof *c);
	c->g = g;
	c->client = fd;
	c->upstream = -1;
	c->rec.start_ms = nowms();
	pthread_mutex_lock(&g->mu);
	c->rec.seq = g->seq++;
	int full = g->stopping || tunneltake(g) < 0;
	if (!full) {
		c->next = g->open;
		g->open = c;
		g->nopen++;
	}
	pthread_mutex_unlock(&g->mu);
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 * 1024);
	if (full || pthread_create(&t, &at, connmain, c) != 0) {
		if (!full) {
			pthread_mutex_lock(&g->mu);
			for (struct conn **pp = &g->open; *pp; pp = &(*pp)->next)
				if (*pp == c) {
					*pp = c->next;
					break;
				}
			g->nopen--;
			pthread_mutex_unlock(&g->mu);
			tunnelgive();
		}
		static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
		char drop[4096]; /* what the client sent already: unread, it would turn the close into a reset */
		for (int i = 0; i < 4 && recv(fd, drop, sizeof drop, MSG_DONTWAIT) > 0; i++)
			;
		sendall(fd, busy, sizeof busy - 1);
		shutdown(fd, SHUT_WR);
		close(fd);
		/* turned away before its request was read: on the record all the same, as refused */
		snprintf(c->rec.rule, sizeof c->rec.rule, "busy");
		snprintf(c->rec.reason, sizeof c->rec.reason, "503: this step's proxy already serves %d connections "
		         "(or the runner's descriptors are short)", egresscap());
		c->rec.duration_ms = nowms() - c->rec.start_ms;
		pthread_mutex_lock(&g->mu);
		keep(g, &c->rec);
		pthread_mutex_unlock(&g->mu);
		free(c);
	}
	pthread_attr_destroy(&at);
}

/* Accept on the unix socket and on the TCP listener, when there is one. */
static void *acceptmain(void *arg)
{
	struct egress *g = arg;
	for (;;) {
		pthread_mutex_lock(&g->mu);
		int tcp = g->tcp;
		pthread_mutex_unlock(&g->mu);
		struct pollfd pf[3] = {{g->wake[0], POLLIN, 0}, {g->lfd, POLLIN, 0}, {tcp, POLLIN, 0}};
		if (poll(pf, tcp >= 0 ? 3 : 2, -1) < 0 && errno != EINTR)
			break;
		if (pf[0].revents) {
			char x;
			(void)!read(g->wake[0], &x, 1);
			if (stopping(g))
				break;
			pthread_mutex_lock(&g->mu); /* the TCP listener changed */
			if (g->retired >= 0)
				close(g->retired);
			g->retired = -1;
			pthread_mutex_unlock(&g->mu);
			continue;
		}
		for (int k = 1; k < 3; k++) {
			if (!(pf[k].revents & POLLIN))
				continue;
			int fd = accept4(pf[k].fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0) {
				start(g, fd);
			} else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* out of descriptors: the connection waits in the queue; no busy loop meanwhile */
				struct pollfd w = {g->wake[0], POLLIN, 0};
				poll(&w, 1, 100);
			}
		}
	}
	return NULL;
}

int egressopen(struct egress **gp, const struct netrule *allow, size_t n, struct err *e)
{
	struct egress *g = xcalloc(1, sizeof *g);
	g->lfd = g->wake[0] = g->wake[1] = g->tcp = g->retired = -1;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->allow = n ? xcalloc(n, sizeof *g->allow) : NULL;
	for (size_t i = 0; i < n; i++)
		netrulecopy(&g->allow[i], &allow[i]);
	g->nallow = n;
	const char *t = getenv("NIGHTSHIFT_TEST_RESOLVE");
	if (t && *t) {
		char *copy = xstrdup(t), *save = NULL;
		for (char *p = strtok_r(copy, ", ", &save); p; p = strtok_r(NULL, ", ", &save))
			if (strchr(p, '='))
				strvadd(&g->resolve, p);
		free(copy);
	}
	if (!(g->dir = tmpfolder("nightshift-egress", e))) {
		errctx(e, "egress: a folder for the proxy's socket");
		goto fail;
	}
	g->sock = pathjoin(g->dir, "egress.sock");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(g->sock) >= sizeof sa.sun_path) {
		errf(e, "egress: the socket path %s is too long (set TMPDIR to a shorter folder)", g->sock);
		goto fail;
	}
	strcpy(sa.sun_path, g->sock);
	g->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (g->lfd < 0 || bind(g->lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(g->lfd, 128) < 0) {
		errf(e, "egress: the proxy's socket %s:", g->sock);
		goto fail;
	}
	chmod(g->sock, 0666); /* its folder (0700) keeps others on the host out */
	if (pipe2(g->wake, O_CLOEXEC) < 0) {
		errf(e, "egress: pipe:");
		goto fail;
	}
	if (pthread_create(&g->acceptor, NULL, acceptmain, g) != 0) {
		errf(e, "egress: could not start the proxy's thread");
		goto fail;
	}
	g->started = 1;
	*gp = g;
	return 0;
fail:
	egressclose(g);
	return -1;
}

const char *egresssock(const struct egress *g)
{
	return g->sock;
}

void egresslisten(struct egress *g, int fd)
{
	pthread_mutex_lock(&g->mu);
	if (g->retired >= 0)
		close(g->retired);
	g->retired = g->tcp;
	g->tcp = fd;
	pthread_mutex_unlock(&g->mu);
	(void)!write(g->wake[1], "l", 1);
}

/* NO_PROXY: the loopback names and addresses the allowlist does not name, which steps reach
 * directly (their own loopback); an entry naming one sends it through the proxy, where it is
 * judged and recorded like any other. */
static void noproxy(char *out, size_t cap, const struct netrule *allow, size_t n)
{
	static const unsigned char v4[4] = {127, 0, 0, 1}, v6[16] = {[15] = 1};
	int named[3] = {0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		named[0] |= allow[i].host && !allow[i].wildcard && !strcmp(allow[i].host, "localhost");
		named[1] |= netruleaddr(&allow[i], AF_INET, v4);
		named[2] |= netruleaddr(&allow[i], AF_INET6, v6);
	}
	static const char *const lo[] = {"localhost", "127.0.0.1", "::1"};
	size_t o = 0;
	out[0] = 0;
	for (int k = 0; k < 3; k++)
		if (!named[k] && o < cap)
			o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? "," : "", lo[k]);
}

void egressenv(struct strv *env, const struct netrule *allow, size_t nallow)
{
	static const char *const names[] = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"};
	struct strv kept = {0};
	for (size_t i = 0; i < env->n; i++) {
		int ours = 0;
		for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
			size_t l = strlen(names[k]);
			ours |= strncasecmp(env->v[i], names[k], l) == 0 && env->v[i][l] == '=';
		}
		if (!ours)
			strvadd(&kept, env->v[i]);
	}
	strvfree(env);
	*env = kept;
	char url[64], nop[40];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", EGRESSPORT);
	noproxy(nop, sizeof nop, allow, nallow);
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		char up[16];
		size_t l = strlen(names[k]);
		for (size_t j = 0; j <= l; j++)
			up[j] = (char)toupper((unsigned char)names[k][j]);
		const char *val = k == 3 ? nop : url;
		char *a = xasprintf("%s=%s", names[k], val), *b = xasprintf("%s=%s", up, val);
		strvadd(env, a);
		strvadd(env, b);
		free(a);
		free(b);
	}
}

static int byseq(const void *a, const void *b)
{
	const struct netconn *x = a, *y = b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Wait on g->cv (g->mu held) until no connection is open or ms have passed. */
static void waitopen(struct egress *g, int ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000)
		until.tv_sec++, until.tv_nsec -= 1000000000;
	while (g->nopen > 0 && pthread_cond_timedwait(&g->cv, &g->mu, &until) == 0)
		;
}

size_t egresstake(struct egress *g, struct netconn **out, struct netmore *more, int waitms, int cut)
{
	pthread_mutex_lock(&g->mu);
	waitopen(g, waitms);
	if (cut && g->nopen > 0) {
		/* Nobody is at the step's end of these any more: an upstream that holds one open would
		 * keep it past the step (and past the job's last, off the record). Cut them. */
		for (struct conn *c = g->open; c; c = c->next) {
			shutdown(c->client, SHUT_RDWR);
			if (c->upstream >= 0)
				shutdown(c->upstream, SHUT_RDWR);
		}
		waitopen(g, CUTMS);
	}
	size_t n = g->ndone;
	*out = g->done;
	g->done = NULL;
	g->ndone = 0;
	*more = g->more;
	g->more = (struct netmore){0, 0};
	pthread_mutex_unlock(&g->mu);
	if (n > 1)
		qsort(*out, n, sizeof **out, byseq);
	return n;
}

void egressclose(struct egress *g)
{
	if (!g)
		return;
	if (g->started) {
		pthread_mutex_lock(&g->mu);
		g->stopping = 1;
		for (struct conn *c = g->open; c; c = c->next) {
			shutdown(c->client, SHUT_RDWR);
			if (c->upstream >= 0)
				shutdown(c->upstream, SHUT_RDWR);
		}
		pthread_mutex_unlock(&g->mu);
		(void)!write(g->wake[1], "x", 1);
		pthread_join(g->acceptor, NULL);
		pthread_mutex_lock(&g->mu);
		while (g->nopen > 0)
			pthread_cond_wait(&g->cv, &g->mu);
		pthread_mutex_unlock(&g->mu);
	}
	if (g->lfd >= 0)
		close(g->lfd);
	if (g->tcp >= 0)
		close(g->tcp);
	if (g->retired >= 0)
		close(g->retired);
	if (g->wake[0] >= 0)
		close(g->wake[0]), close(g->wake[1]);
	if (g->sock)
		unlink(g->sock);
	if (g->dir)
		rmdir(g->dir);
	free(g->sock);
	free(g->dir);
	for (size_t i = 0; i < g->nallow; i++)
		netrulefree(&g->allow[i]);
	free(g->allow);
	free(g->done);
	strvfree(&g->resolve);
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->cv);
	free(g);
}
