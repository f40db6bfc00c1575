/* replay: not built yet; see the issue that adds it. */
#include <stdio.h>
#include "cmd.h"

int cmdreplay(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "nightshift: replay: not implemented yet\n");
	return EXIT_USAGE;
}
