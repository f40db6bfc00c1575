/* sse: server-sent events (text/event-stream), as the model APIs stream their answers. */
#ifndef NS_SSE_H
#define NS_SSE_H

#include <stddef.h>

/* Call fn for each event of text: its name ("" when it has none) and its data lines joined by
 * '\n' (comments and events without data are skipped). Returns the first fn value that is not 0,
 * else 0. */
int sseeach(const char *text, size_t len, int (*fn)(void *ctx, const char *event, const char *data), void *ctx);
/* Whether a body looks like server-sent events (its first line starts "data:", "event:" or ":"),
 * for servers that stream without saying so in Content-Type. */
int ssebody(const char *text, size_t len);

#endif
