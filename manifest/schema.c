/* schema: check and apply the JSON Schema subset described in schema.h. */
#include <locale.h>
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "schema.h"
#include "../util/jsonb.h"

#define MAXDEPTH 256   /* nested schema applications during one validation */
#define MAXLINES 25    /* error lines handed back to the caller */
#define MAXSHOW 300    /* bytes of a value list or branch summary inside one message */
#define MAXWORK (1 << 21) /* schema applications (and string bytes / 256, an object's members, uniqueItems' comparisons) one validation may spend */

/* How a keyword's value is checked. */
enum kind {
	KANY, KSTRING, KBOOL, KNUMBER, KPOSITIVE, KCOUNT, KARRAY, KTYPE, KENUM, KREQUIRED,
	KPATTERN, KPATTERNMAP, KSCHEMA, KITEMS, KSCHEMAMAP, KSCHEMALIST, KREF, KID,
};

#define KEYWORDS(X) \
	X("type", KTYPE) X("enum", KENUM) X("const", KANY) X("multipleOf", KPOSITIVE) \
	X("minimum", KNUMBER) X("maximum", KNUMBER) \
	X("exclusiveMinimum", KNUMBER) X("exclusiveMaximum", KNUMBER) \
	X("minLength", KCOUNT) X("maxLength", KCOUNT) X("pattern", KPATTERN) \
	X("prefixItems", KSCHEMALIST) X("items", KITEMS) X("minItems", KCOUNT) X("maxItems", KCOUNT) \
	X("uniqueItems", KBOOL) X("required", KREQUIRED) X("properties", KSCHEMAMAP) \
	X("patternProperties", KPATTERNMAP) X("additionalProperties", KSCHEMA) \
	X("allOf", KSCHEMALIST) X("anyOf", KSCHEMALIST) X("oneOf", KSCHEMALIST) X("not", KSCHEMA) \
	X("$defs", KSCHEMAMAP) X("definitions", KSCHEMAMAP) X("$ref", KREF) \
	X("title", KSTRING) X("description", KSTRING) X("$comment", KSTRING) X("default", KANY) \
	X("examples", KARRAY) X("format", KSTRING) X("readOnly", KBOOL) X("writeOnly", KBOOL) \
	X("deprecated", KBOOL) X("$schema", KSTRING) X("$id", KID)

#define KWNAME(n, k) n,
#define KWKIND(n, k) k,
static const char *const kwnames[] = {KEYWORDS(KWNAME) NULL};
static const enum kind kwkinds[] = {KEYWORDS(KWKIND)};

/* JSON Schema keywords we know of but do not implement: named as such in the error. */
static const char *const unsupported[] = {
	"additionalItems", "contains", "minContains", "maxContains", "dependencies",
	"dependentRequired", "dependentSchemas", "propertyNames", "minProperties", "maxProperties",
	"if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "$anchor", "$dynamicRef",
	"$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary", "contentEncoding",
	"contentMediaType", "contentSchema", "disallow", "extends", "divisibleBy", NULL,
};

static const char *const typenames[] = {
	"null", "boolean", "object", "array", "number", "string", "integer", NULL,
};

const char *const *schemakeywords(void)
{
	return kwnames;
}

/* ---- small helpers ---- */

static const cJSON *kw(const cJSON *s, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(s, name);
}

/* Math without libm (the build does not link it). */
static double absd(double d)
{
	return d < 0 ? -d : d;
}

/* d rounded toward zero; every double beyond 2^52 is already whole. */
static double truncd(double d)
{
	return absd(d) < 4503599627370496.0 ? (double)(int64_t)d : d;
}

static int isint(double d)
{
	return isfinite(d) && truncd(d) == d;
}

/* The shortest %g form that reads back as d. */
static void numstr(double d, char out[40])
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(out, 40, "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			return;
	}
}

/* Append a JSON pointer segment (~ and / escaped); returns the length to restore. */
static size_t ptrpush(struct buf *p, const char *seg)
{
	size_t old = p->len;
	bufputc(p, '/');
	for (; *seg; seg++) {
		if (*seg == '~')
			bufputs(p, "~0");
		else if (*seg == '/')
			bufputs(p, "~1");
		else
			bufputc(p, *seg);
	}
	return old;
}

static size_t ptrpushi(struct buf *p, int i)
{
	char n[16];
	snprintf(n, sizeof n, "%d", i);
	return ptrpush(p, n);
}

static void ptrpop(struct buf *p, size_t len)
{
	p->len = len;
	if (p->data)
		p->data[len] = 0;
}

static const char *ptrstr(const struct buf *p)
{
	return p->len ? p->data : "";
}

/* Append s quoted as a JSON string, cut after max bytes (on a character boundary). */
static void quote(struct buf *b, const char *s, size_t max)
{
	size_t start = b->len;
	bufputc(b, '"');
	for (; *s; s++) {
		unsigned char ch = *s;
		if (b->len - start >= max && (ch & 0xC0) != 0x80) {
			bufputs(b, "...");
			break;
		}
		if (ch == '"' || ch == '\\')
			bufprintf(b, "\\%c", ch);
		else if (ch < 0x20)
			bufprintf(b, "\\u%04x", ch);
		else
			bufputc(b, ch);
	}
	bufputc(b, '"');
}

/* Append a JSON value in compact form, cut after max bytes. */
static void putjson(struct buf *b, const cJSON *v, size_t max)
{
	char *s = cJSON_PrintUnformatted(v);
	if (!s) {
		bufputs(b, "?");
		return;
	}
	size_t n = strlen(s);
	if (n > max) {
		while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
			max--;
		bufadd(b, s, max);
		bufputs(b, "...");
	} else {
		bufadd(b, s, n);
	}
	cJSON_free(s);
}

