/* validate: nightshift validate MANIFEST: parse and check everything, run nothing. */
#include <stdio.h>
#include <string.h>
#include "../manifest/manifest.h"
#include "cmd.h"

int cmdvalidate(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (ishelp(argv[i])) {
			puts("usage: nightshift validate MANIFEST\n\nParses and checks the manifest, its worker files and "
			     "scripts; runs nothing.\nexit codes: 0 valid, 2 the first mistake, as file:line:col: message");
			return EXIT_OK;
		}
		if (argv[i][0] == '-' && argv[i][1])
			return usage("validate", "unknown flag %s", argv[i]);
		if (path)
			return usage("validate", "unexpected argument %s (one manifest at a time)", argv[i]);
		path = argv[i];
	}
	if (!path)
		return usage("validate", "missing MANIFEST");
	struct manifest m;
	struct err e = {0};
	int rc = manifestload(&m, path, &e);
	if (rc == 0)
		fprintf(stderr, "%s: ok (%zu models, %zu workers, %zu jobs)\n", path, m.nmodels, m.nworkers, m.njobs);
	manifestfree(&m);
	return rc < 0 ? report(&e) : EXIT_OK;
}
