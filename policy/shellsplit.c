/* shellsplit: a recursive-descent reader of the shell language as bash and dash read it, keeping
 * what the policy needs: every simple command that could run, its words, and what of them is only
 * known at run time. Where bash and dash read a construct differently ([[ ]], (( ))), both
 * readings are reported. Commands that wrappers run (env, timeout, xargs, find -exec, bash -c,
 * eval ...) are reported as commands of their own. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/glob.h"
#include "danger.h"
#include "policy.h"
#include "shellsplit.h"

#define MAXDEPTH 32   /* ( ), $( ), <( ), backquotes, bash -c and wrappers inside each other */
#define MAXHEREDOC 16 /* pending here-documents on one line */
#define MAXCWD 8      /* working directories a line may be in, before it counts as unknown */
#define MAXREL 64     /* relative redirections remembered per line */

struct rel {
	char *target;
	size_t cmd; /* the command it belongs to, (size_t)-1 while that is being read */
};

/* Shared by a line and everything read inside it. */
struct ctx {
	struct shsplit *out;
	struct buf scratch; /* words being read, NUL-terminated, used as a stack */
	size_t *woff;       /* where each of them starts */
	unsigned char *wfl; /* and its SHW_* flags */
	size_t nw, wcap;
	char *cwd[MAXCWD];  /* every directory the line may be in (union over its cd's) */
	int ncwd, cwdlost;
	struct rel rel[MAXREL];
	int nrel, rellost;
	const char *relwhy; /* a relative redirection that cannot be judged, for compound commands */
	int loop;           /* inside do ... done */
	int funcseen;       /* a function is defined: its cd's run whenever it is called */
	int arith;          /* bash evaluates a variable's value as arithmetic somewhere */
	int runtimevar;     /* a variable gets a value only known at run time */
	int subtext;        /* a word's text holds "[" then "$(" or a backquote, quoted: run if bash evaluates it */
	int names;          /* a builtin that takes variable names, whose subscripts bash evaluates */
	int xtrace;         /* xtrace may be turned on (set -x, bash -x, SHELLOPTS) */
	int ps4;            /* PS4 is named, or a variable whose name is only known at run time set */
	int cmdtable;       /* BASH_ALIASES or BASH_CMDS may be assigned: a name runs something else */
	const char *opaque; /* something in the line runs a string built at run time */
	int via;            /* index of the command whose inner commands are being read, or -1 */
	int shadowing;      /* reading a construct the way dash does */
	int stdinfile;      /* the command being settled reads a file on its standard input */
};

struct heredoc {
	char *delim;
	int quoted, strip;
};

struct sp {
	const char *s;
	size_t n, i;
	size_t org; /* sub-line: where it sits in the whole line */
	int sub;
	struct ctx *c;
	int depth;
	int stop;   /* a fatal problem: stop reading */
	int shadow; /* a dash reading: its failures are dash's syntax errors, not the line's */
	int incase, caseend;
	struct heredoc hd[MAXHEREDOC];
	int nhd;
};

/* A simple command being read. */
struct builder {
	size_t start, end; /* its span */
	int started;
	size_t sbase, wbase; /* scratch and word-stack marks */
	size_t argc, nassign, nredir;
	const char *opaque;
	const char *redir;
	const char *wsredir;   /* a redirection that writes a file in the workspace, or NULL */
	char envdanger[32];    /* a dangerous variable assigned before it ("NAME="), or empty */
	int stdinfile;         /* its standard input is redirected from a file */
	struct buf asg;        /* owned: its assignments, each ending in a NUL */
	size_t nasg;
};

/* The assignments b read, as one allocation: a NULL-terminated array then the words. */
static char **asgtake(struct builder *b)
{
	if (!b->nasg) {
		buffree(&b->asg);
		return NULL;
	}
	char **v = xmalloc((b->nasg + 1) * sizeof *v + b->asg.len);
	char *blob = (char *)(v + b->nasg + 1);
	memcpy(blob, b->asg.data, b->asg.len);
	for (size_t k = 0; k < b->nasg; k++) {
		v[k] = blob;
		blob += strlen(blob) + 1;
	}
	v[b->nasg] = NULL;
	buffree(&b->asg);
	return v;
}

/* What a word held. */
enum { WQUOTED = 1, WEXPAND = 2, WSPLIT = 4, WGLOB = 8, WASSIGN = 16, WTILDE = 32 };

static void list(struct sp *p, int closer);
static int command(struct sp *p);
static void settle(struct sp *p, size_t idx);
static void shadow(struct sp *p, size_t from, size_t to);

static void fail(struct sp *p, const char *why)
{
	struct shsplit *o = p->c->out;
	p->stop = 1;
	if (p->shadow)
		return;
	if (!o->unsafe) {
		o->unsafe = why;
		o->unsafeat = p->sub ? p->org : p->i;
	}
}

static void lineopaque(struct sp *p, const char *why)
{
	if (!p->shadow && !p->c->opaque)
		p->c->opaque = why;
}

static void bopaque(struct sp *p, struct builder *b, const char *why)
{
	if (!b)
		lineopaque(p, why);
	else if (!b->opaque)
		b->opaque = why;
}

/* Line continuations (backslash newline) vanish before anything else is read. */
static size_t sk(const struct sp *p, size_t j)
{
	while (j + 1 < p->n && p->s[j] == '\\' && p->s[j + 1] == '\n')
		j += 2;
	return j;
}

static int at(const struct sp *p, size_t j)
{
	j = sk(p, j);
	return j < p->n ? (unsigned char)p->s[j] : -1;
}

static int cur(struct sp *p)
{
	p->i = sk(p, p->i);
	return p->i < p->n ? (unsigned char)p->s[p->i] : -1;
}

static int nxt(struct sp *p)
{
	return at(p, sk(p, p->i) + 1);
}

static void adv(struct sp *p)
{
	p->i = sk(p, p->i) + 1;
}

static int blank(int c)
{
	return c == ' ' || c == '\t';
}

/* Ends a word: blank, newline, end, or an operator character. */
static int delim(int c)
{
	static const unsigned char t[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, [';'] = 1, ['&'] = 1, ['|'] = 1,
	                                     ['<'] = 1, ['>'] = 1, ['('] = 1, [')'] = 1};
	return c < 0 || t[c & 0xff];
}

/* Append one byte to a word; the word stack's NUL terminators are written explicitly. */
static inline void put(struct buf *o, char ch)
{
	if (o->len + 1 >= o->cap)
		bufgrow(o, 1);
	o->data[o->len++] = ch;
}

static void skipblank(struct sp *p)
{
	while (blank(cur(p)))
		p->i++;
}

int shhidden(uint32_t c)
{
	return (c < 0x20 && c != '\t' && c != '\n') || (c >= 0x7f && c <= 0x9f) || c == 0xad || c == 0x34f ||
	       c == 0x61c || c == 0x115f || c == 0x1160 || c == 0x17b4 || c == 0x17b5 || c == 0x180e ||
	       (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x206f) ||
	       c == 0x3164 || (c >= 0xfe00 && c <= 0xfe0f) || c == 0xfeff || c == 0xffa0 ||
	       (c >= 0xfff0 && c <= 0xfffb) || (c >= 0xe0000 && c <= 0xe0fff);
}

/* NUL, bytes that are not UTF-8, and hidden characters make the whole line unreadable. */
static int validate(const char *s, size_t n, struct shsplit *out)
{
	for (size_t i = 0; i < n;) {
		unsigned char b = (unsigned char)s[i];
		if ((b >= 0x20 && b < 0x7f) || b == '\t' || b == '\n') {
			i++;
			continue;
		}
		uint32_t c;
		int len = u8dec(s + i, n - i, &c);
		if (len < 0 || c == 0 || shhidden(c)) {
			if (c == 0)
				snprintf(out->why, sizeof out->why, "a NUL byte");
			else if (len < 0)
				snprintf(out->why, sizeof out->why, "bytes that are not UTF-8");
			else
				snprintf(out->why, sizeof out->why, "an invisible or control character (U+%04X)", c);
			out->unsafe = out->why;
			out->unsafeat = i;
			return -1;
		}
		i += (size_t)len;
	}
	return 0;
}


static void pushword(struct ctx *c, size_t off, unsigned char fl)
{
	if (c->nw == c->wcap) {
		c->wcap = c->wcap ? 2 * c->wcap : 32;
		c->woff = xrealloc(c->woff, c->wcap * sizeof *c->woff);
		c->wfl = xrealloc(c->wfl, c->wcap);
	}
	c->wfl[c->nw] = fl;
	c->woff[c->nw++] = off;
}

static char *topword(struct ctx *c)
{
	return c->scratch.data + c->woff[c->nw - 1];
}

static void popword(struct ctx *c)
{
	c->scratch.len = c->woff[--c->nw];
	c->scratch.data[c->scratch.len] = 0;
}

static void nest(struct sp *p)
{
	if (++p->depth > MAXDEPTH) {
		fail(p, "nested too deeply");
		return;
	}
	int incase = p->incase;
	p->incase = 0;
	list(p, ')');
	p->incase = incase;
	p->depth--;
}

/* Read s[0..n) as a line of its own inside the current one (a backquote's text, a bash -c
 * script, eval's words); org is where it sits in the whole line. */
static void subline(struct sp *p, const char *s, size_t n, size_t org)
{
	if (p->depth + 1 > MAXDEPTH) {
		fail(p, "nested too deeply");
		return;
	}
	struct sp q = {.s = s, .n = n, .org = org, .sub = 1, .c = p->c, .depth = p->depth + 1, .shadow = p->shadow};
	list(&q, 0);
	for (int k = 0; k < q.nhd; k++)
		free(q.hd[k].delim);
	if (q.stop)
		p->stop = 1;
}

/* `...` at p->i: its commands are read as a line of their own after the backslashes that
 * quote inside backquotes are removed. */
static void backquote(struct sp *p, int indq)
{
	struct buf in = {0};
	size_t j = p->i + 1;
	for (;;) {
		if (j >= p->n) {
			fail(p, "an unbalanced backquote");
			buffree(&in);
			return;
		}
		char ch = p->s[j];
		if (ch == '`')
			break;
		if (ch == '\\' && j + 1 < p->n && (strchr("$`\\", p->s[j + 1]) || (indq && p->s[j + 1] == '"'))) {
			bufputc(&in, p->s[j + 1]);
			j += 2;
			continue;
		}
		bufputc(&in, ch);
		j++;
	}
	size_t org = p->sub ? p->org : p->i;
	p->i = j + 1;
	subline(p, in.data ? in.data : "", in.len, org);
	buffree(&in);
}

static void dquote(struct sp *p, struct builder *b);
static int dollar(struct sp *p, struct builder *b, int indq);

/* A '...' at p->i inside arithmetic or a subscript. The quote only delimits: bash and dash
 * expand what it holds as in double quotes ($(( '$(a)' )) runs a in both, ${x['$(a)']} and
 * a['$(a)']=1 in bash), so its substitutions are read. Returns -1, at the end, when unbalanced. */
static int arithquote(struct sp *p, struct builder *b)
{
	size_t j = p->i + 1;
	while (j < p->n && p->s[j] != '\'')
		j++;
	if (j >= p->n) {
		p->i = p->n;
		return -1;
	}
	p->i++;
	while (!p->stop && p->i < j) {
		int ch = p->s[p->i];
		if (ch == '$')
			dollar(p, b, 1);
		else if (ch == '`')
			backquote(p, 1);
		else
			p->i++;
	}
	if (p->i > j)
		fail(p, "a substitution running past its quote in arithmetic");
	else
		p->i = j + 1;
	return 0;
}

/* Arithmetic after "((" or "$((" (close ')') or "$[" (close ']'): expansions inside are read;
 * a bare name is a variable bash evaluates. Returns -1, position unchanged, when no matching
 * "))" or "]" is found (bash then reads "((" as two subshells). */
static int arith(struct sp *p, struct builder *b, int close)
{
	struct buf *o = &p->c->scratch;
	size_t mark = o->len, i0 = p->i;
	int depth = 0, names = 0;
	for (;;) {
		if (p->stop)
			return 0;
		int ch = cur(p);
		if (ch < 0) {
			p->i = i0;
			o->len = mark;
			return -1;
		}
		if (ch == '(' || (close == ']' && ch == '[')) {
			depth++;
		} else if ((ch == ')' && close == ')') || (ch == ']' && close == ']')) {
			if (!depth) {
				if (close == ']') {
					adv(p);
					break;
				}
				if (nxt(p) == ')') {
					adv(p), adv(p);
					break;
				}
				p->i = i0;
				o->len = mark;
				return -1;
			}
			depth--;
		} else if (ch == ')' || ch == ']') {
			if (depth)
				depth--;
		} else if (ch == '$') {
			dollar(p, b, 1);
			names = 1;
			continue;
		} else if (ch == '`') {
			backquote(p, 1);
			continue;
		} else if (ch == '"') {
			dquote(p, b);
			continue;
		} else if (ch == '\'') {
			arithquote(p, b);
			continue;
		} else if (ch < 0x80 && (isalpha(ch) || ch == '_')) {
			names = 1;
			while ((ch = cur(p)) > 0 && ch < 0x80 && (isalnum(ch) || ch == '_'))
				adv(p);
			continue;
		}
		adv(p);
	}
	o->len = mark;
	if (names)
		p->c->arith = 1;
	return 0;
}

/* ${...} with p->i past the '{'. */
static void param(struct sp *p, struct builder *b, int indq)
{
	struct buf *o = &p->c->scratch;
	size_t mark = o->len;
	int first = 1, name = 0, sub = 0;
	size_t from = p->i;
	for (;; first = 0) {
		if (p->stop)
			return;
		int ch = cur(p);
		if (ch < 0) {
			fail(p, "an unbalanced ${");
			return;
		}
		if (ch == '}') {
			adv(p);
			break;
		}
		if (first && ch == '!')
			p->c->arith = 1; /* ${!x}: a name in a value, and a[...] in it is evaluated */
		if (ch < 0x80 && (isalnum(ch) || ch == '_')) {
			name = 1;
			adv(p);
			continue;
		}
		if (ch == '[' || (ch == ':' && name && !strchr("-=+?", at(p, sk(p, p->i) + 1))))
			p->c->arith = 1; /* subscripts and ${x:off:len} are arithmetic */
		if (ch == '[')
			sub++;
		else if (ch == ']' && sub)
			sub--;
		if ((ch == '=' || (ch == ':' && at(p, sk(p, p->i) + 1) == '=')) && !sub &&
		    ((p->i - from == 3 && !strncmp(p->s + from, "PS4", 3)) || p->s[from] == '!'))
			p->c->ps4 = 1; /* ${PS4:=...} assigns it */
		name = 0;
		if (ch == '@' && nxt(p) == 'P')
			bopaque(p, b, "${x@P} runs the $( ) a value holds");
		if (ch == '\\') {
			p->i = sk(p, p->i) + 2 <= p->n ? sk(p, p->i) + 2 : p->n;
		} else if (ch == '\'' && !indq && sub) {
			if (arithquote(p, b) < 0) {
				fail(p, "an unbalanced single quote");
				return;
			}
		} else if (ch == '\'' && !indq) {
			size_t j = p->i + 1;
			while (j < p->n && p->s[j] != '\'')
				j++;
			if (j >= p->n) {
				fail(p, "an unbalanced single quote");
				return;
			}
			p->i = j + 1;
		} else if (ch == '"') {
			dquote(p, b);
		} else if (ch == '$') {
			dollar(p, b, indq);
		} else if (ch == '`') {
			backquote(p, indq);
		} else {
			adv(p);
		}
	}
	o->len = mark;
}

