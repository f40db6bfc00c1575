/* diff: nightshift diff RUN --step N: what a step changed in the workspace; nightshift diff RUN
 * [--job J]: a job's or the run's whole change, as a patch git apply takes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "../snapshot/layername.h"
#include "../artifacts/calls.h"
#include "../artifacts/changes.h"
#include "../artifacts/rundir.h"
#include "../artifacts/patch.h"
#include "../util/term.h"
#include "../util/linediff.h"

static const char helptext[] =
	"usage: nightshift diff RUN [--job J] [> changes.patch]\n"
	"       nightshift diff RUN --step N|end [--workspace NAME]\n"
	"\n"
	"Without --step: the whole change of job J (from before its first step to after its last), or\n"
	"of the run (each workspace from its first layer to its end), as a git patch: `git apply`\n"
	"takes it on a checkout of the starting tree (text hunks, GIT binary patch literals, modes,\n"
	"new and deleted files, symlinks). The patch is raw bytes of the run's files, meant for a pipe\n"
	"or a file; printed to a terminal, controls in it are shown escaped (util/term.h) instead, and\n"
	"under GitHub Actions (GITHUB_ACTIONS=true) anything but a redirect to a file is the step's log:\n"
	"there workflow commands in it (\"::\" opening a line, \"##[\") are broken too; use > FILE.\n"
	"Each job that changed its workspace also left it in RUN/jobs/J/changes.patch. A run whose jobs\n"
	"had workspaces of their own gives each file's path under its workspace's name (repos_api/f for\n"
	"repos/api/f; run.json's workspaces): apply a job's patch, or --job J's, in its own workspace.\n"
	"\n"
	"With --step N: prints what step N changed in the workspace, read from RUN's snapshot layers: a unified diff\n"
	"(git's format) for each text file up to 64 KiB, one line for anything else (\"A\" added,\n"
	"\"M\" changed, \"D\" deleted, with its kind and size). A layer is taken before each sandboxed\n"
	"step, so the changes of steps with no layer between them (file tools) are shown together,\n"
	"and the header says which steps they span. RUN is a run directory or its .tar.zst.\n"
	"A run whose jobs worked in several workspaces has a chain of layers for each\n"
	"(RUN/snapshots/NAME/): the step's own is found (the one with a layer for the step, else the\n"
	"workspace of the job that made it); --workspace NAME says which. --step end is the last\n"
	"step: what changed after it, until the end layer (as restore --step end restores it).\n"
	"\n" MAXUNPACKHELP
	"\n"
	"exit codes: 0 printed, 2 usage or input error (no such run or step), 4 a layer or the job's log is\n"
	"            not as SHA256SUMS holds it, cannot be read, or would expand past --max-unpack\n";

static const char *kindname(char type)
{
	return type == 'f' ? "file" : type == 'd' ? "directory" : type == 'l' ? "symlink" : "special file";
}

/* One change: a unified diff for text, a line for the rest. Paths and contents come from the
 * run's layers (a model wrote them): through the one sanitiser, paths on one line. */
static void printchange(const struct change *c)
{
	int text = c->type == 'f' && (c->kind == 'D' || c->after) && (c->kind == 'A' || c->before) &&
	           changestext(c->before, c->nbefore) && changestext(c->after, c->nafter);
	if (c->kind == 'A' && c->type == 'f' && c->after && changestext(c->after, c->nafter))
		text = 1;
	if (c->kind == 'D' && c->type == 'f' && c->before && changestext(c->before, c->nbefore))
		text = 1;
	char *path = termclean(c->path, TERM_ONELINE);
	if (!text) {
		printf("%c %s (%s%s, %lld bytes)\n", c->kind, path, c->type == 'f' && (c->after || c->before) ? "binary " : "",
		       kindname(c->type), (long long)c->size);
		free(path);
		return;
	}
	struct buf out = {0};
	const char *a = c->kind == 'A' ? "" : c->before, *b = c->kind == 'D' ? "" : c->after;
	size_t na = c->kind == 'A' ? 0 : c->nbefore, nb = c->kind == 'D' ? 0 : c->nafter;
	printf("--- %s%s\n+++ %s%s\n", c->kind == 'A' ? "/dev/null" : "a/", c->kind == 'A' ? "" : path,
	       c->kind == 'D' ? "/dev/null" : "b/", c->kind == 'D' ? "" : path);
	free(path);
	if (linediff(a, na, b, nb, 3, 4000, &out) == 1) {
		printf("(more than 4000 lines differ: %zu bytes before, %zu after)\n", na, nb);
	} else {
		/* a NUL inside text would end the sanitiser's string early: shown as \x00 first */
		struct buf z = {0};
		for (size_t i = 0; i < out.len; i++)
			out.data[i] ? bufputc(&z, out.data[i]) : bufputs(&z, "\\x00");
		char *safe = termclean(z.data ? z.data : "", 0);
		fputs(safe, stdout);
		free(safe);
		buffree(&z);
	}
	buffree(&out);
}

/* A job's or the run's whole change as a patch: raw to a pipe or file, sanitised to a terminal
 * and to the GitHub Actions log (a pipe under Actions: a workspace line "::error::x" or a model's
 * "##[warning]" would be a workflow command there). */
