/* test_docker: the docker backend through sbxopen/sbxexec against a real engine, and
   its errors without one. tests/e2e/docker.sh starts an engine when there is none,
   imports the test image (a static busybox and tests/fixtures/dockerprobe.c as
   /bin/nsprobe, with a setuid-root copy) and runs this binary; run alone without an
   engine or without that image, it says SKIPPED for the engine checks. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "t.h"
#include "../../sandbox/dockerapi.h"
#include "../../sandbox/sandbox.h"

static struct sbxresult R;
static struct err E;
static char ws[128];
static const char *image;

#define OUT (R.out.data ? R.out.data : "")
#define ERR (R.err.data ? R.err.data : "")

static char *env[] = {"PATH=/bin", "NS_PASSED=yes-passed", NULL};

static struct sandboxconf conf(void)
{
	struct sandboxconf c;
	memset(&c, 0, sizeof c);
	c.backend = BACKEND_DOCKER;
	c.image = (char *)image;
	c.memory = 64ll << 20;
	c.pids = 64;
	c.cpus = 1;
	c.timeout_ms = 3000;
	return c;
}

static int opensbx(struct sbx **s, const struct sandboxconf *c)
{
	struct sbxconf sc = {c, ws, env, 0};
	memset(&E, 0, sizeof E);
	*s = NULL;
	return sbxopen(s, &sc, &E);
}

static int run(struct sbx *s, const char *cmd)
{
	sbxresultfree(&R);
	memset(&R, 0, sizeof R);
	if (sbxexec(s, cmd, &R, &E) < 0) {
		ok(0, "exec '%s': %s", cmd, E.msg);
		R.exit_code = -99;
	}
	return R.exit_code;
}

/* An escape attempt through the probe: it must say blocked. */
static void blocked(struct sbx *s, const char *probe)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "/bin/nsprobe %s", probe);
	run(s, cmd);
	ok(R.exit_code == 1 && strstr(OUT, "blocked"), "escape %s: exit %d out %s err %s", probe, R.exit_code, OUT, ERR);
}

/* How many containers of process pid (0: this one) does the engine have? -1 when it cannot say. */
static int ours(pid_t pid)
{
	struct dapi d;
	struct err e;
	struct buf b = {0};
	long st = 0;
	int n = -1;
	if (dapiopen(&d, &e) < 0)
		return -1;
	char *path = xasprintf("/containers/json?all=1&filters=%%7B%%22label%%22%%3A%%5B%%22nightshift.pid%%3D%d%%22%%5D%%7D",
	                       (int)(pid ? pid : getpid()));
	int rc = dapicall(&d, "GET", path, NULL, 10000, &st, &b, &e);
	free(path);
	if (rc == 0 && st == 200) {
		cJSON *j = cJSON_Parse(b.data);
		if (cJSON_IsArray(j))
			n = cJSON_GetArraySize(j);
		cJSON_Delete(j);
	}
	buffree(&b);
	dapiclose(&d);
	return n;
}

/* Wait up to ms for the engine to hold want containers of process pid. */
static int waitours(pid_t pid, int want, int ms)
{
	int64_t end = nowms() + ms;
	int n;
	while ((n = ours(pid)) != want && nowms() < end)
		usleep(100000);
	return n;
}

static int hasimage(void)
{
	struct dapi d;
	struct err e;
	long st = 0;
	if (dapiopen(&d, &e) < 0)
		return 0;
	char *esc = curl_easy_escape(d.h, image, 0);
	char *path = xasprintf("/images/%s/json", esc);
	int rc = dapicall(&d, "GET", path, NULL, 10000, &st, NULL, &e);
	curl_free(esc);
	free(path);
	dapiclose(&d);
	return rc == 0 && st == 200;
}

