/* run: nightshift run MANIFEST [--out DIR] [-j N] [--job ID]... */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../artifacts/finalize.h"
#include "../artifacts/rundir.h"
#include "../artifacts/sign.h"
#include "../artifacts/runjson.h"
#include "../manifest/manifest.h"
#include "../util/cancel.h"
#include "../util/privacy.h"
#include "../llm/modelspec.h"
#include "../run/doctor.h"
#include "gha.h"
#include "../run/run.h"
#include "../run/shard.h"
#include "../util/term.h"
#include "cmd.h"

static const char runhelp[] =
	"usage: nightshift run MANIFEST [--out DIR] [-j N] [--job ID]... [--set KEY=VALUE]...\n"
	"                      [--model NAME=SPEC]... [--sign KEY] [--resume RUN | --from RUN... | --shard I/N]\n"
	"                      [--allowed-signers FILE]\n"
	"                      [--events PATH] [--quiet]\n"
	"\n"
	"Runs the manifest's jobs (or the selected ones with the jobs they need) and prints the\n"
	"absolute path of the run directory on stdout as soon as it is made; progress goes to stderr.\n"
	"  --out DIR   folder to make the run directory in (default: runs/ beside the manifest)\n"
	"  -j N        jobs run at once (default 1)\n"
	"  --shard I/N only group I of N (see nightshift plan); an empty group runs nothing\n"
	"  --from RUN  jobs that finished in RUN are taken from it, not run again; repeatable.\n"
	"              Jobs taken that did not succeed there fail this run too\n"
	"  --resume RUN  rerun the jobs of RUN that did not succeed and the jobs that need them;\n"
	"              the others are carried over from RUN (verified first) into the new run,\n"
	"              with RUN's inputs unless --set is given (only from a RUN --allowed-signers\n"
	"              checks; else --set must give them); exits by the outcome of the whole\n"
	"  --sign KEY  sign the run: SHA256SUMS.sig, an OpenSSH signature (namespace nightshift) by the\n"
	"              unencrypted Ed25519 private key file KEY (default: $NIGHTSHIFT_SIGNING_KEY, a path)\n"
	"  --allowed-signers FILE  the runs of --resume and --from must be signed by a key FILE lists\n"
	"              (ssh-keygen's allowed_signers format), checked before anything is taken. With\n"
	"              --sign, a signed RUN is refused unless FILE checked it (docs/security.md)\n"
	"  --quiet     no progress on stderr (errors still)\n"
	"  --events PATH  every event as it happens, one JSON object a line (docs/events.md);\n"
	"              - writes them to stderr in place of the progress lines\n"
	"  --fail-on-deny  a call the approval rules deny fails its job (as approval.on_deny: fail)\n"
	"  --job ID    run only this job and what it needs; repeatable\n"
	"  --set K=V   the value of ${{ inputs.K }}; repeatable\n"
	"  --model NAME=SPEC  replace the manifest's model NAME; repeatable. SPEC is\n"
	"              scripted:FILE, or (openai|anthropic):MODEL[@URL][,key=ENV][,timeout=D]\n"
	"              [,retries=N][,max_output_tokens=N][,temperature=X]\n"
	"exit codes: 0 all selected jobs succeeded, 1 a job failed, 2 usage or manifest error,\n"
	"            3 an approval rule aborted a job, 130 interrupted (SIGINT or SIGTERM; artifacts sealed)\n";

/* First SIGINT/SIGTERM: stop new work, kill running steps, seal the run. Second: leave now;
 * what was written stays verifiable (every event line is flushed as it is written). */
static void onsignal(int sig)
{
	static volatile sig_atomic_t seen;
	(void)sig;
	if (seen++)
		_exit(EXIT_INTERRUPTED);
	static const char msg[] = "nightshift: stopping: killing running steps and sealing the run (again to quit now)\n";
	ssize_t n = write(2, msg, sizeof msg - 1);
	(void)n;
	cancelnow();
}