/* A '$' at p->i. An expansion leaves SHUNK in the word and returns 1; a '$' the shell keeps as
 * a character is copied and 0 returned. */
static int dollar(struct sp *p, struct builder *b, int indq)
{
	struct buf *o = &p->c->scratch;
	int d = at(p, p->i + 1);
	if (d == '(') {
		size_t j = sk(p, p->i + 1) + 1;
		if (at(p, j) == '(') {
			p->i = sk(p, j) + 1;
			if (arith(p, b, ')') == 0) {
				put(o, SHUNK);
				return 1;
			}
			p->i = j; /* "$((a) b)": a command substitution after all */
		} else {
			p->i = j;
		}
		nest(p);
		put(o, SHUNK);
		return 1;
	}
	if (d == '{') {
		p->i = sk(p, p->i + 1) + 1;
		param(p, b, indq);
		put(o, SHUNK);
		return 1;
	}
	if (d == '[') {
		p->i = sk(p, p->i + 1) + 1;
		if (arith(p, b, ']') < 0) {
			put(o, '$');
			return 0;
		}
		put(o, SHUNK);
		return 1;
	}
	if (d > 0 && d < 0x80 && (isalnum(d) || d == '_' || strchr("@*#?-$!", d))) {
		adv(p);
		if (isalpha(d) || d == '_') {
			int ch;
			while ((ch = cur(p)) > 0 && ch < 0x80 && (isalnum(ch) || ch == '_'))
				p->i++;
		} else {
			adv(p);
		}
		put(o, SHUNK);
		return 1;
	}
	put(o, '$');
	adv(p);
	return 0;
}

/* "..." at p->i. Returns 1 when an expansion was in it. */
static int dquoteu(struct sp *p, struct builder *b)
{
	struct buf *o = &p->c->scratch;
	int unk = 0;
	p->i++;
	for (;;) {
		if (p->stop)
			return unk;
		if (p->i >= p->n) {
			fail(p, "an unbalanced double quote");
			return unk;
		}
		char ch = p->s[p->i];
		if (ch == '"') {
			p->i++;
			return unk;
		}
		if (ch == '\\' && p->i + 1 < p->n) {
			char d = p->s[p->i + 1];
			if (d == '\n') {
				p->i += 2;
			} else if (strchr("$`\"\\", d)) {
				put(o, d);
				p->i += 2;
			} else {
				put(o, '\\');
				p->i++;
			}
			continue;
		}
		if (ch == '$') {
			unk |= dollar(p, b, 1);
			continue;
		}
		if (ch == '`') {
			backquote(p, 1);
			put(o, SHUNK);
			unk = 1;
			continue;
		}
		put(o, ch);
		p->i++;
	}
}

static void dquote(struct sp *p, struct builder *b)
{
	dquoteu(p, b);
}

/* $'...' at p->i (bash): the escapes decoded. Returns 1 when the text holds SHUNK. */
static int ansic(struct sp *p)
{
	struct buf *o = &p->c->scratch;
	size_t j = p->i + 2;
	int unk = 0;
	for (;;) {
		if (j >= p->n) {
			fail(p, "an unbalanced $'");
			return unk;
		}
		unsigned char ch = (unsigned char)p->s[j];
		if (ch == '\'') {
			j++;
			break;
		}
		if (ch != '\\' || j + 1 >= p->n) {
			put(o, (char)ch);
			j++;
			continue;
		}
		unsigned char e = (unsigned char)p->s[j + 1];
		unsigned long v = 0;
		j += 2;
		static const char from[] = "abefnrtv\\'\"?", to[] = "\a\b\x1b\f\n\r\t\v\\'\"?";
		const char *f = strchr(from, e);
		if (e && f) {
			v = (unsigned char)to[f - from];
		} else if (e >= '0' && e <= '7') {
			v = e - '0';
			for (int k = 0; k < 2 && j < p->n && p->s[j] >= '0' && p->s[j] <= '7'; k++)
				v = v * 8 + (unsigned long)(p->s[j++] - '0');
		} else if (e == 'x' || e == 'u' || e == 'U') {
			int max = e == 'x' ? 2 : e == 'u' ? 4 : 8, k = 0;
			for (; k < max && j < p->n && isxdigit((unsigned char)p->s[j]); k++, j++)
				v = v * 16 + (unsigned long)(isdigit((unsigned char)p->s[j]) ? p->s[j] - '0' : (tolower((unsigned char)p->s[j]) - 'a' + 10));
			if (!k) {
				put(o, '\\');
				put(o, (char)e);
				continue;
			}
		} else if (e == 'c' && j < p->n) {
			v = (unsigned char)p->s[j++] & 0x1f;
		} else {
			put(o, '\\');
			put(o, (char)e);
			continue;
		}
		if (v == 0)
			v = SHUNK; /* bash stops the word there; what follows is not run as written */
		if (v == (unsigned char)SHUNK)
			unk = 1;
		if (v < 0x80) {
			put(o, (char)v);
		} else { /* as UTF-8, the way bash writes \u in a UTF-8 locale */
			char u[4];
			int n = v < 0x800 ? 2 : v < 0x10000 ? 3 : 4;
			if (v > 0x10ffff)
				v = 0xfffd, n = 3;
			for (int k = n - 1; k > 0; k--)
				u[k] = (char)(0x80 | (v & 0x3f)), v >>= 6;
			u[0] = (char)((n == 2 ? 0xc0 : n == 3 ? 0xe0 : 0xf0) | v);
			for (int k = 0; k < n; k++)
				put(o, u[k]);
		}
	}
	p->i = j;
	return unk;
}

