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
	int interrupted;    /* 1 when httpinterrupt() cut it short */
	int toolarge;       /* 1 when the body passed HTTPBODYMAX (the transfer was cut) */
};

/* POST body to url with the given extra headers (NULL-terminated "Name: value" list); connect_ms
 * bounds the connection, total_ms the whole exchange. Redirects are not followed. */
int httppost(const char *url, const char *const *headers, const char *body, int64_t connect_ms, int64_t total_ms,
             struct httpresp *r);
struct sigv4key;
/* httppost, signed with AWS SigV4 at the moment it is sent (aws NULL: not signed). */
int httpsigned(const char *url, const char *const *headers, const char *body, int64_t connect_ms, int64_t total_ms,
               const struct sigv4key *aws, struct httpresp *r);
void httprespfree(struct httpresp *r);
/* Abort every request in progress and refuse new ones (async-signal-safe). */
void httpinterrupt(void);
/* True once httpinterrupt() was called. */
int httpinterrupted(void);
/* A retry-after header value (delta-seconds or an HTTP date) as milliseconds from now, or -1. */
int64_t httpretryafter(const char *value, time_t now);

#endif
