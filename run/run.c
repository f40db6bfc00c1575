/* run: create the run directory, run the jobs in needs order, seal the artifacts. */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../artifacts/carry.h"
#include "../artifacts/patch.h"
#include "../artifacts/rundir.h"
#include "preflight.h"
#include "../artifacts/runjson.h"
#include "../artifacts/sign.h"
#include "../snapshot/snapshot.h"
#include "../manifest/expr.h"
#include "../manifest/mcpconf.h"
#include "agent.h"
#include "progress.h"
#include "shard.h"
#include "resume.h"
#include "upstream.h"
#include "wspace.h"
#include "../llm/gate.h"
#include "../llm/llm.h"
#include "../util/cancel.h"
#include "../util/gitpatch.h"
#include "run.h"

/* Jobs the run may hold: the manifest's, and the members its matrices may make during the run. */
static size_t jobroom(const struct manifest *m)
{
	size_t n = m->jobcap > m->njobs ? m->jobcap : m->njobs;
	return n ? n : 1;
}

/* The matrix job whose values come from a job's output that id names a member of ("ID-..."), or NULL. */
static const struct job *pendingof(const struct manifest *m, const char *id)
{
	for (size_t i = 0; i < m->njobs; i++) {
		size_t l = strlen(m->jobs[i].id);
		if (m->jobs[i].mxpending && strncmp(id, m->jobs[i].id, l) == 0 && id[l] == '-')
			return &m->jobs[i];
	}
	return NULL;
}

/* Mark job i and everything it needs as selected. */
static void select_with_needs(const struct manifest *m, size_t i, int *sel, const int *taken)
{
	if (sel[i] || taken[i])
		return;
	sel[i] = 1;
	for (size_t k = 0; k < m->jobs[i].needs.n; k++)
		select_with_needs(m, manifestjob(m, m->jobs[i].needs.v[k]) - m->jobs, sel, taken);
}

/* Jobs in an order where each comes after what it needs (manifest order otherwise). */
static size_t order(const struct manifest *m, const int *sel, const int *taken, size_t *out)
{
	int *done = xcalloc(m->njobs, sizeof *done);
	size_t n = 0;
	for (int progress = 1; progress;) {
		progress = 0;
		for (size_t i = 0; i < m->njobs; i++) {
			if (!sel[i] || done[i])
				continue;
			int ready = 1;
			for (size_t k = 0; k < m->jobs[i].needs.n && ready; k++)
				ready = done[manifestjob(m, m->jobs[i].needs.v[k]) - m->jobs] ||
				        taken[manifestjob(m, m->jobs[i].needs.v[k]) - m->jobs];
			if (ready) {
				done[i] = 1;
				out[n++] = i;
				progress = 1;
			}
		}
	}
	free(done);
	return n;
}

struct outputs {
	const struct manifest *m;
	struct jobresult *res;
	cJSON *maps; /* {GROUP: {key: output}} built for this expansion */
};

static cJSON *outputof(void *ctx, const char *job)
{
	struct outputs *o = ctx;
	const struct job *j = manifestjob(o->m, job);
	return j ? o->res[j - o->m->jobs].output : NULL;
}

/* A matrix job's outputs as a map of each member's values to its output (null when it has none). */
static cJSON *outputsof(void *ctx, const char *group)
{
	struct outputs *o = ctx;
	if (!o->maps)
		o->maps = cJSON_CreateObject();
	cJSON *map = cJSON_GetObjectItemCaseSensitive(o->maps, group);
	if (map)
		return map;
	map = cJSON_AddObjectToObject(o->maps, group);
	for (size_t i = 0; i < o->m->njobs; i++) {
		const struct job *j = &o->m->jobs[i];
		if (j->group && strcmp(j->group, group) == 0)
			cJSON_AddItemToObject(map, j->mxkey, o->res[i].output ? cJSON_Duplicate(o->res[i].output, 1)
			                                                     : cJSON_CreateNull());
	}
	return map;
}

