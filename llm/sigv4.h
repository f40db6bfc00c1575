/* sigv4: AWS Signature Version 4 for one HTTP request (the documented algorithm).
 *
 * libcurl's own (CURLOPT_AWS_SIGV4, 7.88 on Debian 12) signs the path as it is sent, encoded once;
 * AWS encodes each path segment twice for every service but S3, so any Bedrock model id (they all
 * hold ':', sent as %3A) fails its check. Hence this. */
#ifndef NS_SIGV4_H
#define NS_SIGV4_H

#include <time.h>
#include "../util/util.h"

struct sigv4key {
	const char *access, *secret, *token; /* token: the session token, or NULL */
	const char *region, *service;
};

/* A key with copies of its strings (token may be NULL); free with sigv4free. */
struct sigv4key *sigv4new(const char *access, const char *secret, const char *token, const char *region,
                          const char *service);
void sigv4free(struct sigv4key *k);
/* The headers that sign a request (method, url, the headers it already has as "Name: value", its
 * body) at time now: x-amz-date, x-amz-content-sha256, x-amz-security-token (with a token) and
 * Authorization, appended to out as "Name: value". Every header of the request is signed. */
int sigv4sign(const struct sigv4key *k, const char *method, const char *url, const char *const *headers,
              const char *body, size_t bodylen, time_t now, struct strv *out, struct err *e);

#endif
