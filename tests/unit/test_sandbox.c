/* test_sandbox: the namespace and none backends through sbxopen/sbxexec, and escape
   attempts from inside. The binary doubles as the probe: copied into the workspace,
   `probe NAME ARG` tries one thing from inside the sandbox and prints "ESCAPED" (exit 0)
   or "blocked: why" (exit 1). Positive controls (host network, the none backend) show
   that the probes and checks can see an escape when there is one. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/reboot.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <unistd.h>
#include <linux/capability.h>
#include "t.h"
#include "../../sandbox/sandbox.h"

/* ---------------- the probe, run inside the sandbox ---------------- */

static int verdict(long rc, const char *what)
{
	if (rc < 0) {
		printf("blocked: %s: %s\n", what, strerror(errno));
		return 1;
	}
	printf("ESCAPED: %s\n", what);
	return 0;
}

/* Try to make a set-id file (or directory) in the workspace with one call: escaped only if the
   call succeeds and the bit is there afterwards. */
static int setid(const char *p)
{
	const char *f = "/workspace/.setid-probe";
	struct stat st;
	long rc;
	unlink(f);
	rmdir(f);
	int fd = -1;
	if (!strcmp(p, "setid-chmod") || !strcmp(p, "setid-fchmod") || !strcmp(p, "setid-fchmodat") ||
	    !strcmp(p, "setid-fchmodat2")) {
		fd = open(f, O_CREAT | O_WRONLY, 0755);
		if (fd < 0)
			return verdict(-1, "create the probe file");
	}
	if (!strcmp(p, "setid-chmod"))
		rc = syscall(SYS_chmod, f, 04755);
	else if (!strcmp(p, "setid-fchmod"))
		rc = syscall(SYS_fchmod, fd, 02755);
	else if (!strcmp(p, "setid-fchmodat"))
		rc = syscall(SYS_fchmodat, AT_FDCWD, f, 06755);
	else if (!strcmp(p, "setid-fchmodat2"))
		rc = syscall(452 /* fchmodat2, x86_64 */, AT_FDCWD, f, 04755, 0);
	else if (!strcmp(p, "setid-chmod-high"))
		rc = (fd = open(f, O_CREAT | O_WRONLY, 0755)) < 0 ? -1 : syscall(SYS_chmod, f, 0xffff00000000L | 04755);
	else if (!strcmp(p, "setid-open"))
		rc = syscall(SYS_open, f, O_CREAT | O_WRONLY, 04755);
	else if (!strcmp(p, "setid-openat"))
		rc = syscall(SYS_openat, AT_FDCWD, f, O_CREAT | O_WRONLY, 02755);
	else if (!strcmp(p, "setid-openat2")) {
		struct { uint64_t flags, mode, resolve; } how = {O_CREAT | O_WRONLY, 04755, 0};
		rc = syscall(SYS_openat2, AT_FDCWD, f, &how, sizeof how);
	} else if (!strcmp(p, "setid-creat"))
		rc = syscall(SYS_creat, f, 04755);
	else if (!strcmp(p, "setid-mknod"))
		rc = syscall(SYS_mknod, f, S_IFREG | 04755, 0);
	else if (!strcmp(p, "setid-mknodat"))
		rc = syscall(SYS_mknodat, AT_FDCWD, f, S_IFREG | 06755, 0);
	else if (!strcmp(p, "setid-mkdir"))
		rc = syscall(SYS_mkdir, f, 02755);
	else if (!strcmp(p, "setid-mkdirat"))
		rc = syscall(SYS_mkdirat, AT_FDCWD, f, 02755);
	else
		return verdict(-1, "unknown set-id probe");
	int saved = errno;
	if (rc >= 0 && stat(f, &st) == 0 && !(st.st_mode & 06000)) {
		printf("blocked: %s: the bits did not stay (mode %o)\n", p, (unsigned)st.st_mode);
		return 1;
	}
	errno = saved;
	return verdict(rc, p);
}

/* Read a file: escaped only if it yields bytes. */
static int readsome(const char *path)
{
	char b[256];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return verdict(-1, path);
	ssize_t n = read(fd, b, sizeof b);
	close(fd);
	if (n <= 0) {
		printf("blocked: %s: %s\n", path, n < 0 ? strerror(errno) : "empty");
		return 1;
	}
	return verdict(0, path);
}

static int writesome(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return verdict(-1, path);
	ssize_t n = write(fd, s, strlen(s));
	close(fd);
	return verdict(n == (ssize_t)strlen(s) ? 0 : -1, path);
}

static int connectto(int family, const char *where)
{
	int fd;
	if (family == AF_UNIX) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0)
			return verdict(-1, "socket");
		/* abstract name: leading NUL */
		size_t n = strlen(where);
		memcpy(a.sun_path + 1, where, n);
		return verdict(connect(fd, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + 1 + n), "connect abstract unix");
	}
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(where))};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return verdict(-1, "socket(AF_INET)");
	return verdict(connect(fd, (struct sockaddr *)&a, sizeof a), "connect 127.0.0.1");
}

static int tiocsti(unsigned long high)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
		return verdict(-1, "open a pty");
	int s = open(ptsname(m), O_RDWR | O_NOCTTY);
	if (s < 0)
		return verdict(-1, "open the pty");
	char c = 'x';
	return verdict(syscall(SYS_ioctl, s, high | TIOCSTI, &c), "TIOCSTI");
}

static int forkmany(int limit)
{
	int n = 0;
	for (; n < limit; n++) {
		pid_t p = fork();
		if (p < 0)
			break;
		if (p == 0) {
			close(0), close(1), close(2);
			pause();
			_exit(0);
		}
	}
	printf("%s: forked %d of %d\n", n < limit ? "blocked" : "ESCAPED", n, limit);
	return n < limit ? 1 : 0; /* the children are left behind on purpose: the step's end must kill them */
}

static int capsnonzero(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return verdict(-1, "capget");
	if (d[0].effective | d[1].effective | d[0].permitted | d[1].permitted | d[0].inheritable | d[1].inheritable) {
		printf("ESCAPED: capabilities %x %x\n", d[0].effective, d[0].permitted);
		return 0;
	}
	for (int c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_READ, c) == 1) {
			printf("ESCAPED: bounding set has %d\n", c);
			return 0;
		}
	printf("blocked: no capabilities\n");
	return 1;
}

