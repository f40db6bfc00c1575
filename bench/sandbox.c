/* sandbox: time one sandbox step, or one process spawn, N times; prints each sample in
   milliseconds, one per line. Built and run by bench/sandbox.sh, not part of nightshift.
   Usage: sandbox warm|cold|cold0|coldstep|none WORKSPACE N COMMAND   steps through sbxexec
          sandbox idle WORKSPACE N MS COMMAND                  warm steps, each after MS ms idle
          sandbox docker IMAGE WORKSPACE N COMMAND             the docker backend's warm step
          sandbox spawn N ARGV...                              fork, exec and wait a program
   cold is sbxopen, sbxexec and sbxclose for every step; cold0 the same without limits;
   coldstep a step of a sandbox opened with NIGHTSHIFT_SANDBOX_COLD=1 (namespaces made
   and torn down for each step, the cgroup made once at open). */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../sandbox/sandbox.h"

extern char **environ;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static char *env[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/tmp", NULL};

static int step(struct sbx *s, const char *cmd)
{
	struct sbxresult r;
	struct err e = {0};
	if (sbxexec(s, cmd, &r, &e) < 0) {
		fprintf(stderr, "sandbox bench: %s\n", e.msg);
		return -1;
	}
	int rc = r.exit_code;
	if (rc != 0)
		fprintf(stderr, "sandbox bench: exit %d: %s\n", rc, r.err.data ? r.err.data : "");
	sbxresultfree(&r);
	return rc ? -1 : 0;
}

static int spawn(int n, char **argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", 0, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int st;
		double t = now();
		if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0 || waitpid(pid, &st, 0) < 0 ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "sandbox bench: %s failed\n", argv[0]);
			return 1;
		}
		printf("%.3f\n", now() - t);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 3 && strcmp(argv[1], "spawn") == 0)
		return spawn(atoi(argv[2]), argv + 3);
	int docker = argc == 6 && strcmp(argv[1], "docker") == 0, idle = argc == 6 && strcmp(argv[1], "idle") == 0;
	if (argc != 5 && !docker && !idle) {
		fprintf(stderr, "usage: sandbox warm|cold|cold0|coldstep|none WORKSPACE N COMMAND | idle WORKSPACE N MS COMMAND |"
		                " docker IMAGE WORKSPACE N COMMAND | spawn N ARGV...\n");
		return 2;
	}
	const char *mode = argv[1], *ws = argv[docker ? 3 : 2], *cmd = argv[argc - 1];
	int n = atoi(argv[docker ? 4 : 3]), idlems = idle ? atoi(argv[4]) : 0;
	struct sandboxconf sc;
	memset(&sc, 0, sizeof sc);
	sc.backend = docker ? BACKEND_DOCKER : strcmp(mode, "none") == 0 ? BACKEND_NONE : BACKEND_NAMESPACE;
	sc.image = docker ? argv[2] : "host";
	int nolimits = strcmp(mode, "cold0") == 0;
	sc.memory = nolimits ? 0 : 1ll << 30; /* the limits a manifest would set: cgroups are part of the cost */
	sc.cpus = nolimits ? 0 : 1;
	sc.pids = nolimits ? 0 : 256;
	sc.timeout_ms = 60000;
	struct sbxconf c = {&sc, ws, env, 0};
	struct err e = {0};
	struct sbx *s = NULL;
	if (strcmp(mode, "cold") == 0 || nolimits) {
		/* everything, every step: plan, namespaces, cgroup, the step, teardown */
		for (int i = 0; i < n; i++) {
			double t = now();
			if (sbxopen(&s, &c, &e) < 0) {
				fprintf(stderr, "sandbox bench: %s\n", e.msg);
				return 1;
			}
			int rc = step(s, cmd);
			sbxclose(s);
			if (rc < 0)
				return 1;
			printf("%.3f\n", now() - t);
		}
		return 0;
	}
	if (strcmp(mode, "coldstep") == 0)
		setenv("NIGHTSHIFT_SANDBOX_COLD", "1", 1);
	if (sbxopen(&s, &c, &e) < 0) {
		fprintf(stderr, "sandbox bench: %s\n", e.msg);
		return 1;
	}
	for (int i = 0; i < n + 2; i++) {
		if (idlems)
			usleep(idlems * 1000);
		double t = now();
		if (step(s, cmd) < 0) {
			sbxclose(s);
			return 1;
		}
		if (i >= 2) /* two warm-up steps */
			printf("%.3f\n", now() - t);
	}
	sbxclose(s);
	return 0;
}
