/* namespace: the built-in sandbox. Three processes:
     nightshift ──fork── helper: own process group, scrubs the inherited environment,
     unshare(user) and write the id maps (inside uid/gid 1000 = the invoking user outside),
     unshare(mount, pid, net, ipc, uts), takes in the cgroup that nightshift made meanwhile
     (M_CGROUP: its version, directories and their folders), then ──clone, sharing its
     memory as vfork does── init, pid 1 of the new pid namespace. Init says hello
     (nightshift learns its pid from the socket credentials and moves it into the job's
     cgroup meanwhile), builds the root file system (rootfs.c), enters a cgroup namespace,
     drops every capability, sets no_new_privs and the seccomp filter, and serves steps
     over the socket. Each step is a vfork-style child that starts a session, takes its
     pipes (passed by SCM_RIGHTS, read by nightshift directly) and execs /bin/sh -c. When the shell ends, or nightshift asks
     because time is up, init kills every other process of the namespace (kill(-1) from
     pid 1 reaches exactly them, even those that left the session) and reaps them before it
     answers. On close init clears the namespace and exits, the helper then removes the
     cgroup and exits, reaped later: when init is known to be alone, the end of the socket
     is all nightshift sends and nobody waits for the teardown; otherwise nightshift sends
     M_QUIT and waits for the answer (or kills the helper, and init by its parent-death
     signal).
   Warm (the default): one init per sandbox, so a step costs about a fork and an exec.
   Cold (NIGHTSHIFT_SANDBOX_COLD=1): the whole set-up for each step, but for the cgroup:
   made at open, joined by each step's init (its helper does not remove it), removed at
   close, so that the limits hold for the job as a warm sandbox's do. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include "capture.h"
#include "../util/cancel.h"
#include "../util/privacy.h"
#include "cgroup.h"
#include "../net/egress.h"
#include "filter.h"
#include "../net/relay.h"
#include "rootfs.h"
#include "sandbox.h"
#include "userns.h"

#define CMD_MAX (128 * 1024) /* the kernel's limit on one argument (MAX_ARG_STRLEN) */

enum { M_EXEC = 1, M_KILL, M_QUIT, M_MOVED, M_HELLO, M_READY, M_DONE, M_ERROR, M_CGROUP, M_SPAWN };
enum { S_USERNS = 1, S_MAP, S_SETUP, S_STEP };

/* Every message on the control socket starts with this; len bytes follow (command or error text). */
struct msg {
	int32_t type;
	int32_t stage;  /* M_ERROR: where it failed */
	int32_t err;    /* M_ERROR: errno */
	int32_t status; /* M_DONE: wait status of the shell */
	int32_t killed; /* M_DONE: ended by M_KILL */
	/* M_HELLO comes with init's credentials, which give nightshift its pid outside;
	   M_MOVED answers it, err saying whether init is now in the cgroup.
	   M_CGROUP tells the helper about the cgroup made meanwhile: status its version,
	   stage the rlimit floors (1 as, 2 nproc), the text its directories, one a line;
	   the folders holding them come along as descriptors. */
	uint32_t len;
};

/* What the helper, init and each step need; fixed at sbxopen, shared by fork. */
struct plan {
	struct rootfs fs;
	struct filter filter;
	struct strv env;
	int network_host;
	int egress; /* network.allow: init hands 127.0.0.1:EGRESSPORT's connections to the proxy */
	int64_t memory, pids;
	double cpus;
	int64_t timeout_ms;
	size_t cap;
	int uid, gid; /* inside: SBX_STEPID or sandbox.uid; the runner's own ids outside */
};

/* One running init with its cgroup. */
struct zyg {
	pid_t helper;
	int ctl;  /* -1 when not running */
	int idle; /* init waits for a request and is alone in its namespace (it said so) */
	struct cgroup cg;
	int shared; /* cg is the cold sandbox's, only lent: nobody here closes or removes it */
	int as, nproc; /* rlimit floors in force */
	char limits[128];
};

struct nssbx {
	struct sbx base;
	struct plan p;
	int cold;
	int broken;
	struct zyg z;
	struct cgroup cg; /* cold: the one cgroup of every step's init, removed at close */
	struct egress *eg; /* network.allow: the proxy, outside the sandbox */
	int spawned;       /* z runs a long-running program (sbxspawn) */
	char retried[256]; /* a set-up that failed once, for the next step's result to say */
};

/* ---- messages ---- */

static int writefull(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= w;
	}
	return 0;
}

static int readfull(int fd, void *p, size_t n)
{
	char *c = p;
	while (n) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EPIPE;
			return -1;
		}
		c += r;
		n -= r;
	}
	return 0;
}