/* Errors that need no engine. */
static void testerrors(void)
{
	char *saved = getenv("DOCKER_HOST") ? xstrdup(getenv("DOCKER_HOST")) : NULL;
	struct sandboxconf c = conf();
	struct sbx *s;

	c.image = "host";
	ok(opensbx(&s, &c) < 0 && E.kind == ERR_INPUT && strstr(E.msg, "image 'host'") && strstr(E.msg, "sandbox.image"),
	   "image host refused as a manifest error: %d %s", E.kind, E.msg);
	c = conf();

	setenv("DOCKER_HOST", "ssh://me@build-host", 1);
	ok(opensbx(&s, &c) < 0 && E.kind == ERR_INPUT && strstr(E.msg, "ssh://me@build-host") && strstr(E.msg, "unix"),
	   "ssh DOCKER_HOST refused as an input error: %s", E.msg);

	setenv("DOCKER_HOST", "tcp://127.0.0.1:1", 1);
	ok(opensbx(&s, &c) < 0 && strstr(E.msg, "cannot reach the Docker engine at tcp://127.0.0.1:1"),
	   "tcp engine that does not answer named: %s", E.msg);

	setenv("DOCKER_HOST", "unix:///nonexistent/nightshift/docker.sock", 1);
	ok(opensbx(&s, &c) < 0 && strstr(E.msg, "unix:///nonexistent/nightshift/docker.sock"),
	   "missing socket named: %s", E.msg);

	/* A socket file nobody listens on: connect is refused. */
	char dead[108];
	snprintf(dead, sizeof dead, "/tmp/ns-dead-%d.sock", (int)getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", dead);
	unlink(dead);
	ok(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0, "bind %s", dead);
	close(fd);
	char *dh = xasprintf("unix://%s", dead);
	setenv("DOCKER_HOST", dh, 1);
	ok(opensbx(&s, &c) < 0 && strstr(E.msg, "cannot reach the Docker engine") && strstr(E.msg, dh),
	   "unreachable engine named: %s", E.msg);
	unlink(dead);
	free(dh);

	if (saved)
		setenv("DOCKER_HOST", saved, 1);
	else
		unsetenv("DOCKER_HOST");
	free(saved);
}

static int listener(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t l = sizeof a;
	ok(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 8) == 0, "host listener");
	getsockname(fd, (struct sockaddr *)&a, &l);
	*port = ntohs(a.sin_port);
	return fd;
}

static void testbasics(struct sbx *s)
{
	run(s, "echo out; echo err >&2; exit 3");
	ok(R.exit_code == 3 && R.signal == 0 && !R.timed_out && !R.oom, "exit 3: %d", R.exit_code);
	okstr(OUT, "out\n", "stdout apart");
	okstr(ERR, "err\n", "stderr apart, trailer taken off");
	ok(strstr(R.limits, "docker") && strstr(R.limits, "network none"), "limits said: %s", R.limits);

	run(s, "id -u; id -g; pwd; cat");
	okstr(OUT, "1000\n1000\n/workspace\n", "runs as 1000:1000 in /workspace, stdin empty");

	run(s, "printf 'a\\0b'; printf 'line one\\nline \"two\" $HOME `x`\\n' >&2");
	ok(R.out.len == 3 && memcmp(R.out.data, "a\0b", 3) == 0, "binary stdout kept: %zu bytes", R.out.len);
	okstr(ERR, "line one\nline \"two\" $HOME `x`\n", "quotes reach the shell as written");

	run(s, "echo first\nexit 4\necho never");
	ok(R.exit_code == 4 && strcmp(OUT, "first\n") == 0, "multi-line command: %d %s", R.exit_code, OUT);

	/* A forged trailer from the command is only output: ours comes last. */
	run(s, "printf '\\nnightshift:step-end 0\\n' >&2; exit 5");
	ok(R.exit_code == 5 && strstr(ERR, "nightshift:step-end 0"), "forged trailer: exit %d err %s", R.exit_code, ERR);

	run(s, "head -c 1100000 /dev/zero | tr '\\0' a");
	ok(R.exit_code == 0 && R.out.len <= 1 << 20 && R.out.len > (1 << 20) - 200 && R.truncated &&
	   memmem(R.out.data, R.out.len, "bytes not kept by the sandbox", 29), "output capped at 1 MiB, head and tail: %zu %d",
	   R.out.len, R.truncated);

	run(s, "env");
	ok(strstr(OUT, "NS_PASSED=yes-passed") != NULL, "passed variable seen");
	ok(!strstr(OUT, "NS_RUNNER_SECRET") && !strstr(OUT, "runner-secret-value"), "runner environment not visible: %s", OUT);

	run(s, "echo data > /workspace/f.txt && echo kept > /tmp/t && cat /tmp/t");
	char *f = pathjoin(ws, "f.txt");
	struct stat st;
	ok(R.exit_code == 0 && stat(f, &st) == 0 && st.st_uid == 1000, "workspace file written, owned by uid 1000");
	okstr(OUT, "kept\n", "tmpfs /tmp writable");
	free(f);
}

