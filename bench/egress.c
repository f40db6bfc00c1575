/* egress: what the egress proxy costs. A server thread on 127.0.0.1 answers GET /big with
   BIG MiB and GET /small with a few bytes, one request per connection. The same curl then
   runs on the host, straight to the server, and in a namespace sandbox with
   network.allow ["127.0.0.1:PORT"], through init's relay and the proxy: a large download
   each way (MB/s, best of ROUNDS, interleaved), and N small requests on fresh connections
   (time_total each, medians). Built and run by bench/egress.sh, not part of nightshift.
   Usage: egress WORKSPACE BIG_MIB ROUNDS N
   Prints "direct MBPS", "proxied MBPS", "ratio R", "latency direct MS proxied MS added MS". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../manifest/netrule.h"
#include "../sandbox/sandbox.h"

static int lfd;
static long long big;
static char chunk[1 << 20];

static void *serveone(void *arg)
{
	int c = (int)(long)arg;
	char head[8192];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof head - 1 && (r = read(c, head + n, sizeof head - 1 - n)) > 0) {
		n += r;
		head[n] = 0;
		if (strstr(head, "\r\n\r\n"))
			break;
	}
	int isbig = strncmp(head, "GET /big", 8) == 0;
	long long len = isbig ? big : 6;
	char h[256];
	int hn = snprintf(h, sizeof h, "HTTP/1.1 200 OK\r\nContent-Length: %lld\r\nConnection: close\r\n\r\n", len);
	if (write(c, h, hn) == hn) {
		if (!isbig) {
			(void)!write(c, "small\n", 6);
		} else {
			for (long long left = len; left > 0;) {
				ssize_t w = write(c, chunk, left < (long long)sizeof chunk ? (size_t)left : sizeof chunk);
				if (w <= 0)
					break;
				left -= w;
			}
		}
	}
	shutdown(c, SHUT_WR);
	while (read(c, head, sizeof head) > 0)
		;
	close(c);
	return NULL;
}

static void *server(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		if (c < 0)
			continue;
		pthread_t t;
		pthread_create(&t, NULL, serveone, (void *)(long)c);
		pthread_detach(t);
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Run sh -c cmd on the host, its stdout into out. */
static int host(const char *cmd, struct buf *out)
{
	FILE *f = popen(cmd, "r");
	char b[4096];
	size_t n;
	if (!f)
		return -1;
	while ((n = fread(b, 1, sizeof b, f)) > 0)
		bufadd(out, b, n);
	return pclose(f) == 0 ? 0 : -1;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof *v, cmp);
	return n ? v[n / 2] : 0;
}

/* Parse numbers, one a line, into v (at most max); the count. */
static int numbers(const char *s, double *v, int max)
{
	int n = 0;
	for (const char *p = s; p && *p && n < max; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		v[n++] = atof(p);
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: egress WORKSPACE BIG_MIB ROUNDS N [RELAYPORT]\n");
		return 2;
	}
	big = atoll(argv[2]) << 20;
	int rounds = atoi(argv[3]), n = atoi(argv[4]);
	memset(chunk, 'x', sizeof chunk);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 128) < 0)
		return 1;
	getsockname(lfd, (struct sockaddr *)&sa, &sl);
	int port = ntohs(sa.sin_port);
	pthread_t t;
	pthread_create(&t, NULL, server, NULL);
	/* A one-hop relay on RELAYPORT (socat, started by bench/egress.sh): it is told our port. */
	int relay = argc > 5 ? atoi(argv[5]) : 0;
	if (relay) {
		printf("port %d\n", port);
		fflush(stdout);
		char line[16];
		if (!fgets(line, sizeof line, stdin)) /* the relay listens */
			return 1;
	}

	char entry[64];
	snprintf(entry, sizeof entry, "127.0.0.1:%d", port);
	struct netrule rule;
	const char *why;
	netruleparse(entry, &rule, &why);
	struct sandboxconf sc = {0};
	sc.backend = BACKEND_NAMESPACE;
	sc.image = "host";
	sc.memory = 1 << 30;
	sc.pids = 256;
	sc.timeout_ms = 300000;
	sc.network_allow = 1;
	sc.allow = &rule;
	sc.nallow = 1;
	char *env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
	struct sbxconf c = {&sc, argv[1], env, 0};
	struct err e = {0};
	struct sbx *s;
	if (sbxopen(&s, &c, &e) < 0) {
		fprintf(stderr, "egress bench: %s\n", e.msg);
		return 1;
	}
	/* curl's own figures: speed_download for the big one, time_total for each small one. */
	char *bigdirect = xasprintf("curl -s --noproxy '*' -o /dev/null -w '%%{speed_download}\\n' http://127.0.0.1:%d/big", port);
	char *bigproxy = xasprintf("curl -sS --noproxy '' -x http://127.0.0.1:3128 -o /dev/null -w '%%{speed_download}\\n' "
	                           "http://127.0.0.1:%d/big", port);
	struct buf urls = {0};
	for (int i = 0; i < n; i++)
		bufprintf(&urls, " http://127.0.0.1:%d/small", port);
	char *smalldirect = xasprintf("curl -s --noproxy '*' -o /dev/null -w '%%{time_total}\\n'%s", urls.data);
	char *smallproxy = xasprintf("curl -s --noproxy '' -x http://127.0.0.1:3128 -o /dev/null -w '%%{time_total}\\n'%s", urls.data);
	char *bigrelay = xasprintf("curl -s --noproxy '*' -o /dev/null -w '%%{speed_download}\\n' http://127.0.0.1:%d/big", relay);
	double bd = 0, bp = 0, br = 0;
	double *ld = calloc(n * rounds, sizeof *ld), *lp = calloc(n * rounds, sizeof *lp);
	int nd = 0, np = 0, rc = 0;
	for (int r = 0; r < rounds && rc == 0; r++) {
		struct buf o = {0};
		struct sbxresult res;
		if (host(bigdirect, &o) < 0) {
			rc = 1;
			break;
		}
		double v = atof(o.data);
		bd = v > bd ? v : bd;
		if (sbxexec(s, bigproxy, &res, &e) < 0 || res.exit_code != 0) {
			fprintf(stderr, "egress bench: in the sandbox: %s exit %d %s %s\n", e.msg, res.exit_code, res.out.data ? res.out.data : "", res.err.data ? res.err.data : "");
			rc = 1;
			break;
		}
		v = atof(res.out.data);
		bp = v > bp ? v : bp;
		sbxresultfree(&res);
		o.len = 0;
		if (relay && host(bigrelay, &o) < 0) {
			rc = 1;
			break;
		}
		v = relay ? atof(o.data) : 0;
		br = v > br ? v : br;
		o.len = 0;
		if (host(smalldirect, &o) < 0) {
			rc = 1;
			break;
		}
		nd += numbers(o.data, ld + nd, n);
		buffree(&o);
		if (sbxexec(s, smallproxy, &res, &e) < 0 || res.exit_code != 0) {
			rc = 1;
			break;
		}
		np += numbers(res.out.data, lp + np, n);
		sbxresultfree(&res);
	}
	sbxclose(s);
	if (rc)
		return rc;
	double md = median(ld, nd) * 1e3, mp = median(lp, np) * 1e3;
	printf("direct %.0f\nproxied %.0f\nratio %.2f\n", bd / 1e6, bp / 1e6, bd > 0 ? bp / bd : 0);
	if (relay)
		printf("relayed %.0f\nrelayratio %.2f\n", br / 1e6, br > 0 ? bp / br : 0);
	printf("latency direct %.3f proxied %.3f added %.3f\n", md, mp, mp - md);
	return 0;
}