static int sendmsgfds(int fd, const struct msg *m, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = {(void *)m, sizeof *m};
	struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds) {
		memset(cbuf, 0, sizeof cbuf);
		h.msg_control = cbuf;
		h.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	ssize_t w;
	while ((w = sendmsg(fd, &h, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (w < 0)
		return -1;
	return writefull(fd, (const char *)m + w, sizeof *m - w);
}

/* Read one header and up to nfds (at most 3) passed descriptors (-1 when absent). */
static int recvmsgfds(int fd, struct msg *m, int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = {m, sizeof *m};
	struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	ssize_t r;
	for (int i = 0; i < nfds; i++)
		fds[i] = -1;
	while ((r = recvmsg(fd, &h, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (r <= 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int), got[4];
		memcpy(got, CMSG_DATA(c), (n > 4 ? 4 : n) * sizeof(int));
		for (int i = 0; i < n && i < 4; i++) {
			if (i < nfds && fds[i] < 0)
				fds[i] = got[i];
			else
				close(got[i]);
		}
	}
	return readfull(fd, (char *)m + r, sizeof *m - r);
}

/* Read one header and the sender's pid, when it came with credentials (else *pid is 0). */
static int recvcreds(int fd, struct msg *m, pid_t *pid)
{
	char cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = {m, sizeof *m};
	struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	ssize_t r;
	*pid = 0;
	while ((r = recvmsg(fd, &h, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (r <= 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;
			memcpy(&uc, CMSG_DATA(c), sizeof uc);
			*pid = uc.pid;
		}
	return readfull(fd, (char *)m + r, sizeof *m - r);
}

/* Tell nightshift why set-up failed; the text follows the header. */
static void report(int ctl, int stage, int err, const char *text)
{
	struct msg m = {.type = M_ERROR, .stage = stage, .err = err, .len = (uint32_t)strlen(text)};
	if (writefull(ctl, &m, sizeof m) == 0)
		writefull(ctl, text, m.len);
}

/* ---- the helper and init, after fork: single-threaded, and they allocate nothing ----
   nightshift forks them from a job's thread while other threads run: a lock another thread held
   at the fork stays held in the child for good. glibc's malloc takes its locks around fork, but
   GCC 12's AddressSanitizer does not (google/sanitizers#774): with ASan, a helper whose first
   malloc met such a lock spun forever, and its job waited 30 s for a set-up that never came. So
   the buffers here are on the stack or static, nothing is freed, and no call goes through an
   ASan interceptor that takes a lock of its own (prctl's PR_SET_NAME does). */

/* Close every descriptor from 3 up except those in keep (sorted, ascending). */
static void closeexcept(const int *keep, int n)
{
	unsigned lo = 3;
	for (int i = 0; i <= n; i++) {
		unsigned hi = i < n ? (unsigned)keep[i] : ~0u;
		if (i < n && keep[i] < 3)
			continue;
		if (hi > lo && syscall(SYS_close_range, lo, hi - 1, 0) < 0)
			for (unsigned fd = lo; fd < hi && fd < 65536; fd++)
				close(fd);
		lo = hi + 1;
	}
}

/* Wipe the inherited command line and environment (API keys) from this process's memory,
   where /proc/PID/cmdline and environ would show them to the sandbox. */
static void scrub(void)
{
	char stat[2048];
	unsigned long f[52] = {0};
	ssize_t len = -1;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		len = read(fd, stat, sizeof stat - 1); /* procfs gives the whole line to one read */
		close(fd);
	}
	if (len > 0) {
		stat[len] = 0;
		char *p = strrchr(stat, ')'), *save = NULL;
		int k = 3; /* fields are numbered from 1; the state after ')' is field 3 */
		for (char *t = p ? strtok_r(p + 2, " ", &save) : NULL; t && k < 52; t = strtok_r(NULL, " ", &save), k++)
			f[k] = strtoul(t, NULL, 10);
		/* arg_start 48, arg_end 49, env_start 50, env_end 51: wiped only when they hold our own
		   argv[0] and environment (under valgrind, say, they are someone else's). */
		uintptr_t a0 = (uintptr_t)program_invocation_name, e0 = environ && *environ ? (uintptr_t)*environ : 0;
		if (a0 >= f[48] && a0 < f[49] && f[49] - f[48] < (1ul << 24)) {
			memset((void *)f[48], 0, f[49] - f[48]);
			if (f[49] - f[48] > 16) {
				memcpy((void *)f[48], "nightshift-init", 16);
				/* A last byte that is not NUL makes the kernel read the area as a title set
				   by setproctitle: up to the first NUL, so cmdline is "nightshift-init" alone. */
				((char *)f[49])[-1] = ' ';
			}
		}
		if (e0 >= f[50] && e0 < f[51] && f[51] - f[50] < (1ul << 24))
			memset((void *)f[50], 0, f[51] - f[50]);
	}
	for (char **v = environ; v && *v; v++)
		memset(*v, 0, strlen(*v));
	clearenv();
}

/* Kill every process in the namespace but us, and reap them all; the step's status goes to *st. */
static void killall(int sfd, pid_t step, int *st)
{
	for (;;) {
		int s;
		kill(-1, SIGKILL);
		kill(-1, SIGCONT);
		pid_t p = waitpid(-1, &s, WNOHANG);
		if (p > 0) {
			if (p == step && st)
				*st = s;
			continue;
		}
		if (p < 0 && errno == ECHILD)
			return;
		struct pollfd pf = {sfd, POLLIN, 0};
		poll(&pf, 1, 10);
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof si) > 0)
			;
	}
}

/* What init hands its step child, which shares init's memory until it execs (as
   posix_spawn does: no page tables to copy); the child leaves why it failed here. */
struct stepargs {
	const struct plan *p;
	const struct zyg *z;
	const char *cmd;
	int in, out, err; /* in is -1 for /dev/null */
	const char *what; /* set when the step could not start */
	int errnum;
};

/* The step: from init's child to /bin/sh. Init has already dropped every capability,
   set no_new_privs and the seccomp filter; this is only the per-step part. Only
   system calls here: the memory is init's. */
static int stepmain(void *arg)
{
	struct stepargs *a = arg;
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++) /* init ignores them; ignored signals would survive exec */
		sigaction(sig, &dfl, NULL);

	a->what = "new session";
	if (setsid() < 0)
		goto fail;
	a->what = "standard descriptors";
	int null = a->in >= 0 ? a->in : open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || dup2(a->out, 1) < 0 || dup2(a->err, 2) < 0)
		goto fail;
	closeexcept(NULL, 0);
	a->what = "chdir /workspace";
	if (chdir("/workspace") < 0)
		goto fail;
	a->what = "RLIMIT_AS";
	if (a->z->as) { /* per step: exec gives the shell a fresh address space under it */
		struct rlimit rl = {(rlim_t)a->p->memory, (rlim_t)a->p->memory};
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			goto fail;
	}
	/* When memory runs out, the OOM killer is to pick a step's process, not init. */
	int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (adj >= 0) {
		(void)!write(adj, "1000", 4);
		close(adj);
	}
	umask(privacyumask()); /* the user's own, not the run directories' */
	char *argv[] = {"sh", "-c", (char *)a->cmd, NULL};
	char *noenv[] = {NULL};
	a->what = NULL;
	execve("/bin/sh", argv, a->p->env.v ? a->p->env.v : noenv);
	a->what = "exec /bin/sh";
fail:
	a->errnum = errno;
	_exit(127);
}

/* Init's last set-up, after the file system: the cgroup namespace, limits that apply to the
   whole namespace, then no capabilities, no_new_privs and the seccomp filter, which every
   step inherits. Init itself needs none of what they take away. */
static int lockdown(const struct plan *p, const struct zyg *z, int ctl, struct err *e)
{
	if (z->cg.version) { /* nightshift moved us while we built the file system */
		struct msg m;
		if (readfull(ctl, &m, sizeof m) < 0 || m.type != M_MOVED)
			return errf(e, "no word on the cgroup");
		if (m.err) {
			errno = m.err;
			return errf(e, "move into the cgroup:");
		}
	}
	if (unshare(CLONE_NEWCGROUP) < 0)
		return errf(e, "cgroup namespace:");
	struct rlimit zero = {0, 0};
	if (setrlimit(RLIMIT_CORE, &zero) < 0)
		return errf(e, "RLIMIT_CORE:");
	if (z->nproc) {
		struct rlimit rl = {(rlim_t)p->pids, (rlim_t)p->pids};
		if (setrlimit(RLIMIT_NPROC, &rl) < 0)
			return errf(e, "RLIMIT_NPROC:");
	}
	/* Lock root's special cases, empty the bounding and ambient sets, then every set. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
	                                 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
	                                 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
		return errf(e, "securebits:");
	for (int c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return errf(e, "drop capability %d from the bounding set:", c);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return errf(e, "clear ambient capabilities:");
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) < 0)
		return errf(e, "drop capabilities:");
	/* Set after the credential change, which clears it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0)
		return errf(e, "prctl:");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errf(e, "no_new_privs:");
	if (filterload(&p->filter) < 0)
		return errf(e, "seccomp filter:");
	return 0;
}

/* Run one step: fork it, wait for its shell or for M_KILL, then clear the namespace.
   The step's pipe ends are closed (and set to -1) once the step has them, so that
   nightshift sees their end when the step's last process does. */
static int serve(const struct plan *p, const struct zyg *z, int ctl, int sfd, const struct msg *req, int fds[3],
                 struct relay *rl)
{
	static char cmd[CMD_MAX + 1]; /* the caller holds req->len to CMD_MAX */
	struct msg done = {.type = M_DONE};
	int st = 0, exited = 0;
	static char stack[64 * 1024] __attribute__((aligned(16)));
	if (readfull(ctl, cmd, req->len) < 0)
		return -1;
	cmd[req->len] = 0;
	if (fds[0] < 0 || fds[1] < 0) {
		report(ctl, S_STEP, EINVAL, "bad request");
		return 0;
	}
	if (req->type == M_SPAWN && fds[2] < 0) {
		report(ctl, S_STEP, EINVAL, "bad request");
		return 0;
	}
	/* We go on once the child has exec'd or died: a.what then says which. A spawned program
	   (M_SPAWN: an MCP server) is a step with its stdin on a pipe that lasts until M_KILL. */
	struct stepargs a = {p, z, cmd, req->type == M_SPAWN ? fds[2] : -1, fds[0], fds[1], NULL, 0};
	pid_t pid = clone(stepmain, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	fds[0] = fds[1] = fds[2] = -1;
	if (pid < 0) {
		report(ctl, S_STEP, errno, "start the step");
		return 0;
	}
	if (a.what) {
		char why[256];
		snprintf(why, sizeof why, "%s: %s", a.what, strerror(a.errnum));
		killall(sfd, pid, NULL);
		report(ctl, S_STEP, 0, why);
		return 0;
	}
	while (!exited) {
		struct pollfd pf[2 + 1] = {{ctl, POLLIN, 0}, {sfd, POLLIN, 0}};
		int nr = relaypoll(rl, pf + 2);
		if (poll(pf, 2 + nr, -1) < 0 && errno != EINTR)
			break;
		relayrun(rl, pf + 2, nr);
		if (pf[1].revents) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) > 0)
				;
			int s;
			pid_t w;
			while ((w = waitpid(-1, &s, WNOHANG)) > 0)
				if (w == pid) {
					st = s;
					exited = 1;
				}
		}
		if (pf[0].revents && !exited) {
			struct msg m;
			int f[3];
			if (recvmsgfds(ctl, &m, f, 3) < 0) {
				killall(sfd, pid, NULL);
				relayreset(rl);
				return -1; /* nightshift is gone */
			}
			for (int i = 0; i < 3; i++)
				if (f[i] >= 0)
					close(f[i]);
			if (m.type == M_KILL) {
				done.killed = 1;
				break;
			}
		}
	}
	killall(sfd, pid, &st); /* the step's leftovers, or everything when killed */
	relayreset(rl);
	done.status = st;
	return writefull(ctl, &done, sizeof done);
}

/* Say hello with our credentials: the kernel gives nightshift our pid in its namespace. */
static int hello(int ctl)
{
	struct msg m = {.type = M_HELLO};
	struct ucred uc = {getpid(), getuid(), getgid()};
	char cbuf[CMSG_SPACE(sizeof uc)];
	struct iovec iov = {&m, sizeof m};
	struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	memset(cbuf, 0, sizeof cbuf);
	struct cmsghdr *c = CMSG_FIRSTHDR(&h);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof uc);
	memcpy(CMSG_DATA(c), &uc, sizeof uc);
	return sendmsg(ctl, &h, MSG_NOSIGNAL) == (ssize_t)sizeof m ? 0 : -1;
}

static void initmain(const struct plan *p, const struct zyg *z, int ctl)
{
	struct err e = {0};
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* the helper, our parent, went away */
	prctl(PR_SET_DUMPABLE, 0);        /* no /proc/1/mem or environ for the steps */
	/* the system call itself: ASan's prctl would take its thread registry's lock for the name */
	syscall(SYS_prctl, PR_SET_NAME, "nightshift-init", 0, 0, 0);
	/* Ignore what a step could send us (the kernel already drops most signals to a
	   namespace's init); only SIGKILL from outside, as the parent-death signal, ends us. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGCHLD && sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_IGN);
	if (sethostname("nightshift", 10) < 0) {
		report(ctl, S_SETUP, errno, "sethostname");
		_exit(1);
	}
	if (z->cg.version && hello(ctl) < 0) {
		report(ctl, S_SETUP, errno, "hello");
		_exit(1);
	}
	if (rootfsbuild(&p->fs, &e) < 0) {
		report(ctl, S_SETUP, errno, e.msg); /* errno as the failed call left it: EPERM/EACCES may be AppArmor */
		_exit(1);
	}
	struct relay rl = {.lfd = -1};
	if (p->egress && relayopen(&rl, &e) < 0) {
		report(ctl, S_SETUP, errno, e.msg);
		_exit(1);
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		report(ctl, S_SETUP, errno, "signalfd");
		_exit(1);
	}
	if (lockdown(p, z, ctl, &e) < 0) {
		report(ctl, S_SETUP, 0, e.msg);
		_exit(1);
	}
	for (int i = 0; i < 3; i++)
		if (z->cg.parent[i] >= 0)
			close(z->cg.parent[i]);
	struct msg ready = {.type = M_READY};
	if (writefull(ctl, &ready, sizeof ready) < 0)
		_exit(1);
	for (;;) {
		struct msg m;
		int fds[3];
		if (recvmsgfds(ctl, &m, fds, 3) < 0)
			break;
		int rc = 0;
		if (m.type == M_QUIT)
			rc = -1;
		else if ((m.type == M_EXEC || m.type == M_SPAWN) && m.len <= CMD_MAX)
			rc = serve(p, z, ctl, sfd, &m, fds, &rl);
		else if (m.type == M_EXEC || m.type == M_SPAWN)
			rc = -1;
		else if (m.type == M_KILL) { /* for a program that ended already: nothing is left to kill */
			struct msg done = {.type = M_DONE};
			rc = writefull(ctl, &done, sizeof done);
		}
		for (int i = 0; i < 3; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (rc < 0)
			break;
	}
	killall(sfd, 0, NULL);
	struct msg bye = {.type = M_DONE};
	writefull(ctl, &bye, sizeof bye); /* nightshift need not wait for our exit */
	_exit(0);
}

struct initargs {
	const struct plan *p;
	const struct zyg *z;
	int ctl;
};

static int initentry(void *arg)
{
	struct initargs *a = arg;
	initmain(a->p, a->z, a->ctl);
	return 0;
}

/* In the helper: take in nightshift's M_CGROUP, with the folders that hold the cgroup's
   directories, so that we remove them once init is gone. */
static int takecgroup(struct zyg *z, int ctl)
{
	struct msg m;
	int fds[3], n = 0;
	static char text[3 * 4096 + 3]; /* the directories point into it, for cgroupremove */
	if (recvmsgfds(ctl, &m, fds, 3) < 0)
		return -1;
	if (m.type != M_CGROUP || m.len >= sizeof text || readfull(ctl, text, m.len) < 0) {
		for (int i = 0; i < 3; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		errno = EPROTO;
		return -1;
	}
	text[m.len] = 0;
	for (int i = 0; i < 3; i++) { /* copies of nightshift's, closed by now */
		z->cg.dir[i] = NULL;
		z->cg.procs[i] = z->cg.parent[i] = -1;
	}
	z->cg.oomfile = NULL;
	z->cg.version = m.status;
	z->as = m.stage & 1;
	z->nproc = (m.stage & 2) != 0;
	char *line = text;
	for (int i = 0; i < 3 && line; i++) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (*line && n < 3 && fds[n] >= 0) {
			z->cg.dir[i] = line;
			z->cg.parent[i] = fds[n++];
		}
		line = next;
	}
	for (; n < 3; n++)
		if (fds[n] >= 0)
			close(fds[n]);
	return 0;
}

static void helpermain(const struct plan *p, struct zyg *z, int ctl)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	setpgid(0, 0); /* the terminal's ^C is for nightshift, which then closes us */
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	/* If nightshift ran with 0, 1 or 2 closed, our descriptors may sit there: move them up. */
	if (ctl < 3)
		ctl = fcntl(ctl, F_DUPFD_CLOEXEC, 3);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
		if (null > 2)
			close(null);
	}
	closeexcept(&ctl, 1);
	scrub();

	if (unshare(CLONE_NEWUSER) < 0) {
		report(ctl, S_USERNS, errno, "unshare(CLONE_NEWUSER)");
		_exit(1);
	}
	snprintf(map, sizeof map, "%d %d 1\n", p->uid, (int)uid);
	if (writectl("/proc/self/uid_map", map) < 0) {
		report(ctl, S_MAP, errno, "write uid_map");
		_exit(1);
	}
	if (writectl("/proc/self/setgroups", "deny") < 0 && errno != ENOENT) {
		report(ctl, S_MAP, errno, "write setgroups");
		_exit(1);
	}
	snprintf(map, sizeof map, "%d %d 1\n", p->gid, (int)gid);
	if (writectl("/proc/self/gid_map", map) < 0) {
		report(ctl, S_MAP, errno, "write gid_map");
		_exit(1);
	}
	int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | (p->network_host ? 0 : CLONE_NEWNET);
	if (unshare(flags) < 0) {
		report(ctl, S_MAP, errno, "unshare(mount, pid, ipc, uts, net)");
		_exit(1);
	}
	/* nightshift made the cgroup meanwhile; init is to know of it before it starts. */
	if (takecgroup(z, ctl) < 0) {
		report(ctl, S_SETUP, errno, "no word on the cgroup");
		_exit(1);
	}
	/* init borrows our memory, as a vfork child does (we only wait for it anyway): no
	   page tables to copy; we go on when it exits. */
	pid_t pid = -1;
	struct initargs ia = {p, z, ctl};
	size_t sz = 2 << 20;
	char *stack = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack != MAP_FAILED)
		pid = clone(initentry, stack + sz, CLONE_VM | CLONE_VFORK | SIGCHLD, &ia);
	if (pid < 0) {
		report(ctl, S_SETUP, errno, "start init");
		_exit(1);
	}
	close(ctl);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* The namespace is empty now: take its cgroup away, so that nightshift need not wait. */
	cgroupremove(&z->cg);
	_exit(0);
}

