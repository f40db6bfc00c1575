/* none: steps run as plain host processes in the workspace, for trusted development
   only. Each step gets its own process group, which is killed when the step's shell
   ends or its time runs out; nothing else is isolated or limited (a process that
   calls setsid escapes the group). The warning that nothing is isolated is cmd/'s. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "capture.h"
#include "../util/cancel.h"
#include "../util/privacy.h"
#include "sandbox.h"

struct nonesbx {
	struct sbx base;
	char *workspace;
	struct strv env;
	int64_t timeout_ms;
	size_t cap;
	pid_t spawned; /* the long-running program's group, killed at close */
};

static int bopen(struct sbx **s, const struct sbxconf *c, struct err *e)
{
	if (!c->workspace || c->workspace[0] != '/')
		return errf(e, "sandbox: the workspace must be an absolute path");
	struct nonesbx *n = xcalloc(1, sizeof *n);
	n->workspace = xstrdup(c->workspace);
	for (char **v = c->env; v && *v; v++)
		strvadd(&n->env, *v);
	n->timeout_ms = c->conf ? c->conf->timeout_ms : 0;
	n->cap = c->output_cap ? c->output_cap : 1 << 20;
	*s = &n->base;
	return 0;
}

static void child(const struct nonesbx *n, const char *command, int in, int out, int err)
{
	char *argv[] = {"sh", "-c", (char *)command, NULL};
	int null = in >= 0 ? in : open("/dev/null", O_RDONLY);
	setpgid(0, 0);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	/* The parent's handlers and ignored signals must not leak into the step. */
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (chdir(n->workspace) < 0) {
		static const char msg[] = "nightshift: cannot enter the workspace\n";
		(void)!write(2, msg, sizeof msg - 1);
		_exit(126);
	}
	umask(privacyumask()); /* the user's own, not the run directories' */
	char *noenv[] = {NULL};
	execve("/bin/sh", argv, n->env.v ? n->env.v : noenv);
	_exit(127);
}

static int bexec(struct sbx *s, const char *command, struct sbxresult *r, struct err *e)
{
	struct nonesbx *n = (struct nonesbx *)s;
	int out[2], err[2], st = 0, pidfd = -1, rc = -1;
	pid_t pid;

	memset(r, 0, sizeof *r);
	snprintf(r->limits, sizeof r->limits, "none: no isolation, no limits");
	if (pipe2(out, O_CLOEXEC) < 0)
		return errf(e, "pipe:");
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(out[0]), close(out[1]);
		return errf(e, "pipe:");
	}
	struct capture cap = {.fd = {out[0], err[0]}, .b = {&r->out, &r->err}, .cap = n->cap};
	int64_t start = nowms();
	pid = fork();
	if (pid < 0) {
		close(out[1]), close(err[1]);
		captureclose(&cap);
		return errf(e, "fork:");
	}
	if (pid == 0)
		child(n, command, -1, out[1], err[1]);
	setpgid(pid, pid); /* also here, so that kill(-pid) is right from the start */
	close(out[1]);
	close(err[1]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

	int64_t deadline = n->timeout_ms > 0 ? start + n->timeout_ms : -1;
	for (;;) {
		int ms = -1;
		if (deadline >= 0) {
			int64_t left = deadline - nowms();
			ms = left < 0 ? 0 : (int)left;
		}
		if (pidfd < 0 && (ms < 0 || ms > 20))
			ms = 20; /* no pidfd (old kernel): look every 20 ms */
		if (capturewait(&cap, pidfd, ms, e) < 0)
			goto out;
		/* Exited but not reaped: its pid, and so the group id, stays ours until waitpid. */
		siginfo_t si = {0};
		if (waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
			break;
		if (cancelled || (deadline >= 0 && nowms() >= deadline)) {
			r->timed_out = 1;
			kill(-pid, SIGKILL);
			break;
		}
	}
	kill(-pid, SIGKILL); /* what the step left in the background */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r->duration_ms = nowms() - start;
	capturedrain(&cap, 200); /* a process that left the group may hold the pipes: do not wait for it */
	r->truncated = cap.truncated;
	if (WIFSIGNALED(st)) {
		r->exit_code = -1;
		r->signal = WTERMSIG(st);
	} else {
		r->exit_code = WEXITSTATUS(st);
	}
	rc = 0;
out:
	if (rc < 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, &st, 0);
		captureclose(&cap);
	}
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}

static int bspawn(struct sbx *s, const char *command, int fds[3], struct err *e)
{
	struct nonesbx *n = (struct nonesbx *)s;
	if (n->spawned)
		return errf(e, "this sandbox runs a program already");
	pid_t pid = fork();
	if (pid < 0)
		return errf(e, "fork:");
	if (pid == 0)
		child(n, command, fds[0], fds[1], fds[2]);
	setpgid(pid, pid);
	n->spawned = pid;
	return 0;
}

static void bclose(struct sbx *s)
{
	struct nonesbx *n = (struct nonesbx *)s;
	if (n->spawned > 0) {
		kill(-n->spawned, SIGKILL);
		while (waitpid(n->spawned, NULL, 0) < 0 && errno == EINTR)
			;
	}
	free(n->workspace);
	strvfree(&n->env);
	free(n);
}

const struct sbxops sbxnone = {"none", bopen, bexec, bclose, bspawn, NULL};
