/* none: steps run as plain host processes in the workspace, for trusted development
   only; nothing is isolated or limited. The warning that nothing is isolated is cmd/'s.

   A step's shell runs under a keeper: the runner's child, which makes itself the reaper of
   every orphan below it (PR_SET_CHILD_SUBREAPER) and starts the shell in a process group of
   its own. When the shell ends (or the runner's SIGTERM says its time ran out) the keeper
   kills that group, then every process that left it (setsid, a double fork) and so came to
   the keeper as its child, until it has none; then it writes the shell's wait status to a pipe
   and exits. So no process of a step outlives it, and the runner may take the change feed's
   word for what the step changed (run/wspace.c). A keeper that dies without writing its
   record (the step killed it) leaves that unknown: the result says so (leftover), and the
   runner stops trusting the feed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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
	pid_t spawned; /* the keeper of the long-running program (an MCP server), told to end at close */
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

static volatile sig_atomic_t keepstop; /* in a keeper: the runner said the step's time ran out */
static volatile pid_t keepsh;          /* in a keeper: the shell, once in its group */

static void onstop(int sig)
{
	(void)sig;
	keepstop = 1;
	if (keepsh > 0)
		kill(-keepsh, SIGKILL);
}

/* The keeper's children now, from /proc (the orphans of the step that came to it): read with
 * plain system calls, as a child forked from threads may call nothing that locks. */
static size_t children(pid_t self, pid_t *v, size_t cap)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)self, (int)self);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (got < 0)
		return (size_t)-1;
	size_t n = 0;
	long pid = 0;
	for (ssize_t i = 0; i <= got && n < cap; i++) {
		if (i < got && buf[i] >= '0' && buf[i] <= '9') {
			pid = pid * 10 + (buf[i] - '0');
		} else if (pid > 0) {
			v[n++] = (pid_t)pid;
			pid = 0;
		}
	}
	return n;
}

/* Kill the group of the shell sh and every process below the keeper, until it has no child;
 * 0 when none is left. */