/* Code points in a UTF-8 string: every byte that is not a continuation byte. */
static size_t cplen(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

struct validate;
static int spend(struct validate *c, size_t n);

/* JSON equality: numbers by value, objects regardless of key order. With c (uniqueItems, comparing
 * a model's items with each other), the work is charged: an element compared costs 1, a member
 * looked up by name the members of the object it is looked up in; 0 once the budget is spent. */
static int jsoneq(struct validate *c, const cJSON *a, const cJSON *b)
{
	if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
		return a->valuedouble == b->valuedouble;
	if (cJSON_IsBool(a) && cJSON_IsBool(b))
		return cJSON_IsTrue(a) == cJSON_IsTrue(b);
	if ((a->type & 0xFF) != (b->type & 0xFF))
		return 0;
	if (cJSON_IsNull(a))
		return 1;
	if (cJSON_IsString(a))
		return strcmp(a->valuestring, b->valuestring) == 0;
	if (cJSON_IsArray(a)) {
		const cJSON *x = a->child, *y = b->child;
		for (; x && y; x = x->next, y = y->next)
			if ((c && spend(c, 1)) || !jsoneq(c, x, y))
				return 0;
		return !x && !y;
	}
	if (cJSON_IsObject(a)) {
		int size = cJSON_GetArraySize(a);
		if (size != cJSON_GetArraySize(b))
			return 0;
		for (const cJSON *x = a->child; x; x = x->next) {
			if (c && spend(c, (size_t)size))
				return 0;
			const cJSON *y = kw(b, x->string);
			if (!y || !jsoneq(c, x, y))
				return 0;
		}
		return 1;
	}
	return 0;
}

/* Parse exactly n hex digits. */
static int hexval(const char *s, int n, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

/* Resolve a local $ref ("#" or "#/pointer", %-escapes and ~0 ~1 decoded); NULL if it fails. */
static const cJSON *refresolve(const cJSON *root, const char *ref)
{
	if (ref[0] != '#')
		return NULL;
	if (ref[1] == 0)
		return root;
	if (ref[1] != '/')
		return NULL;
	const cJSON *cur = root;
	const char *p = ref + 2;
	struct buf seg = {0};
	for (;;) {
		ptrpop(&seg, 0);
		for (; *p && *p != '/'; p++) {
			uint32_t v;
			if (*p == '%' && p[1] && p[2]) {
				if (hexval(p + 1, 2, &v) < 0 || v == 0) {
					cur = NULL;
					break;
				}
				bufputc(&seg, (char)v);
				p += 2;
			} else if (*p == '~' && (p[1] == '0' || p[1] == '1')) {
				bufputc(&seg, p[1] == '0' ? '~' : '/');
				p++;
			} else if (*p == '~' || *p == '%') {
				cur = NULL;
				break;
			} else {
				bufputc(&seg, *p);
			}
		}
		if (!cur)
			break;
		const char *name = ptrstr(&seg);
		if (cJSON_IsObject(cur)) {
			cur = kw(cur, name);
		} else if (cJSON_IsArray(cur)) {
			char *end;
			long i = strtol(name, &end, 10);
			int okidx = *name >= '0' && *name <= '9' && !*end && (name[0] != '0' || !name[1]);
			cur = okidx && i < INT32_MAX ? cJSON_GetArrayItem(cur, (int)i) : NULL;
		} else {
			cur = NULL;
		}
		if (!cur || !*p)
			break;
		p++;
	}
	buffree(&seg);
	return cur;
}

/* ---- ECMA-262 patterns to POSIX ERE ---- */

/* Decode one UTF-8 character; returns its length, or -1 when invalid. */
static int utf8dec(const char *s, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	int n;
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if (u[0] >= 0xC2 && u[0] <= 0xDF)
		n = 2, *cp = u[0] & 0x1F;
	else if (u[0] >= 0xE0 && u[0] <= 0xEF)
		n = 3, *cp = u[0] & 0x0F;
	else if (u[0] >= 0xF0 && u[0] <= 0xF4)
		n = 4, *cp = u[0] & 0x07;
	else
		return -1;
	for (int i = 1; i < n; i++) {
		if ((u[i] & 0xC0) != 0x80)
			return -1;
		*cp = *cp << 6 | (u[i] & 0x3F);
	}
	if ((n == 3 && *cp < 0x800) || (n == 4 && (*cp < 0x10000 || *cp > 0x10FFFF)) ||
	    (*cp >= 0xD800 && *cp <= 0xDFFF))
		return -1;
	return n;
}

static void utf8put(struct buf *b, uint32_t cp)
{
	char s[4];
	int n;
	if (cp < 0x80)
		s[0] = cp, n = 1;
	else if (cp < 0x800)
		s[0] = 0xC0 | cp >> 6, s[1] = 0x80 | (cp & 0x3F), n = 2;
	else if (cp < 0x10000)
		s[0] = 0xE0 | cp >> 12, s[1] = 0x80 | (cp >> 6 & 0x3F), s[2] = 0x80 | (cp & 0x3F), n = 3;
	else
		s[0] = 0xF0 | cp >> 18, s[1] = 0x80 | (cp >> 12 & 0x3F), s[2] = 0x80 | (cp >> 6 & 0x3F),
		s[3] = 0x80 | (cp & 0x3F), n = 4;
	bufadd(b, s, n);
}

static const char *const classsets[] = {
	['d'] = "0-9", ['w'] = "0-9A-Za-z_", ['s'] = " \t\n\v\f\r",
};

/* Parse the escape after a backslash at *pp: a character (*cp) or a class (*set = d D w W s S).
 * Returns 0, or -1 with why filled. */
static int rxescape(const char **pp, int inclass, uint32_t *cp, int *set, char *why, size_t wn)
{
	const char *p = *pp;
	char c = *p;
	*set = 0;
	*cp = 0;
	switch (c) {
	case 0:
		snprintf(why, wn, "trailing backslash");
		return -1;
	case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
		*set = c;
		p++;
		break;
	case 't': *cp = '\t'; p++; break;
	case 'n': *cp = '\n'; p++; break;
	case 'r': *cp = '\r'; p++; break;
	case 'f': *cp = '\f'; p++; break;
	case 'v': *cp = '\v'; p++; break;
	case 'b':
		if (!inclass) {
			snprintf(why, wn, "\\b (word boundary) is not supported");
			return -1;
		}
		*cp = '\b';
		p++;
		break;
	case 'x':
		if (hexval(p + 1, 2, cp) < 0) {
			snprintf(why, wn, "\\x needs two hex digits");
			return -1;
		}
		p += 3;
		break;
	case 'u':
		if (hexval(p + 1, 4, cp) < 0) {
			snprintf(why, wn, "\\u needs four hex digits (\\u{...} is not supported)");
			return -1;
		}
		p += 5;
		if (*cp >= 0xD800 && *cp <= 0xDBFF) {
			uint32_t lo;
			if (p[0] != '\\' || p[1] != 'u' || hexval(p + 2, 4, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF) {
				snprintf(why, wn, "lone surrogate \\u%04X", (unsigned)*cp);
				return -1;
			}
			*cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
			p += 6;
		} else if (*cp >= 0xDC00 && *cp <= 0xDFFF) {
			snprintf(why, wn, "lone surrogate \\u%04X", (unsigned)*cp);
			return -1;
		}
		break;
	default:
		if (c >= '0' && c <= '9') {
			snprintf(why, wn, "\\%c (back-reference or NUL) is not supported", c);
			return -1;
		}
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			snprintf(why, wn, "\\%c is not supported", c);
			return -1;
		} else {
			int n = utf8dec(p, cp);
			if (n < 0) {
				snprintf(why, wn, "not valid UTF-8");
				return -1;
			}
			p += n;
		}
	}
	if (*cp == 0 && !*set) {
		snprintf(why, wn, "NUL characters are not supported");
		return -1;
	}
	*pp = p;
	return 0;
}

/* One character outside brackets, escaped when ERE gives it a meaning. */
static void rxlit(struct buf *out, uint32_t cp)
{
	if (cp < 0x80 && strchr(".[()*+?{}|^$\\", (int)cp))
		bufputc(out, '\\');
	utf8put(out, cp);
}

/* Append characters lo..hi to a bracket body, leaving out ] ^ [ - (placed by the caller). */
static void rxrange(struct buf *out, uint32_t lo, uint32_t hi)
{
	while (lo <= hi) {
		if (lo == ']' || lo == '^' || lo == '[' || lo == '-') {
			lo++;
			continue;
		}
		uint32_t end = lo;
		while (end < hi && !strchr("]^[-", (int)(end + 1)))
			end++;
		utf8put(out, lo);
		if (end > lo + 1)
			bufputc(out, '-');
		if (end > lo)
			utf8put(out, end);
		lo = end + 1;
	}
}

/* Translate [...] at *pp (just after '['). */
static int rxclass(const char **pp, struct buf *out, char *why, size_t wn)
{
	const char *p = *pp;
	int neg = 0, sets[128] = {0}, special[128] = {0}, items = 0;
	struct buf body = {0};
	if (*p == '^')
		neg = 1, p++;
	while (*p != ']') {
		uint32_t lo, hi;
		int set;
		if (!*p) {
			snprintf(why, wn, "unterminated [");
			goto fail;
		}
		if (*p == '\\') {
			p++;
			if (rxescape(&p, 1, &lo, &set, why, wn) < 0)
				goto fail;
		} else {
			int n = utf8dec(p, &lo);
			if (n < 0) {
				snprintf(why, wn, "not valid UTF-8");
				goto fail;
			}
			set = 0;
			p += n;
		}
		if (set) {
			if (set == 'D' || set == 'W' || set == 'S') {
				snprintf(why, wn, "\\%c inside [...] is not supported", set);
				goto fail;
			}
			if (p[0] == '-' && p[1] != ']') {
				snprintf(why, wn, "\\%c cannot bound a range", set);
				goto fail;
			}
			sets[set] = 1;
			items++;
			continue;
		}
		hi = lo;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			p++;
			if (*p == '\\') {
				p++;
				if (rxescape(&p, 1, &hi, &set, why, wn) < 0)
					goto fail;
				if (set) {
					snprintf(why, wn, "\\%c cannot bound a range", set);
					goto fail;
				}
			} else {
				int n = utf8dec(p, &hi);
				if (n < 0) {
					snprintf(why, wn, "not valid UTF-8");
					goto fail;
				}
				p += n;
			}
			if (hi < lo) {
				snprintf(why, wn, "range out of order in [...]");
				goto fail;
			}
			if (hi >= 0x80 && hi != lo) {
				snprintf(why, wn, "ranges of non-ASCII characters are not supported");
				goto fail;
			}
		}
		for (uint32_t c = lo; c <= hi && c < 128; c++)
			if (strchr("]^[-", (int)c))
				special[c] = 1;
		rxrange(&body, lo, hi);
		items++;
	}
	if (!items) {
		snprintf(why, wn, "[] and [^] are not supported");
		goto fail;
	}
	for (const char *s = "dws"; *s; s++)
		if (sets[(int)*s])
			bufputs(&body, classsets[(int)*s]);
	if (special['['])
		bufputc(&body, '[');
	if (!neg && special['^'] && !special[']'] && body.len == 0) {
		/* a lone ^ (and maybe -) may not come first */
		bufputs(out, special['-'] ? "[-^]" : "\\^");
	} else {
		bufputs(out, neg ? "[^" : "[");
		if (special[']'])
			bufputc(out, ']');
		bufadd(out, body.data ? body.data : "", body.len);
		if (special['^'])
			bufputc(out, '^');
		if (special['-'])
			bufputc(out, '-');
		bufputc(out, ']');
	}
	buffree(&body);
	*pp = p + 1;
	return 0;
fail:
	buffree(&body);
	return -1;
}

/* Is p at an ECMA quantifier {n}, {n,} or {n,m}? Returns its length or 0. */
static size_t rxbrace(const char *p)
{
	size_t i = 1;
	if (!(p[i] >= '0' && p[i] <= '9'))
		return 0;
	while (p[i] >= '0' && p[i] <= '9')
		i++;
	if (p[i] == ',')
		for (i++; p[i] >= '0' && p[i] <= '9'; i++)
			;
	return p[i] == '}' ? i + 1 : 0;
}

/* The nodes regcomp may make of one pattern: it copies a {n,m}'s subexpression m times, so
 * (((a{1,60}){1,60}){1,60}){1,60} (36 bytes) took 5 GiB and more; and regexec builds its states
 * over them, about nodes^2 work: (a{1,100}){1,100} took 3 s to refuse 1000 characters. */
#define RXNODES 1000
#define RXGROUPS 256

/* The copies regcomp makes of what precedes a quantifier at p: {n}, {n,} and {n,m} its largest
 * count (and one more for an open end), + two, * and ? one. */
static double rxcopies(const char *p)
{
	if (*p != '{')
		return *p == '+' ? 2 : 1;
	double n = 0, m = -1;
	for (p++; *p >= '0' && *p <= '9'; p++)
		n = n * 10 + (*p - '0');
	if (*p == ',') {
		m = p[1] >= '0' && p[1] <= '9' ? 0 : n + 1;
		for (p++; *p >= '0' && *p <= '9'; p++)
			m = m * 10 + (*p - '0');
	}
	return m > n ? m : n > 0 ? n : 1;
}

/* Translate an ECMA-262 pattern into POSIX ERE (see schema.h for the subset). The nodes regcomp
 * will make are counted as it goes (each atom one, a group the sum of its own, a quantifier
 * multiplying what it repeats): more than RXNODES is refused before regcomp sees it. */
static int rxtranslate(const char *p, struct buf *out, double *nodes, char *why, size_t wn)
{
	int depth = 0, atom = 0;
	double size[RXGROUPS + 1] = {0}, last = 0; /* the nodes of each open group; of the last atom */
	while (*p) {
		if (atom == 1) { /* an atom was just added: it counts one */
			last = 1;
			size[depth] += 1;
			atom = 2;
		}
		char c = *p;
		if (c == '\\') {
			uint32_t cp;
			int set;
			p++;
			if (rxescape(&p, 0, &cp, &set, why, wn) < 0)
				return -1;
			if (set) {
				int lower = set | 0x20;
				bufprintf(out, "[%s%s]", set == lower ? "" : "^", classsets[lower]);
			} else {
				rxlit(out, cp);
			}
			atom = 1;
		} else if (c == '[') {
			p++;
			if (rxclass(&p, out, why, wn) < 0)
				return -1;
			atom = 1;
		} else if (c == '(') {
			if (depth == RXGROUPS) {
				snprintf(why, wn, "groups nested more than %d deep", RXGROUPS);
				return -1;
			}
			if (p[1] == '?') {
				if (p[2] != ':') {
					snprintf(why, wn, "lookaround and named groups ((?...) other than (?:) are not supported");
					return -1;
				}
				p += 2;
			}
			bufputc(out, '(');
			p++;
			size[++depth] = 0;
			atom = 0;
		} else if (c == ')') {
			if (--depth < 0) {
				snprintf(why, wn, "unmatched )");
				return -1;
			}
			bufputc(out, ')');
			p++;
			last = size[depth + 1] > 1 ? size[depth + 1] : 1;
			size[depth] += last;
			atom = 2;
			if (size[depth] > RXNODES) {
				snprintf(why, wn, "its repetitions make more than %d copies of what they repeat", RXNODES);
				return -1;
			}
		} else if (c == '*' || c == '+' || c == '?' || (c == '{' && rxbrace(p))) {
			size_t n = c == '{' ? rxbrace(p) : 1;
			if (!atom) {
				snprintf(why, wn, "quantifier %c with nothing to repeat", c);
				return -1;
			}
			double copies = rxcopies(p);
			size[depth] += last * (copies - 1);
			last *= copies;
			if (size[depth] > RXNODES) {
				snprintf(why, wn, "its repetitions make more than %d copies of what they repeat", RXNODES);
				return -1;
			}
			bufadd(out, p, n);
			p += n;
			if (*p == '?')  /* lazy: same strings match */
				p++;
			atom = 0;
		} else if (c == '|' || c == '^' || c == '$') {
			bufputc(out, c);
			p++;
			atom = 0;
		} else if (c == '.') {
			bufputs(out, "[^\n\r]");
			p++;
			atom = 1;
		} else {
			uint32_t cp;
			int n = utf8dec(p, &cp);
			if (n < 0) {
				snprintf(why, wn, "not valid UTF-8");
				return -1;
			}
			rxlit(out, cp);
			p += n;
			atom = 1;
		}
	}
	if (depth) {
		snprintf(why, wn, "unmatched (");
		return -1;
	}
	*nodes = size[0] + 1;
	return 0;
}

/* The locale patterns are compiled and run in: C.UTF-8 when it exists. 0 means "as is". */
static locale_t rxlocale(void)
{
	locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	if (!l)
		l = newlocale(LC_CTYPE_MASK, "C", (locale_t)0);
	return l;
}

/* Compile pattern into re (*nodes: about the nodes regcomp makes); returns 0, or -1 with why filled. */
static int rxcompile(const char *pattern, locale_t loc, regex_t *re, double *nodes, char *why, size_t wn)
{
	struct buf ere = {0};
	if (rxtranslate(pattern, &ere, nodes, why, wn) < 0) {
		buffree(&ere);
		return -1;
	}
	locale_t old = loc ? uselocale(loc) : (locale_t)0;
	int rc = regcomp(re, ere.data ? ere.data : "", REG_EXTENDED | REG_NOSUB);
	if (rc)
		regerror(rc, re, why, wn);
	if (loc)
		uselocale(old);
	buffree(&ere);
	return rc ? -1 : 0;
}

/* ---- schemacheck ---- */

struct node {
	const cJSON *s;
	char *ptr;   /* JSON pointer of s in the schema */
	int mark;    /* cycle search: 0 new, 1 on the path, 2 done */
};

struct check {
	const cJSON *root;
	struct node *nodes;    /* in document order */
	struct node **byaddr;  /* the same, sorted by address for nodefind */
	size_t n, cap;
	struct buf *ptr;
	struct err *e;
	locale_t loc;
};

static int cerr(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cerr(struct check *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->e->msg, sizeof c->e->msg, fmt, ap);
	va_end(ap);
	c->e->kind = ERR_INPUT;
	return -1;
}

static const char *jsontype(const cJSON *v)
{
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsNumber(v))
		return "number";
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsArray(v))
		return "array";
	if (cJSON_IsObject(v))
		return "object";
	return "invalid";
}

