/* relay: a connection accepted on the loopback listener gets a fresh connection to the
   proxy's socket and a pump between the two; it ends when both directions have. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "relay.h"

int relayopen(struct relay *r, struct err *e)
{
	for (int i = 0; i < RELAYMAX; i++)
		r->c[i].a = r->c[i].b = -1;
	r->lfd = -1;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errf(e, "egress relay: socket:");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0 || (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr)) < 0) {
		close(s);
		return errf(e, "egress relay: bring up lo:");
	}
	close(s);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(RELAYPORT),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1;
	r->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (r->lfd < 0 || setsockopt(r->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(r->lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(r->lfd, 64) < 0) {
		errf(e, "egress relay: listen on 127.0.0.1:%d:", RELAYPORT);
		if (r->lfd >= 0)
			close(r->lfd);
		r->lfd = -1;
		return -1;
	}
	return 0;
}

static void drop(struct relay *r, int i)
{
	pumpfree(&r->c[i].p);
	close(r->c[i].a);
	close(r->c[i].b);
	r->c[i].a = r->c[i].b = -1;
}

/* Accept one connection and dial the proxy for it. */
static void take(struct relay *r)
{
	int a = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0)
		return;
	int i = 0;
	while (i < RELAYMAX && r->c[i].a >= 0)
		i++;
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = RELAYSOCK};
	int b = i < RELAYMAX ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0) : -1;
	if (b < 0 || connect(b, (struct sockaddr *)&sa, sizeof sa) < 0) {
		if (b >= 0)
			close(b);
		close(a); /* full, or the proxy is gone: the client sees the connection end */
		return;
	}
	int one = 1;
	setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (pumpinit(&r->c[i].p, a, b) < 0) {
		close(a), close(b);
		return;
	}
	r->c[i].a = a;
	r->c[i].b = b;
}

int relaypoll(const struct relay *r, struct pollfd *pf)
{
	int n = 0;
	if (r->lfd < 0)
		return 0;
	pf[n++] = (struct pollfd){r->lfd, POLLIN, 0};
	for (int i = 0; i < RELAYMAX; i++)
		if (r->c[i].a >= 0) {
			pumppoll(&r->c[i].p, pf + n);
			n += 2;
		}
	return n;
}

void relayrun(struct relay *r, const struct pollfd *pf, int n)
{
	if (r->lfd < 0 || n <= 0)
		return;
	int k = 1;
	for (int i = 0; i < RELAYMAX && k + 1 < n; i++) {
		if (r->c[i].a < 0)
			continue;
		if ((pf[k].revents | pf[k + 1].revents) && pumpstep(&r->c[i].p) != 0)
			drop(r, i);
		k += 2;
	}
	if (pf[0].revents & POLLIN)
		for (int j = 0; j < 16; j++) /* a few at a time; the rest at the next turn */
			take(r);
}

void relayreset(struct relay *r)
{
	if (r->lfd < 0)
		return;
	for (int i = 0; i < RELAYMAX; i++)
		if (r->c[i].a >= 0)
			drop(r, i);
	int a;
	while ((a = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(a);
}
