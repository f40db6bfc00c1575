/* finalize: nightshift finalize RUN [--sign KEY]: seal a run that was killed before it finished. */
#include <stdio.h>
#include <string.h>
#include "../artifacts/finalize.h"
#include "../artifacts/sign.h"
#include "cmd.h"

int cmdfinalize(int argc, char **argv)
{
	const char *run = NULL, *signpath = NULL;
	for (int i = 1; i < argc; i++) {
		if (ishelp(argv[i])) {
			puts("usage: nightshift finalize RUN [--sign KEY]\n\n"
			     "Seals a run directory that a crash or SIGKILL left without run.json: each event log\n"
			     "is ended after its last whole line, leftovers of unfinished writes are removed, and\n"
			     "run.json (status incomplete; each job as its log recorded it) and SHA256SUMS are\n"
			     "written, so that audit --verify, restore and replay accept it. With --sign KEY (or\n"
			     "$NIGHTSHIFT_SIGNING_KEY) SHA256SUMS.sig too, as nightshift run --sign writes it.");
			return EXIT_OK;
		} else if (flagis(argv[i], "--sign")) {
			if (!(signpath = flagarg("finalize", argc, argv, &i, "a key file")))
				return EXIT_USAGE;
		} else if (positional("finalize", argv[i], &run, "run") != 0) {
			return EXIT_USAGE;
		}
	}
	if (!run)
		return usage("finalize", "missing RUN");
	struct signkey *key = NULL;
	int rc = signkeyopt("finalize", signpath, NULL, &key);
	if (rc != EXIT_OK)
		return rc;
	struct err e = {0};
	if (runfinalize(run, &e) < 0 || (key && runsign(run, key, &e) < 0)) {
		signkeyfree(key);
		return report(&e);
	}
	fprintf(stderr, "nightshift: finalize: %s sealed (status incomplete)%s\n", run, key ? " and signed" : "");
	signkeyfree(key);
	return EXIT_OK;
}
