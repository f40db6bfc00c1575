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
#include <stdint.h>
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

/* A rule: the call fails with err, always (mask 0, ne 0), when (argument arg & mask) == value,
   or when argument arg != value (ne). Arguments the kernel reads as int are compared masked
   to their low 32 bits: high bits cannot hide a value. */
struct rule {
	const char *name;
	int err;
	unsigned arg;
	int ne;
	uint64_t mask, value;
	int net; /* 0: always; 1: only without network; 2: only with it */
};

/* The rules on arguments, besides the namespace flags of clone. */
static const struct rule conds[] = {
	/* Faking terminal input. */
	{"ioctl", EPERM, 1, 0, 0xffffffffu, TIOCSTI, 0},
	{"ioctl", EPERM, 1, 0, 0xffffffffu, TIOCLINUX, 0},
	/* Without network only AF_UNIX sockets; with it, still no packet sockets, and no vsock:
	   AF_VSOCK belongs to no network namespace, so it reaches the hypervisor and other VMs
	   past a network.allow sandbox's empty namespace (docker's default profile refuses it too). */
	{"socket", EAFNOSUPPORT, 0, 1, 0, AF_UNIX, 1},
	{"socketpair", EAFNOSUPPORT, 0, 1, 0, AF_UNIX, 1},
	{"socket", EAFNOSUPPORT, 0, 0, 0xffffffffu, AF_PACKET, 2},
	{"socket", EAFNOSUPPORT, 0, 0, 0xffffffffu, AF_VSOCK, 2},
};

/* Calls that set a file's mode, and which argument holds it: none may carry a set-id bit, so no
   step leaves a set-uid or set-gid file behind (outside the sandbox its uid is a real one). open
   and openat read the mode only when they create; libc passes 0 otherwise. */
static const struct { const char *name; unsigned arg; } modecalls[] = {
	{"chmod", 1}, {"fchmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2}, {"open", 2}, {"openat", 3},
	{"creat", 1}, {"mknod", 1}, {"mknodat", 2}, {"mkdir", 1}, {"mkdirat", 2},
};
static const unsigned setidbits[] = {S_ISUID, S_ISGID};

/* Call fn on every rule for this network setting, until it returns nonzero: the denied calls;
   clone with any namespace flag; clone3, whose flags are in memory, says it does not exist
   (libc falls back to clone), as does openat2; a set-id bit in a mode; the rules on arguments. */
static int eachrule(int network, int (*fn)(const struct rule *r, void *arg), void *arg)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sizeof denied / sizeof *denied; i++)
		rc = fn(&(struct rule){.name = denied[i], .err = EPERM}, arg);
	for (size_t i = 0; rc == 0 && i < sizeof nsflags / sizeof *nsflags; i++)
		rc = fn(&(struct rule){.name = "clone", .err = EPERM, .mask = nsflags[i], .value = nsflags[i]}, arg);
	if (rc == 0)
		rc = fn(&(struct rule){.name = "clone3", .err = ENOSYS}, arg);
	/* openat2's mode is in memory too: libc falls back to openat. */
	if (rc == 0)
		rc = fn(&(struct rule){.name = "openat2", .err = ENOSYS}, arg);
	for (size_t i = 0; rc == 0 && i < sizeof modecalls / sizeof *modecalls; i++)
		for (size_t b = 0; rc == 0 && b < sizeof setidbits / sizeof *setidbits; b++)
			rc = fn(&(struct rule){.name = modecalls[i].name, .err = EPERM, .arg = modecalls[i].arg,
			                       .mask = setidbits[b], .value = setidbits[b]}, arg);
	for (size_t i = 0; rc == 0 && i < sizeof conds / sizeof *conds; i++)
		if (!conds[i].net || conds[i].net == (network ? 2 : 1))
			rc = fn(&conds[i], arg);
	return rc;
}

/* Does r look at an argument? */
static int onarg(const struct rule *r)
{
	return r->ne || r->mask;
}

struct addctx {
	scmp_filter_ctx ctx;
	struct err *e;
};

static int ruleadd(const struct rule *r, void *arg)
{
	struct addctx *a = arg;
	int nr = seccomp_syscall_resolve_name(r->name);
	if (nr == __NR_SCMP_ERROR)
		return 0; /* not on this architecture */
	struct scmp_arg_cmp c = r->ne ? (struct scmp_arg_cmp){r->arg, SCMP_CMP_NE, r->value, 0}
	                              : (struct scmp_arg_cmp){r->arg, SCMP_CMP_MASKED_EQ, r->mask, r->value};
	int rc = seccomp_rule_add_array(a->ctx, SCMP_ACT_ERRNO(r->err), nr, onarg(r) ? 1 : 0, &c);
	if (rc < 0 && rc != -EEXIST) {
		errno = -rc;
		return errf(a->e, "seccomp rule for %s:", r->name);
	}
	return 0;
}

/* Build the program for one network setting; filterbuild caches both. */
static int build(struct filter *f, int network, struct err *e)
{
	scmp_filter_ctx ctx;
	int fd = -1, rc = -1;

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
	if (eachrule(network, ruleadd, &(struct addctx){ctx, e}) < 0)
		goto out;

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

/* Add r to a profile's "syscalls": a rule on the name alone joins the entry before it when
   that one has the same errno and no arguments. */
static int profileadd(const struct rule *r, void *arg)
{
	cJSON *calls = arg, *last = cJSON_GetArrayItem(calls, cJSON_GetArraySize(calls) - 1), *o, *a;
	if (!onarg(r) && last && !cJSON_HasObjectItem(last, "args") &&
	    cJSON_GetObjectItem(last, "errnoRet")->valueint == r->err) {
		cJSON_AddItemToArray(cJSON_GetObjectItem(last, "names"), cJSON_CreateString(r->name));
		return 0;
	}
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "names");
	cJSON_AddItemToArray(a, cJSON_CreateString(r->name));
	cJSON_AddStringToObject(o, "action", "SCMP_ACT_ERRNO");
	cJSON_AddNumberToObject(o, "errnoRet", r->err);
	if (onarg(r)) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddNumberToObject(c, "index", r->arg);
		/* As in libseccomp: value is the mask, valueTwo the value it must give. */
		cJSON_AddNumberToObject(c, "value", (double)(r->ne ? r->value : r->mask));
		cJSON_AddNumberToObject(c, "valueTwo", (double)(r->ne ? 0 : r->value));
		cJSON_AddStringToObject(c, "op", r->ne ? "SCMP_CMP_NE" : "SCMP_CMP_MASKED_EQ");
		cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "args"), c);
	}
	cJSON_AddItemToArray(calls, o);
	return 0;
}

cJSON *filterprofile(int network)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "defaultAction", "SCMP_ACT_ALLOW");
	eachrule(network, profileadd, cJSON_AddArrayToObject(p, "syscalls"));
	return p;
}
