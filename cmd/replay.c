/* replay: nightshift replay RUN [--manifest FILE] [--out DIR] [--job ID]... [--strict] [--continue-live]
 * Flags, printing and exit codes; the replay itself is run/replay.c, the comparison artifacts/diff.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../run/replay.h"
#include "../run/run.h"
#include "../util/privacy.h"
#include "../run/doctor.h"
#include "../util/term.h"
#include "cmd.h"

static const char replayhelp[] =
	"usage: nightshift replay RUN [--manifest FILE] [--out DIR] [--job ID]... [--strict] [--continue-live]\n"
	"                        [--set KEY=VALUE]... [--events PATH] [--quiet]\n"
	"\n"
	"Restores the workspace from RUN's first snapshot into a fresh folder (modes and times too), runs\n"
	"the manifest archived in RUN/manifest/ with the model's replies served from the record turn by\n"
	"turn (no key, no network), really runs the tools, and compares each step with the record by\n"
	"what it did: its exit status (code, signal, timeout), its change to the workspace (files\n"
	"added, removed, changed in content, mode or kind; not times), its decision, and whether it\n"
	"happened; then each job's status, output.json and declared files. A difference there is a\n"
	"divergence: exit 4, naming the job, the step and what differs (a file with a text diff).\n"
	"A step whose only difference is what it printed is drift: listed with a short diff, counted,\n"
	"exit 0. Paths the workspace's .gitignore files ignore (asked of git, when installed) are no\n"
	"effect; a git index (.git/index) is compared by the entries it lists. MCP calls are answered\n"
	"from the record. Prints the new run directory; its run.json names the run it replays. Steps\n"
	"under sandbox.network.allow reach their hosts again: their connections are recorded anew.\n"
	"  --manifest FILE  run this manifest (yours) instead of the archived one: its sandbox, mounts,\n"
	"                   env and rules. Without it the archive's sandbox settings are a stranger's:\n"
	"                   backend none, network, mounts, sandbox.env and a rootfs image are replaced\n"
	"                   by the defaults, each one said on stderr, and its ${{ env.NAME }} expand\n"
	"                   to nothing (a record gets none of your environment). Every file it names\n"
	"                   is read from RUN/manifest/, never the host; its skills folders are not.\n"
	"                   With --manifest the record's inputs are not given to yours: --set them\n"
	"  --strict         drift counts as a divergence: any byte of output that differs exits 4\n"
	"  --continue-live  where the record has no more replies (or its reply was an error) the live\n"
	"                   model answers; differences are still listed, the exit code is the run's.\n"
	"                   Needs --manifest FILE: the live models, their endpoints, keys, headers and\n"
	"                   budgets are yours, never the record's (its --model overrides are dropped)\n"
	"  --out DIR        folder to make the run directory in (default: beside RUN)\n"
	"  --events PATH    every event as it happens, one JSON object a line (docs/events.md);\n"
	"                   - writes them to stderr in place of the progress lines\n"
	"  --quiet          no progress on stderr (errors still)\n"
	"  --job ID         replay only this job and what it needs; repeatable\n"
	"  --set KEY=VALUE  an input for ${{ inputs.KEY }} (yours; wins over the record's); repeatable\n" MAXUNPACKHELP
	"To make a night replayable: keep build caches and tool state out of its effects (list them in\n"
	"the workspace's .gitignore, e.g. __pycache__/ and .pytest_cache/, or in snapshot.exclude), and\n"
	"give --manifest when steps read mounted inputs. See docs/replay.md.\n"
	"exit codes: 0 nothing diverged (drift is listed), 4 something did (or drift under --strict),\n"
	"            or a layer of the first snapshot is refused (past --max-unpack, not as listed),\n"
	"            2 usage or a RUN that cannot be replayed\n";

int cmdreplay(int argc, char **argv)
{
	const char *run = NULL, *out = NULL, *mine = NULL;
	struct strv jobs = {0}, sets = {0};
	struct err e = {0};
	int rc = EXIT_USAGE, live = 0, strict = 0, quiet = 0;
	const char *events = NULL;
	char *defout = NULL, *real = NULL, *unpacked = NULL;
	int64_t maxu = 0;
	struct replayresult res;
	memset(&res, 0, sizeof res);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], **slot = NULL, *what = NULL;
		int *on = NULL, k;
		if (ishelp(a)) {
			fputs(replayhelp, stdout);
			rc = EXIT_OK;
			goto done;
		} else if ((k = maxunpackflag("replay", argc, argv, &i, &maxu)) >= 0) {
			if (k != EXIT_OK)
				goto done;
		} else if (flagis(a, "--set")) {
			if (setflag("replay", argc, argv, &i, &sets))
				goto done;
		} else if (flagis(a, "--continue-live")) {
			on = &live;
		} else if (flagis(a, "--strict")) {
			on = &strict;
		} else if (flagis(a, "--quiet") || strcmp(a, "-q") == 0) {
			on = &quiet;
		} else if (flagis(a, "--out")) {
			slot = &out, what = "a directory";
		} else if (flagis(a, "--events")) {
			slot = &events, what = "a path (- for stderr)";
		} else if (flagis(a, "--manifest")) {
			slot = &mine, what = "a file";
		} else if (flagis(a, "--job")) {
			const char *v = flagarg("replay", argc, argv, &i, "a job id");
			if (!v)
				goto done;
			strvadd(&jobs, v);
		} else if (a[0] == '-') {
			usage("replay", "unknown flag %s", a);
			goto done;
		} else if (run) {
			usage("replay", "unexpected argument %s (one run at a time)", a);
			goto done;
		} else {
			run = a;
		}
		if (on && flagnoval("replay", a))
			goto done;
		if (on)
			*on = 1;
		if (slot && !(*slot = flagarg("replay", argc, argv, &i, what)))
			goto done;
	}
	if (!run) {
		usage("replay", "missing RUN");
		goto done;
	}
	if (live && !mine) {
		usage("replay", "--continue-live needs --manifest FILE: the record's models (endpoints, API key variables, "
		      "headers, budgets) are a stranger's and are not trusted with your keys; give your own models with "
		      "--manifest FILE");
		goto done;
	}
	if (runopen(run, maxu, &real, &unpacked, &e) < 0) {
		rc = report(&e);
		goto done;
	}
	char *given = realpath(run, NULL);
	defout = dirname_dup(given ? given : real);
	free(given);
	struct replayopts o = {run, real, out ? out : defout, mine, &jobs, &sets, live, maxu};
	if (runfolderok(o.outdir, out ? "--out" : "beside RUN, the default", &e) < 0) {
		rc = out ? usage("replay", "%s", e.msg) : report(&e);
		goto done;
	}
	privacyapply(privacydeny(run) | privacydeny(o.outdir)); /* no more open than the run replayed */
	if (progressstart("replay", quiet, events) < 0)
		goto done;
	int r = replayrun(&o, &res, &e);
	if (!progressstop() && res.newrun) {
		printf("%s\n", res.newrun);
		fflush(stdout);
	}
	if (r < 0) {
		rc = report(&e);
		goto done;
	}
	const struct difffound *f = &res.found;
	if (f->drifted && strict)
		termprintf(stderr, "nightshift: replay diverged (--strict: printed output counts): %s", f->drift.data);
	else if (f->drifted)
		termprintf(stderr, "nightshift: replay: drift (printed output only, the effects are the same):\n%s",
		           f->drift.data);
	if (f->diverged)
		termprintf(stderr, "nightshift: replay diverged: %s", f->divergence.data);
	int diverged = f->diverged || (strict && f->drifted);
	fprintf(stderr, "nightshift: replay: %d step%s compared: %d diverged, %d drifted%s\n", f->steps,
	        f->steps == 1 ? "" : "s", f->diverged, f->drifted, strict && f->drifted ? " (--strict: divergences)" : "");
	if (!diverged)
		fprintf(stderr, "nightshift: replay matches the record%s\n", f->drifted ? " in every effect" : "");
	rc = exitforrun(res.end);
	if (diverged && !live)
		rc = EXIT_DIVERGED;
	else if (!diverged && !live)
		rc = EXIT_OK;
done:
	strvfree(&jobs);
	strvfree(&sets);
	replayresultfree(&res);
	free(defout);
	runclose(real, unpacked);
	return rc;
}