static int probe(int argc, char **argv)
{
	const char *p = argv[2], *arg = argc > 3 ? argv[3] : "";
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(p, "ptrace-init"))
		return verdict(ptrace(PTRACE_ATTACH, 1, 0, 0), p);
	if (!strcmp(p, "ptrace-traceme"))
		return verdict(ptrace(PTRACE_TRACEME, 0, 0, 0), p);
	if (!strcmp(p, "ptrace-child") || !strcmp(p, "vm-readv") || !strcmp(p, "vm-writev")) {
		pid_t c = fork();
		if (c == 0) {
			pause();
			_exit(0);
		}
		char buf[8] = {0};
		struct iovec l = {buf, sizeof buf}, r = {(void *)&forkmany, sizeof buf};
		long rc = !strcmp(p, "ptrace-child") ? ptrace(PTRACE_ATTACH, c, 0, 0)
		        : !strcmp(p, "vm-readv")     ? process_vm_readv(c, &l, 1, &r, 1, 0)
		                                     : process_vm_writev(c, &l, 1, &r, 1, 0);
		kill(c, SIGKILL);
		return verdict(rc, p);
	}
	if (!strcmp(p, "vm-readv-init")) {
		char buf[8];
		struct iovec l = {buf, sizeof buf}, r = {(void *)0x400000, sizeof buf};
		return verdict(process_vm_readv(1, &l, 1, &r, 1, 0), p);
	}
	if (!strcmp(p, "read"))
		return readsome(arg);
	if (!strcmp(p, "write"))
		return writesome(arg, "1\n");
	if (!strcmp(p, "keyctl"))
		return verdict(syscall(SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, "nightshift"), p);
	if (!strcmp(p, "add_key"))
		return verdict(syscall(SYS_add_key, "user", "k", "v", 1, -3 /* session */), p);
	if (!strcmp(p, "request_key"))
		return verdict(syscall(SYS_request_key, "user", "k", NULL, 0), p);
	if (!strcmp(p, "bpf")) {
		union bpf_attr a;
		memset(&a, 0, sizeof a);
		a.map_type = BPF_MAP_TYPE_ARRAY;
		a.key_size = 4, a.value_size = 4, a.max_entries = 1;
		return verdict(syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a), p);
	}
	if (!strcmp(p, "perf")) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.type = PERF_TYPE_SOFTWARE, a.size = sizeof a, a.config = PERF_COUNT_SW_CPU_CLOCK;
		return verdict(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0), p);
	}
	if (!strcmp(p, "userfaultfd"))
		return verdict(syscall(SYS_userfaultfd, 0), p);
	if (!strcmp(p, "io_uring")) {
		char params[120] = {0};
		return verdict(syscall(SYS_io_uring_setup, 4, params), p);
	}
	if (!strcmp(p, "unshare-user"))
		return verdict(unshare(CLONE_NEWUSER), p);
	if (!strcmp(p, "unshare-net"))
		return verdict(unshare(CLONE_NEWNET), p);
	if (!strcmp(p, "unshare-mount"))
		return verdict(unshare(CLONE_NEWNS), p);
	if (!strcmp(p, "clone-user") || !strcmp(p, "clone-pid")) {
		long rc = syscall(SYS_clone, (!strcmp(p, "clone-user") ? CLONE_NEWUSER : CLONE_NEWPID) | SIGCHLD, 0, 0, 0, 0);
		if (rc == 0)
			_exit(0);
		if (rc > 0)
			waitpid(rc, NULL, 0);
		return verdict(rc, p);
	}
	if (!strcmp(p, "clone3-user")) {
		uint64_t args[11] = {CLONE_NEWUSER, 0, 0, 0, SIGCHLD};
		long rc = syscall(SYS_clone3, args, 88);
		if (rc == 0)
			_exit(0);
		return verdict(rc, p);
	}
	if (!strcmp(p, "setns")) {
		int fd = open(arg, O_RDONLY);
		if (fd < 0)
			return verdict(-1, arg);
		return verdict(setns(fd, 0), p);
	}
	if (!strcmp(p, "mount-tmpfs"))
		return verdict(mount("tmpfs", "/tmp", "tmpfs", 0, NULL), p);
	if (!strcmp(p, "mount-proc"))
		return verdict(mount("proc", "/tmp", "proc", 0, NULL), p);
	if (!strcmp(p, "remount-rw"))
		return verdict(mount(NULL, arg, NULL, MS_REMOUNT | MS_BIND, NULL), p);
	if (!strcmp(p, "bind-root"))
		return verdict(mount("/", "/tmp", NULL, MS_BIND | MS_REC, NULL), p);
	if (!strcmp(p, "umount"))
		return verdict(umount2(arg, MNT_DETACH), p);
	if (!strcmp(p, "pivot_root"))
		return verdict(syscall(SYS_pivot_root, "/tmp", "/tmp"), p);
	if (!strcmp(p, "chroot"))
		return verdict(chroot("/tmp"), p);
	if (!strcmp(p, "mount_setattr")) {
		uint64_t attr[4] = {0, 1 /* clear MOUNT_ATTR_RDONLY */, 0, 0};
		return verdict(syscall(SYS_mount_setattr, AT_FDCWD, "/usr", 0x8000, attr, sizeof attr), p);
	}
	if (!strcmp(p, "open_tree"))
		return verdict(syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */), p);
	if (!strcmp(p, "fsopen"))
		return verdict(syscall(SYS_fsopen, "tmpfs", 0), p);
	if (!strcmp(p, "setuid0"))
		return verdict(setuid(0), p);
	if (!strcmp(p, "setgid0"))
		return verdict(setgid(0), p);
	if (!strcmp(p, "setgroups"))
		return verdict(setgroups(0, NULL), p);
	if (!strcmp(p, "capset")) {
		struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct d[2];
		memset(d, 0xff, sizeof d);
		return verdict(syscall(SYS_capset, &h, d), p);
	}
	if (!strcmp(p, "ambient"))
		return verdict(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_ADMIN, 0, 0), p);
	if (!strcmp(p, "caps"))
		return capsnonzero();
	if (!strcmp(p, "euid")) {
		if (geteuid() == 1000)
			return capsnonzero();
		printf("ESCAPED: euid %d\n", (int)geteuid());
		return 0;
	}
	if (!strcmp(p, "socket-inet"))
		return verdict(socket(AF_INET, SOCK_STREAM, 0), p);
	if (!strcmp(p, "socket-inet6"))
		return verdict(socket(AF_INET6, SOCK_DGRAM, 0), p);
	if (!strcmp(p, "socket-netlink"))
		return verdict(socket(AF_NETLINK, SOCK_RAW, 0), p);
	if (!strcmp(p, "socket-packet"))
		return verdict(socket(AF_PACKET, SOCK_RAW, 0), p);
	if (!strcmp(p, "socket-packet-high")) /* the kernel reads the family as an int */
		return verdict(syscall(SYS_socket, (1ul << 32) | AF_PACKET, SOCK_RAW, 0), p);
	if (!strcmp(p, "socket-raw"))
		return verdict(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), p);
	if (!strcmp(p, "socket-vsock"))
		return verdict(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0), p);
	if (!strcmp(p, "connect-tcp"))
		return connectto(AF_INET, arg);
	if (!strcmp(p, "connect-abstract"))
		return connectto(AF_UNIX, arg);
	if (!strcmp(p, "tiocsti"))
		return tiocsti(0);
	if (!strcmp(p, "tiocsti-high"))
		return tiocsti(1ul << 32);
	if (!strcmp(p, "kexec"))
		return verdict(syscall(SYS_kexec_load, 0, 0, NULL, 0), p);
	if (!strcmp(p, "init_module"))
		return verdict(syscall(SYS_init_module, "", 0, ""), p);
	if (!strcmp(p, "finit_module")) {
		int fd = open("/dev/null", O_RDONLY);
		return verdict(syscall(SYS_finit_module, fd, "", 0), p);
	}
	if (!strcmp(p, "delete_module"))
		return verdict(syscall(SYS_delete_module, "ext4", O_NONBLOCK), p);
	if (!strncmp(p, "setid-", 6))
		return setid(p);
	if (!strcmp(p, "mknod"))
		return verdict(mknod("/tmp/disk", S_IFBLK | 0600, makedev(254, 0)), p);
	if (!strcmp(p, "mknod-mem"))
		return verdict(mknod("/workspace/mem", S_IFCHR | 0600, makedev(1, 1)), p);
	if (!strcmp(p, "sethostname"))
		return verdict(sethostname("pwned", 5), p);
	if (!strcmp(p, "iopl"))
		return verdict(syscall(SYS_iopl, 3), p);
	if (!strcmp(p, "ioperm"))
		return verdict(syscall(SYS_ioperm, 0x80, 1, 1), p);
	if (!strcmp(p, "open_by_handle")) {
		struct {
			unsigned int bytes;
			int type;
			unsigned char h[8];
		} fh = {8, 1, {2, 0, 0, 0, 0, 0, 0, 0}};
		return verdict(syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY), p);
	}
	if (!strcmp(p, "reboot"))
		return verdict(reboot(RB_POWER_OFF), p);
	if (!strcmp(p, "swapon"))
		return verdict(syscall(SYS_swapon, "/workspace/probe", 0), p);
	if (!strcmp(p, "syslog")) {
		char b[64];
		return verdict(klogctl(3, b, sizeof b), p);
	}
	if (!strcmp(p, "acct"))
		return verdict(syscall(SYS_acct, "/tmp/acct"), p);
	if (!strcmp(p, "settime")) {
		struct timeval tv = {1, 0};
		return verdict(settimeofday(&tv, NULL), p);
	}
	if (!strcmp(p, "chown-root"))
		return verdict(chown(arg, 0, 0), p);
	if (!strcmp(p, "kill"))
		return verdict(kill(atoi(arg), SIGKILL), p);
	if (!strcmp(p, "shmat"))
		return verdict((long)shmat(atoi(arg), NULL, SHM_RDONLY) == -1 ? -1 : 0, p);
	if (!strcmp(p, "forkmany"))
		return forkmany(atoi(arg));
	if (!strcmp(p, "fds")) {
		DIR *d = opendir("/proc/self/fd");
		struct dirent *de;
		int extra = 0;
		while (d && (de = readdir(d)))
			if (atoi(de->d_name) > 2 && atoi(de->d_name) != dirfd(d))
				printf("open fd %s\n", de->d_name), extra++;
		printf("%s: %d inherited descriptors beyond 0-2\n", extra ? "ESCAPED" : "blocked", extra);
		return extra ? 0 : 1;
	}
	printf("unknown probe %s\n", p);
	return 2;
}

