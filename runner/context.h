/* context: the conversation sent to a model, kept within its context window. Before each request
 * its size in tokens is estimated from its bytes, at a tokens-per-byte rate calibrated by the usage
 * the provider reported for the previous request; when the estimate with the output cap passes a
 * high-water mark of the window, the oldest tool results are elided in one step down to a low-water
 * mark, each replaced by a short note naming its step and how to get it again. The newest turns are
 * never elided, so between two elisions every request extends the one before (provider prompt
 * caches keep hitting). */
#ifndef NS_CONTEXT_H
#define NS_CONTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

struct ctx {
	double rate;      /* tokens per byte of request, with a margin; starts at CTX_RATE0 */
	size_t lastbytes; /* bytes of the last request sent */
};

/* Before any usage was reported: 1 token per 2 bytes, far above what tokenizers make of text or
 * JSON, so the first estimate is never low. */
#define CTX_RATE0 0.5

void ctxinit(struct ctx *c);
/* Tokens a request of bytes is estimated to hold (never less than it will). */
int64_t ctxestimate(const struct ctx *c, size_t bytes);
/* Learn from a request of bytes the provider counted input tokens for (0: it did not say). */
void ctxcalibrate(struct ctx *c, size_t bytes, int64_t input);

#endif