static int wholediff(const char *run, const char *job, int64_t maxu)
{
	struct err e = {0};
	char *dir, *tmp;
	if (runopen(run, maxu, &dir, &tmp, &e) < 0)
		return report(&e);
	struct buf out = {0};
	/* a job's steps are read from its event log: only as SHA256SUMS holds it, as its layers are */
	char *held = job ? xasprintf("jobs/%s/", job) : NULL;
	long n = -1;
	if (!held || rundirheld(dir, held, &e) == 0)
		n = job ? patchjob(dir, job, 0, maxu, NULL, NULL, &out, &e) : patchrun(dir, maxu, &out, &e);
	free(held);
	runclose(dir, tmp);
	int code = EXIT_OK;
	if (n < 0) {
		code = report(&e);
	} else if (isatty(STDOUT_FILENO) || termactionslog(STDOUT_FILENO)) {
		bufputc(&out, 0);
		char *clean = termclean(out.data, termactionslog(STDOUT_FILENO) ? TERM_ACTIONS : 0);
		fputs(clean, stdout);
		free(clean);
	} else if (out.len && fwrite(out.data, 1, out.len, stdout) != out.len) {
		code = EXIT_FAILED;
	}
	if (n == 0)
		fprintf(stderr, "nightshift: diff: %s%s%s changed nothing in its workspace\n", job ? "job " : "", job ? job : run,
		        "");
	buffree(&out);
	return code;
}

int cmddiff(int argc, char **argv)
{
	const char *run = NULL, *step = NULL, *wsname = NULL, *job = NULL;
	int64_t maxu = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int k;
		if (ishelp(a)) {
			fputs(helptext, stdout);
			return EXIT_OK;
		}
		if ((k = maxunpackflag("diff", argc, argv, &i, &maxu)) >= 0) {
			if (k != EXIT_OK)
				return k;
		} else if (flagis(a, "--step")) {
			if (!(step = flagarg("diff", argc, argv, &i, "a step number")))
				return EXIT_USAGE;
		} else if (flagis(a, "--job")) {
			if (!(job = flagarg("diff", argc, argv, &i, "a job id")))
				return EXIT_USAGE;
		} else if (flagis(a, "--workspace")) {
			if (!(wsname = flagarg("diff", argc, argv, &i, "a name (a folder of RUN/snapshots)")))
				return EXIT_USAGE;
		} else if (positional("diff", a, &run, "RUN") != 0) {
			return EXIT_USAGE;
		}
	}
	if (!run)
		return usage("diff", "missing RUN (a run directory or its .tar.zst)");
	if (!step)
		return wholediff(run, job, maxu);
	if (job)
		return usage("diff", "--job and --step: a step is the run's, give one of them");
	char *end;
	int atend = strcmp(step, "end") == 0; /* the last step's changes: the end layer, as restore says */
	long n = atend ? 1 : strtol(step, &end, 10);
	if (!atend && (*end || end == step || n < 1 || n > LAYERSTEPMAX))
		return usage("diff", "--step %s: want a step number from 1, or 'end'", step);
	struct err e = {0};
	char *dir, *tmp;
	if (runopen(run, maxu, &dir, &tmp, &e) < 0)
		return report(&e);
	struct runchanges rc;
	int code = EXIT_OK, last = runlaststep(dir, &e);
	if (last < 0) {
		runclose(dir, tmp);
		return report(&e);
	}
	if (atend && last < 1) {
		runclose(dir, tmp);
		fprintf(stderr, "nightshift: diff: %s ran no step: no change to show\n", run);
		return EXIT_USAGE;
	}
	if (atend)
		n = last;
	if (n > last) {
		runclose(dir, tmp);
		fprintf(stderr, "nightshift: diff: %s has %d step%s; there is no step %ld\n", run, last, last == 1 ? "" : "s", n);
		return EXIT_USAGE;
	}
	char *ws = wsname ? xstrdup(wsname) : changesstepws(dir, (int)n, &e);
	if (!ws) {
		code = report(&e);
	} else if (rundirheld(dir, "snapshots/", &e) < 0 || changesread(dir, maxu, &rc, &e) < 0) {
		code = report(&e); /* only layers verification accepts are shown, as restore reads them */
	} else {
		const struct layerchanges *l = changesofstep(&rc, ws, (int)n);
		if (!l) {
			termprintf(stderr, "nightshift: diff: %s has no snapshot layer taken after step %ld%s%s%s\n", run, n,
			        *ws ? " in the chain of workspace " : "", ws, rc.n ? "" : " (it has no layers)");
			code = EXIT_USAGE;
		} else {
			char in[200] = "";
			if (*ws)
				snprintf(in, sizeof in, " in workspace %.150s", ws);
			if (l->base) {
				char steps[64];
				snprintf(steps, sizeof steps, l->to - l->from > 1 ? "steps %d to %d" : "step %d", l->from, l->to - 1);
				termprintf(stdout, "# step %ld: what changed%s in %s and until the chain began again with a full layer before "
				       "step %d (%s): the layer after the step is missing, %zu change%s\n",
				       n, in, steps, l->to, l->layer, l->n, l->n == 1 ? "" : "s");
			}
			else if (l->to == 0)
				termprintf(stdout, "# step %ld: what changed%s after step %d, until the end of the run (%s), %zu change%s\n", n,
				       in, l->from, l->layer, l->n, l->n == 1 ? "" : "s");
			else if (l->to - l->from > 1)
				termprintf(stdout, "# step %ld: what changed%s in steps %d to %d (%s), %zu change%s\n", n, in, l->from,
				       l->to - 1, l->layer, l->n, l->n == 1 ? "" : "s");
			else
				termprintf(stdout, "# step %ld: %zu change%s%s (%s)\n", n, l->n, l->n == 1 ? "" : "s", in, l->layer);
			for (size_t i = 0; i < l->n; i++)
				printchange(&l->v[i]);
		}
		changesfree(&rc);
	}
	free(ws);
	runclose(dir, tmp);
	return code;
}