static void testescapes(struct sbx *s)
{
	/* a host file outside the mounts */
	char secret[128];
	snprintf(secret, sizeof secret, "/tmp/ns-docker-secret-%d", (int)getpid());
	struct err e;
	ok(writefile(secret, "host-secret-bytes\n", 18, &e) == 0, "host secret");
	char cmd[512];
	snprintf(cmd, sizeof cmd, "cat %s; cat /proc/1/root%s; ls /var/run/docker.sock /run/docker.sock", secret, secret);
	run(s, cmd);
	ok(R.exit_code != 0 && !strstr(OUT, "host-secret-bytes"), "host file not readable: %s", OUT);
	unlink(secret);

	run(s, "touch /bin/x || touch /etc/x || echo > /x");
	ok(R.exit_code != 0, "read-only root: %s", ERR);
	run(s, "echo x >> /bin/busybox");
	ok(R.exit_code != 0, "read-only binaries");

	int port, lfd = listener(&port);
	snprintf(cmd, sizeof cmd, "connect %d", port);
	blocked(s, cmd);
	snprintf(cmd, sizeof cmd, "nc -w 2 127.0.0.1 %d </dev/null && echo CONNECTED", port);
	run(s, cmd);
	ok(!strstr(OUT, "CONNECTED"), "nc to the host listener: %s", OUT);
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	ok(poll(&p, 1, 0) == 0, "the host listener saw no connection");
	close(lfd);
	run(s, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '");
	okstr(OUT, "lo\n", "only loopback inside");

	run(s, "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status");
	ok(strstr(OUT, "CapEff:\t0000000000000000") && strstr(OUT, "CapBnd:\t0000000000000000") &&
	   strstr(OUT, "CapPrm:\t0000000000000000") && strstr(OUT, "NoNewPrivs:\t1"), "no capabilities: %s", OUT);

	run(s, "ls -ln /bin/nsprobe-suid; /bin/nsprobe-suid euid");
	ok(strstr(OUT, "-rwsr-xr-x") && strstr(OUT, " 0 ") , "the image holds a setuid-root probe: %s", OUT);
	ok(strstr(OUT, "\n1000\n") != NULL, "setuid root binary runs as 1000: %s", OUT);
	blocked(s, "setuid");
	blocked(s, "mount");
	blocked(s, "userns");
	blocked(s, "rawip");
	blocked(s, "packet");
	/* The engine's default profile allows the ptraces and io_uring; ours (filter.c's rules)
	   does not. /proc/PID/mem needs no system call: the wrapper is not dumpable. */
	blocked(s, "ptrace-parent");
	blocked(s, "ptrace-wrapper");
	blocked(s, "procmem-wrapper");
	blocked(s, "vm-readv-parent");
	blocked(s, "i386-ptrace");
	blocked(s, "clone-userns");
	blocked(s, "io_uring");
	run(s, "grep Seccomp: /proc/self/status");
	okstr(OUT, "Seccomp:\t2\n", "a seccomp filter is on");
	run(s, "mount -t tmpfs none /tmp");
	ok(R.exit_code != 0, "mount from the shell fails");
}

/* Nothing of a step lives on into the next, whatever it tried. */
static void testleftovers(struct sbx *s)
{
	run(s, "(while :; do echo x >> /workspace/bg.txt; sleep 0.05; done) & sleep 0.3; echo started");
	ok(R.exit_code == 0 && !R.timed_out && strcmp(OUT, "started\n") == 0,
	   "a step with a background loop returns: %d %s", R.exit_code, OUT);
	char *bg = pathjoin(ws, "bg.txt");
	struct stat a, b;
	ok(stat(bg, &a) == 0 && a.st_size > 0, "the loop ran");
	usleep(400000);
	ok(stat(bg, &b) == 0 && b.st_size == a.st_size, "the background loop died with its step: %lld -> %lld",
	   (long long)a.st_size, (long long)b.st_size);
	free(bg);

	run(s, "setsid sleep 101 & nohup sleep 102 >/dev/null 2>&1 & sleep 0.2");
	run(s, "ps -o pid,user,args");
	ok(R.exit_code == 0 && strstr(OUT, "PID") && !strstr(OUT, "sleep 10"), "setsid and nohup did not survive: %s", OUT);

	/* The command kills its own wrapper to keep a process alive: the container goes. */
	run(s, "sleep 103 & kill -9 $PPID; sleep 1");
	ok(R.exit_code == -1 && R.signal == 9 && strstr(ERR, "container was removed"), "wrapper killed: %d %d %s",
	   R.exit_code, R.signal, ERR);
	run(s, "ps -o pid,user,args");
	ok(R.exit_code == 0 && strstr(OUT, "PID") && !strstr(OUT, "sleep 103"), "and its process is gone: %s", OUT);

	int64_t t0 = nowms();
	run(s, "echo x > /tmp/before; sleep 30 & sleep 20");
	int64_t took = nowms() - t0;
	/* Not before its time; the upper bound only says it was the timeout, not the 20 s sleep's end. */
	ok(R.timed_out && R.exit_code == -1 && R.signal == 9 && took >= 2900 && took < 18000, "timeout: %d in %lld ms",
	   R.timed_out, (long long)took);
	run(s, "ps -o args; ls /tmp");
	ok(R.exit_code == 0 && !strstr(OUT, "sleep") && !strstr(OUT, "before"), "after a timeout: a fresh container: %s",
	   OUT);
}

static void testlimits(struct sbx *s)
{
	run(s, "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max");
	okstr(OUT, "64\n", "pids limit in force");
	run(s, "b() { b | b & }; b; sleep 1; echo done");
	ok(!R.timed_out && (strstr(ERR, "fork") || strstr(ERR, "Resource")),
	   "fork bomb held by pids: exit %d err %.200s", R.exit_code, ERR);
	run(s, "echo alive; ps -o args | grep -c '[b] | [b]' ; true");
	ok(R.exit_code == 0 && strncmp(OUT, "alive\n", 6) == 0, "alive after the bomb: %s %s", OUT, ERR);
	ok(strstr(OUT, "alive\n0\n") != NULL, "nothing left of the bomb: %s", OUT);

	run(s, "dd if=/dev/zero of=/dev/null bs=128M count=1");
	ok(R.oom && R.exit_code == 137, "memory bomb: oom %d exit %d err %s", R.oom, R.exit_code, ERR);
	run(s, "kill -9 $$");
	ok(!R.oom && R.exit_code == 137, "a plain kill is not an oom: oom %d exit %d", R.oom, R.exit_code);
	run(s, "echo alive");
	okstr(OUT, "alive\n", "alive after the memory bomb");
}

/* Positive control: with network: host the same probe reaches the listener, so "blocked" above means something. */
static void testcontrol(void)
{
	struct sandboxconf c = conf();
	struct sbx *s;
	c.network_host = 1;
	if (opensbx(&s, &c) < 0) {
		ok(0, "sbxopen network host: %s", E.msg);
		return;
	}
	int port, lfd = listener(&port);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "/bin/nsprobe connect %d", port);
	run(s, cmd);
	ok(R.exit_code == 0 && strstr(OUT, "ESCAPED"), "control: network host connects: %s", OUT);
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	ok(poll(&p, 1, 2000) == 1, "control: the listener saw it");
	close(lfd);
	sbxclose(s);
}