static int writerunjson(struct rundir *rd, const struct manifest *m, const struct runopts *o,
                        const struct runstate *rs, const struct secrets *sec, const char *started,
                        const int *sel, struct jobresult *res, const char *status, const struct upstream *up,
                        const int *taken, const struct resume *rsm, struct err *e)
{
	char now[32], hex[65];
	utcnow(now);
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "nightshift", NS_VERSION);
	cJSON_AddStringToObject(r, "run_id", rd->id);
	cJSON *mj = cJSON_AddObjectToObject(r, "manifest");
	const char *base = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
	cJSON_AddStringToObject(mj, "file", base);
	if (sha256file(m->path, hex, e) < 0) {
		cJSON_Delete(r);
		return -1;
	}
	cJSON_AddStringToObject(mj, "sha256", hex);
	if (m->name)
		cJSON_AddStringToObject(mj, "name", m->name);
	if (m->admin.path || m->userconfig) { /* the layers of configuration in force, copied in manifest/ */
		cJSON *lj = cJSON_AddObjectToObject(r, "layers");
		if (m->admin.path) {
			cJSON *aj = cJSON_AddObjectToObject(lj, "admin_policy");
			cJSON_AddStringToObject(aj, "path", m->admin.path);
			cJSON_AddStringToObject(aj, "sha256", m->admin.sha256);
			cJSON_AddStringToObject(aj, "copy", "manifest/" RUNADMINPOLICY);
		}
		if (m->userconfig) {
			cJSON *uj = cJSON_AddObjectToObject(lj, "user_config");
			cJSON_AddStringToObject(uj, "path", m->userconfig);
			cJSON_AddStringToObject(uj, "copy", "manifest/" RUNUSERCONFIG);
		}
	}
	cJSON_AddStringToObject(r, "workspace", rs->nws == 1 ? rs->ws[0].path : m->workspace);
	if (rs->perws || rs->nws > 1 || (rs->nws == 1 && strcmp(rs->ws[0].name, WSDEFAULT) != 0)) {
		cJSON *wj = cJSON_AddObjectToObject(r, "workspaces");
		for (size_t i = 0; i < rs->nws; i++)
			cJSON_AddStringToObject(wj, rs->ws[i].name, rs->ws[i].path);
	}
	cJSON *in = cJSON_AddObjectToObject(r, "inputs");
	for (size_t i = 0; i < m->sets.n; i++) {
		char *k = xstrdup(m->sets.v[i]), *eq = strchr(k, '=');
		*eq = 0;
		cJSON_AddStringToObject(in, k, eq + 1);
		free(k);
	}
	cJSON *ov = cJSON_AddArrayToObject(r, "model_overrides");
	for (size_t i = 0; o->overrides && i < o->overrides->n; i++)
		cJSON_AddItemToArray(ov, cJSON_CreateString(o->overrides->v[i]));
	if (o->replay)
		cJSON_AddStringToObject(r, "replay_of", o->replayof ? o->replayof : o->replay);
	/* A resumed run's carried jobs started in the run it resumes: the whole began there. */
	const char *ostart = rsm ? jsonstr(rsm->run, "started", NULL) : NULL;
	cJSON_AddStringToObject(r, "started", ostart && strcmp(ostart, started) < 0 ? ostart : started);
	cJSON_AddStringToObject(r, "ended", now);
	cJSON_AddStringToObject(r, "status", status);
	if (rs->setid.n) {
		cJSON *sid = cJSON_AddArrayToObject(r, "setid_removed");
		for (size_t i = 0; i < rs->setid.n; i++)
			cJSON_AddItemToArray(sid, cJSON_CreateString(rs->setid.v[i]));
	}
	if (rs->endskipped)
		cJSON_AddItemToObject(r, "end_skipped", cJSON_Duplicate(rs->endskipped, 1));
	/* the layers no event records (end layers, carried ones), sealed with their digests */
	cJSON *sealed = rundirsealed(rd->path, &rs->carried, e);
	if (!sealed) {
		cJSON_Delete(r);
		return -1;
	}
	cJSON_AddItemToObject(r, "sealed_layers", sealed);
	if (o->nshards) {
		char spec[32];
		snprintf(spec, sizeof spec, "%d/%d", o->shard, o->nshards);
		cJSON_AddStringToObject(r, "shard", spec);
	}
	if (up->n)
		cJSON_AddItemToObject(r, "upstream", upstreamjson(up, m, taken));
	struct usage total = {0};
	double cost = 0;
	cJSON *jobs = cJSON_AddObjectToObject(r, "jobs");
	for (size_t i = 0; i < m->njobs; i++) {
		if (!sel[i])
			continue;
		struct jobresult *jr = &res[i];
		cJSON *j = cJSON_AddObjectToObject(jobs, m->jobs[i].id);
		cJSON_AddStringToObject(j, "status", jobstatusname(jr->status));
		cJSON_AddStringToObject(j, "worker", m->jobs[i].worker);
		if (m->jobs[i].model)
			cJSON_AddStringToObject(j, "model", m->jobs[i].model);
		const struct wspace *jw = rs->perws ? runws(rs, &m->jobs[i]) : NULL;
		if (jw) /* its chain: snapshots/<workspace>/ */
			cJSON_AddStringToObject(j, "workspace", jw->name);
		if (m->jobs[i].group) {
			cJSON *mx = cJSON_AddObjectToObject(j, "matrix");
			cJSON_AddStringToObject(mx, "job", m->jobs[i].group);
			cJSON_AddItemToObject(mx, "values", cJSON_Duplicate(m->jobs[i].mxvalues, 1));
		}
		if (jr->error[0])
			cJSON_AddStringToObject(j, "error", jr->error);
		cJSON_AddNumberToObject(j, "turns", jr->turns);
		cJSON_AddNumberToObject(j, "steps", jr->steps);
		cJSON_AddItemToObject(j, "usage", usagejson(&jr->usage));
		cJSON_AddNumberToObject(j, "cost", jr->cost);
		cJSON_AddNumberToObject(j, "denials", jr->denials);
		if (jr->retries) {
			cJSON_AddNumberToObject(j, "model_retries", jr->retries);
			cJSON_AddNumberToObject(j, "model_waited_ms", (double)jr->waited_ms);
		}
		cost += jr->cost;
		if (jr->diverged)
			cJSON_AddTrueToObject(j, "diverged");
		if (jr->events) {
			cJSON_AddNumberToObject(j, "events", (double)jr->events);
			cJSON_AddStringToObject(j, "events_head", jr->head);
		}
		usageadd(&total, &jr->usage);
	}
	for (size_t i = 0; i < rs->nnested; i++) {
		struct nested *n = &rs->nested[i];
		cJSON *j = cJSON_AddObjectToObject(jobs, n->id);
		cJSON_AddStringToObject(j, "status", jobstatusname(n->res->status));
		cJSON_AddStringToObject(j, "worker", n->worker);
		cJSON_AddStringToObject(j, "parent", n->parent);
		if (n->res->error[0])
			cJSON_AddStringToObject(j, "error", n->res->error);
		cJSON_AddNumberToObject(j, "turns", n->res->turns);
		cJSON_AddNumberToObject(j, "steps", n->res->steps);
		cJSON_AddItemToObject(j, "usage", usagejson(&n->res->usage));
		cJSON_AddNumberToObject(j, "cost", n->res->cost);
		cJSON_AddNumberToObject(j, "denials", n->res->denials);
		cost += n->res->cost;
		if (n->res->events) {
			cJSON_AddNumberToObject(j, "events", (double)n->res->events);
			cJSON_AddStringToObject(j, "events_head", n->res->head);
		}
		usageadd(&total, &n->res->usage);
	}
	if (rsm)
		resumejson(rsm, m, taken, r, &total, &cost);
	cJSON_AddItemToObject(r, "usage", usagejson(&total));
	cJSON_AddNumberToObject(r, "cost", cost);
	if (m->budget_cost > 0)
		cJSON_AddNumberToObject(r, "budget_cost", m->budget_cost);
	int rc = runjsonseal(rd->path, r, sec, e);
	cJSON_Delete(r);
	return rc;
}

