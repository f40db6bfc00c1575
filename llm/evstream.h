/* evstream: the AWS event stream encoding (application/vnd.amazon.eventstream), the binary
 * framing of Bedrock's streaming answers (ConverseStream, InvokeModelWithResponseStream). */
#ifndef NS_EVSTREAM_H
#define NS_EVSTREAM_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "../util/util.h"

/* The longest frame taken (the encoding's own limit is 16 MiB), and the most header bytes. */
#define EVFRAMEMAX ((size_t)16 << 20)
#define EVHEADMAX ((size_t)128 << 10)

/* One message of the stream: its :message-type, :event-type, :exception-type (or :error-code)
 * headers ("" when absent) and its payload, pointing into the data given to evstreameach. */
struct evmsg {
	char msgtype[32], evtype[64], exctype[64];
	const unsigned char *payload;
	size_t plen;
};

/* Call fn for each message of an event stream. Returns the first fn value that is not 0, else 0;
 * -1 with e filled at a frame that is cut short, too long, malformed or fails a CRC. */
int evstreameach(const unsigned char *data, size_t len, int (*fn)(void *ctx, const struct evmsg *m), void *ctx,
                 struct err *e);
/* Whether data starts like an event stream frame (a prelude whose CRC holds). */
int evstreamlike(const unsigned char *data, size_t len);
/* An exception or error message as an error body {"error": {"type", "message"}}; *status is the
 * HTTP status its class stands for (throttlingException 429, validationException 400, ...). */
cJSON *evstreamerror(const struct evmsg *m, int *status);

#endif
