/* http: a JSON POST over libcurl with timeouts, for the model clients. */
#ifndef NS_HTTP_H
#define NS_HTTP_H

#include <stdint.h>
#include <time.h>
#include "../util/jsonb.h"

/* The most bytes of a response body kept: a longer one is refused (toolarge), not parsed. */
#define HTTPBODYMAX JSONB_BYTES

struct httpresp {
	int status;         /* 0 when no response came */
	struct buf body;
	int64_t retry_ms;   /* from retry-after-ms / retry-after, -1 when absent */
	int should_retry;   /* x-should-retry: 1 true, 0 false, -1 absent */
	char error[256];    /* transport error, empty when a response came */
	int timeout;        /* 1 when the transport error was a timeout */
	int idle;           /* 1 when no byte came for the idle time (the stall watchdog cut it) */
	int stream;         /* 1 when the answer is a stream (Content-Type text/event-stream, or
	                     * application/vnd.amazon.eventstream) */
	int interrupted;    /* 1 when httpinterrupt() cut it short */
	int toolarge;       /* 1 when the body passed HTTPBODYMAX (the transfer was cut) */
};

/* POST body to url with the given extra headers (NULL-terminated "Name: value" list); connect_ms
 * bounds the connection, total_ms the whole exchange. Redirects are not followed. */
int httppost(const char *url, const char *const *headers, const char *body, int64_t connect_ms, int64_t total_ms,
             struct httpresp *r);
struct sigv4key;
/* How one request is sent: its time limits, its signer, and the stall watchdog. */
struct httpopts {
	int64_t connect_ms, total_ms;
	int64_t idle_ms;             /* no byte (header or body) for this long ends it (r->idle); 0: no watchdog */
	const struct sigv4key *aws;  /* sign with AWS SigV4 at the moment it is sent, or NULL */
};
/* httppost with the options of o. */
int httpsend(const char *url, const char *const *headers, const char *body, const struct httpopts *o,
             struct httpresp *r);
void httprespfree(struct httpresp *r);
/* Abort every request in progress and refuse new ones (async-signal-safe). */
void httpinterrupt(void);
/* True once httpinterrupt() was called. */
int httpinterrupted(void);
/* A retry-after header value (delta-seconds or an HTTP date) as milliseconds from now, or -1. */
int64_t httpretryafter(const char *value, time_t now);

#endif
