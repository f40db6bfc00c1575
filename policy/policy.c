/* policy: a worker's approval rules applied to one tool call. Every rule that matches counts and
 * the strictest decision wins (abort > deny > allow); the default decides when none does. A
 * shell line is judged command by command, and the line gets the strictest of their decisions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/glob.h"
#include "../util/path.h"
#include "../manifest/preset.h"
#include "danger.h"
#include "policy.h"
#include "shellsplit.h"
#include "../util/util.h"

enum kind { KSHELL, KFILE, KDELEGATE, KMCP, KOTHER };

static enum kind toolkind(const char *tool)
{
	static const char *const files[] = {"read_file", "write_file", "list_dir", "edit_file", NULL};
	if (!strcmp(tool, "shell"))
		return KSHELL;
	for (const char *const *f = files; *f; f++)
		if (!strcmp(tool, *f))
			return KFILE;
	if (!strcmp(tool, "final_result"))
		return KOTHER;
	if (!strncmp(tool, "mcp__", 5))
		return KMCP;
	return KDELEGATE;
}

/* One thing the rules look at: a whole call, or one simple command of a shell line. */
struct subject {
	const char *tool;
	size_t toollen;
	enum kind kind;
	char *const *words; /* shell: the command's words; NULL when there is no command */
	size_t nwords;
	const char *path; /* file tools: the normalised path; NULL when absent or outside */
	const cJSON *args; /* the call's arguments (an object), for rules with args */
	int provable;     /* 0: no allow rule and no allow default applies */
};

/* A scalar argument as the text a pattern sees: strings with their path segments resolved
 * lexically ("a/./b/../c" is "a/c"), numbers and booleans as JSON. NULL when it is not a scalar,
 * holds a control character, or climbs above its start with "..". */
static char *argtext(const cJSON *v)
{
	if (cJSON_IsNumber(v) || cJSON_IsBool(v))
		return cJSON_PrintUnformatted(v);
	if (!cJSON_IsString(v) || !v->valuestring)
		return NULL;
	const char *p = v->valuestring;
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return NULL;
	if (!strchr(p, '/') && strcmp(p, "..") != 0 && strcmp(p, ".") != 0)
		return xstrdup(p);
	return pathclean(p);
}

/* One argument against one pattern. An array must match in every element for an allow rule and
 * in any element for a deny or abort rule; a value that cannot be read plainly (see argtext)
 * never matches an allow rule and always matches a stricter one. */
static int argmatches(const char *pat, const cJSON *v, enum decision d)
{
	if (cJSON_IsArray(v)) {
		int any = 0, all = cJSON_GetArraySize(v) > 0;
		const cJSON *it;
		cJSON_ArrayForEach(it, v)
		{
			int m = argmatches(pat, it, d);
			any |= m;
			all &= m;
		}
		return d == DEC_ALLOW ? all : any;
	}
	char *t = argtext(v);
	if (!t)
		return d != DEC_ALLOW && v != NULL;
	int m = globmatch(pat, strlen(pat), t, strlen(t));
	free(t);
	return m;
}

/* The parts of a rule that are the same for every command of a call: tool, worker, path. */
static int callmatches(const struct rule *r, const struct subject *s)
{
	if (r->tool && !globmatch(r->tool, strlen(r->tool), s->tool, s->toollen))
		return 0;
	if (r->worker && (s->kind != KDELEGATE || !globmatch(r->worker, strlen(r->worker), s->tool, s->toollen)))
		return 0;
	if (r->command && s->kind != KSHELL)
		return 0;
	if (r->path && (!s->path || !globpath(r->path, s->path)))
		return 0;
	if (r->argkeys.n && s->kind != KMCP)
		return 0; /* shell lines and paths have their own, stricter matching */
	for (size_t k = 0; k < r->argkeys.n; k++)
		if (!s->args || !argmatches(r->argglobs.v[k], cJSON_GetObjectItemCaseSensitive(s->args, r->argkeys.v[k]),
		                            r->decision))
			return 0;
	return 1;
}

/* The strictest decision of the rules matching s; *rule is the first rule giving it, or -1 when
 * the default decided. */
static enum decision judge(const struct approval *a, const struct subject *s, int *rule)
{
	int best = -1;
	*rule = -1;
	for (size_t k = 0; k < a->nrules && best != DEC_ABORT; k++) {
		const struct rule *r = &a->rules[k];
		if ((int)r->decision <= best || (r->decision == DEC_ALLOW && !s->provable))
			continue;
		if (!callmatches(r, s))
			continue;
		if (r->command && (!s->words || !globcmd(r->command, s->words, s->nwords)))
			continue;
		best = (int)r->decision, *rule = (int)k;
	}
	if (best >= 0)
		return (enum decision)best;
	if (a->def == DEC_ALLOW && !s->provable)
		return DEC_DENY;
	return a->def;
}