/* ---- nightshift's side ---- */

static int kernelatleast(int major, int minor)
{
	struct utsname u;
	int a = 0, b = 0;
	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return 0;
	return a > major || (a == major && b >= minor);
}

/* Helpers exit a moment after their init has cleared the namespace and said so; they are
   reaped here, at a later start or stop, rather than waited for, and at the end by sbxreap.
   Pass 0 to only reap, -1 to wait for all. */
static void reap(pid_t add)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static pid_t q[32];
	static int n;
	pthread_mutex_lock(&mu);
	int k = 0;
	for (int i = 0; i < n; i++)
		if (waitpid(q[i], NULL, WNOHANG) == 0)
			q[k++] = q[i];
	n = k;
	if (add > 0 && waitpid(add, NULL, WNOHANG) == 0) {
		if (n == 32) {
			waitpid(q[0], NULL, 0);
			memmove(q, q + 1, --n * sizeof *q);
		}
		q[n++] = add;
	}
	if (add < 0) { /* sbxreap: wait for each, 10 s at most in all, then kill what is left */
		int64_t until = nowms() + 10000;
		for (int i = 0; i < n; i++) {
			int fd = (int)syscall(SYS_pidfd_open, q[i], 0);
			struct pollfd pf = {fd, POLLIN, 0};
			int64_t left = until - nowms();
			if (fd >= 0 && left > 0)
				while (poll(&pf, 1, (int)left) < 0 && errno == EINTR && (left = until - nowms()) > 0)
					;
			if (fd >= 0)
				close(fd);
			if (waitpid(q[i], NULL, WNOHANG) == 0) {
				kill(q[i], SIGKILL); /* its init dies by its parent-death signal */
				while (waitpid(q[i], NULL, 0) < 0 && errno == EINTR)
					;
			}
		}
		n = 0;
	}
	pthread_mutex_unlock(&mu);
}

