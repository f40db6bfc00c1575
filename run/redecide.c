/* redecide: a rule change tried on last night's real calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../artifacts/calls.h"
#include "../artifacts/runjson.h"
#include "../policy/policy.h"
#include "../util/glob.h"
#include "redecide.h"

/* The decision a run would give call (tool, args) of worker w: not offered, or the rules'. The one
 * place this reads the policy, so that a single decide of policy/ can take its place. */
static void decideagain(const struct worker *w, const char *tool, const cJSON *args, struct verdict *v)
{
	memset(v, 0, sizeof *v);
	unsigned bit = toolbyname(tool);
	int offered = bit && (w->tools & bit);
	for (size_t i = 0; !bit && i < w->delegates.n; i++)
		offered |= strcmp(w->delegates.v[i], tool) == 0;
	for (size_t i = 0; !bit && i < w->mcptools.n; i++)
		offered |= globmatch(w->mcptools.v[i], strlen(w->mcptools.v[i]), tool, strlen(tool));
	if (!cJSON_IsObject(args)) {
		v->decision = DEC_DENY;
		v->rule = -1;
		snprintf(v->reason, sizeof v->reason, "the arguments are not a JSON object");
	} else if (!offered) {
		v->decision = DEC_DENY;
		v->rule = -1;
		snprintf(v->reason, sizeof v->reason, "tool '%.100s' is not offered to worker '%s'", tool, w->name);
	} else {
		policydecide(&w->approval, w->name, tool, args, v);
	}
}

/* The worker of job in the run (run.json), as m defines it, or NULL. */
static const struct worker *workerof(const struct manifest *m, const cJSON *run, const char *job)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(run, "jobs"), job);
	const char *name = jsonstr(j, "worker", NULL);
	if (!cJSON_GetObjectItemCaseSensitive(j, "parent")) {
		const char *group = jsonstr(cJSON_GetObjectItemCaseSensitive(j, "matrix"), "job", NULL);
		const struct job *mj = manifestjobof(m, job, group);
		if (mj)
			name = mj->worker;
		else
			return NULL; /* the manifest has no such job */
	}
	return name ? manifestworker((struct manifest *)m, name) : NULL;
}

static char *rulename(const cJSON *rule)
{
	if (cJSON_IsNumber(rule) && rule->valuedouble >= 1 && rule->valuedouble < 1e6)
		return xasprintf("%d", (int)rule->valuedouble);
	return xstrdup(cJSON_IsString(rule) ? rule->valuestring : "default");
}

int redecide(const struct manifest *m, const char *rundir, struct redecision *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	cJSON *run = runjsonread(rundir, e);
	if (!run)
		return -1;
	struct calls *c;
	struct call k;
	int rc;
	if (callsopen(&c, rundir, e) < 0) {
		cJSON_Delete(run);
		return -1;
	}
	while ((rc = callsnext(c, &k, e)) == 1) {
		if (k.notrun || !k.decision || !k.tool || !k.job || strcmp(k.tool, "final_result") == 0)
			continue;
		const struct worker *w = workerof(m, run, k.job);
		if (!w) {
			size_t i;
			for (i = 0; i < out->skipped.n && strcmp(out->skipped.v[i], k.job) != 0; i++)
				;
			if (i == out->skipped.n)
				strvadd(&out->skipped, k.job);
			continue;
		}
		struct verdict v;
		decideagain(w, k.tool, k.arguments, &v);
		out->calls++;
		char *oldrule = rulename(k.rule);
		char tag[24] = "default"; /* told as the run's events tell it: "N" (rulenum) or "admin N" */
		if (v.rule >= 0)
			ruletag(&w->approval, v.rule, tag, sizeof tag);
		char *newrule = xstrdup(tag);
		if (strcmp(decisionname(v.decision), k.decision) != 0) {
			out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
			struct redecided *d = &out->v[out->n++];
			d->job = xstrdup(k.job);
			d->step = k.step;
			d->tool = xstrdup(k.tool);
			d->arguments = k.arguments ? cJSON_Duplicate(k.arguments, 1) : cJSON_CreateNull();
			d->olddecision = xstrdup(k.decision);
			d->oldrule = oldrule;
			d->oldreason = xstrdup(k.reason ? k.reason : "");
			d->newdecision = xstrdup(decisionname(v.decision));
			d->newrule = newrule;
			d->newreason = xstrdup(v.reason);
		} else {
			free(oldrule);
			free(newrule);
		}
		verdictfree(&v);
	}
	callsclose(c);
	cJSON_Delete(run);
	if (rc < 0)
		redecisionfree(out);
	return rc < 0 ? -1 : 0;
}

void redecisionfree(struct redecision *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct redecided *d = &r->v[i];
		free(d->job);
		free(d->tool);
		cJSON_Delete(d->arguments);
		free(d->olddecision);
		free(d->oldrule);
		free(d->oldreason);
		free(d->newdecision);
		free(d->newrule);
		free(d->newreason);
	}
	free(r->v);
	strvfree(&r->skipped);
	memset(r, 0, sizeof *r);
}
