/* plan: nightshift plan MANIFEST --shards N [--json]: the job groups of a sharded run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "../manifest/manifest.h"
#include "../run/shard.h"
#include "cmd.h"

static const char planhelp[] =
	"usage: nightshift plan MANIFEST --shards N [--json | --after] [--set KEY=VALUE]...\n"
	"\n"
	"Splits the jobs into at most N groups that can run at once on N machines: jobs joined by\n"
	"needs, directly or not, stay in one group; the groups are balanced by number of jobs.\n"
	"Run group I with `nightshift run MANIFEST --shard I/N`, then join the runs with\n"
	"`nightshift merge RUN... --out DIR`. Empty groups are left out.\n"
	"  --shards N  how many groups at most (1 to 256)\n"
	"  --json      print a GitHub Actions matrix on one line:\n"
	"              {\"include\":[{\"shard\":\"1/2\",\"index\":1,\"jobs\":[\"a\",\"b\"]},...]}\n"
	"              for strategy.matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}\n"
	"  --after     print, as a JSON list, the jobs that run after the groups: those that need\n"
	"              a matrix job, whose members are spread over the groups like independent jobs.\n"
	"              Run them with `nightshift run MANIFEST --job ID... --from RUN...` (each\n"
	"              group's run), then merge that run with the groups'\n"
	"  --set K=V   the value of ${{ inputs.K }}; repeatable\n"
	"exit codes: 0 planned, 2 usage or manifest error\n";

int cmdplan(int argc, char **argv)
{
	const char *path = NULL, *shards = NULL;
	struct strv sets = {0};
	int json = 0, afteronly = 0, rc = EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		if (ishelp(argv[i])) {
			fputs(planhelp, stdout);
			rc = EXIT_OK;
			goto done;
		} else if (flagis(argv[i], "--json")) {
			if (flagnoval("plan", argv[i]))
				goto done;
			json = 1;
		} else if (flagis(argv[i], "--after")) {
			if (flagnoval("plan", argv[i]))
				goto done;
			afteronly = 1;
		} else if (flagis(argv[i], "--shards")) {
			if (!(shards = flagarg("plan", argc, argv, &i, "a number")))
				goto done;
		} else if (flagis(argv[i], "--set")) {
			if (setflag("plan", argc, argv, &i, &sets))
				goto done;
		} else if (positional("plan", argv[i], &path, "manifest")) {
			goto done;
		}
	}
	if (!path) {
		usage("plan", "missing MANIFEST");
		goto done;
	}
	if (!shards) {
		usage("plan", "missing --shards N");
		goto done;
	}
	char *end;
	long n = strtol(shards, &end, 10);
	if (end == shards || *end || n < 1 || n > SHARDMAX) {
		usage("plan", "--shards %s: expected a number from 1 to %d", shards, SHARDMAX);
		goto done;
	}
	struct manifest m;
	struct err e = {0};
	if ((rc = loadorsay(&m, path, &sets)) != EXIT_OK)
		goto done;
	if (json && afteronly) {
		manifestfree(&m);
		rc = usage("plan", "--json and --after: one or the other");
		goto done;
	}
	struct strv after = {0};
	shardafter(&m, &after);
	if (afteronly) {
		cJSON *a = cJSON_CreateArray();
		for (size_t k = 0; k < after.n; k++)
			cJSON_AddItemToArray(a, cJSON_CreateString(after.v[k]));
		char *text = cJSON_PrintUnformatted(a);
		termjsonline(stdout, text);
		free(text);
		cJSON_Delete(a);
		strvfree(&after);
		manifestfree(&m);
		rc = EXIT_OK;
		goto done;
	}
	cJSON *matrix = cJSON_CreateObject(), *include = cJSON_AddArrayToObject(matrix, "include");
	rc = EXIT_OK;
	for (int i = 1; i <= n && rc == EXIT_OK; i++) {
		struct strv jobs = {0};
		int got = shardjobs(&m, i, (int)n, &jobs, &e);
		if (got < 0) {
			rc = report(&e);
		} else if (got > 0) {
			char spec[32];
			snprintf(spec, sizeof spec, "%d/%ld", i, n);
			cJSON *g = cJSON_CreateObject();
			cJSON_AddStringToObject(g, "shard", spec);
			cJSON_AddNumberToObject(g, "index", i);
			cJSON *a = cJSON_AddArrayToObject(g, "jobs");
			for (size_t k = 0; k < jobs.n; k++)
				cJSON_AddItemToArray(a, cJSON_CreateString(jobs.v[k]));
			cJSON_AddItemToArray(include, g);
			if (!json) {
				printf("shard %s:", spec);
				for (size_t k = 0; k < jobs.n; k++)
					printf(" %s", jobs.v[k]);
				printf("\n");
			}
		}
		strvfree(&jobs);
	}
	if (rc == EXIT_OK && json) {
		char *text = cJSON_PrintUnformatted(matrix);
		termjsonline(stdout, text);
		free(text);
	}
	if (rc == EXIT_OK && !json && after.n) {
		printf("after the shards:");
		for (size_t k = 0; k < after.n; k++)
			printf(" %s", after.v[k]);
		printf("\n");
	}
	if (rc == EXIT_OK && json && after.n)
		fprintf(stderr, "nightshift: plan: %zu job%s need%s a matrix spread over the groups and run after them "
		                "(plan --after lists them)\n", after.n, after.n == 1 ? "" : "s", after.n == 1 ? "s" : "");
	strvfree(&after);
	if (rc == EXIT_OK && !json && cJSON_GetArraySize(include) < n)
		fprintf(stderr, "nightshift: plan: %d of %ld groups hold jobs (jobs joined by needs stay together)\n",
		        cJSON_GetArraySize(include), n);
	cJSON_Delete(matrix);
	manifestfree(&m);
done:
	strvfree(&sets);
	return rc;
}