static int checkpattern(struct check *c, const char *pattern)
{
	regex_t re;
	char why[256];
	double nodes;
	if (rxcompile(pattern, c->loc, &re, &nodes, why, sizeof why) < 0) {
		struct buf q = {0};
		quote(&q, pattern, 200);
		cerr(c, "bad pattern %s: %s", q.data, why);
		buffree(&q);
		return -1;
	}
	regfree(&re);
	return 0;
}

static int checktypename(struct check *c, const cJSON *t)
{
	if (!cJSON_IsString(t))
		return cerr(c, "type names must be strings, got %s", jsontype(t));
	for (int i = 0; typenames[i]; i++)
		if (strcmp(t->valuestring, typenames[i]) == 0)
			return 0;
	const char *near = didyoumean(t->valuestring, typenames);
	if (near)
		return cerr(c, "unknown type \"%s\" (did you mean \"%s\"?)", t->valuestring, near);
	return cerr(c, "unknown type \"%s\" (types: null, boolean, object, array, number, string, integer)",
		t->valuestring);
}

static int checkschema(struct check *c, const cJSON *s, int depth);

static int checkvalue(struct check *c, const cJSON *s, const cJSON *v, enum kind k, int depth)
{
	const char *name = v->string;
	switch (k) {
	case KANY:
		return 0;
	case KSTRING:
		return cJSON_IsString(v) ? 0 : cerr(c, "%s must be a string, got %s", name, jsontype(v));
	case KBOOL:
		return cJSON_IsBool(v) ? 0 : cerr(c, "%s must be true or false, got %s", name, jsontype(v));
	case KARRAY:
		return cJSON_IsArray(v) ? 0 : cerr(c, "%s must be an array, got %s", name, jsontype(v));
	case KNUMBER:
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
			return cerr(c, "%s must be a number, got %s", name, jsontype(v));
		return 0;
	case KPOSITIVE:
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble <= 0)
			return cerr(c, "%s must be a number greater than 0", name);
		return 0;
	case KCOUNT:
		if (!cJSON_IsNumber(v) || !isint(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > 9007199254740992.0)
			return cerr(c, "%s must be a non-negative integer", name);
		return 0;
	case KTYPE: {
		if (cJSON_IsString(v))
			return checktypename(c, v);
		if (!cJSON_IsArray(v) || !v->child)
			return cerr(c, "type must be a type name or a non-empty array of them");
		int i = 0;
		for (const cJSON *t = v->child; t; t = t->next, i++) {
			size_t mark = ptrpushi(c->ptr, i);
			if (checktypename(c, t) < 0)
				return -1;
			for (const cJSON *u = v->child; u != t; u = u->next)
				if (strcmp(u->valuestring, t->valuestring) == 0)
					return cerr(c, "type \"%s\" is listed twice", t->valuestring);
			ptrpop(c->ptr, mark);
		}
		return 0;
	}
	case KENUM:
		if (!cJSON_IsArray(v) || !v->child)
			return cerr(c, "enum must be a non-empty array");
		return 0;
	case KREQUIRED: {
		if (!cJSON_IsArray(v))
			return cerr(c, "required must be an array of property names, got %s", jsontype(v));
		int i = 0;
		for (const cJSON *t = v->child; t; t = t->next, i++) {
			size_t mark = ptrpushi(c->ptr, i);
			if (!cJSON_IsString(t))
				return cerr(c, "required must list property names (strings), got %s", jsontype(t));
			for (const cJSON *u = v->child; u != t; u = u->next)
				if (strcmp(u->valuestring, t->valuestring) == 0)
					return cerr(c, "required lists \"%s\" twice", t->valuestring);
			ptrpop(c->ptr, mark);
		}
		return 0;
	}
	case KPATTERN:
		if (!cJSON_IsString(v))
			return cerr(c, "pattern must be a string, got %s", jsontype(v));
		return checkpattern(c, v->valuestring);
	case KPATTERNMAP:
		if (!cJSON_IsObject(v))
			return cerr(c, "%s must be an object of pattern: schema, got %s", name, jsontype(v));
		for (const cJSON *t = v->child; t; t = t->next) {
			size_t mark = ptrpush(c->ptr, t->string);
			if (checkpattern(c, t->string) < 0 || checkschema(c, t, depth + 1) < 0)
				return -1;
			ptrpop(c->ptr, mark);
		}
		return 0;
	case KITEMS:
		if (cJSON_IsArray(v))
			return cerr(c, "items must be a schema; the array (tuple) form is not supported: use prefixItems");
		return checkschema(c, v, depth + 1);
	case KSCHEMA:
		return checkschema(c, v, depth + 1);
	case KSCHEMAMAP:
		if (!cJSON_IsObject(v))
			return cerr(c, "%s must be an object of name: schema, got %s", name, jsontype(v));
		for (const cJSON *t = v->child; t; t = t->next) {
			size_t mark = ptrpush(c->ptr, t->string);
			if (checkschema(c, t, depth + 1) < 0)
				return -1;
			ptrpop(c->ptr, mark);
		}
		return 0;
	case KSCHEMALIST: {
		if (!cJSON_IsArray(v) || !v->child)
			return cerr(c, "%s must be a non-empty array of schemas", name);
		int i = 0;
		for (const cJSON *t = v->child; t; t = t->next, i++) {
			size_t mark = ptrpushi(c->ptr, i);
			if (checkschema(c, t, depth + 1) < 0)
				return -1;
			ptrpop(c->ptr, mark);
		}
		return 0;
	}
	case KREF:
		if (!cJSON_IsString(v))
			return cerr(c, "$ref must be a string, got %s", jsontype(v));
		if (v->valuestring[0] != '#')
			return cerr(c, "$ref \"%s\": only local references (\"#/$defs/name\") are supported", v->valuestring);
		if (v->valuestring[1] && v->valuestring[1] != '/')
			return cerr(c, "$ref \"%s\": anchors are not supported, use \"#/$defs/name\"", v->valuestring);
		return 0;  /* resolved once the whole schema is known */
	case KID:
		if (s != c->root)
			return cerr(c, "$id is only allowed at the root of the schema");
		return cJSON_IsString(v) ? 0 : cerr(c, "$id must be a string, got %s", jsontype(v));
	}
	return 0;
}

