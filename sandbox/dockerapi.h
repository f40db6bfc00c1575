/* dockerapi: the Docker Engine API over its unix socket or tcp (TLS), with libcurl, at the highest version
   both the engine and nightshift speak (DAPIMIN to DAPIMAX); Podman's compat socket answers the same. */
#ifndef NS_DOCKERAPI_H
#define NS_DOCKERAPI_H

#include <curl/curl.h>
#include <cjson/cJSON.h>
#include "../util/util.h"
#include "dockerhost.h"

#define DAPIMIN "1.41" /* the oldest API version whose bodies nightshift sends */
#define DAPIMAX "1.52" /* the newest checked against moby's swagger and API changelog */

struct dapi {
	struct dhost at;   /* where the engine is */
	const char *url;   /* at.url: how messages name it (unix:///var/run/docker.sock, tcp://h:2376) */
	char version[16];  /* the API version spoken, "1.44"; "" before dapiopen negotiated it */
	char engine[64];   /* the engine's own version, as its /version says */
	CURL *h;    /* reused between requests, so the connection is kept */
	char errbuf[CURL_ERROR_SIZE];
	int podman; /* the engine is Podman's compat service (its /version names a "Podman Engine") */
};

/* Find the engine (dockerhost.h), check it answers, ask which it is, and agree on the API version: the
   highest both speak, at least DAPIMIN, at most DAPIMAX; an engine that speaks none of them is an error. */
int dapiopen(struct dapi *d, struct err *e);
/* One request (path below /vVERSION, body NULL or JSON); fills *status and the body when out is given. */
int dapicall(struct dapi *d, const char *method, const char *path, const cJSON *body, int64_t timeout_ms,
             long *status, struct buf *out, struct err *e);
/* POST path (body NULL or JSON) on a connection of its own that the engine hijacks (attach,
   exec start), read the response head (its status in *status), and keep the connection: *conn,
   closed with dapiunhook. Fails unless the engine switched protocols (101, or 200). */
int dapihook(struct dapi *d, const char *path, const cJSON *body, long *status, CURL **conn, struct err *e);
/* Write all of p to a hooked connection before the monotonic deadline (ms, 0: none). */
int dapisend(CURL *conn, const void *p, size_t n, int64_t deadline, struct err *e);
/* Close the writing half of a hooked connection: the engine sees the end of the stdin. */
void dapishutwr(CURL *conn);
/* Read what a hooked connection has within ms (-1: wait); bytes read, 0 at its end, -1 on error,
 * -2 on timeout or when a stop was requested (cancel.h). */
long dapirecv(CURL *conn, void *p, size_t n, int ms);
/* Close a connection made by dapihook. */
void dapiunhook(CURL *conn);
/* Compare API versions "MAJOR.MINOR": <0, 0, >0 as a is older, the same, newer; a malformed one is oldest. */
int dapivercmp(const char *a, const char *b);
/* The engine's message from an error body ({"message": ...}), or the body itself; a new string. */
char *dapimsg(const struct buf *body);
/* Close the connection and free d. */
void dapiclose(struct dapi *d);

#endif