/* s as a short one-line quoted string: newlines and tabs escaped, bytes that are not UTF-8 and
 * hidden characters (controls, bidi marks) as '?', cut at a character boundary. */
static void clip(char *dst, size_t cap, const char *s)
{
	size_t o = 0, n = strlen(s), max = cap < 80 ? cap - 6 : 74;
	dst[o++] = '"';
	for (size_t i = 0; i < n;) {
		uint32_t c;
		int len = u8dec(s + i, n - i, &c);
		size_t need = len < 0 ? 1 : c == '\n' || c == '\t' || c == '"' || c == '\\' ? 2 : (size_t)len;
		if (o + need > max) {
			memcpy(dst + o, "...", 3);
			o += 3;
			break;
		}
		if (len < 0 || shhidden(c) || c == '\n' || c == '\t') {
			if (c == '\n' || c == '\t')
				dst[o++] = '\\', dst[o++] = c == '\n' ? 'n' : 't';
			else
				dst[o++] = '?';
			i += len < 0 ? 1 : (size_t)len;
			continue;
		}
		if (c == '"' || c == '\\')
			dst[o++] = '\\';
		memcpy(dst + o, s + i, (size_t)len);
		o += (size_t)len, i += (size_t)len;
	}
	dst[o++] = '"';
	dst[o] = 0;
}

int rulenum(const struct approval *a, int k)
{
	return a->rules[k].num > 0 ? a->rules[k].num : k + 1;
}

void ruletag(const struct approval *a, int k, char *dst, size_t cap)
{
	if (a->rules[k].admin)
		snprintf(dst, cap, "admin %d", a->rules[k].admin);
	else
		snprintf(dst, cap, "%d", rulenum(a, k));
}

const char *ruletold(const char *tag)
{
	static __thread char out[48];
	if (strncmp(tag, "admin ", 6) == 0)
		snprintf(out, sizeof out, "admin rule %.30s", tag + 6);
	else
		snprintf(out, sizeof out, "rule %.30s", tag);
	return out;
}

static void rulename(char *dst, size_t cap, const struct approval *a, int k)
{
	int n = rulenum(a, k);
	if (a->rules[k].admin) /* the admin policy's: named by its own number and file */
		snprintf(dst, cap, "admin rule %d (%s:%d)", a->rules[k].admin,
		         a->rules[k].pos.file ? a->rules[k].pos.file : "admin policy", a->rules[k].pos.line);
	else if (a->rules[k].preset && a->rules[k].pos.line > 0)
		snprintf(dst, cap, "rule %d (line %d, preset %s)", n, a->rules[k].pos.line, a->rules[k].preset);
	else if (a->rules[k].preset)
		snprintf(dst, cap, "rule %d (preset %s)", n, a->rules[k].preset);
	else if (a->rules[k].pos.line > 0)
		snprintf(dst, cap, "rule %d (line %d)", n, a->rules[k].pos.line);
	else
		snprintf(dst, cap, "rule %d", n);
}

static const char *verb(enum decision d)
{
	return d == DEC_ALLOW ? "allows" : d == DEC_DENY ? "denies" : "aborts on";
}

/* The reason when the default decided subject text (what describes it, quoted already). */
static void defreason(struct verdict *v, const struct approval *a, const char *worker, const char *what,
                      const char *unsafe)
{
	char whose[96] = "";
	if (worker)
		snprintf(whose, sizeof whose, " of worker %s", worker);
	if (unsafe && a->def == DEC_ALLOW)
		snprintf(v->reason, sizeof v->reason, "%s cannot be judged (%s); the allow default does not apply",
		         what, unsafe);
	else if (unsafe)
		snprintf(v->reason, sizeof v->reason, "%s is only known at run time (%s), so no rule with a command pattern allows it; default %s",
		         what, unsafe, decisionname(a->def));
	else
		snprintf(v->reason, sizeof v->reason, "%s matches none of the rules%s; default %s", what, whose,
		         decisionname(a->def));
}

/* How a rule stands to one simple command. */
enum fit { FNO, FYES, FCOULD };

/* Length of the name of an assignment word NAME=... or NAME+=... (unquoted name), or 0. */
static size_t asgname(const char *w)
{
	size_t n = 0;
	if (!((w[0] >= 'A' && w[0] <= 'Z') || (w[0] >= 'a' && w[0] <= 'z') || w[0] == '_'))
		return 0;
	while ((w[n] >= 'A' && w[n] <= 'Z') || (w[n] >= 'a' && w[n] <= 'z') || (w[n] >= '0' && w[n] <= '9') || w[n] == '_')
		n++;
	return w[n] == '=' || (w[n] == '+' && w[n + 1] == '=') ? n : 0;
}