/* Characters that only stand for themselves in a word. */
static const unsigned char plain[128] = {
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1,
	['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1,
	['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1,
	['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1,
	['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['_'] = 1, ['-'] = 1, ['/'] = 1, ['%'] = 1, ['@'] = 1, ['^'] = 1, ['.'] = 1, [','] = 1,
	[':'] = 1,
};

/* A bash brace expansion {a,b} or {1..3} starting at j ('{')? Returns the index past its '}'. */
static size_t braceexp(const struct sp *p, size_t j)
{
	int depth = 0, sep = 0;
	for (size_t k = j; k < p->n; k++) {
		char ch = p->s[k];
		if (delim((unsigned char)ch) || ch == '\'' || ch == '"' || ch == '$' || ch == '`' || ch == '\\')
			return 0;
		if (ch == '{')
			depth++;
		else if (ch == '}' && !--depth)
			return sep ? k + 1 : 0;
		else if (depth == 1 && (ch == ',' || (ch == '.' && k + 1 < p->n && p->s[k + 1] == '.')))
			sep = 1;
	}
	return 0;
}

/* A glob bracket [...] starting at j? Returns the index past its ']'. */
static size_t bracket(const struct sp *p, size_t j)
{
	size_t k = j + 1;
	if (k < p->n && (p->s[k] == '!' || p->s[k] == '^'))
		k++;
	if (k < p->n && p->s[k] == ']')
		k++;
	for (; k < p->n; k++) {
		char ch = p->s[k];
		if (delim((unsigned char)ch) || ch == '\'' || ch == '"' || ch == '$' || ch == '`' || ch == '\\')
			return 0;
		if (ch == ']')
			return k + 1;
	}
	return 0;
}

/* bash's subscript of an assignment, NAME[...]= : from j ('[') to the matching ']', blanks and
 * quotes allowed in it. Returns the index past the ']', or 0. */
static size_t subscriptend(const struct sp *p, size_t j)
{
	int depth = 0;
	for (size_t k = j; k < p->n; k++) {
		char ch = p->s[k];
		if (ch == '\\') {
			k++;
		} else if (ch == '\'' || ch == '"') {
			for (k++; k < p->n && p->s[k] != ch; k++)
				if (ch == '"' && p->s[k] == '\\')
					k++;
			if (k >= p->n)
				return 0;
		} else if (ch == '[') {
			depth++;
		} else if (ch == ']' && !--depth) {
			return k + 1;
		}
	}
	return 0;
}

/* A PS4 value as written (quotes removed) runs nothing when expanded: every '$' names a variable
 * plainly ($NAME, ${NAME}, ${NAME[digits]}, a special parameter), whose value is not expanded
 * again; "+ $LINENO: " is, "${!x}", "${x:-$(a)}", "$((x))", "${x[i]}" (arithmetic) are not. */
static int ps4plain(const char *v)
{
	for (const char *q = v; (q = strchr(q, '$'));) {
		q++;
		if (*q && strchr("0123456789!$?#-_@*", *q)) {
			q++;
			continue;
		}
		int brace = *q == '{';
		q += brace;
		if (!isalpha((unsigned char)*q) && *q != '_')
			return 0;
		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		if (!brace)
			continue;
		if (*q == '[') {
			const char *d = ++q;
			while (isdigit((unsigned char)*q))
				q++;
			if (q == d || *q++ != ']')
				return 0;
		}
		if (*q++ != '}')
			return 0;
	}
	return 1;
}

/* s holds PS4= or PS4+= with a value that may hold a substitution (a '$' other than a plain
 * variable's, a backquote, a backslash: bash decodes PS4's prompt escapes, \044 and \140 among
 * them, before it expands it; or text only known at run time): PS4='$(a)', export PS4=$x, ... */
static int ps4value(const char *s)
{
	for (const char *q = s; (q = strstr(q, "PS4")); q += 3) {
		const char *v = q[3] == '=' ? q + 4 : q[3] == '+' && q[4] == '=' ? q + 5 : NULL;
		if (v && (strpbrk(v, "`\\\x01") || !ps4plain(v))) /* '\\': bash decodes \044 to '$' first */
			return 1;
	}
	return 0;
}

/* s holds '[' and after it "$(" or a backquote. */
static int subinside(const char *s, size_t n)
{
	const char *q = n ? memchr(s, '[', n) : NULL;
	if (!q)
		return 0;
	for (size_t k = (size_t)(q - s); k < n; k++)
		if (s[k] == '`' || (s[k] == '$' && k + 1 < n && s[k + 1] == '('))
			return 1;
	return 0;
}

/* The word s (n bytes, as written) is only digits, double quotes and $!, $$, $?, $#: what it
 * becomes is digits, never an option or a name (wait $!). */
static int digitsonly(const char *s, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (s[k] == '$' && k + 1 < n && strchr("!$?#", s[k + 1]))
			k++;
		else if (!isdigit((unsigned char)s[k]) && s[k] != '"')
			return 0;
	return 1;
}

/* One word at p->i, after quote removal, pushed on the word stack; what bash or dash only know
 * at run time becomes SHUNK. asg: the word may be an assignment (tilde after '=' expands).
 * Returns its W* flags. */
static int word(struct sp *p, struct builder *b, int asg)
{
	struct ctx *c = p->c;
	struct buf *o = &c->scratch;
	size_t off = o->len, raw = p->i;
	int f = 0, name = 1, first = 1, prev = 0;
	for (;; first = 0) {
		if (p->stop)
			break;
		int ch = cur(p);
		if (delim(ch))
			break;
		if (ch < 0x80 && plain[ch] == 1) { /* a run of characters with no meaning to the shell */
			size_t j = p->i;
			unsigned char u;
			while (j < p->n && (u = (unsigned char)p->s[j]) < 0x80 && plain[u] == 1) {
				name &= isalnum(u) || u == '_';
				j++;
			}
			bufadd(o, p->s + p->i, j - p->i);
			prev = (unsigned char)p->s[j - 1];
			p->i = j;
			continue;
		}
		size_t e;
		if (ch == '\\') {
			if (p->i + 1 >= p->n) {
				fail(p, "a backslash at the end of the line");
				break;
			}
			put(o, p->s[p->i + 1]);
			p->i += 2, f |= WQUOTED, name = 0;
		} else if (ch == '\'') {
			size_t j = p->i + 1;
			while (j < p->n && p->s[j] != '\'')
				j++;
			if (j >= p->n) {
				fail(p, "an unbalanced single quote");
				break;
			}
			bufadd(o, p->s + p->i + 1, j - p->i - 1);
			p->i = j + 1, f |= WQUOTED, name = 0;
		} else if (ch == '"') {
			if (dquoteu(p, b))
				f |= WEXPAND;
			f |= WQUOTED, name = 0;
		} else if (ch == '$' && (at(p, p->i + 1) == '\'' || at(p, p->i + 1) == '"')) {
			adv(p); /* bash's $'...' and $"..." */
			if (cur(p) == '\'') {
				p->i--;
				if (ansic(p))
					f |= WEXPAND;
			} else if (dquoteu(p, b)) {
				f |= WEXPAND;
			}
			f |= WQUOTED, name = 0;
		} else if (ch == '$') {
			if (dollar(p, b, 0))
				f |= WEXPAND | WSPLIT;
			name = 0;
		} else if (ch == '`') {
			backquote(p, 0);
			put(o, SHUNK);
			f |= WEXPAND | WSPLIT, name = 0;
		} else if (ch == '*' || ch == '?') {
			put(o, SHUNK);
			p->i++, f |= WEXPAND | WSPLIT | WGLOB, name = 0;
		} else if (ch == '[' && name && o->len > off && (e = bracket(p, p->i)) &&
		           (at(p, e) == '=' || (at(p, e) == '+' && at(p, e + 1) == '='))) {
			bufadd(o, p->s + p->i, e - p->i); /* a[i]=x: an array element, the subscript arithmetic */
			p->i = e;
			c->arith = 1;
		} else if (ch == '[' && asg && ((name && o->len > off) || (asg == 2 && o->len == off)) &&
		           (e = subscriptend(p, p->i)) && (at(p, e) == '=' || (at(p, e) == '+' && at(p, e + 1) == '='))) {
			/* bash's a[ 'x' ]=1 (and [k]=v in a=( )): one assignment word, quotes and blanks in
			 * its subscript, which is arithmetic: what '$(..)' holds there runs */
			size_t save = p->i;
			adv(p);
			if (arith(p, b, ']') < 0) {
				p->i = save;
				fail(p, "an unbalanced [ in an assignment");
				break;
			}
			put(o, '[');
			put(o, SHUNK);
			put(o, ']');
			c->arith = 1;
			continue;
		} else if (ch == '[' && (e = bracket(p, p->i))) {
			put(o, SHUNK);
			p->i = e, f |= WEXPAND | WSPLIT | WGLOB, name = 0;
		} else if (ch == '{' && (e = braceexp(p, p->i))) {
			put(o, SHUNK);
			p->i = e, f |= WEXPAND | WSPLIT, name = 0;
		} else if (ch == '~' && (first || (prev == '=' && (f & WASSIGN)) || (prev == ':' && (f & WASSIGN)) ||
		                         (asg && prev == '='))) {
			put(o, SHUNK); /* ~ and ~user up to the first '/': a login name is plain characters; a
			                * quote, '\\', '$' or '`' ends it here and is read as in any word */
			p->i++;
			int t;
			while ((t = cur(p)) > 0 && t < 0x80 && (plain[t] == 1 || t == '+') && t != '/' && t != ':')
				adv(p);
			f |= WEXPAND | WTILDE, name = 0;
		} else if (ch >= 0x80) {
			uint32_t cp;
			int len = u8dec(p->s + p->i, p->n - p->i, &cp);
			if (len < 1)
				len = 1; /* validated already; never happens */
			bufadd(o, p->s + p->i, (size_t)len);
			p->i += (size_t)len, name = 0;
		} else {
			if ((ch == '=' || (ch == '+' && at(p, p->i + 1) == '=')) && name && o->len > off &&
			    !isdigit((unsigned char)o->data[off]) && !(f & WQUOTED))
				f |= WASSIGN; /* NAME= or bash's NAME+= */
			if (!isalnum(ch) && ch != '_')
				name = 0;
			put(o, (char)ch);
			p->i++;
			prev = ch;
			continue;
		}
		prev = 0;
	}
	if (!c->subtext && subinside(o->data + off, o->len - off))
		c->subtext = 1;
	size_t wl = o->len - off;
	put(o, 0); /* the word's NUL is part of the stack */
	/* Each name looked for holds an 'S', which most words lack: one scan, not four. */
	if (memchr(o->data + off, 'S', wl)) {
		if (ps4value(o->data + off))
			c->ps4 = 1;
		if (strstr(o->data + off, "BASH_ALIASES") || strstr(o->data + off, "BASH_CMDS"))
			c->cmdtable = 1;
		if (strstr(o->data + off, "SHELLOPTS"))
			c->xtrace = 1;
	}
	unsigned char fl = 0;
	if (f & WEXPAND)
		fl |= SHW_UNKNOWN;
	if (f & WSPLIT)
		fl |= SHW_SPLIT;
	if ((f & WEXPAND) && !p->stop && p->i > raw && digitsonly(p->s + raw, p->i - raw))
		fl |= SHW_NODASH;
	pushword(c, off, fl);
	return f;
}

/* ---- where a line's redirections go ---- */

/* dir joined with rel ("." for none), lexically: "..", "." and "//" resolved; a new string. */
static char *joinpath(const char *dir, const char *rel)
{
	struct buf b = {0};
	if (rel[0] != '/')
		bufputs(&b, dir);
	bufputc(&b, '/');
	bufputs(&b, rel);
	char *s = b.data, *out = xmalloc(b.len + 2);
	size_t o = 0;
	for (size_t i = 0; s[i];) {
		while (s[i] == '/')
			i++;
		size_t j = i;
		while (s[j] && s[j] != '/')
			j++;
		size_t len = j - i;
		if (len == 0 || (len == 1 && s[i] == '.')) {
		} else if (len == 2 && s[i] == '.' && s[i + 1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			out[o++] = '/';
			memcpy(out + o, s + i, len);
			o += len;
		}
		i = j;
	}
	if (!o)
		out[o++] = '/';
	out[o] = 0;
	buffree(&b);
	return out;
}

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == 0 || path[n] == '/');
}

/* A normalised absolute path a redirection may write: the workspace, the step's /tmp, the
 * standard streams. */
static int finepath(const char *a)
{
	if (under(a, "/workspace") || under(a, "/tmp"))
		return 1;
	if (!strcmp(a, "/dev/null") || !strcmp(a, "/dev/stdout") || !strcmp(a, "/dev/stderr") || !strcmp(a, "/dev/stdin") ||
	    !strcmp(a, "/dev/tty"))
		return 1;
	return !strncmp(a, "/dev/fd/", 8) && a[8] && strspn(a + 8, "0123456789") == strlen(a + 8);
}

static void addcwd(struct ctx *c, char *dir)
{
	for (int k = 0; k < c->ncwd; k++)
		if (!strcmp(c->cwd[k], dir)) {
			free(dir);
			return;
		}
	if (c->ncwd == MAXCWD) {
		c->cwdlost = 1;
		free(dir);
		return;
	}
	c->cwd[c->ncwd++] = dir;
}

/* A cd, pushd or popd: the line may now be in one more directory. */
static void chdir_(struct ctx *c, const struct shcmd *cmd)
{
	size_t k = 1;
	if (!strcmp(cmd->argv[0], "popd")) {
		c->cwdlost = 1;
		return;
	}
	while (k < cmd->argc && cmd->argv[k][0] == '-' && cmd->argv[k][1] && !(cmd->wf[k] & SHW_UNKNOWN)) {
		if (!strcmp(cmd->argv[k++], "--"))
			break;
	}
	if (k >= cmd->argc || (cmd->wf[k] & SHW_UNKNOWN) || !strcmp(cmd->argv[k], "-") || cmd->argv[k][0] == '+' ||
	    !cmd->argv[k][0] || c->funcseen || (c->loop && cmd->argv[k][0] != '/')) {
		c->cwdlost = 1; /* HOME, OLDPWD, a name known at run time, a cd repeated by a loop ... */
		return;
	}
	int n = c->ncwd;
	for (int j = 0; j < n && !c->cwdlost; j++)
		addcwd(c, joinpath(c->cwd[j], cmd->argv[k]));
}

/* A fine path that is a file of the workspace (not the step's /tmp, not a stream). */
static int wspathof(const char *a)
{
	return under(a, "/workspace");
}

static const char wswhy[] = "a redirection writes a file in the workspace";

/* Why a redirection to target (a word of flags f) is not fine, or NULL; *ws is set when it
 * writes a file in the workspace. A relative target is judged at the end of the line, against
 * every directory the line may be in. */
static const char *redirwhy(struct ctx *c, const char *w, int f, const char **ws)
{
	if (f & WEXPAND)
		return "a redirection to a name only known at run time";
	if (!*w)
		return "a redirection to an empty name";
	if (w[0] != '/') {
		if (c->nrel == MAXREL) {
			c->rellost = 1;
			return "too many relative redirections on one line";
		}
		c->rel[c->nrel++] = (struct rel){xstrdup(w), (size_t)-1};
		return NULL;
	}
	char *a = joinpath("/", w);
	int ok = finepath(a);
	if (ok && wspathof(a))
		*ws = wswhy;
	free(a);
	return ok ? NULL : "a redirection outside /workspace, /tmp and /dev/null";
}

/* A redirection operator at p->i and its target. */
static void redir(struct sp *p, struct builder *b)
{
	enum { RFILE, RDUP, RHERE, RSTR } kind = RFILE;
	int strip = 0, c = cur(p), in = c == '<';
	if (c == '&') /* bash's &> and &>> */
		adv(p), c = cur(p);
	adv(p);
	int d = cur(p);
	if (d == '(') {
		adv(p);
		nest(p); /* <( ) >( ): a /dev/fd name */
		return;
	}
	if (c == '<') {
		if (d == '<') {
			adv(p);
			d = cur(p);
			if (d == '<') {
				adv(p);
				kind = RSTR;
			} else {
				if (d == '-')
					adv(p), strip = 1;
				kind = RHERE;
			}
		} else if (d == '&') {
			adv(p), kind = RDUP;
		} else if (d == '>') {
			adv(p), in = 0;
		}
	} else {
		if (d == '>' || d == '|')
			adv(p);
		else if (d == '&')
			adv(p), kind = RDUP;
	}
	skipblank(p);
	if (delim(cur(p)) && !((cur(p) == '<' || cur(p) == '>') && nxt(p) == '(')) {
		fail(p, "a redirection without a target");
		return;
	}
	if (cur(p) == '<' || cur(p) == '>') {
		adv(p), adv(p);
		nest(p);
		b->nredir++;
		if (in)
			b->stdinfile = 1;
		return;
	}
	int f = word(p, b, 0);
	if (p->stop) {
		popword(p->c);
		return;
	}
	const char *w = topword(p->c);
	const char *why = NULL;
	if (kind == RHERE) {
		if (p->nhd == MAXHEREDOC) {
			fail(p, "too many here-documents on one line");
			return;
		}
		p->hd[p->nhd++] = (struct heredoc){xstrdup(w), f & WQUOTED, strip};
	} else if (kind == RSTR) {
		/* <<< word: only its expansions matter, read already */
	} else if (kind == RDUP && !(f & WEXPAND) && (strspn(w, "0123456789") == strlen(w) || !strcmp(w, "-")) && *w) {
		/* >&2, <&0, >&- */
	} else if (in && kind == RFILE) {
		b->stdinfile = 1; /* reading: no harm to judge */
	} else {
		why = redirwhy(p->c, w, f, &b->wsredir);
	}
	if (why && !b->redir)
		b->redir = why;
	popword(p->c);
	b->nredir++;
}

/* ---- commands ---- */

/* Append a command of argc words (copied) to the split; returns its index. */
static size_t emit(struct ctx *c, char *const *argv, const unsigned char *wf, size_t argc, char *text)
{
	struct shsplit *o = c->out;
	size_t nbytes = 0;
	for (size_t k = 0; k < argc; k++)
		nbytes += strlen(argv[k]) + 1;
	struct shcmd cmd = {.argc = argc, .via = c->via, .dash = c->shadowing};
	cmd.argv = xmalloc((argc + 1) * sizeof *cmd.argv + argc + nbytes + 1);
	cmd.wf = (unsigned char *)(cmd.argv + argc + 1);
	char *blob = (char *)cmd.wf + argc;
	for (size_t k = 0; k < argc; k++) {
		size_t l = strlen(argv[k]) + 1;
		memcpy(blob, argv[k], l);
		cmd.argv[k] = blob;
		cmd.wf[k] = wf[k];
		blob += l;
	}
	*blob = 0;
	cmd.argv[argc] = NULL;
	if (!text) { /* the words joined, SHUNK shown as "…" */
		struct buf t = {0};
		for (size_t k = 0; k < argc; k++) {
			if (k)
				bufputc(&t, ' ');
			for (const char *s = argv[k]; *s; s++)
				if (*s == SHUNK)
					bufputs(&t, "…");
				else
					bufputc(&t, *s);
		}
		text = t.data ? t.data : xstrdup("");
	}
	cmd.text = text;
	if (o->ncmds == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 8;
		o->cmds = xrealloc(o->cmds, o->cap * sizeof *o->cmds);
	}
	o->cmds[o->ncmds] = cmd;
	return o->ncmds++;
}

/* The command at index idx runs something only known at run time: it is opaque (the words
 * given say what, for the caller's reading only). */
static void emitopaque(struct sp *p, size_t idx, char *const *argv, const unsigned char *wf, size_t argc,
                       const char *why)
{
	(void)argv, (void)wf, (void)argc;
	struct shcmd *cmd = &p->c->out->cmds[idx];
	if (!cmd->opaque)
		cmd->opaque = why;
}

/* The command argv[from..argc) that the command at index via runs, plus one unknown word when
 * more is appended at run time (xargs). */
static void emitinner(struct sp *p, size_t via, char **argv, unsigned char *wf, size_t argc, int more)
{
	struct ctx *c = p->c;
	if (p->depth + 1 > MAXDEPTH) {
		fail(p, "nested too deeply");
		return;
	}
	static char unk[] = {SHUNK, 0};
	char **av = argv;
	unsigned char *f = wf, fb[1];
	if (more) {
		av = xmalloc((argc + 2) * sizeof *av);
		f = xmalloc(argc + 1);
		if (argc)
			memcpy(av, argv, argc * sizeof *av), memcpy(f, wf, argc);
		av[argc] = unk, f[argc] = SHW_UNKNOWN | SHW_SPLIT;
		argc++;
	}
	(void)fb;
	int save = c->via;
	c->via = (int)via;
	size_t k = emit(c, av, f, argc, NULL);
	c->via = save;
	if (more)
		free(av), free(f);
	p->depth++;
	settle(p, k);
	p->depth--;
}

/* Read a literal string (bash -c SCRIPT, eval's words, su -c ...) as a line run by the command
 * at index via. */
static void emitscript(struct sp *p, size_t via, const char *s)
{
	struct ctx *c = p->c;
	int save = c->via;
	c->via = (int)via;
	size_t org = p->sub ? p->org : p->i;
	subline(p, s, strlen(s), org);
	c->via = save;
}

static int isopt(const struct shcmd *cmd, size_t k)
{
	return k < cmd->argc && cmd->argv[k][0] == '-' && cmd->argv[k][1] && !(cmd->wf[k] & SHW_UNKNOWN);
}

static const char *base(const char *a)
{
	const char *s = strrchr(a, '/');
	return s ? s + 1 : a;
}

/* Shells whose -c script the splitter reads; zsh, fish, csh and the like read other languages. */
/* Whether s is one of the words of l. */
static int instrs(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return 1;
	return 0;
}

static int posixsh(const char *n)
{
	static const char *const sh[] = {"sh", "bash", "dash", "ash", "ksh", "mksh", "posh", "yash", "rbash", "lksh", "pdksh", NULL};
	return instrs(sh, n);
}

/* A shell at argv[k]: its -c script read, a file it runs left as it is, its standard input
 * (unless a file) opaque. */
static void shellrun(struct sp *p, size_t idx, size_t k, int stdinfile)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	const char *name = base(cmd->argv[k]);
	int dashc = 0, readstdin = 0;
	size_t j = k + 1;
	while (j < cmd->argc && !(cmd->wf[j] & SHW_UNKNOWN) && (cmd->argv[j][0] == '-' || cmd->argv[j][0] == '+') &&
	       cmd->argv[j][1]) {
		const char *a = cmd->argv[j++];
		if (!strcmp(a, "--") || !strcmp(a, "-"))
			break;
		if (a[1] == '-') {
			if (!strcmp(a, "--rcfile") || !strcmp(a, "--init-file"))
				j++;
			continue;
		}
		for (const char *s = a + 1; *s; s++) {
			if (*s == 'c')
				dashc = 1;
			else if (*s == 's')
				readstdin = 1;
			else if (*s == 'o' || *s == 'O')
				j++;
		}
	}
	if (j < cmd->argc && (cmd->wf[j] & SHW_UNKNOWN) && cmd->argv[j][0] == SHUNK) {
		emitopaque(p, idx, cmd->argv + k, cmd->wf + k, cmd->argc - k, "a shell whose options or script are only known at run time");
		return;
	}
	if (dashc) {
		if (j >= cmd->argc) {
			fail(p, "-c without a script");
			return;
		}
		if ((cmd->wf[j] & SHW_UNKNOWN) || !posixsh(name)) {
			emitopaque(p, idx, cmd->argv + j, cmd->wf + j, 1,
			           (cmd->wf[j] & SHW_UNKNOWN) ? "a shell script only known at run time (sh -c \"$X\")"
			                                      : "a script in a shell language the splitter does not read");
			return;
		}
		char *script = xstrdup(cmd->argv[j]);
		emitscript(p, idx, script);
		free(script);
		return;
	}
	if ((readstdin || j >= cmd->argc) && !stdinfile)
		emitopaque(p, idx, cmd->argv + k, cmd->wf + k, cmd->argc - k, "a shell reading commands from its input");
	/* else it runs a file: a command like any other */
}

/* The words of cmd from k on, joined as eval and watch do; NULL when one is only known at run time. */
static char *joinwords(const struct shcmd *cmd, size_t k)
{
	struct buf b = {0};
	for (; k < cmd->argc; k++) {
		if (cmd->wf[k] & SHW_UNKNOWN) {
			buffree(&b);
			return NULL;
		}
		if (b.len)
			bufputc(&b, ' ');
		bufputs(&b, cmd->argv[k]);
	}
	return b.data ? b.data : xstrdup("");
}

/* A command that runs another (wrap): one row a wrapper, sorted by name. */
struct wrapper {
	const char *name;
	void (*read)(struct sp *p, size_t idx, const struct wrapper *w); /* how its words are read */
	const char *argopts;          /* short options that take an argument (skipopts) */
	const char *const *longargs;  /* long options that take one */
	const char *const *longflags; /* long options that take none */
	const char *flags;            /* short options that take none */
	int operands;                 /* words between its options and the command (timeout's duration) */
	const char *const *stops;     /* options after which it runs nothing of the line's (-p PID) */
	const char *bare;             /* why it is opaque when nothing follows (chroot runs a shell), or NULL */
	const char *glued;            /* short options whose value is optional, glued to them (xargs -i) */
	const char *sub;              /* wrunner: the subcommand that runs one (uv run, bundle exec) */
};

static const char *const nolong[] = {NULL};

static const struct wrapper *wrapfind(const char *n);

/* A wrapper option whose value is a command string it runs (env -S): its letter and long name. */
struct stropt {
	char letter;
	const char *lng;
};

/* The word at k may become several words or none (an unquoted expansion or glob): where a
 * wrapper's option value or operand is, it moves the command (T=' curl'; timeout 5$T z curl). */
static int splits(const struct shcmd *cmd, size_t k)
{
	return k < cmd->argc && (cmd->wf[k] & SHW_UNKNOWN) && (cmd->wf[k] & SHW_SPLIT);
}

/* Skip a wrapper's options at *k as its row reads them: argopts take a value (the rest of the
 * word, or the next), glued ones an optional value (only the rest of the word: xargs -i, watch
 * -d), longargs a value ("--name v" or "--name=v"), longflags none or one joined with '=' (an
 * optional value); "--" ends them, a lone "-" is an option where flags holds '-'. When str names
 * an option whose value is a command string (env -S, --split-string), skipping stops after that
 * value, returning 1 with *val set (NULL when the value is only known at run time). Returns -1 at
 * an option it does not know (a word that could take the next word or not), else 0. */
static int skipopts(const struct shcmd *cmd, size_t *k, const struct wrapper *w, const struct stropt *str,
                    const char **val)
{
	const char *const *longarg = w->longargs ? w->longargs : nolong;
	const char *const *longflag = w->longflags ? w->longflags : nolong;
	const char *shortarg = w->argopts ? w->argopts : "", *flags = w->flags ? w->flags : "";
	while (*k < cmd->argc) {
		const char *a = cmd->argv[*k];
		if (cmd->wf[*k] & SHW_UNKNOWN) {
			if (a[0] == SHUNK || (a[0] == '-' && (cmd->wf[*k] & SHW_SPLIT)))
				return -1; /* it could be an option, or become several (-s$X, X=' 5 curl') */
			return 0;
		}
		if (a[0] != '-')
			return 0;
		if (!a[1]) { /* "-": an option where flags says so (env's, like -i), else the command */
			if (!strchr(flags, '-'))
				return 0;
			(*k)++;
			continue;
		}
		(*k)++;
		if (!strcmp(a, "--"))
			return 0;
		if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			size_t n = eq ? (size_t)(eq - a) : strlen(a);
			if (str && str->lng && strlen(str->lng) == n && !strncmp(str->lng, a, n)) {
				*val = eq ? eq + 1 : *k < cmd->argc && !(cmd->wf[*k] & SHW_UNKNOWN) ? cmd->argv[*k] : NULL;
				*k += !eq;
				return 1;
			}
			int found = 0;
			for (const char *const *l = longarg; *l && !found; l++)
				if (strlen(*l) == n && !strncmp(*l, a, n)) {
					found = 1;
					if (!eq && splits(cmd, *k))
						return -1;
					if (!eq)
						(*k)++;
				}
			for (const char *const *l = longflag; *l && !found; l++)
				found = strlen(*l) == n && !strncmp(*l, a, n);
			if (!found)
				return -1;
			continue;
		}
		for (const char *o = a + 1; *o; o++) {
			if (str && *o == str->letter) {
				*val = o[1] ? o + 1 : *k < cmd->argc && !(cmd->wf[*k] & SHW_UNKNOWN) ? cmd->argv[*k] : NULL;
				*k += !o[1];
				return 1;
			}
			if (strchr(shortarg, *o)) {
				if (!o[1] && splits(cmd, *k))
					return -1;
				if (!o[1])
					(*k)++;
				break;
			}
			if (w->glued && strchr(w->glued, *o))
				break; /* its value, if any, is the rest of the word */
			if (!strchr(flags, *o) && !(isdigit((unsigned char)*o) && strchr(flags, '#')))
				return -1;
		}
	}
	return 0;
}


/* The command from argv[k] on is one of its own; rc < 0 (an option skipopts did not know) makes
 * the whole opaque. more: xargs adds words to it. */
static void inner(struct sp *p, size_t idx, size_t k, int rc, int more)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	if (rc < 0)
		emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, "a wrapper with an option the splitter does not know");
	else if (k < cmd->argc)
		emitinner(p, idx, cmd->argv + k, cmd->wf + k, cmd->argc - k, more);
}

