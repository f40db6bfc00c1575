/* restore: the workspace as it was before step N, or after the last, from a run's snapshots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "../artifacts/calls.h"
#include "../snapshot/snapshot.h"

static const char helptext[] =
	"usage: nightshift restore RUN --step N|end --to DIR [--force] [--workspace NAME]\n"
	"\n"
	"Rebuilds the workspace as it was before step N (layers 0001..N of RUN/snapshots applied in\n"
	"order), or after the last step (end), in DIR. Each layer's digest is checked against\n"
	"RUN/SHA256SUMS while it is read. DIR is made if missing and must be empty unless --force,\n"
	"which replaces what it holds. Set-uid and set-gid bits are not restored.\n"
	"A run whose jobs had workspaces of their own has one chain per workspace, in\n"
	"RUN/snapshots/NAME/: --step N picks the one holding step N; --workspace NAME picks one\n"
	"(needed for end when there are several).\n"
	"\n" MAXUNPACKHELP
	"\n"
	"exit codes: 0 restored, 2 usage or input error (nothing written), 4 a digest did not match,\n"
	"            a layer is not in SHA256SUMS or would expand past --max-unpack (DIR is left\n"
	"            empty), 1 any other failure\n";


int cmdrestore(int argc, char **argv)
{
	const char *run = NULL, *step = NULL, *to = NULL, *ws = NULL;
	int force = 0;
	int64_t maxu = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int k;
		if (ishelp(a)) {
			fputs(helptext, stdout);
			return EXIT_OK;
		}
		if ((k = maxunpackflag("restore", argc, argv, &i, &maxu)) >= 0) {
			if (k != EXIT_OK)
				return k;
		} else if (flagis(a, "--force")) {
			if (flagnoval("restore", a))
				return EXIT_USAGE;
			force = 1;
		} else if (flagis(a, "--step")) {
			if (!(step = flagarg("restore", argc, argv, &i, "a step number or 'end'")))
				return EXIT_USAGE;
		} else if (flagis(a, "--to")) {
			if (!(to = flagarg("restore", argc, argv, &i, "a directory")))
				return EXIT_USAGE;
		} else if (flagis(a, "--workspace")) {
			if (!(ws = flagarg("restore", argc, argv, &i, "a name (a folder of RUN/snapshots)")))
				return EXIT_USAGE;
		} else if (a[0] == '-' && a[1]) {
			return usage("restore", "unknown flag %s", a);
		} else if (run) {
			return usage("restore", "one RUN only (got %s and %s)", run, a);
		} else {
			run = a;
		}
	}
	if (!run)
		return usage("restore", "missing RUN (a run directory)");
	if (!step)
		return usage("restore", "missing --step N|end");
	if (!to)
		return usage("restore", "missing --to DIR");
	int n = 0;
	if (strcmp(step, "end") != 0) {
		char *end;
		long v = strtol(step, &end, 10);
		if (*end || end == step || v < 1 || v > LAYERSTEPMAX)
			return usage("restore", "--step %s: want a step number from 1, or 'end'", step);
		n = (int)v;
	}
	struct err e = {0};
	char *dir, *tmp;
	if (runopen(run, maxu, &dir, &tmp, &e) < 0)
		return report(&e);
	int last = n ? runlaststep(dir, &e) : 0, rc = EXIT_OK;
	if (last < 0)
		rc = report(&e);
	else if (n > last)
		rc = usage("restore", "--step %d: %s has %d steps (want 1 to %d, or end)", n, run, last, last);
	else if (snaprestorews(dir, ws, n, to, force, maxu, &e) < 0)
		rc = report(&e);
	runclose(dir, tmp);
	if (rc != EXIT_OK)
		return rc;
	if (n)
		fprintf(stderr, "nightshift: restore: %s as before step %d\n", to, n);
	else
		fprintf(stderr, "nightshift: restore: %s as after the last step\n", to);
	return EXIT_OK;
}