/* The manifest's mounts: read-only unless rw, where the manifest says. */
static void testmounts(void)
{
	char ro[160], rw[160];
	snprintf(ro, sizeof ro, "%s-ro", ws);
	snprintf(rw, sizeof rw, "%s-rw:x", ws); /* a colon: Binds could not say it, Mounts can */
	mkdir(ro, 0755);
	mkdir(rw, 0777);
	chmod(rw, 0777);
	char *f = pathjoin(ro, "in.txt");
	struct err e;
	ok(writefile(f, "ro-data\n", 8, &e) == 0, "write %s", f);
	chmod(f, 0644);
	free(f);
	struct mount m[2];
	memset(m, 0, sizeof m);
	m[0].source = ro, m[0].target = "/data", m[0].rw = 0;
	m[1].source = rw, m[1].target = "/out", m[1].rw = 1;
	struct sandboxconf c = conf();
	c.mounts = m;
	c.nmounts = 2;
	struct sbx *s;
	if (opensbx(&s, &c) < 0) {
		ok(0, "sbxopen with mounts: %s", E.msg);
		return;
	}
	run(s, "cat /data/in.txt && echo made > /out/o.txt");
	ok(R.exit_code == 0 && strcmp(OUT, "ro-data\n") == 0, "mounts read and written: %d %s %s", R.exit_code, OUT, ERR);
	run(s, "touch /data/x");
	ok(R.exit_code != 0, "read-only mount refuses writes");
	sbxclose(s);
	f = pathjoin(rw, "o.txt");
	struct stat st;
	ok(stat(f, &st) == 0, "rw mount file on the host");
	free(f);
	char *rm = xasprintf("rm -rf '%s' '%s'", ro, rw);
	ok(system(rm) == 0, "clean up mounts");
	free(rm);
}