/* p past its leading blanks (a loop: strspn costs more on a pattern's few). */
static const char *pastblanks(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return p;
}

/* Where a command pattern's leading assignments start ("A=1 prog *", or "env A=1 prog *",
 * which means the same), or -1 when it does not begin with one. */
static long patasg(const char *pat)
{
	const char *p = pastblanks(pat);
	if (p[0] == 'e' && p[1] == 'n' && p[2] == 'v' && (p[3] == ' ' || p[3] == '\t')) {
		const char *q = p + 3 + strspn(p + 3, " \t\n");
		if (asgname(q))
			return q - pat;
	}
	return asgname(p) ? p - pat : -1;
}

/* The words a pattern led by assignments is matched against: the command's assignments, those
 * of the env command that runs it (env A=1 prog: prog is run with A=1), then its words, env's
 * own name left out when it is env itself. */
struct subjwords {
	char **w;
	unsigned char *f;
	size_t n, nasg; /* nasg: the leading assignments among them */
	int lineww;     /* a redirection of the line writes a file in the workspace */
};

static int isenv(const char *w)
{
	const char *sl = strrchr(w, '/');
	return !strcmp(sl ? sl + 1 : w, "env");
}

static void subjadd(struct subjwords *sw, char *w, unsigned char f)
{
	sw->w[sw->n] = w;
	sw->f[sw->n++] = f;
}

static void subjasg(struct subjwords *sw, char *const *v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		subjadd(sw, v[k], strchr(v[k], SHUNK) ? SHW_UNKNOWN : 0), sw->nasg++;
}

/* env's assignments (of an env without options) and those before env: what it runs gets them. */
static void subjenv(struct subjwords *sw, const struct shcmd *env, size_t *from)
{
	subjasg(sw, env->assign, env->nassign);
	size_t k = 1;
	for (; k < env->argc && !(env->wf[k] & SHW_UNKNOWN) && asgname(env->argv[k]); k++)
		subjadd(sw, env->argv[k], env->wf[k]), sw->nasg++;
	*from = k;
}

/* Fill sw for cmd (via: the command that runs it, or NULL); free sw->w after. */
static void subjwords(struct subjwords *sw, const struct shcmd *cmd, const struct shcmd *via)
{
	size_t cap = cmd->nassign + cmd->argc + (via ? via->nassign + via->argc : 0) + 1;
	sw->w = xmalloc(cap * (sizeof *sw->w + 1));
	sw->f = (unsigned char *)(sw->w + cap);
	sw->n = sw->nasg = 0;
	size_t from = 0;
	if (via && via->argc && isenv(via->argv[0]) && !via->opaque) {
		size_t k;
		subjenv(sw, via, &k);
	}
	if (cmd->argc > 1 && isenv(cmd->argv[0]) && asgname(cmd->argv[1]))
		subjenv(sw, cmd, &from);
	else
		subjasg(sw, cmd->assign, cmd->nassign);
	for (size_t k = from; k < cmd->argc; k++)
		subjadd(sw, cmd->argv[k], cmd->wf[k]);
}

/* A rule's command pattern against a command: as its words alone, or, for a pattern led by
 * assignments, with the assignments it runs with in front (they must match literally, word for
 * word: "PYTHONPATH=src python3 *" allows exactly that prefix). */
static int cmdmatch(const struct rule *r, long at, const struct shcmd *cmd, const struct subjwords *sw, int could)
{
	if (at < 0)
		return globcmdx(r->command, cmd->argv, cmd->wf, cmd->argc, could);
	return sw && sw->nasg && globcmdx(r->command + at, sw->w, sw->f, sw->n, could);
}

/* For a pattern led by assignments (from at) that matched: a dangerous variable the command runs
 * with that the pattern does not assign itself (an assignment a '*' swallowed), or NULL. */
static const char *asgmiss(const char *pat, long at, const struct subjwords *sw)
{
	for (size_t k = 0; k < sw->nasg; k++) {
		size_t nl = asgname(sw->w[k]);
		if (!nl || !dangerenv(sw->w[k], nl))
			continue;
		int named = 0;
		for (const char *p = pat + at; !named && asgname(p);) {
			named = asgname(p) == nl && !strncmp(p, sw->w[k], nl);
			p += strcspn(p, " \t\n");
			p += strspn(p, " \t\n");
		}
		if (!named)
			return "a variable that changes what programs run is assigned before it";
	}
	return NULL;
}

/* A rule as one call sees it, worked out once a call rather than once a command: whether it
 * applies to the call (callmatches), and where its command pattern's leading assignments start
 * (patasg; -1: none, or no pattern). */
