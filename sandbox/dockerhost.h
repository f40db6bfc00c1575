/* dockerhost: where the Docker (or Podman) engine is, found as the docker CLI finds it. */
#ifndef NS_DOCKERHOST_H
#define NS_DOCKERHOST_H

#include "../util/util.h"

struct dhost {
	char *url;  /* as messages name it: unix:///var/run/docker.sock, tcp://h:2376 */
	char *sock; /* the unix socket path, or NULL for tcp */
	char *base; /* what request URLs start with: http://localhost, https://h:2376 */
	char *host; /* the Host header of a hooked request: localhost, h:2376 */
	char *via;  /* where the address came from: "DOCKER_HOST", "context NAME", "the default sockets" */
	char *ca, *cert, *key; /* TLS files for tcp (NULL: none); every one is named when tls */
	int tls;    /* speak https */
	int verify; /* check the engine's certificate against ca (DOCKER_TLS_VERIFY, a context's !SkipTLSVerify) */
};

/* Find the engine: DOCKER_HOST (unix://PATH, tcp://HOST:PORT with DOCKER_TLS_VERIFY/DOCKER_TLS and
 * DOCKER_CERT_PATH), else the Docker context named by DOCKER_CONTEXT or by currentContext in
 * $DOCKER_CONFIG/config.json (~/.docker), else the first socket there is of Docker's, rootless
 * Docker's ($XDG_RUNTIME_DIR/docker.sock), Docker Desktop's and Podman's. An address nightshift cannot
 * speak to (ssh://, npipe://) is an error with code 2. */
int dhostfind(struct dhost *h, struct err *e);
/* Free what h holds. */
void dhostfree(struct dhost *h);

#endif
