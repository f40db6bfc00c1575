/* policy bench: decisions per second of policydecide for a 200-character shell line against 50
 * rules, and of its parts (the splitter; one command against the rules). Built and run by
 * bench/policy.sh, not part of nightshift. Usage: policy [SECONDS-PER-FIGURE]
 * Prints "name RATE/s" lines and the line and rules it used (for the peer to reuse). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../util/glob.h"
#include "../policy/policy.h"
#include "../policy/shellsplit.h"

/* 200 characters: five simple commands, quotes, a pipeline, redirections. */
static const char line[] =
	"git log --oneline --author=\"Jane Doe\" --since=2026-11-01 -- src/ | grep -v 'WIP' && "
	"git diff --stat HEAD~3 -- src/main.c docs/ && ls -la reports/ > reports/listing.txt 2>&1; "
	"cat notes.txt todo.md a.md";

static const char *const pats[][2] = {
	/* 30 allow rules; the ones the line needs are spread through the list */
	{"git status *", "allow"}, {"git show *", "allow"}, {"git branch *", "allow"}, {"git rev-parse *", "allow"},
	{"git blame *", "allow"}, {"git log *", "allow"}, {"git shortlog *", "allow"}, {"git tag -l *", "allow"},
	{"git ls-files *", "allow"}, {"git describe *", "allow"}, {"wc *", "allow"}, {"head *", "allow"},
	{"tail *", "allow"}, {"sort *", "allow"}, {"uniq *", "allow"}, {"grep *", "allow"}, {"rg *", "allow"},
	{"find . -name *", "allow"}, {"tree *", "allow"}, {"stat *", "allow"}, {"file *", "allow"},
	{"du -sh *", "allow"}, {"git diff *", "allow"}, {"diff -u *", "allow"}, {"jq *", "allow"},
	{"make -n *", "allow"}, {"ls *", "allow"}, {"pwd", "allow"}, {"date *", "allow"}, {"cat *", "allow"},
	/* 15 deny rules */
	{"git push *", "deny"}, {"git commit *", "deny"}, {"git reset --hard *", "deny"}, {"git clean *", "deny"},
	{"git checkout *", "deny"}, {"git * --output* *", "deny"}, {"rm *", "deny"}, {"mv *", "deny"},
	{"cp *", "deny"}, {"chmod *", "deny"}, {"chown *", "deny"}, {"ln *", "deny"}, {"dd *", "deny"},
	{"tee *", "deny"}, {"touch *", "deny"},
	/* 5 abort rules */
	{"curl *", "abort"}, {"wget *", "abort"}, {"nc *", "abort"}, {"ssh *", "abort"}, {"scp *", "abort"},
};
#define NRULES (sizeof pats / sizeof pats[0])

static double clk(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Run fn in batches of 200 for secs of wall time; print the rate of the median batch by the
 * thread's CPU clock (what one core does, whatever else loads the machine) and by wall time. */
static void measure(const char *name, void (*fn)(void *), void *arg, double secs)
{
	enum { BATCH = 200, MAXB = 100000 };
	static double cpu[MAXB], wall[MAXB];
	size_t nb = 0;
	double start = clk(CLOCK_MONOTONIC);
	while (nb < MAXB && clk(CLOCK_MONOTONIC) - start < secs) {
		double c0 = clk(CLOCK_THREAD_CPUTIME_ID), w0 = clk(CLOCK_MONOTONIC);
		for (int k = 0; k < BATCH; k++)
			fn(arg);
		cpu[nb] = clk(CLOCK_THREAD_CPUTIME_ID) - c0;
		wall[nb++] = clk(CLOCK_MONOTONIC) - w0;
	}
	qsort(cpu, nb, sizeof *cpu, cmpd);
	qsort(wall, nb, sizeof *wall, cmpd);
	printf("%s %.0f/s (cpu) %.0f/s (wall)\n", name, BATCH / cpu[nb / 2], BATCH / wall[nb / 2]);
}

static const struct approval *gapproval;

static void onedecide(void *args)
{
	struct verdict v;
	policydecide(gapproval, "bench", "shell", args, &v);
	verdictfree(&v);
}

static void onesplit(void *s)
{
	struct shsplit sp;
	shsplit(s, strlen(s), &sp);
	shsplitfree(&sp);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	struct rule rules[NRULES];
	memset(rules, 0, sizeof rules);
	for (size_t i = 0; i < NRULES; i++) {
		rules[i].tool = "shell";
		rules[i].command = (char *)pats[i][0];
		rules[i].decision = !strcmp(pats[i][1], "allow") ? DEC_ALLOW : !strcmp(pats[i][1], "deny") ? DEC_DENY : DEC_ABORT;
	}
	struct approval a = {.def = DEC_DENY, .rules = rules, .nrules = NRULES};
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "command", line);

	struct verdict v;
	policydecide(&a, "bench", "shell", args, &v);
	if (v.decision != DEC_ALLOW || v.commands.n != 5) {
		fprintf(stderr, "policy bench: unexpected verdict %s: %s\n", decisionname(v.decision), v.reason);
		return 1;
	}
	verdictfree(&v);

	gapproval = &a;
	measure("decide", onedecide, args, secs);
	measure("split", onesplit, (void *)line, secs);

	/* a bypass attempt of the same length (denied at the second command) */
	cJSON *bad = cJSON_CreateObject();
	char badline[sizeof line];
	memcpy(badline, line, sizeof line);
	memcpy(strstr(badline, "grep -v"), "rm -rf ", 7);
	cJSON_AddStringToObject(bad, "command", badline);
	measure("decide-denied", onedecide, bad, secs);

	printf("line-length %zu\nrules %zu\n", sizeof line - 1, NRULES);
	cJSON_Delete(args);
	cJSON_Delete(bad);
	return 0;
}