struct live {
	int on;
	long asg;
	const char *prog; /* the pattern's first word, when it is plain text and no assignment leads it
	                   * (a command whose known program is another never matches), or NULL */
	size_t progn;     /* its length */
};

/* The live rule k's view: callmatches, patasg and the plain first word of its pattern. */
static void liveset(struct live *l, const struct rule *r, const struct subject *s)
{
	l->on = callmatches(r, s);
	l->asg = l->on && r->command ? patasg(r->command) : -1;
	l->prog = NULL;
	if (!l->on || !r->command || l->asg >= 0)
		return;
	const char *p = pastblanks(r->command);
	static const unsigned char stop[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, [0] = 1, ['*'] = 2, ['?'] = 2,
	                                        ['['] = 2, [']'] = 2, ['\\'] = 2, ['\''] = 2, ['"'] = 2};
	size_t n = 0;
	while (!stop[(unsigned char)p[n]])
		n++;
	if (n && stop[(unsigned char)p[n]] == 1) /* no glob, quote or escape in it */
		l->prog = p, l->progn = n;
}

/* Whether rule k (l) cannot decide cmd, whose program (with a known name, and base after its last
 * '/' or NULL) is another than its pattern's plain first word: what fitcmd would find, sooner. */
static int otherprog(const struct live *l, const struct rule *r, const char *prog, const char *base)
{
	if (!l->prog || !prog)
		return 0;
	if (prog[0] == l->prog[0] && strncmp(prog, l->prog, l->progn) == 0 && !prog[l->progn])
		return 0;
	return r->decision == DEC_ALLOW || !base || base[0] != l->prog[0] || strncmp(base, l->prog, l->progn) != 0 ||
	       base[l->progn];
}

/* Does rule r (whose tool matches; its assignments from at) decide cmd? FCOULD: a deny or abort
 * rule that the command's run-time parts could be hiding. *miss says why an allow rule whose
 * pattern matched does not. */
static enum fit fitcmd(const struct rule *r, long at, const struct shcmd *cmd, const struct subjwords *sw,
                       const char **miss)
{
	if (!r->command)
		return FYES; /* a shell rule without command: every line, opaque parts included */
	if (cmd->opaque)
		return r->decision == DEC_ALLOW ? FNO : FCOULD;
	if (!cmd->argc)
		return FNO;
	if (r->decision == DEC_ALLOW) {
		if (!cmdmatch(r, at, cmd, sw, 0))
			return FNO;
		if (globcmdwild(r->command))
			return FYES; /* "*", "g* *": any program, so any option and any redirection */
		if (cmd->redir) {
			*miss = cmd->redir;
			return FNO;
		}
		if (r->preset && !presetwrites(r->preset) && (cmd->wsredir || (sw && sw->lineww))) {
			/* a reading preset writes nothing: "cat a > b", nor "{ cat a; } > b" */
			*miss = "a redirection writes a file in the workspace (the read-only presets allow only /dev/null "
			        "and /tmp)";
			return FNO;
		}
		int led = at >= 0;
		const char *am = led ? asgmiss(r->command, at, sw) : NULL;
		if (am) {
			*miss = am;
			return FNO;
		}
		/* a variable the pattern's assignments name is named: env's is checked above */
		int envdanger = cmd->dangerkey && cmd->dangerkey[0] != '-' && asgname(cmd->dangerkey);
		if (cmd->danger && !(led && envdanger) && !globnames(r->command, cmd->dangerkey, cmd->dangerword)) {
			*miss = cmd->danger;
			return FNO;
		}
		return FYES;
	}
	if (cmdmatch(r, at, cmd, sw, 0))
		return FYES;
	/* a word known only at run time, or one that may be any number of words (an unquoted glob,
	 * bash's 10> or {fd}> read by dash as a word): the could pass reads both */
	int unknown = 0;
	for (size_t k = 0; k < cmd->argc; k++)
		unknown |= cmd->wf[k] & (SHW_UNKNOWN | SHW_SPLIT);
	for (size_t k = 0; sw && k < sw->nasg; k++)
		unknown |= sw->f[k] & (SHW_UNKNOWN | SHW_SPLIT);
	if (unknown && cmdmatch(r, at, cmd, sw, 1))
		return FCOULD;
	const char *slash = strrchr(cmd->argv[0], '/');
	if (slash && slash[1]) { /* /usr/bin/curl, ./curl: the program is curl for a deny rule */
		char **w = cmd->argv;
		char *a0 = w[0];
		w[0] = (char *)slash + 1;
		enum fit f = cmdmatch(r, at, cmd, sw, 0) ? FYES : unknown && cmdmatch(r, at, cmd, sw, 1) ? FCOULD : FNO;
		w[0] = a0;
		return f;
	}
	return FNO;
}

