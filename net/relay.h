/* relay: inside a namespace sandbox with network.allow, the sandbox's init listens on
   127.0.0.1:EGRESSPORT of the sandbox's own loopback, so that programs which speak to an HTTP
   proxy by host and port find one. Each connection accepted there is handed whole to the
   egress proxy: init connects to the proxy's unix socket bound into the sandbox and passes
   the accepted socket over it (SCM_RIGHTS), so the bytes then go straight between the
   step's socket and the proxy, with no copy through init. Served from init's poll loop. */
#ifndef NS_RELAY_H
#define NS_RELAY_H

#include <poll.h>
#include "../util/util.h"
#include "egress.h"


struct relay {
	int lfd; /* -1: no relay */
};

/* Bring the loopback interface up and listen on 127.0.0.1:EGRESSPORT (needs CAP_NET_ADMIN in
   the network namespace: call before dropping capabilities). */
int relayopen(struct relay *r, struct err *e);
/* Fill pf with what to wait for (at most 1 entry); the count. */
int relaypoll(const struct relay *r, struct pollfd *pf);
/* Serve what pf (as relaypoll filled it and poll answered) says is ready. */
void relayrun(struct relay *r, const struct pollfd *pf, int n);
/* Drop connections still waiting to be accepted (a step's leftovers). */
void relayreset(struct relay *r);

#endif