/* ---------------- the tests, on the host ---------------- */

static struct sbxresult R;
static struct err E;
static char ws[128], secretfile[256];
static int port, shmid = -1;
static char abstract[64];

static int run(struct sbx *s, const char *cmd)
{
	sbxresultfree(&R);
	memset(&R, 0, sizeof R);
	if (sbxexec(s, cmd, &R, &E) < 0) {
		ok(0, "exec '%s': %s", cmd, E.msg);
		R.exit_code = -99;
		return -99;
	}
	if (!R.out.data)
		bufputs(&R.out, "");
	if (!R.err.data)
		bufputs(&R.err, "");
	return R.exit_code;
}

#define OUT (R.out.data ? R.out.data : "")
#define ERR (R.err.data ? R.err.data : "")

static int nescapes;

/* One escape attempt through the probe: it must say blocked. */
static void blocked(struct sbx *s, const char *name, const char *arg)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "/workspace/probe probe %s %s", name, arg ? arg : "");
	run(s, cmd);
	nescapes++;
	ok(R.exit_code == 1 && strstr(OUT, "blocked"), "escape %s %s: exit %d, out %s err %s", name, arg ? arg : "", R.exit_code, OUT, ERR);
}

/* One escape attempt as a shell command: it must fail (exit status not 0). */
static void fails(struct sbx *s, const char *cmd)
{
	run(s, cmd);
	nescapes++;
	ok(R.exit_code != 0 && R.exit_code != -99, "escape '%s' succeeded: out %s err %s", cmd, OUT, ERR);
}

static struct sandboxconf conf(void)
{
	struct sandboxconf c;
	memset(&c, 0, sizeof c);
	c.backend = BACKEND_NAMESPACE;
	c.image = "host";
	c.memory = 256ll << 20;
	c.pids = 64;
	c.cpus = 1;
	c.timeout_ms = 20000;
	return c;
}

static char *env[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/tmp", "LANG=C.UTF-8",
                      "ASAN_OPTIONS=detect_leaks=0", NULL};

static struct sbx *opensbx(const struct sandboxconf *c, const char *dir, size_t cap)
{
	struct sbx *s = NULL;
	struct sbxconf sc = {c, dir, env, cap};
	memset(&E, 0, sizeof E);
	if (sbxopen(&s, &sc, &E) < 0) {
		ok(0, "sbxopen: %s", E.msg);
		return NULL;
	}
	return s;
}

/* Is a process with this text in its command line alive on the host? */
static int hostproc(const char *marker)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;
	while (d && (de = readdir(d))) {
		char path[300], buf[512];
		if (!atoi(de->d_name) || atoi(de->d_name) == getpid())
			continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		for (ssize_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[n] = 0;
		/* a zombie or a dying process has no command line any more */
		if (strstr(buf, marker))
			found = 1;
	}
	if (d)
		closedir(d);
	return found;
}

static void copyfile(const char *from, const char *to, int mode)
{
	struct buf b = {0};
	struct err e;
	ok(readfile(from, &b, &e) == 0, "read %s", from);
	int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ok(fd >= 0 && write(fd, b.data, b.len) == (ssize_t)b.len, "write %s", to);
	close(fd);
	chmod(to, mode);
	buffree(&b);
}

static void mkworkspace(char *dir, size_t n, uid_t owner)
{
	snprintf(dir, n, "/tmp/ns-sbx-test.XXXXXX");
	ok(mkdtemp(dir) != NULL, "mkdtemp");
	char *p = pathjoin(dir, "probe");
	copyfile("/proc/self/exe", p, 0755);
	free(p);
	if (owner) {
		ok(chown(dir, owner, owner) == 0, "chown workspace");
		chmod(dir, 0755);
	}
}

static int listener(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t l = sizeof a;
	ok(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 8) == 0, "host listener");
	getsockname(fd, (struct sockaddr *)&a, &l);
	port = ntohs(a.sin_port);
	/* and an abstract unix socket, which a new network namespace also hides */
	int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un ua = {.sun_family = AF_UNIX};
	snprintf(abstract, sizeof abstract, "nightshift-test-%d", (int)getpid());
	memcpy(ua.sun_path + 1, abstract, strlen(abstract));
	ok(u >= 0 && bind(u, (struct sockaddr *)&ua, offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract)) == 0 && listen(u, 8) == 0,
	   "abstract listener");
	return fd;
}

static void nsinfo(const char *ns, char *out, size_t n)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/self/ns/%s", ns);
	ssize_t l = readlink(p, out, n - 1);
	out[l > 0 ? l : 0] = 0;
}

