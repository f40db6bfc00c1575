/* policy: a worker's approval rules applied to one tool call. Every rule that matches counts and
 * the strictest decision wins (abort > deny > allow); the default decides when none does. A
 * shell line is judged command by command, and the line gets the strictest of their decisions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/glob.h"
#include "policy.h"
#include "shellsplit.h"

enum kind { KSHELL, KFILE, KDELEGATE, KOTHER };

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
	int provable;     /* 0: no allow rule and no allow default applies */
};

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
	return 1;
}

/* The strictest decision of the rules matching s; *rule is the first rule giving it, or -1 when
 * the default decided. live, when given, holds callmatches() of each rule for this call. */
static enum decision judge(const struct approval *a, const struct subject *s, const unsigned char *live, int *rule)
{
	int best = -1;
	*rule = -1;
	for (size_t k = 0; k < a->nrules && best != DEC_ABORT; k++) {
		const struct rule *r = &a->rules[k];
		if ((int)r->decision <= best || (r->decision == DEC_ALLOW && !s->provable))
			continue;
		if (live ? !live[k] : !callmatches(r, s))
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

static void rulename(char *dst, size_t cap, const struct approval *a, int k)
{
	if (a->rules[k].pos.line > 0)
		snprintf(dst, cap, "rule %d (line %d)", k + 1, a->rules[k].pos.line);
	else
		snprintf(dst, cap, "rule %d", k + 1);
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
		snprintf(v->reason, sizeof v->reason, "%s cannot be proven harmless (%s); the allow default does not apply",
		         what, unsafe);
	else if (unsafe)
		snprintf(v->reason, sizeof v->reason, "%s cannot be proven harmless (%s), so no allow rule applies; default %s",
		         what, unsafe, decisionname(a->def));
	else
		snprintf(v->reason, sizeof v->reason, "%s matches none of the rules%s; default %s", what, whose,
		         decisionname(a->def));
}

static void decideshell(const struct approval *a, const char *worker, struct subject *s, const cJSON *args,
                        struct verdict *v)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(args, "command");
	char what[96], rn[48];
	if (!cJSON_IsString(c) || !c->valuestring) {
		s->provable = 0;
		v->decision = judge(a, s, NULL, &v->rule);
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
	for (size_t k = 0; k < sp.ncmds; k++)
		strvadd(&v->commands, sp.cmds[k].text);
	if (!sp.ncmds) {
		s->provable = 0;
		v->decision = judge(a, s, NULL, &v->rule);
		const char *why = sp.unsafe ? sp.unsafe : "no command in it";
		clip(what, sizeof what, c->valuestring);
		if (v->rule >= 0) {
			rulename(rn, sizeof rn, a, v->rule);
			snprintf(v->reason, sizeof v->reason, "%s %s %s (%s)", rn, verb(v->decision), what, why);
		} else {
			defreason(v, a, worker, what, why);
		}
		shsplitfree(&sp);
		return;
	}
	int worst = -1, wrule = -1, rules[8], nrules = 0;
	size_t wcmd = 0;
	unsigned char sbuf[256], *live = a->nrules <= sizeof sbuf ? sbuf : xmalloc(a->nrules);
	for (size_t k = 0; k < a->nrules; k++)
		live[k] = (unsigned char)callmatches(&a->rules[k], s);
	for (size_t k = 0; k < sp.ncmds; k++) {
		struct shcmd *cmd = &sp.cmds[k];
		s->words = cmd->argv, s->nwords = cmd->argc;
		s->provable = !sp.unsafe && !cmd->unsafe;
		int r;
		enum decision d = judge(a, s, live, &r);
		/* the strictest decides; among equals decided by default, one that cannot be proven
		 * harmless explains more ("git log $(cat x)" rather than the "cat x" inside it) */
		if ((int)d > worst || ((int)d == worst && r < 0 && wrule < 0 && !s->provable && !sp.cmds[wcmd].unsafe))
			worst = (int)d, wrule = r, wcmd = k;
		if (d == DEC_ALLOW && r >= 0 && nrules < 8) {
			int seen = 0;
			for (int j = 0; j < nrules; j++)
				seen |= rules[j] == r;
			if (!seen)
				rules[nrules++] = r;
		}
	}
	if (live != sbuf)
		free(live);
	v->decision = (enum decision)worst;
	v->rule = wrule;
	struct shcmd *cmd = &sp.cmds[wcmd];
	/* the line as a whole failed: show the line, not the piece read before the failure */
	clip(what, sizeof what, sp.unsafe && wrule < 0 ? c->valuestring : cmd->text);
	if (wrule < 0) {
		defreason(v, a, worker, what, sp.unsafe ? sp.unsafe : cmd->unsafe);
	} else if (v->decision == DEC_ALLOW && sp.ncmds > 1) {
		char list[64] = "";
		for (int j = 0, o = 0; j < nrules && o < (int)sizeof list - 8; j++)
			o += snprintf(list + o, sizeof list - (size_t)o, "%s%d", j ? ", " : "", rules[j] + 1);
		snprintf(v->reason, sizeof v->reason, "all %zu commands are allowed (by rule%s %s)", sp.ncmds,
		         nrules > 1 ? "s" : "", list);
	} else {
		rulename(rn, sizeof rn, a, wrule);
		snprintf(v->reason, sizeof v->reason, "%s %s %s", rn, verb(v->decision), what);
	}
	shsplitfree(&sp);
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
		snprintf(what, sizeof what, s.kind == KDELEGATE ? "delegating to %s" : "%s", tool);
	}
	s.provable = !unsafe;
	v->decision = judge(a, &s, NULL, &v->rule);
	if (v->rule < 0) {
		defreason(v, a, worker, what, unsafe);
	} else {
		rulename(rn, sizeof rn, a, v->rule);
		snprintf(v->reason, sizeof v->reason, "%s %s %s", rn, verb(v->decision), what);
	}
}

void verdictfree(struct verdict *v)
{
	strvfree(&v->commands);
	free(v->path);
	v->path = NULL;
}


int policycheck(const struct approval *a, struct err *e)
{
	for (size_t k = 0; k < a->nrules; k++) {
		const struct rule *r = &a->rules[k];
		struct err ge;
		const char *why = NULL;
		if (r->command && globcmdcheck(r->command, &ge) < 0) {
			why = ge.msg;
		} else if (r->command && r->tool && !globmatch(r->tool, strlen(r->tool), "shell", 5)) {
			why = "a command pattern only applies to the shell tool, and this rule's tool is not shell";
		} else if (r->command && r->path) {
			why = "a rule with both command and path can never match (shell calls have no path)";
		} else if (r->path && r->path[0] == '/' && strncmp(r->path, "/workspace", 10) != 0) {
			why = "a path pattern outside /workspace can never match";
		} else if (r->path && (strstr(r->path, "../") || !strcmp(r->path, "..") ||
		                       (strlen(r->path) >= 3 && !strcmp(r->path + strlen(r->path) - 3, "/.."))))
			why = "a path pattern with .. can never match: paths are matched after .. is resolved";
		if (why)
			return errc(e, 2, "%s:%d:%d: rule %zu: %.600s", r->pos.file ? r->pos.file : "manifest",
			            r->pos.line, r->pos.col, k + 1, why);
	}
	return 0;
}
