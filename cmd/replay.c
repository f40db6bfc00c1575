/* replay: nightshift replay RUN [--out DIR] [--job ID]... [--continue-live]
 * Reruns an archived night offline: the workspace from the run's first snapshot, the manifest
 * from RUN/manifest/, the model's replies from the record; the tools really run. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../artifacts/diff.h"
#include "../artifacts/runjson.h"
#include "../snapshot/snapshot.h"
#include "../manifest/manifest.h"
#include "../manifest/netrule.h"
#include "../llm/modelspec.h"
#include "../run/run.h"
#include "../util/privacy.h"
#include "../util/term.h"
#include "cmd.h"

static const char replayhelp[] =
	"usage: nightshift replay RUN [--out DIR] [--job ID]... [--continue-live] [--manifest FILE]\n"
	"\n"
	"Restores the workspace from RUN's first snapshot into a fresh folder, runs the manifest\n"
	"archived in RUN/manifest/ with every model reply served from the record (no key, no\n"
	"network), really runs the tools, and compares each step with the record. Prints the new\n"
	"run directory; its run.json names the run it replays. Steps under sandbox.network.allow\n"
	"reach their hosts again: their connections are recorded anew, not replayed (it says so).\n"
	"  --out DIR        folder to make the run directory in (default: beside RUN)\n"
	"  --job ID         replay only this job and what it needs; repeatable\n"
	"  --continue-live  let the live model take over where the record ends or diverges\n"
	"  --manifest FILE  run this manifest (yours) instead of the archived one. Without it the\n"
	"                   archive's sandbox settings are a stranger's: backend none, network,\n"
	"                   mounts, sandbox.env and a rootfs image are replaced by the defaults,\n"
	"                   each one said on stderr\n" MAXUNPACKHELP
	"exit codes: 0 nothing diverged, 4 something did (the first divergence is printed) or a\n"
	"            layer of the first snapshot is refused (past --max-unpack, not as listed),\n"
	"            2 usage or a RUN that cannot be replayed\n";

/* The lowest layer number in RUN/snapshots, or 0 when there is none (then end is used). */
static int firstlayer(const char *run, const char *ws)
{
	char *dir = ws ? xasprintf("%s/snapshots/%s", run, ws) : pathjoin(run, "snapshots");
	DIR *d = opendir(dir);
	free(dir);
	int best = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char *end;
		long n = strtol(de->d_name, &end, 10);
		if (end != de->d_name && strcmp(end, ".tar.zst") == 0 && n > 0 && (best == 0 || n < best))
			best = (int)n;
	}
	if (d)
		closedir(d);
	return best;
}

/* A limit of the record held to the default's when it is weaker (0 is none at all); says so. */
static int nolooser(int64_t *v, int64_t def, const char *who, const char *what)
{
	if (*v > 0 && *v <= def)
		return 0;
	fprintf(stderr, "nightshift: replay: WARNING: %s: the record's %s (%s%lld) is not taken; replaying with the "
	                "default's, %lld\n", who, what, *v > 0 ? "" : "none: ", (long long)*v, (long long)def);
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
		fprintf(stderr, "nightshift: replay: WARNING: %s: the record's limits: warn is not taken; a limit the "
		                "engine cannot enforce fails the step\n", who);
		sc->limits_warn = 0;
		n++;
	}
	if (sc->backend == BACKEND_NONE) {
		fprintf(stderr, "nightshift: replay: WARNING: %s: the record runs its commands without a sandbox "
		                "(backend none); replaying them in the namespace sandbox\n", who);
		sc->backend = BACKEND_NAMESPACE;
		n++;
	}
	if (sc->network_host || sc->network_allow) {
		fprintf(stderr, "nightshift: replay: WARNING: %s: the record's network access is not given; replaying "
		                "with network none\n", who);
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
			termprintf(stderr, "nightshift: replay: WARNING: %s: the record's mount %s -> %s is not made\n", who,
			           sc->mounts[i].source, sc->mounts[i].target);
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
		termprintf(stderr, "nightshift: replay: WARNING: %s: the record's sandbox.env (%s) is not passed in\n", who,
		           names.data);
		buffree(&names);
		strvfree(&sc->env);
		n++;
	}
	if (sc->backend == BACKEND_NAMESPACE && sc->image && strcmp(sc->image, "host") != 0) {
		termprintf(stderr, "nightshift: replay: WARNING: %s: the record's image %s is not used; the host's\n", who,
		           sc->image);
		free(sc->image);
		sc->image = xstrdup("host");
		n++;
	}
	return n;
}