static void testbasics(struct sbx *s)
{
	run(s, "id -u; id -g; pwd; hostname; cat /proc/self/status | grep -E '^(NoNewPrivs|Seccomp):'");
	ok(R.exit_code == 0 && R.signal == 0 && !R.timed_out && !R.oom, "basic command: exit %d err %s", R.exit_code, ERR);
	okstr(OUT, "1000\n1000\n/workspace\nnightshift\nNoNewPrivs:\t1\nSeccomp:\t2\n", "ids, cwd, hostname, no_new_privs, seccomp");
	run(s, "exit 42");
	ok(R.exit_code == 42 && R.signal == 0, "exit code 42: %d", R.exit_code);
	run(s, "kill -TERM $$");
	ok(R.exit_code == -1 && R.signal == SIGTERM && !R.timed_out, "signal reported: exit %d signal %d", R.exit_code, R.signal);
	run(s, "cat; echo done");
	okstr(OUT, "done\n", "stdin is /dev/null");
	run(s, "echo out; echo err >&2");
	okstr(OUT, "out\n", "stdout captured");
	okstr(ERR, "err\n", "stderr captured");
	run(s, "env | sort");
	okstr(OUT, "ASAN_OPTIONS=detect_leaks=0\nHOME=/tmp\nLANG=C.UTF-8\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nPWD=/workspace\n",
	      "only the given environment");
	ok(strstr(R.limits, "cgroup") || strstr(R.limits, "rlimit"), "limits note: %s", R.limits);

	/* Files written in the workspace belong to whoever ran the sandbox. */
	run(s, "echo hello > /workspace/written && ls -ln /workspace/written");
	char *p = pathjoin(ws, "written");
	struct stat st;
	ok(stat(p, &st) == 0 && st.st_uid == geteuid() && st.st_gid == getegid(), "workspace file owned by the invoking user");
	free(p);
	/* The workspace view is live: a file made on the host after open shows. */
	p = pathjoin(ws, "fromhost");
	writefile(p, "x", 1, NULL);
	free(p);
	run(s, "cat /workspace/fromhost");
	okstr(OUT, "x", "workspace view is live");
	/* Warm: /tmp lives as long as the sandbox. */
	run(s, "echo kept > /tmp/state");
	run(s, "cat /tmp/state");
	okstr(OUT, "kept\n", "warm sandbox keeps /tmp between steps");
	/* Every namespace differs from ours. */
	static const char *const nss[] = {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"};
	for (size_t i = 0; i < sizeof nss / sizeof *nss; i++) {
		char cmd[128], mine[128];
		snprintf(cmd, sizeof cmd, "readlink /proc/self/ns/%s", nss[i]);
		run(s, cmd);
		nsinfo(nss[i], mine, sizeof mine);
		ok(R.exit_code == 0 && strncmp(OUT, mine, strlen(mine)) != 0 && strncmp(OUT, nss[i], strlen(nss[i])) == 0,
		   "new %s namespace: %s vs %s", nss[i], OUT, mine);
	}
	run(s, "ls /dev | tr '\\n' ' '");
	okstr(OUT, "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero ", "minimal /dev");
	run(s, "head -c 4 /dev/urandom | wc -c; echo x > /dev/null && echo null-ok");
	okstr(OUT, "4\nnull-ok\n", "device nodes work");
	run(s, "touch /tmp/t && ls /proc/self/fd | wc -l && ulimit -c");
	okstr(OUT, "4\n0\n", "fresh /tmp, no leaked descriptors, no core dumps");
}

static void testfilesystem(struct sbx *s)
{
	char cmd[512];
	/* Read a host file outside the mounts. */
	snprintf(cmd, sizeof cmd, "cat %s", secretfile);
	fails(s, cmd);
	blocked(s, "read", secretfile);
	fails(s, "cat /etc/shadow");
	blocked(s, "read", "/etc/shadow");
	blocked(s, "read", "/etc/gshadow");
	fails(s, "ls /root");
	fails(s, "ls /home");
	fails(s, "ls /var/log");
	fails(s, "ls /run");
	fails(s, "ls -l /var/run/docker.sock /run/docker.sock");
	fails(s, "ls /sys/fs/cgroup");
	fails(s, "ls /oldroot /newroot");
	run(s, "grep -c . /proc/self/mountinfo; grep -c -E ' /(home|root|var|run|oldroot) ' /proc/self/mountinfo");
	ok(strstr(OUT, "\n0\n") != NULL, "no host mounts of /home /root /var /run: %s", OUT);
	/* Write to read-only system directories and the root. */
	fails(s, "touch /usr/nightshift-x");
	fails(s, "touch /usr/bin/nightshift-x");
	fails(s, "touch /etc/nightshift-x");
	fails(s, "echo 'x::0:0::/:/bin/sh' >> /etc/passwd");
	fails(s, "rm -f /usr/bin/env");
	fails(s, "chmod 777 /usr/bin/env");
	fails(s, "touch /nightshift-x");
	fails(s, "mkdir /newdir");
	fails(s, "ln -s /workspace /etc/x");
	blocked(s, "chown-root", "/workspace/probe");
	/* /proc and /sys. */
	blocked(s, "write", "/proc/sys/kernel/hostname");
	blocked(s, "write", "/proc/sys/vm/drop_caches");
	blocked(s, "write", "/proc/sys/kernel/core_pattern");
	blocked(s, "write", "/proc/sysrq-trigger");
	blocked(s, "write", "/sys/kernel/uevent_helper");
	blocked(s, "read", "/proc/kcore");
	blocked(s, "read", "/proc/keys");
	blocked(s, "read", "/proc/timer_list");
	fails(s, "grep -qv '^0000000000000000 ' /proc/kallsyms"); /* kernel addresses hidden */
	blocked(s, "read", "/proc/1/environ");
	blocked(s, "read", "/proc/1/mem");
	blocked(s, "mknod", NULL);
	blocked(s, "mknod-mem", NULL);
	fails(s, "ls /dev/mem /dev/kmsg /dev/vda /dev/sda");
}

static void testprivileges(struct sbx *s)
{
	static const char *const probes[] = {
		"ptrace-init", "ptrace-traceme", "ptrace-child", "vm-readv", "vm-writev", "vm-readv-init",
		"keyctl", "add_key", "request_key", "bpf", "perf", "userfaultfd", "io_uring",
		"unshare-user", "unshare-net", "unshare-mount", "clone-user", "clone-pid", "clone3-user",
		"mount-tmpfs", "mount-proc", "bind-root", "pivot_root", "chroot", "mount_setattr", "open_tree", "fsopen",
		"setuid0", "setgid0", "setgroups", "capset", "ambient", "caps",
		"socket-inet", "socket-inet6", "socket-netlink", "socket-packet", "socket-raw", "socket-vsock",
		"tiocsti", "tiocsti-high", "kexec", "init_module", "finit_module", "delete_module",
		"sethostname", "iopl", "ioperm", "open_by_handle", "reboot", "swapon", "syslog", "acct", "settime", "fds",
		"setid-chmod", "setid-fchmod", "setid-fchmodat", "setid-fchmodat2", "setid-chmod-high", "setid-open",
		"setid-openat", "setid-openat2", "setid-creat", "setid-mknod", "setid-mknodat", "setid-mkdir", "setid-mkdirat",
	};
	for (size_t i = 0; i < sizeof probes / sizeof *probes; i++)
		blocked(s, probes[i], NULL);
	blocked(s, "remount-rw", "/usr");
	blocked(s, "remount-rw", "/workspace");
	blocked(s, "umount", "/workspace");
	blocked(s, "umount", "/proc");
	blocked(s, "umount", "/etc/shadow");
	blocked(s, "setns", "/proc/1/ns/net");
	blocked(s, "setns", "/proc/1/ns/mnt");
	blocked(s, "setns", "/proc/self/ns/user");
	run(s, "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status | grep -vc '0000000000000000$'");
	okstr(OUT, "0\n", "CapInh CapPrm CapEff CapBnd CapAmb all zero");
	fails(s, "unshare -U true");
	fails(s, "unshare -r true");
	fails(s, "nsenter -t 1 -n true");
	fails(s, "mount -t tmpfs none /tmp");
	fails(s, "hostname pwned");
	fails(s, "su -c id root </dev/null");
	/* A setuid-root binary in the workspace gains nothing. */
	if (geteuid() == 0) {
		char *suid = pathjoin(ws, "suid");
		copyfile("/proc/self/exe", suid, 04755);
		ok(chown(suid, 0, 0) == 0 && chmod(suid, 04755) == 0, "make a setuid-root copy");
		free(suid);
		run(s, "/workspace/suid probe euid");
		nescapes++;
		ok(R.exit_code == 1 && strstr(OUT, "blocked"), "setuid binary: %s %s", OUT, ERR);
	} else {
		printf("SKIPPED setuid-root: making a setuid-root binary needs root\n");
	}
	/* Signals and IPC do not reach the host. */
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	blocked(s, "kill", pid);
	if (shmid >= 0) {
		snprintf(pid, sizeof pid, "%d", shmid);
		blocked(s, "shmat", pid);
	}
	/* Init survives what a step can send it. */
	run(s, "kill -KILL 1; kill -TERM 1; kill -STOP 1; kill -9 -1; echo $$");
	run(s, "echo alive");
	okstr(OUT, "alive\n", "init survives kill -9 1 and kill -9 -1");
}

static void testnetwork(struct sbx *s)
{
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	blocked(s, "connect-tcp", p);
	blocked(s, "connect-abstract", abstract);
	fails(s, "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", " "1))'");
	run(s, "ls /proc | grep -c '^[0-9]'");
	ok(atoi(OUT) <= 4, "host processes are not visible (%s)", OUT);
	run(s, "ps -e -o pid=,comm= | wc -l");
	ok(R.exit_code == 0 && atoi(OUT) <= 4, "ps sees only the sandbox: %s", OUT);
	nescapes += 2;
}

/* API keys in nightshift's environment must not reach the sandbox by any path. */
static void testsecrets(struct sbx *s)
{
	run(s, "env; cat /proc/1/environ /proc/*/environ /proc/1/cmdline 2>/dev/null | tr '\\0' '\\n'; echo end");
	nescapes++;
	ok(!strstr(OUT, "sk-nightshift-test-secret") && strstr(OUT, "end"), "API key visible in the sandbox: %s", OUT);
	run(s, "grep -rl 'sk-nightshift-test-secre[t]' /proc/[0-9]*/environ /proc/[0-9]*/cmdline /tmp /dev/shm 2>/dev/null; echo end");
	okstr(OUT, "end\n", "no file inside holds the key");
	nescapes++;
	run(s, "tr '\\0' ' ' </proc/1/cmdline");
	if (strstr(OUT, "valgrind"))
		printf("SKIPPED cmdline-scrub: under valgrind the command line is valgrind's\n");
	else
		ok(strncmp(OUT, "nightshift-init", 15) == 0, "init's command line is scrubbed: %s", OUT);
}

