/* egress: the proxy a step with network.allow reaches the network through. It runs in the
   runner, outside the sandbox, on a unix socket bound into it; it speaks HTTP CONNECT and
   plain HTTP forwarding, resolves names itself, admits only what an allow entry names and
   refuses loopback, private, link-local and metadata addresses unless an entry names that
   address or range. Every connection is recorded. */
#ifndef NS_EGRESS_H
#define NS_EGRESS_H

#include <stdint.h>
#include "../manifest/manifest.h"

/* One connection as the proxy saw it. */
struct netconn {
	char method[16];  /* CONNECT, GET, ... */
	char host[256];   /* as asked for (lowercase) */
	int port;
	char addr[48];    /* the address connected to, or the one refused; "" when none */
	int allowed;      /* the proxy let it through */
	char rule[256];   /* allowed: the entry that admitted it; refused: which rule refused it */
	char reason[512]; /* refused, or the upstream failed: why, as the 403/502 body says */
	int64_t sent, received; /* bytes from the step to the host, and back */
	int64_t start_ms, duration_ms; /* start: wall clock, ms since the epoch */
	int64_t seq;                    /* the order the proxy accepted them in */
};

struct egress;

/* A client that sends this one byte with a stream socket attached (SCM_RIGHTS) hands that
   socket over: the proxy serves it in place of the unix connection (the sandbox's relay). */
#define EGRESSHANDOVER 'F'
/* Where a sandbox finds the proxy: 127.0.0.1:EGRESSPORT of its own loopback, and the unix socket. */
#define EGRESSPORT 3128
#define EGRESSSOCK "/run/nightshift/egress.sock"

/* Start a proxy for these entries on a fresh unix socket (in a private folder under $TMPDIR);
   its thread serves until egressclose. */
int egressopen(struct egress **g, const struct netrule *allow, size_t n, struct err *e);
/* The socket's path on the host. */
const char *egresssock(const struct egress *g);
/* Serve a listening TCP socket too (one made inside a container's network namespace), in
   place of the one given before, which is closed; -1 closes it only. The proxy owns fd. */
void egresslisten(struct egress *g, int fd);
/* Set the proxy variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, each in both cases)
   in env, a list of NAME=VALUE, to 127.0.0.1:EGRESSPORT; those names already there give way.
   NO_PROXY holds localhost, 127.0.0.1 and ::1 but those an entry of allow names. */
void egressenv(struct strv *env, const struct netrule *allow, size_t nallow);
/* Connections a proxy records between two takes, at most: a step that opens thousands a second
   would otherwise grow the runner's memory and the event log for as long as its timeout. */
#define EGRESSKEEP 1000
/* The connections that ended past EGRESSKEEP: counted, not recorded. */
struct netmore {
	int64_t n, refused;
};
/* Move out the connections that ended since the last call, in the order they started (the first
   EGRESSKEEP; *more counts the rest). It waits up to waitms for open ones to end; with cut (a
   step's processes are gone, so no one is at its end of them) it then cuts those still open and
   waits a moment more, so that they are the step's. *out is owned by the caller (free it). */
size_t egresstake(struct egress *g, struct netconn **out, struct netmore *more, int waitms, int cut);
/* Stop serving, cut open connections, remove the socket and its folder. */
void egressclose(struct egress *g);

/* What kind of address addr is (family AF_INET/AF_INET6), e.g. "loopback" or "cloud-metadata",
   "this-host" when this machine's routing takes it to itself (an address of its own), or NULL
   for an ordinary public one. */
const char *egressclass(int family, const unsigned char *addr);

#endif