static void catchsignals(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = onsignal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Say so when earlier runs in outdir have no run.json: still running (which pid), or killed. */
static void unfinished(const char *outdir)
{
	DIR *d = opendir(outdir);
	struct dirent *de;
	int shown = 0;
	while (d && (de = readdir(d)) && shown < 5) {
		if (de->d_name[0] == '.')
			continue;
		char *p = pathjoin(outdir, de->d_name);
		long pid = rununfinished(p) ? rundirholder(p) : 0;
		if (rununfinished(p) && pid > 0)
			fprintf(stderr, "nightshift: note: %s is still running (pid %ld)\n", p, pid);
		else if (rununfinished(p) && pid < 0)
			fprintf(stderr, "nightshift: note: %s is still running (a live process holds it)\n", p);
		else if (rununfinished(p))
			fprintf(stderr, "nightshift: note: %s never finished and no process holds it (killed); "
			                "`nightshift finalize %s` seals it\n", p, p);
		shown += rununfinished(p);
		free(p);
	}
	if (d)
		closedir(d);
}

/* --resume without --set: the inputs RUN ran with (a matrix from an input makes the same jobs). */
/* RUN's inputs for --resume without --set. A record's values would be a stranger's text in the
 * manifest's paths, URLs, headers and prompts: taken only when --allowed-signers checks RUN
 * (before anything runs); else the user gives them with --set, and this says which. */
static int resumeinputs(const char *run, const char *allowed, struct strv *sets)
{
	struct err e = {0};
	cJSON *r = runjsonread(run, &e), *it;
	if (!r) {
		usage("run", "--resume %s: %s", run, e.msg);
		return -1;
	}
	struct buf names = {0};
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "inputs"))
		if (cJSON_IsString(it)) {
			char *kv = xasprintf("%s=%s", it->string, it->valuestring);
			strvadd(sets, kv);
			free(kv);
			bufprintf(&names, "%s%.80s", names.len ? ", " : "", it->string);
		}
	cJSON_Delete(r);
	int rc = 0;
	if (names.len && !allowed) {
		usage("run", "--resume %s: its inputs (%s) are the record's, taken only from a run whose signature "
		      "--allowed-signers FILE checks; give your values with --set KEY=VALUE", run, names.data);
		rc = -1;
	}
	buffree(&names);
	return rc;
}