/* The container goes with the job, and with the runner when it dies. */
static void testlifetime(void)
{
	struct sandboxconf c = conf();

	for (int sig = SIGTERM; sig; sig = sig == SIGTERM ? SIGKILL : 0) {
		int pfd[2];
		ok(pipe(pfd) == 0, "pipe");
		pid_t pid = fork();
		if (pid == 0) {
			struct sbx *s;
			if (opensbx(&s, &c) < 0)
				_exit(1);
			if (write(pfd[1], "k", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		close(pfd[1]);
		char ch = 0;
		ok(read(pfd[0], &ch, 1) == 1 && ch == 'k', "child opened a sandbox");
		close(pfd[0]);
		ok(ours(pid) == 1, "its container is there");
		kill(pid, sig);
		waitpid(pid, NULL, 0);
		int n = waitours(pid, 0, 15000);
		ok(n == 0, "container gone after the runner died of signal %d: %d left", sig, n);
	}
}

int main(void)
{
	image = getenv("NIGHTSHIFT_TEST_IMAGE") ? getenv("NIGHTSHIFT_TEST_IMAGE") : "nightshift-test:busybox";
	setenv("NS_RUNNER_SECRET", "runner-secret-value", 1);
	snprintf(ws, sizeof ws, "/tmp/ns-docker-test.XXXXXX");
	ok(mkdtemp(ws) != NULL, "mkdtemp");
	chmod(ws, 0777);
	testerrors();

	struct dapi d;
	struct err e;
	if (dapiopen(&d, &e) < 0) {
		printf("SKIPPED test_docker engine checks: %s (tests/e2e/docker.sh starts one)\n", e.msg);
		rmdir(ws);
		return tdone();
	}
	dapiclose(&d);
	if (!hasimage()) {
		printf("SKIPPED test_docker engine checks: no image %s (tests/e2e/docker.sh builds it)\n", image);
		rmdir(ws);
		return tdone();
	}
	struct sandboxconf c = conf();
	c.image = "nightshift-test:no-such-image";
	struct sbx *s;
	ok(opensbx(&s, &c) < 0 && strstr(E.msg, "no-such-image") && strstr(E.msg, "does not pull"),
	   "missing image named: %s", E.msg);

	c = conf();
	if (opensbx(&s, &c) < 0) {
		ok(0, "sbxopen: %s", E.msg);
		return tdone();
	}
	testbasics(s);
	testescapes(s);
	testleftovers(s);
	testlimits(s);
	int n1 = ours(0);
	ok(n1 == 1, "one container for the job: %d", n1);
	sbxclose(s);
	ok(ours(0) == 0, "sbxclose removed the container");
	testcontrol();
	testmounts();
	testlifetime();
	sbxresultfree(&R);

	char *rm = xasprintf("rm -rf '%s'", ws);
	ok(system(rm) == 0, "clean up");
	free(rm);
	return tdone();
}