/* Each job that ran here and changed its workspace leaves its whole change, from before its first
 * layer to after its last step, as jobs/<job>/changes.patch, recorded by a changes event (its path
 * and digest) at the end of its log, which is closed then. After the chains' end layers. */
static int runchanges(const char *rundir, const struct manifest *m, const struct secrets *sec, struct jobresult *res,
                      struct err *e)
{
	int rc = 0;
	for (size_t i = 0; i < m->njobs; i++) {
		struct jobresult *r = &res[i];
		if (!r->ev)
			continue;
		struct buf patch = {0};
		struct err pe = {0};
		const char *id = m->jobs[i].id;
		int held = 0; /* files whose bytes held a secret: masked before the patch was made */
		long files = rc < 0 ? 0 : patchjob(rundir, id, 1, 0, sec, &held, &patch, &pe);
		if (files < 0)
			progressj(NULL, "job %s: warning: its changes.patch was not made: %s", id, pe.msg);
		/* A patch is published (a pull request): a secret a step wrote into a file is masked in it,
		 * and the patch then does not reproduce that file (the layers do, byte for byte). */
		if (files > 0 && patch.data && (strncmp(patch.data, "Binary files ", 13) == 0 || strstr(patch.data, "\nBinary files ")))
			progressj(id, "warning: changes.patch leaves out files over %d MiB, and those past %d MiB of patch (each "
			              "a 'Binary files ... differ' line); the layers hold them", GITPATCHFILEMAX >> 20, GITPATCHMAX >> 20);
		char *masked = files > 0 && patch.data ? secretsmask(sec, patch.data) : NULL; /* names, too */
		if (masked || held) {
			progressj(id, "warning: a changed file holds a secret: masked in changes.patch, which does not reproduce it");
			if (masked) {
				buffree(&patch);
				patch.data = masked;
				patch.len = strlen(masked);
			}
		}
		if (files > 0) {
			char *rel = xasprintf("jobs/%s/changes.patch", id), *path = pathjoin(rundir, rel);
			char hex[65];
			sha256hex(patch.data, patch.len, hex);
			cJSON *ev = cJSON_CreateObject();
			cJSON_AddStringToObject(ev, "path", rel);
			cJSON_AddStringToObject(ev, "sha256", hex);
			cJSON_AddNumberToObject(ev, "bytes", (double)patch.len);
			cJSON_AddNumberToObject(ev, "files", (double)files);
			if (masked || held)
				cJSON_AddTrueToObject(ev, "secrets_masked");
			if (writefile(path, patch.data, patch.len, e) < 0 || evadd(r->ev, "changes", ev, e) < 0)
				rc = -1;
			memcpy(r->head, evhead(r->ev), 65);
			r->events = evcount(r->ev);
			free(rel);
			free(path);
		}
		buffree(&patch);
		if (evclose(r->ev, rc < 0 ? &pe : e) < 0 && rc == 0)
			rc = -1;
		r->ev = NULL;
	}
	return rc;
}

/* What a job does to its workspace: a job that may change it holds it alone; one that can only
 * read it shares it. */
enum { READS, WRITES, ASKMCP };

/* An MCP tool writes unless its server marks it readOnlyHint, which is only known once the server
 * answers tools/list, after the job was scheduled: a worker whose only possible writes are its
 * own MCP tools is ASKMCP: it starts beside readers, not beside another ASKMCP job or a writer,
 * and once its servers said (toolsknown) it is a reader or a writer; a delegate's MCP tools
 * count as writing. */
static int writes(const struct manifest *m, const struct worker *w, int depth)
{
	if (w->tools & (TOOL_SHELL | TOOL_WRITE_FILE | TOOL_EDIT_FILE) || (depth && w->mcptools.n))
		return WRITES;
	for (size_t i = 0; depth < 8 && i < w->delegates.n; i++)
		if (writes(m, manifestworker(m, w->delegates.v[i]), depth + 1))
			return WRITES;
	return w->mcptools.n ? ASKMCP : READS;
}

enum { WAITING, RUNNING, DONE };

struct sched {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int running, fatal;
	int *state;
	int *wr;      /* by job: READS, WRITES or ASKMCP (any but READS holds its workspace alone) */
	size_t *ws;   /* by job: the index of its workspace in the runstate */
	int *said;    /* by job: the last reason it was said to wait for (1 + blocking job, or -1 for -j) */
	const struct manifest *m;
	struct manifest *mm;       /* the same, for a matrix made when the job it takes values from ends */
	int *sel;                  /* by job: in the run (run.json) */
	const struct strv *only;   /* --job ids naming members of such a matrix (or the matrix job) */
	const char *outdir;
	struct jobresult *res;
	int *taken;                /* by job: finished in another run (--from, --resume) */
	int *scope;                /* by job: its outcome is the run's (a member taken with --from) */
	const struct upstream *up; /* the runs of --from */
	const struct resume *rsm;  /* the run resumed, or NULL */
	const char *rundir;
	int *late;                 /* by job: a member made during the run, not yet looked for in rsm */
	struct err e; /* the first artifact error of a job thread */
};

/* Whether running jobs i and k may not share a workspace: either writes, or neither knows yet. */
static int clash(const struct sched *s, size_t i, size_t k)
{
	return s->wr[i] == WRITES || s->wr[k] == WRITES || (s->wr[i] == ASKMCP && s->wr[k] == ASKMCP);
}

/* Job j's MCP servers listed their tools: it writes (an offered tool lacks readOnlyHint) or only
 * reads. An ASKMCP job may have started beside readers of its workspace; one that writes waits
 * here, before its first turn, until they end. */
static void toolsknown(struct runstate *rs, const struct job *j, int wr)
{
	struct sched *s = rs->sched;
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	size_t me = (size_t)(j - s->m->jobs);
	if (me < s->m->njobs && s->wr[me] == ASKMCP) {
		s->wr[me] = wr ? WRITES : READS;
		progressj(j->id, wr ? "its MCP tools may write (not every one is marked readOnlyHint): it holds its "
		                      "workspace alone"
		                    : "its MCP tools only read (readOnlyHint): it shares its workspace with readers");
		pthread_cond_broadcast(&s->cv);
		for (int said = 0;;) {
			long by = -1;
			for (size_t k = 0; k < s->m->njobs && by < 0; k++)
				if (k != me && s->state[k] == RUNNING && spacesoverlap(rs, s->ws[me], s->ws[k]) && clash(s, me, k))
					by = (long)k;
			if (by < 0 || cancelled)
				break;
			if (!said++)
				progressj(j->id, "waiting: job %s reads its workspace and this job may change it",
				          s->m->jobs[by].id);
			pthread_cond_wait(&s->cv, &s->mu);
		}
	}
	pthread_mutex_unlock(&s->mu);
}

