/* sse: the event stream format of the HTML standard ("9.2 Server-sent events"): lines ended by
 * LF, CRLF or CR; "field: value"; a blank line ends an event; ':' starts a comment. */
#include <string.h>
#include "sse.h"
#include "../util/util.h"

int sseeach(const char *text, size_t len, int (*fn)(void *ctx, const char *event, const char *data), void *ctx)
{
	struct buf name = {0}, data = {0};
	int has = 0, rc = 0;
	size_t i = 0;
	bufputs(&name, "");
	bufputs(&data, "");
	while (i <= len && rc == 0) {
		size_t end = i;
		while (end < len && text[end] != '\n' && text[end] != '\r')
			end++;
		const char *line = text + i;
		size_t n = end - i;
		if (n == 0) {
			if (has)
				rc = fn(ctx, name.data, data.data);
			name.len = data.len = 0;
			bufputs(&name, "");
			bufputs(&data, "");
			has = 0;
		} else if (line[0] != ':') {
			const char *colon = memchr(line, ':', n);
			size_t fl = colon ? (size_t)(colon - line) : n;
			const char *v = colon ? colon + 1 : line + n;
			if (colon && v < line + n && *v == ' ')
				v++;
			size_t vl = (size_t)(line + n - v);
			if (fl == 4 && strncmp(line, "data", 4) == 0) {
				if (has)
					bufputc(&data, '\n');
				bufadd(&data, v, vl);
				has = 1;
			} else if (fl == 5 && strncmp(line, "event", 5) == 0) {
				name.len = 0;
				bufadd(&name, v, vl);
			}
		}
		if (end >= len) {
			if (has && rc == 0)
				rc = fn(ctx, name.data, data.data); /* a stream cut without its blank line */
			break;
		}
		i = end + (text[end] == '\r' && end + 1 < len && text[end + 1] == '\n' ? 2 : 1);
	}
	buffree(&name);
	buffree(&data);
	return rc;
}

int ssebody(const char *text, size_t len)
{
	while (len && (*text == '\n' || *text == '\r' || *text == ' '))
		text++, len--;
	return (len >= 5 && strncmp(text, "data:", 5) == 0) || (len >= 6 && strncmp(text, "event:", 6) == 0) ||
	       (len >= 1 && text[0] == ':');
}