static int checkschema(struct check *c, const cJSON *s, int depth)
{
	if (depth > MAXDEPTH)
		return cerr(c, "schema nested more than %d deep", MAXDEPTH);
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 32;
		c->nodes = xrealloc(c->nodes, c->cap * sizeof *c->nodes);
	}
	c->nodes[c->n++] = (struct node){s, xstrdup(ptrstr(c->ptr)), 0};
	if (cJSON_IsBool(s))
		return 0;
	if (!cJSON_IsObject(s))
		return cerr(c, "a schema must be an object, true or false; got %s", jsontype(s));
	for (const cJSON *v = s->child; v; v = v->next) {
		size_t mark = ptrpush(c->ptr, v->string);
		for (const cJSON *u = s->child; u != v; u = u->next)
			if (strcmp(u->string, v->string) == 0)
				return cerr(c, "keyword \"%s\" appears twice", v->string);
		int k = -1;
		for (int i = 0; kwnames[i]; i++)
			if (strcmp(kwnames[i], v->string) == 0)
				k = i;
		if (k < 0) {
			for (int i = 0; unsupported[i]; i++)
				if (strcmp(unsupported[i], v->string) == 0)
					return cerr(c, "keyword \"%s\" is not supported by this schema subset", v->string);
			const char *near = didyoumean(v->string, kwnames);
			if (near)
				return cerr(c, "unknown keyword \"%s\" (did you mean \"%s\"?)", v->string, near);
			return cerr(c, "unknown keyword \"%s\"", v->string);
		}
		if (checkvalue(c, s, v, kwkinds[k], depth) < 0)
			return -1;
		ptrpop(c->ptr, mark);
	}
	return 0;
}

