/* rpc: line framing keeps an offset and a scan mark, so a long line coming in small pieces is
 * searched once (not once per piece) and taken lines are dropped in one move. */
#include <stdlib.h>
#include <string.h>
#include "rpc.h"

void rpcfeed(struct rpcframe *f, const char *p, size_t n)
{
	if (f->start && (f->start > f->b.len / 2 || f->start == f->b.len)) {
		memmove(f->b.data, f->b.data + f->start, f->b.len - f->start);
		f->b.len -= f->start;
		f->start = 0;
	}
	bufadd(&f->b, p, n);
}

/* The next whole line (*line, *n: without its end; valid until the next rpcfeed): 1, 0 when
 * none is whole (final: the rest is the last line), -1 when the line under way passes MCPMSGMAX. */
static int rpcline(struct rpcframe *f, const char **line, size_t *n, int final)
{
	if (!f->b.data)
		return 0;
	const char *s = f->b.data + f->start;
	size_t avail = f->b.len - f->start;
	const char *nl = avail > f->scan ? memchr(s + f->scan, '\n', avail - f->scan) : NULL;
	if (!nl) {
		f->scan = avail;
		if (avail > MCPMSGMAX)
			return -1;
		if (!final || !avail)
			return 0;
		nl = s + avail; /* the rest, without an end */
	}
	size_t len = (size_t)(nl - s);
	if (len > MCPMSGMAX)
		return -1;
	*line = s;
	*n = len && s[len - 1] == '\r' ? len - 1 : len;
	f->start += len < avail ? len + 1 : len;
	f->scan = 0;
	return 1;
}

int rpcbody(const char *p, size_t n, cJSON *inbox, struct err *e)
{
	if (jsonbfits(p, n, e) < 0)
		return -2;
	cJSON *j = cJSON_ParseWithLength(p, n);
	if (!j)
		return errf(e, "not JSON");
	if (cJSON_IsObject(j)) {
		cJSON_AddItemToArray(inbox, j);
		return 0;
	}
	if (!cJSON_IsArray(j)) {
		cJSON_Delete(j);
		return errf(e, "not a JSON-RPC message (an object or a batch)");
	}
	cJSON *it;
	while ((it = cJSON_DetachItemFromArray(j, 0))) {
		if (cJSON_IsObject(it))
			cJSON_AddItemToArray(inbox, it);
		else
			cJSON_Delete(it);
	}
	cJSON_Delete(j);
	return 0;
}

int rpcstdio(struct rpcframe *f, cJSON *inbox, struct buf *junk, struct err *e)
{
	const char *l;
	size_t n;
	int rc;
	while ((rc = rpcline(f, &l, &n, 0)) == 1) {
		struct err pe;
		if (n == 0)
			continue;
		int br = rpcbody(l, n, inbox, &pe);
		if (br == -2)
			return errf(e, "the server wrote a message beyond the caps (%.200s)", pe.msg);
		if (br < 0) {
			if (junk) {
				bufputs(junk, "stdout (not JSON-RPC): ");
				bufadd(junk, l, n < 4096 ? n : 4096);
				bufputc(junk, '\n');
			}
		}
	}
	if (rc < 0)
		return errf(e, "the server wrote a line longer than %zu MiB", MCPMSGMAX >> 20);
	return 0;
}

/* The event under way ends: its data is one message. */
static int dispatch(struct rpcsse *s, cJSON *inbox, struct err *e)
{
	int rc = 0;
	struct err pe;
	if (s->data.len && rpcbody(s->data.data, s->data.len, inbox, &pe) == -2)
		rc = errf(e, "an event beyond the caps (%.200s)", pe.msg);
	s->data.len = 0;
	return rc;
}

int rpcevents(struct rpcsse *s, int final, cJSON *inbox, struct err *e)
{
	const char *p;
	size_t len;
	int rc;
	while ((rc = rpcline(&s->f, &p, &len, final)) == 1) {
		if (len == 0) {
			if (dispatch(s, inbox, e) < 0)
				return -1;
		} else if (len >= 5 && strncmp(p, "data:", 5) == 0) {
			const char *v = p + 5;
			size_t vl = len - 5;
			if (vl && *v == ' ')
				v++, vl--;
			if (s->data.len + vl + 1 > MCPMSGMAX)
				return errf(e, "an event's data passes %zu MiB", MCPMSGMAX >> 20);
			if (s->data.len)
				bufadd(&s->data, "\n", 1);
			bufadd(&s->data, v, vl);
		} else if (len >= 3 && strncmp(p, "id:", 3) == 0) {
			const char *v = p + 3;
			size_t vl = len - 3;
			if (vl && *v == ' ')
				v++, vl--;
			s->lastid.len = 0;
			if (vl < 256 && !memchr(v, 0, vl) && !memchr(v, '\r', vl))
				bufadd(&s->lastid, v, vl);
		} else if (len >= 6 && strncmp(p, "retry:", 6) == 0) {
			char num[16];
			size_t k = len - 6 < sizeof num - 1 ? len - 6 : sizeof num - 1;
			memcpy(num, p + 6, k);
			num[k] = 0;
			long r = strtol(num, NULL, 10);
			if (r >= 0 && r <= 60000)
				s->retry = r;
		}
	}
	if (rc < 0)
		return errf(e, "an event stream line longer than %zu MiB", MCPMSGMAX >> 20);
	if (final)
		return dispatch(s, inbox, e);
	return 0;
}

void rpcssefree(struct rpcsse *s)
{
	buffree(&s->f.b);
	buffree(&s->data);
	buffree(&s->lastid);
	memset(s, 0, sizeof *s);
}