static void testlimits(struct sbx *s)
{
	char marker[32], cmd[512];
	/* Background processes do not survive the step, even in a new session. */
	snprintf(marker, sizeof marker, "sleep 1%05d", (int)getpid() % 100000);
	snprintf(cmd, sizeof cmd, "%s & setsid %s & nohup %s >/dev/null 2>&1 & (setsid sh -c '%s & :' &) ; echo started", marker, marker, marker, marker);
	run(s, cmd);
	okstr(OUT, "started\n", "background started");
	nescapes++;
	ok(!hostproc(marker), "a background process survived the step");
	run(s, "ps -e -o comm= | grep -c sleep");
	okstr(OUT, "0\n", "no sleep left in the sandbox");
	/* Fork bomb held by the pids limit, then cleared. */
	blocked(s, "forkmany", "500");
	run(s, "ps -e -o comm= | grep -c probe");
	okstr(OUT, "0\n", "forked children killed at the end of the step");
	run(s, "b(){ b|b& }; b; sleep 1; echo bomb");
	nescapes++;
	ok(!R.timed_out, "fork bomb ended with its step");
	run(s, "echo after-bomb");
	okstr(OUT, "after-bomb\n", "sandbox usable after a fork bomb");
	/* Memory bomb killed by the cgroup and reported as OOM (where the cgroup is ours). */
	run(s, "head -c 1000m /dev/zero | tail > /dev/null; echo $?");
	nescapes++;
	if (strstr(R.limits, "memory")) {
		ok(R.oom == 1, "memory bomb reported as OOM: oom %d exit %d out %s limits %s", R.oom, R.exit_code, OUT, R.limits);
		ok(strstr(OUT, "137") != NULL, "the bomb was SIGKILLed: %s", OUT);
	} else {
		ok(strcmp(OUT, "0\n") != 0, "memory bomb fails under RLIMIT_AS: %s", OUT);
	}
	run(s, "echo after-oom");
	okstr(OUT, "after-oom\n", "sandbox usable after OOM");
}

static void testtimeout(void)
{
	struct sandboxconf c = conf();
	c.timeout_ms = 1000;
	struct sbx *s = opensbx(&c, ws, 0);
	if (!s)
		return;
	char marker[64], cmd[256];
	snprintf(marker, sizeof marker, "sleep 2%05d", (int)getpid() % 100000);
	snprintf(cmd, sizeof cmd, "(setsid sh -c '%s; :' &); trap '' TERM; echo before; sleep 30", marker);
	run(s, cmd);
	ok(R.timed_out && R.signal == SIGKILL && R.exit_code == -1 && !R.oom, "timeout reported: to %d sig %d exit %d", R.timed_out, R.signal, R.exit_code);
	/* Not before its time; the upper bound only says it was the timeout, not the 30 s sleep's end. */
	ok(R.duration_ms >= 900 && R.duration_ms < 20000, "timeout duration %lld", (long long)R.duration_ms);
	okstr(OUT, "before\n", "output before the timeout kept");
	nescapes++;
	ok(!hostproc(marker), "a process survived the timeout");
	run(s, "echo next");
	okstr(OUT, "next\n", "sandbox usable after a timeout");
	sbxclose(s);
}

static void testcap(void)
{
	struct sandboxconf c = conf();
	struct sbx *s = opensbx(&c, ws, 4096);
	if (!s)
		return;
	run(s, "head -c 100000 /dev/zero; head -c 10 /dev/zero >&2");
	ok(R.out.len <= 4096 && R.out.len > 4000 && R.truncated && R.err.len == 10 && R.exit_code == 0 &&
	   memmem(R.out.data, R.out.len, "95984 bytes not kept by the sandbox", 35), "output capped, head and tail: %zu %d",
	   R.out.len, R.truncated);
	run(s, "echo small");
	ok(!R.truncated, "no truncation flag for small output");
	sbxclose(s);
}

static void testmounts(void)
{
	char ro[300], rw[300], file[300];
	snprintf(ro, sizeof ro, "%s-ro", ws);
	snprintf(rw, sizeof rw, "%s-rw", ws);
	snprintf(file, sizeof file, "%s-file", ws);
	mkdir(ro, 0755), mkdir(rw, 0755);
	writefile(file, "filedata", 8, NULL);
	char *rof = pathjoin(ro, "data");
	writefile(rof, "rodata", 6, NULL);
	free(rof);
	struct mount m[3] = {{ro, "/data", 0, {0}}, {rw, "/out", 1, {0}}, {file, "/config/extra.conf", 0, {0}}};
	struct sandboxconf c = conf();
	c.mounts = m;
	c.nmounts = 3;
	struct sbx *s = opensbx(&c, ws, 0);
	if (!s)
		return;
	run(s, "cat /data/data; echo; cat /config/extra.conf; echo; echo w > /out/w && cat /out/w");
	okstr(OUT, "rodata\nfiledata\nw\n", "declared mounts");
	fails(s, "echo x > /data/data");
	fails(s, "touch /data/new");
	fails(s, "echo x > /config/extra.conf");
	blocked(s, "remount-rw", "/data");
	blocked(s, "umount", "/data");
	sbxclose(s);
	/* A file mounted over one that exists in a read-only system folder; one that would
	   have to be made there is refused, naming the reason. */
	struct mount over = {file, "/usr/bin/env", 0, {0}}, missing = {file, "/usr/nightshift-no-such-file", 0, {0}};
	c.mounts = &over;
	c.nmounts = 1;
	if ((s = opensbx(&c, ws, 0))) {
		run(s, "cat /usr/bin/env");
		okstr(OUT, "filedata", "a file mounted over a file of a read-only folder");
		sbxclose(s);
	}
	/* One that does not exist there is made on a tmpfs laid over the folder, whose entries show
	   again read-only; the host's folder is untouched. */
	c.mounts = &missing;
	if ((s = opensbx(&c, ws, 0))) {
		run(s, "cat /usr/nightshift-no-such-file; test -x /usr/bin/env && echo ok; touch /usr/x 2>/dev/null || echo ro");
		okstr(OUT, "filedataok\nro\n", "a mount point made in a read-only system folder, its entries shown");
		sbxclose(s);
	}
	ok(access("/usr/nightshift-no-such-file", F_OK) != 0, "the host's folder is untouched");
	char *w = pathjoin(rw, "w");
	unlink(w);
	free(w);
	rof = pathjoin(ro, "data");
	unlink(rof);
	free(rof);
	rmdir(ro), rmdir(rw), unlink(file);
}

/* The host pid of a sandbox's init: the process named nightshift-init whose parent is our child. */
static pid_t findinit(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;
	while (d && (de = readdir(d)) && !found) {
		char path[300];
		struct buf b = {0};
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if (!atoi(de->d_name) || readfile(path, &b, NULL) < 0)
			continue;
		char *c = strrchr(b.data, ')');
		int ppid = 0;
		/* not one that died and waits for its parent to reap it */
		if (strstr(b.data, "(nightshift-init)") && c && c[1] == ' ' && c[2] != 'Z' && sscanf(c + 2, "%*c %d", &ppid) == 1) {
			snprintf(path, sizeof path, "/proc/%d/stat", ppid);
			struct buf pb = {0};
			char *pc;
			int pp = 0;
			if (readfile(path, &pb, NULL) == 0 && (pc = strrchr(pb.data, ')')) && sscanf(pc + 2, "%*c %d", &pp) == 1 && pp == getpid())
				found = atoi(de->d_name);
			buffree(&pb);
		}
		buffree(&b);
	}
	if (d)
		closedir(d);
	return found;
}

/* Wait up to ms for process pid to end (gone, or a zombie its parent has yet to reap). */
static int procgone(pid_t pid, int ms)
{
	for (int64_t end = nowms() + ms;; usleep(10000)) {
		char path[64], buf[512];
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		char *rp = f && fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
		if (f)
			fclose(f);
		if (!f || (rp && rp[1] == ' ' && rp[2] == 'Z'))
			return 1;
		if (nowms() > end)
			return 0;
	}
}

/* The parent of process pid, or 0. */
static pid_t ppidof(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	char *rp = f && fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
	int pp = 0;
	if (f)
		fclose(f);
	if (!rp || sscanf(rp + 2, "%*c %d", &pp) != 1)
		return 0;
	return pp;
}