static int nodecmp(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a, *y = *(struct node *const *)b;
	return x->s < y->s ? -1 : x->s > y->s;
}

static struct node *nodefind(struct check *c, const cJSON *s)
{
	struct node key = {s, NULL, 0}, *kp = &key, **hit;
	hit = bsearch(&kp, c->byaddr, c->n, sizeof *c->byaddr, nodecmp);
	return hit ? *hit : NULL;
}

static void seterrat(struct check *c, const char *ptr, const char *suffix)
{
	ptrpop(c->ptr, 0);
	bufputs(c->ptr, ptr);
	bufputs(c->ptr, suffix);
}

/* Find a loop of schemas applied in place (same value): $ref, allOf, anyOf, oneOf, not. */
static int checkloop(struct check *c, struct node *u, int depth)
{
	static const char *const lists[] = {"allOf", "anyOf", "oneOf", NULL};
	const cJSON *t;
	if (depth > MAXDEPTH) {
		seterrat(c, u->ptr, "");
		return cerr(c, "more than %d schemas applied to the same value through $ref, allOf, anyOf, oneOf, not",
			MAXDEPTH);
	}
	u->mark = 1;
	if (cJSON_IsObject(u->s)) {
		const cJSON *next[2] = {NULL, NULL};
		const char *via[2] = {"/$ref", "/not"};
		if ((t = kw(u->s, "$ref")))
			next[0] = refresolve(c->root, t->valuestring);
		next[1] = kw(u->s, "not");
		for (int i = 0; i < 2; i++) {
			struct node *v = next[i] ? nodefind(c, next[i]) : NULL;
			if (!v)
				continue;
			if (v->mark == 1) {
				seterrat(c, u->ptr, via[i]);
				return cerr(c, "$ref loop: reaches #%s again without going into the value", v->ptr);
			}
			if (v->mark == 0 && checkloop(c, v, depth + 1) < 0)
				return -1;
		}
		for (int l = 0; lists[l]; l++) {
			if (!(t = kw(u->s, lists[l])))
				continue;
			int i = 0;
			for (const cJSON *b = t->child; b; b = b->next, i++) {
				struct node *v = nodefind(c, b);
				if (v && v->mark == 1) {
					char via2[48];
					snprintf(via2, sizeof via2, "/%s/%d", lists[l], i);
					seterrat(c, u->ptr, via2);
					return cerr(c, "$ref loop: reaches #%s again without going into the value", v->ptr);
				}
				if (v && v->mark == 0 && checkloop(c, v, depth + 1) < 0)
					return -1;
			}
		}
	}
	u->mark = 2;
	return 0;
}

int schemacheck(const cJSON *schema, struct buf *pointer, struct err *e)
{
	struct buf own = {0};
	struct err scratch;
	struct check c = {.root = schema, .ptr = pointer ? pointer : &own, .e = e ? e : &scratch};
	int rc = -1;
	ptrpop(c.ptr, 0);
	if (!schema) {
		cerr(&c, "no schema");
		goto out;
	}
	c.loc = rxlocale();
	if (checkschema(&c, schema, 0) < 0)
		goto out;
	c.byaddr = xmalloc(c.n * sizeof *c.byaddr);
	for (size_t i = 0; i < c.n; i++)
		c.byaddr[i] = &c.nodes[i];
	qsort(c.byaddr, c.n, sizeof *c.byaddr, nodecmp);
	for (size_t i = 0; i < c.n; i++) {
		const cJSON *r = cJSON_IsObject(c.nodes[i].s) ? kw(c.nodes[i].s, "$ref") : NULL;
		if (!r)
			continue;
		const cJSON *t = refresolve(schema, r->valuestring);
		if (!t || !nodefind(&c, t)) {
			seterrat(&c, c.nodes[i].ptr, "/$ref");
			cerr(&c, t ? "$ref \"%s\" does not point to a schema" : "$ref \"%s\" does not resolve",
				r->valuestring);
			goto out;
		}
	}
	for (size_t i = 0; i < c.n; i++)
		if (c.nodes[i].mark == 0 && checkloop(&c, &c.nodes[i], 0) < 0)
			goto out;
	ptrpop(c.ptr, 0);
	rc = 0;
out:
	for (size_t i = 0; i < c.n; i++)
		free(c.nodes[i].ptr);
	free(c.nodes);
	free(c.byaddr);
	if (c.loc)
		freelocale(c.loc);
	buffree(&own);
	return rc;
}