/* Whether job i failed in a way that ends its matrix (fail_fast). */
static int failsfast(const struct manifest *m, const struct jobresult *res, size_t i)
{
	const struct job *j = &m->jobs[i];
	return j->group && j->fail_fast && !j->continue_on_error && !j->unloaded && /* a refused value fails alone */
	       (res[i].status == JOB_FAILED || res[i].status == JOB_ABORTED);
}

/* The member of job i's matrix that failed it fast, or NULL. */
static const char *failedfast(const struct manifest *m, const struct jobresult *res, const int *state, size_t i)
{
	const struct job *j = &m->jobs[i];
	for (size_t k = 0; j->group && j->fail_fast && k < m->njobs; k++)
		if (k != i && state[k] == DONE && m->jobs[k].group && strcmp(m->jobs[k].group, j->group) == 0 &&
		    failsfast(m, res, k))
			return m->jobs[k].id;
	return NULL;
}

/* Members of job i's matrix running now. */
static int groupsrunning(const struct manifest *m, const int *state, size_t i)
{
	int n = 0;
	for (size_t k = 0; m->jobs[i].group && k < m->njobs; k++)
		n += state[k] == RUNNING && m->jobs[k].group && strcmp(m->jobs[k].group, m->jobs[i].group) == 0;
	return n;
}

struct slot {
	struct sched *s;
	struct runstate *rs;
	const struct job *j;
	char *input;
	struct jobresult *res;
	int *state;
};

static void *jobthread(void *arg)
{
	struct slot *sl = arg;
	struct err e = {0};
	int64_t start = nowms();
	int rc = agentrun(sl->rs, sl->j, sl->input, sl->res, &e);
	const struct jobresult *r = sl->res;
	progressj(sl->j->id, "%s%s%s (%d turn%s, %d step%s, %lld in / %lld out tokens, $%.4f, %.1fs)",
	          jobstatusname(r->status), r->error[0] ? ": " : "", r->error, r->turns, r->turns == 1 ? "" : "s", r->steps,
	          r->steps == 1 ? "" : "s",
	          (long long)r->usage.input, (long long)r->usage.output, r->cost, (nowms() - start) / 1000.0);
	progressjob(sl->j->id, r->turns, r->steps, r->usage.input + r->usage.output, NULL, 1);
	pthread_mutex_lock(&sl->s->mu);
	if (rc < 0 && !sl->s->fatal) {
		sl->s->fatal = 1;
		sl->s->e = e;
	}
	*sl->state = DONE;
	const struct manifest *m = sl->s->m;
	size_t me = (size_t)(sl->j - m->jobs);
	if (failsfast(m, sl->s->res, me))
		for (size_t k = 0; k < m->njobs; k++)
			if (sl->s->state[k] == RUNNING && m->jobs[k].group && strcmp(m->jobs[k].group, sl->j->group) == 0) {
				__atomic_store_n(&sl->s->res[k].halt, 1, __ATOMIC_SEQ_CST);
				progressj(m->jobs[k].id, "cancelling: %s of its matrix failed (fail_fast)", sl->j->id);
			}
	sl->s->running--;
	pthread_cond_broadcast(&sl->s->cv); /* the scheduler, and a job waiting in toolsknown */
	pthread_mutex_unlock(&sl->s->mu);
	free(sl->input);
	free(sl);
	return NULL;
}

/* Decide what happens to a waiting job whose needs are done: 1 it may start (input expanded),
 * 0 it ended without running (skipped, cancelled, bad input). */
static int prepare(struct runstate *rs, struct sched *s, size_t i, struct jobresult *res, char **input)
{
	const struct manifest *m = rs->m;
	const struct job *j = &m->jobs[i];
	const char *failed = NULL;
	for (size_t d = 0; d < j->needs.n && !failed; d++) {
		const struct job *dj = manifestjob(m, j->needs.v[d]);
		if (res[dj - m->jobs].status != JOB_SUCCEEDED && !dj->continue_on_error)
			failed = j->needs.v[d];
	}
	if (cancelled || s->fatal) {
		res[i].status = JOB_CANCELLED;
		snprintf(res[i].error, sizeof res[i].error, "not started: the run was %s", cancelled ? "cancelled" : "stopped");
		return 0;
	}
	const char *fast = failedfast(m, res, s->state, i);
	if (fast) {
		res[i].status = JOB_CANCELLED;
		snprintf(res[i].error, sizeof res[i].error, "not started: job '%s' of its matrix failed (fail_fast)", fast);
		progressj(j->id, "%s", res[i].error);
		return 0;
	}
	if (failed) {
		res[i].status = JOB_SKIPPED;
		snprintf(res[i].error, sizeof res[i].error, "skipped: job '%s' it needs did not succeed", failed);
		progressj(j->id, "%s", res[i].error);
		return 0;
	}
	struct outputs outs = {m, res, NULL};
	struct strv needs = {0};
	for (size_t k = 0; k < j->needs.n; k++)
		strvadd(&needs, j->needs.v[k]);
	for (size_t k = 0; k < j->needgroups.n; k++)
		strvadd(&needs, j->needgroups.v[k]);
	/* one pass: inputs, env, the matrix's values and the needed jobs' outputs, none read again */
	struct exprenv env = {.sets = &m->sets, .needs = &needs, .output = outputof, .outputs = outputsof, .ctx = &outs,
	                      .matrix = j->mxvalues};
	struct err xe = {0};
	*input = exprexpand(j->input, &env, &xe);
	strvfree(&needs);
	cJSON_Delete(outs.maps);
	if (!*input) {
		res[i].status = JOB_FAILED;
		snprintf(res[i].error, sizeof res[i].error, "input: %.900s", xe.msg);
		progressj(j->id, "failed: %s", res[i].error);
		return 0;
	}
	return 1;
}