void sbxreap(void)
{
	reap(-1);
}

/* Let go of the cgroup: forget it (the helper removes it), or remove it now; a lent
   one is left as it is to its owner. */
static void zygdropcg(struct zyg *z, int remove)
{
	if (z->shared) {
		memset(&z->cg, 0, sizeof z->cg);
		for (int i = 0; i < 3; i++)
			z->cg.procs[i] = z->cg.parent[i] = -1;
		z->shared = 0;
	} else if (remove) {
		cgroupclose(&z->cg);
	} else {
		cgroupforget(&z->cg);
	}
}

static void zygstop(struct zyg *z)
{
	int cleared = 0;
	if (z->ctl >= 0 && z->helper > 0 && z->idle) {
		/* Nothing but init is left: the end of the socket is enough. init clears the
		   namespace and exits, the helper removes the cgroup and exits; neither is waited for. */
		close(z->ctl);
		z->ctl = -1;
		reap(z->helper);
		zygdropcg(z, 0);
		z->helper = 0;
		return;
	}
	if (z->ctl >= 0) {
		/* init kills and reaps everything, answers, exits; the helper follows. */
		struct msg q = {.type = M_QUIT}, a;
		struct pollfd pf = {z->ctl, POLLIN, 0};
		if (writefull(z->ctl, &q, sizeof q) == 0 && poll(&pf, 1, 5000) == 1 && readfull(z->ctl, &a, sizeof a) == 0)
			cleared = a.type == M_DONE;
		close(z->ctl);
		z->ctl = -1;
	}
	if (z->helper > 0 && cleared) {
		reap(z->helper); /* it removes the cgroup once init is gone */
		zygdropcg(z, 0);
	} else {
		if (z->helper > 0) {
			kill(z->helper, SIGKILL); /* init dies by its parent-death signal, and the namespace with it */
			waitpid(z->helper, NULL, 0);
		}
		zygdropcg(z, 1);
	}
	z->helper = 0;
}

