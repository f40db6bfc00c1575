/* replay: restore, run by turns, compare by effects. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "../artifacts/runjson.h"
#include "../llm/modelspec.h"
#include "../manifest/expr.h"
#include "../manifest/manifest.h"
#include "../manifest/netrule.h"
#include "../policy/rulecheck.h"
#include "../snapshot/snapshot.h"
#include "../snapshot/layername.h"
#include "ignored.h"
#include "progress.h"
#include "replay.h"
#include "run.h"

/* A limit of the record held to the default's when it is weaker (0 is none at all); says so. */
static int nolooser(int64_t *v, int64_t def, const char *who, const char *what)
{
	if (*v > 0 && *v <= def)
		return 0;
	progressj(NULL, "replay: WARNING: %s: the record's %s (%s%lld) is not taken; replaying with the default's, %lld",
	          who, what, *v > 0 ? "" : "none: ", (long long)*v, (long long)def);
	*v = def;
	return 1;
}

/* A sandbox of the record is a stranger's: keep only what is no weaker than the defaults (the
 * namespace backend, no network, no mounts, no variables passed in, the host's /usr as the
 * image; docker stays docker; memory, pids and the step timeout at most the defaults', limits
 * strict), and say what was dropped. Returns how many settings were. */
static int distrust(struct sandboxconf *sc, const char *who)
{
	int n = 0;
	n += nolooser(&sc->memory, DEF_MEMORY, who, "memory limit");
	n += nolooser(&sc->pids, DEF_PIDS, who, "pids limit");
	n += nolooser(&sc->timeout_ms, DEF_TIMEOUT_MS, who, "step timeout in ms");
	if (sc->limits_warn) {
		progressj(NULL, "replay: WARNING: %s: the record's limits: warn is not taken; a limit the engine cannot "
		          "enforce fails the step", who);
		sc->limits_warn = 0;
		n++;
	}
	if (sc->backend == BACKEND_NONE) {
		progressj(NULL, "replay: WARNING: %s: the record runs its commands without a sandbox (backend none); replaying "
		          "them in the namespace sandbox", who);
		sc->backend = BACKEND_NAMESPACE;
		n++;
	}
	if (sc->network_host || sc->network_allow) {
		progressj(NULL, "replay: WARNING: %s: the record's network access is not given; replaying with network none", who);
		sc->network_host = sc->network_allow = 0;
		for (size_t i = 0; i < sc->nallow; i++)
			netrulefree(&sc->allow[i]);
		free(sc->allow);
		sc->allow = NULL;
		sc->nallow = 0;
		n++;
	}
	if (sc->nmounts) {
		for (size_t i = 0; i < sc->nmounts; i++) {
			progressj(NULL, "replay: WARNING: %s: the record's mount %s -> %s is not made", who, sc->mounts[i].source,
			          sc->mounts[i].target);
			free(sc->mounts[i].source);
			free(sc->mounts[i].target);
		}
		free(sc->mounts);
		sc->mounts = NULL;
		sc->nmounts = 0;
		n++;
	}
	if (sc->env.n) {
		struct buf names = {0};
		for (size_t i = 0; i < sc->env.n; i++)
			bufprintf(&names, "%s%s", i ? " " : "", sc->env.v[i]);
		progressj(NULL, "replay: WARNING: %s: the record's sandbox.env (%s) is not passed in", who, names.data);
		buffree(&names);
		strvfree(&sc->env);
		n++;
	}
	if (sc->backend == BACKEND_NAMESPACE && sc->image && strcmp(sc->image, "host") != 0) {
		progressj(NULL, "replay: WARNING: %s: the record's image %s is not used; the host's", who, sc->image);
		free(sc->image);
		sc->image = xstrdup("host");
		n++;
	}
	return n;
}

/* Every sandbox of the archived manifest distrusted, and said once. */
static void distrustall(struct manifest *m)
{
	int dropped = distrust(&m->sandbox, "sandbox") + nolooser(&m->snapshot.max_size, DEF_MAXSIZE, "snapshot", "max_size");
	for (size_t i = 0; i < m->nworkers; i++) {
		char *who = xasprintf("worker %s", m->workers[i].name);
		dropped += distrust(&m->workers[i].sandbox, who);
		free(who);
	}
	for (size_t i = 0; i < m->njobs; i++) {
		char *who = xasprintf("job %s", m->jobs[i].id);
		dropped += distrust(&m->jobs[i].sandbox, who);
		free(who);
	}
	if (dropped)
		progressj(NULL, "replay: the record's commands run in a sandbox with the default settings; give --manifest FILE to "
		          "replay with settings of your own");
}