/* When init dies (the OOM killer, an operator), the step in flight fails and the next starts afresh. */
static void testrestart(void)
{
	struct sandboxconf c = conf();
	struct sbx *s = opensbx(&c, ws, 0);
	if (!s)
		return;
	run(s, "echo one > /tmp/mark; echo ok");
	pid_t z = findinit();
	ok(z > 0, "found the sandbox's init");
	if (z > 0) {
		/* The sandbox sees init's end when its control socket closes: init's copy at its death,
		   the helper's (init's parent) when it ends too. Both are waited for. */
		pid_t helper = ppidof(z);
		kill(z, SIGKILL);
		ok(procgone(z, 30000) && helper > 0 && procgone(helper, 30000), "init %d and its helper %d ended", (int)z,
		   (int)helper);
		run(s, "cat /tmp/mark 2>/dev/null || echo fresh");
		okstr(OUT, "fresh\n", "after init died between steps, the next step runs in a fresh sandbox");
		z = findinit();
		ok(z > 0, "found the new sandbox's init");
	}
	if (z > 0) {
		/* Killed once the step runs (its sleep of our own is seen), not after a guessed delay. */
		char marker[64], cmd[96];
		snprintf(marker, sizeof marker, "sleep 6%05d", (int)getpid() % 100000);
		snprintf(cmd, sizeof cmd, "%s; echo never", marker);
		pid_t killer = fork();
		if (killer == 0) {
			for (int64_t end = nowms() + 60000; !hostproc(marker) && nowms() < end;)
				usleep(10000);
			kill(z, SIGKILL);
			_exit(0);
		}
		struct sbxresult r;
		ok(sbxexec(s, cmd, &r, &E) < 0 && strstr(E.msg, "died"), "init killed during a step: %s", E.msg);
		waitpid(killer, NULL, 0);
		run(s, "echo again");
		okstr(OUT, "again\n", "and the step after that runs");
	}
	sbxclose(s);
}

/* Jobs run in threads (-j N): sandboxes opened, used and closed at the same time.
   Built with ASan they are opened one after the other before the threads start: GCC 12's
   libasan takes no lock of its allocator around fork (LLVM added that in 18), so a helper
   forked while another thread is in malloc can hang in the child (google/sanitizers#774).
   Under valgrind (tests/valgrind sets NS_VALGRIND) too: a helper forked while another thread
   opens its sandbox holds that thread's memory with no pointer to it, and reports it lost
   when it exits. glibc's malloc is fork-safe, and the plain build opens them at once. */
static int openahead(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return 1;
#else
	return getenv("NS_VALGRIND") != NULL;
#endif
}

struct threadjob {
	int id, good;
	struct sandboxconf c;
	struct sbx *s;
	char why[1100]; /* the first thing that went wrong */
};

static int threadopen(struct threadjob *j)
{
	struct sbxconf sc = {&j->c, ws, env, 0};
	struct err e = {0};
	if (sbxopen(&j->s, &sc, &e) < 0) {
		snprintf(j->why, sizeof j->why, "open: %s", e.msg);
		j->s = NULL;
		return -1;
	}
	return 0;
}

static void *threadmain(void *arg)
{
	struct threadjob *j = arg;
	struct err e = {0};
	if (!openahead() && threadopen(j) < 0)
		return NULL;
	if (!j->s)
		return NULL;
	for (int i = 0; i < 5; i++) {
		struct sbxresult r;
		char cmd[64], want[64];
		snprintf(cmd, sizeof cmd, "echo %d-%d; sleep 0.0%d", j->id, i, i);
		snprintf(want, sizeof want, "%d-%d\n", j->id, i);
		int rc = sbxexec(j->s, cmd, &r, &e);
		if (rc == 0 && r.exit_code == 0 && r.out.data && strcmp(r.out.data, want) == 0)
			j->good++;
		else if (!*j->why)
			snprintf(j->why, sizeof j->why, "step %d: %s", i,
			         rc < 0 ? e.msg : r.err.data ? r.err.data : r.out.data ? r.out.data : "no output");
		sbxresultfree(&r);
	}
	sbxclose(j->s);
	return NULL;
}

static void testthreads(void)
{
	pthread_t t[4];
	static struct threadjob j[4];
	for (int i = 0; i < 4; i++) {
		j[i] = (struct threadjob){.id = i, .c = conf()};
		if (openahead())
			threadopen(&j[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, threadmain, &j[i]);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ok(j[i].good == 5, "thread %d%s: %d of 5 steps right %s", i, openahead() ? " (opened ahead)" : "",
		   j[i].good, j[i].why);
	}
}

/* Positive control: with the host network, the same probe reaches the listener. */
static void testhostnet(void)
{
	struct sandboxconf c = conf();
	c.network_host = 1;
	struct sbx *s = opensbx(&c, ws, 0);
	if (!s)
		return;
	char p[16], cmd[128];
	snprintf(p, sizeof p, "%d", port);
	snprintf(cmd, sizeof cmd, "/workspace/probe probe connect-tcp %s", p);
	run(s, cmd);
	ok(R.exit_code == 0 && strstr(OUT, "ESCAPED"), "network: host reaches the host listener (control): %s %s", OUT, ERR);
	blocked(s, "socket-packet", NULL);
	blocked(s, "socket-vsock", NULL); /* no network namespace holds vsock: the hypervisor, other VMs */
	/* The capability check refuses it too (EPERM): the filter's errno says the filter did. */
	run(s, "/workspace/probe probe socket-packet-high");
	ok(strstr(OUT, "blocked") && strstr(OUT, strerror(EAFNOSUPPORT)), "network: host, packet socket with high bits in the family refused by the filter: %s", OUT);
	blocked(s, "socket-raw", NULL);
	run(s, "readlink /proc/self/ns/net");
	char mine[128];
	nsinfo("net", mine, sizeof mine);
	ok(strncmp(OUT, mine, strlen(mine)) == 0, "network: host shares the network namespace");
	sbxclose(s);
}

static void testimage(void)
{
	char root[300], path[400];
	snprintf(root, sizeof root, "%s-root", ws);
	snprintf(path, sizeof path, "%s/bin", root);
	ok(mkdirs(path, 0755, NULL) == 0, "rootfs dir");
	snprintf(path, sizeof path, "%s/bin/busybox", root);
	if (access("/usr/bin/busybox", X_OK) != 0 && access("/bin/busybox", X_OK) != 0) {
		printf("SKIPPED image-dir: no static busybox to build a root file system\n");
		return;
	}
	copyfile(access("/usr/bin/busybox", X_OK) == 0 ? "/usr/bin/busybox" : "/bin/busybox", path, 0755);
	static const char *const tools[] = {"sh", "ls", "cat", "echo", "id"};
	for (size_t i = 0; i < sizeof tools / sizeof *tools; i++) {
		snprintf(path, sizeof path, "%s/bin/%s", root, tools[i]);
		symlink("busybox", path);
	}
	struct sandboxconf c = conf();
	c.image = root;
	struct sbx *s = opensbx(&c, ws, 0);
	if (s) {
		run(s, "ls / | tr '\\n' ' '; id -u; echo hi > /workspace/fromimage && cat /workspace/fromimage");
		okstr(OUT, "bin dev proc tmp workspace 1000\nhi\n", "rootfs image with nothing of the host");
		fails(s, "ls /usr /etc");
		fails(s, "touch /bin/x");
		sbxclose(s);
	}
	char *cmd = xasprintf("rm -rf '%s' '%s/fromimage'", root, ws);
	ok(system(cmd) == 0, "clean the rootfs");
	free(cmd);
	/* An image that is neither host nor a folder is refused. */
	c.image = secretfile;
	struct sbx *bad = NULL;
	struct sbxconf sc = {&c, ws, env, 0};
	ok(sbxopen(&bad, &sc, &E) < 0 && strstr(E.msg, "root file system folder"), "image file refused: %s", E.msg);
}

static int cgroupsgone(const char *dir, int ms);

/* The folder of our own cgroup of v1 controller ctrl, or "" (v2, or no such hierarchy). */
static void owncgroup(const char *ctrl, char *own, size_t n)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "r");
	*own = 0;
	while (f && fgets(line, sizeof line, f)) {
		char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;
		if (p && strstr(c, ctrl) && (c[1 + strlen(ctrl)] == ':' || c[1 + strlen(ctrl)] == ','))
			snprintf(own, n, "/sys/fs/cgroup/%s%s", ctrl, strtok(p + 1, "\n"));
	}
	if (f)
		fclose(f);
}

/* How many cgroups of ours are in dir; the name of the last one seen goes to name. */
static int ourcgroups(const char *dir, char *name, size_t n)
{
	char mine[64];
	int found = 0;
	snprintf(mine, sizeof mine, "nightshift-%d-", (int)getpid());
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strncmp(de->d_name, mine, strlen(mine)) == 0) {
			found++;
			snprintf(name, n, "%s", de->d_name);
		}
	if (d)
		closedir(d);
	return found;
}