/* Tell the helper about the cgroup: its version, the rlimit floors, its directories and
   the folders holding them (for the helper to remove them once init is gone), the
   latter not for a lent cgroup. */
static int sendcgroup(const struct zyg *z)
{
	struct buf t = {0};
	int fds[3], n = 0;
	for (int i = 0; i < 3; i++) {
		if (!z->shared && z->cg.dir[i] && z->cg.parent[i] >= 0) {
			bufadd(&t, z->cg.dir[i], strlen(z->cg.dir[i]));
			fds[n++] = z->cg.parent[i];
		}
		bufadd(&t, "\n", 1);
	}
	struct msg m = {.type = M_CGROUP, .status = z->cg.version, .stage = (z->as ? 1 : 0) | (z->nproc ? 2 : 0),
	                .len = (uint32_t)t.len};
	int rc = sendmsgfds(z->ctl, &m, fds, n) == 0 && writefull(z->ctl, t.data, t.len) == 0 ? 0 : -1;
	buffree(&t);
	return rc;
}

/* Start a sandbox: init in the cgroup lent (cold: the sandbox's own), or in a new one. */
static int zygstart(struct nssbx *n, struct zyg *z, const struct cgroup *lent, struct err *e)
{
	const struct plan *p = &n->p;
	int sv[2];
	memset(z, 0, sizeof *z);
	z->ctl = -1;
	for (int i = 0; i < 3; i++)
		z->cg.procs[i] = z->cg.parent[i] = -1;
	reap(0);
	int on = 1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errf(e, "socketpair:");
	if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0) {
		errf(e, "socketpair:");
		close(sv[0]), close(sv[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[0]), close(sv[1]);
		return errf(e, "fork:");
	}
	if (pid == 0) {
		close(sv[0]);
		helpermain(p, z, sv[1]);
	}
	close(sv[1]);
	z->helper = pid;
	z->ctl = sv[0];

	/* The cgroup, made while the helper sets up the user namespace and the others. */
	if (lent) {
		z->cg = *lent;
		z->shared = 1;
	} else {
		cgroupopen(&z->cg, p->memory, p->cpus, p->pids);
	}
	/* rlimits as a floor where no cgroup holds the limit. RLIMIT_NPROC counts per user
	   namespace since Linux 5.14, and never binds a process that is root outside. */
	z->as = p->memory > 0 && !(z->cg.enforced & CG_MEMORY);
	z->nproc = p->pids > 0 && !(z->cg.enforced & CG_PIDS) && kernelatleast(5, 14) && geteuid() != 0;
	int nl = snprintf(z->limits, sizeof z->limits, "%s; rlimit core", z->cg.note);
	if (z->as)
		nl += snprintf(z->limits + nl, sizeof z->limits - nl, " as");
	if (z->nproc)
		snprintf(z->limits + nl, sizeof z->limits - nl, " nproc");
	sendcgroup(z); /* if the helper is gone, its last words are still to read */

	/* Wait for READY or ERROR; on the way, move init into the cgroup when it says hello,
	   while it builds its file system (the move can wait for an RCU grace period). */
	struct msg m;
	for (;;) {
		struct pollfd pf = {z->ctl, POLLIN, 0};
		int r;
		pid_t ipid = 0;
		while ((r = poll(&pf, 1, 30000)) < 0 && errno == EINTR)
			;
		if (r <= 0 || recvcreds(z->ctl, &m, &ipid) < 0) {
			errf(e, "namespace sandbox: the set-up did not answer");
			zygstop(z);
			return -1;
		}
		if (m.type != M_HELLO)
			break;
		struct msg moved = {.type = M_MOVED};
		if (ipid <= 0 || cgroupmove(&z->cg, ipid) < 0)
			moved.err = ipid <= 0 ? ESRCH : errno;
		writefull(z->ctl, &moved, sizeof moved); /* if init is gone, its last words are still to read */
	}
	if (m.type == M_READY) {
		z->idle = 1;
		return 0;
	}
	char text[1024] = "";
	if (m.type == M_ERROR && m.len < sizeof text)
		readfull(z->ctl, text, m.len);
	zygstop(z);
	if (m.type != M_ERROR)
		return errf(e, "namespace sandbox: unexpected answer from the set-up");
	struct usernsfacts f;
	usernsread(&f);
	int early = m.stage == S_USERNS || (m.stage == S_MAP && (m.err == EPERM || m.err == EACCES));
	if (usernsrefused(&f, early, m.err)) {
		usernsexplain(&f, m.err, text, e);
		return -2;
	}
	int said = !m.err || strstr(text, strerror(m.err)); /* the text may name the error already */
	return errf(e, "namespace sandbox set-up: %s%s%s", text, said ? "" : ": ", said ? "" : strerror(m.err));
}