/* The decision for one command: the strictest rule; *rule is -1 when the default decided;
 * *could when a deny came from a rule that could be hiding there; *near an allow rule whose
 * pattern matched but that did not apply (with *miss why), or -1. */
static enum decision judgecmd(const struct approval *a, const struct live *live, const struct shcmd *cmd,
                              const struct subjwords *sw, int *rule, int *could, int *near, const char **miss)
{
	int best = -1;
	*rule = -1, *could = 0, *near = -1, *miss = NULL;
	/* the program, when its name is known and it is surely a word (a deny rule also meets it by
	 * its last name) */
	const char *prog = cmd->argc && !cmd->opaque && !(cmd->wf[0] & (SHW_UNKNOWN | SHW_SPLIT)) &&
	                           !strchr(cmd->argv[0], SHUNK)
	                       ? cmd->argv[0] : NULL;
	const char *base = prog ? strrchr(prog, '/') : NULL;
	base = base && base[1] ? base + 1 : NULL;
	for (size_t k = 0; k < a->nrules && best != DEC_ABORT; k++) {
		const struct rule *r = &a->rules[k];
		if (!live[k].on || (int)r->decision < best || ((int)r->decision == best && !*could))
			continue;
		if (otherprog(&live[k], r, prog, base))
			continue;
		const char *m = NULL;
		enum fit f = fitcmd(r, live[k].asg, cmd, sw, &m);
		if (f == FNO) {
			if (m && *near < 0)
				*near = (int)k, *miss = m;
			continue;
		}
		enum decision d = f == FCOULD ? DEC_DENY : r->decision;
		if ((int)d > best || ((int)d == best && *could && f == FYES))
			best = (int)d, *rule = (int)k, *could = f == FCOULD;
	}
	if (best >= 0)
		return (enum decision)best;
	return a->def;
}

/* w is a whole word of pattern pat, written plainly (no glob, quote or escape): the user spelled
 * it out. */
static int patword(const char *pat, const char *w)
{
	size_t n = strlen(w);
	if (!n || strpbrk(w, "*?[]\\'\" \t\n"))
		return 0;
	for (const char *q = pat; (q = strstr(q, w)); q++)
		if ((q == pat || q[-1] == ' ' || q[-1] == '\t') && (!q[n] || q[n] == ' ' || q[n] == '\t'))
			return 1;
	return 0;
}

/* The command line a held value runs: the value without the leading '|' or '!' (LESSOPEN, alias). */
static const char *heldline(const char *w)
{
	const char *v = strchr(w, '=') + 1;
	while (*v == '|' || *v == '!')
		v++;
	return v;
}

/* Command j was allowed by a rule whose pattern spells out, word for word, an assignment before
 * it (GIT_PAGER=cat) or a -c setting of git's (core.pager=cat) whose value the split read as a
 * command of its own: that command, which no rule decided (the default did), is the rule's too.
 * The user wrote it in the rule ("GIT_PAGER=cat git *"); a value the pattern does not spell
 * ("PAGER=* git *", "git -c *") is judged alone, as is a command the value does not make. Held
 * commands come just before j (its assignments') or name j as the one that runs them (git -c). */
static void heldallowed(const struct approval *a, const struct shsplit *sp, struct cmdverdict *pc, size_t j)
{
	const struct shcmd *cmd = &sp->cmds[j];
	int r = pc[j].rule;
	if (pc[j].skipped || pc[j].decision != DEC_ALLOW || r < 0 || !a->rules[r].command || !cmd->argc)
		return;
	const char *pat = a->rules[r].command;
	int git = !strcmp(cmd->argv[0], "git");
	size_t nw = cmd->nassign + (git ? cmd->argc : 0);
	if (!nw)
		return;
	unsigned char used[64] = {0};
	if (nw > sizeof used)
		return;
	/* the word i of what j holds: its assignments, then (git) each -c setting's word */
	for (size_t k = j; k-- > 0;) { /* its assignments' commands: the run just before it */
		const struct shcmd *h = &sp->cmds[k];
		size_t i = 0;
		for (; i < cmd->nassign; i++)
			if (!used[i] && shheld(cmd->assign[i], 0) && patword(pat, cmd->assign[i]) &&
			    !strcmp(heldline(cmd->assign[i]), h->text))
				break;
		if (i == cmd->nassign || h->via != cmd->via || pc[k].skipped || pc[k].rule >= 0 || h->opaque)
			break;
		used[i] = 1;
		pc[k].decision = DEC_ALLOW, pc[k].rule = r;
	}
	for (size_t k = j + 1; git && k < sp->ncmds; k++) { /* git -c KEY=VALUE: run by j */
		const struct shcmd *h = &sp->cmds[k];
		if (h->via != (int)j || pc[k].skipped || pc[k].rule >= 0 || h->opaque)
			continue;
		for (size_t i = 1; i + 1 < cmd->argc; i++) {
			const char *w = !strcmp(cmd->argv[i], "-c") ? cmd->argv[i + 1] : NULL;
			if (w && !used[cmd->nassign + i] && !(cmd->wf[i + 1] & SHW_UNKNOWN) && shheld(w, 1) &&
			    patword(pat, w) && !strcmp(heldline(w), h->text)) {
				used[cmd->nassign + i] = 1;
				pc[k].decision = DEC_ALLOW, pc[k].rule = r;
				break;
			}
		}
	}
}