/* The running job that keeps job i from starting: one on a workspace that shares files with its
 * own, when either of them may change it (writers alone). -1 when none. */
static long blocker(const struct runstate *rs, const struct sched *s, size_t i)
{
	for (size_t k = 0; k < s->m->njobs; k++)
		if (s->state[k] == RUNNING && clash(s, i, k) && spacesoverlap(rs, s->ws[i], s->ws[k]))
			return (long)k;
	return -1;
}

/* Say once why a job whose needs are done waits. */
static void saywait(const struct runstate *rs, struct sched *s, size_t i, long by, int max)
{
	int code = by >= 0 ? (int)by + 1 : -1;
	if (s->said[i] == code)
		return;
	s->said[i] = code;
	const struct job *j = &s->m->jobs[i];
	if (by < 0) {
		progressj(j->id, "waiting: %d job%s running (-j %d)", max, max == 1 ? "" : "s", max);
		return;
	}
	const struct wspace *w = &rs->ws[s->ws[by]];
	progressj(j->id, "waiting: job %s %s workspace %s%s", s->m->jobs[by].id,
	          s->wr[by] ? "may change its" : "reads its", w->name,
	          s->wr[by] == ASKMCP ? " (its MCP servers have not said yet whether their tools write)"
	          : s->wr[by]        ? ""
	                             : " and this job may change it");
}

/* Whether the --job ids in only take member id of matrix group: all of them when only names none
 * of its members (nor the matrix), else the ones named. */
static int wantmember(const struct strv *only, const char *group, const char *id)
{
	size_t gl = strlen(group);
	int named = 0;
	for (size_t i = 0; i < only->n; i++) {
		if (strcmp(only->v[i], group) == 0 || strcmp(only->v[i], id) == 0)
			return 1;
		named |= strncmp(only->v[i], group, gl) == 0 && only->v[i][gl] == '-';
	}
	return !named;
}

/* The matrix job i takes its values from needed jobs' outputs, which have all succeeded: make it
 * into its members, now waiting jobs of the run (ord, *n); fails job i when it cannot be made. */
static void expandmatrix(struct runstate *rs, struct sched *s, size_t i, size_t *ord, size_t *n)
{
	struct manifest *m = s->mm;
	struct jobresult *res = s->res;
	char *group = xstrdup(m->jobs[i].id);
	cJSON *outs = cJSON_CreateObject();
	for (size_t d = 0; d < m->jobs[i].needs.n; d++) {
		const struct job *dj = manifestjob(m, m->jobs[i].needs.v[d]);
		if (dj && res[dj - m->jobs].output)
			cJSON_AddItemToObject(outs, dj->id, cJSON_Duplicate(res[dj - m->jobs].output, 1));
	}
	size_t before = m->njobs;
	struct err xe = {0};
	int k = manifestexpand(m, i, outs, &xe);
	cJSON_Delete(outs);
	if (k < 0) {
		res[i].status = JOB_FAILED;
		snprintf(res[i].error, sizeof res[i].error, "its matrix: %.900s", xe.msg);
		progressj(group, "failed: %s", res[i].error);
		s->state[i] = DONE;
		free(group);
		return;
	}
	struct buf made = {0};
	int picked = 0;
	for (int c = 0; c < k; c++) {
		size_t x = c == 0 ? i : before + (size_t)c - 1;
		const struct job *j = &m->jobs[x];
		bufprintf(&made, "%s%s", c ? ", " : "", j->id);
		s->state[x] = WAITING;
		s->said[x] = 0;
		s->late[x] = s->rsm || s->up->n;
		s->sel[x] = wantmember(s->only, group, j->id);
		picked += s->sel[x];
		if (x != i)
			ord[(*n)++] = x;
		if (!s->sel[x]) {
			s->state[x] = DONE; /* not asked for with --job */
			continue;
		}
		if (j->unloaded) {
			res[x].status = JOB_FAILED;
			snprintf(res[x].error, sizeof res[x].error, "its matrix value: %.900s", j->unloaded);
			progressj(NULL, "job %s: failed: %s", j->id, res[x].error);
			s->state[x] = DONE;
			continue;
		}
		struct err we = {0};
		if (spacesadd(rs, j, s->outdir, &we) < 0) {
			res[x].status = JOB_FAILED;
			snprintf(res[x].error, sizeof res[x].error, "workspace: %.900s", we.msg);
			progressj(j->id, "failed: %s", res[x].error);
			s->state[x] = DONE;
			continue;
		}
		s->wr[x] = writes(m, manifestworker(m, j->worker), 0);
		struct wspace *w = runws(rs, j);
		s->ws[x] = w ? (size_t)(w - rs->ws) : 0;
	}
	progressj(group, "its matrix from %s: %d job%s (%s)", m->jobs[i].needs.n ? m->jobs[i].needs.v[0] : "?",
	          k, k == 1 ? "" : "s", made.data ? made.data : "");
	if (!picked) {
		s->sel[i] = 1;
		s->state[i] = DONE;
		res[i].status = JOB_FAILED;
		snprintf(res[i].error, sizeof res[i].error, "not run: --job names no job of matrix %.100s, which made %.700s",
		         group, made.data);
		progressj(m->jobs[i].id, "%s", res[i].error);
	}
	buffree(&made);
	free(group);
}

/* A member of a matrix made during the run, ready to start: taken when a run of --from has it (its
 * id and values), carried over when the run resumed has it succeeded with the same input (1,
 * done), else 0 (it runs; or it ended without running: *ended). -1 on an artifact error. */