/* zygstart, and once more when a set-up that the machine allows failed all the same (a
   transient refusal of the kernel, say): nothing ran in it yet. The first failure is kept in
   n->retried, for the next step's result to show. Returns -1 on failure. */
static int zygbegin(struct nssbx *n, struct zyg *z, const struct cgroup *lent, struct err *e)
{
	int rc = zygstart(n, z, lent, e);
	if (rc == -1) {
		snprintf(n->retried, sizeof n->retried, "the sandbox set-up failed once, then worked: %.200s", e->msg);
		rc = zygstart(n, z, lent, e);
		if (rc < 0) /* it did not work: the error says so, no later step is to say it worked */
			n->retried[0] = 0;
	}
	return rc < 0 ? -1 : 0;
}

/* network.allow: start the egress proxy, bind its socket into the sandbox, point the
   steps at init's relay. The sandbox gets its own network namespace, empty but for lo. */
static int egressplan(struct nssbx *n, const struct sandboxconf *sc, struct err *e)
{
	if (!sc->network_allow || sc->network_host)
		return 0;
	if (egressopen(&n->eg, sc->allow, sc->nallow, e) < 0)
		return -1;
	rootfsadd(&n->p.fs, R_BIND, egresssock(n->eg), EGRESSSOCK, 0);
	egressenv(&n->p.env, sc->allow, sc->nallow);
	n->p.egress = 1;
	return 0;
}

