/* sbxstep: per-step latency of a sandbox backend (sbxexec of one command in a warm
   sandbox), and optionally of a peer program run in turns with it, so that both see
   the same machine load. Built and run by the bench scripts, not part of nightshift.
   Usage: sbxstep [-b] [-i IDLE_MS] BACKEND IMAGE WORKSPACE N COMMAND [PEER ARGV...]
   -i waits that long before each step and each peer run, as the model's turn
   does between the steps of a job (default 0). -b runs two steps at once each
   round and times the second: a step asked for the moment the last one ended.
   Prints: "backend MEDIAN_MS" and, with a peer, "peer MEDIAN_MS" and "ratio R". */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../sandbox/sandbox.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1e3 + (b.tv_nsec - a->tv_nsec) / 1e6;
}

/* Run the peer once with its output discarded; its exit status. */
static int peer(char **argv)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	int idle = 0, twice = 0;
	for (;;) {
		if (argc > 1 && strcmp(argv[1], "-b") == 0) {
			twice = 1;
			argc--, argv++;
		} else if (argc > 2 && strcmp(argv[1], "-i") == 0) {
			idle = atoi(argv[2]);
			argc -= 2, argv += 2;
		} else {
			break;
		}
	}
	if (argc < 6) {
		fprintf(stderr, "usage: sbxstep [-b] [-i IDLE_MS] namespace|docker|none IMAGE WORKSPACE N COMMAND [PEER ARGV...]\n");
		return 2;
	}
	struct sandboxconf sc = {0};
	sc.backend = strcmp(argv[1], "docker") == 0 ? BACKEND_DOCKER
	             : strcmp(argv[1], "none") == 0 ? BACKEND_NONE : BACKEND_NAMESPACE;
	sc.image = argv[2];
	sc.memory = 1 << 30;
	sc.cpus = 1;
	sc.pids = 256;
	sc.timeout_ms = 60000;
	int n = atoi(argv[4]), warm = 3;
	char **peerv = argc > 6 ? argv + 6 : NULL;
	char *env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
	struct sbxconf c = {&sc, argv[3], env, 0};
	struct err e = {0};
	struct sbx *s;
	if (n < 1)
		n = 1;
	if (sbxopen(&s, &c, &e) < 0) {
		fprintf(stderr, "sbxstep: %s\n", e.msg);
		return 1;
	}
	double *ms = calloc(n, sizeof *ms), *pm = calloc(n, sizeof *pm);
	int rc = 1;
	for (int i = 0; i < n + warm; i++) {
		struct sbxresult r;
		struct timespec a;
		double t = 0;
		if (idle)
			usleep(idle * 1000);
		for (int k = 0; k <= twice; k++) {
			clock_gettime(CLOCK_MONOTONIC, &a);
			if (sbxexec(s, argv[5], &r, &e) < 0) {
				fprintf(stderr, "sbxstep: %s\n", e.msg);
				goto out;
			}
			t = since(&a);
			if (r.exit_code != 0) {
				fprintf(stderr, "sbxstep: exit %d: %s\n", r.exit_code, r.err.data ? r.err.data : "");
				sbxresultfree(&r);
				goto out;
			}
			sbxresultfree(&r);
		}
		if (i >= warm)
			ms[i - warm] = t;
		if (!peerv)
			continue;
		if (idle)
			usleep(idle * 1000);
		clock_gettime(CLOCK_MONOTONIC, &a);
		int prc = peer(peerv);
		t = since(&a);
		if (prc != 0) {
			fprintf(stderr, "sbxstep: %s exited %d\n", peerv[0], prc);
			goto out;
		}
		if (i >= warm)
			pm[i - warm] = t;
	}
	qsort(ms, n, sizeof *ms, cmp);
	printf("backend %.2f\n", ms[n / 2]);
	if (peerv) {
		qsort(pm, n, sizeof *pm, cmp);
		printf("peer %.2f\nratio %.2f\n", pm[n / 2], ms[n / 2] / pm[n / 2]);
	}
	rc = 0;
out:
	sbxclose(s);
	free(ms);
	free(pm);
	return rc;
}
