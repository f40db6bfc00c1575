/* prune: nightshift prune DIR [--keep N] [--older-than D] [--dry-run]: old runs removed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "../artifacts/prune.h"

static const char helptext[] =
	"usage: nightshift prune DIR [--keep N] [--older-than D] [--dry-run]\n"
	"\n"
	"Removes old run directories from DIR, the folder runs are made in (runs/ beside a manifest,\n"
	"or run --out): those past the newest N (--keep, default 1 with --older-than alone) and, with\n"
	"--older-than D (e.g. 7d, 12h, 30m), only those older than D by the time their name begins\n"
	"with. Never removed: the newest run, a run that a live runner still writes (it holds a lock on\n"
	"its folder), and anything that is not a run directory (left alone). A run's report beside it\n"
	"(RUN.html, report's default) goes with it. Prints each run and report removed,\n"
	"one path a line on stdout (\"would remove\" with --dry-run); a run in use is said on stderr.\n"
	"\n"
	"exit codes: 0 done (even when nothing was old enough), 1 a run this user cannot remove (a\n"
	"            folder in it another user owns: left whole, said on stderr), 2 usage, or DIR\n"
	"            is not a folder of runs (a run directory itself is refused)\n";

/* A duration with days too: "7d", else as parseduration ("12h", "30m", "90s"). */
static int olderthan(const char *s, int64_t *ms)
{
	size_t n = strlen(s);
	if (n > 1 && s[n - 1] == 'd') {
		char *end;
		long d = strtol(s, &end, 10);
		if (end != s + n - 1 || d < 1 || d > 100000)
			return -1;
		*ms = (int64_t)d * 86400000;
		return 0;
	}
	return parseduration(s, ms) < 0 || *ms <= 0 ? -1 : 0;
}

int cmdprune(int argc, char **argv)
{
	const char *dir = NULL, *keeps = NULL, *older = NULL;
	int dry = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (ishelp(a)) {
			fputs(helptext, stdout);
			return EXIT_OK;
		}
		if (flagis(a, "--keep")) {
			if (!(keeps = flagarg("prune", argc, argv, &i, "a number")))
				return EXIT_USAGE;
		} else if (flagis(a, "--older-than")) {
			if (!(older = flagarg("prune", argc, argv, &i, "a duration (7d, 12h, 30m)")))
				return EXIT_USAGE;
		} else if (flagis(a, "--dry-run")) {
			if (flagnoval("prune", a))
				return EXIT_USAGE;
			dry = 1;
		} else if (positional("prune", a, &dir, "DIR") != 0) {
			return EXIT_USAGE;
		}
	}
	if (!dir)
		return usage("prune", "missing DIR (the folder runs are made in)");
	if (!keeps && !older)
		return usage("prune", "say what to remove: --keep N (the newest N stay) and/or --older-than D");
	long keep = 1;
	if (keeps) {
		char *end;
		keep = strtol(keeps, &end, 10);
		if (*end || end == keeps || keep < 1 || keep > 1000000)
			return usage("prune", "--keep %s: want a number from 1 (the newest run always stays)", keeps);
	}
	int64_t ms = 0;
	if (older && olderthan(older, &ms) < 0)
		return usage("prune", "--older-than %s: want a duration such as 7d, 12h, 30m", older);
	struct strv removed = {0}, inuse = {0}, kept = {0};
	struct err e = {0};
	if (runprune(dir, (int)keep, ms, dry, &removed, &inuse, &kept, &e) < 0)
		return report(&e);
	for (size_t i = 0; i < kept.n; i++)
		termprintf(stderr, "nightshift: prune: %s\n", kept.v[i]);
	for (size_t i = 0; i < inuse.n; i++)
		termprintf(stderr, "nightshift: prune: %s is in use by a live run: kept\n", inuse.v[i]);
	for (size_t i = 0; i < removed.n; i++)
		termprintf(stdout, "%s%s\n", dry ? "would remove " : "", removed.v[i]);
	fprintf(stderr, "nightshift: prune: %s%zu run%s\n", dry ? "would remove " : "removed ", removed.n,
	        removed.n == 1 ? "" : "s");
	int rc = kept.n ? EXIT_FAILED : EXIT_OK;
	strvfree(&removed);
	strvfree(&inuse);
	strvfree(&kept);
	return rc;
}