static int bopen(struct sbx **s, const struct sbxconf *c, struct err *e)
{
	const struct sandboxconf *sc = c->conf;
	if (!c->workspace || c->workspace[0] != '/')
		return errf(e, "sandbox: the workspace must be an absolute path");
	struct nssbx *n = xcalloc(1, sizeof *n);
	n->z.ctl = -1;
	for (int i = 0; i < 3; i++)
		n->z.cg.procs[i] = n->z.cg.parent[i] = n->cg.procs[i] = n->cg.parent[i] = -1;
	n->p.network_host = sc->network_host;
	n->p.memory = sc->memory;
	n->p.pids = sc->pids;
	n->p.cpus = sc->cpus;
	n->p.timeout_ms = sc->timeout_ms;
	n->p.uid = sc->uid ? sc->uid : SBX_STEPID;
	n->p.gid = sc->uid ? sc->gid : SBX_STEPID;
	n->p.cap = c->output_cap ? c->output_cap : 1 << 20;
	for (char **v = c->env; v && *v; v++)
		strvadd(&n->p.env, *v);
	const char *cold = getenv("NIGHTSHIFT_SANDBOX_COLD");
	n->cold = cold && *cold && strcmp(cold, "0") != 0;
	if (rootfsplan(&n->p.fs, c, e) < 0 || egressplan(n, sc, e) < 0 ||
	    filterbuild(&n->p.filter, sc->network_host || sc->network_allow, e) < 0)
		goto fail;
	if (n->cold) /* one cgroup for the job, as a warm sandbox has: no step makes or removes one */
		cgroupopen(&n->cg, n->p.memory, n->p.cpus, n->p.pids);
	else if (zygbegin(n, &n->z, NULL, e) < 0)
		goto fail;
	*s = &n->base;
	return 0;
fail:
	egressclose(n->eg);
	rootfsfree(&n->p.fs);
	filterfree(&n->p.filter);
	strvfree(&n->p.env);
	free(n);
	return -1;
}

static void result(struct sbxresult *r, int st)
{
	if (WIFSIGNALED(st)) {
		r->exit_code = -1;
		r->signal = WTERMSIG(st);
	} else {
		r->exit_code = WEXITSTATUS(st);
	}
}