int cmdrun(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *v, *signpath = NULL, *events = NULL;
	struct signkey *key = NULL;
	struct runopts o = {0};
	struct strv sets = {0}, models = {0}, from = {0};
	int rc = EXIT_USAGE, quiet = 0, ghadone = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (ishelp(a)) {
			fputs(runhelp, stdout);
			rc = EXIT_OK;
			goto done;
		} else if (flagis(a, "--quiet") || strcmp(a, "-q") == 0) {
			if (flagnoval("run", a))
				goto done;
			quiet = 1;
		} else if (flagis(a, "--fail-on-deny")) {
			if (flagnoval("run", a))
				goto done;
			o.fail_on_deny = 1;
		} else if (flagis(a, "--out")) {
			if (!(out = flagarg("run", argc, argv, &i, "a directory")))
				goto done;
		} else if (flagis(a, "--events")) {
			if (!(events = flagarg("run", argc, argv, &i, "a path (- for stderr)")))
				goto done;
		} else if (flagis(a, "--sign")) {
			if (!(signpath = flagarg("run", argc, argv, &i, "a key file")))
				goto done;
		} else if (flagis(a, "--shard")) {
			struct err se = {0};
			if (!(v = flagarg("run", argc, argv, &i, "I/N")))
				goto done;
			if (shardparse(v, &o.shard, &o.nshards, &se) < 0) {
				usage("run", "%s", se.msg);
				goto done;
			}
		} else if (flagis(a, "--from")) {
			if (!(v = flagarg("run", argc, argv, &i, "a run")))
				goto done;
			strvadd(&from, v);
		} else if (flagis(a, "--allowed-signers")) {
			if (!(o.allowed = flagarg("run", argc, argv, &i, "a file")))
				goto done;
		} else if (flagis(a, "--resume")) {
			if (!(o.resume = flagarg("run", argc, argv, &i, "a run")))
				goto done;
		} else if (flagis(a, "--job")) {
			if (!(v = flagarg("run", argc, argv, &i, "a job id")))
				goto done;
			strvadd(&o.jobs, v);
		} else if (flagis(a, "--set")) {
			if (setflag("run", argc, argv, &i, &sets))
				goto done;
		} else if (flagis(a, "--model")) {
			if (!(v = flagarg("run", argc, argv, &i, "NAME=SPEC")))
				goto done;
			strvadd(&models, v);
		} else if (strcmp(a, "-j") == 0) {
			if (!(v = flagarg("run", argc, argv, &i, "a number of jobs")))
				goto done;
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || n < 1 || n > 256) {
				usage("run", "-j %s: expected a number of jobs from 1 to 256", v);
				goto done;
			}
			o.parallel = (int)n;
		} else if (positional("run", a, &path, "manifest")) {
			goto done;
		}
	}
	if (!path) {
		usage("run", "missing MANIFEST");
		goto done;
	}
	if (o.nshards && o.jobs.n) {
		usage("run", "--shard and --job do not go together");
		goto done;
	}
	if (o.resume && (from.n || o.nshards)) {
		usage("run", "--resume does not go with %s", from.n ? "--from" : "--shard");
		goto done;
	}
	if (o.allowed && !o.resume && !from.n) {
		usage("run", "--allowed-signers checks the runs of --resume and --from; give one of them");
		goto done;
	}
	if (signersopt("run", o.allowed) != EXIT_OK)
		goto done;
	if (o.resume && !sets.n && resumeinputs(o.resume, o.allowed, &sets) < 0)
		goto done;
	o.from = &from;
	struct manifest m;
	struct err e = {0};
	if ((rc = loadorsay(&m, path, &sets)) != EXIT_OK)
		goto done;
	for (size_t i = 0; i < models.n; i++) {
		if (modelspec(&m, models.v[i], &e) < 0) {
			termprintf(stderr, "nightshift: run: %s\n", e.msg);
			ghamistake(stderr, e.msg);
			manifestfree(&m);
			rc = EXIT_USAGE;
			goto done;
		}
	}
	for (size_t i = 0; i < m.njobs; i++)
		if (m.jobs[i].sandbox.backend == BACKEND_NONE) {
			fprintf(stderr, "nightshift: warning: job %s uses sandbox backend 'none': its commands run on this "
			                "machine with NO isolation\n", m.jobs[i].id);
		} else if (m.jobs[i].sandbox.network_host) {
			fprintf(stderr, "nightshift: warning: job %s uses network: host: its steps reach every host and "
			                "service this machine can, unrecorded (network: { allow: [...] } names hosts and "
			                "records each connection)\n", m.jobs[i].id);
		}
	/* Snapshots, patches and the sandbox's views make private temporary folders: a TMPDIR this
	 * user cannot write is said here, exit 2, not found after the night as a missing patch. */
	{
		int relative = 0;
		if (doctortmp(&relative, &e) < 0) {
			rc = report(&e);
			manifestfree(&m);
			goto done;
		}
	}
	/* The namespace sandbox is tried before anything is made or spent, as doctor does: a machine
	 * that refuses it fails here with the cause and the remedy, exit 2, no run directory. */
	for (size_t i = 0; i < m.njobs; i++) {
		int selected = o.jobs.n == 0;
		for (size_t k = 0; k < o.jobs.n && !selected; k++)
			selected = strcmp(o.jobs.v[k], m.jobs[i].id) == 0 ||
			           (m.jobs[i].group && strcmp(o.jobs.v[k], m.jobs[i].group) == 0);
		if (!selected || m.jobs[i].sandbox.backend != BACKEND_NAMESPACE)
			continue;
		char limits[128];
		if (doctorsandbox(&m.jobs[i].sandbox, limits, &e) < 0) {
			/* the cause says whose it is: the machine's (user namespaces refused) or the manifest's */
			errctx(&e, "job %s: the namespace sandbox cannot start (nightshift doctor says more)",
			       m.jobs[i].id);
			rc = report(&e);
			manifestfree(&m);
			goto done;
		}
		break; /* one try tells for all: the machine is the same */
	}
	if ((rc = signkeyopt("run", signpath, &m, &key)) != EXIT_OK) {
		manifestfree(&m);
		goto done;
	}
	rc = EXIT_USAGE;
	o.sign = key;
	char *outfrom = NULL, *defout = runfolder(&m, out, &outfrom);
	o.outdir = defout;
	o.overrides = &models;
	if (runfolderok(o.outdir, outfrom, &e) < 0) {
		if (out) {
			usage("run", "%s", e.msg);
		} else {
			termprintf(stderr, "nightshift: run: %s\n", e.msg);
			ghamistake(stderr, e.msg);
		}
		free(defout);
		free(outfrom);
		manifestfree(&m);
		goto done;
	}
	/* Run directories record the workspaces: no more open than the most private of them. */
	mode_t deny = privacydeny(m.workspace) | privacydeny(o.outdir);
	for (size_t i = 0; i < m.njobs; i++)
		if (m.jobs[i].workspace)
			deny |= privacydeny(m.jobs[i].workspace);
	privacyapply(deny);
	if (mkdirs(o.outdir, 0755, &e) < 0) {
		termprintf(stderr, "nightshift: run: run directories go in %s (%s): %s\n", o.outdir, outfrom, e.msg);
		ghamistake(stderr, e.msg);
		free(defout);
		free(outfrom);
		manifestfree(&m);
		goto done;
	}
	unfinished(o.outdir);
	char *rundir = NULL;
	if (progressstart("run", quiet, events) < 0) {
		free(defout);
		free(outfrom);
		manifestfree(&m);
		goto done;
	}
	cancelinit();
	catchsignals();
	rc = runmanifest(&m, &o, &rundir, &e);
	rc = rc < 0 ? rc : exitforrun(rc);
	if (!progressstop() && rundir) { /* absolute: a script may cd elsewhere before it uses it */
		char *abs = realpath(rundir, NULL);
		printf("%s\n", abs ? abs : rundir);
		free(abs);
	}
	fflush(stdout);
	if (rc < 0)
		rc = report(&e);
	struct err ge = {0};
	ghadone = 1;
	if (gharun(rundir, rc, stderr, &ge) < 0)
		termprintf(stderr, "nightshift: run: GitHub Actions: %s\n", ge.msg);
	free(rundir);
	free(defout);
	free(outfrom);
	manifestfree(&m);
done:
	if (rc == EXIT_USAGE && !ghadone) {
		/* Nothing ran: status=error and exit-code for the workflow (the mistake is annotated). */
		struct err ue = {0};
		if (gharun(NULL, rc, NULL, &ue) < 0)
			termprintf(stderr, "nightshift: run: GitHub Actions: %s\n", ue.msg);
	}
	signkeyfree(key);
	strvfree(&o.jobs);
	strvfree(&sets);
	strvfree(&models);
	strvfree(&from);
	return rc;
}