static cJSON *runjson(const char *run, struct err *e)
{
	char *p = pathjoin(run, "run.json");
	struct buf b = {0};
	cJSON *j = readfile(p, &b, e) == 0 ? cJSON_Parse(b.data) : NULL;
	if (!j && !e->msg[0])
		errc(e, ERR_INPUT, "%s: not JSON", p);
	free(p);
	buffree(&b);
	return j;
}

int cmdreplay(int argc, char **argv)
{
	const char *run = NULL, *out = NULL, *mine = NULL;
	struct runopts o = {0};
	struct strv sets = {0}, overrides = {0};
	struct manifest m;
	struct err e = {0};
	int rc = EXIT_USAGE, loaded = 0;
	char *ws = NULL, *newrun = NULL, *mpath = NULL, *defout = NULL, *real = NULL, *unpacked = NULL;
	cJSON *rj = NULL;
	memset(&m, 0, sizeof m);
	int64_t maxu = 0;
	for (int i = 1; i < argc; i++) {
		int k;
		if (ishelp(argv[i])) {
			fputs(replayhelp, stdout);
			rc = EXIT_OK;
			goto done;
		} else if ((k = maxunpackflag("replay", argc, argv, &i, &maxu)) >= 0) {
			if (k != EXIT_OK)
				goto done;
		} else if (strcmp(argv[i], "--continue-live") == 0) {
			o.live = 1;
		} else if (strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "--job") == 0 || strcmp(argv[i], "--manifest") == 0) {
			if (i + 1 >= argc) {
				usage("replay", "%s needs a value", argv[i]);
				goto done;
			}
			if (strcmp(argv[i], "--out") == 0)
				out = argv[++i];
			else if (strcmp(argv[i], "--manifest") == 0)
				mine = argv[++i];
			else
				strvadd(&o.jobs, argv[++i]);
		} else if (argv[i][0] == '-') {
			usage("replay", "unknown flag %s", argv[i]);
			goto done;
		} else if (run) {
			usage("replay", "unexpected argument %s (one run at a time)", argv[i]);
			goto done;
		} else {
			run = argv[i];
		}
	}
	if (!run) {
		usage("replay", "missing RUN");
		goto done;
	}
	if (runopen(run, maxu, &real, &unpacked, &e) < 0) {
		rc = report(&e);
		goto done;
	}
	if (!(rj = runjson(real, &e))) {
		errctx(&e, "replay: %s is not a run directory", run);
		e.kind = ERR_INPUT;
		rc = report(&e);
		goto done;
	}
	/* What the night ran with: its manifest file, its inputs, its model overrides. */
	const char *mfile = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rj, "manifest"), "file"));
	cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(rj, "inputs"))
	{
		char *kv = xasprintf("%s=%s", it->string, cJSON_GetStringValue(it) ? it->valuestring : "");
		strvadd(&sets, kv);
		free(kv);
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(rj, "model_overrides"))
		if (cJSON_IsString(it))
			strvadd(&overrides, it->valuestring);
	if (!mfile || strchr(mfile, '/')) {
		rc = usage("replay", "%s/run.json names no manifest file", run);
		goto done;
	}
	char *given = realpath(run, NULL);
	defout = dirname_dup(given ? given : real);
	free(given);
	o.outdir = out ? out : defout;
	privacyapply(privacydeny(run) | privacydeny(o.outdir)); /* no more open than the run replayed */
	if (mkdirs(o.outdir, 0755, &e) < 0) {
		rc = usage("replay", "--out %s: %s", o.outdir, e.msg);
		goto done;
	}
	ws = xasprintf("%s/replay-workspace-XXXXXX", o.outdir);
	if (!mkdtemp(ws)) {
		rc = usage("replay", "--out %s: cannot make a workspace folder", o.outdir);
		free(ws);
		ws = NULL;
		goto done;
	}
	/* A run whose jobs had workspaces of their own: each restored into ws/<name>, the manifest's
	 * own into ws/default (empty when no job of the run worked there). */
	cJSON *spaces = cJSON_GetObjectItemCaseSensitive(rj, "workspaces");
	char *top = spaces ? pathjoin(ws, WSDEFAULT) : xstrdup(ws);
	if (spaces && mkdirs(top, 0755, &e) < 0) {
		free(top);
		rc = report(&e);
		goto done;
	}
	cJSON *sp;
	int nsp = cJSON_GetArraySize(spaces);
	cJSON_ArrayForEach(sp, spaces)
	{
		if (!runnameok(sp->string)) {
			free(top);
			rc = usage("replay", "%s/run.json names a workspace '%.80s' that is not a name", run, sp->string);
			goto done;
		}
	}
	for (sp = spaces ? spaces->child : NULL;; sp = sp->next) {
		if (spaces && !sp)
			break;
		const char *name = spaces ? sp->string : NULL;
		char *to = name ? pathjoin(ws, name) : xstrdup(ws);
		const char *chain = nsp > 1 ? name : NULL; /* one workspace: its layers are in snapshots/ */
		int first = firstlayer(real, chain);
		int src = snaprestorews(real, chain, first, to, 1, maxu, &e);
		if (src == 0)
			termprintf(stderr, "nightshift: replay: workspace %s restored from %s into %s\n", name ? name : "",
			        first ? "the first snapshot" : "the end snapshot (the run had no steps)", to);
		free(to);
		if (src < 0) {
			errctx(&e, "replay: restoring the workspace %s of %s", name ? name : "", run);
			free(top);
			rc = report(&e);
			goto done;
		}
		if (!spaces)
			break;
	}
	mpath = mine ? xstrdup(mine) : xasprintf("%s/manifest/%s", real, mfile);
	struct loadopts lo = {.sets = &sets, .workspace = top, .wsroot = spaces ? ws : NULL};
	loaded = 1;
	int lrc = loadmanifest(&m, mpath, &lo, &e);
	free(top);
	if (lrc < 0) {
		rc = report(&e);
		goto done;
	}
	if (!mine) {
		int dropped = distrust(&m.sandbox, "sandbox") + nolooser(&m.snapshot.max_size, DEF_MAXSIZE, "snapshot", "max_size");
		for (size_t i = 0; i < m.nworkers; i++) {
			char *who = xasprintf("worker %s", m.workers[i].name);
			dropped += distrust(&m.workers[i].sandbox, who);
			free(who);
		}
		for (size_t i = 0; i < m.njobs; i++) {
			char *who = xasprintf("job %s", m.jobs[i].id);
			dropped += distrust(&m.jobs[i].sandbox, who);
			free(who);
		}
		if (dropped)
			fprintf(stderr, "nightshift: replay: the record's commands run in a sandbox with the default settings; "
			                "give --manifest FILE to replay with settings of your own\n");
	}
	for (size_t i = 0; i < m.njobs; i++)
		if (m.jobs[i].sandbox.network_allow)
			fprintf(stderr, "nightshift: replay: job %s's steps reach the hosts of its network.allow again, live: "
			                "their connections are recorded as new ones, not served from the record or compared "
			                "with it\n", m.jobs[i].id);
	for (size_t i = 0; i < overrides.n; i++) {
		if (modelspec(&m, overrides.v[i], &e) < 0) {
			errctx(&e, "replay: the run was started with");
			rc = report(&e);
			goto done;
		}
	}
	/* Without --job, the jobs the record ran (a run of selected jobs replays as that). */
	cJSON *ran = o.jobs.n ? NULL : cJSON_GetObjectItemCaseSensitive(rj, "jobs");
	cJSON_ArrayForEach(it, ran)
		if (!cJSON_GetObjectItemCaseSensitive(it, "parent") && manifestjob(&m, it->string))
			strvadd(&o.jobs, it->string);
	o.replay = real;
	o.replayof = run;
	progressstart(0);
	o.overrides = &overrides;
	rc = runmanifest(&m, &o, &newrun, &e);
	rc = rc < 0 ? rc : exitforrun(rc);
	if (newrun) {
		printf("%s\n", newrun);
		fflush(stdout);
	}
	if (rc < 0) {
		rc = report(&e);
		goto done;
	}
	struct buf first_diff = {0};
	int d = rundiff(real, newrun, loaded ? &m.snapshot.exclude : NULL, &first_diff, &e);
	if (d < 0) {
		rc = report(&e);
	} else if (d > 0) {
		termprintf(stderr, "nightshift: replay diverged: %s\n", first_diff.data);
		rc = o.live ? rc : EXIT_DIVERGED;
	} else {
		fprintf(stderr, "nightshift: replay matches the record\n");
		rc = EXIT_OK;
	}
	buffree(&first_diff);
done:
	if (loaded)
		manifestfree(&m);
	cJSON_Delete(rj);
	strvfree(&o.jobs);
	strvfree(&sets);
	strvfree(&overrides);
	if (ws)
		snapremove(ws); /* the replay's workspace, on every way out */
	free(ws);
	free(newrun);
	free(mpath);
	free(defout);
	runclose(real, unpacked);
	return rc;
}
