/* relay: inside a namespace sandbox with network.allow, the sandbox's init listens on
   127.0.0.1:RELAYPORT of the sandbox's own loopback and passes each connection on to the
   egress proxy's unix socket bound into the sandbox, so programs that speak to an HTTP proxy
   by host and port find one. Served from init's poll loop while a step runs. */
#ifndef NS_RELAY_H
#define NS_RELAY_H

#include <poll.h>
#include "pump.h"
#include "../../util/util.h"

#define RELAYPORT 3128
#define RELAYSOCK "/run/nightshift/egress.sock" /* where the proxy's socket is in the sandbox */
#define RELAYMAX 64                             /* connections at once */

struct relay {
	int lfd; /* -1: no relay */
	struct {
		int a, b; /* the step's TCP connection, ours to the proxy; -1 when free */
		struct pump p;
	} c[RELAYMAX];
};

/* Bring the loopback interface up and listen on 127.0.0.1:RELAYPORT (needs CAP_NET_ADMIN in
   the network namespace: call before dropping capabilities). */
int relayopen(struct relay *r, struct err *e);
/* Fill pf with what to wait for (at most 1 + 2 * RELAYMAX entries); the count. */
int relaypoll(const struct relay *r, struct pollfd *pf);
/* Serve what pf (as relaypoll filled it and poll answered) says is ready. */
void relayrun(struct relay *r, const struct pollfd *pf, int n);
/* Close every connection, and those still waiting to be accepted. */
void relayreset(struct relay *r);

#endif
