/* test_egress: allowlist entries (manifest/netrule.c), address kinds and the proxy itself
   (net/egress.c) over its unix socket, against a listener of this test. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "t.h"
#include "../../manifest/netrule.h"
#include "../../net/egress.h"

static void parsing(void)
{
	static const struct {
		const char *text;
		int ok;
		const char *host; /* NULL: an address */
		int wildcard, port, family, prefix;
	} c[] = {
		{"api.github.com", 1, "api.github.com", 0, 0, 0, 0},
		{"API.GitHub.com:443", 1, "api.github.com", 0, 443, 0, 0},
		{"*.pypi.org", 1, "pypi.org", 1, 0, 0, 0},
		{"*.pypi.org:8443", 1, "pypi.org", 1, 8443, 0, 0},
		{"localhost", 1, "localhost", 0, 0, 0, 0},
		{"10.0.0.0/8", 1, NULL, 0, 0, AF_INET, 8},
		{"10.1.2.3", 1, NULL, 0, 0, AF_INET, 32},
		{"10.1.2.3:8080", 1, NULL, 0, 8080, AF_INET, 32},
		{"fd00::/8", 1, NULL, 0, 0, AF_INET6, 8},
		{"::1", 1, NULL, 0, 0, AF_INET6, 128},
		{"[::1]:8080", 1, NULL, 0, 8080, AF_INET6, 128},
		{"[2001:db8::1]", 1, NULL, 0, 0, AF_INET6, 128},
		{"", 0, NULL, 0, 0, 0, 0},
		{"*.com", 0, NULL, 0, 0, 0, 0},
		{"*", 0, NULL, 0, 0, 0, 0},
		{"a.*.com", 0, NULL, 0, 0, 0, 0},
		{"*foo.com", 0, NULL, 0, 0, 0, 0},
		{"foo.com:0", 0, NULL, 0, 0, 0, 0},
		{"foo.com:65536", 0, NULL, 0, 0, 0, 0},
		{"foo.com:", 0, NULL, 0, 0, 0, 0},
		{"foo.com:http", 0, NULL, 0, 0, 0, 0},
		{"10.0.0.1/8", 0, NULL, 0, 0, 0, 0},
		{"10.0.0.0/33", 0, NULL, 0, 0, 0, 0},
		{"10.0.0.0/", 0, NULL, 0, 0, 0, 0},
		{"[::1", 0, NULL, 0, 0, 0, 0},
		{"[::1]x", 0, NULL, 0, 0, 0, 0},
		{"foo..com", 0, NULL, 0, 0, 0, 0},
		{"-foo.com", 0, NULL, 0, 0, 0, 0},
		{"foo.com.", 0, NULL, 0, 0, 0, 0},
		{"foo com", 0, NULL, 0, 0, 0, 0},
		{"http://foo.com", 0, NULL, 0, 0, 0, 0},
		{"foo.com/path", 0, NULL, 0, 0, 0, 0},
		{"user@foo.com", 0, NULL, 0, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		struct netrule r;
		const char *why;
		int rc = netruleparse(c[i].text, &r, &why);
		ok((rc == 0) == c[i].ok, "'%s': parsed %d, want %d (%s)", c[i].text, rc == 0, c[i].ok, why);
		if (rc == 0 && c[i].ok) {
			ok(c[i].host ? r.host && strcmp(r.host, c[i].host) == 0 : !r.host, "'%s': host %s", c[i].text,
			   r.host ? r.host : "(none)");
			ok(r.wildcard == c[i].wildcard && r.port == c[i].port && r.family == c[i].family &&
			       (!r.family || r.prefix == c[i].prefix),
			   "'%s': wildcard %d port %d family %d prefix %d", c[i].text, r.wildcard, r.port, r.family, r.prefix);
		}
		if (rc == 0)
			netrulefree(&r);
		else
			ok(why && *why, "'%s': says why", c[i].text);
	}
}