static int carrymember(struct runstate *rs, struct sched *s, size_t i, int *ended, struct err *e)
{
	const struct job *j = &s->m->jobs[i];
	char *input = NULL;
	s->late[i] = 0;
	const struct upjob *uj = upstreamjob(s->up, j->id);
	if (uj && uj->values && cJSON_Compare(uj->values, j->mxvalues, 1)) {
		jobresultfree(&s->res[i]);
		memset(&s->res[i], 0, sizeof s->res[i]);
		upstreamtake(uj, &s->res[i]);
		s->taken[i] = s->scope[i] = 1;
		s->sel[i] = 0;
		progressj(j->id, "taken from run %s: %s there", uj->run, uj->status);
		return 1;
	}
	if (!s->rsm)
		return 0;
	*ended = !prepare(rs, s, i, s->res, &input);
	if (*ended)
		return 0;
	int rc = resumemember(s->rsm, j, input, &s->res[i], s->rundir, e);
	free(input);
	if (rc == 1) {
		s->taken[i] = 1;
		s->sel[i] = 0; /* run.json takes its entry as the run resumed wrote it */
		progressj(j->id, "carried over: it succeeded in %s with the same input", s->rsm->dir);
	}
	return rc;
}

/* Run the jobs in ord as their needs allow, up to o->parallel at once, writers alone. */
static int schedule(struct runstate *rs, struct manifest *mm, const struct runopts *o, size_t *ord, size_t *np,
                    struct jobresult *res, int *taken, int *scope, int *sel, const struct strv *only,
                    const struct upstream *up, const struct resume *rsm, struct err *e)
{
	const struct manifest *m = mm;
	struct sched s = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .m = m, .mm = mm,
	                  .sel = sel, .only = only, .outdir = o->outdir, .res = res, .taken = taken, .scope = scope,
	                  .up = up, .rsm = rsm,
	                  .rundir = rs->rd->path};
	int max = o->parallel > 0 ? o->parallel : 1;
	size_t cap = jobroom(m), n = *np;
	s.state = xcalloc(cap, sizeof *s.state);
	s.wr = xcalloc(cap, sizeof *s.wr);
	s.ws = xcalloc(cap, sizeof *s.ws);
	s.said = xcalloc(cap, sizeof *s.said);
	rs->sched = &s;
	rs->toolsknown = toolsknown;
	s.late = xcalloc(cap, sizeof *s.late);
	for (size_t i = 0; i < m->njobs; i++) {
		if (taken[i])
			s.state[i] = DONE; /* finished in another run (--from) */
		s.wr[i] = writes(m, manifestworker(m, m->jobs[i].worker), 0);
		struct wspace *w = runws(rs, &m->jobs[i]);
		s.ws[i] = w ? (size_t)(w - rs->ws) : 0;
	}
	pthread_t *threads = xcalloc(cap + 1, sizeof *threads);
	size_t nthreads = 0;
	pthread_mutex_lock(&s.mu);
	for (;;) {
		size_t done = 0;
		for (size_t k = 0; k < n; k++) {
			size_t i = ord[k];
			const struct job *j = &m->jobs[i];
			if (s.state[i] != WAITING) {
				done += s.state[i] == DONE;
				continue;
			}
			int ready = 1;
			for (size_t d = 0; d < j->needs.n && ready; d++)
				ready = s.state[manifestjob(m, j->needs.v[d]) - m->jobs] == DONE;
			if (!ready)
				continue;
			if (j->mxpending) {
				/* its values come from the jobs it needs, which have ended: its members join the run */
				char *input = NULL;
				if (prepare(rs, &s, i, res, &input))
					expandmatrix(rs, &s, i, ord, &n);
				else
					s.state[i] = DONE;
				free(input);
				k = (size_t)-1;
				done = 0;
				continue;
			}
			int wr = s.wr[i], ended = 0, c;
			if (s.late[i] && !cancelled && !s.fatal && (c = carrymember(rs, &s, i, &ended, &s.e)) != 0) {
				if (c < 0 && !s.fatal)
					s.fatal = 1;
				ended = 1;
			}
			if (ended) {
				s.state[i] = DONE;
				k = (size_t)-1; /* a job ended: look again from the start */
				done = 0;
				continue;
			}
			if (!cancelled && !s.fatal && !failedfast(m, res, s.state, i)) {
				long by = blocker(rs, &s, i);
				if (s.running >= max || by >= 0) {
					saywait(rs, &s, i, by, max);
					continue;
				}
				if (j->max_parallel && groupsrunning(m, s.state, i) >= j->max_parallel) {
					if (s.said[i] != -2)
						progressj(j->id, "waiting: max_parallel %d of matrix %s running", j->max_parallel,
						          j->group);
					s.said[i] = -2;
					continue;
				}
			}
			char *input = NULL;
			if (!prepare(rs, &s, i, res, &input)) {
				s.state[i] = DONE;
				done++;
				k = (size_t)-1; /* a job ended: look again from the start */
				done = 0;
				continue;
			}
			struct slot *sl = xcalloc(1, sizeof *sl);
			*sl = (struct slot){&s, rs, j, input, &res[i], &s.state[i]};
			s.state[i] = RUNNING;
			s.running++;
			progressjob(j->id, 0, 0, 0, "starting", 0);
			progressj(j->id, "started (worker %s%s)", j->worker,
			          wr == READS ? ", read-only" : wr == ASKMCP ? ", read-only if its MCP tools are" : "");
			if (pthread_create(&threads[nthreads], NULL, jobthread, sl) != 0) {
				s.state[i] = DONE;
				s.running--;
				res[i].status = JOB_FAILED;
				snprintf(res[i].error, sizeof res[i].error, "cannot start a thread");
				free(sl->input);
				free(sl);
				continue;
			}
			nthreads++;
		}
		if (done == n)
			break;
		pthread_cond_wait(&s.cv, &s.mu);
	}
	pthread_mutex_unlock(&s.mu);
	for (size_t t = 0; t < nthreads; t++)
		pthread_join(threads[t], NULL);
	free(threads);
	*np = n;
	free(s.state);
	free(s.wr);
	rs->sched = NULL;
	free(s.ws);
	free(s.said);
	free(s.late);
	if (s.fatal) {
		*e = s.e;
		return -1;
	}
	return 0;
}