static int bexec(struct sbx *s, const char *command, struct sbxresult *r, struct err *e)
{
	struct nssbx *n = (struct nssbx *)s;
	struct zyg cold, *z = n->cold ? &cold : &n->z;
	int out[2], err[2], rc = -1;
	struct msg reply;

	memset(r, 0, sizeof *r);
	struct pollfd alive = {n->z.ctl, POLLIN, 0};
	if (!n->cold && !n->broken && poll(&alive, 1, 0) == 1)
		n->broken = 1; /* init says nothing unasked: readable means it is gone */
	if (n->broken && !n->cold) {
		/* The last init died (the OOM killer picked it, say): start a fresh sandbox. */
		zygstop(&n->z);
		if (zygbegin(n, &n->z, NULL, e) < 0)
			return errctx(e, "namespace sandbox: restart after it died");
		n->broken = 0;
	}
	size_t len = strlen(command);
	if (len > CMD_MAX)
		return errf(e, "sandbox: the command is longer than %d bytes", CMD_MAX);
	if (n->cold && zygbegin(n, z, &n->cg, e) < 0)
		return -1;
	snprintf(r->limits, sizeof r->limits, "%s", z->limits);
	snprintf(r->note, sizeof r->note, "%s", n->retried);
	n->retried[0] = 0;
	if (pipe2(out, O_CLOEXEC) < 0) {
		errf(e, "pipe:");
		goto done;
	}
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(out[0]), close(out[1]);
		errf(e, "pipe:");
		goto done;
	}
	struct capture cap = {.fd = {out[0], err[0]}, .b = {&r->out, &r->err}, .cap = n->p.cap};
	int64_t oom0 = cgroupooms(&z->cg);
	struct msg m = {.type = M_EXEC, .len = (uint32_t)len};
	int fds[2] = {out[1], err[1]};
	int late = 0;
	int64_t start = nowms(), deadline = sbxdeadline(&n->base, start, n->p.timeout_ms, &late), killwait = -1;
	int bycancel = 0; /* the kill was for a cancelled run, not the time limit */
	z->idle = 0;
	int sent = sendmsgfds(z->ctl, &m, fds, 2) == 0 && writefull(z->ctl, command, len) == 0;
	close(out[1]);
	close(err[1]);
	if (!sent) {
		captureclose(&cap);
		errf(e, "namespace sandbox: it is gone");
		n->broken = 1;
		goto done;
	}
	for (;;) {
		int ms = -1;
		int64_t until = killwait >= 0 ? killwait : deadline;
		if (until >= 0)
			ms = until - nowms() < 0 ? 0 : (int)(until - nowms());
		int w = capturewait(&cap, z->ctl, ms, e);
		if (w < 0) {
			captureclose(&cap);
			goto done;
		}
		if (w == 1)
			break;
		if (killwait >= 0 && nowms() >= killwait) {
			captureclose(&cap);
			errf(e, "namespace sandbox: it does not answer; killed");
			kill(z->helper, SIGKILL);
			n->broken = 1;
			goto done;
		}
		if (killwait < 0 && (cancelled || (deadline >= 0 && nowms() >= deadline))) {
			struct msg k = {.type = M_KILL};
			bycancel = !(deadline >= 0 && nowms() >= deadline);
			writefull(z->ctl, &k, sizeof k);
			killwait = nowms() + 10000;
		}
	}
	if (readfull(z->ctl, &reply, sizeof reply) < 0) {
		/* init is dead, and with it every process of the namespace */
		n->broken = 1;
		int64_t oom1 = cgroupooms(&z->cg);
		if (oom0 < 0 || oom1 <= oom0) {
			captureclose(&cap);
			errf(e, "namespace sandbox: it died during the step");
			goto done;
		}
		r->duration_ms = nowms() - start;
		capturedrain(&cap, 2000);
		r->truncated = cap.truncated;
		r->exit_code = -1;
		r->signal = SIGKILL;
		r->oom = 1;
		r->timed_out = killwait >= 0 && !bycancel;
		r->late = r->timed_out && late;
		r->interrupted = killwait >= 0 && bycancel;
		rc = 0;
		goto done;
	}
	r->duration_ms = nowms() - start;
	capturedrain(&cap, 2000); /* init killed every writer: the pipes are closing */
	r->truncated = cap.truncated;
	if (reply.type == M_ERROR) {
		char text[1024] = "";
		if (reply.len < sizeof text && readfull(z->ctl, text, reply.len) == 0)
			z->idle = 1; /* init cleared the namespace before it said so */
		errf(e, "namespace sandbox: the step could not start: %s", text);
		goto done;
	}
	z->idle = 1; /* init cleared the namespace before it answered */
	result(r, reply.status);
	r->timed_out = reply.killed && !bycancel;
	r->late = r->timed_out && late;
	r->interrupted = reply.killed && bycancel;
	int64_t oom1 = cgroupooms(&z->cg);
	r->oom = oom0 >= 0 && oom1 > oom0;
	rc = 0;
done:
	if (n->cold)
		zygstop(z);
	if (rc == 0 && n->eg) /* the step's processes are gone: its connections are ending */
		r->nnet = egresstake(n->eg, &r->net, &r->netmore, 500, 1);
	if (rc < 0)
		sbxresultfree(r);
	return rc;
}

/* A long-running program as a step of its own init that never ends by itself; the cold mode
   does not apply (one program, one set-up). */
static int bspawn(struct sbx *s, const char *command, int fds[3], struct err *e)
{
	struct nssbx *n = (struct nssbx *)s;
	size_t len = strlen(command);
	if (n->spawned)
		return errf(e, "namespace sandbox: it runs a program already");
	if (len > CMD_MAX)
		return errf(e, "sandbox: the command is longer than %d bytes", CMD_MAX);
	if (n->cold) {
		if (zygbegin(n, &n->z, &n->cg, e) < 0)
			return -1;
		n->cold = 0; /* from here on z is this sandbox's, stopped at close */
	}
	struct msg m = {.type = M_SPAWN, .len = (uint32_t)len};
	int pass[3] = {fds[1], fds[2], fds[0]};
	n->z.idle = 0;
	if (sendmsgfds(n->z.ctl, &m, pass, 3) < 0 || writefull(n->z.ctl, command, len) < 0) {
		n->broken = 1;
		return errf(e, "namespace sandbox: it is gone");
	}
	n->spawned = 1;
	return 0;
}

static void bclose(struct sbx *s)
{
	struct nssbx *n = (struct nssbx *)s;
	if (!n)
		return;
	if (n->spawned && n->z.ctl >= 0) {
		/* init kills the program and everything it started, then answers */
		struct msg k = {.type = M_KILL}, a;
		struct pollfd pf = {n->z.ctl, POLLIN, 0};
		if (poll(&pf, 1, 0) == 1 || (writefull(n->z.ctl, &k, sizeof k) == 0 && poll(&pf, 1, 5000) == 1))
			n->z.idle = readfull(n->z.ctl, &a, sizeof a) == 0 && a.type == M_DONE;
	}
	if (!n->cold)
		zygstop(&n->z);
	else /* the last step's init may be exiting still: cgroupremove waits a moment for it */
		cgroupclose(&n->cg);
	egressclose(n->eg);
	rootfsfree(&n->p.fs);
	filterfree(&n->p.filter);
	strvfree(&n->p.env);
	free(n);
}

static struct egress *begress(struct sbx *s)
{
	return ((struct nssbx *)s)->eg;
}

const struct sbxops sbxnamespace = {"namespace", bopen, bexec, bclose, bspawn, NULL, begress};