/* Whether any word after the name is one of stops. */
static int stopped(const struct shcmd *cmd, const char *const *stops)
{
	for (size_t j = 1; stops && j < cmd->argc; j++)
		if (instrs(stops, cmd->argv[j]))
			return 1;
	return 0;
}

/* Options as the row says, its operands, then the command it runs. */
static void wopts(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	size_t k = 1;
	if (stopped(cmd, w->stops))
		return;
	int rc = skipopts(cmd, &k, w, NULL, NULL);
	for (int j = 0; rc >= 0 && j < w->operands; j++)
		if (splits(cmd, k + (size_t)j))
			rc = -1;
	k += (size_t)w->operands;
	if (w->bare && k >= cmd->argc && rc >= 0) {
		emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, w->bare);
		return;
	}
	inner(p, idx, k, rc, 0);
}

static void wshell(struct sp *p, size_t idx, const struct wrapper *w)
{
	(void)w;
	shellrun(p, idx, 0, p->c->stdinfile);
}

static void wbusybox(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	char **av = cmd->argv;
	unsigned char *wf = cmd->wf;
	size_t argc = cmd->argc;
	(void)w;
	if (argc > 1 && (posixsh(av[1]) || !strcmp(av[1], "hush")))
		shellrun(p, idx, 1, p->c->stdinfile);
	else if (argc > 1 && !(wf[1] & SHW_UNKNOWN) && av[1][0] != '-')
		emitinner(p, idx, av + 1, wf + 1, argc - 1, 0);
	else if (argc > 1)
		emitopaque(p, idx, av, wf, argc, "busybox running a command only known at run time");
}

static void wfc(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	(void)w;
	emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, "fc runs commands from the history");
}

static void wtrap(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	char **av = cmd->argv;
	(void)w;
	if (cmd->argc < 2 || !strcmp(av[1], "-p") || !strcmp(av[1], "-l") || !strcmp(av[1], "-"))
		return;
	size_t k = !strcmp(av[1], "--") ? 2 : 1;
	if (k >= cmd->argc)
		return;
	if (cmd->wf[k] & SHW_UNKNOWN) {
		emitopaque(p, idx, av + k, cmd->wf + k, 1, "a trap whose command is only known at run time");
		return;
	}
	char *s = xstrdup(av[k]);
	emitscript(p, idx, s);
	free(s);
}

static void weval(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	(void)w;
	/* bash's eval takes "--" (dash would run a command named "--": reading the rest is stricter) */
	char *s = joinwords(cmd, cmd->argc > 1 && !strcmp(cmd->argv[1], "--") ? 2 : 1);
	if (!s) {
		emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, "eval of a string only known at run time");
		return;
	}
	emitscript(p, idx, s);
	free(s);
}

static void walias(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	(void)w;
	for (size_t k = 1; k < cmd->argc; k++) {
		const char *eq = strchr(cmd->argv[k], '=');
		if (cmd->wf[k] & SHW_UNKNOWN) {
			emitopaque(p, idx, cmd->argv + k, cmd->wf + k, 1, "an alias only known at run time");
			return;
		}
		if (eq) {
			/* e=env; e curl x: the words after a use of the name go to the value's program, so a
			 * value naming one that runs others (or one the splitter cannot read plainly) is opaque */
			const char *v = eq + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			size_t n = strcspn(v, " \t");
			char *first = xstrndup(v, n);
			const char *slash = strrchr(first, '/');
			int runs = strpbrk(v, "'\"\\$`") || strchr(first, '=') || wrapfind(slash ? slash + 1 : first);
			free(first);
			if (runs) {
				emitopaque(p, idx, cmd->argv + k, cmd->wf + k, 1, "an alias for a program that runs others");
				return;
			}
			char *s = xstrdup(eq + 1);
			emitscript(p, idx, s);
			free(s);
		}
	}
}

static void wwatch(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	size_t k = 1;
	int exec = 0;
	int rc = skipopts(cmd, &k, w, NULL, NULL);
	for (size_t j = 1; j < k; j++) { /* -x alone, in a cluster (-tx), or after -n 1 */
		const char *a = cmd->argv[j];
		if (a[0] != '-' || (cmd->wf[j] & SHW_UNKNOWN))
			continue;
		if (a[1] == '-')
			exec |= !strcmp(a, "--exec");
		else
			exec |= a[strcspn(a, "xn")] == 'x'; /* before -n, whose value ends the cluster */
	}
	if (rc < 0 || exec) {
		inner(p, idx, k, rc, 0);
		return;
	}
	char *s = joinwords(cmd, k);
	if (!s)
		emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, "watch running a string only known at run time");
	else
		emitscript(p, idx, s);
	free(s);
}

static void wcommand(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	size_t k = 1;
	(void)w;
	/* -p, -v, -V in any cluster (-pp is -p -p): -v or -V only says what a name is */
	for (; isopt(cmd, k) && strcmp(cmd->argv[k], "--") != 0; k++) {
		const char *a = cmd->argv[k];
		if (strspn(a + 1, "pvV") != strlen(a + 1)) {
			emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, "a wrapper with an option the splitter does not know");
			return;
		}
		if (strpbrk(a, "vV"))
			return;
	}
	if (k < cmd->argc && !strcmp(cmd->argv[k], "--"))
		k++;
	inner(p, idx, k, 0, 0);
}

static void wflock(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	char **av = cmd->argv;
	unsigned char *wf = cmd->wf;
	for (size_t j = 1; j + 1 < cmd->argc; j++)
		if (!strcmp(av[j], "-c") || !strcmp(av[j], "--command")) {
			if (wf[j + 1] & SHW_UNKNOWN) {
				emitopaque(p, idx, av + j + 1, wf + j + 1, 1, "flock -c with a string only known at run time");
				return;
			}
			char *s = xstrdup(av[j + 1]);
			emitscript(p, idx, s);
			free(s);
			return;
		}
	wopts(p, idx, w);
}

/* The long options of su, runuser and script: those that take a value, those that take none. A
 * word that is a prefix of one only (getopt_long takes --comm for --command) is that one. */
static const char *const sula[] = {"--command", "--session-command", "--shell", "--group", "--supp-group", "--user",
                                   "--whitelist-environment", "--echo", "--log-in", "--log-out",
                                   "--log-io", "--log-timing", "--logging-format", "--output-limit", NULL};
static const char *const sulf[] = {"--login", "--preserve-environment", "--pty", "--fast", "--quiet", "--append",
                                   "--flush", "--force", "--return", "--help", "--version",
                                   "--timing", NULL}; /* --timing[=FILE]: its value only joined */

/* The long option a word names (its full name), or NULL when it names none or more than one. */
static const char *longname(const char *a, size_t n)
{
	const char *hit = NULL;
	for (int pass = 0; pass < 2; pass++)
		for (const char *const *l = pass ? sulf : sula; *l; l++) {
			if (strlen(*l) == n && !strncmp(*l, a, n))
				return *l;
			if (n > 2 && strlen(*l) > n && !strncmp(*l, a, n))
				hit = hit ? (const char *)-1 : *l;
		}
	return hit == (const char *)-1 ? NULL : hit;
}

/* su, runuser and script: a -c string (-c, -qc, -c'cmd', --command, --comm=) is a script run by
 * the user's shell, or by -s SHELL when that is a POSIX shell (else opaque: "su -s curl -c x"
 * runs curl); runuser -u USER runs the command after its options; an option it does not know,
 * or a word only known at run time where an option could be, makes the whole opaque. */
static void wsu(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	char **av = cmd->argv;
	unsigned char *wf = cmd->wf;
	size_t argc = cmd->argc, run = 0; /* run: where runuser -u's command starts */
	const char *str = NULL, *shell = NULL, *n = w->name, *why = NULL;
	int user = 0, strunknown = 0, early = 0; /* early: a word before runuser's -u that is no option */
	for (size_t j = 1; j < argc && !why && !run; j++) {
		const char *a = av[j];
		if (wf[j] & SHW_UNKNOWN) {
			if (a[0] == SHUNK || (wf[j] & SHW_SPLIT))
				why = "a word only known at run time where an option could be";
			else if (user)
				run = j;
			else
				early = 1;
			continue;
		}
		if (a[0] != '-' || !a[1]) {
			if (user)
				run = j; /* runuser -u USER [options] COMMAND */
			early |= a[0] != '-'; /* a word, not a lone "-" */
			continue;
		}
		if (!strcmp(a, "--")) {
			if (user)
				run = j + 1;
			continue;
		}
		const char *opt = NULL, *v = NULL; /* the option (its long name, or "-X") and its value */
		size_t taken = 0;                  /* 1: the value is the next word */
		char one[3] = "-?";
		if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			opt = longname(a, eq ? (size_t)(eq - a) : strlen(a));
			if (!opt) {
				why = "a wrapper with an option the splitter does not know";
				break;
			}
			if (instrs(sula, opt))
				v = eq ? eq + 1 : (taken = 1, j + 1 < argc ? av[j + 1] : NULL);
		} else {
			for (const char *o = a + 1; *o; o++) {
				if (*o == 'c' || strchr(w->argopts, *o)) {
					one[1] = *o;
					opt = one;
					v = o[1] ? o + 1 : (taken = 1, j + 1 < argc ? av[j + 1] : NULL);
					break;
				}
				if (!strchr(w->flags, *o)) {
					why = "a wrapper with an option the splitter does not know";
					break;
				}
			}
			if (why || !opt)
				continue;
		}
		int vunknown = taken && j + 1 < argc && (wf[j + 1] & SHW_UNKNOWN);
		if (!strcmp(opt, "-c") || opt == sula[0] || opt == sula[1]) {
			str = v, strunknown = vunknown;
		} else if (!strcmp(opt, "-s") || opt == sula[2]) {
			shell = vunknown ? "" : v;
		} else if (!strcmp(opt, "-u") || opt == sula[5]) {
			user = !strcmp(n, "runuser");
			if (user && early) /* runuser curl -u root x: getopt moves -u first, curl runs */
				why = "runuser's command before its -u";
		} else if (!strcmp(opt, "-t") && !strcmp(n, "script")) {
			taken = 0; /* script -t[FILE]: its value only glued */
		}
		j += taken;
	}
	if (!why && str && shell) {
		const char *b = strrchr(shell, '/');
		if (!posixsh(b ? b + 1 : shell))
			why = "su -s runs its -c string with a program the splitter does not read";
	}
	if (!why && str && str[0] == '-')
		why = "a -c string the shell reads as its options (su -c -- 'cmd')";
	if (!why && (str || strunknown)) {
		if (strunknown || !str) {
			why = "a command string only known at run time";
		} else {
			char *t = xstrdup(str);
			emitscript(p, idx, t);
			free(t);
			return;
		}
	}
	if (!why && run) {
		/* runuser reads options anywhere before "--" (runuser -u U ls -m x runs ls x) */
		for (size_t j = run; j < argc && strcmp(av[j - 1], "--") != 0; j++)
			if (av[j][0] == '-' && av[j][1]) {
				why = "runuser reads options after its command";
				break;
			}
		if (!why) {
			inner(p, idx, run, 0, 0);
			return;
		}
	}
	if (!why && !strcmp(n, "script") && argc > 1)
		return; /* script FILE: a shell reading the terminal, which a step has not */
	emitopaque(p, idx, av, wf, argc, why ? why : "a shell started by su, runuser or script");
}