int runmanifest(struct manifest *m, const struct runopts *o, char **rundir, struct err *e)
{
	struct rundir rd;
	struct secrets sec = {0};
	struct runstate rs = {.mu = PTHREAD_MUTEX_INITIALIZER, .m = m, .rd = &rd, .sec = &sec, .replay = o->replay,
	                      .live = o->live, .bmu = PTHREAD_MUTEX_INITIALIZER, .failondeny = o->fail_on_deny};
	budgetinit(&rs.budget, NULL, &rs.bmu, "the run", 0, 0, m->budget_cost);
	char started[32];
	int *sel = xcalloc(jobroom(m), sizeof *sel);
	size_t *ord = xcalloc(jobroom(m), sizeof *ord);
	struct jobresult *res = xcalloc(jobroom(m), sizeof *res);
	int rc = -1;
	enum runend end = RUN_SUCCEEDED;
	utcnow(started);
	int *taken = xcalloc(jobroom(m), sizeof *taken);
	struct upstream up = {0};
	struct strv group = {0};
	const struct strv *want = &o->jobs;
	struct resume rsm = {0};
	int *scope = xcalloc(jobroom(m), sizeof *scope), *none = xcalloc(jobroom(m), sizeof *none);
	struct strv only = {0}; /* --job ids of members of a matrix made during the run, or of that matrix */
	up.allowed = o->allowed;
	up.signing = o->sign != NULL;
	for (size_t i = 0; o->from && i < o->from->n; i++)
		if (upstreamload(&up, o->from->v[i], m, e) < 0)
			goto out;
	upstreamapply(&up, m, res, taken);
	if (o->resume && (resumeload(&rsm, o->resume, m, o->allowed, o->sign != NULL, e) < 0))
		goto out;
	if (o->resume)
		resumeapply(&rsm, m, res, taken);
	if (o->resume && resumeedits(&rsm, m, taken, e) < 0)
		goto out;
	if (o->nshards) {
		if (shardjobs(m, o->shard, o->nshards, &group, e) < 0)
			goto out;
		want = &group; /* an empty group runs nothing */
	}
	for (size_t i = 0; i < want->n; i++) {
		struct strv ids = {0};
		const struct job *pj = manifestjob(m, want->v[i]);
		if (pj && pj->mxpending)
			strvadd(&only, want->v[i]);
		if (!manifestselect(m, want->v[i], &ids)) {
			/* a member of a matrix made once the job it takes values from has ended */
			if (!(pj = pendingof(m, want->v[i]))) {
				errc(e, ERR_INPUT, "--job %s: no such job in %s", want->v[i], m->path);
				goto out;
			}
			strvadd(&only, want->v[i]);
			strvadd(&ids, pj->id);
		}
		for (size_t k = 0; k < ids.n; k++) {
			select_with_needs(m, manifestjob(m, ids.v[k]) - m->jobs, sel, taken);
			select_with_needs(m, manifestjob(m, ids.v[k]) - m->jobs, scope, none);
		}
		strvfree(&ids);
	}
	for (size_t i = 0; !want->n && !o->nshards && i < m->njobs; i++)
		scope[i] = 1;
	for (size_t i = 0; !want->n && !o->nshards && i < m->njobs; i++)
		sel[i] = !taken[i];
	size_t n = order(m, sel, taken, ord);
	/* Nothing spent, nothing made, when a key, a host, the engine or an image is missing. */
	if (preflight(m, sel, !o->replay || o->live, !o->replay, e) < 0)
		goto out;
	secretsenv(&sec, &m->secrets);
	mcpsecrets(m, &sec); /* values MCP headers take from ${{ env.X }} */
	signkeysecrets(o->sign, &sec); /* the signing key's bytes, should a step reach them after all */
	/* API keys are secrets too; known before any job thread starts, so sec is only read after. */
	for (size_t i = 0; i < m->nmodels; i++) {
		const struct model *md = &m->models[i];
		if (llmkeyenv(md))
			secretsadd(&sec, llmkeyenv(md), getenv(llmkeyenv(md)));
		for (size_t k = 0; k < md->hidden.n; k++) /* header and query values from ${{ env.X }} */
			secretsadd(&sec, "model header", md->hidden.v[k]);
		if (md->provider == PROV_BEDROCK) {
			static const char *const aws[] = {"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", NULL};
			for (int a = 0; aws[a]; a++)
				if (getenv(aws[a]) && *getenv(aws[a]))
					secretsadd(&sec, aws[a], getenv(aws[a]));
		}
	}
	for (size_t i = 0; i < sec.unmasked.n; i++)
		progressj(NULL, "warning: %s holds fewer than %d bytes, too short to mask without rewriting the record "
		          "(every match would read [secret:%s]): it is not masked", sec.unmasked.v[i], SECRETMIN,
		          sec.unmasked.v[i]);
	rs.gates = xcalloc(m->nmodels ? m->nmodels : 1, sizeof *rs.gates);
	for (size_t i = 0; i < m->nmodels; i++)
		gateinit(&rs.gates[i], m->models[i].concurrency);
	/* A resumed run opens the workspaces of the jobs it carries too, each chain ending in its own
	 * end layer beside the carried ones, in the layout of the run it resumes. */
	size_t nopen = n;
	for (size_t i = 0; o->resume && i < m->njobs; i++)
		if (taken[i] && scope[i] && !sel[i])
			ord[nopen++] = i;
	if (o->resume)
		rs.perws = carrychains(o->resume);
	if (spacesopen(&rs, ord, nopen, e) < 0 || rundircreate(&rd, o->outdir, e) < 0)
		goto out;
	*rundir = xstrdup(rd.path);
	progressrundir(rd.path);
	cJSON *rev = cJSON_CreateObject();
	char *absdir = realpath(rd.path, NULL);
	cJSON_AddStringToObject(rev, "run", absdir ? absdir : rd.path);
	free(absdir);
	cJSON_AddStringToObject(rev, "manifest", m->path);
	cJSON_AddStringToObject(rev, "mode", o->replay ? "replay" : "run");
	cJSON *rjobs = cJSON_AddArrayToObject(rev, "jobs");
	for (size_t k = 0; k < n; k++)
		cJSON_AddItemToArray(rjobs, cJSON_CreateString(m->jobs[ord[k]].id));
	progressevent(NULL, "run_start", rev);
	if (o->resume) {
		rs.step = rsm.last; /* steps count on from the run resumed, so carried layers keep their names */
		/* a run resumed with one chain in snapshots/ whose resume has several: that chain stays
		 * as it was, closed by its own end layer, and each workspace starts its own */
		if (resumecarry(&rsm, m, taken, rd.path, rs.perws && !carrychains(o->resume), e) < 0 ||
		    rundirlayers(rd.path, &rs.carried, e) < 0)
			goto seal;
		for (size_t i = 0; i < m->njobs; i++)
			if (taken[i] && scope[i])
				progressj(m->jobs[i].id, "carried over: it succeeded in %s", o->resume);
	}
	if (spacessnap(&rs, o->outdir, e) < 0 || rundircopy(&rd, m, e) < 0)
		goto seal;
	if (schedule(&rs, m, o, ord, &n, res, taken, scope, sel, &only, &up, o->resume ? &rsm : NULL, e) < 0)
		goto seal;
	rc = 0;
seal:;
	/* Whatever happened, seal what was written so it stays verifiable. */
	struct err se = {0};
	if (spacesseal(&rs, rc < 0 ? &se : e) < 0 && rc == 0)
		rc = -1;
	if (rd.path && runchanges(rd.path, m, &sec, res, rc < 0 ? &se : e) < 0 && rc == 0)
		rc = -1;
	if (o->resume && rs.perws && rd.path) {
		/* the chains of members of the run resumed that this run did not make again */
		struct strv keep = {0};
		for (size_t i = 0; i < rs.nws; i++)
			strvadd(&keep, rs.ws[i].name);
		if (carrydrop(rd.path, &keep, rc < 0 ? &se : e) < 0 && rc == 0)
			rc = -1;
		strvfree(&keep);
	}
	for (size_t k = 0; k < n; k++) {
		if (!sel[ord[k]])
			continue; /* a member of a matrix made during the run that --job did not ask for */
		enum jobstatus st = res[ord[k]].status;
		/* cancelled by a signal is 130; cancelled by fail_fast goes with the failure that caused it */
		if (st == JOB_CANCELLED && cancelled)
			end = RUN_CANCELLED;
		else if (st == JOB_ABORTED && end != RUN_CANCELLED)
			end = RUN_ABORTED;
		else if (st != JOB_SUCCEEDED && end == RUN_SUCCEEDED && !m->jobs[ord[k]].continue_on_error)
			end = RUN_FAILED;
	}
	/* Jobs taken from other runs (--from) that did not succeed there are the outcome of this one
	 * too: a run that ran nothing because its jobs failed elsewhere has not succeeded. */
	for (size_t i = 0; i < m->njobs; i++) {
		if (!scope[i] || !taken[i] || res[i].status == JOB_SUCCEEDED || m->jobs[i].continue_on_error)
			continue;
		progressj(m->jobs[i].id, "%s in run %s, taken with --from, not run here%s",
		          jobstatusname(res[i].status), upstreamjob(&up, m->jobs[i].id)->run,
		          res[i].status == JOB_SKIPPED ? "" : " (--resume reruns it)");
		if (res[i].status == JOB_ABORTED && end != RUN_CANCELLED)
			end = RUN_ABORTED;
		else if (end == RUN_SUCCEEDED)
			end = RUN_FAILED;
	}
	if (cancelled && end != RUN_SUCCEEDED)
		end = RUN_CANCELLED; /* a job a signal cut short may have ended failed rather than cancelled */
	if (rd.path) {
		static const char *const names[] = {
		    [RUN_SUCCEEDED] = "succeeded", [RUN_FAILED] = "failed",
		    [RUN_ABORTED] = "aborted", [RUN_CANCELLED] = "cancelled",
		};
		const char *status = rc < 0 ? "error" : names[end];
		/* --events: a job_end for every selected job that wrote no log of its own (skipped,
		 * cancelled before it started, taken or carried over), so each job has one */
		for (size_t k = 0; k < n; k++) {
			const struct jobresult *jr = &res[ord[k]];
			if (!sel[ord[k]] || jr->events)
				continue;
			cJSON *jev = cJSON_CreateObject();
			cJSON_AddStringToObject(jev, "status", jobstatusname(jr->status));
			if (jr->error[0])
				cJSON_AddStringToObject(jev, "error", jr->error);
			cJSON_AddFalseToObject(jev, "ran");
			progressevent(m->jobs[ord[k]].id, "job_end", jev);
		}
		if (writerunjson(&rd, m, o, &rs, &sec, started, sel, res, status, &up, taken, o->resume ? &rsm : NULL,
		                 rc < 0 ? &se : e) < 0 && rc == 0)
			rc = -1;
		if (rundirsums(&rd, rc < 0 ? &se : e) < 0 && rc == 0)
			rc = -1;
		else if (o->sign && runsign(rd.path, o->sign, rc < 0 ? &se : e) < 0 && rc == 0)
			rc = -1;
		cJSON *eev = cJSON_CreateObject();
		char *absend = realpath(rd.path, NULL);
		cJSON_AddStringToObject(eev, "run", absend ? absend : rd.path);
		free(absend);
		cJSON_AddStringToObject(eev, "status", status);
		cJSON_AddBoolToObject(eev, "sealed", rc == 0);
		progressevent(NULL, "run_end", eev);
		rundirfree(&rd);
	}
out:
	upstreamfree(&up);
	resumefree(&rsm);
	for (size_t i = 0; rs.gates && i < m->nmodels; i++)
		gatefree(&rs.gates[i]);
	free(rs.gates);
	free(scope);
	free(none);
	strvfree(&only);
	strvfree(&group);
	free(taken);
	for (size_t i = 0; i < m->njobs; i++)
		jobresultfree(&res[i]);
	free(res);
	free(sel);
	free(ord);
	secretsfree(&sec);
	nestedfree(&rs);
	strvfree(&rs.setid);
	strvfree(&rs.carried);
	cJSON_Delete(rs.endskipped);
	spacesclose(&rs);
	return rc < 0 ? -1 : (int)end;
}
