/* finalize: nightshift finalize RUN: seal a run that was killed before it finished. */
#include <stdio.h>
#include <string.h>
#include "../artifacts/finalize.h"
#include "cmd.h"

int cmdfinalize(int argc, char **argv)
{
	if (argc == 2 && ishelp(argv[1])) {
		puts("usage: nightshift finalize RUN\n\n"
		     "Seals a run directory that a crash or SIGKILL left without run.json: each event log\n"
		     "is ended after its last whole line, leftovers of unfinished writes are removed, and\n"
		     "run.json (status incomplete) and SHA256SUMS are written, so that audit --verify,\n"
		     "restore and replay accept it.");
		return EXIT_OK;
	}
	if (argc != 2 || argv[1][0] == '-')
		return usage("finalize", argc < 2 ? "missing RUN" : "expected one RUN and no flags");
	struct err e = {0};
	if (runfinalize(argv[1], &e) < 0)
		return report(&e);
	fprintf(stderr, "nightshift: finalize: %s sealed (status incomplete)\n", argv[1]);
	return EXIT_OK;
}
