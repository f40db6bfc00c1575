/* main: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <curl/curl.h>
#include "cmd.h"
#include "../sandbox/sandbox.h"

static const char helptext[] =
	"usage: nightshift COMMAND [ARGS]\n"
	"\n"
	"  run MANIFEST [--out DIR] [-j N] [--job ID]... [--set KEY=VALUE]... [--model NAME=SPEC]...\n"
	"      [--resume RUN] [--from RUN]... [--shard I/N] [--allowed-signers FILE] [--fail-on-deny]\n"
	"      [--sign KEY] [--events PATH] [--quiet]\n"
	"                     run the jobs; prints the run directory's path\n"
	"  validate MANIFEST [--set KEY=VALUE]...\n"
	"                     parse and check everything, run nothing\n"
	"  doctor [MANIFEST]  can this machine run it: sandbox, cgroups, engine, keys, disk\n"
	"  policy MANIFEST --worker W --tool T [--command CMD | --path P] [--set K=V]... [--json]\n"
	"                     what the approval rules decide, and which rule\n"
	"  policy MANIFEST --run RUN [--set K=V]... [--json]\n"
	"                     RUN's recorded calls whose decision MANIFEST's rules would change\n"
	"  restore RUN --step N|end --to DIR [--force]\n"
	"                     the workspace as it was before step N, or after the last\n"
	"  audit RUN [--verify] [--allowed-signers FILE] [--job ID] [--tool T] [--decision D] [--net]\n"
	"      [--json]\n"
	"                     the tool calls of a run; with --verify, proof that it is intact\n"
	"  replay RUN [--manifest FILE] [--out DIR] [--job ID]... [--strict] [--continue-live]\n"
	"      [--events PATH]\n"
	"                     rerun a night offline; compare what each step did with the record\n"
	"  finalize RUN [--sign KEY]\n"
	"                     seal a run that was killed before it finished\n"
	"  diff RUN [--job J] a job's or the run's whole change, as a patch git apply takes\n"
	"  diff RUN --step N|end\n"
	"                     what step N (or the end) changed in the workspace\n"
	"  prune DIR [--keep N] [--older-than D]\n"
	"                     remove old run directories, never one in use or the newest\n"
	"  init [RECIPE] [--dir DIR] | --list\n"
	"                     write a recipe's manifest, workers and workflow into a repository\n"
	"  report RUN [--out FILE]\n"
	"                     one self-contained HTML page of the run\n"
	"  export RUN --otlp FILE|URL\n"
	"                     the run as OpenTelemetry traces (OTLP/HTTP JSON)\n"
	"  plan MANIFEST --shards N [--json]\n"
	"                     job groups for N machines (a GitHub Actions matrix with --json)\n"
	"  merge RUN... --out DIR [--sign KEY] [--allowed-signers FILE]\n"
	"                     shard runs joined into one verifiable run\n"
	"  config [MANIFEST]  the layers in force: admin policy, user defaults, manifest\n"
	"  --version | --help | COMMAND --help\n"
	"\n"
	"A flag's value follows it as the next argument or after '=': --out DIR or --out=DIR.\n"
	"exit codes: 0 ok, 1 a job failed, 2 usage or manifest error, 3 a policy abort,\n"
	"            4 replay diverged or verification failed, 130 interrupted\n";

static const struct {
	const char *name;
	int (*fn)(int, char **);
} cmds[] = {
	{"run", cmdrun},         {"validate", cmdvalidate}, {"policy", cmdpolicy},
	{"restore", cmdrestore}, {"audit", cmdaudit},       {"replay", cmdreplay},
	{"plan", cmdplan},       {"merge", cmdmerge},       {"finalize", cmdfinalize},
	{"diff", cmddiff},         {"report", cmdreport},     {"export", cmdexport},
	{"doctor", cmddoctor},     {"config", cmdconfig},     {"prune", cmdprune},
	{"init", cmdinit},
};

/* The soft descriptor limit up to the hard one: cron and systemd start programs with 1024, which
   a few jobs' egress tunnels (six descriptors each) would use up (net/egress.c sizes its caps
   from the limit this leaves). */
static void fdlimit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	fdlimit();
	if (argc < 2) {
		fputs(helptext, stderr);
		return EXIT_USAGE;
	}
	if (ishelp(argv[1])) {
		fputs(helptext, stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("nightshift %s\n", NS_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		if (strcmp(argv[1], cmds[i].name) == 0) {
			curl_global_init(CURL_GLOBAL_DEFAULT);
			int rc = cmds[i].fn(argc - 1, argv + 1);
			sbxreap(); /* the last sandboxes' helpers, so that their time is counted as ours */
			curl_global_cleanup();
			return rc;
		}
	}
	fprintf(stderr, "nightshift: unknown command '%s'\n%s", argv[1], helptext);
	return EXIT_USAGE;
}