static int admits(const char *entry, const char *host, int port)
{
	struct netrule r;
	const char *why;
	if (netruleparse(entry, &r, &why) < 0)
		return -1;
	unsigned char a[16];
	int fam = inet_pton(AF_INET, host, a) == 1 ? AF_INET : inet_pton(AF_INET6, host, a) == 1 ? AF_INET6 : 0;
	int m = netruleport(&r, port) && (fam ? netruleaddr(&r, fam, a) : netrulename(&r, host));
	netrulefree(&r);
	return m;
}

static void matching(void)
{
	ok(admits("pypi.org", "pypi.org", 443) == 1, "name, 443");
	ok(admits("pypi.org", "pypi.org", 80) == 1, "name, 80");
	ok(admits("pypi.org", "pypi.org", 22) == 0, "name, 22 is not a default port");
	ok(admits("pypi.org", "files.pypi.org", 443) == 0, "a name does not admit names below it");
	ok(admits("pypi.org", "pypi.org.evil.com", 443) == 0, "a name is not a prefix");
	ok(admits("*.pypi.org", "files.pypi.org", 443) == 1, "wildcard, one level");
	ok(admits("*.pypi.org", "a.b.pypi.org", 443) == 1, "wildcard, two levels");
	ok(admits("*.pypi.org", "pypi.org", 443) == 0, "a wildcard does not admit the domain itself");
	ok(admits("*.pypi.org", "evilpypi.org", 443) == 0, "a wildcard needs the dot");
	ok(admits("*.pypi.org:443", "files.pypi.org", 80) == 0, "wildcard with port");
	ok(admits("github.com:22", "github.com", 22) == 1, "explicit port");
	ok(admits("github.com:22", "github.com", 443) == 0, "explicit port only");
	ok(admits("10.0.0.0/8", "10.200.3.4", 443) == 1, "CIDR holds");
	ok(admits("10.0.0.0/8", "11.0.0.1", 443) == 0, "CIDR does not hold");
	ok(admits("10.0.0.0/8", "10.0.0.1", 8080) == 0, "CIDR, default ports");
	ok(admits("192.168.1.128/25", "192.168.1.200", 80) == 1, "CIDR, odd prefix, in");
	ok(admits("192.168.1.128/25", "192.168.1.100", 80) == 0, "CIDR, odd prefix, out");
	ok(admits("fd00::/8", "fd12::1", 443) == 1, "IPv6 CIDR");
	ok(admits("fd00::/8", "fc00::1", 443) == 0, "IPv6 CIDR, out");
	ok(admits("127.0.0.2", "127.0.0.2", 443) == 1, "literal");
	ok(admits("127.0.0.2", "127.0.0.3", 443) == 0, "another literal");
	ok(admits("10.0.0.0/8", "ten.example", 443) == 0, "an address entry admits no name");
}

