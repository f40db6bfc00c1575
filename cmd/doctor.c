/* doctor: nightshift doctor [MANIFEST]: can this machine run it? A line a check, the remedy when not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "cmd.h"
#include "../run/doctor.h"
#include "../util/term.h"

static const char helptext[] =
	"usage: nightshift doctor [MANIFEST] [--set KEY=VALUE]... [--out DIR] [--json]\n"
	"\n"
	"Checks whether this machine can run MANIFEST (or any manifest, without one), one line a check:\n"
	"the namespace sandbox (a step is run: user namespaces, AppArmor's restriction, mounts, the\n"
	"seccomp filter), which cgroup limits hold, the docker backend's engine and images, each model's\n"
	"key and endpoint (a connection, no request), network allow lists, the temporary folder ($TMPDIR,\n"
	"else /tmp) and the folder run directories go in (this user can write both), and its disk\n"
	"(--out, else config.yaml's out:, else runs/ beside the manifest). A check that fails says the cause\n"
	"and the remedy. --json prints the checks as a JSON list instead.\n"
	"\n"
	"exit codes: 0 it can run (warnings allowed), 1 a check failed, 2 usage or manifest error\n";

static const char *const words[] = {"ok", "warn", "FAIL"};

int cmddoctor(int argc, char **argv)
{
	const char *path = NULL, *out = NULL;
	int json = 0, rc = EXIT_USAGE;
	struct strv sets = {0};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (ishelp(a)) {
			fputs(helptext, stdout);
			rc = EXIT_OK;
			goto done;
		}
		if (flagis(a, "--json")) {
			if (flagnoval("doctor", a))
				goto done;
			json = 1;
		} else if (flagis(a, "--out")) {
			if (!(out = flagarg("doctor", argc, argv, &i, "a directory")))
				goto done;
		} else if (flagis(a, "--set")) {
			if (setflag("doctor", argc, argv, &i, &sets))
				goto done;
		} else if (positional("doctor", a, &path, "manifest")) {
			goto done;
		}
	}
	struct manifest m;
	int loaded = 0;
	if (path) {
		loaded = 1;
		if ((rc = loadorsay(&m, path, &sets)) != EXIT_OK)
			goto done;
	}
	struct checks c;
	doctor(loaded ? &m : NULL, out, &c);
	if (json) {
		cJSON *list = cJSON_CreateArray();
		for (size_t i = 0; i < c.n; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "check", c.v[i].name);
			cJSON_AddStringToObject(o, "state", c.v[i].state == CHECK_OK ? "ok" : c.v[i].state == CHECK_WARN ? "warn" : "fail");
			cJSON_AddStringToObject(o, "what", c.v[i].what);
			cJSON_AddItemToArray(list, o);
		}
		char *s = cJSON_Print(list);
		termjsonline(stdout, s); /* what a server answered, as JSON inert on a terminal */
		free(s);
		cJSON_Delete(list);
	} else {
		for (size_t i = 0; i < c.n; i++)
			termprintf(stdout, "%-4s  %-20s %s\n", words[c.v[i].state], c.v[i].name, c.v[i].what);
	}
	size_t failed = doctorfailed(&c);
	if (!json)
		fprintf(stderr, "nightshift: doctor: %s\n", failed ? "this machine cannot run it as it is (see FAIL above)"
		                                                   : path ? "this machine can run it" : "this machine can run manifests");
	rc = failed ? EXIT_FAILED : EXIT_OK;
	checksfree(&c);
	if (loaded)
		manifestfree(&m);
done:
	strvfree(&sets);
	return rc;
}
