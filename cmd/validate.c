/* validate: nightshift validate MANIFEST: parse and check everything, run nothing. */
#include <stdio.h>
#include <string.h>
#include "../manifest/manifest.h"
#include "../run/preflight.h"
#include "../util/term.h"
#include "cmd.h"

int cmdvalidate(int argc, char **argv)
{
	const char *path = NULL;
	struct strv sets = {0};
	int rc = EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		if (ishelp(argv[i])) {
			puts("usage: nightshift validate MANIFEST [--set KEY=VALUE]...\n\nParses and checks the manifest, its "
			     "worker files and scripts; runs nothing.\n  --set K=V   the value of ${{ inputs.K }}; repeatable\n"
			     "exit codes: 0 valid, 2 mistakes: every one found, as file:line:col: message, then a count");
			rc = EXIT_OK;
			goto done;
		}
		if (flagis(argv[i], "--set")) {
			if (setflag("validate", argc, argv, &i, &sets))
				goto done;
			continue;
		}
		if (positional("validate", argv[i], &path, "manifest"))
			goto done;
	}
	if (!path) {
		usage("validate", "missing MANIFEST");
		goto done;
	}
	struct manifest m;
	struct err e = {0};
	rc = loadmanifest(&m, path, &(struct loadopts){.sets = &sets}, &e) < 0 ? report(&e) : EXIT_OK;
	if (rc == EXIT_OK) {
		/* What run would refuse before it starts, but the manifest may be right: a warning. */
		struct strv warn = {0};
		preflightkeys(&m, &warn);
		for (size_t i = 0; i < warn.n; i++)
			termprintf(stderr, "nightshift: %s\n", warn.v[i]);
		strvfree(&warn);
	}
	if (rc == EXIT_OK)
		fprintf(stderr, "%s: ok (%zu models, %zu workers, %zu jobs)\n", path, m.nmodels, m.nworkers, m.njobs);
	if (rc == EXIT_OK && m.admin.path)
		fprintf(stderr, "%s: under the admin policy %s (%zu rules joined to every worker's; sha256 %.16s...)\n", path,
		        m.admin.path, m.admin.approval.nrules, m.admin.sha256);
	if (rc == EXIT_OK && m.userconfig)
		termprintf(stderr, "%s: with the user's defaults %s\n", path, m.userconfig);
	manifestfree(&m);
done:
	strvfree(&sets);
	return rc;
}
