/* jsonout: cJSON_PrintUnformatted's bytes, written with runs of plain bytes copied whole.
 *
 * The output is that of Debian 12's cJSON (1.7.15): strings escape '"', '\\', \b \f \n \r \t and
 * every other byte below 0x20 as \u00xx (lower-case hex), and leave bytes from 0x80 as they are;
 * numbers print with 15 significant digits when those read back to the same double, else 17 (-0
 * as -0); NaN and infinities print as null; raw items as their text. test_jsonout holds the two
 * equal on random trees. */
#include <math.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonout.h"

/* Whether any of the 8 bytes of x needs an escape: below 0x20, '"' or '\\'. */
static int special8(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t q = x ^ (ones * '"'), s = x ^ (ones * '\\');
	uint64_t low = (x - ones * 0x20) & ~x;  /* high bit set where a byte is below 0x20 */
	uint64_t zq = (q - ones) & ~q, zs = (s - ones) & ~s; /* where a byte equals '"' or '\\' */
	return ((low | zq | zs) & highs) != 0;
}

static void str(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	bufgrow(b, n + 2);
	b->data[b->len++] = '"';
	size_t i = 0, run = 0;
	while (i < n) {
		uint64_t x;
		if (i + 8 <= n && (memcpy(&x, p + i, 8), !special8(x))) {
			i += 8;
			continue;
		}
		unsigned char c = p[i];
		if (c >= 0x20 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		bufadd(b, p + run, i - run);
		char esc[6] = {'\\', 0};
		size_t k = 2;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			k = 6;
		}
		bufadd(b, esc, k);
		run = ++i;
	}
	bufadd(b, p + run, n - run);
	bufputc(b, '"');
}

static void numtext(const cJSON *j, char t[32])
{
	double d = j->valuedouble, back;
	if (isnan(d) || isinf(d))
		snprintf(t, 32, "null");
	else {
		snprintf(t, 32, "%1.15g", d);
		double big = fabs(back = strtod(t, NULL)) > fabs(d) ? fabs(back) : fabs(d);
		if (fabs(back - d) > big * DBL_EPSILON)
			snprintf(t, 32, "%1.17g", d);
	}
}

static void num(struct buf *b, const cJSON *j)
{
	char t[32];
	numtext(j, t);
	bufputs(b, t);
}

/* The bytes str prints for s. */
static size_t strsize(const char *s)
{
	size_t n = 2;
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
		n += *p == '"' || *p == '\\' || *p == '\b' || *p == '\f' || *p == '\n' || *p == '\r' || *p == '\t' ? 2
		     : *p < 0x20 ? 6 : 1;
	return n;
}

size_t jsonoutlen(const cJSON *j)
{
	char t[32];
	switch (j->type & 0xff) {
	case cJSON_NULL: return 4;
	case cJSON_False: return 5;
	case cJSON_True: return 4;
	case cJSON_Number: numtext(j, t); return strlen(t);
	case cJSON_String: return strsize(j->valuestring);
	case cJSON_Raw: return j->valuestring ? strlen(j->valuestring) : 0;
	case cJSON_Array:
	case cJSON_Object: {
		int obj = (j->type & 0xff) == cJSON_Object;
		size_t n = 2;
		for (const cJSON *c = j->child; c; c = c->next)
			n += (c != j->child) + (obj ? strsize(c->string) + 1 : 0) + jsonoutlen(c);
		return n;
	}
	}
	return 0;
}

int jsonout(struct buf *b, const cJSON *j)
{
	size_t at = b->len;
	switch (j->type & 0xff) {
	case cJSON_NULL: bufputs(b, "null"); return 0;
	case cJSON_False: bufputs(b, "false"); return 0;
	case cJSON_True: bufputs(b, "true"); return 0;
	case cJSON_Number: num(b, j); return 0;
	case cJSON_String: str(b, j->valuestring); return 0;
	case cJSON_Raw:
		if (!j->valuestring)
			return -1;
		bufputs(b, j->valuestring);
		return 0;
	case cJSON_Array:
	case cJSON_Object: {
		int obj = (j->type & 0xff) == cJSON_Object;
		bufputc(b, obj ? '{' : '[');
		for (const cJSON *c = j->child; c; c = c->next) {
			if (c != j->child)
				bufputc(b, ',');
			if (obj) {
				str(b, c->string); /* none: "" as cJSON prints it */
				bufputc(b, ':');
			}
			if (jsonout(b, c) < 0)
				goto bad;
		}
		bufputc(b, obj ? '}' : ']');
		return 0;
	}
	}
bad:
	b->len = at;
	if (b->data)
		b->data[at] = 0;
	return -1;
}

char *jsonprint(const cJSON *j)
{
	struct buf b = {0};
	if (!j || jsonout(&b, j) < 0) {
		buffree(&b);
		return NULL;
	}
	return b.data;
}
