/* relay: accept on the loopback listener, connect to the proxy's socket, send one byte
   (EGRESSHANDOVER) with the accepted socket attached, close both here. The proxy serves the
   step's socket itself from then on. A connection the proxy cannot take at once (its
   queue full, or gone) is closed: the client sees it end. */
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
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(EGRESSPORT),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1;
	r->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (r->lfd < 0 || setsockopt(r->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(r->lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(r->lfd, 128) < 0) {
		errf(e, "egress relay: listen on 127.0.0.1:%d:", EGRESSPORT);
		if (r->lfd >= 0)
			close(r->lfd);
		r->lfd = -1;
		return -1;
	}
	return 0;
}

/* Accept one connection and hand it to the proxy; 0 when none was waiting. */
static int handover(struct relay *r)
{
	int a = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0)
		return 0;
	int one = 1;
	setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = EGRESSSOCK};
	int b = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (b >= 0 && connect(b, (struct sockaddr *)&sa, sizeof sa) == 0) {
		char byte = EGRESSHANDOVER, cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = {&byte, 1};
		struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
		memset(cbuf, 0, sizeof cbuf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &a, sizeof a);
		(void)!sendmsg(b, &h, MSG_NOSIGNAL); /* in flight, the socket outlives our copies */
	}
	if (b >= 0)
		close(b);
	close(a);
	return 1;
}

int relaypoll(const struct relay *r, struct pollfd *pf)
{
	if (r->lfd < 0)
		return 0;
	pf[0] = (struct pollfd){r->lfd, POLLIN, 0};
	return 1;
}

void relayrun(struct relay *r, const struct pollfd *pf, int n)
{
	if (r->lfd < 0 || n <= 0 || !(pf[0].revents & POLLIN))
		return;
	for (int j = 0; j < 32 && handover(r); j++) /* a few at a time; the rest at the next turn */
		;
}

void relayreset(struct relay *r)
{
	if (r->lfd < 0)
		return;
	int a;
	while ((a = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(a);
}
