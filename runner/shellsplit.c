/* shellsplit: a recursive-descent reader of POSIX sh that keeps what the policy needs: the simple
 * commands and their words. It reads the way dash and bash both read, and where they could
 * disagree, or where a word's value is only known at run time, it flags instead of guessing. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/glob.h"
#include "policy.h"
#include "shellsplit.h"

#define MAXDEPTH 32   /* ( ), $( ), <( ) and backquotes inside each other */
#define MAXHEREDOC 16 /* pending here-documents on one line */

/* Shared by a line and the sub-lines of its backquotes. */
struct ctx {
	struct shsplit *out;
	struct buf scratch; /* words being read, NUL-terminated, used as a stack */
	size_t *woff;       /* where each of them starts */
	size_t nw, wcap;
	int hascd;   /* a cd, pushd or popd was seen */
	int comprel; /* a compound command redirects to a relative path */
};

struct heredoc {
	char *delim;
	int quoted, strip;
};

struct sp {
	const char *s;
	size_t n, i;
	size_t org; /* backquote sub-line: where it sits in the whole line */
	int sub;
	struct ctx *c;
	int depth;
	int stop; /* a fatal problem: stop reading */
	struct heredoc hd[MAXHEREDOC];
	int nhd;
};

/* A simple command being read. */
struct builder {
	size_t start, end; /* its span */
	int started;
	size_t sbase, wbase; /* scratch and word-stack marks */
	size_t argc, nassign, nredir;
	int flags0; /* word flags of argv[0] */
	const char *unsafe;
	int relredir;
};

/* What a word held, unquoted. */
enum { WQUOTED = 1, WGLOB = 2, WTILDE = 4, WBRACE = 8, WASSIGN = 16, WEXPAND = 32 };

static void list(struct sp *p, int closer);

static void taint(struct sp *p, const char *why)
{
	struct shsplit *o = p->c->out;
	if (!o->unsafe) {
		o->unsafe = why;
		o->unsafeat = p->sub ? p->org : p->i;
	}
}

static void fail(struct sp *p, const char *why)
{
	taint(p, why);
	p->stop = 1;
}