static void classes(void)
{
	static const struct {
		const char *addr;
		const char *want; /* NULL: public */
	} c[] = {
		{"8.8.8.8", NULL},
		{"93.184.216.34", NULL},
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"172.32.0.1", NULL},
		{"192.168.0.1", "private"},
		{"169.254.169.254", "cloud-metadata"},
		{"169.254.1.1", "link-local"},
		{"100.100.100.200", "cloud-metadata"},
		{"100.64.0.1", "shared"},
		{"0.0.0.0", "this-network"},
		{"224.0.0.1", "multicast"},
		{"255.255.255.255", "reserved"},
		{"::1", "loopback"},
		{"::", "unspecified"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:169.254.169.254", "cloud-metadata"},
		{"::ffff:8.8.8.8", "ipv4-mapped"},
		{"::127.0.0.1", "loopback"},
		{"64:ff9b::a9fe:a9fe", "cloud-metadata"},
		{"64:ff9b::808:808", NULL},
		{"2002:7f00:1::", "loopback"},
		{"2002:808:808::", NULL},
		{"fd00::1", "unique-local"},
		{"fd00:ec2::254", "cloud-metadata"},
		{"fc00::1", "unique-local"},
		{"fe80::1", "link-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"2001::1", "teredo"},
		{"2001:4860:4860::8888", NULL},
		{"2606:4700::1111", NULL},
		{"192.0.2.1", "documentation"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.255", "documentation"},
		{"2001:db8::1", "documentation"},
		{"3fff:fff::1", "documentation"},
		{"3fff:1000::1", NULL},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		unsigned char a[16];
		int fam = inet_pton(AF_INET, c[i].addr, a) == 1 ? AF_INET : AF_INET6;
		if (fam == AF_INET6)
			inet_pton(AF_INET6, c[i].addr, a);
		const char *got = egressclass(fam, a);
		ok(c[i].want ? got && strcmp(got, c[i].want) == 0 : !got, "%s: %s, want %s", c[i].addr, got ? got : "public",
		   c[i].want ? c[i].want : "public");
	}
}

/* ---- the proxy, live ---- */

static int lfd;

static void *echoserver(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		if (c < 0)
			return NULL;
		char buf[4096];
		ssize_t n;
		while ((n = read(c, buf, sizeof buf)) > 0)
			if (write(c, buf, n) != n)
				break;
		close(c);
	}
}

static int dialproxy(const char *sock)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send req, read until the peer ends or max bytes. */
static void exchange(int fd, const char *req, char *out, size_t max, int shut)
{
	size_t n = 0;
	ssize_t r;
	if (write(fd, req, strlen(req)) < 0)
		return;
	if (shut)
		shutdown(fd, SHUT_WR);
	while (n + 1 < max && (r = read(fd, out + n, max - 1 - n)) > 0)
		n += r;
	out[n] = 0;
}

static void live(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ok(bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(lfd, 8) == 0, "listen");
	getsockname(lfd, (struct sockaddr *)&sa, &sl);
	int port = ntohs(sa.sin_port);
	pthread_t t;
	pthread_create(&t, NULL, echoserver, NULL);

	char entry[64], req[512], got[8192];
	snprintf(entry, sizeof entry, "127.0.0.1:%d", port);
	struct netrule r[2];
	const char *why;
	netruleparse(entry, &r[0], &why);
	netruleparse("name.test", &r[1], &why);
	struct egress *g = NULL;
	struct err e = {0};
	ok(egressopen(&g, r, 2, &e) == 0, "egressopen: %s", e.msg);
	if (!g)
		return;

	/* CONNECT to the named address: a tunnel that carries anything. */
	/* (read until the peer ends: the echo server ends only when we do, so shut first) */
	snprintf(req, sizeof req, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\nearly bytes|", port);
	int fd = dialproxy(egresssock(g));
	exchange(fd, req, got, sizeof got, 1);
	close(fd);
	ok(strncmp(got, "HTTP/1.1 200 ", 13) == 0 && strstr(got, "\r\n\r\nearly bytes|"), "CONNECT tunnels: %s", got);

	/* A port the entry does not name. */
	fd = dialproxy(egresssock(g));
	snprintf(req, sizeof req, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port == 65535 ? 1 : port + 1);
	exchange(fd, req, got, sizeof got, 1);
	close(fd);
	ok(strncmp(got, "HTTP/1.1 403 ", 13) == 0 && strstr(got, "refused by rule no-entry"), "other port: %s", got);

	/* A plain request for a name that resolves to loopback (the test table). */
	fd = dialproxy(egresssock(g));
	exchange(fd, "GET http://name.test/x HTTP/1.1\r\nHost: name.test\r\n\r\n", got, sizeof got, 1);
	close(fd);
	ok(strncmp(got, "HTTP/1.1 403 ", 13) == 0 && strstr(got, "special-address:loopback"), "rebinding: %s", got);

	/* Not a proxy request, and no request at all. */
	fd = dialproxy(egresssock(g));
	exchange(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", got, sizeof got, 1);
	close(fd);
	ok(strncmp(got, "HTTP/1.1 400 ", 13) == 0, "origin-form: %s", got);

	/* A name longer than DNS allows is refused whole, not cut to a shorter one. */
	char longname[300];
	memset(longname, 'a', sizeof longname);
	for (int i = 1; i < 270; i += 2)
		longname[i] = '.';
	snprintf(longname + 270, sizeof longname - 270, "127.0.0.1");
	fd = dialproxy(egresssock(g));
	snprintf(req, sizeof req, "CONNECT %s:%d HTTP/1.1\r\n\r\n", longname, port);
	exchange(fd, req, got, sizeof got, 1);
	close(fd);
	ok(strncmp(got, "HTTP/1.1 400 ", 13) == 0, "a 279-byte name: %s", got);

	/* Hostile heads (issue 28: a NUL before the CRLF made the proxy loop forever growing a buffer):
	   each is answered 400 and closed, and the proxy still serves afterwards. */
#define R(lit) lit, sizeof lit - 1 /* a literal and its length, NULs included */
	static const struct {
		const char *name;
		const char *req;
		size_t n;
	} bad[] = {
		{"NUL in the request line", R("GET http://name.test/\0x HTTP/1.1\r\nHost: x\r\n\r\n")},
		{"NUL in CONNECT", R("CONNECT 127.0.0.1:1\0 HTTP/1.1\r\n\r\n")},
		{"NUL in a header", R("GET http://name.test/ HTTP/1.1\r\nHost: \0x\r\n\r\n")},
		{"bare LF", R("GET http://name.test/ HTTP/1.1\nHost: x\n\n")},
		{"escape byte", R("GET http://name.test/\x1b[2J HTTP/1.1\r\n\r\n")},
		{"folded header", R("GET http://name.test/ HTTP/1.1\r\nHost: x\r\n  y\r\n\r\n")},
		{"no version", R("GET http://name.test/\r\n\r\n")},
		{"empty line first", R("\r\nGET http://name.test/ HTTP/1.1\r\n\r\n")},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		fd = dialproxy(egresssock(g));
		if (write(fd, bad[i].req, bad[i].n) < 0)
			break;
		shutdown(fd, SHUT_WR);
		size_t gn = 0;
		ssize_t rr;
		while (gn + 1 < sizeof got && (rr = read(fd, got + gn, sizeof got - 1 - gn)) > 0)
			gn += rr;
		got[gn] = 0;
		close(fd);
		ok(strncmp(got, "HTTP/1.1 400 ", 13) == 0, "%s: %s", bad[i].name, got);
	}
	/* A head that never ends: refused at 16 KiB, not grown. */
	fd = dialproxy(egresssock(g));
	{
		char big[20000];
		memcpy(big, "GET http://name.test/ HTTP/1.1\r\nX: ", 35);
		memset(big + 35, 'a', sizeof big - 35);
		size_t off = 0;
		ssize_t w;
		while (off < sizeof big && (w = send(fd, big + off, sizeof big - off, MSG_NOSIGNAL)) > 0)
			off += w;
		shutdown(fd, SHUT_WR);
		size_t gn = 0;
		ssize_t rr;
		while (gn + 1 < sizeof got && (rr = read(fd, got + gn, sizeof got - 1 - gn)) > 0)
			gn += rr;
		got[gn] = 0;
		close(fd);
		ok(strncmp(got, "HTTP/1.1 400 ", 13) == 0 && strstr(got, "16 KiB"), "a head over 16 KiB: %s", got);
	}
	size_t nbad = sizeof bad / sizeof *bad + 1;

	struct netconn *v = NULL;
	struct netmore more;
	size_t n = egresstake(g, &v, &more, 2000, 1);
	ok(n == 5 + nbad && more.n == 0, "every connection recorded, got %zu (%lld more)", n, (long long)more.n);
	for (size_t i = 5; i < n; i++)
		ok(!v[i].allowed && strcmp(v[i].rule, "bad-request") == 0, "hostile head %zu recorded: %s", i, v[i].rule);
	if (n >= 5) {
		ok(v[0].allowed && v[0].sent == (int64_t)strlen("early bytes|") && v[0].received == v[0].sent &&
		       strcmp(v[0].addr, "127.0.0.1") == 0 && strcmp(v[0].rule, entry) == 0,
		   "tunnel record: allowed %d sent %lld received %lld addr %s rule %s", v[0].allowed, (long long)v[0].sent,
		   (long long)v[0].received, v[0].addr, v[0].rule);
		ok(!v[1].allowed && strcmp(v[1].rule, "no-entry") == 0, "port record: %s", v[1].rule);
		ok(!v[2].allowed && strcmp(v[2].host, "name.test") == 0 && strcmp(v[2].addr, "127.0.0.1") == 0,
		   "rebinding record: %s %s", v[2].host, v[2].addr);
		ok(!v[3].allowed && strcmp(v[3].rule, "bad-request") == 0, "bad request record: %s", v[3].rule);
		ok(!v[4].allowed && strcmp(v[4].rule, "bad-request") == 0, "long name record: %s", v[4].rule);
	}
	free(v);

	/* A flood of refused connections (a step makes thousands a second): the first EGRESSKEEP are
	   recorded, the rest only counted, until the next take (attack-sbx). */
	for (int i = 0; i < EGRESSKEEP + 40; i++) {
		fd = dialproxy(egresssock(g));
		exchange(fd, "CONNECT evil.test:443 HTTP/1.1\r\n\r\n", got, sizeof got, 1);
		close(fd);
	}
	n = egresstake(g, &v, &more, 2000, 1);
	ok(n == EGRESSKEEP && more.n == 40 && more.refused == 40, "a flood: %zu recorded, %lld more (%lld refused)", n,
	   (long long)more.n, (long long)more.refused);
	free(v);
	fd = dialproxy(egresssock(g));
	exchange(fd, "CONNECT evil.test:443 HTTP/1.1\r\n\r\n", got, sizeof got, 1);
	close(fd);
	n = egresstake(g, &v, &more, 2000, 1);
	ok(n == 1 && more.n == 0, "the next take records again: %zu, %lld more", n, (long long)more.n);
	free(v);
	char path[256];
	snprintf(path, sizeof path, "%s", egresssock(g));
	egressclose(g);
	ok(access(path, F_OK) != 0, "the socket is removed");
	netrulefree(&r[0]);
	netrulefree(&r[1]);
	shutdown(lfd, SHUT_RDWR);
	close(lfd);
	pthread_join(t, NULL);
}

/* An allow entry naming a loopback address or name takes it out of NO_PROXY (issue 33 item 4). */
static const char *envget(const struct strv *env, const char *name)
{
	size_t l = strlen(name);
	for (size_t i = 0; i < env->n; i++)
		if (!strncmp(env->v[i], name, l) && env->v[i][l] == '=')
			return env->v[i] + l + 1;
	return NULL;
}

static void noproxyenv(void)
{
	static const struct {
		const char *entries[3];
		const char *want;
	} c[] = {
		{{NULL}, "localhost,127.0.0.1,::1"},
		{{"api.github.com", NULL}, "localhost,127.0.0.1,::1"},
		{{"127.0.0.1:8080", NULL}, "localhost,::1"},
		{{"127.0.0.0/8", NULL}, "localhost,::1"},
		{{"[::1]:8080", NULL}, "localhost,127.0.0.1"},
		{{"localhost:8080", "127.0.0.1:8080", NULL}, "::1"},
		{{"10.0.0.0/8", "localhost.test", NULL}, "localhost,127.0.0.1,::1"},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct netrule r[3];
		size_t n = 0;
		const char *why;
		for (; c[i].entries[n]; n++)
			ok(netruleparse(c[i].entries[n], &r[n], &why) == 0, "parse %s", c[i].entries[n]);
		struct strv env = {0};
		strvadd(&env, "NO_PROXY=example.com");
		strvadd(&env, "KEEP=1");
		egressenv(&env, r, n);
		okstr(envget(&env, "NO_PROXY"), c[i].want, "NO_PROXY");
		okstr(envget(&env, "no_proxy"), c[i].want, "no_proxy");
		okstr(envget(&env, "KEEP"), "1", "other variables stay");
		strvfree(&env);
		for (size_t k = 0; k < n; k++)
			netrulefree(&r[k]);
	}
}

int main(void)
{
	noproxyenv();
	setenv("NIGHTSHIFT_TEST_RESOLVE", "name.test=127.0.0.1", 1);
	parsing();
	matching();
	classes();
	live();
	return tdone();
}