/* The first step layer of a chain ("" for snapshots/ itself), or 0 when it has none (then end). */
static int firstlayer(const char *run, const char *chain)
{
	char *dir = *chain ? xasprintf("%s/snapshots/%s", run, chain) : pathjoin(run, "snapshots");
	DIR *d = opendir(dir);
	free(dir);
	int best = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		int n = 0;
		if (layerparse(de->d_name, &n) == LAYER_STEP && n > 0 && (best == 0 || n < best))
			best = n;
	}
	if (d)
		closedir(d);
	return best;
}

/* Where the replay restored each chain: chain name -> folder. */
struct wsmap {
	struct strv chain, dir;
	int nogit; /* git is not installed: said once */
};

static void ignoredby(void *arg, const char *ws, const struct strv *paths, unsigned char *flags)
{
	struct wsmap *m = arg;
	const char *dir = NULL;
	for (size_t i = 0; i < m->chain.n && !dir; i++)
		if (strcmp(m->chain.v[i], ws) == 0)
			dir = m->dir.v[i];
	memset(flags, 0, paths->n);
	if (!dir || m->nogit)
		return;
	struct err e = {0};
	int rc = gitignored(dir, paths, flags, &e);
	if (rc == 1) {
		m->nogit = 1;
		progressj(NULL, "replay: git is not installed: the workspace's .gitignore files are not read, every changed path "
		          "counts as an effect");
	} else if (rc < 0) {
		progressj(NULL, "replay: WARNING: %s; every changed path of workspace %s counts as an effect", e.msg,
		          *ws ? ws : "(the only one)");
	}
}

/* Load a manifest and check its approval rules and examples; every mistake said, one a line. */
static int load(struct manifest *m, const char *path, const struct loadopts *lo, struct err *e)
{
	int rc = manifestloadopts(m, path, lo, e);
	if (rc == 0 && (rc = rulecheck(m, &m->errors, e)) < 0)
		manifestsorterrors(m);
	if (rc == 0 || m->errors.n < 2)
		return rc;
	for (size_t i = 0; i < m->errors.n; i++)
		progressj(NULL, "%s", m->errors.v[i]);
	return errc(e, ERR_INPUT, "%s: %zu mistakes", path, m->errors.n);
}

/* Whether list holds name. */
static int strvhas(const struct strv *list, const char *name)
{
	for (size_t i = 0; i < list->n; i++)
		if (strcmp(list->v[i], name) == 0)
			return 1;
	return 0;
}

/* Restore each workspace of the record as before its first step into ws/<name> (the manifest's:
 * ws/default), noting where each chain went in map. Every workspace of the replay lies in ws,
 * whatever the record says. */
static int restoreall(const struct replayopts *o, const cJSON *rj, const char *ws, struct wsmap *map, struct err *e)
{
	const cJSON *spaces = cJSON_GetObjectItemCaseSensitive(rj, "workspaces"), *sp;
	int nsp = cJSON_GetArraySize(spaces);
	cJSON_ArrayForEach(sp, spaces)
		if (!runnameok(sp->string))
			return errc(e, ERR_INPUT, "replay: %s/run.json names a workspace '%.80s' that is not a name", o->run,
			            sp->string);
	char *top = pathjoin(ws, WSDEFAULT);
	int rc = mkdirs(top, 0755, e);
	free(top);
	if (rc < 0)
		return -1;
	const char *mname = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rj, "workspace"));
	struct strv chains = {0}; /* a run of one workspace may still keep it in snapshots/<name>/ */
	snapchains(o->dir, &chains);
	for (sp = spaces ? spaces->child : NULL;; sp = sp->next) {
		if (spaces && !sp)
			break;
		const char *name = spaces ? sp->string : NULL;
		char *to = pathjoin(ws, name ? name : WSDEFAULT);
		/* one workspace: its layers are in snapshots/, unless the run kept a chain per workspace
		 * from its start (a matrix from a job's output) */
		const char *chain = name && (nsp > 1 || strvhas(&chains, name)) ? name : "";
		int first = firstlayer(o->dir, chain);
		int src = snaprestorews(o->dir, *chain ? chain : NULL, first, to, 1, o->maxunpack, e);
		const char *base = mname && strrchr(mname, '/') ? strrchr(mname, '/') + 1 : mname;
		const char *shown = name ? name : base && *base ? base : "(the run's only one)";
		if (src == 0) {
			progressj(NULL, "replay: workspace %s restored from %s into %s", shown,
			          first ? "the first snapshot" : "the end snapshot (the run had no steps)", to);
			strvadd(&map->chain, chain);
			strvadd(&map->dir, to);
			if (nsp <= 1 && name) { /* the replay may keep its one workspace in the other layout */
				strvadd(&map->chain, *chain ? "" : name);
				strvadd(&map->dir, to);
			}
		}
		free(to);
		if (src < 0) {
			strvfree(&chains);
			return errctx(e, "replay: restoring the workspace %s of %s", shown, o->run);
		}
		if (!spaces)
			break;
	}
	strvfree(&chains);
	return 0;
}