/* VAR=value words after sudo's or env's options: a variable that changes what programs run is
 * dangerous, as on the line itself. */
/* A variable whose value a program runs as a command line (PAGER, GIT_SSH_COMMAND ...): 1, or
 * 2 for one only known as a whole at run time (GIT_CONFIG_PARAMETERS). */
static int cmdenv(const char *name, size_t n)
{
	static const char *const vars[] = {"PAGER", "MANPAGER", "GIT_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR",
	                                   "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF",
	                                   "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "BROWSER", "LESSOPEN",
	                                   "LESSCLOSE", "GIT_PROXY_COMMAND", "RSYNC_RSH", "CVS_RSH", "FCEDIT", "SHELL",
	                                   "PROMPT_COMMAND", NULL};
	for (const char *const *v = vars; *v; v++)
		if (strlen(*v) == n && !strncmp(*v, name, n))
			return 1;
	if (n > 17 && !strncmp(name, "GIT_CONFIG_VALUE_", 17))
		return 1; /* the value of GIT_CONFIG_KEY_n, alias.x='!cmd' among them */
	return n == 21 && !strncmp(name, "GIT_CONFIG_PARAMETERS", 21) ? 2 : 0;
}

/* A git setting whose value git runs as a command: core.pager, core.sshCommand, core.fsmonitor,
 * diff.external, diff.X.textconv, filter.X.smudge, pager.X, alias.X='!cmd' ... */
static int gitcmdkey(const char *key, size_t n, const char *value)
{
	static const char *const last[] = {"pager", "editor", "sshcommand", "fsmonitor", "askpass", "gitproxy",
	                                   "external", "command", "textconv", "clean", "smudge", "process", "driver",
	                                   "program", "helper", "packobjectshook", "uploadpack", "receivepack", "cmd",
	                                   "browser", "difffilter", NULL};
	const char *dot = memchr(key, '.', n), *ld = key + n;
	while (ld > key && ld[-1] != '.')
		ld--;
	if (!dot)
		return 0;
	if (!strncasecmp(key, "alias.", 6))
		return value[0] == '!';
	if (!strncasecmp(key, "pager.", 6))
		return 1;
	for (const char *const *l = last; *l; l++)
		if (strlen(*l) == (size_t)(key + n - ld) && !strncasecmp(ld, *l, strlen(*l)))
			return 1;
	return 0;
}

int shheld(const char *w, int git)
{
	const char *eq = strchr(w, '=');
	if (!eq || strchr(w, SHUNK))
		return 0;
	return git ? gitcmdkey(w, (size_t)(eq - w), eq + 1) : cmdenv(w, (size_t)(eq - w)) == 1;
}

/* A command line held in a value a program runs (PAGER='curl x', alias.x='!curl x',
 * LESSOPEN='|curl %s'): read as commands of the command at idx, or of the line (idx -1);
 * opaque when only known at run time. */
static void cmdvalue(struct sp *p, struct builder *b, size_t idx, const char *v)
{
	static const char why[] = "a command held in a variable or setting only known at run time";
	while (*v == '|' || *v == '!')
		v++;
	if (strchr(v, SHUNK)) {
		if (b)
			bopaque(p, b, why);
		else
			emitopaque(p, idx, NULL, NULL, 0, why);
		return;
	}
	char *t = xstrdup(v); /* v may sit in the scratch buffer the reading grows */
	if (b)
		subline(p, t, strlen(t), p->sub ? p->org : p->i);
	else
		emitscript(p, idx, t);
	free(t);
}

static void assigns(struct sp *p, size_t idx, size_t *k, int any, const char *why)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	char **av = cmd->argv;
	while (*k < cmd->argc && (any ? !(cmd->wf[*k] & SHW_UNKNOWN && av[*k][0] == SHUNK)
	                              : (cmd->wf[*k] & SHW_UNKNOWN) == 0 && av[*k][0] != '-') &&
	       strchr(av[*k], '=') && av[*k][0] != '=') {
		const char *eq = strchr(av[*k], '=');
		if (dangerenv(av[*k], (size_t)(eq - av[*k])) && !cmd->danger) {
			cmd->danger = why;
			cmd->dangerkey = av[*k];
			cmd->dangerword = av[*k];
		}
		if (!strncmp(av[*k], "BASH_FUNC_", 10)) {
			/* a function a child bash imports: calling its name runs the body */
			if (strchr(eq + 1, SHUNK))
				emitopaque(p, idx, av + *k, cmd->wf + *k, 1, "a bash function from the environment only known at run time");
			else if (!strncmp(eq + 1, "()", 2))
				emitscript(p, idx, eq + 3);
			cmd = &p->c->out->cmds[idx];
			av = cmd->argv;
		}
		int ce = cmdenv(av[*k], (size_t)(eq - av[*k]));
		if (ce) {
			if (ce == 2)
				emitopaque(p, idx, NULL, NULL, 0, "GIT_CONFIG_PARAMETERS sets git commands only known at run time");
			else
				cmdvalue(p, NULL, idx, eq + 1);
			cmd = &p->c->out->cmds[idx];
			av = cmd->argv;
		}
		(*k)++;
	}
}

static void wsudo(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	char **av = cmd->argv;
	size_t argc = cmd->argc, k = 1;
	int shell = 0;
	for (size_t j = 1; j < argc && av[j][0] == '-'; j++)
		if (!strcmp(av[j], "-s") || !strcmp(av[j], "-i") || !strcmp(av[j], "--shell") || !strcmp(av[j], "--login"))
			shell = 1;
	for (size_t j = 1; j < argc && av[j][0] == '-'; j++)
		if (!strcmp(av[j], "-l") || !strcmp(av[j], "-v") || !strcmp(av[j], "-k") || !strcmp(av[j], "-K") ||
		    !strcmp(av[j], "-V") || !strcmp(av[j], "-e") || !strcmp(av[j], "-h") || !strcmp(av[j], "--list") ||
		    !strcmp(av[j], "--edit") || !strcmp(av[j], "--validate"))
			return;
	int rc = skipopts(cmd, &k, w, NULL, NULL);
	assigns(p, idx, &k, 0, "sudo VAR=value sets a variable that changes what programs run");
	if (k >= argc && shell && rc >= 0) {
		emitopaque(p, idx, av, cmd->wf, argc, "a shell started by sudo or doas");
		return;
	}
	inner(p, idx, k, rc, 0);
}

static void wenv(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	char **av = cmd->argv;
	unsigned char *wf = cmd->wf;
	size_t argc = cmd->argc, k = 1;
	static const struct stropt split = {'S', "--split-string"};
	const char *s = NULL;
	int rc = skipopts(cmd, &k, w, &split, &s);
	if (rc == 1) { /* env -S: the string split into words, roughly as a shell would (-vS, -u X -S) */
		if (!s || !*s) {
			emitopaque(p, idx, av, wf, argc, "env -S with a string only known at run time");
			return;
		}
		/* env splits its string by rules of its own ('#', '\\c', quotes, '>' is no redirection) and
		 * reads options again after it: only plain words are read as a shell would read them */
		static const char plainch[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%^ \t";
		char *t = joinwords(cmd, k);
		char *u = t ? xasprintf("%s %s", s, t) : NULL;
		if (strspn(s, plainch) != strlen(s) || (u && u[strspn(u, " \t")] == '-')) {
			emitopaque(p, idx, av, wf, argc, "env -S with a string env splits otherwise than a shell");
			free(t), free(u);
			return;
		}
		if (u)
			emitscript(p, idx, u);
		else
			emitopaque(p, idx, av, wf, argc, "env -S with words only known at run time");
		free(t), free(u);
		return;
	}
	assigns(p, idx, &k, 1, "env VAR=value sets a variable that changes what programs run");
	if (k < argc && (wf[k] & SHW_UNKNOWN) && av[k][0] == SHUNK)
		rc = -1;
	inner(p, idx, k, rc, 0);
}

/* xargs's replace string among its options argv[1..end) (-I R, -IR, -i, -iR, --replace[=R],
 * in a cluster too), or NULL; *unknown when it is only known at run time. */
static const char *xreplace(const struct shcmd *cmd, size_t end, int *unknown)
{
	const char *r = NULL;
	for (size_t j = 1; j < end; j++) {
		const char *a = cmd->argv[j];
		if (a[0] != '-' || !a[1] || (cmd->wf[j] & SHW_UNKNOWN))
			continue;
		if (a[1] == '-') {
			if (!strcmp(a, "--replace"))
				r = "{}";
			else if (!strncmp(a, "--replace=", 10))
				r = a + 10;
			continue;
		}
		for (const char *o = a + 1; *o; o++) {
			if (*o == 'I' || *o == 'i') {
				if (o[1])
					r = o + 1;
				else if (*o == 'i')
					r = "{}";
				else if (j + 1 < end)
					r = cmd->argv[j + 1], *unknown |= (cmd->wf[j + 1] & SHW_UNKNOWN) != 0;
				break;
			}
			if (strchr("adELnPsel", *o))
				break; /* its value is the rest */
		}
	}
	if (r && strchr(r, SHUNK))
		*unknown = 1;
	return r && *r ? r : NULL;
}

static void wxargs(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	size_t k = 1;
	int rc = skipopts(cmd, &k, w, NULL, NULL);
	if (rc >= 0 && k >= cmd->argc) {
		static char *echo[] = {"echo"};
		static unsigned char f0[] = {0};
		emitinner(p, idx, echo, f0, 1, 1);
		return;
	}
	int unknown = 0;
	const char *r = rc >= 0 ? xreplace(cmd, k, &unknown) : NULL;
	if (unknown) {
		emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, "xargs with a replace string only known at run time");
		return;
	}
	if (!r) {
		inner(p, idx, k, rc, 1);
		return;
	}
	/* each input line goes where R is, in any word: the command's name, a shell's script */
	size_t n = cmd->argc - k, rl = strlen(r);
	char **av = xmalloc(n * sizeof *av);
	unsigned char *f = xmalloc(n);
	for (size_t j = 0; j < n; j++) {
		const char *a = cmd->argv[k + j];
		struct buf b = {0};
		f[j] = cmd->wf[k + j];
		for (const char *q; (q = strstr(a, r)); a = q + rl) {
			bufadd(&b, a, (size_t)(q - a));
			bufputc(&b, SHUNK);
			f[j] |= SHW_UNKNOWN;
		}
		bufputs(&b, a);
		av[j] = b.data ? b.data : xstrdup("");
	}
	emitinner(p, idx, av, f, n, 1);
	for (size_t j = 0; j < n; j++)
		free(av[j]);
	free(av), free(f);
}

/* find's primaries whose value is the next word (a word there is never read as a primary). */
static const char *const findval[] = {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
                                      "-iregex", "-lname", "-ilname", "-type", "-xtype", "-user", "-group", "-uid",
                                      "-gid", "-perm", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime",
                                      "-cmin", "-used", "-newer", "-anewer", "-cnewer", "-samefile", "-inum",
                                      "-links", "-maxdepth", "-mindepth", "-printf", "-fprint", "-fprint0", "-fls",
                                      "-context", "-regextype", "-files0-from", NULL};

static int findexec(const char *a)
{
	static const char *const run[] = {"-exec", "-execdir", "-ok", "-okdir", NULL};
	return instrs(run, a);
}

/* Where the command of the -exec at j ends (its ";", or "+" after "{}"), or argc. */
static size_t findend(const struct shcmd *cmd, size_t j)
{
	size_t s = j + 1;
	for (j = s; j < cmd->argc; j++)
		if (!strcmp(cmd->argv[j], ";") || (j > s && !strcmp(cmd->argv[j], "+") && !strcmp(cmd->argv[j - 1], "{}")))
			break;
	return j;
}

/* find: what each -exec, -execdir, -ok and -okdir runs, every one of them read, an -exec inside
 * another's words too (a word only known at run time may be ";" and end the first early). A word
 * that may be a primary (-exec) when only known at run time, where find reads primaries, makes the
 * whole opaque: E=-exec; find a $E curl x \; runs curl. */
static void wfind(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	char **av = cmd->argv;
	unsigned char *wf = cmd->wf;
	size_t argc = cmd->argc, end = 0;
	int early = 0; /* a word in this -exec's command may end it early */
	(void)w;
	for (size_t j = 1; j < argc; j++) {
		if (j >= end)
			early = 0;
		if (j >= end && findexec(av[j]) && !(wf[j] & SHW_UNKNOWN)) {
			end = findend(cmd, j);
			continue;
		}
		int could = !(wf[j] & SHW_NODASH) && (((wf[j] & SHW_UNKNOWN) && av[j][0] == SHUNK) ||
		                                      ((wf[j] & SHW_SPLIT) && strchr("*?[", av[j][0])));
		if (!could || (j > 1 && !(wf[j - 1] & SHW_UNKNOWN) && instrs(findval, av[j - 1])))
			continue;
		/* -exec needs its ";" or "+": in the word itself (unquoted, it may be many), or after it */
		int term = (wf[j] & SHW_SPLIT) != 0;
		for (size_t q = j + 1; q < argc && !term; q++)
			term = !strcmp(av[q], ";") || !strcmp(av[q], "+") || (wf[q] & SHW_UNKNOWN);
		if ((j >= end || early) && term) {
			emitopaque(p, idx, av, wf, argc, "a word only known at run time where find reads its primaries");
			return;
		}
		early = 1;
	}
	for (size_t j = 1; j < argc; j++) {
		if (!findexec(av[j]) || (wf[j] & SHW_UNKNOWN))
			continue;
		size_t s = j + 1, e = findend(cmd, j);
		if (e == s)
			continue;
		/* {} is a path found, "./name" or below the start: it never starts with '-' */
		char **ws = xmalloc((e - s) * sizeof *ws);
		unsigned char *f = xmalloc(e - s);
		static char unk[] = {SHUNK, 0};
		for (size_t q = s; q < e; q++) {
			int br = strstr(av[q], "{}") != NULL;
			ws[q - s] = br && !strcmp(av[q], "{}") ? unk : av[q];
			f[q - s] = br ? (unsigned char)(wf[q] | SHW_UNKNOWN | SHW_NODASH) : wf[q];
		}
		emitinner(p, idx, ws, f, e - s, 0);
		free(ws), free(f);
	}
}

/* uv run, poetry run, pipenv run, pdm run; bundle exec (the row's sub): the command after, its
 * own options before the subcommand read from its row. */
static void wrunner(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	size_t k = 1;
	int rc = skipopts(cmd, &k, w, NULL, NULL); /* its own options before the subcommand */
	if (rc < 0) {
		/* an option it does not know: opaque when the subcommand, or a word only known at run
		 * time, follows (uv --bogus run curl); uv --bogus pip list runs nothing of the line's */
		for (size_t j = k; j < cmd->argc; j++)
			if (!strcmp(cmd->argv[j], w->sub) || (cmd->wf[j] & SHW_UNKNOWN)) {
				emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, "a runner with options the splitter does not read");
				return;
			}
		return;
	}
	if (k + 1 >= cmd->argc || strcmp(cmd->argv[k], w->sub) != 0)
		return;
	if (!strcmp(w->sub, "run") && isopt(cmd, k + 1)) {
		emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, "a runner with options the splitter does not read");
		return;
	}
	inner(p, idx, k + 1, 0, 0);
}

/* bash's hash -p PATH NAME: NAME runs PATH from then on, whatever the line says it runs. */
static void whash(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	(void)w;
	for (size_t j = 1; j < cmd->argc && cmd->argv[j][0] == '-' && strcmp(cmd->argv[j], "--"); j++)
		if (strchr(cmd->argv[j], 'p') || (cmd->wf[j] & SHW_UNKNOWN)) {
			emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, "hash -p makes a name run another program");
			return;
		}
}