static void bunsafe(struct builder *b, const char *why)
{
	if (!b->unsafe)
		b->unsafe = why;
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

/* Characters that look like blanks, quotes or shell operators; refused outside quotes. */
static int lookalike(uint32_t c)
{
	return c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x202f || c == 0x205f ||
	       c == 0x3000 || c == 0xb4 || c == 0x1c0 || c == 0x1c3 || c == 0x2b9 || c == 0x2ba || c == 0x2bc ||
	       c == 0x2c8 || c == 0x2cb || c == 0x37e || c == 0x589 || (c >= 0x2018 && c <= 0x201f) ||
	       (c >= 0x2032 && c <= 0x2037) || c == 0x2039 || c == 0x203a || c == 0x2044 || c == 0x2215 ||
	       c == 0x2223 || c == 0x2236 || c == 0x2329 || c == 0x232a || c == 0x23d0 || c == 0x27e8 ||
	       c == 0x27e9 || c == 0x29f8 || c == 0xa789 || (c >= 0xfe50 && c <= 0xfe6b) ||
	       (c >= 0xff01 && c <= 0xff0f) || (c >= 0xff1a && c <= 0xff20) || (c >= 0xff3b && c <= 0xff40) ||
	       (c >= 0xff5b && c <= 0xff65);
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

static void pushword(struct ctx *c, size_t off)
{
	if (c->nw == c->wcap) {
		c->wcap = c->wcap ? 2 * c->wcap : 32;
		c->woff = xrealloc(c->woff, c->wcap * sizeof *c->woff);
	}
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
	list(p, ')');
	p->depth--;
}

/* `...` at p->i: its commands are read as a line of their own after the backslashes that
 * quote inside backquotes are removed. */
static void backquote(struct sp *p, struct builder *b, int indq)
{
	struct buf in = {0};
	size_t j = p->i + 1;
	bunsafe(b, "command substitution ` `");
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
	if (p->depth + 1 > MAXDEPTH) {
		fail(p, "nested too deeply");
		buffree(&in);
		return;
	}
	struct sp q = {.s = in.data ? in.data : "", .n = in.len, .org = org, .sub = 1, .c = p->c, .depth = p->depth + 1};
	list(&q, 0);
	for (int k = 0; k < q.nhd; k++)
		free(q.hd[k].delim);
	if (q.stop)
		p->stop = 1;
	buffree(&in);
}

/* A '$' at p->i, unquoted or inside double quotes. Only a '$' that the shell keeps as a plain
 * character is copied; every expansion flags the command, a few stop the reading. */
static void dollar(struct sp *p, struct builder *b, int indq)
{
	struct buf *o = &p->c->scratch;
	int d = at(p, p->i + 1);
	if (d == '(') {
		size_t j = sk(p, p->i + 1) + 1;
		if (at(p, j) == '(') {
			fail(p, "arithmetic expansion $(( ))");
			return;
		}
		bunsafe(b, "command substitution $( )");
		p->i = j;
		nest(p);
		return;
	}
	if (d == '{') {
		fail(p, "parameter expansion ${ }");
		return;
	}
	if (d == '[') {
		fail(p, "arithmetic expansion $[ ]");
		return;
	}
	if (!indq && (d == '\'' || d == '"')) {
		fail(p, "$'...' or $\"...\" quoting (bash)");
		return;
	}
	if (d > 0 && d < 0x80 && (isalnum(d) || d == '_' || strchr("@*#?-$!", d))) {
		bunsafe(b, "parameter expansion $NAME");
		adv(p);
		if (isalpha(d) || d == '_') {
			int ch;
			while ((ch = cur(p)) > 0 && ch < 0x80 && (isalnum(ch) || ch == '_'))
				p->i++;
		} else {
			adv(p);
		}
		return;
	}
	if (!(delim(d) || (indq && d == '"') || (d > 0 && d < 0x80 && strchr("/.:,=+%^", d))))
		bunsafe(b, "a $ that is not plainly a literal character");
	put(o, '$');
	adv(p);
}

/* "..." at p->i. */
static void dquote(struct sp *p, struct builder *b)
{
	struct buf *o = &p->c->scratch;
	p->i++;
	for (;;) {
		if (p->stop)
			return;
		if (p->i >= p->n) {
			fail(p, "an unbalanced double quote");
			return;
		}
		char ch = p->s[p->i];
		if (ch == '"') {
			p->i++;
			return;
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
			dollar(p, b, 1);
			continue;
		}
		if (ch == '`') {
			backquote(p, b, 1);
			continue;
		}
		put(o, ch);
		p->i++;
	}
}

/* Characters that only stand for themselves in a word: 1 always, 2 unless a '{' came before
 * ('.' and ',' make brace expansion). */
static const unsigned char plain[128] = {
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1,
	['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1,
	['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1,
	['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1,
	['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['_'] = 1, ['-'] = 1, ['/'] = 1, ['%'] = 1, ['@'] = 1, ['^'] = 1,
	['.'] = 2, [','] = 2,
};

/* One word at p->i, after quote removal, pushed on the word stack. Returns its W* flags. */
static int word(struct sp *p, struct builder *b)
{
	struct ctx *c = p->c;
	struct buf *o = &c->scratch;
	size_t off = o->len;
	int f = 0, name = 1, first = 1, bopen = 0, bsep = 0, bkt = 0, prev = 0;
	for (;; first = 0) {
		if (p->stop)
			break;
		int ch = cur(p);
		if (delim(ch))
			break;
		if (ch < 0x80 && plain[ch]) { /* a run of characters with no meaning to the shell */
			size_t j = p->i;
			unsigned char u;
			while (j < p->n && (u = (unsigned char)p->s[j]) < 0x80 && plain[u] && (plain[u] == 1 || !bopen)) {
				name &= plain[u] == 1 && (isalnum(u) || u == '_');
				j++;
			}
			if (j > p->i) {
				bufadd(o, p->s + p->i, j - p->i);
				prev = (unsigned char)p->s[j - 1];
				p->i = j;
				continue;
			}
		}
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
			dquote(p, b);
			f |= WQUOTED, name = 0;
		} else if (ch == '$') {
			dollar(p, b, 0);
			f |= WEXPAND, name = 0;
		} else if (ch == '`') {
			backquote(p, b, 0);
			f |= WEXPAND, name = 0;
		} else if (ch >= 0x80) {
			uint32_t cp;
			int len = u8dec(p->s + p->i, p->n - p->i, &cp);
			if (len < 1)
				len = 1; /* validated already; never happens */
			if (lookalike(cp))
				bunsafe(b, "a character that looks like a blank, quote or operator, outside quotes");
			bufadd(o, p->s + p->i, (size_t)len);
			p->i += (size_t)len, name = 0;
		} else {
			if ((ch == '=' || (ch == '+' && at(p, p->i + 1) == '=')) && name && o->len > off &&
			    !isdigit((unsigned char)o->data[off]))
				f |= WASSIGN; /* NAME= or bash's NAME+= */
			if (!isalnum(ch) && ch != '_')
				name = 0;
			if (ch == '*' || ch == '?')
				f |= WGLOB;
			else if (ch == '[')
				bkt = 1;
			else if (ch == ']' && bkt)
				f |= WGLOB;
			else if (ch == '~' && (first || prev == '=' || prev == ':'))
				f |= WTILDE; /* bash also expands a~ after = and : in any word */
			else if (ch == '{')
				bopen = 1;
			else if (bopen && (ch == ',' || (ch == '.' && at(p, p->i + 1) == '.')))
				bsep = 1;
			else if (ch == '}' && bsep)
				f |= WBRACE;
			put(o, (char)ch);
			p->i++;
			prev = ch;
			continue;
		}
		prev = 0;
	}
	if (f & WBRACE)
		bunsafe(b, "brace expansion {a,b} (bash)");
	if (f & WTILDE)
		bunsafe(b, "tilde expansion ~ (the shell puts a home directory there)");
	put(o, 0); /* the word's NUL is part of the stack */
	pushword(c, off);
	return f;
}

static int devok(const char *w)
{
	return !strcmp(w, "/dev/null") || !strcmp(w, "/dev/stdin") || !strcmp(w, "/dev/stdout") ||
	       !strcmp(w, "/dev/stderr");
}

/* A redirection operator at p->i and its target. */
static void redir(struct sp *p, struct builder *b)
{
	enum { RFILE, RDUP, RHERE } kind = RFILE;
	int strip = 0, c = cur(p);
	adv(p);
	int d = cur(p);
	if (d == '(') {
		bunsafe(b, "process substitution <( ) or >( )");
		adv(p);
		nest(p);
		return;
	}
	if (c == '<') {
		if (d == '<') {
			adv(p);
			d = cur(p);
			if (d == '<') {
				fail(p, "a here-string <<< (bash)");
				return;
			}
			if (d == '-')
				adv(p), strip = 1;
			kind = RHERE;
		} else if (d == '&') {
			adv(p), kind = RDUP;
		} else if (d == '>') {
			adv(p);
		}
	} else {
		if (d == '>' || d == '|')
			adv(p);
		else if (d == '&')
			adv(p), kind = RDUP;
	}
	skipblank(p);
	if (delim(cur(p))) {
		fail(p, "a redirection without a target");
		return;
	}
	int f = word(p, b);
	if (p->stop) {
		popword(p->c);
		return;
	}
	const char *w = topword(p->c);
	if (kind == RHERE) {
		if (p->nhd == MAXHEREDOC) {
			fail(p, "too many here-documents on one line");
			return;
		}
		p->hd[p->nhd++] = (struct heredoc){xstrdup(w), f & WQUOTED, strip};
	} else if (kind == RDUP) {
		if ((f & (WQUOTED | WEXPAND)) || strlen(w) != 1 || !(isdigit((unsigned char)w[0]) || w[0] == '-'))
			bunsafe(b, "a >& or <& redirection to something other than a file descriptor");
	} else if (f & (WGLOB | WTILDE | WBRACE)) {
		bunsafe(b, "a redirection to a pattern (*, ?, [ ], ~)");
	} else if (!devok(w)) {
		char *ws = wspath(w);
		if (!ws)
			bunsafe(b, "a redirection to a path outside /workspace");
		free(ws);
		if (w[0] != '/')
			b->relredir = 1;
	}
	popword(p->c);
	b->nredir++;
}

/* Command names the policy treats specially, sorted for bsearch: s a shell, r runs its arguments
 * or a string as a command, v changes later commands or evaluates a variable name, d changes
 * directory, f find (-exec), p printf/test (-v). */
static const struct name {
	const char *name;
	char kind;
} names[] = {
	{".", 'r'}, {"[", 'p'}, {"alias", 'v'}, {"ash", 's'}, {"bash", 's'}, {"builtin", 'r'}, {"busybox", 's'},
	{"cd", 'd'}, {"chroot", 'r'}, {"chrt", 'r'}, {"command", 'r'}, {"csh", 's'}, {"dash", 's'},
	{"declare", 'v'}, {"doas", 'r'}, {"enable", 'v'}, {"env", 'r'}, {"eval", 'r'}, {"exec", 'r'},
	{"export", 'v'}, {"fc", 'r'}, {"find", 'f'}, {"fish", 's'}, {"flock", 'r'}, {"getopts", 'v'}, {"hash", 'v'},
	{"ionice", 'r'}, {"ksh", 's'}, {"let", 'r'}, {"local", 'v'}, {"ltrace", 'r'}, {"mapfile", 'v'},
	{"mksh", 's'}, {"nice", 'r'}, {"nohup", 'r'}, {"nsenter", 'r'}, {"parallel", 'r'}, {"pdksh", 's'},
	{"popd", 'd'}, {"posh", 's'}, {"printf", 'p'}, {"pushd", 'd'}, {"rbash", 's'}, {"read", 'v'},
	{"readarray", 'v'}, {"readonly", 'v'}, {"runuser", 'r'}, {"script", 'r'}, {"setsid", 'r'}, {"sh", 's'},
	{"shopt", 'v'}, {"source", 'r'}, {"stdbuf", 'r'}, {"strace", 'r'}, {"su", 'r'}, {"sudo", 'r'},
	{"taskset", 'r'}, {"tcsh", 's'}, {"test", 'p'}, {"time", 'r'}, {"timeout", 'r'}, {"toybox", 's'},
	{"trap", 'r'}, {"typeset", 'v'}, {"unalias", 'v'}, {"unset", 'v'}, {"unshare", 'r'}, {"watch", 'r'},
	{"xargs", 'r'}, {"yash", 's'}, {"zsh", 's'},
};

static int namecmp(const void *a, const void *b)
{
	return strcmp(((const struct name *)a)->name, ((const struct name *)b)->name);
}

static char namekind(const char *w, const struct name *tab, size_t n)
{
	struct name key = {w, 0};
	const struct name *hit = bsearch(&key, tab, n, sizeof *tab, namecmp);
	return hit ? hit->kind : 0;
}

/* What the command name itself makes unprovable. */
static const char *namecheck(struct ctx *c, const struct shcmd *cmd, int f0)
{
	if (!cmd->argc)
		return NULL;
	const char *a0 = cmd->argv[0], *base = strrchr(a0, '/');
	base = base ? base + 1 : a0;
	if (f0 & (WGLOB | WTILDE | WBRACE))
		return "the command name is a pattern or expands (*, ?, [ ], ~)";
	if (f0 & WEXPAND)
		return "the command name is computed";
	if (!*a0)
		return "an empty command name";
	switch (namekind(base, names, sizeof names / sizeof names[0])) {
	case 's':
		return "it runs a shell, which reads commands the policy cannot see";
	case 'r':
		return "it runs a string or its arguments as a command (eval, exec, source, ., env, xargs, ...)";
	case 'v':
		return "it changes how later commands run or evaluates a variable name (export, alias, hash, read, ...)";
	case 'd':
		c->hascd = 1;
		break;
	case 'f':
		for (size_t k = 1; k < cmd->argc; k++)
			if (!strcmp(cmd->argv[k], "-exec") || !strcmp(cmd->argv[k], "-execdir") || !strcmp(cmd->argv[k], "-ok") ||
			    !strcmp(cmd->argv[k], "-okdir"))
				return "find -exec runs commands";
		break;
	case 'p':
		for (size_t k = 1; k < cmd->argc; k++)
			if (!strncmp(cmd->argv[k], "-v", 2))
				return "-v evaluates a variable name, and with it $( ) (bash)";
		break;
	}
	return NULL;
}

/* The command is read: copy it out, or, after a compound command, only check it. */
static void finish(struct sp *p, struct builder *b, int after)
{
	struct ctx *c = p->c;
	struct shsplit *o = c->out;
	if (after) {
		if (b->unsafe)
			taint(p, b->unsafe);
		if (b->relredir)
			c->comprel = 1;
	} else if (b->argc || b->nassign || b->nredir || b->unsafe) {
		struct shcmd cmd = {0};
		if (b->end < b->start) /* stopped inside its first token */
			b->end = p->i < p->n ? p->i : p->n;
		size_t nbytes = c->scratch.len - b->sbase, argc = c->nw - b->wbase;
		cmd.argv = xmalloc((argc + 1) * sizeof *cmd.argv + nbytes + 1);
		char *blob = (char *)(cmd.argv + argc + 1);
		if (nbytes)
			memcpy(blob, c->scratch.data + b->sbase, nbytes);
		blob[nbytes] = 0;
		for (size_t k = 0; k < argc; k++)
			cmd.argv[k] = blob + (c->woff[b->wbase + k] - b->sbase);
		cmd.argv[argc] = NULL;
		cmd.argc = argc;
		cmd.text = b->started ? xstrndup(p->s + b->start, b->end - b->start) : xstrdup("");
		cmd.unsafe = b->unsafe ? b->unsafe : namecheck(c, &cmd, b->flags0);
		cmd.relredir = b->relredir;
		if (o->ncmds == o->cap) {
			o->cap = o->cap ? 2 * o->cap : 8;
			o->cmds = xrealloc(o->cmds, o->cap * sizeof *o->cmds);
		}
		o->cmds[o->ncmds++] = cmd;
	}
	c->scratch.len = b->sbase;
	if (c->scratch.data)
		c->scratch.data[b->sbase] = 0;
	c->nw = b->wbase;
}

/* A simple command; after a compound command only its redirections may follow. */
static void simple(struct sp *p, int after)
{
	struct ctx *c = p->c;
	struct builder b = {.sbase = c->scratch.len, .wbase = c->nw};
	for (;;) {
		if (p->stop)
			break;
		skipblank(p);
		int ch = cur(p);
		if (ch == -1 || ch == '\n' || ch == ';' || ch == '&' || ch == '|' || ch == ')' || ch == '#')
			break;
		if (ch == '(') {
			fail(p, "an unexpected ( (function definitions and arrays are not read)");
			break;
		}
		if (!b.started)
			b.started = 1, b.start = p->i;
		if (ch == '<' || ch == '>') {
			redir(p, &b);
			b.end = p->i;
			continue;
		}
		int f = word(p, &b);
		if (p->stop) {
			popword(c); /* a partial word */
			break;
		}
		const char *w = topword(c);
		int nc = cur(p);
		if (nc == '<' || nc == '>') {
			size_t len = strlen(w);
			if (!(f & (WQUOTED | WEXPAND)) && len && strspn(w, "0123456789") == len) {
				if (len > 1)
					bunsafe(&b, "a file descriptor above 9 (shells read it differently)");
				popword(c);
				redir(p, &b);
				b.end = p->i;
				continue;
			}
			if (w[0] == '{' && len > 1 && w[len - 1] == '}')
				bunsafe(&b, "a named file descriptor {var}> (bash)");
		}
		if (after) {
			fail(p, "a word after a compound command");
			break;
		}
		if (b.argc == 0 && (f & WASSIGN)) {
			popword(c);
			b.nassign++;
			bunsafe(&b, "a variable assignment (VAR=value) before or instead of a command");
			b.end = p->i;
			continue;
		}
		if (b.argc == 0)
			b.flags0 = f;
		b.argc++;
		b.end = p->i;
	}
	finish(p, &b, after);
}

enum { KWNONE, KWSTART, KWEND, KWBAD };

/* A reserved word at p->i (only called where a command may start); *end is past it. */
static int keyword(struct sp *p, size_t *end, char kw[12])
{
	/* S starts or continues a compound command, E ends one, B is not read; sorted for bsearch */
	static const struct name kws[] = {
		{"!", 'S'},      {"[[", 'B'}, {"case", 'B'}, {"coproc", 'B'}, {"do", 'S'},     {"done", 'E'},
		{"elif", 'S'},   {"else", 'S'}, {"esac", 'B'}, {"fi", 'E'},   {"for", 'B'},    {"function", 'B'},
		{"if", 'S'},     {"select", 'B'}, {"then", 'S'}, {"time", 'B'}, {"until", 'S'}, {"while", 'S'},
		{"{", 'S'},      {"}", 'E'},
	};
	size_t j = p->i;
	int k = 0;
	if (!strchr("!{}[cdefistuw", at(p, j))) /* the first letters of the words above */
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
	switch (namekind(kw, kws, sizeof kws / sizeof kws[0])) {
	case 'S':
		return KWSTART;
	case 'E':
		return KWEND;
	case 'B':
		return KWBAD;
	}
	return KWNONE;
}

/* One element of a pipeline: reserved words, a ( subshell ), or a simple command. */
static void command(struct sp *p)
{
	int after = 0;
	for (;;) {
		if (p->stop)
			return;
		skipblank(p);
		int c = cur(p);
		if (c == -1 || c == '\n' || c == ';' || c == '&' || c == '|' || c == ')' || c == '#')
			return;
		if (c == '(') {
			if (after) {
				fail(p, "an unexpected ( after a compound command");
				return;
			}
			if (nxt(p) == '(') {
				fail(p, "an arithmetic command (( )) (bash)");
				return;
			}
			adv(p);
			nest(p);
			after = 1;
			continue;
		}
		size_t end;
		char kw[12];
		int k = keyword(p, &end, kw);
		if (k == KWSTART || k == KWEND) {
			p->i = end;
			after = k == KWEND;
			continue;
		}
		if (k == KWBAD) {
			struct shsplit *o = p->c->out;
			snprintf(o->why, sizeof o->why, "the shell keyword `%s` (case, for, select, function, [[, coproc, time are not read)", kw);
			fail(p, o->why);
			return;
		}
		simple(p, after);
		return;
	}
}

/* Read the bodies of the pending here-documents, which start after a newline. */
static void heredocs(struct sp *p)
{
	for (int k = 0; k < p->nhd && !p->stop; k++) {
		struct heredoc *h = &p->hd[k];
		size_t dl = strlen(h->delim);
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
			if (!last && !h->quoted) {
				if (memchr(p->s + p->i, '$', e - p->i) || memchr(p->s + p->i, '`', e - p->i))
					taint(p, "$ or ` in a here-document whose delimiter is not quoted (write <<'EOF')");
				if (e > p->i && p->s[e - 1] == '\\')
					taint(p, "a line continuation in a here-document whose delimiter is not quoted");
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

/* Commands separated by ; & && || | and newlines, up to the end or the closing ')'. */
static void list(struct sp *p, int closer)
{
	int hd0 = p->nhd;
	for (;;) {
		if (p->stop)
			return;
		skipblank(p);
		int c = cur(p);
		if (c == -1) {
			if (closer)
				fail(p, "an unbalanced (");
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
			if (hd0) {
				fail(p, "a here-document whose body would start inside ( ) or $( )");
				return;
			}
			if (p->nhd)
				heredocs(p);
			continue;
		}
		if (c == ';') {
			if (nxt(p) == ';') {
				fail(p, ";; outside case");
				return;
			}
			adv(p);
			continue;
		}
		if (c == '&' || c == '|') {
			adv(p);
			int d = cur(p);
			if (d == c) {
				adv(p);
			} else if (c == '&' && d == '>') {
				fail(p, "&> (bash reads it as a redirection, sh as & then >)");
				return;
			} else if (c == '|' && d == '&') {
				fail(p, "|& (bash)");
				return;
			}
			continue;
		}
		if (c == ')') {
			if (!closer) {
				fail(p, "an unbalanced )");
				return;
			}
			if (p->nhd > hd0) {
				fail(p, "a here-document without its body");
				return;
			}
			adv(p);
			return;
		}
		command(p);
	}
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
	struct ctx c = {.out = out};
	struct sp p = {.s = s, .n = n, .c = &c};
	list(&p, 0);
	for (int k = 0; k < p.nhd; k++)
		free(p.hd[k].delim);
	if (c.hascd) {
		int rel = c.comprel;
		for (size_t k = 0; k < out->ncmds; k++)
			rel |= out->cmds[k].relredir;
		if (rel && !out->unsafe)
			out->unsafe = "a redirection to a relative path in a line that changes directory";
	}
	buffree(&c.scratch);
	free(c.woff);
	if (out->unsafe)
		return -1;
	for (size_t k = 0; k < out->ncmds; k++)
		if (out->cmds[k].unsafe)
			return -1;
	return 0;
}

void shsplitfree(struct shsplit *sp)
{
	for (size_t k = 0; k < sp->ncmds; k++) {
		free(sp->cmds[k].argv);
		free(sp->cmds[k].text);
	}
	free(sp->cmds);
	memset(sp, 0, sizeof *sp);
}