/* Whether the record ran job id: one of its jobs, or the matrix they were made from. */
static int recordran(const cJSON *rj, const char *id)
{
	const cJSON *j;
	cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(rj, "jobs"))
		if (strcmp(j->string, id) == 0 ||
		    strcmp(jsonstr(cJSON_GetObjectItemCaseSensitive(j, "matrix"), "job", ""), id) == 0)
			return 1;
	return 0;
}

int replayrun(const struct replayopts *o, struct replayresult *r, struct err *e)
{
	struct runopts ro = {0};
	struct strv sets = {0}, overrides = {0};
	struct manifest m;
	struct wsmap map;
	memset(&m, 0, sizeof m);
	memset(&map, 0, sizeof map);
	memset(r, 0, sizeof *r);
	int rc = 0, loaded = 0;
	char *ws = NULL, *mpath = NULL;
	cJSON *rj = runjsonread(o->dir, e), *it;
	if (!rj) {
		errctx(e, "replay: %s is not a run directory", o->run);
		e->kind = ERR_INPUT;
		return -1;
	}
	/* What the night ran with: its manifest file, its inputs, its model overrides. Inputs of
	 * --set come first (they win); the record's go only into the record's own manifest: in yours
	 * they would be a stranger's text in your paths, URLs and headers. */
	const char *mfile = jsonstr(cJSON_GetObjectItemCaseSensitive(rj, "manifest"), "file", NULL);
	for (size_t i = 0; o->sets && i < o->sets->n; i++)
		strvadd(&sets, o->sets->v[i]);
	struct buf untaken = {0};
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(rj, "inputs"))
	{
		if (o->manifest) {
			bufprintf(&untaken, "%s%.80s", untaken.len ? ", " : "", it->string);
			continue;
		}
		char *kv = xasprintf("%s=%s", it->string, cJSON_GetStringValue(it) ? it->valuestring : "");
		strvadd(&sets, kv);
		free(kv);
	}
	if (untaken.len)
		progressj(NULL, "replay: the record's inputs (%s) are not given to --manifest %s; give --set KEY=VALUE for "
		          "those it needs", untaken.data, o->manifest);
	buffree(&untaken);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(rj, "model_overrides"))
		if (cJSON_IsString(it))
			strvadd(&overrides, it->valuestring);
	/* Going live, where requests go, which keys and headers they carry and what may be spent
	 * come from the user's manifest only, never from the record's. */
	if (o->live && !o->manifest) {
		rc = errc(e, ERR_INPUT, "replay: --continue-live needs --manifest FILE: the record's models (endpoints, API key "
		          "variables, headers, budgets) are a stranger's and are not trusted with your keys");
		goto done;
	}
	if (!mfile || strchr(mfile, '/') || !runnameok(mfile)) {
		rc = errc(e, ERR_INPUT, "replay: %s/run.json names no manifest file", o->run);
		goto done;
	}
	/* --job and --manifest FILE checked before anything is restored: a mistyped name costs nothing */
	for (size_t i = 0; o->jobs && i < o->jobs->n; i++)
		if (!recordran(rj, o->jobs->v[i])) {
			rc = errc(e, ERR_INPUT, "--job %.200s: %s ran no job of that name", o->jobs->v[i], o->run);
			goto done;
		}
	struct stat mst;
	const char *unread = !o->manifest ? NULL
	                     : stat(o->manifest, &mst) < 0 ? strerror(errno)
	                     : S_ISDIR(mst.st_mode) ? "a folder, not a file"
	                     : access(o->manifest, R_OK) < 0 ? strerror(errno) : NULL;
	if (unread) {
		rc = errc(e, ERR_INPUT, "--manifest %s: %s", o->manifest, unread);
		goto done;
	}
	if (mkdirs(o->outdir, 0755, e) < 0) {
		rc = errctx(e, "--out %s", o->outdir);
		e->kind = ERR_INPUT;
		goto done;
	}
	ws = xasprintf("%s/replay-workspace-XXXXXX", o->outdir);
	if (!mkdtemp(ws)) {
		rc = errc(e, ERR_INPUT, "--out %s: cannot make a workspace folder", o->outdir);
		free(ws);
		ws = NULL;
		goto done;
	}
	if ((rc = restoreall(o, rj, ws, &map, e)) < 0)
		goto done;
	/* Each job's workspace in ws/<name>, the manifest's own in ws/default (empty when no job of
	 * the run worked there); a record of one workspace: every job's is ws/default. The record's
	 * manifest reads only the files its run copied beneath RUN/manifest/. */
	int onews = cJSON_GetObjectItemCaseSensitive(rj, "workspaces") == NULL;
	char *top = pathjoin(ws, WSDEFAULT), *confine = pathjoin(o->dir, "manifest");
	mpath = o->manifest ? xstrdup(o->manifest) : pathjoin(confine, mfile);
	struct loadopts lo = {.sets = &sets, .workspace = top, .wsroot = ws, .onews = onews,
	                      .confine = o->manifest ? NULL : confine};
	loaded = 1;
	if (!o->manifest)
		exprsealenv(); /* the record's text reads none of the user's environment */
	rc = load(&m, mpath, &lo, e);
	if (!o->manifest && exprenvdenied())
		progressj(NULL, "replay: WARNING: the record's manifest reads ${{ env.* }}: a record gets none of your "
		          "environment, each expands to nothing; give --manifest FILE to replay with values of your own");
	free(top);
	free(confine);
	if (rc < 0)
		goto done;
	for (size_t i = 0; i < m.unread.n; i++)
		progressj(NULL, "replay: WARNING: the record's %s is not read: a record names no host folder; give "
		          "--manifest FILE to replay with skills", m.unread.v[i]);
	if (!o->manifest)
		distrustall(&m);
	for (size_t i = 0; i < m.njobs; i++)
		if (m.jobs[i].sandbox.network_allow)
			progressj(NULL, "replay: job %s's steps reach the hosts of its network.allow again, live: their connections are "
			          "recorded as new ones, not served from the record or compared with it", m.jobs[i].id);
	if (o->manifest && overrides.n) {
		/* --model of the record: endpoints, key variables and script files a stranger chose, which
		 * only the record's own manifest (reading beneath RUN/manifest/) may take; yours decide. */
		for (size_t i = 0; i < overrides.n; i++)
			progressj(NULL, "replay: WARNING: the record's --model %s is not taken with --manifest; its models answer",
			          overrides.v[i]);
		strvfree(&overrides);
	}
	for (size_t i = 0; i < overrides.n; i++)
		if ((rc = modelspec(&m, overrides.v[i], e)) < 0) {
			errctx(e, "replay: the run was started with");
			goto done;
		}
	/* Without --job, the jobs the record ran (a run of selected jobs replays as that). */
	for (size_t i = 0; o->jobs && i < o->jobs->n; i++)
		strvadd(&ro.jobs, o->jobs->v[i]);
	cJSON *ran = ro.jobs.n ? NULL : cJSON_GetObjectItemCaseSensitive(rj, "jobs");
	cJSON_ArrayForEach(it, ran)
	{
		if (cJSON_GetObjectItemCaseSensitive(it, "parent"))
			continue;
		/* a member of a matrix made from an output is selected by its id, as run --job takes it:
		 * its matrix job makes the members again, and runs only those the record ran */
		const char *group = jsonstr(cJSON_GetObjectItemCaseSensitive(it, "matrix"), "job", NULL);
		if (manifestjobof(&m, it->string, group) && !strvhas(&ro.jobs, it->string))
			strvadd(&ro.jobs, it->string);
	}
	ro.outdir = o->outdir;
	ro.replay = o->dir;
	ro.replayof = o->run;
	ro.live = o->live;
	ro.overrides = &overrides;
	rc = runmanifest(&m, &ro, &r->newrun, e);
	if (rc < 0)
		goto done;
	r->end = rc;
	struct diffopts dop = {&m.snapshot.exclude, o->maxunpack, ignoredby, &map, !o->jobs || !o->jobs->n};
	rc = rundiff(o->dir, r->newrun, &dop, &r->found, e) < 0 ? -1 : 0;
done:
	if (loaded)
		manifestfree(&m);
	cJSON_Delete(rj);
	strvfree(&ro.jobs);
	strvfree(&sets);
	strvfree(&overrides);
	strvfree(&map.chain);
	strvfree(&map.dir);
	if (ws)
		snapremove(ws); /* the replay's workspace, on every way out */
	free(ws);
	free(mpath);
	return rc < 0 ? -1 : 0;
}

void replayresultfree(struct replayresult *r)
{
	free(r->newrun);
	difffoundfree(&r->found);
	memset(r, 0, sizeof *r);
}
