/* merge: nightshift merge RUN... --out DIR: shard runs joined into one verifiable run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../artifacts/merge.h"
#include "../artifacts/sign.h"
#include "gha.h"
#include "../util/privacy.h"
#include "../util/term.h"
#include "cmd.h"

static const char mergehelp[] =
	"usage: nightshift merge RUN... --out DIR [--sign KEY] [--allowed-signers FILE]\n"
	"\n"
	"Joins the runs of the shards of one manifest (nightshift run --shard I/N) into one new run\n"
	"directory made in DIR, and prints its absolute path. Each run must pass `audit --verify` and\n"
	"have run the same manifest with the same inputs; each job must have run in one of them. The new\n"
	"run holds each shard whole under shards/<run-id>/, every job's output and files under jobs/,\n"
	"a run.json listing the shards and jobs, and SHA256SUMS over everything; with --sign KEY (or\n"
	"$NIGHTSHIFT_SIGNING_KEY) SHA256SUMS.sig too, as nightshift run --sign writes it.\n"
	"  --allowed-signers FILE  each run must be signed by a key FILE lists (ssh-keygen's\n"
	"             allowed_signers format), checked before anything is copied. A signed run is\n"
	"             re-signed by --sign only when FILE checked it; unsigned runs are signed by\n"
	"             --sign only when no run is signed and no FILE is given (docs/security.md)\n"
	"exit codes: 0 every job succeeded, 1 a job failed, 3 a job was aborted (as the unsharded run\n"
	"            would have); 2 usage error or runs that do not belong together; 4 a run fails\n"
	"            verification\n";

int cmdmerge(int argc, char **argv)
{
	const char *out = NULL, *signpath = NULL, *allowed = NULL;
	struct strv runs = {0};
	struct signkey *key = NULL;
	int rc = EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		if (ishelp(argv[i])) {
			fputs(mergehelp, stdout);
			rc = EXIT_OK;
			goto done;
		} else if (strcmp(argv[i], "--out") == 0) {
			if (i + 1 >= argc) {
				usage("merge", "--out needs a directory");
				goto done;
			}
			out = argv[++i];
		} else if (strcmp(argv[i], "--sign") == 0) {
			if (i + 1 >= argc) {
				usage("merge", "--sign needs a key file");
				goto done;
			}
			signpath = argv[++i];
		} else if (strcmp(argv[i], "--allowed-signers") == 0) {
			if (i + 1 >= argc) {
				usage("merge", "--allowed-signers needs a file");
				goto done;
			}
			allowed = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			usage("merge", "unknown flag %s", argv[i]);
			goto done;
		} else {
			strvadd(&runs, argv[i]);
		}
	}
	if (!runs.n) {
		usage("merge", "missing RUN (the shard runs to join)");
		goto done;
	}
	if (!out) {
		usage("merge", "missing --out DIR");
		goto done;
	}
	if ((rc = signersopt("merge", allowed)) != EXIT_OK)
		goto done;
	if ((rc = signkeyopt("merge", signpath, NULL, &key)) != EXIT_OK)
		goto done;
	/* the joined run is no more open than the most private shard */
	mode_t deny = privacydeny(out);
	for (size_t i = 0; i < runs.n; i++)
		deny |= privacydeny(runs.v[i]);
	privacyapply(deny);
	char *merged = NULL;
	struct err e = {0};
	for (size_t i = 0; !allowed && !key && i < runs.n; i++) {
		char *who = NULL;
		struct err se = {0};
		if (runsigsource(runs.v[i], NULL, 0, ERR_VERIFY, &who, &se) > 0)
			termprintf(stderr, "nightshift: merge: note: %s is signed; its signature was not checked "
			                   "(--allowed-signers FILE checks it)\n", runs.v[i]);
		free(who);
	}
	struct mergeopts mo = {.allowed = allowed, .signing = key != NULL};
	rc = runmerge(&runs, out, &mo, &merged, &e);
	if (rc >= 0 && key && runsign(merged, key, &e) < 0)
		rc = -1;
	if (rc < 0) {
		rc = report(&e);
	} else {
		char *abs = realpath(merged, NULL); /* as run prints it: a script may cd elsewhere */
		if (abs) {
			free(merged);
			merged = abs;
		}
		printf("%s\n", merged);
		fflush(stdout);
		fprintf(stderr, "nightshift: merge: %zu runs joined into %s\n", runs.n, merged);
	}
	struct err ge = {0};
	if (gharun(merged, rc, stderr, &ge) < 0)
		termprintf(stderr, "nightshift: merge: GitHub Actions: %s\n", ge.msg);
	free(merged);
done:
	signkeyfree(key);
	strvfree(&runs);
	return rc;
}
