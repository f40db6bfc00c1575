/* evstream: AWS event stream frames. Each is a prelude (total length, headers length: 4 bytes
 * big-endian each; the prelude's CRC32), the headers (name length: 1 byte, name, value type: 1
 * byte, value), the payload, and the CRC32 of everything before it. CRC32 is zlib's. */
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include "evstream.h"

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t crc(const unsigned char *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

int evstreamlike(const unsigned char *data, size_t len)
{
	return len >= 12 && be32(data) >= 16 && crc(data, 8) == be32(data + 8);
}

/* Read the headers of one frame into m; -1 when they are malformed. */
static int headers(const unsigned char *p, size_t n, struct evmsg *m)
{
	size_t i = 0;
	static const size_t fixed[] = {0, 0, 1, 2, 4, 8, 0, 0, 8, 16}; /* by value type */
	while (i < n) {
		size_t nl = p[i++];
		if (nl == 0 || nl > n - i)
			return -1;
		const unsigned char *name = p + i;
		i += nl;
		if (i >= n)
			return -1;
		unsigned t = p[i++];
		if (t > 9)
			return -1;
		size_t vl = fixed[t];
		const unsigned char *v = p + i;
		if (t == 6 || t == 7) {
			if (n - i < 2)
				return -1;
			vl = (size_t)p[i] << 8 | p[i + 1];
			i += 2;
			v = p + i;
		}
		if (vl > n - i)
			return -1;
		i += vl;
		if (t != 7)
			continue;
		char *dst = NULL;
		size_t cap = 0;
		if (nl == 13 && memcmp(name, ":message-type", 13) == 0)
			dst = m->msgtype, cap = sizeof m->msgtype;
		else if (nl == 11 && memcmp(name, ":event-type", 11) == 0)
			dst = m->evtype, cap = sizeof m->evtype;
		else if ((nl == 15 && memcmp(name, ":exception-type", 15) == 0) ||
		         (nl == 11 && memcmp(name, ":error-code", 11) == 0))
			dst = m->exctype, cap = sizeof m->exctype;
		if (dst) {
			size_t k = vl < cap - 1 ? vl : cap - 1;
			memcpy(dst, v, k);
			dst[k] = 0;
			for (size_t j = 0; j < k; j++) /* a name, never a control byte */
				if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-", dst[j]) || !dst[j])
					dst[j] = '?';
		}
	}
	return 0;
}

int evstreameach(const unsigned char *data, size_t len, int (*fn)(void *ctx, const struct evmsg *m), void *ctx,
                 struct err *e)
{
	size_t off = 0;
	int n = 0;
	while (off < len) {
		const unsigned char *f = data + off;
		size_t left = len - off;
		n++;
		if (left < 12)
			return errf(e, "event stream: frame %d is cut short (%zu bytes of its prelude)", n, left);
		uint32_t total = be32(f), hl = be32(f + 4);
		if (crc(f, 8) != be32(f + 8))
			return errf(e, "event stream: frame %d fails its prelude CRC", n);
		if (total < 16 || total > EVFRAMEMAX)
			return errf(e, "event stream: frame %d says %lu bytes (at most %zu taken)", n, (unsigned long)total,
			            EVFRAMEMAX);
		if (hl > total - 16 || hl > EVHEADMAX)
			return errf(e, "event stream: frame %d says %lu header bytes in a frame of %lu", n, (unsigned long)hl,
			            (unsigned long)total);
		if (total > left)
			return errf(e, "event stream: frame %d is cut short (%zu of its %lu bytes)", n, left, (unsigned long)total);
		if (crc(f, total - 4) != be32(f + total - 4))
			return errf(e, "event stream: frame %d fails its message CRC", n);
		struct evmsg m;
		memset(&m, 0, sizeof m);
		if (headers(f + 12, hl, &m) < 0)
			return errf(e, "event stream: frame %d has malformed headers", n);
		m.payload = f + 12 + hl;
		m.plen = total - 16 - hl;
		int rc = fn(ctx, &m);
		if (rc)
			return rc;
		off += total;
	}
	return 0;
}

cJSON *evstreamerror(const struct evmsg *m, int *status)
{
	/* Bedrock's exceptions and the HTTP status each has when it is the whole answer. */
	static const struct {
		const char *type;
		int status;
	} classes[] = {
		{"throttlingException", 429},        {"serviceUnavailableException", 503},
		{"internalServerException", 500},    {"modelStreamErrorException", 424},
		{"modelTimeoutException", 408},      {"modelNotReadyException", 429},
		{"validationException", 400},        {"accessDeniedException", 403},
		{"resourceNotFoundException", 404},  {"serviceQuotaExceededException", 400},
		{"modelErrorException", 424},
	};
	const char *type = m->exctype[0] ? m->exctype : m->evtype[0] ? m->evtype : "exception";
	*status = 500; /* one not known: a server error, retried */
	for (size_t i = 0; i < sizeof classes / sizeof *classes; i++)
		if (strcasecmp(type, classes[i].type) == 0)
			*status = classes[i].status;
	if (*status == 424)
		*status = 500; /* the model's stream broke: transient, as a 5xx */
	cJSON *pl = cJSON_ParseWithLength((const char *)m->payload, m->plen);
	const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pl, "message"));
	if (!msg)
		msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pl, "Message"));
	cJSON *out = cJSON_CreateObject(), *err = cJSON_AddObjectToObject(out, "error");
	cJSON_AddStringToObject(err, "type", type);
	cJSON_AddStringToObject(err, "message", msg ? msg : "an exception in the stream");
	cJSON_Delete(pl);
	return out;
}