static int sweep(pid_t sh)
{
	pid_t self = getpid(), v[256];
	kill(-sh, SIGKILL);
	for (int rounds = 0; rounds < 10000; rounds++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		size_t n = children(self, v, sizeof v / sizeof *v);
		if (n == (size_t)-1)
			return -1; /* no /proc: what is left cannot be found */
		if (n == 0) {
			if (waitpid(-1, NULL, WNOHANG | __WALL) < 0 && errno == ECHILD)
				return 0;
			continue; /* one came to the keeper meanwhile */
		}
		for (size_t i = 0; i < n; i++) {
			kill(-v[i], SIGKILL); /* its group, when it made one */
			kill(v[i], SIGKILL);
		}
		while (waitpid(-1, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
	return -1;
}

/* The keeper of one step or long-running program (see the top): runs the shell (stdin in, or
 * /dev/null when -1), cleans up after it, and writes the shell's wait status on rec (when not -1);
 * never returns. */
static void keeper(const struct nonesbx *n, const char *command, int in, int out, int err, int rec)
{
	/* The runner's handlers and ignored signals must not leak into the step. */
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	struct sigaction sa = {0};
	sa.sa_handler = onstop;
	sigaction(SIGTERM, &sa, NULL);
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 || prctl(PR_SET_PDEATHSIG, SIGTERM) < 0)
		_exit(126);
	prctl(PR_SET_NAME, "ns-keeper"); /* in ps, and to a step looking for the runner: not it */
	/* It lives as long as the step: no copy of another step's pipe may live that long in it. */
	int given[4] = {in, out, err, rec}, keep[4], nk = 0, lo = 3;
	for (int i = 0; i < 4; i++)
		if (given[i] >= 0)
			keep[nk++] = given[i];
	for (int i = 0; i < nk; i++)
		for (int j = i + 1; j < nk; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	for (int i = 0; i <= nk; i++) {
		if (i == nk || keep[i] > lo)
			syscall(SYS_close_range, (unsigned)lo, i < nk ? (unsigned)keep[i] - 1 : ~0U, 0);
		if (i < nk && keep[i] + 1 > lo)
			lo = keep[i] + 1;
	}
	/* Nor the runner's stdin, stdout and stderr: a step could write into them through
	 * /proc/<keeper>/fd (a false run folder on the runner's stdout). */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3; fd++)
		if (fd != in && fd != out && fd != err && fd != rec && (null < 0 || dup2(null, fd) < 0))
			_exit(126);
	if (null > 2)
		close(null);
	pid_t sh = fork();
	if (sh < 0)
		_exit(126);
	if (sh == 0) {
		signal(SIGTERM, SIG_DFL);
		child(n, command, in, out, err);
	}
	setpgid(sh, sh);
	keepsh = sh;
	if (keepstop)
		kill(-sh, SIGKILL);
	if (in >= 0)
		close(in);
	close(out);
	close(err);
	int st = 0;
	while (waitpid(sh, &st, 0) < 0)
		if (errno != EINTR)
			_exit(126);
	if (sweep(sh) < 0)
		_exit(125); /* something would not die: no record, the runner trusts nothing */
	if (rec >= 0)
		(void)!write(rec, &st, sizeof st);
	_exit(0);
}

/* Wait for a keeper told to end (SIGTERM); one that does not (stopped again, or stuck) is killed
 * after a grace of 5 s: the runner never waits on what a step or a server can hold. 1 when it had
 * to be killed; *kst its wait status. */
static int keeperend(pid_t pid, int *kst)
{
	for (int64_t until = nowms() + 5000;;) {
		pid_t w = waitpid(pid, kst, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			return 0;
		if (nowms() >= until) {
			kill(pid, SIGKILL);
			while (waitpid(pid, kst, 0) < 0 && errno == EINTR)
				;
			return 1;
		}
		usleep(10000);
	}
}

static int bexec(struct sbx *s, const char *command, struct sbxresult *r, struct err *e)
{
	struct nonesbx *n = (struct nonesbx *)s;
	int out[2], err[2], rec[2], st = 0, pidfd = -1, rc = -1, stopped = 0;
	pid_t pid;

	memset(r, 0, sizeof *r);
	snprintf(r->limits, sizeof r->limits, "none: no isolation, no limits");
	if (pipe2(out, O_CLOEXEC) < 0)
		return errf(e, "pipe:");
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(out[0]), close(out[1]);
		return errf(e, "pipe:");
	}
	if (pipe2(rec, O_CLOEXEC) < 0) {
		close(out[0]), close(out[1]), close(err[0]), close(err[1]);
		return errf(e, "pipe:");
	}
	struct capture cap = {.fd = {out[0], err[0]}, .b = {&r->out, &r->err}, .cap = n->cap};
	int64_t start = nowms();
	pid = fork();
	if (pid < 0) {
		close(out[1]), close(err[1]), close(rec[0]), close(rec[1]);
		captureclose(&cap);
		return errf(e, "fork:");
	}
	if (pid == 0) {
		setpgid(0, 0); /* out of reach of the step's kill 0 */
		keeper(n, command, -1, out[1], err[1], rec[1]);
	}
	setpgid(pid, pid);
	close(out[1]);
	close(err[1]);
	close(rec[1]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

	int late = 0;
	int64_t deadline = sbxdeadline(&n->base, start, n->timeout_ms, &late);
	for (;;) {
		int ms = -1;
		if (deadline >= 0) {
			int64_t left = deadline - nowms();
			ms = left < 0 ? 0 : (int)left;
		}
		if (pidfd < 0 && (ms < 0 || ms > 20))
			ms = 20; /* no pidfd (old kernel): look every 20 ms */
		else if (ms < 0 || ms > 500)
			ms = 500; /* a stopped keeper wakes no pidfd: look for it twice a second */
		if (capturewait(&cap, pidfd, ms, e) < 0)
			goto out;
		/* Exited but not reaped: its pid, and so the group id, stays ours until waitpid. */
		siginfo_t si = {0};
		if (waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
			break;
		si.si_pid = 0;
		if (waitid(P_PID, pid, &si, WSTOPPED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) {
			stopped = 1; /* the step stopped its keeper (kill -STOP $PPID): it vouches no more */
			kill(pid, SIGKILL);
			break;
		}
		if (cancelled || (deadline >= 0 && nowms() >= deadline)) {
			if (deadline >= 0 && nowms() >= deadline)
				r->timed_out = 1, r->late = late;
			else
				r->interrupted = 1;
			kill(pid, SIGTERM); /* the keeper kills the step, and all it left */
			kill(pid, SIGCONT);
			break;
		}
	}
	int kst = 0;
	if (keeperend(pid, &kst))
		stopped = 1;
	ssize_t got;
	while ((got = read(rec[0], &st, sizeof st)) < 0 && errno == EINTR)
		;
	/* The record counts only from a keeper that ended on its own, with 0: a step may write a
	 * record into the keeper's pipe itself (/proc/$PPID/fd) and then kill it. */
	if (got != (ssize_t)sizeof st || stopped || !WIFEXITED(kst) || WEXITSTATUS(kst) != 0) {
		if (got != (ssize_t)sizeof st)
			st = kst; /* the keeper died first: what the step left, if anything, is unknown */
		r->leftover = 1;
	}
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
		kill(pid, SIGTERM);
		waitpid(pid, &st, 0);
		captureclose(&cap);
	}
	close(rec[0]);
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
	if (pid == 0) {
		setpgid(0, 0); /* out of reach of the program's kill 0 */
		keeper(n, command, fds[0], fds[1], fds[2], -1);
	}
	setpgid(pid, pid);
	n->spawned = pid;
	return 0;
}

static void bclose(struct sbx *s)
{
	struct nonesbx *n = (struct nonesbx *)s;
	if (n->spawned > 0) {
		int kst;
		kill(n->spawned, SIGTERM); /* its keeper kills the program, and all it left */
		kill(n->spawned, SIGCONT);
		keeperend(n->spawned, &kst);
	}
	free(n->workspace);
	strvfree(&n->env);
	free(n);
}

const struct sbxops sbxnone = {"none", bopen, bexec, bclose, bspawn, NULL, NULL};