static void testcold(void)
{
	setenv("NIGHTSHIFT_SANDBOX_COLD", "1", 1);
	struct sandboxconf c = conf();
	struct sbx *s = opensbx(&c, ws, 0);
	unsetenv("NIGHTSHIFT_SANDBOX_COLD");
	if (!s)
		return;
	run(s, "echo kept > /tmp/state; id -u");
	okstr(OUT, "1000\n", "cold step runs");
	run(s, "cat /tmp/state 2>/dev/null || echo fresh");
	okstr(OUT, "fresh\n", "cold: every step starts from a fresh sandbox");
	/* The limits hold in cold mode too: each step's init joins the sandbox's one cgroup. */
	testlimits(s);
	char own[512], first[256] = "", later[256] = "";
	owncgroup("pids", own, sizeof own);
	if (*own && strstr(R.limits, "pids")) {
		int n1 = ourcgroups(own, first, sizeof first);
		run(s, "true");
		int n2 = ourcgroups(own, later, sizeof later);
		ok(n1 == 1 && n2 == 1 && strcmp(first, later) == 0, "cold: one cgroup for every step (%d %s, %d %s)", n1, first, n2, later);
	}
	sbxclose(s);
	if (*own && *first)
		ok(cgroupsgone(own, 2000), "cold: the cgroup is gone after close");
}

/* Run fn in a child and return what it wrote to the pipe. */
static char *inchild(void (*fn)(int), int *status)
{
	int p[2];
	ok(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		fn(p[1]);
		_exit(0);
	}
	close(p[1]);
	struct buf b = {0};
	char tmp[4096];
	ssize_t n;
	while ((n = read(p[0], tmp, sizeof tmp)) > 0)
		bufadd(&b, tmp, n);
	close(p[0]);
	waitpid(pid, status, 0);
	if (!b.data)
		bufputs(&b, "");
	return b.data;
}

static void say(int fd, const char *s)
{
	(void)!write(fd, s, strlen(s));
}

static void tryopen(int fd)
{
	struct sandboxconf c = conf();
	struct sbx *s = NULL;
	struct sbxconf sc = {&c, ws, env, 0};
	struct err e = {0};
	if (sbxopen(&s, &sc, &e) < 0) {
		say(fd, e.msg);
		return;
	}
	say(fd, "OPENED");
	sbxclose(s);
}

/* Simulate max_user_namespaces=0 inside a user namespace of our own: the host is untouched. */
static void nouserns(int fd)
{
	char map[64];
	uid_t u = geteuid();
	gid_t g = getegid();
	if (unshare(CLONE_NEWUSER) < 0) {
		say(fd, "SETUP unshare");
		return;
	}
	snprintf(map, sizeof map, "0 %d 1", (int)u);
	int f = open("/proc/self/uid_map", O_WRONLY);
	(void)!write(f, map, strlen(map));
	close(f);
	f = open("/proc/self/setgroups", O_WRONLY);
	(void)!write(f, "deny", 4);
	close(f);
	snprintf(map, sizeof map, "0 %d 1", (int)g);
	f = open("/proc/self/gid_map", O_WRONLY);
	(void)!write(f, map, strlen(map));
	close(f);
	f = open("/proc/sys/user/max_user_namespaces", O_WRONLY);
	if (f < 0 || write(f, "0", 1) != 1) {
		say(fd, "SETUP max_user_namespaces");
		return;
	}
	close(f);
	tryopen(fd);
}

/* Simulate a container's seccomp profile refusing unshare(CLONE_NEWUSER). */
static void seccompdeny(int fd)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0);
	seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
	if (seccomp_load(ctx) < 0) {
		say(fd, "SETUP seccomp");
		return;
	}
	seccomp_release(ctx);
	tryopen(fd);
}

/* usable: whether user namespaces work here otherwise (else the cause found may be another). */
static void testblocked(int usable)
{
	int st;
	char *msg = inchild(nouserns, &st);
	if (strncmp(msg, "SETUP", 5) == 0) {
		printf("SKIPPED userns-disabled: cannot simulate (%s)\n", msg);
	} else {
		ok(strstr(msg, "max_user_namespaces") && strstr(msg, "backend: docker") && strstr(msg, "backend: none"),
		   "fails closed naming the cause and remedies: %s", msg);
		ok(!strstr(msg, "OPENED"), "no sandbox without user namespaces");
	}
	free(msg);
	msg = inchild(seccompdeny, &st);
	ok((!usable || strstr(msg, "seccomp")) && strstr(msg, "backend: docker") && !strstr(msg, "OPENED"),
	   "seccomp-blocked user namespaces: %s", msg);
	free(msg);
}

/* As an ordinary user: no cgroup is writable, rlimits are the floor, isolation is the same. */
static void unprivileged(int fd)
{
	char buf[4096];
	if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0) {
		say(fd, "SETUP drop to nobody");
		return;
	}
	prctl(PR_SET_DUMPABLE, 1); /* as a user who started nightshift would be; setresuid cleared it */
	/* Two sandboxes: one with a memory limit (RLIMIT_AS here), and one without, for the
	   probe, which an ASan build could not even start under RLIMIT_AS. */
	struct sandboxconf c = conf(), c2 = conf();
	c.pids = c2.pids = 32;
	c.memory = 128ll << 20;
	c2.memory = 0;
	struct sbx *s = NULL, *s2 = NULL;
	struct sbxconf sc = {&c, ws, env, 0}, sc2 = {&c2, ws, env, 0};
	struct err e = {0};
	if (sbxopen(&s, &sc, &e) < 0 || sbxopen(&s2, &sc2, &e) < 0) {
		snprintf(buf, sizeof buf, "OPEN %s", e.msg);
		say(fd, buf);
		sbxclose(s);
		return;
	}
	struct sbxresult r = {0};
	const char *cmds[] = {
		"id -u; grep CapEff /proc/self/status; echo u > /workspace/unpriv",
		"/workspace/probe probe forkmany 200 | cut -d: -f1",
		"head -c 500m /dev/zero | tail >/dev/null 2>&1; echo $?",
		"/workspace/probe probe unshare-user | cut -d: -f1",
		"/workspace/probe probe socket-inet | cut -d: -f1",
	};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		if (sbxexec(i == 0 || i == 2 ? s : s2, cmds[i], &r, &e) < 0) {
			snprintf(buf, sizeof buf, "EXEC %s", e.msg);
			say(fd, buf);
			break;
		}
		if (r.out.len)
			snprintf(buf, sizeof buf, "%s|", r.out.data);
		else /* say why, for the failure message */
			snprintf(buf, sizeof buf, "(exit %d signal %d stderr %.200s)|", r.exit_code, r.signal, r.err.data ? r.err.data : "");
		say(fd, buf);
		if (i == 0) {
			struct stat st;
			char *f = pathjoin(ws, "unpriv");
			snprintf(buf, sizeof buf, "OWNER %d|LIMITS %s|", stat(f, &st) == 0 ? (int)st.st_uid : -1, r.limits);
			free(f);
			say(fd, buf);
		}
		sbxresultfree(&r);
	}
	sbxclose(s);
	sbxclose(s2);
}

static void testunprivileged(void)
{
	if (geteuid() != 0) {
		printf("SKIPPED unprivileged: the suite already runs unprivileged\n");
		return;
	}
	char uws[128];
	char saved[128];
	mkworkspace(uws, sizeof uws, 65534);
	memcpy(saved, ws, sizeof saved);
	memcpy(ws, uws, sizeof ws);
	int st;
	char *msg = inchild(unprivileged, &st);
	memcpy(ws, saved, sizeof ws);
	if (strncmp(msg, "SETUP", 5) == 0) {
		printf("SKIPPED unprivileged: %s\n", msg);
	} else {
		ok(strncmp(msg, "1000\nCapEff:\t0000000000000000\n|OWNER 65534|", 41) == 0, "unprivileged: uid 1000 inside, files owned by the user: %s", msg);
		ok(strstr(msg, "LIMITS cgroup") && strstr(msg, "not writable") && strstr(msg, "rlimit core as"), "unprivileged: limits say what holds: %s", msg);
		ok(strstr(msg, "|blocked\n|") != NULL, "unprivileged: fork bomb held by RLIMIT_NPROC: %s", msg);
		ok(strstr(msg, "|0\n|") == NULL, "unprivileged: memory bomb fails under RLIMIT_AS: %s", msg);
		ok(strstr(msg, "|blocked\n|blocked\n|") != NULL, "unprivileged: unshare and sockets blocked: %s", msg);
	}
	free(msg);
	char *cmd = xasprintf("rm -rf '%s'", uws);
	ok(system(cmd) == 0, "clean");
	free(cmd);
}