static void decideshell(const struct approval *a, const char *worker, struct subject *s, const cJSON *args,
                        struct verdict *v)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(args, "command");
	char what[96], rn[48];
	if (!cJSON_IsString(c) || !c->valuestring) {
		s->provable = 0;
		v->decision = judge(a, s, &v->rule);
		if (v->rule >= 0) {
			rulename(rn, sizeof rn, a, v->rule);
			snprintf(v->reason, sizeof v->reason, "%s %s a shell call without a command", rn, verb(v->decision));
		} else {
			defreason(v, a, worker, "a shell call without a string command", "no command");
		}
		return;
	}
	struct shsplit sp;
	shsplit(c->valuestring, strlen(c->valuestring), &sp);
	if (sp.unsafe) { /* not read whole: the line is one opaque command */
		shsplitfree(&sp);
		memset(&sp, 0, sizeof sp);
		sp.cmds = xcalloc(1, sizeof *sp.cmds);
		sp.cmds[0].argv = xcalloc(1, sizeof *sp.cmds[0].argv);
		sp.cmds[0].text = xstrdup(c->valuestring);
		sp.ncmds = sp.cap = 1;
		struct shsplit tmp;
		shsplit(c->valuestring, strlen(c->valuestring), &tmp);
		snprintf(sp.why, sizeof sp.why, "the line cannot be read whole: %s", tmp.unsafe);
		shsplitfree(&tmp);
		sp.cmds[0].opaque = sp.why;
		sp.cmds[0].via = -1;
	}
	int worst = -1, wrule = -1, wcould = 0, wnear = -1, rules[8], nrules = 0, judged = 0;
	const char *wmiss = NULL;
	size_t wcmd = 0;
	struct live sbuf[64], *live = a->nrules <= 64 ? sbuf : xmalloc(a->nrules * sizeof *live);
	for (size_t k = 0; k < a->nrules; k++)
		liveset(&live[k], &a->rules[k], s);
	v->percmd = xcalloc(sp.ncmds ? sp.ncmds : 1, sizeof *v->percmd);
	int lineww = 0; /* a redirection of no command ("> b", "{ cat a; } > b") writes the workspace */
	for (size_t k = 0; k < sp.ncmds; k++)
		lineww |= !sp.cmds[k].argc && sp.cmds[k].wsredir != NULL;
	struct judged {
		int could, near;
		const char *miss;
	} *jd = xcalloc(sp.ncmds ? sp.ncmds : 1, sizeof *jd);
	for (size_t k = 0; k < sp.ncmds; k++) {
		struct shcmd *cmd = &sp.cmds[k];
		strvadd(&v->commands, cmd->text);
		v->percmd[k].rule = -1;
		v->percmd[k].decision = DEC_ALLOW;
		v->percmd[k].skipped = !cmd->argc && !cmd->opaque && !cmd->redir;
		if (v->percmd[k].skipped)
			continue; /* assignments, redirections into the workspace: nothing runs */
		int r;
		struct subjwords sw;
		subjwords(&sw, cmd, cmd->via >= 0 && (size_t)cmd->via < sp.ncmds ? &sp.cmds[cmd->via] : NULL);
		sw.lineww = lineww;
		v->percmd[k].decision = judgecmd(a, live, cmd, &sw, &r, &jd[k].could, &jd[k].near, &jd[k].miss);
		v->percmd[k].rule = r;
		free(sw.w);
	}
	for (size_t k = 0; k < sp.ncmds; k++)
		heldallowed(a, &sp, v->percmd, k);
	for (size_t k = 0; k < sp.ncmds; k++) {
		if (v->percmd[k].skipped)
			continue;
		judged++;
		enum decision d = v->percmd[k].decision;
		int r = v->percmd[k].rule, could = jd[k].could, near = jd[k].near;
		const char *miss = jd[k].miss;
		if ((int)d > worst || ((int)d == worst && r < 0 && wrule < 0 && near >= 0 && wnear < 0))
			worst = (int)d, wrule = r, wcmd = k, wcould = could, wnear = near, wmiss = miss;
		if (d == DEC_ALLOW && r >= 0 && nrules < 8) {
			int seen = 0;
			for (int j = 0; j < nrules; j++)
				seen |= rulenum(a, rules[j]) == rulenum(a, r);
			if (!seen)
				rules[nrules++] = r;
		}
	}
	free(jd);
	if (!judged) { /* nothing runs: rules without a command pattern, else the default decide */
		static char *none[] = {NULL};
		struct shcmd empty = {.argv = none, .via = -1};
		int r, could, near;
		const char *miss;
		v->decision = judgecmd(a, live, &empty, NULL, &r, &could, &near, &miss);
		v->rule = r;
		clip(what, sizeof what, c->valuestring);
		if (r >= 0) {
			rulename(rn, sizeof rn, a, r);
			snprintf(v->reason, sizeof v->reason, "%s %s %s (it runs no command)", rn, verb(v->decision), what);
		} else {
			defreason(v, a, worker, what, NULL);
		}
		if (live != sbuf)
			free(live);
		shsplitfree(&sp);
		return;
	}
	if (live != sbuf)
		free(live);
	v->decision = (enum decision)worst;
	v->rule = wrule;
	struct shcmd *cmd = &sp.cmds[wcmd];
	clip(what, sizeof what, cmd->text[0] ? cmd->text : c->valuestring);
	if (wrule < 0 && wnear >= 0 && v->decision != DEC_ALLOW) {
		char whose[96] = "";
		rulename(rn, sizeof rn, a, wnear);
		if (worker)
			snprintf(whose, sizeof whose, " of worker %s", worker);
		int named = strncmp(wmiss, "a redirection", 13) != 0 && strncmp(wmiss, "too many", 8) != 0;
		snprintf(v->reason, sizeof v->reason, "%s would allow %s, but %s%s; default %s", rn, what, wmiss,
		         named ? ", which its pattern does not name" : "", decisionname(a->def));
	} else if (wrule < 0) {
		defreason(v, a, worker, what, a->def == DEC_ALLOW ? NULL : cmd->opaque ? cmd->opaque : cmd->redir);
	} else if (wcould) {
		rulename(rn, sizeof rn, a, wrule);
		snprintf(v->reason, sizeof v->reason, "%s (%s) could be hiding in %s: %s", rn, verb(a->rules[wrule].decision),
		         what, cmd->opaque ? cmd->opaque : "some of its words are only known when it runs");
	} else if (v->decision == DEC_ALLOW && judged > 1) {
		char list[64] = "";
		for (int j = 0, o = 0; j < nrules && o < (int)sizeof list - 8; j++)
			o += snprintf(list + o, sizeof list - (size_t)o, "%s%d", j ? ", " : "", rulenum(a, rules[j]));
		snprintf(v->reason, sizeof v->reason, "all %d commands are allowed (by rule%s %s)", judged,
		         nrules > 1 ? "s" : "", list);
	} else {
		rulename(rn, sizeof rn, a, wrule);
		snprintf(v->reason, sizeof v->reason, "%s %s %s", rn, verb(v->decision), what);
	}
	shsplitfree(&sp);
}