/* Their options are many; when they run something, it is not read. */
static void wopaque(struct sp *p, size_t idx, const struct wrapper *w)
{
	struct shcmd *cmd = &p->c->out->cmds[idx];
	(void)w;
	if (cmd->argc > 1)
		emitopaque(p, idx, cmd->argv, cmd->wf, cmd->argc, "a wrapper whose options the splitter does not read");
}

/* The runners' options before their subcommand (uv --quiet run, poetry -C DIR run). */
static const char *const uvla[] = {"--color", "--cache-dir", "--python-preference", "--directory", "--project",
                                   "--config-file", "--allow-insecure-host", NULL};
static const char *const uvlf[] = {"--quiet", "--verbose", "--native-tls", "--offline", "--no-cache",
                                   "--no-python-downloads", "--no-config", "--no-progress", "--managed-python",
                                   "--no-managed-python", "--help", "--version", NULL};
static const char *const poetryla[] = {"--directory", "--project", NULL};
static const char *const poetrylf[] = {"--no-interaction", "--quiet", "--verbose", "--ansi", "--no-ansi",
                                       "--no-plugins", "--no-cache", "--help", "--version", NULL};
static const char *const pdmla[] = {"--config", NULL};
static const char *const pdmlf[] = {"--verbose", "--quiet", "--no-cache", "--ignore-python", "--non-interactive",
                                    "--help", "--version", NULL};
static const char *const pipenvla[] = {"--python", "--pypi-mirror", NULL};
static const char *const pipenvlf[] = {"--where", "--venv", "--py", "--envs", "--rm", "--bare", "--man", "--support",
                                       "--site-packages", "--clear", "--quiet", "--verbose", "--version", "--help", NULL};
static const char *const bundlela[] = {"--retry", NULL};
static const char *const bundlelf[] = {"--no-color", "--verbose", "--help", "--version", NULL};
static const char *const fakerootla[] = {"--lib", "--faked", NULL};
static const char *const fakerootlf[] = {"--unknown-is-real", "--help", "--version", NULL};
static const char *const timela[] = {"--output", "--format", NULL};
static const char *const timelf[] = {"--fork", "--wait", "--ctty", "--portability", "--verbose", "--append", NULL};
static const char *const timeoutla[] = {"--signal", "--kill-after", NULL};
static const char *const timeoutlf[] = {"--foreground", "--preserve-status", "--verbose", NULL};
static const char *const nicela[] = {"--adjustment", NULL};
static const char *const stdbufla[] = {"--input", "--output", "--error", NULL};
static const char *const ionicela[] = {"--class", "--classdata", NULL};
static const char *const ionicelf[] = {"--ignore", NULL};
static const char *const ionicestops[] = {"-p", "-P", "-u", NULL};
static const char *const taskla[] = {"--userspec", "--groups", NULL};
static const char *const tasklf[] = {"--cpu-list", "--all-tasks", "--batch", "--fifo", "--idle", "--other", "--rr", "--deadline", "--reset-on-fork", "--verbose", "--skip-chdir", NULL};
static const char *const taskstops[] = {"-p", "--pid", NULL};
static const char *const flockla[] = {"--timeout", "--wait", "--conflict-exit-code", "--command", NULL};
static const char *const flocklf[] = {"--shared", "--exclusive", "--unlock", "--nonblock", "--close", "--no-fork", "--verbose", NULL};
static const char *const sudola[] = {"--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role", "--type", "--command-timeout", "--other-user", "--chroot", NULL};
static const char *const sudolf[] = {"--askpass", "--background", "--preserve-env", "--set-home", "--login", "--non-interactive", "--shell", "--stdin", "--reset-timestamp", "--remove-timestamp", NULL};
/* A long option whose argument is optional (--replace[=R]) takes it only joined with '=': it is
 * listed with the flags. */
static const char *const envla[] = {"--unset", "--chdir", NULL};
static const char *const envlf[] = {"--ignore-environment", "--null", "--debug", "--list-signal-handling", "--default-signal", "--ignore-signal", "--block-signal", NULL};
static const char *const xargsla[] = {"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var", NULL};
static const char *const xargslf[] = {"--null", "--open-tty", "--interactive", "--no-run-if-empty", "--verbose", "--exit", "--show-limits", "--eof", "--replace", "--max-lines", NULL};
static const char *const watchla[] = {"--interval", NULL};
static const char *const watchlf[] = {"--no-title", "--beep", "--errexit", "--chgexit", "--color", "--exec", "--precise", "--no-wrap", "--differences", NULL};

#define SHELL(n) {n, wshell, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL}
#define OPAQUE(n) {n, wopaque, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL}
#define PLAIN(n, fn) {n, fn, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL}
/* Every wrapper, sorted by name: wrapfind searches it. */
static const struct wrapper wrappers[] = {
	OPAQUE("abduco"),
	PLAIN("alias", walias),
	SHELL("ash"),
	SHELL("bash"),
	PLAIN("builtin", wcommand),
	{"bundle", wrunner, "r", bundlela, bundlelf, "Vh", 0, NULL, NULL, NULL, "exec"},
	PLAIN("busybox", wbusybox),
	OPAQUE("bwrap"),
	OPAQUE("capsh"),
	{"catchsegv", wopts, "", timela, timelf, "cfwpva", 0, NULL, NULL, NULL, NULL},
	OPAQUE("ccache"),
	OPAQUE("cgexec"),
	OPAQUE("choom"),
	OPAQUE("chpst"),
	{"chronic", wopts, "", NULL, NULL, "ev", 0, NULL, NULL, NULL, NULL},
	{"chroot", wopts, "TPD", taskla, tasklf, "abcdfiormRv", 1, taskstops, "chroot running a shell", NULL, NULL},
	{"chrt", wopts, "TPD", taskla, tasklf, "abcdfiormRv", 1, taskstops, NULL, NULL, NULL},
	PLAIN("command", wcommand),
	OPAQUE("cpulimit"),
	SHELL("csh"),
	OPAQUE("daemonize"),
	SHELL("dash"),
	OPAQUE("dbus-launch"),
	{"dbus-run-session", wopts, "", timela, timelf, "cfwpva", 0, NULL, NULL, NULL, NULL},
	OPAQUE("distcc"),
	OPAQUE("distrobox-enter"),
	{"doas", wsudo, "uC", sudola, sudolf, "nsS", 0, NULL, NULL, NULL, NULL},
	OPAQUE("dtach"),
	OPAQUE("dumb-init"),
	{"eatmydata", wopts, "", NULL, NULL, "", 0, NULL, NULL, NULL, NULL},
	SHELL("elvish"),
	OPAQUE("entr"),
	{"env", wenv, "uC", envla, envlf, "i0v-", 0, NULL, NULL, NULL, NULL},
	OPAQUE("envdir"),
	OPAQUE("envuidgid"),
	SHELL("es"),
	PLAIN("eval", weval),
	{"exec", wopts, "a", NULL, NULL, "cl", 0, NULL, NULL, NULL, NULL},
	OPAQUE("expect"),
	OPAQUE("fakechroot"),
	{"fakeroot", wopts, "lfisb", fakerootla, fakerootlf, "uvh", 0, NULL, NULL, NULL, NULL},
	{"faketime", wopts, "", NULL, NULL, "", 1, NULL, NULL, NULL, NULL}, /* TIMESTAMP CMD; -m -f not in clusters */
	PLAIN("fc", wfc),
	PLAIN("find", wfind),
	OPAQUE("firejail"),
	SHELL("fish"),
	OPAQUE("flatpak-spawn"),
	{"flock", wflock, "wE", flockla, flocklf, "sxunoFv", 1, NULL, NULL, NULL, NULL},
	OPAQUE("gdb"),
	OPAQUE("gosu"),
	PLAIN("hash", whash),
	OPAQUE("i386"),
	OPAQUE("icecc"),
	OPAQUE("ifne"),
	{"ionice", wopts, "cn", ionicela, ionicelf, "t", 0, ionicestops, NULL, NULL, NULL},
	SHELL("ksh"),
	SHELL("ksh93"),
	OPAQUE("lckdo"),
	OPAQUE("linux32"),
	OPAQUE("linux64"),
	SHELL("lksh"),
	OPAQUE("lldb"),
	OPAQUE("ltrace"),
	OPAQUE("mispipe"),
	SHELL("mksh"),
	{"nice", wopts, "n", nicela, NULL, "#", 0, NULL, NULL, NULL, NULL},
	OPAQUE("nocache"),
	OPAQUE("nodemon"),
	{"nohup", wopts, "", timela, timelf, "cfwpva", 0, NULL, NULL, NULL, NULL},
	OPAQUE("nq"),
	OPAQUE("nsenter"),
	SHELL("nu"),
	OPAQUE("numactl"),
	SHELL("oksh"),
	OPAQUE("parallel"),
	SHELL("pdksh"),
	{"pdm", wrunner, "c", pdmla, pdmlf, "vqInhV", 0, NULL, NULL, NULL, "run"},
	OPAQUE("pee"),
	OPAQUE("pgrphack"),
	{"pipenv", wrunner, "", pipenvla, pipenvlf, "qvh", 0, NULL, NULL, NULL, "run"},
	OPAQUE("pkexec"),
	{"poetry", wrunner, "CP", poetryla, poetrylf, "nqvhV", 0, NULL, NULL, NULL, "run"},
	SHELL("posh"),
	OPAQUE("prlimit"),
	OPAQUE("proot"),
	OPAQUE("proxychains"),
	OPAQUE("proxychains4"),
	SHELL("pwsh"),
	SHELL("rbash"),
	SHELL("rc"),
	OPAQUE("rlwrap"),
	OPAQUE("run-parts"),
	OPAQUE("runcon"),
	{"runuser", wsu, "usgGw", NULL, NULL, "lmpfPhV", 0, NULL, NULL, NULL, NULL},
	OPAQUE("schroot"),
	OPAQUE("screen"),
	{"script", wsu, "tTBIOEmo", NULL, NULL, "aefqhV", 0, NULL, NULL, NULL, NULL},
	OPAQUE("setarch"),
	OPAQUE("setpriv"),
	{"setsid", wopts, "", timela, timelf, "cfwpva", 0, NULL, NULL, NULL, NULL},
	OPAQUE("setuidgid"),
	OPAQUE("sg"),
	SHELL("sh"),
	OPAQUE("socat"),
	OPAQUE("softlimit"),
	OPAQUE("ssh-agent"),
	OPAQUE("sshpass"),
	OPAQUE("start-stop-daemon"),
	{"stdbuf", wopts, "ioe", stdbufla, NULL, "", 0, NULL, NULL, NULL, NULL},
	OPAQUE("strace"),
	{"su", wsu, "sgGw", NULL, NULL, "lmpfPhV", 0, NULL, NULL, NULL, NULL},
	OPAQUE("su-exec"),
	{"sudo", wsudo, "ugCDhprtTRU", sudola, sudolf, "AbEHiknPSs", 0, NULL, NULL, NULL, NULL},
	OPAQUE("systemd-run"),
	{"taskset", wopts, "TPD", taskla, tasklf, "abcdfiormRv", 1, taskstops, NULL, NULL, NULL},
	SHELL("tcsh"),
	{"time", wopts, "of", timela, timelf, "cfwpva", 0, NULL, NULL, NULL, NULL},
	OPAQUE("timelimit"),
	{"timeout", wopts, "sk", timeoutla, timeoutlf, "v", 1, NULL, NULL, NULL, NULL},
	OPAQUE("tini"),
	OPAQUE("tmux"),
	OPAQUE("toolbox"),
	OPAQUE("torsocks"),
	PLAIN("toybox", wbusybox),
	PLAIN("trap", wtrap),
	OPAQUE("trickle"),
	OPAQUE("tsocks"),
	OPAQUE("tsp"),
	OPAQUE("uclampset"),
	OPAQUE("uname26"),
	{"unbuffer", wopts, "", NULL, NULL, "", 0, NULL, NULL, NULL, NULL}, /* -p only first, not in clusters */
	OPAQUE("unshare"),
	{"uv", wrunner, "", uvla, uvlf, "qvnhV", 0, NULL, NULL, NULL, "run"},
	OPAQUE("valgrind"),
	{"watch", wwatch, "n", watchla, watchlf, "bcegptwx", 0, NULL, NULL, "d", NULL}, /* -d[=permanent] */
	OPAQUE("watchexec"),
	OPAQUE("with-lock-ex"),
	OPAQUE("x86_64"),
	{"xargs", wxargs, "adEILnPs", xargsla, xargslf, "0oprtx", 0, NULL, NULL, "eil", NULL}, /* -e -i -l: value glued or none */
	SHELL("xonsh"),
	OPAQUE("xvfb-run"),
	SHELL("yash"),
	SHELL("zsh"),
};
#undef SHELL
#undef OPAQUE
#undef PLAIN

static int wrapcmp(const void *key, const void *row)
{
	return strcmp(key, ((const struct wrapper *)row)->name);
}

/* The row of the wrapper named n, or NULL: most commands are none. */
static const struct wrapper *wrapfind(const char *n)
{
	return bsearch(n, wrappers, sizeof wrappers / sizeof *wrappers, sizeof *wrappers, wrapcmp);
}

/* Commands that run other commands: what they run is reported as a command of its own. */
static void wrap(struct sp *p, size_t idx)
{
	const struct wrapper *w = wrapfind(base(p->c->out->cmds[idx].argv[0]));
	if (w)
		w->read(p, idx, w);
}

/* Builtins given variable names, a[SUBSCRIPT] among them (printf -v, test -v and let are
 * arithmetic). */
static const char *const namebuiltins[] = {"read", "mapfile", "readarray", "getopts", "wait", "unset", "declare",
                                           "typeset", "local", "export", "readonly", NULL};

/* What the command at idx means beyond its words: a name only known at run time, dangerous
 * options, a change of directory, the commands it runs. */
