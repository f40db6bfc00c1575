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
		const char *a = argv[i], **slot = NULL, *what = NULL;
		if (ishelp(a)) {
			fputs(mergehelp, stdout);
			rc = EXIT_OK;
			goto done;
		} else if (flagis(a, "--out")) {
			slot = &out, what = "a directory";
		} else if (flagis(a, "--sign")) {
			slot = &signpath, what = "a key file";
		} else if (flagis(a, "--allowed-signers")) {
			slot = &allowed, what = "a file";
		} else if (a[0] == '-' && a[1]) {
			usage("merge", "unknown flag %s", a);
			goto done;
		} else {
			strvadd(&runs, a);
		}
		if (slot && !(*slot = flagarg("merge", argc, argv, &i, what)))
			goto done;
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