/* When the default decided MCP call s although a rule names its tool with args: say which argument
 * kept that rule from matching (the first such rule), as "rule N names TOOL but its args do not
 * match: KEY ...; default D". 0 when no rule names the tool with args. */
static int argsmissed(struct verdict *v, const struct approval *a, const struct subject *s, const char *what)
{
	for (size_t k = 0; s->kind == KMCP && k < a->nrules; k++) {
		const struct rule *r = &a->rules[k];
		if (!r->argkeys.n || !r->tool || !globmatch(r->tool, strlen(r->tool), s->tool, s->toollen))
			continue;
		for (size_t i = 0; i < r->argkeys.n; i++) {
			const cJSON *val = s->args ? cJSON_GetObjectItemCaseSensitive(s->args, r->argkeys.v[i]) : NULL;
			if (val && argmatches(r->argglobs.v[i], val, r->decision))
				continue;
			char rn[48], got[96] = "";
			rulename(rn, sizeof rn, a, (int)k);
			if (cJSON_IsString(val))
				clip(got, sizeof got, val->valuestring);
			snprintf(v->reason, sizeof v->reason, "%s names %.80s but its args do not match: %.40s %s%s%.60s; "
			         "default %s", rn, what, r->argkeys.v[i], !val ? "is missing" : *got ? got : "is not a string",
			         val ? " is not " : "", val ? r->argglobs.v[i] : "", decisionname(a->def));
			return 1;
		}
	}
	return 0;
}