static void settle(struct sp *p, size_t idx)
{
	struct ctx *c = p->c;
	struct shcmd *cmd = &c->out->cmds[idx];
	if (!cmd->argc)
		return;
	if (cmd->wf[0] & SHW_UNKNOWN) {
		if (!cmd->opaque)
			cmd->opaque = "the command name is only known at run time";
		return;
	}
	const char *n = base(cmd->argv[0]);
	if (!cmd->danger) {
		const char *key = NULL, *w = NULL;
		const char *d = danger(cmd->argv, cmd->wf, cmd->argc, &key, &w);
		if (d)
			cmd->danger = d, cmd->dangerkey = key, cmd->dangerword = w;
	}
	int namer = instrs(namebuiltins, n);
	if (namer)
		c->names = 1; /* read 'a[$(x)]', printf -v, declare: bash evaluates the subscript of a name */
	int isprintf = !strcmp(n, "printf");
	if (namer || isprintf)
		for (size_t k = 1; k < cmd->argc; k++) { /* a name only known at run time may be PS4 */
			const char *a = cmd->argv[k], *u = strchr(a, SHUNK), *eq = strchr(a, '=');
			if (u && (!eq || u < eq) && (!isprintf || (k > 1 && !strcmp(cmd->argv[k - 1], "-v")))) {
				c->ps4 = 1;
				if (strcmp(n, "export") && strcmp(n, "read") && strcmp(n, "mapfile") && strcmp(n, "readarray") &&
				    strcmp(n, "getopts") && strcmp(n, "wait") && strcmp(n, "unset"))
					c->cmdtable = 1; /* declare "$n=..." may set BASH_CMDS[ls] */
			}
			if (strstr(a, "PS4")) /* read PS4, printf -v PS4, declare -n r=PS4 */
				c->ps4 = 1;
		}
	if (!strcmp(n, "read") || !strcmp(n, "mapfile") || !strcmp(n, "readarray") || !strcmp(n, "getopts") ||
	    !strcmp(n, "wait")) {
		/* the names they set, past their options' values: one only known at run time may be
		 * BASH_CMDS[ls] (read "$n" <<< /path/curl; ls runs curl) */
		const char *withval = !strcmp(n, "read") ? "adinNptu" : !strcmp(n, "wait") ? "p" : "dnOsuCc";
		int operand = 0;
		for (size_t k = 1; k < cmd->argc; k++) {
			const char *a = cmd->argv[k];
			int unk = (cmd->wf[k] & SHW_UNKNOWN) != 0;
			if (a[0] == '-' && a[1] && !operand && !unk) {
				const char *o = a + 1;
				while (*o && !strchr(withval, *o))
					o++;
				if (*o && !o[1] && k + 1 < cmd->argc) {
					k++; /* its value: a name for read -a and wait -p */
					if ((*o == 'a' || *o == 'p') && strcmp(n, "mapfile") && strcmp(n, "readarray") &&
					    (cmd->wf[k] & SHW_UNKNOWN) && !(n[0] == 'r' && *o == 'p'))
						c->cmdtable = 1;
				}
				continue;
			}
			operand++;
			if (!strcmp(n, "wait")) {
				/* its operands are ids, and options end at the first: only an unknown word where
				 * an option could be (wait $x, x='-p BASH_CMDS[ls]') sets a name */
				if (unk && !(cmd->wf[k] & SHW_NODASH))
					c->cmdtable = 1;
				break;
			}
			if (unk && (strcmp(n, "getopts") || operand == 2))
				c->cmdtable = 1;
		}
	}
	if (!strcmp(n, "set") || !strcmp(n, "shopt") || posixsh(n))
		for (size_t k = 1; k < cmd->argc; k++) { /* set -x, -o xtrace, bash -x: PS4 is expanded */
			const char *a = cmd->argv[k];
			if ((cmd->wf[k] & SHW_UNKNOWN) || !strcmp(a, "xtrace") ||
			    ((a[0] == '-' || a[0] == '+') && a[1] != '-' && strchr(a, 'x')))
				c->xtrace = 1;
		}
	if (!strcmp(n, "cd") || !strcmp(n, "pushd") || !strcmp(n, "popd"))
		chdir_(c, cmd);
	else if (!strcmp(n, "read") || !strcmp(n, "mapfile") || !strcmp(n, "readarray") || !strcmp(n, "getopts"))
		c->runtimevar = 1;
	else if (!strcmp(n, "let") || ((!strcmp(n, "printf") || !strcmp(n, "test") || !strcmp(n, "[")) && cmd->argc > 1 &&
	                               !strncmp(cmd->argv[1], "-v", 2)))
		c->arith = 1;
	else if (!strcmp(n, "declare") || !strcmp(n, "typeset") || !strcmp(n, "local") || !strcmp(n, "export") ||
	         !strcmp(n, "readonly")) {
		for (size_t k = 1; k < cmd->argc; k++) {
			const char *eq = strchr(cmd->argv[k], '=');
			if (cmd->wf[k] & SHW_UNKNOWN)
				c->runtimevar = 1;
			if (eq && dangerenv(cmd->argv[k], (size_t)(eq - cmd->argv[k])) && !cmd->danger) {
				cmd->danger = "it sets a variable that changes what programs run";
				cmd->dangerkey = cmd->argv[k], cmd->dangerword = cmd->argv[k];
			}
			if (!strncmp(cmd->argv[k], "-n", 2) || !strncmp(cmd->argv[k], "-i", 2))
				c->arith = 1; /* namerefs and integer variables evaluate what they are given */
			int ce = eq ? cmdenv(cmd->argv[k], (size_t)(eq - cmd->argv[k])) : 0;
			if (ce == 2)
				emitopaque(p, idx, NULL, NULL, 0, "GIT_CONFIG_PARAMETERS sets git commands only known at run time");
			else if (ce)
				cmdvalue(p, NULL, idx, eq + 1); /* export EDITOR='curl x' */
			cmd = &c->out->cmds[idx];
		}
	} else if (!strcmp(n, "git")) {
		for (size_t k = 1; k < cmd->argc && cmd->argv[k][0] == '-'; k++) { /* git -c KEY=VALUE */
			const char *a = cmd->argv[k], *kv = NULL;
			if (!strcmp(a, "-c") && k + 1 < cmd->argc)
				kv = cmd->argv[++k];
			else if (!strncmp(a, "-c", 2) && a[2])
				kv = a + 2;
			else if (!strncmp(a, "--config-env", 12))
				emitopaque(p, idx, NULL, NULL, 0, "git --config-env sets a value only known at run time");
			else if (!strcmp(a, "-C") || !strcmp(a, "--git-dir") || !strcmp(a, "--work-tree") ||
			         !strcmp(a, "--namespace") || !strcmp(a, "--super-prefix") || !strcmp(a, "--list-cmds"))
				k++;
			const char *eq = kv ? strchr(kv, '=') : NULL;
			if (kv && strchr(kv, SHUNK) && (!eq || strchr(kv, SHUNK) < eq))
				emitopaque(p, idx, NULL, NULL, 0, "git -c with a key only known at run time");
			else if (eq && gitcmdkey(kv, (size_t)(eq - kv), eq + 1))
				cmdvalue(p, NULL, idx, eq + 1);
			cmd = &c->out->cmds[idx];
		}
	}
	wrap(p, idx);
}

/* The command is read: copy it out, or, after a compound command, only keep what its
 * redirections say. */
static void finish(struct sp *p, struct builder *b, int after)
{
	struct ctx *c = p->c;
	if (after || !(b->argc || b->nassign || b->nredir || b->opaque)) {
		if (b->opaque)
			lineopaque(p, b->opaque);
		if (after && (b->redir || b->wsredir || (c->nrel && c->rel[c->nrel - 1].cmd == (size_t)-1))) {
			static char *none[] = {NULL};
			size_t k = emit(c, none, NULL, 0, b->started ? xstrndup(p->s + b->start, b->end - b->start) : xstrdup(""));
			c->out->cmds[k].redir = b->redir;
			c->out->cmds[k].wsredir = b->wsredir;
			for (int r = c->nrel - 1; r >= 0 && c->rel[r].cmd == (size_t)-1; r--)
				c->rel[r].cmd = k;
		}
		c->scratch.len = b->sbase;
		if (c->scratch.data)
			c->scratch.data[b->sbase] = 0;
		c->nw = b->wbase;
		buffree(&b->asg);
		return;
	}
	if (b->end < b->start) /* stopped inside its first token */
		b->end = p->i < p->n ? p->i : p->n;
	size_t argc = c->nw - b->wbase;
	char **argv = xmalloc((argc + 1) * sizeof *argv);
	for (size_t k = 0; k < argc; k++)
		argv[k] = c->scratch.data + c->woff[b->wbase + k];
	size_t k = emit(c, argv, c->wfl + b->wbase, argc, b->started ? xstrndup(p->s + b->start, b->end - b->start) : xstrdup(""));
	free(argv);
	struct shcmd *cmd = &c->out->cmds[k];
	cmd->redir = b->redir;
	cmd->wsredir = b->wsredir;
	cmd->opaque = b->opaque;
	cmd->nassign = b->nasg;
	cmd->assign = asgtake(b);
	if (b->envdanger[0]) {
		cmd->danger = "VAR=value before it sets a variable that changes what programs run";
		cmd->envkey = xstrdup(b->envdanger);
		cmd->dangerkey = cmd->envkey, cmd->dangerword = cmd->envkey;
	}
	for (int r = c->nrel - 1; r >= 0 && c->rel[r].cmd == (size_t)-1; r--)
		c->rel[r].cmd = k;
	c->scratch.len = b->sbase;
	c->nw = b->wbase;
	if (c->scratch.data)
		c->scratch.data[b->sbase] = 0;
	int save = c->stdinfile;
	c->stdinfile = b->stdinfile;
	settle(p, k);
	c->stdinfile = save;
}

/* A simple command; after a compound command only its redirections may follow. Returns 1 when
 * it was the head of a function definition "name ()", whose body follows. */
static int simple(struct sp *p, int after)
{
	struct ctx *c = p->c;
	struct builder b = {.sbase = c->scratch.len, .wbase = c->nw};
	size_t from = p->i;
	size_t ampgt = 0; /* 1 + the words before a &> after the command's start: dash reads & then > */
	for (;;) {
		if (p->stop)
			break;
		skipblank(p);
		int ch = cur(p);
		if (ch == -1 || ch == '\n' || ch == ';' || ch == '|' || ch == ')' || (ch == '#' && !b.started))
			break;
		if (ch == '&' && nxt(p) != '>')
			break;
		if (ch == '&' && (b.started || b.argc || b.nassign)) {
			if (p->shadow)
				break; /* dash: the command ends at '&'; ">..." starts the next */
			if (!ampgt)
				ampgt = 1 + b.argc + b.nassign;
		}
		if (ch == '#') /* a comment starts a word only */
			break;
		if (ch == '(') {
			if (b.argc == 1 && !b.nredir && !after) { /* name () body */
				size_t save = p->i;
				adv(p);
				skipblank(p);
				if (cur(p) == ')') {
					adv(p);
					c->funcseen = 1;
					popword(c);
					b.argc = 0;
					finish(p, &b, 0);
					return 1;
				}
				p->i = save;
			}
			if (b.nassign && !b.argc && c->nw > b.wbase) {
				/* unreachable: assignments are popped */
			}
			fail(p, "an unexpected (");
			break;
		}
		if (!b.started)
			b.started = 1, b.start = p->i;
		if (ch == '<' || ch == '>' || ch == '&') {
			if ((ch == '<' || ch == '>') && nxt(p) == '(' && !after) { /* <( ) as a word */
				adv(p), adv(p);
				nest(p);
				struct buf *o = &c->scratch;
				size_t off = o->len;
				put(o, SHUNK);
				put(o, 0);
				pushword(c, off, SHW_UNKNOWN);
				b.argc++;
				b.end = p->i;
				continue;
			}
			redir(p, &b);
			b.end = p->i;
			continue;
		}
		int f = word(p, &b, b.argc == 0);
		if (p->stop) {
			popword(c); /* a partial word */
			break;
		}
		const char *w = topword(c);
		int nc = cur(p);
		if (nc == '<' || nc == '>') {
			size_t len = strlen(w);
			int digits = !(f & (WQUOTED | WEXPAND)) && len && strspn(w, "0123456789") == len;
			int named = w[0] == '{' && len > 2 && w[len - 1] == '}' && !(f & (WQUOTED | WEXPAND));
			if (digits || named) {
				if (len > 1 || named) {
					/* bash reads 10> and {fd}> as redirections, dash as a word then >: the
					 * word may or may not be there */
					c->wfl[c->nw - 1] = SHW_SPLIT;
					if (after) {
						fail(p, "a word after a compound command");
						break;
					}
					b.argc++;
				} else {
					popword(c);
				}
				redir(p, &b);
				b.end = p->i;
				continue;
			}
		}
		if (after) {
			fail(p, "a word after a compound command");
			break;
		}
		if (b.argc == 0 && (f & WASSIGN)) {
			const char *eq = strchr(w, '=');
			size_t nl = (size_t)(eq - w);
			if (nl && w[nl - 1] == '+')
				nl--;
			if (f & WEXPAND)
				c->runtimevar = 1;
			if (dangerenv(w, nl) && !b.envdanger[0])
				snprintf(b.envdanger, sizeof b.envdanger, "%.*s=", (int)(nl < 30 ? nl : 30), w);
			int ce = cmdenv(w, nl);
			if (ce == 2)
				bopaque(p, &b, "GIT_CONFIG_PARAMETERS sets git commands only known at run time");
			else if (ce)
				cmdvalue(p, &b, 0, eq + 1);
			w = topword(c); /* the reading may have moved the scratch buffer */
			eq = strchr(w, '=');
			int arr = eq && !eq[1] && cur(p) == '(';
			bufadd(&b.asg, w, strlen(w));
			if (arr)
				bufputc(&b.asg, SHUNK); /* its words: only a '*' of a pattern takes them */
			bufputc(&b.asg, 0);
			b.nasg++;
			popword(c);
			b.nassign++;
			if (arr) { /* NAME=(words): a bash array */
				adv(p);
				for (;;) {
					while (blank(cur(p)) || cur(p) == '\n')
						adv(p);
					int d = cur(p);
					if (d < 0 || p->stop) {
						fail(p, "an unbalanced (");
						break;
					}
					if (d == ')') {
						adv(p);
						break;
					}
					if (d == '#') {
						while (p->i < p->n && p->s[p->i] != '\n')
							p->i++;
						continue;
					}
					if (delim(d)) {
						fail(p, "an unexpected character in an array");
						break;
					}
					int g = word(p, &b, 2);
					if (g & WEXPAND)
						c->runtimevar = 1;
					popword(c);
				}
			}
			b.end = p->i;
			continue;
		}
		b.argc++;
		b.end = p->i;
	}
	size_t to = p->i;
	int dashsplit = ampgt && b.argc + b.nassign + 1 > ampgt; /* a word after it: dash runs it alone */
	finish(p, &b, after);
	if (dashsplit && !p->stop)
		shadow(p, from, to);
	return 0;
}

enum { KWNONE, KWSTART, KWEND, KWOTHER };

/* A reserved word at p->i (only called where a command may start); *end is past it. */
static int keyword(struct sp *p, size_t *end, char kw[12])
{
	/* S starts or continues a compound command, E ends one, O needs reading of its own */
	static const struct {
		const char *name;
		char kind;
	} kws[] = {
		{"!", 'S'}, {"[[", 'O'}, {"case", 'O'}, {"coproc", 'O'}, {"do", 'S'}, {"done", 'E'},
		{"elif", 'S'}, {"else", 'S'}, {"esac", 'O'}, {"fi", 'E'}, {"for", 'O'}, {"function", 'O'},
		{"if", 'S'}, {"select", 'O'}, {"then", 'S'}, {"time", 'O'}, {"until", 'S'}, {"while", 'S'},
		{"{", 'S'}, {"}", 'E'},
	};
	size_t j = p->i;
	int k = 0;
	int first = at(p, j);
	if (first < 0 || !strchr("!{}[cdefistuw", first)) /* the first letters of the words above */
		return KWNONE;
	for (;;) {
		int ch = at(p, j);
		if (delim(ch))
			break;
		if (k == 10 || !(islower(ch) || ch == '{' || ch == '}' || ch == '!' || ch == '['))
			return KWNONE;
		kw[k++] = (char)ch;
		j = sk(p, j) + 1;
	}
	kw[k] = 0;
	*end = j;
	if (!k)
		return KWNONE;
	for (size_t i = 0; i < sizeof kws / sizeof kws[0]; i++)
		if (!strcmp(kws[i].name, kw))
			return kws[i].kind == 'S' ? KWSTART : kws[i].kind == 'E' ? KWEND : KWOTHER;
	return KWNONE;
}