/* ---- schemavalidate ---- */

struct rx {
	const char *key;   /* the pattern string inside the schema */
	regex_t re;
	int ok;
	double nodes;      /* about the nodes regcomp made */
	struct rx *next;
};

struct validate {
	const cJSON *root;
	locale_t loc;
	struct rx *rx;
	int depth;
	size_t work; /* spent of MAXWORK: anyOf, oneOf and allOf may apply a schema to a value many times */
	int over;    /* MAXWORK was passed: every check from then on fails at once */
};

/* Charge n units of work; 1 once the budget is spent (the validation then stops, failing). */
static int spend(struct validate *c, size_t n)
{
	c->work += n;
	if (c->work > MAXWORK)
		c->over = 1;
	return c->over;
}

/* The pointer as shown in messages: "(root)" for "", control characters escaped, the middle of
 * a very long one (a model may invent huge keys) cut out. */
static void showptr(struct buf *out, const struct buf *ptr)
{
	size_t head = ptr->len, tail = ptr->len;
	if (!ptr->len) {
		bufputs(out, "(root)");
		return;
	}
	if (ptr->len > 2 * MAXSHOW / 3) {
		head = MAXSHOW / 3;
		tail = ptr->len - MAXSHOW / 3;
		while (head > 0 && ((unsigned char)ptr->data[head] & 0xC0) == 0x80)
			head--;
		while (tail < ptr->len && ((unsigned char)ptr->data[tail] & 0xC0) == 0x80)
			tail++;
	}
	for (size_t i = 0; i < ptr->len; i++) {
		unsigned char ch = ptr->data[i];
		if (i == head && head < tail) {
			bufputs(out, "...");
			i = tail - 1;
		} else if (ch < 0x20 || ch == 0x7f) {
			bufprintf(out, "\\u%04x", ch);
		} else {
			bufputc(out, ch);
		}
	}
}