/* No nightshift-PID-* cgroup of ours under dir, waiting up to ms for helpers to remove them. */
static int cgroupsgone(const char *dir, int ms)
{
	char mine[64];
	snprintf(mine, sizeof mine, "nightshift-%d-", (int)getpid());
	for (int64_t end = nowms() + ms;; usleep(10000)) {
		int found = 0;
		DIR *d = opendir(dir);
		struct dirent *de;
		while (d && (de = readdir(d)))
			found |= strncmp(de->d_name, mine, strlen(mine)) == 0;
		if (d)
			closedir(d);
		if (!found || nowms() > end)
			return !found;
	}
}

/* cgroup v2 mechanics where the machine has v1 controllers: in a private mount namespace,
   mount the unified hierarchy on /sys/fs/cgroup; the sandbox then takes the v2 path
   (a cgroup of its own, steps cloned straight into it), without any controller. */
static void v2(int fd)
{
	char buf[1024];
	if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_SLAVE | MS_REC, NULL) < 0 ||
	    mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL) < 0) {
		snprintf(buf, sizeof buf, "SETUP %s", strerror(errno));
		say(fd, buf);
		return;
	}
	struct sandboxconf c = conf();
	struct sbx *s = NULL;
	struct sbxconf sc = {&c, ws, env, 0};
	struct err e = {0};
	if (sbxopen(&s, &sc, &e) < 0) {
		snprintf(buf, sizeof buf, "OPEN %.1000s", e.msg);
		say(fd, buf);
		return;
	}
	/* init sits in a cgroup of its own, made for this sandbox */
	char procs[256];
	snprintf(procs, sizeof procs, "/sys/fs/cgroup/nightshift-%d-", (int)getpid());
	DIR *cd = opendir("/sys/fs/cgroup");
	struct dirent *cde;
	while (cd && (cde = readdir(cd)))
		if (strncmp(cde->d_name, procs + 15, strlen(procs + 15)) == 0) {
			struct buf b = {0};
			char *f = xasprintf("/sys/fs/cgroup/%s/cgroup.procs", cde->d_name);
			readfile(f, &b, NULL);
			free(f);
			int lines = 0;
			for (char *q = b.data; q && *q; q++)
				lines += *q == '\n';
			snprintf(buf, sizeof buf, "MEMBERS %d|", lines);
			say(fd, buf);
			buffree(&b);
		}
	if (cd)
		closedir(cd);
	struct sbxresult r = {0};
	if (sbxexec(s, "grep '^0::' /proc/self/cgroup /proc/1/cgroup | cut -d: -f2-", &r, &e) < 0) {
		snprintf(buf, sizeof buf, "EXEC %.1000s", e.msg);
		say(fd, buf);
	} else {
		snprintf(buf, sizeof buf, "%.500s|LIMITS %s", r.out.data ? r.out.data : "", r.limits);
		say(fd, buf);
	}
	sbxresultfree(&r);
	sbxclose(s);
	/* the cgroup is gone again (the helper removes it as it leaves) */
	if (!cgroupsgone("/sys/fs/cgroup", 2000))
		say(fd, "|LEFTOVER");
}

static void testv2(void)
{
	struct statfs sf;
	if (statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == 0x63677270) {
		printf("SKIPPED cgroup2-emulation: the machine is pure cgroup v2, which the other tests cover\n");
		return;
	}
	if (geteuid() != 0) {
		printf("SKIPPED cgroup2-emulation: needs root to mount the unified hierarchy\n");
		return;
	}
	int st;
	char *msg = inchild(v2, &st);
	if (strncmp(msg, "SETUP", 5) == 0) {
		printf("SKIPPED cgroup2-emulation: %s\n", msg);
	} else {
		okstr(msg, "MEMBERS 1|0::/\n0::/\n|LIMITS cgroup2 (no controller delegated); rlimit core as",
		      "cgroup2: init cloned into a cgroup of its own, the step in it too, limits say none delegated");
	}
	free(msg);
}

/* The none backend: plain processes, own process group, killed at the end. */
static void testnone(void)
{
	struct sandboxconf c = conf();
	c.backend = BACKEND_NONE;
	c.timeout_ms = 1000;
	struct sbx *s = opensbx(&c, ws, 0);
	if (!s)
		return;
	run(s, "pwd; env | sort | grep -v '^PWD=' | tr '\\n' ' '");
	char want[512];
	snprintf(want, sizeof want, "%s\nASAN_OPTIONS=detect_leaks=0 HOME=/tmp LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin ", ws);
	okstr(OUT, want, "none: runs in the workspace with only the given environment");
	ok(strstr(R.limits, "none"), "none: limits say so: %s", R.limits);
	char cmd[512];
	/* Control: nothing is isolated, so the host file is readable. */
	snprintf(cmd, sizeof cmd, "cat %s", secretfile);
	run(s, cmd);
	okstr(OUT, "host secret\n", "none: host file readable (control for the namespace checks)");
	run(s, "exit 3");
	ok(R.exit_code == 3, "none: exit code");
	run(s, "kill -KILL $$");
	ok(R.signal == SIGKILL && R.exit_code == -1 && !R.timed_out, "none: signal");
	char marker[64];
	snprintf(marker, sizeof marker, "sleep 3%05d", (int)getpid() % 100000);
	snprintf(cmd, sizeof cmd, "%s & echo bg", marker);
	run(s, cmd);
	ok(!hostproc(marker), "none: background process killed with the group");
	snprintf(cmd, sizeof cmd, "%s & sleep 30", marker);
	run(s, cmd);
	ok(R.timed_out && R.signal == SIGKILL && R.duration_ms < 20000, "none: timeout kills the group: to %d sig %d", R.timed_out, R.signal);
	ok(!hostproc(marker), "none: group killed on timeout");
	sbxclose(s);
	struct sandboxconf c2 = conf();
	c2.backend = BACKEND_NONE;
	s = opensbx(&c2, ws, 100);
	run(s, "head -c 1000 /dev/zero");
	ok(R.out.len == 100 && R.truncated, "none: output capped");
	sbxclose(s);
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "probe") == 0)
		return probe(argc, argv);
	setvbuf(stdout, NULL, _IONBF, 0);
	setenv("OPENAI_API_KEY", "sk-nightshift-test-secret", 1);
	signal(SIGPIPE, SIG_IGN); /* nightshift may ignore it: steps must still get the default */

	struct sbx *probe0 = NULL;
	struct sandboxconf c0 = conf();
	mkworkspace(ws, sizeof ws, 0);
	snprintf(secretfile, sizeof secretfile, "%s-secret", ws);
	writefile(secretfile, "host secret\n", 12, NULL);
	int lfd = listener();
	shmid = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0666);

	struct sbxconf sc = {&c0, ws, env, 0};
	if (sbxopen(&probe0, &sc, &E) < 0) {
		/* Without user namespaces the suite cannot run here; say so, do not pass. */
		printf("SKIPPED namespace sandbox: %s\n", E.msg);
		testnone();
		testblocked(0);
	} else {
		testbasics(probe0);
		testfilesystem(probe0);
		testprivileges(probe0);
		testnetwork(probe0);
		testsecrets(probe0);
		testlimits(probe0);
		sbxclose(probe0);
		testtimeout();
		testcap();
		testmounts();
		testhostnet();
		testrestart();
		testthreads();
		testimage();
		testcold();
		testblocked(1);
		testunprivileged();
		testv2();
		testnone();
		/* every cgroup made for a sandbox is gone after its close */
		static const char *const ctrls[] = {"memory", "pids", "cpu"};
		for (size_t i = 0; i < 3; i++) {
			char own[512];
			owncgroup(ctrls[i], own, sizeof own);
			if (*own && access(own, F_OK) == 0)
				ok(cgroupsgone(own, 2000), "no cgroup left behind in %s", own);
		}
		printf("%d escape attempts\n", nescapes);
		ok(nescapes >= 60, "at least 60 escape attempts (%d)", nescapes);
	}
	sbxresultfree(&R);
	close(lfd);
	if (shmid >= 0)
		shmctl(shmid, IPC_RMID, NULL);
	char *cmd = xasprintf("rm -rf '%s' '%s'", ws, secretfile);
	ok(system(cmd) == 0, "clean up");
	free(cmd);
	return tdone();
}
