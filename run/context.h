/* context: the conversation sent to a model, kept within its context window. Before each request
 * its size in tokens is estimated from its bytes, at a tokens-per-byte rate calibrated by the usage
 * the provider reported for the previous request; when the estimate with the output cap passes a
 * high-water mark of the window, the oldest tool calls' arguments and tool results are elided in one step down to a low-water
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
	size_t lastbytes; /* bytes of the last request the provider counted */
	int64_t lastinput; /* the input tokens it counted for it, 0 when unknown */
};

/* Before any usage was reported: 1 token per 2 bytes, far above what tokenizers make of text or
 * JSON, so the first estimate is never low. */
#define CTX_RATE0 0.5

void ctxinit(struct ctx *c);
/* Tokens a request of bytes is estimated to hold (never less than it will): when it is longer than
 * the last one counted, that one's count plus the new bytes at the rate (whose margin then covers
 * only what is new); else all its bytes at the rate. */
int64_t ctxestimate(const struct ctx *c, size_t bytes);
/* Learn from a request of bytes the provider counted input tokens for (0: it did not say). */
void ctxcalibrate(struct ctx *c, size_t bytes, int64_t input);

/* The marks, as parts of the room the input has (the window less the output cap): past the high
 * one the oldest tool results are elided until the estimate is below the low one. */
#define CTX_HIGH 0.98
#define CTX_LOW 0.2
/* The newest turns (an assistant message and the results that follow it) never elided. */
enum { CTX_KEEP = 1 };

/* Make a request of input tokens (estimated) fit window with an output cap of outcap: when it
 * passes the high-water mark, elide the oldest tool results of messages (neutral form) in one step
 * down to the low-water mark, each replaced by a note naming its step (steps maps tool_call_id to
 * the step number) and how to get it again. *ev is NULL when nothing was elided, else the fields of
 * a context_elided event (the caller's). *after is the estimate after. Returns 1 when the request
 * cannot fit even with every older tool result elided, else 0. */
int ctxfit(const struct ctx *c, cJSON *messages, const cJSON *steps, int64_t input, int64_t outcap, int64_t window,
           int64_t *after, cJSON **ev);
/* Collapse every run of elided turns (an assistant message whose calls' arguments were elided, with
 * their results) and the collapse notes among them into one note, a user message naming how many
 * calls and which steps it stands for ({"role":"user","content",...,"elided":true,"collapsed":N,
 * "first","last"}), so the conversation's floor stops growing; the calls that go are taken out
 * of steps too, so that it holds what the conversation does. Deterministic: a replay collapses as
 * the night did. Returns how many messages fewer there are. */
int ctxcollapse(cJSON *messages, cJSON *steps);
/* context.compact: summarize. The oldest turns a summary may stand for: the messages from 1 (the
 * job's task, message 0, stays) up to the newest CTX_KEEP turns, no more than maxbytes of them
 * printed, ending before an assistant or user message (a call never loses its results). Returns
 * how many, 0 when fewer than two could go. */
int ctxcompactspan(const cJSON *messages, size_t maxbytes);
/* The messages [first, first + count) as a plain transcript for a summary request; owned. */
char *ctxtranscript(const cJSON *messages, int first, int count);
/* Replace the messages [first, first + count) by one user message that holds summary and says
 * what it stands for ("compacted": count); their calls' steps are forgotten, as ctxcollapse does.
 * Returns 0, or -1 with why filled when messages hold no such range. */
int ctxcompact(cJSON *messages, cJSON *steps, int first, int count, const char *summary, char *why, size_t whysize);

/* Replay: elide what one item of a recorded context_elided event names (its call_id; its bytes,
 * when given, must be the result's size; with "part":"arguments", the call's arguments and theirs),
 * with the note ctxfit would write. Returns 0, or -1 with
 * why filled when messages hold no such whole result. */
int ctxelideid(cJSON *messages, const cJSON *steps, const cJSON *item, char *why, size_t whysize);

#endif