static int verr(struct buf *out, const struct buf *ptr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int verr(struct buf *out, const struct buf *ptr, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	showptr(out, ptr);
	bufprintf(out, ": %s\n", msg);
	return 1;
}

static int rxmatch(struct validate *c, const char *pattern, const char *s)
{
	struct rx *r;
	for (r = c->rx; r; r = r->next)
		if (r->key == pattern)
			break;
	if (!r) {
		char why[256];
		r = xcalloc(1, sizeof *r);
		r->key = pattern;
		r->ok = rxcompile(pattern, c->loc, &r->re, &r->nodes, why, sizeof why) == 0;
		spend(c, (size_t)(r->nodes * r->nodes / 25)); /* the states regexec builds over its nodes, once */
		r->next = c->rx;
		c->rx = r;
	}
	if (!r->ok || spend(c, (size_t)((double)(strlen(s) + 1) * r->nodes / 512))) /* a step per node a character */
		return 0;
	locale_t old = c->loc ? uselocale(c->loc) : (locale_t)0;
	int m = regexec(&r->re, s, 0, NULL, 0) == 0;
	if (c->loc)
		uselocale(old);
	return m;
}

static int typeis(const char *t, const cJSON *v)
{
	if (strcmp(t, "null") == 0)
		return cJSON_IsNull(v);
	if (strcmp(t, "boolean") == 0)
		return cJSON_IsBool(v);
	if (strcmp(t, "object") == 0)
		return cJSON_IsObject(v);
	if (strcmp(t, "array") == 0)
		return cJSON_IsArray(v);
	if (strcmp(t, "number") == 0)
		return cJSON_IsNumber(v);
	if (strcmp(t, "string") == 0)
		return cJSON_IsString(v);
	if (strcmp(t, "integer") == 0)
		return cJSON_IsNumber(v) && isint(v->valuedouble);
	return 0;
}

/* "string", "string or null", "integer, string or null". */
static void typelist(struct buf *b, const cJSON *type)
{
	if (cJSON_IsString(type)) {
		bufputs(b, type->valuestring);
		return;
	}
	for (const cJSON *t = type->child; t; t = t->next) {
		if (t != type->child)
			bufputs(b, t->next ? ", " : " or ");
		bufputs(b, t->valuestring);
	}
}

/* Exact for integers below 2^63; otherwise the quotient within 1e-9 of a whole number. */
static int multipleof(double d, double m)
{
	if (isint(d) && isint(m) && absd(d) < 9.2e18 && m < 9.2e18)
		return (int64_t)d % (int64_t)m == 0;
	double q = d / m;
	if (!isfinite(q))
		return 0;
	double r = truncd(q + (q < 0 ? -0.5 : 0.5));
	return absd(q - r) <= 1e-9 * absd(r);
}

static int vschema(struct validate *c, const cJSON *s, const cJSON *v, struct buf *ptr, struct buf *out);

/* Append "[i] first error (+N more)" for a failed branch; the pointer is dropped when it is the
 * branch's own. */
static void branchsum(struct buf *sum, int i, int n, const struct buf *errs, const struct buf *ptr)
{
	struct buf here = {0};
	showptr(&here, ptr);
	bufputs(&here, ": ");
	const char *line = errs->data ? errs->data : "";
	size_t len = strcspn(line, "\n");
	if (len >= here.len && strncmp(line, here.data, here.len) == 0)
		line += here.len, len -= here.len;
	if (len > MAXSHOW / 2) {
		len = MAXSHOW / 2;
		while (len > 0 && ((unsigned char)line[len] & 0xC0) == 0x80)
			len--;
	}
	bufprintf(sum, "%s[%d] %.*s%s", sum->len ? "; " : "", i, (int)len, line,
		len < strcspn(line, "\n") ? "..." : "");
	if (n > 1)
		bufprintf(sum, " (+%d more)", n - 1);
	buffree(&here);
}

static int vobject(struct validate *c, const cJSON *s, const cJSON *v, struct buf *ptr, struct buf *out)
{
	const cJSON *k, *props = kw(s, "properties"), *pprops = kw(s, "patternProperties");
	const cJSON *addl = kw(s, "additionalProperties");
	int n = 0;
	if ((k = kw(s, "required")))
		for (const cJSON *r = k->child; r; r = r->next)
			if (!kw(v, r->valuestring)) {
				struct buf q = {0};
				quote(&q, r->valuestring, MAXSHOW);
				n += verr(out, ptr, "missing required property %s", q.data);
				buffree(&q);
			}
	size_t members = (size_t)cJSON_GetArraySize(v), i = 0;
	unsigned char *rep = xcalloc(members ? members : 1, 1);
	jsonbrepeats(v, rep);
	for (const cJSON *m = v->child; m; m = m->next, i++) {
		size_t mark = ptrpush(ptr, m->string);
		int matched = 0;
		const cJSON *ps;
		if (rep[i])
			n += verr(out, ptr, "duplicate property");
		if (props && (ps = kw(props, m->string))) {
			matched = 1;
			n += vschema(c, ps, m, ptr, out);
		}
		for (ps = pprops ? pprops->child : NULL; ps; ps = ps->next)
			if (rxmatch(c, ps->string, m->string)) {
				matched = 1;
				n += vschema(c, ps, m, ptr, out);
			}
		if (!matched && cJSON_IsFalse(addl)) {
			struct buf allowed = {0};
			for (const cJSON *p = props ? props->child : NULL; p; p = p->next) {
				if (allowed.len > MAXSHOW) {
					bufputs(&allowed, ", ...");
					break;
				}
				bufputs(&allowed, allowed.len ? ", " : "; allowed: ");
				quote(&allowed, p->string, 80);
			}
			if (pprops)
				bufputs(&allowed, allowed.len ? " and names matching patternProperties" :
					"; allowed: names matching patternProperties");
			n += verr(out, ptr, "property not allowed%s", allowed.data ? allowed.data : "");
			buffree(&allowed);
		} else if (!matched && addl) {
			n += vschema(c, addl, m, ptr, out);
		}
		ptrpop(ptr, mark);
	}
	free(rep);
	return n;
}

static int varray(struct validate *c, const cJSON *s, const cJSON *v, struct buf *ptr, struct buf *out)
{
	const cJSON *k, *pre = kw(s, "prefixItems"), *items = kw(s, "items");
	int n = 0, size = cJSON_GetArraySize(v), npre = 0, i = 0;
	char num[40];
	const cJSON *p = pre ? pre->child : NULL;
	for (const cJSON *x = v->child; x; x = x->next, i++) {
		size_t mark = ptrpushi(ptr, i);
		if (p) {
			n += vschema(c, p, x, ptr, out);
			p = p->next;
			npre++;
		} else if (items && !cJSON_IsFalse(items)) {
			n += vschema(c, items, x, ptr, out);
		}
		ptrpop(ptr, mark);
	}
	if (cJSON_IsFalse(items) && size > npre) {
		int max = pre ? cJSON_GetArraySize(pre) : 0;
		n += verr(out, ptr, "must have at most %d items (items is false), got %d", max, size);
	}
	if ((k = kw(s, "minItems")) && size < k->valuedouble) {
		numstr(k->valuedouble, num);
		n += verr(out, ptr, "must have at least %s items, got %d", num, size);
	}
	if ((k = kw(s, "maxItems")) && size > k->valuedouble) {
		numstr(k->valuedouble, num);
		n += verr(out, ptr, "must have at most %s items, got %d", num, size);
	}
	if ((k = kw(s, "uniqueItems")) && cJSON_IsTrue(k)) {
		int j = 0;
		for (const cJSON *x = v->child; x; x = x->next, j++) {
			int i2 = 0;
			if (spend(c, (size_t)j)) /* a comparison with each item before it */
				return n + 1;
			for (const cJSON *y = v->child; y != x; y = y->next, i2++)
				if (jsoneq(c, x, y)) {
					size_t mark = ptrpushi(ptr, j);
					n += verr(out, ptr, "duplicate of item %d; items must be unique", i2);
					ptrpop(ptr, mark);
					break;
				}
		}
	}
	return n;
}

static int vnumber(const cJSON *s, double d, struct buf *ptr, struct buf *out)
{
	const cJSON *k;
	char a[40], b[40];
	int n = 0;
	numstr(d, b);
	if ((k = kw(s, "multipleOf")) && !multipleof(d, k->valuedouble)) {
		numstr(k->valuedouble, a);
		n += verr(out, ptr, "must be a multiple of %s, got %s", a, b);
	}
	if ((k = kw(s, "minimum")) && d < k->valuedouble) {
		numstr(k->valuedouble, a);
		n += verr(out, ptr, "must be >= %s, got %s", a, b);
	}
	if ((k = kw(s, "exclusiveMinimum")) && d <= k->valuedouble) {
		numstr(k->valuedouble, a);
		n += verr(out, ptr, "must be > %s, got %s", a, b);
	}
	if ((k = kw(s, "maximum")) && d > k->valuedouble) {
		numstr(k->valuedouble, a);
		n += verr(out, ptr, "must be <= %s, got %s", a, b);
	}
	if ((k = kw(s, "exclusiveMaximum")) && d >= k->valuedouble) {
		numstr(k->valuedouble, a);
		n += verr(out, ptr, "must be < %s, got %s", a, b);
	}
	return n;
}

static int vstring(struct validate *c, const cJSON *s, const char *str, struct buf *ptr, struct buf *out)
{
	const cJSON *k;
	char a[40];
	int n = 0;
	size_t len = cplen(str);
	if ((k = kw(s, "minLength")) && len < k->valuedouble) {
		numstr(k->valuedouble, a);
		n += verr(out, ptr, "must have at least %s characters, got %zu", a, len);
	}
	if ((k = kw(s, "maxLength")) && len > k->valuedouble) {
		numstr(k->valuedouble, a);
		n += verr(out, ptr, "must have at most %s characters, got %zu", a, len);
	}
	if ((k = kw(s, "pattern")) && !rxmatch(c, k->valuestring, str)) {
		struct buf q = {0};
		quote(&q, k->valuestring, MAXSHOW);
		n += verr(out, ptr, "must match the pattern %s", q.data);
		buffree(&q);
	}
	return n;
}

/* anyOf / oneOf: one error naming how the branches failed. */
static int vbranches(struct validate *c, const cJSON *list, int one, const cJSON *v, struct buf *ptr, struct buf *out)
{
	struct buf sum = {0}, tmp = {0};
	int i = 0, passed = 0, first = -1, second = -1, n = 0, cut = 0;
	for (const cJSON *b = list->child; b; b = b->next, i++) {
		ptrpop(&tmp, 0);
		int e = vschema(c, b, v, ptr, &tmp);
		if (e == 0) {
			passed++;
			if (first < 0)
				first = i;
			else if (second < 0)
				second = i;
			if (!one)
				break;
		} else if (sum.len < MAXSHOW) {
			branchsum(&sum, i, e, &tmp, ptr);
		} else if (!cut) {
			bufputs(&sum, "; ...");
			cut = 1;
		}
	}
	if (passed == 0)
		n = verr(out, ptr, "matches none of the %s branches: %s", one ? "oneOf" : "anyOf", sum.data);
	else if (one && passed > 1)
		n = verr(out, ptr, "matches oneOf branches %d and %d%s; must match exactly one", first, second,
			passed > 2 ? " (and more)" : "");
	buffree(&sum);
	buffree(&tmp);
	return n;
}

static int vschema(struct validate *c, const cJSON *s, const cJSON *v, struct buf *ptr, struct buf *out)
{
	const cJSON *k;
	int n = 0;
	if (cJSON_IsTrue(s))
		return 0;
	if (cJSON_IsFalse(s))
		return verr(out, ptr, "not allowed here (the schema is false)");
	if (c->depth >= MAXDEPTH)
		return verr(out, ptr, "nested too deeply (more than %d schemas)", MAXDEPTH);
	size_t width = cJSON_IsString(v) ? strlen(v->valuestring) / 256 : cJSON_IsObject(v) ? (size_t)cJSON_GetArraySize(v) : 0;
	if (c->over || spend(c, 1 + width)) /* an object's members are sorted to find a repeated one */
		return 1; /* schemavalidate says why, once */
	c->depth++;
	if ((k = kw(s, "$ref"))) {
		const cJSON *t = refresolve(c->root, k->valuestring);
		n += t ? vschema(c, t, v, ptr, out) : verr(out, ptr, "$ref %s does not resolve", k->valuestring);
	}
	if ((k = kw(s, "type"))) {
		int okk = 0;
		if (cJSON_IsString(k))
			okk = typeis(k->valuestring, v);
		for (const cJSON *t = cJSON_IsArray(k) ? k->child : NULL; t && !okk; t = t->next)
			okk = typeis(t->valuestring, v);
		if (!okk) {
			struct buf want = {0};
			typelist(&want, k);
			n += verr(out, ptr, "expected %s, got %s", want.data, jsontype(v));
			buffree(&want);
			goto done;  /* the other keywords would only add noise */
		}
	}
	if ((k = kw(s, "enum"))) {
		const cJSON *e;
		for (e = k->child; e && !jsoneq(NULL, e, v); e = e->next)
			;
		if (!e) {
			struct buf list = {0};
			for (e = k->child; e; e = e->next) {
				if (list.len > MAXSHOW) {
					bufputs(&list, ", ...");
					break;
				}
				if (e != k->child)
					bufputs(&list, ", ");
				putjson(&list, e, MAXSHOW);
			}
			n += verr(out, ptr, "must be one of: %s", list.data);
			buffree(&list);
		}
	}
	if ((k = kw(s, "const")) && !jsoneq(NULL, k, v)) {
		struct buf want = {0};
		putjson(&want, k, MAXSHOW);
		n += verr(out, ptr, "must be %s", want.data);
		buffree(&want);
	}
	if (cJSON_IsNumber(v))
		n += vnumber(s, v->valuedouble, ptr, out);
	else if (cJSON_IsString(v))
		n += vstring(c, s, v->valuestring, ptr, out);
	else if (cJSON_IsArray(v))
		n += varray(c, s, v, ptr, out);
	else if (cJSON_IsObject(v))
		n += vobject(c, s, v, ptr, out);
	if ((k = kw(s, "allOf")))
		for (const cJSON *b = k->child; b; b = b->next)
			n += vschema(c, b, v, ptr, out);
	if ((k = kw(s, "anyOf")))
		n += vbranches(c, k, 0, v, ptr, out);
	if ((k = kw(s, "oneOf")))
		n += vbranches(c, k, 1, v, ptr, out);
	if ((k = kw(s, "not"))) {
		struct buf tmp = {0};
		if (vschema(c, k, v, ptr, &tmp) == 0)
			n += verr(out, ptr, "must not match the schema under \"not\"");
		buffree(&tmp);
	}
done:
	c->depth--;
	return n;
}

int schemavalidate(const cJSON *schema, const cJSON *value, struct buf *errs)
{
	struct buf ptr = {0}, out = {0};
	struct err e;
	if (schemacheck(schema, &ptr, &e) < 0) {
		bufprintf(errs, "(schema): invalid output schema at \"%s\": %s\n", ptrstr(&ptr), e.msg);
		buffree(&ptr);
		return 1;
	}
	if (!value) {
		bufputs(errs, "(root): no value\n");
		buffree(&ptr);
		return 1;
	}
	struct validate c = {.root = schema, .loc = rxlocale()};
	int n = vschema(&c, schema, value, &ptr, &out);
	if (c.over) { /* the errors found so far are partial: the budget is the one to tell */
		bufprintf(errs, "(root): checking this value against the schema takes more than %d steps (anyOf, "
		                "oneOf, allOf or $ref applying schemas to the same values again and again, or uniqueItems over "
		                "many items); refused\n",
		          MAXWORK);
		ptrpop(&out, 0);
		n = 1;
	}
	const char *line = out.data;
	for (int i = 0; i < n && i < MAXLINES && line && *line; i++) {
		size_t len = strcspn(line, "\n");
		bufadd(errs, line, len);
		bufputc(errs, '\n');
		line += len + (line[len] == '\n');
	}
	if (n > MAXLINES)
		bufprintf(errs, "...: %d more errors not shown\n", n - MAXLINES);
	while (c.rx) {
		struct rx *r = c.rx;
		c.rx = r->next;
		if (r->ok)
			regfree(&r->re);
		free(r);
	}
	if (c.loc)
		freelocale(c.loc);
	buffree(&ptr);
	buffree(&out);
	return n;
}

static int strictnode(const cJSON *s, int depth)
{
	static const char *const ok[] = {"type", "properties", "required", "additionalProperties", "items", "enum",
	                                 "const", "anyOf", "description", "title", "$defs", "$ref", NULL};
	if (!cJSON_IsObject(s) || depth > 10)
		return 0;
	const cJSON *k;
	cJSON_ArrayForEach(k, s) {
		int known = 0;
		for (int i = 0; ok[i] && !known; i++)
			known = strcmp(k->string, ok[i]) == 0;
		if (!known)
			return 0;
	}
	const cJSON *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
	if (ref && (!cJSON_IsString(ref) || strncmp(ref->valuestring, "#/", 2) != 0))
		return 0;
	const cJSON *ty = cJSON_GetObjectItemCaseSensitive(s, "type");
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
	int object = cJSON_IsString(ty) && strcmp(ty->valuestring, "object") == 0;
	if (object || props) {
		const cJSON *ap = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
		const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required"), *p, *r;
		if (!cJSON_IsFalse(ap))
			return 0;
		cJSON_ArrayForEach(p, props) {
			int listed = 0;
			cJSON_ArrayForEach(r, req)
				listed |= cJSON_IsString(r) && strcmp(r->valuestring, p->string) == 0;
			if (!listed || !strictnode(p, depth + 1))
				return 0;
		}
	}
	const cJSON *sub;
	if ((sub = cJSON_GetObjectItemCaseSensitive(s, "items")) && !strictnode(sub, depth + 1))
		return 0;
	cJSON_ArrayForEach(sub, cJSON_GetObjectItemCaseSensitive(s, "anyOf"))
		if (!strictnode(sub, depth + 1))
			return 0;
	cJSON_ArrayForEach(sub, cJSON_GetObjectItemCaseSensitive(s, "$defs"))
		if (!strictnode(sub, depth + 1))
			return 0;
	return 1;
}

int schemastrict(const cJSON *schema)
{
	const cJSON *ty = cJSON_GetObjectItemCaseSensitive(schema, "type");
	return cJSON_IsString(ty) && strcmp(ty->valuestring, "object") == 0 && strictnode(schema, 0);
}
