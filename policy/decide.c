/* decide: the one decision of a tool call. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decide.h"
#include "../util/jsonb.h"

#define LINKCAP 4096 /* as many hard-linked files as a run binds */

/* Whether worker w is given tool: a built-in tool it lists, or one of its delegates; any other
 * name (an MCP tool) by live, what its servers offer. */
static int given(const struct worker *w, const char *tool, int live)
{
	unsigned bit = toolbyname(tool);
	if (bit)
		return (w->tools & bit) != 0;
	for (size_t i = 0; i < w->delegates.n; i++)
		if (strcmp(w->delegates.v[i], tool) == 0)
			return 1;
	return live;
}

/* Deny (or keep an abort) for a reason no rule can change; the caller writes v->reason. */
static void refuse(struct verdict *v)
{
	v->decision = v->decision == DEC_ABORT ? DEC_ABORT : DEC_DENY;
	v->rule = -1;
}

void decide(const struct worker *w, const char *tool, const cJSON *args, int live, const struct place *p,
            struct verdict *v)
{
	memset(v, 0, sizeof *v);
	if (!args || !cJSON_IsObject(args)) {
		v->decision = DEC_DENY;
		v->rule = -1;
		snprintf(v->reason, sizeof v->reason, "the arguments are not a JSON object");
		return;
	}
	const char *twice = jsonbtwice(args);
	if (twice) {
		v->decision = DEC_DENY;
		v->rule = -1;
		snprintf(v->reason, sizeof v->reason, "the arguments hold the key '%.80s' given twice (ignoring case): "
		         "the rules would see one value and the tool might use another", twice);
		return;
	}
	if (!given(w, tool, live)) {
		v->decision = DEC_DENY;
		v->rule = -1;
		snprintf(v->reason, sizeof v->reason, "tool '%.100s' is not offered to worker '%s'", tool, w->name);
		return;
	}
	policydecide(&w->approval, w->name, tool, args, v);
	if (!p || !v->path)
		return;
	size_t hl = p->hidden ? strlen(p->hidden) : 0;
	if (hl && strncmp(v->path, p->hidden, hl) == 0 && (v->path[hl] == 0 || v->path[hl] == '/'))
	{
		refuse(v);
		snprintf(v->reason, sizeof v->reason, "%s holds the run directories, which are not part of the workspace",
		         p->hidden);
	}
	unsigned bit = toolbyname(tool);
	const char *pr = bit == TOOL_WRITE_FILE || bit == TOOL_EDIT_FILE ? protectmatch(&p->prot, v->path) : NULL;
	if (pr && v->decision != DEC_DENY) {
		int linked = 0;
		for (size_t k = 0; k < p->prot.linked.n; k++)
			linked |= pr == p->prot.linked.v[k];
		refuse(v);
		snprintf(v->reason, sizeof v->reason, "%.80s is protected (%.80s): no step or file tool may change it",
		         v->path, linked ? "it has hard links outside the workspace" : pr);
	}
}

/* realpath of a path that may not exist yet: its nearest existing parent resolved, the rest kept. */
static char *resolve(const char *path)
{
	char *r = realpath(path, NULL);
	if (r)
		return r;
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path || !slash[1])
		return NULL;
	char *parent = xstrndup(path, (size_t)(slash - path));
	char *rp = resolve(parent);
	free(parent);
	if (!rp)
		return NULL;
	char *full = pathjoin(rp, slash + 1);
	free(rp);
	return full;
}

/* The place a job with sandbox sc works in, as a run of m into outdir would see it: workspace ws,
 * the runs folder when outdir lies inside it, the protected paths and hard-linked files. Reads,
 * never changes, the workspace. */
static void placeinit(struct place *p, const struct manifest *m, const char *ws, const char *outdir,
               const struct sandboxconf *sc)
{
	memset(p, 0, sizeof *p);
	char *real = realpath(ws, NULL), *out = outdir ? resolve(outdir) : NULL;
	size_t l = real ? strlen(real) : 0;
	if (real && out && strncmp(out, real, l) == 0 && out[l] == '/' && out[l + 1])
		p->hidden = xstrdup(out + l + 1);
	protectinit(&p->prot, m, ws, p->hidden, sc);
	struct err e = {0};
	if (real)
		protectlinks(&p->prot, real, p->hidden, LINKCAP, &e); /* what it could see; a run refuses more */
	free(real);
	free(out);
}

void placefree(struct place *p)
{
	protectfree(&p->prot);
	free(p->hidden);
	p->hidden = NULL;
}

void decideoffline(const struct manifest *m, const struct worker *w, const char *outdir, const char *tool,
                   const cJSON *args, int live, struct verdict *v)
{
	int any = 0;
	for (size_t i = 0; i <= m->njobs; i++) {
		const struct job *j = i < m->njobs ? &m->jobs[i] : NULL;
		if (j ? strcmp(j->worker, w->name) != 0 : any)
			continue;
		struct place p;
		placeinit(&p, m, j && j->workspace ? j->workspace : m->workspace, outdir, j ? &j->sandbox : &w->sandbox);
		struct verdict here;
		decide(w, tool, args, live, &p, &here);
		placefree(&p);
		if (!any++ || here.decision > v->decision) {
			if (any > 1)
				verdictfree(v);
			*v = here;
		} else {
			verdictfree(&here);
		}
	}
}
