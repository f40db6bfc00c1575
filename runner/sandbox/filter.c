/* filter: a deny-list seccomp filter, exported to classic BPF once so that each step
   only pays for one seccomp() call. Denied calls fail with EPERM (a few with a
   friendlier errno); a foreign architecture's syscalls kill the process. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include "filter.h"

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* Calls no step needs: debugging others, kernel and module control, mounts and namespaces
   (the sandbox is already built), the keyring, bpf, perf, userfaultfd, io_uring. */
static const char *const denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"mount", "umount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
	"open_by_handle_at", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
	"userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"acct", "swapon", "swapoff", "reboot", "syslog", "quotactl", "quotactl_fd",
	"lookup_dcookie", "uselib", "vhangup", "iopl", "ioperm", "settimeofday",
	"clock_settime", "clock_adjtime", "sethostname", "setdomainname",
	"fanotify_init", "name_to_handle_at", "nfsservctl", "vm86", "vm86old",
};

static const unsigned long nsflags[] = {
	CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP,
};

static int ruleadd(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n, const struct scmp_arg_cmp *args, struct err *e)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return 0; /* not on this architecture */
	int rc = seccomp_rule_add_array(ctx, action, nr, n, args);
	if (rc < 0 && rc != -EEXIST) {
		errno = -rc;
		return errf(e, "seccomp rule for %s:", name);
	}
	return 0;
}

/* Build the program for one network setting; filterbuild caches both. */
static int build(struct filter *f, int network, struct err *e)
{
	scmp_filter_ctx ctx;
	int fd = -1, rc = -1;
	uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	struct scmp_arg_cmp a;

	memset(f, 0, sizeof *f);
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return errf(e, "seccomp_init failed");
	/* We set no_new_privs ourselves; a syscall from another ABI (i386, x32) is fatal. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0 ||
	    (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0 &&
	     seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL) < 0)) { /* before Linux 4.14 */
		errf(e, "seccomp attributes");
		goto out;
	}
	/* A binary tree of syscall numbers rather than a chain: the kernel runs the program for
	   every syscall number when it loads it (to cache the always-allowed ones), and the
	   steps' denied calls are found in a few comparisons. Best effort: a chain is as right. */
	seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	for (size_t i = 0; i < sizeof denied / sizeof *denied; i++)
		if (ruleadd(ctx, eperm, denied[i], 0, NULL, e) < 0)
			goto out;
	/* clone with any namespace flag; clone3 hides its flags in memory, so say it does not exist (libc falls back to clone). */
	for (size_t i = 0; i < sizeof nsflags / sizeof *nsflags; i++) {
		a = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_MASKED_EQ, nsflags[i], nsflags[i]);
		if (ruleadd(ctx, eperm, "clone", 1, &a, e) < 0)
			goto out;
	}
	if (ruleadd(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, e) < 0)
		goto out;
	/* Faking terminal input; the kernel reads the command as 32 bits, so compare only those. */
	a = (struct scmp_arg_cmp)SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
	if (ruleadd(ctx, eperm, "ioctl", 1, &a, e) < 0)
		goto out;
	a = (struct scmp_arg_cmp)SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
	if (ruleadd(ctx, eperm, "ioctl", 1, &a, e) < 0)
		goto out;
	if (!network) {
		a = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_NE, AF_UNIX);
		if (ruleadd(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, &a, e) < 0 ||
		    ruleadd(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socketpair", 1, &a, e) < 0)
			goto out;
	} else {
		a = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_EQ, AF_PACKET);
		if (ruleadd(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, &a, e) < 0)
			goto out;
	}

	fd = memfd_create("nightshift-filter", MFD_CLOEXEC);
	if (fd < 0) {
		errf(e, "memfd_create:");
		goto out;
	}
	if ((rc = seccomp_export_bpf(ctx, fd)) < 0) {
		errno = -rc;
		rc = errf(e, "seccomp export:");
		goto out;
	}
	rc = -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0) {
		errf(e, "seccomp export: bad program size");
		goto out;
	}
	f->prog = xmalloc(st.st_size);
	if (pread(fd, f->prog, st.st_size, 0) != st.st_size) {
		errf(e, "seccomp export: short read");
		filterfree(f);
		goto out;
	}
	f->len = st.st_size / sizeof(struct sock_filter);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return rc;
}

int filterbuild(struct filter *f, int network, struct err *e)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static struct filter cache[2];
	int i = network ? 1 : 0, rc = 0;
	pthread_mutex_lock(&mu);
	if (!cache[i].prog)
		rc = build(&cache[i], network, e);
	if (rc == 0) {
		f->len = cache[i].len;
		f->prog = xmalloc(f->len * sizeof *f->prog);
		memcpy(f->prog, cache[i].prog, f->len * sizeof *f->prog);
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

int filterload(const struct filter *f)
{
	struct sock_fprog p = {.len = (unsigned short)f->len, .filter = f->prog};
	if (!f->prog || f->len > 0xffff) {
		errno = EINVAL;
		return -1;
	}
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p, 0, 0);
}

void filterfree(struct filter *f)
{
	free(f->prog);
	f->prog = NULL;
	f->len = 0;
}
