/* snapdrive: drives snapshot/snapshot for bench/snapshot.sh and tests/e2e/snapshot.sh.
 *
 *   snapdrive steps WS RUN [--level L] [--threads T] [--exclude GLOB]... [--feed] [-- CMD...]
 *       layer 0001 before CMD 1, 0002 before CMD 2, ..., one more after the last, then end (what
 *       changed after the last layer, as the runner writes it);
 *       each CMD runs with `sh -c` in WS; writes RUN/SHA256SUMS; one line per layer on stdout;
 *       --feed: the change feed on, as for the namespace backend (snapfeed).
 *   snapdrive restore RUN N|end DIR [--force] [--inorder]
 *       snaprestore(); prints the time taken; --inorder: layer by layer, oldest first, as before
 *       restores applied a chain in one pass (snaprestoreorder).
 *   snapdrive patch RUN FROM TO|end [--whole]
 *       the chain's change from before step FROM to before TO as a git patch on stdout (patchsteps),
 *       the time taken on stderr; --whole: both states restored whole (patchrestorewhole), as
 *       before only the paths the layers between them name were restored.
 * All print "rss_kb N" (peak resident set) last (patch: on stderr). Built by the scripts against
 * libnightshift.a. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "../snapshot/snapshot.h"
#include "../artifacts/patch.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void rss(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("rss_kb %ld\n", ru.ru_maxrss);
}

static int layer(struct snap *s, const char *name, int full, FILE *sums, struct err *e)
{
	struct snapinfo i;
	double t = now();
	int rc = full ? snapend(s, name, &i, e) : snaptake(s, name, &i, e);
	t = now() - t;
	if (rc < 0) {
		snapinfofree(&i);
		return -1;
	}
	printf("layer %s ms %.1f bytes %lld full %d added %zu changed %zu deleted %zu entries %zu tree %lld skipped %zu\n",
	       name, t, (long long)i.bytes, i.full, i.added, i.changed, i.deleted, i.entries, (long long)i.treebytes,
	       i.skipped.n);
	fprintf(sums, "%s  snapshots/%s.tar.zst\n", i.sha256, name);
	snapinfofree(&i);
	return 0;
}

static int steps(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	const char *ws = argv[2], *run = argv[3];
	struct snapconf c = {.level = 3, .threads = 0};
	int i = 4, feed = 0;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--feed") == 0) {
			feed = 1;
			continue;
		}
		if (i + 1 >= argc)
			return 2;
		if (strcmp(argv[i], "--level") == 0)
			c.level = atoi(argv[++i]);
		else if (strcmp(argv[i], "--threads") == 0)
			c.threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--exclude") == 0)
			strvadd(&c.exclude, argv[++i]);
		else
			return 2;
	}
	char **cmds = i < argc ? argv + i + 1 : argv + argc;
	int ncmds = (int)(argv + argc - cmds);
	struct err e = {0};
	char *dir = xasprintf("%s/snapshots", run);
	struct snap *s;
	if (snapopen(&s, ws, &c, dir, &e) < 0) {
		fprintf(stderr, "snapdrive: %s\n", e.msg);
		return 1;
	}
	if (feed && !snapfeed(s))
		fprintf(stderr, "snapdrive: no change feed here (inotify, or a filesystem it cannot vouch for)\n");
	char *sumpath = xasprintf("%s/SHA256SUMS", run);
	FILE *sums = fopen(sumpath, "w");
	int rc = sums ? 0 : -1;
	for (int k = 0; rc == 0 && k <= ncmds; k++) {
		char name[16];
		snprintf(name, sizeof name, "%04d", k + 1);
		rc = layer(s, name, 0, sums, &e);
		if (rc == 0 && k < ncmds) {
			char *cmd = xasprintf("cd '%s' && %s", ws, cmds[k]);
			if (system(cmd) != 0)
				fprintf(stderr, "snapdrive: command failed: %s\n", cmds[k]);
			free(cmd);
		}
	}
	if (rc == 0)
		rc = layer(s, "end", 1, sums, &e);
	if (sums && fclose(sums) != 0)
		rc = -1;
	if (rc < 0)
		fprintf(stderr, "snapdrive: %s\n", e.msg[0] ? e.msg : "cannot write SHA256SUMS");
	snapclose(s);
	strvfree(&c.exclude);
	free(dir);
	free(sumpath);
	rss();
	return rc < 0;
}

static int restore(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	int step = strcmp(argv[3], "end") == 0 ? 0 : atoi(argv[3]);
	int force = 0;
	for (int i = 5; i < argc; i++)
		if (strcmp(argv[i], "--force") == 0)
			force = 1;
		else if (strcmp(argv[i], "--inorder") == 0)
			snaprestoreorder(1);
		else
			return 2;
	struct err e = {0};
	double t = now();
	if (snaprestore(argv[2], step, argv[4], force, &e) < 0) {
		fprintf(stderr, "snapdrive: %s\n", e.msg);
		return e.kind == ERR_INPUT ? 2 : 1;
	}
	printf("restore ms %.1f\n", now() - t);
	rss();
	return 0;
}

static int patch(int argc, char **argv)
{
	if (argc < 5 || (argc == 6 && strcmp(argv[5], "--whole") != 0) || argc > 6)
		return 2;
	patchrestorewhole(argc == 6);
	struct err e = {0};
	struct buf out = {0};
	double t = now();
	long n = patchsteps(argv[2], NULL, atoi(argv[3]), strcmp(argv[4], "end") == 0 ? 0 : atoi(argv[4]), 0, &out, &e);
	if (n < 0) {
		fprintf(stderr, "snapdrive: %s\n", e.msg);
		buffree(&out);
		return 1;
	}
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	buffree(&out);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "patch ms %.1f files %ld\nrss_kb %ld\n", now() - t, n, ru.ru_maxrss);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;
	if (argc > 1 && strcmp(argv[1], "steps") == 0)
		rc = steps(argc, argv);
	else if (argc > 1 && strcmp(argv[1], "restore") == 0)
		rc = restore(argc, argv);
	else if (argc > 1 && strcmp(argv[1], "patch") == 0)
		rc = patch(argc, argv);
	if (rc == 2)
		fprintf(stderr, "usage: snapdrive steps WS RUN [--level L] [--threads T] [--exclude G]... [-- CMD...]\n"
		                "       snapdrive restore RUN N|end DIR [--force] [--inorder]\n"
		                "       snapdrive patch RUN FROM TO|end [--whole]\n");
	return rc;
}