/* The construct s[from..to) read again the way dash reads it (dash has no [[ ]] nor (( ))). */
static void shadow(struct sp *p, size_t from, size_t to)
{
	struct ctx *c = p->c;
	if (c->shadowing || p->depth + 1 > MAXDEPTH)
		return;
	struct sp q = {.s = p->s, .n = to, .i = from, .org = p->org, .sub = p->sub, .c = c, .depth = p->depth + 1, .shadow = 1};
	const char *opaque = c->opaque;
	c->shadowing = 1;
	list(&q, 0);
	c->shadowing = 0;
	c->opaque = opaque;
	for (int k = 0; k < q.nhd; k++)
		free(q.hd[k].delim);
}

/* [[ ... ]] with p->i at "[[": reported as a command named [[ with its words. */
static void cond(struct sp *p)
{
	struct ctx *c = p->c;
	size_t from = p->i;
	struct builder b = {.sbase = c->scratch.len, .wbase = c->nw, .started = 1, .start = p->i};
	for (;;) {
		if (p->stop)
			break;
		while (blank(cur(p)) || cur(p) == '\n')
			adv(p);
		int ch = cur(p);
		if (ch < 0) {
			fail(p, "[[ without ]]");
			break;
		}
		if (ch == ']' && nxt(p) == ']' && b.argc && delim(at(p, sk(p, sk(p, p->i) + 1) + 1))) {
			adv(p), adv(p);
			struct buf *o = &c->scratch;
			size_t off = o->len;
			bufadd(o, "]]", 2);
			put(o, 0);
			pushword(c, off, 0);
			b.argc++;
			break;
		}
		if ((ch == '&' && nxt(p) == '&') || (ch == '|' && nxt(p) == '|')) {
			adv(p), adv(p);
			continue;
		}
		if (delim(ch)) { /* ( ) ! < > | & ; inside [[ ]] are its operators or a regex's */
			struct buf *o = &c->scratch;
			size_t off = o->len;
			put(o, (char)ch);
			put(o, 0);
			pushword(c, off, 0);
			adv(p);
			b.argc++;
			continue;
		}
		word(p, &b, 0);
		const char *w = topword(c);
		if (!strcmp(w, "-eq") || !strcmp(w, "-ne") || !strcmp(w, "-lt") || !strcmp(w, "-le") || !strcmp(w, "-gt") ||
		    !strcmp(w, "-ge") || !strcmp(w, "-v"))
			c->arith = 1;
		b.argc++;
	}
	b.end = p->i;
	size_t to = p->i;
	finish(p, &b, 0);
	if (!p->stop)
		shadow(p, from, to);
}

/* for NAME [in WORDS]; and for (( ; ; )) up to the ';' or newline before "do". */
static void forloop(struct sp *p)
{
	struct ctx *c = p->c;
	skipblank(p);
	if (cur(p) == '(' && nxt(p) == '(') {
		adv(p), adv(p);
		if (arith(p, NULL, ')') < 0)
			fail(p, "for (( without ))");
		return;
	}
	struct builder b = {.sbase = c->scratch.len, .wbase = c->nw};
	word(p, &b, 0);
	if (!p->stop && strstr(topword(c), "PS4"))
		c->ps4 = 1; /* for PS4 in '$(a)' */
	if (!p->stop)
		popword(c);
	while (blank(cur(p)) || cur(p) == '\n')
		adv(p);
	size_t end;
	char kw[12];
	if (keyword(p, &end, kw) != KWNONE || strncmp(p->s + p->i, "in", 2) || !delim(at(p, p->i + 2))) {
		finish(p, &b, 1);
		return;
	}
	p->i += 2;
	for (;;) {
		skipblank(p);
		int ch = cur(p);
		if (ch < 0 || ch == ';' || ch == '\n' || p->stop)
			break;
		if (delim(ch)) {
			fail(p, "an unexpected character in a for list");
			break;
		}
		if (word(p, &b, 0) & WEXPAND)
			c->runtimevar = 1;
		popword(c);
	}
	finish(p, &b, 1);
}

/* case WORD in PATTERN) LIST ;; ... esac, with p->i past "case". */
static void caseof(struct sp *p)
{
	struct ctx *c = p->c;
	struct builder b = {.sbase = c->scratch.len, .wbase = c->nw};
	skipblank(p);
	word(p, &b, 0);
	if (p->stop)
		return;
	popword(c);
	while (blank(cur(p)) || cur(p) == '\n')
		adv(p);
	if (strncmp(p->s + p->i, "in", 2) || !delim(at(p, p->i + 2))) {
		fail(p, "case without in");
		return;
	}
	p->i += 2;
	for (;;) {
		for (;;) {
			while (blank(cur(p)) || cur(p) == '\n')
				adv(p);
			if (cur(p) != '#')
				break;
			while (p->i < p->n && p->s[p->i] != '\n')
				p->i++;
		}
		if (p->stop)
			return;
		if (!strncmp(p->s + p->i, "esac", 4) && delim(at(p, p->i + 4))) {
			p->i += 4;
			break;
		}
		if (cur(p) == '(')
			adv(p);
		for (;;) {
			skipblank(p);
			int ch = cur(p);
			if (ch == ')') {
				adv(p);
				break;
			}
			if (ch == '|') {
				adv(p);
				continue;
			}
			if (ch < 0 || delim(ch) || p->stop) {
				fail(p, "a case pattern without )");
				return;
			}
			word(p, &b, 0);
			popword(c);
		}
		int incase = p->incase;
		p->incase = 1;
		list(p, 'c');
		p->incase = incase;
		if (p->stop)
			return;
		if (p->caseend) {
			p->caseend = 0;
			p->i += 4;
			break;
		}
	}
	finish(p, &b, 1);
}

/* One element of a pipeline: reserved words, a compound command, or a simple command.
 * Returns 1 when an "esac" ends the case item being read. */
static int command(struct sp *p)
{
	int after = 0;
	for (;;) {
		if (p->stop)
			return 0;
		skipblank(p);
		int c = cur(p);
		if (c == -1 || c == '\n' || c == ';' || c == '|' || c == ')' || c == '#' || (c == '&' && nxt(p) != '>'))
			return 0;
		if (c == '(') {
			if (after) {
				fail(p, "an unexpected ( after a compound command");
				return 0;
			}
			size_t from = p->i;
			if (nxt(p) == '(' && !p->shadow) {
				adv(p), adv(p);
				if (arith(p, NULL, ')') == 0) { /* bash's (( )); dash reads two subshells */
					shadow(p, from, p->i);
					after = 1;
					continue;
				}
				p->i = from;
			}
			adv(p);
			nest(p);
			after = 1;
			continue;
		}
		size_t end;
		char kw[12] = ""; /* keyword() fills it only when it finds one */
		int k = after ? KWNONE : keyword(p, &end, kw);
		if (k == KWOTHER && p->shadow && strcmp(kw, "case") && strcmp(kw, "for") && strcmp(kw, "esac"))
			k = KWNONE; /* dash has no [[, function, select, coproc or time */
		if (after && (k = keyword(p, &end, kw)) != KWEND && strcmp(kw, "esac"))
			k = KWNONE;
		if (k == KWSTART || k == KWEND) {
			p->i = end;
			if (!strcmp(kw, "do"))
				p->c->loop++;
			else if (!strcmp(kw, "done") && p->c->loop)
				p->c->loop--;
			after = k == KWEND;
			continue;
		}
		if (k == KWOTHER) {
			if (!strcmp(kw, "esac")) {
				if (p->incase) {
					p->caseend = 1;
					return 1;
				}
				fail(p, "esac outside case");
				return 0;
			}
			if (!strcmp(kw, "[[")) {
				cond(p);
				after = 1;
				continue;
			}
			p->i = end;
			if (!strcmp(kw, "case")) {
				caseof(p);
				after = 1;
				continue;
			}
			if (!strcmp(kw, "for") || !strcmp(kw, "select")) {
				forloop(p);
				return 0;
			}
			if (!strcmp(kw, "time")) {
				skipblank(p);
				if (cur(p) == '-' && nxt(p) == 'p' && delim(at(p, sk(p, p->i) + 2)))
					adv(p), adv(p), skipblank(p);
				if (cur(p) == '-' && nxt(p) == '-' && delim(at(p, sk(p, p->i) + 2)))
					adv(p), adv(p); /* time -- cmd runs cmd */
				continue;
			}
			if (!strcmp(kw, "coproc")) {
				skipblank(p); /* coproc NAME { ...; } names the coprocess; coproc CMD runs CMD */
				size_t save = p->i;
				struct builder b = {.sbase = p->c->scratch.len, .wbase = p->c->nw};
				word(p, &b, 0);
				popword(p->c);
				skipblank(p);
				if (!(cur(p) == '{' || cur(p) == '('))
					p->i = save;
				continue;
			}
			if (!strcmp(kw, "function")) {
				skipblank(p);
				struct builder b = {.sbase = p->c->scratch.len, .wbase = p->c->nw};
				word(p, &b, 0);
				if (p->stop)
					return 0;
				popword(p->c);
				skipblank(p);
				if (cur(p) == '(' && at(p, sk(p, p->i) + 1) == ')')
					adv(p), adv(p);
				p->c->funcseen = 1;
				while (blank(cur(p)) || cur(p) == '\n')
					adv(p);
				continue;
			}
		}
		if (simple(p, after)) {
			while (blank(cur(p)) || cur(p) == '\n')
				adv(p);
			continue; /* a function's body */
		}
		return 0;
	}
}

/* Read the bodies of the pending here-documents, which start after a newline; in a body whose
 * delimiter is not quoted, $( ) and ` ` run. */
static void heredocs(struct sp *p)
{
	for (int k = 0; k < p->nhd && !p->stop; k++) {
		struct heredoc *h = &p->hd[k];
		size_t dl = strlen(h->delim), start = p->i;
		for (;;) {
			if (p->i >= p->n) {
				fail(p, "a here-document without its end line");
				break;
			}
			size_t e = p->i, ls = p->i;
			while (e < p->n && p->s[e] != '\n')
				e++;
			if (h->strip)
				while (ls < e && p->s[ls] == '\t')
					ls++;
			int last = e - ls == dl && memcmp(p->s + ls, h->delim, dl) == 0;
			if (last && !h->quoted) {
				/* the body's expansions: read as inside double quotes */
				struct sp q = {.s = p->s, .n = ls, .i = start, .org = p->org, .sub = p->sub, .c = p->c,
				               .depth = p->depth + 1, .shadow = p->shadow};
				struct buf *o = &p->c->scratch;
				size_t mark = o->len;
				while (q.i < q.n && !q.stop) {
					char ch = q.s[q.i];
					if (ch == '\\' && q.i + 1 < q.n)
						q.i += 2;
					else if (ch == '$')
						dollar(&q, NULL, 1);
					else if (ch == '`')
						backquote(&q, 1);
					else
						q.i++;
				}
				o->len = mark;
				for (int j = 0; j < q.nhd; j++)
					free(q.hd[j].delim);
				if (q.stop)
					p->stop = 1;
			}
			p->i = e < p->n ? e + 1 : e;
			if (last)
				break;
		}
	}
	for (int k = 0; k < p->nhd; k++)
		free(p->hd[k].delim);
	p->nhd = 0;
}

/* Commands separated by ; & && || | and newlines, up to the end, the closing ')' or, in a case
 * item (closer 'c'), ";;", ";&", ";;&" or "esac". */
static void list(struct sp *p, int closer)
{
	for (;;) {
		if (p->stop)
			return;
		skipblank(p);
		int c = cur(p);
		if (c == -1) {
			if (closer == ')')
				fail(p, "an unbalanced (");
			else if (closer == 'c')
				fail(p, "case without esac");
			else if (p->nhd)
				fail(p, "a here-document without its body");
			return;
		}
		if (c == '#') {
			while (p->i < p->n && p->s[p->i] != '\n')
				p->i++;
			continue;
		}
		if (c == '\n') {
			p->i++;
			if (p->nhd)
				heredocs(p);
			continue;
		}
		if (c == ';') {
			if (nxt(p) == ';' || nxt(p) == '&') {
				if (closer != 'c') {
					fail(p, ";; outside case");
					return;
				}
				adv(p), adv(p);
				if (cur(p) == '&')
					adv(p);
				return;
			}
			adv(p);
			continue;
		}
		if (c == '&' || c == '|') {
			if (c == '&' && nxt(p) == '>') {
				command(p); /* bash's &> as a redirection of an empty command (dash: & then >) */
				continue;
			}
			adv(p);
			int d = cur(p);
			if (d == c || (c == '|' && d == '&'))
				adv(p);
			continue;
		}
		if (c == ')') {
			if (closer != ')') {
				fail(p, "an unbalanced )");
				return;
			}
			adv(p);
			return;
		}
		if (command(p) && closer == 'c')
			return;
	}
}

/* Relative redirections, judged against every directory the line may be in. */
static void relatives(struct ctx *c)
{
	struct shsplit *o = c->out;
	for (int r = 0; r < c->nrel; r++) {
		const char *why = NULL;
		if (c->cwdlost || c->rellost)
			why = "a relative redirection in a line that changes directory to a place only known at run time";
		for (int k = 0; !why && k < c->ncwd; k++) {
			char *a = joinpath(c->cwd[k], c->rel[r].target);
			if (!finepath(a))
				why = "a relative redirection that leads outside /workspace and /tmp";
			else if (wspathof(a) && c->rel[r].cmd < o->ncmds)
				o->cmds[c->rel[r].cmd].wsredir = wswhy;
			free(a);
		}
		if (why && c->rel[r].cmd < o->ncmds && !o->cmds[c->rel[r].cmd].redir)
			o->cmds[c->rel[r].cmd].redir = why;
		free(c->rel[r].target);
	}
	if (c->rellost && !c->ncwd)
		return;
}

int shsplit(const char *s, size_t n, struct shsplit *out)
{
	memset(out, 0, sizeof *out);
	if (n > SHMAXLEN) {
		out->unsafe = "a command line longer than 65536 bytes";
		return -1;
	}
	if (validate(s, n, out) < 0)
		return -1;
	struct ctx c = {.out = out, .via = -1};
	c.cwd[c.ncwd++] = xstrdup("/workspace");
	struct sp p = {.s = s, .n = n, .c = &c};
	list(&p, 0);
	for (int k = 0; k < p.nhd; k++)
		free(p.hd[k].delim);
	relatives(&c);
	for (int k = 0; k < c.ncwd; k++)
		free(c.cwd[k]);
	if (c.arith && c.runtimevar && !c.opaque)
		c.opaque = "arithmetic on a variable whose value is only known at run time (bash runs the $( ) a value holds)";
	if (c.xtrace && c.ps4 && !c.opaque)
		c.opaque = "bash runs the $( ) of PS4 for each command it traces";
	if (c.cmdtable && !c.opaque)
		c.opaque = "it may assign BASH_ALIASES or BASH_CMDS, which make a name run something else";
	if (c.subtext && (c.arith || c.names) && !c.opaque)
		c.opaque = "bash evaluates a subscript in a text that holds $( ) or backquotes, and runs them";
	if (c.opaque) {
		static char *none[] = {NULL};
		size_t k = emit(&c, none, NULL, 0, xstrdup(""));
		out->cmds[k].opaque = c.opaque;
	}
	buffree(&c.scratch);
	free(c.woff);
	free(c.wfl);
	if (out->unsafe)
		return -1;
	for (size_t k = 0; k < out->ncmds; k++)
		if (out->cmds[k].opaque)
			return -1;
	return 0;
}

void shsplitfree(struct shsplit *sp)
{
	for (size_t k = 0; k < sp->ncmds; k++) {
		free(sp->cmds[k].argv);
		free(sp->cmds[k].text);
		free(sp->cmds[k].envkey);
		free(sp->cmds[k].assign);
	}
	free(sp->cmds);
	memset(sp, 0, sizeof *sp);
}