void policydecide(const struct approval *a, const char *worker, const char *tool, const cJSON *args,
                  struct verdict *v)
{
	memset(v, 0, sizeof *v);
	v->decision = DEC_DENY;
	v->rule = -1;
	if (!a || !tool || !*tool) {
		snprintf(v->reason, sizeof v->reason, "a call without rules or without a tool name is denied");
		return;
	}
	struct subject s = {.tool = tool, .toollen = strlen(tool), .kind = toolkind(tool), .provable = 1};
	const cJSON *obj = cJSON_IsObject(args) ? args : NULL;
	s.args = obj;
	char what[160], rn[48];
	if (s.kind == KSHELL) {
		static const cJSON empty = {.type = cJSON_Object};
		decideshell(a, worker, &s, obj ? obj : &empty, v);
		return;
	}
	const char *unsafe = NULL;
	if (s.kind == KFILE) {
		const cJSON *p = obj ? cJSON_GetObjectItemCaseSensitive(obj, "path") : NULL;
		char q[96];
		if (!cJSON_IsString(p) || !p->valuestring) {
			unsafe = "no path argument";
			snprintf(what, sizeof what, "%s without a path", tool);
		} else {
			clip(q, sizeof q, p->valuestring);
			snprintf(what, sizeof what, "%s %s", tool, q);
			if (!(v->path = wspath(p->valuestring)))
				unsafe = "the path is outside /workspace, climbs out with .., or is empty or not UTF-8";
		}
		s.path = v->path;
	} else {
		if (!obj)
			unsafe = "its arguments are not an object";
		snprintf(what, sizeof what, s.kind == KDELEGATE ? "delegating to %.100s" : "%.100s", tool);
	}
	s.provable = !unsafe;
	v->decision = judge(a, &s, &v->rule);
	if (v->rule < 0 && s.kind == KFILE && unsafe) {
		snprintf(v->reason, sizeof v->reason, "%.60s cannot be judged (%.100s), so no rule with a path pattern %s it; "
		         "default %s", what, unsafe, a->def == DEC_ALLOW ? "or the allow default" : "allows",
		         decisionname(a->def == DEC_ALLOW ? DEC_DENY : a->def));
	} else if (v->rule < 0 && !argsmissed(v, a, &s, what)) {
		defreason(v, a, worker, what, unsafe);
	} else if (v->rule >= 0) {
		rulename(rn, sizeof rn, a, v->rule);
		snprintf(v->reason, sizeof v->reason, "%s %s %s", rn, verb(v->decision), what);
	}
}

void verdictfree(struct verdict *v)
{
	strvfree(&v->commands);
	free(v->percmd);
	v->percmd = NULL;
	free(v->path);
	v->path = NULL;
}


int policycheck(const struct approval *a, struct err *e)
{
	for (size_t k = 0; k < a->nrules; k++) {
		const struct rule *r = &a->rules[k];
		struct err ge;
		const char *why = NULL;
		long at = r->command ? patasg(r->command) : -1;
		const char *prog = at >= 0 ? r->command + at : NULL;
		while (prog && asgname(prog)) {
			prog += strcspn(prog, " \t\n");
			prog += strspn(prog, " \t\n");
		}
		if (r->command && globcmdcheck(r->command, &ge) < 0) {
			why = ge.msg;
		} else if (prog && !*prog) {
			why = "a command pattern of assignments alone never matches: name the program after them";
		} else if (r->command && r->tool && !globmatch(r->tool, strlen(r->tool), "shell", 5)) {
			why = "a command pattern only applies to the shell tool, and this rule's tool is not shell";
		} else if (r->argkeys.n && (!r->tool || strncmp(r->tool, "mcp__", 5) != 0)) {
			why = "args patterns apply to MCP tools only: give the rule a tool pattern starting with mcp__";
		} else if (r->argkeys.n && (r->command || r->path)) {
			why = "a rule with args cannot also have command or path";
		} else if (r->command && r->path) {
			why = "a rule with both command and path can never match (shell calls have no path)";
		} else if (r->path && r->path[0] == '/' && strncmp(r->path, "/workspace", 10) != 0) {
			why = "a path pattern outside /workspace can never match";
		} else if (r->path && (strstr(r->path, "../") || !strcmp(r->path, "..") ||
		                       (strlen(r->path) >= 3 && !strcmp(r->path + strlen(r->path) - 3, "/.."))))
			why = "a path pattern with .. can never match: paths are matched after .. is resolved";
		if (why)
			return errc(e, ERR_INPUT, "%s:%d:%d: rule %d: %.600s", r->pos.file ? r->pos.file : "manifest",
			            r->pos.line, r->pos.col, rulenum(a, (int)k), why);
	}
	return 0;
}
