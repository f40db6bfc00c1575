/* docker: one container per job, kept warm; each step is an exec in it.

   The container: the job's image with a read-only root, no network (unless
   network: host), every capability dropped, no-new-privileges, memory, cpu and
   pids limits, a tmpfs /tmp, the workspace bound read-write at /workspace and
   the manifest's mounts. Its pid 1 is the engine's init (docker-init/tini, or
   Podman's catatonit), which reaps orphans; under it a shell, running as
   65534:65534 ("the hook"), copies /bin/sh into a tmpfs of its own at
   /.nightshift, execute-only (0711), says so, and reads its stdin, which is a
   connection the runner keeps open. When the runner ends in any way, even SIGKILL, the engine
   closes that stdin (StdinOnce), the shell and the init exit, and the engine
   removes the container (AutoRemove). At job end the runner removes it itself.

   A step is an exec of `/.nightshift/sh -c WRAPPER nightshift-step NONCE` as 1000:1000
   (or sandbox.uid) in /workspace. It is started ahead, as soon as the previous step is done
   (while the model thinks: starting a process in a container costs tens of
   milliseconds), and waits for its command on its stdin: the command's lines,
   then a line holding the nonce, then the end of input. A command cut short
   never runs. The wrapper kills what may be left (kill -9 -1: every process of
   that uid except itself and pid 1; the hook shell is another uid) as soon as
   it starts, and again when its command has come; it runs the command with
   stdin /dev/null, kills everything the command left (one pass is enough:
   the kernel signals them all under its task list lock, and a process with
   SIGKILL pending cannot finish a fork; kill's status says nothing, as it is
   0 whenever another process exists), and only then prints a trailer with
   the command's status on stderr and exits 0. The output is demultiplexed
   by our own Tty:false, not by the content type.

   An exec that ends with status 0 and that trailer has cleaned up after
   itself. Anything else (the command killed its wrapper), or a step out of
   time (the engine has no call that stops an exec), and the runner kills and
   removes the whole container; the next step gets a fresh one (what was in
   /tmp is lost, the workspace stays). A step that ends 137 (SIGKILL) is
   checked against the engine's "oom" events for the container.

   The wrapper and its command are the same uid, so the command could ptrace
   the wrapper past its last kill, or write its memory through /proc/PID/mem,
   do the same to the next wrapper, and live on. So the wrapper runs from a
   file it may execute but not read, which makes it non-dumpable: its /proc
   files are root's, and ptrace needs a capability nobody here has. And the
   container runs under filter.c's rules (no ptrace, process_vm_*, namespaces,
   io_uring, ...; no sockets but AF_UNIX without network) in place of the
   engine's default seccomp profile, which allows ptrace on current kernels. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "capture.h"
#include "dockerapi.h"
#include "../net/egress.h"
#include "filter.h"
#include "sandbox.h"

#define HOOKUSER "65534:65534" /* runs the hook shell: out of reach of kill -9 -1 by the steps */
#define TRAILER "\nnightshift:step-end "
#define HOLD 64 /* bytes of stderr held back until the end: room for the trailer */
#define WRAPDIR "/.nightshift"    /* a tmpfs of the hook user's, mode 0755 */
#define WRAPSH WRAPDIR "/sh"      /* the image's /bin/sh, copied there execute-only (0711) */
#define READY "nightshift-ready" /* what the hook says when the copy is in place */

/* The hook: copy the shell for the wrappers, say so, then wait for the end of stdin. */
static const char hook[] = "cp /bin/sh " WRAPSH " && chmod 0711 " WRAPSH " && echo " READY " && read x";

static const char wrapper[] =
	"kill -9 -1 2>/dev/null\n"
	"nsok=\n"
	"nsc=\n"
	"while IFS= read -r nsl; do\n"
	"\tif [ \"$nsl\" = \"$1\" ]; then nsok=1; break; fi\n"
	"\tnsc=\"$nsc$nsl\n\"\n"
	"done\n"
	"[ -n \"$nsok\" ] || exit 0\n"
	"kill -9 -1 2>/dev/null\n"
	"/bin/sh -c \"$nsc\" </dev/null\n"
	"nsr=$?\n"
	"kill -9 -1 2>/dev/null\n"
	"printf '\\nnightshift:step-end %d\\n' \"$nsr\" >&2\n"
	"exit 0\n";

struct dockersbx {
	struct sbx base;
	struct dapi api;
	cJSON *create; /* the container's configuration, kept to make it again */
	char *image;
	char *id;      /* the container, NULL while there is none */
	char *profile; /* Podman: the file holding the seccomp profile, removed at close */
	CURL *hook;    /* the connection feeding its stdin */
	CURL *next;    /* the exec started ahead for the next step, waiting for its command */
	char *nextid;  /* its id */
	char nonce[33];
	struct strv env;
	int64_t timeout_ms;
	size_t cap;
	int memory, pids, cpus; /* the limits asked for */
	int nethost;            /* network: 1 host, 2 allow (the egress proxy), 0 none */
	int warnonly;           /* sandbox limits: warn */
	char user[24];          /* "UID:GID" the steps run as */
	char limits[128];
	struct egress *eg; /* network.allow: the proxy, listening in the container too */
	struct pump *pump; /* sbxspawn: the long-running program's streams, or NULL */
};

/* A long-running program (an MCP server) as an exec of its own, no wrapper: a thread copies the
   caller's stdin pipe to the exec's stdin and the exec's frames to the stdout and stderr pipes. */
struct pump {
	CURL *conn;
	int in, out, err; /* the sandbox's ends of the caller's pipes, -1 once closed */
	int stop[2];      /* written by bclose: the thread ends */
	pthread_t t;
};

/* Write all of b to fd (non-blocking) unless a stop comes first; -1 then, or when the reader is gone. */
static int pumpwrite(struct pump *p, int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t k = write(fd, b, n);
		if (k > 0) {
			b += k, n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		struct pollfd pf[2] = {{fd, POLLOUT, 0}, {p->stop[0], POLLIN, 0}};
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			return -1;
		if (pf[1].revents)
			return -1;
	}
	return 0;
}

/* Write the payload of the exec's frames to out or err; -1 when the stream is not frames. */
static int pumpframes(struct pump *p, unsigned char *hdr, size_t *hlen, uint32_t *left, const char *b, size_t n)
{
	while (n) {
		if (*hlen < 8) {
			size_t k = 8 - *hlen < n ? 8 - *hlen : n;
			memcpy(hdr + *hlen, b, k);
			*hlen += k, b += k, n -= k;
			if (*hlen == 8) {
				if (hdr[0] > 2 || hdr[1] || hdr[2] || hdr[3])
					return -1;
				*left = (uint32_t)hdr[4] << 24 | (uint32_t)hdr[5] << 16 | (uint32_t)hdr[6] << 8 | hdr[7];
				if (!*left)
					*hlen = 0;
			}
			continue;
		}
		size_t k = *left < n ? *left : n;
		int fd = hdr[0] == 2 ? p->err : hdr[0] == 1 ? p->out : -1;
		if (fd >= 0 && pumpwrite(p, fd, b, k) < 0) { /* the reader or the sandbox is gone: drop the rest */
			close(fd);
			*(hdr[0] == 2 ? &p->err : &p->out) = -1;
		}
		*left -= (uint32_t)k, b += k, n -= k;
		if (!*left)
			*hlen = 0;
	}
	return 0;
}

static void *pumpmain(void *arg)
{
	struct pump *p = arg;
	unsigned char hdr[8];
	size_t hlen = 0;
	uint32_t left = 0;
	char buf[65536];
	curl_socket_t sock;
	if (curl_easy_getinfo(p->conn, CURLINFO_ACTIVESOCKET, &sock) != CURLE_OK || sock == CURL_SOCKET_BAD)
		goto out;
	for (;;) {
		long k;
		while ((k = dapirecv(p->conn, buf, sizeof buf, 0)) > 0) /* what TLS holds too, not only the socket */
			if (pumpframes(p, hdr, &hlen, &left, buf, (size_t)k) < 0)
				goto out;
		if (k != -2)
			goto out; /* the program ended (0) or the engine broke the stream */
		struct pollfd pf[3] = {{sock, POLLIN, 0}, {p->stop[0], POLLIN, 0}, {p->in, POLLIN, 0}};
		int r = poll(pf, p->in >= 0 ? 3 : 2, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || pf[1].revents)
			goto out;
		if (p->in >= 0 && pf[2].revents) {
			ssize_t n = read(p->in, buf, sizeof buf);
			struct err e;
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) { /* the caller closed its end: so does the program's stdin */
				close(p->in);
				p->in = -1;
				dapishutwr(p->conn);
			} else if (dapisend(p->conn, buf, (size_t)n, nowms() + 30000, &e) < 0) {
				goto out;
			}
		}
	}
out:
	/* the caller reads the end of the program's output */
	if (p->out >= 0)
		close(p->out);
	if (p->err >= 0)
		close(p->err);
	p->out = p->err = -1;
	return NULL;
}

/* Which of the limits asked for a warning of create's says the engine dropped (moby's
   verifyPlatformContainerResources: "Your kernel does not support ... Limitation discarded.",
   "... Memory limited without swap."); 0 when it names none of them. */
static int dropped(const char *w, int *mem, int *pids, int *cpu)
{
	int hit = 0;
	/* "Memory limited without swap.": the memory limit holds, only swap is not capped (cgroup v1
	   without swap accounting, common on older hosts): the steps still cannot take more memory. */
	if (strcasestr(w, "without swap"))
		return 0;
	if (strcasestr(w, "memory") || strcasestr(w, "oom"))
		hit = *mem = 1;
	if (strcasestr(w, "pids"))
		hit = *pids = 1;
	if (strcasestr(w, "cpu"))
		hit = *cpu = 1;
	return hit || strcasestr(w, "limit") || strcasestr(w, "discarded");
}

/* The limits line of the results, saying what the engine did not enforce. */
static void setlimits(struct dockersbx *d, int dmem, int dpids, int dcpu)
{
	/* at most about 125 bytes with every limit dropped and the longest uid:gid; cut if ever longer */
	int n = snprintf(d->limits, sizeof d->limits, "docker%s%s%s%s%s%s%s; network %s; no caps; no-new-privs; ro root; uid %s",
	         d->memory && !dmem ? " memory" : "", d->pids && !dpids ? " pids" : "", d->cpus && !dcpu ? " cpu" : "",
	         dmem || dpids || dcpu ? " (not enforced:" : "", dmem ? " memory" : "", dpids ? " pids" : "",
	         dcpu ? " cpu)" : dmem || dpids ? ")" : "",
	         d->nethost == 1 ? "host" : d->nethost == 2 ? "allow" : "none",
	         d->user);
	if (n >= (int)sizeof d->limits)
		memcpy(d->limits + sizeof d->limits - 4, "...", 4);
}

/* Read create's Warnings: a limit the engine cannot enforce fails the container unless the
   sandbox says limits: warn, and then the results say which limits are missing. */
static int createwarnings(struct dockersbx *d, const cJSON *warnings, struct err *e)
{
	int dmem = 0, dpids = 0, dcpu = 0;
	struct buf said = {0};
	const cJSON *w;
	cJSON_ArrayForEach(w, warnings) {
		if (!cJSON_IsString(w) || !*w->valuestring)
			continue;
		int m = 0, p = 0, c = 0;
		if (!dropped(w->valuestring, &m, &p, &c))
			continue;
		dmem |= m && d->memory;
		dpids |= p && d->pids;
		dcpu |= c && d->cpus;
		bufprintf(&said, "%s\"%s\"", said.len ? "; " : "", w->valuestring);
	}
	int rc = 0;
	if (said.len && !d->warnonly)
		rc = errf(e, "docker: the engine at %s cannot enforce the sandbox's limits on '%s': %s (set sandbox "
		             "limits: warn to run without them)", d->api.url, d->image, said.data);
	else if (said.len)
		setlimits(d, dmem, dpids, dcpu);
	buffree(&said);
	return rc;
}

/* Is it an id as the engine makes them (hex: safe in a path)? */
static int hexid(const cJSON *id)
{
	return cJSON_IsString(id) && *id->valuestring &&
	       strspn(id->valuestring, "0123456789abcdef") == strlen(id->valuestring);
}

/* The SecurityOpt that puts filter.c's rules in place of the engine's default seccomp
   profile, which lets a step ptrace its wrapper (same uid) and so outlive its step. Docker
   takes the profile itself; Podman takes a path, to a file kept in d->profile until bclose. */
static char *seccompopt(struct dockersbx *d, int network, struct err *e)
{
	cJSON *prof = filterprofile(network);
	char *json = cJSON_PrintUnformatted(prof), *opt = NULL;
	cJSON_Delete(prof);
	if (!d->api.podman) {
		opt = xasprintf("seccomp=%s", json);
	} else {
		d->profile = xasprintf("%s/nightshift-seccomp-XXXXXX", tmpbase());
		int fd = mkstemp(d->profile);
		if (fd < 0 || fchmod(fd, 0644) < 0 || writeall(fd, json, strlen(json)) < 0) {
			errf(e, "docker: writing the seccomp profile for Podman to %s:", d->profile);
			free(d->profile);
			d->profile = NULL;
		} else {
			opt = xasprintf("seccomp=%s", d->profile);
		}
		if (fd >= 0)
			close(fd);
	}
	free(json);
	return opt;
}

/* The body of POST /containers/create. */
static cJSON *createbody(const struct sbxconf *c, const char *seccomp, const char *egsock)
{
	const struct sandboxconf *sc = c->conf;
	cJSON *b = cJSON_CreateObject(), *hc = cJSON_CreateObject(), *a, *o;
	cJSON_AddStringToObject(b, "Image", sc->image);
	a = cJSON_AddArrayToObject(b, "Entrypoint");
	cJSON_AddItemToArray(a, cJSON_CreateString("/bin/sh"));
	cJSON_AddItemToArray(a, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(a, cJSON_CreateString(hook));
	cJSON_AddItemToObject(b, "Cmd", cJSON_CreateArray());
	cJSON_AddStringToObject(b, "User", HOOKUSER);
	cJSON_AddStringToObject(b, "WorkingDir", "/");
	cJSON_AddItemToObject(b, "Env", cJSON_CreateArray());
	cJSON_AddStringToObject(b, "Hostname", "sandbox");
	cJSON_AddBoolToObject(b, "AttachStdin", 1);
	cJSON_AddBoolToObject(b, "OpenStdin", 1);
	cJSON_AddBoolToObject(b, "StdinOnce", 1);
	cJSON_AddBoolToObject(b, "Tty", 0);
	o = cJSON_AddObjectToObject(b, "Labels");
	char pid[24];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	cJSON_AddStringToObject(o, "nightshift.sandbox", "1");
	cJSON_AddStringToObject(o, "nightshift.pid", pid); /* the runner's, to find what a crash left */

	cJSON_AddBoolToObject(hc, "Init", 1);
	cJSON_AddBoolToObject(hc, "AutoRemove", 1);
	cJSON_AddStringToObject(hc, "NetworkMode", sc->network_host ? "host" : "none");
	a = cJSON_AddArrayToObject(hc, "CapDrop");
	cJSON_AddItemToArray(a, cJSON_CreateString("ALL"));
	a = cJSON_AddArrayToObject(hc, "SecurityOpt");
	cJSON_AddItemToArray(a, cJSON_CreateString("no-new-privileges"));
	cJSON_AddItemToArray(a, cJSON_CreateString(seccomp));
	cJSON_AddBoolToObject(hc, "ReadonlyRootfs", 1);
	cJSON_AddStringToObject(hc, "CgroupnsMode", "private");
	cJSON_AddStringToObject(hc, "IpcMode", "private");
	if (sc->memory > 0) {
		cJSON_AddNumberToObject(hc, "Memory", (double)sc->memory);
		cJSON_AddNumberToObject(hc, "MemorySwap", (double)sc->memory); /* no swap on top */
	}
	if (sc->cpus > 0)
		cJSON_AddNumberToObject(hc, "NanoCpus", (double)(int64_t)(sc->cpus * 1e9));
	if (sc->pids > 0)
		cJSON_AddNumberToObject(hc, "PidsLimit", (double)sc->pids);
	o = cJSON_AddObjectToObject(hc, "Tmpfs");
	cJSON_AddStringToObject(o, "/tmp", "rw,nosuid,nodev,size=256m");
	cJSON_AddStringToObject(o, WRAPDIR, "rw,exec,nosuid,nodev,size=16m,mode=0755,uid=65534,gid=65534");
	a = cJSON_AddArrayToObject(hc, "Ulimits");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "Name", "core");
	cJSON_AddNumberToObject(o, "Soft", 0);
	cJSON_AddNumberToObject(o, "Hard", 0);
	cJSON_AddItemToArray(a, o);
	/* Mounts, not Binds: a path holding ':' cannot be said in a Binds string. */
	a = cJSON_AddArrayToObject(hc, "Mounts");
	for (size_t i = 0; i <= sc->nmounts; i++) {
		const char *src = i ? sc->mounts[i - 1].source : c->workspace;
		const char *dst = i ? sc->mounts[i - 1].target : "/workspace";
		int rw = i ? sc->mounts[i - 1].rw : 1;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "Type", "bind");
		cJSON_AddStringToObject(o, "Source", src);
		cJSON_AddStringToObject(o, "Target", dst);
		cJSON_AddBoolToObject(o, "ReadOnly", !rw);
		cJSON_AddItemToArray(a, o);
	}
	if (egsock) { /* the proxy's unix socket, as in the namespace sandbox */
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "Type", "bind");
		cJSON_AddStringToObject(o, "Source", egsock);
		cJSON_AddStringToObject(o, "Target", EGRESSSOCK);
		cJSON_AddBoolToObject(o, "ReadOnly", 0);
		cJSON_AddItemToArray(a, o);
	}
	cJSON_AddItemToObject(b, "HostConfig", hc);
	return b;
}

/* Kill and remove the container, and drop the hook; nothing is left of it. */
static void containerdown(struct dockersbx *d)
{
	if (d->id) {
		char *path = xasprintf("/containers/%s?force=1&v=1", d->id);
		long st = 0;
		struct err e;
		dapicall(&d->api, "DELETE", path, NULL, 30000, &st, NULL, &e); /* 404/409: already going */
		free(path);
		free(d->id);
		d->id = NULL;
	}
	dapiunhook(d->next);
	d->next = NULL;
	free(d->nextid);
	d->nextid = NULL;
	dapiunhook(d->hook);
	d->hook = NULL;
}

static int hookready(struct dockersbx *d, struct err *e);

struct nsjoin {
	int nsfd, fd, err;
};

/* On a thread of its own: enter the container's network namespace, listen there. */
static void *nsjoinmain(void *arg)
{
	struct nsjoin *j = arg;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(EGRESSPORT), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1;
	j->fd = -1;
	if (setns(j->nsfd, CLONE_NEWNET) < 0) {
		j->err = errno;
		return NULL;
	}
	j->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (j->fd < 0 || setsockopt(j->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(j->fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(j->fd, 128) < 0) {
		j->err = errno;
		if (j->fd >= 0)
			close(j->fd);
		j->fd = -1;
	}
	return NULL; /* the thread ends, and its namespace with it; the socket stays in the container's */
}

/* network.allow: the container has no network (NetworkMode none) but its loopback; the proxy
   listens on 127.0.0.1:EGRESSPORT there, from a thread that enters the container's network
   namespace for the moment it takes to make the socket. No process in the container serves it. */
static int netlisten(struct dockersbx *d, struct err *e)
{
	struct buf body = {0};
	long st = 0;
	char *path = xasprintf("/containers/%s/json", d->id);
	int rc = dapicall(&d->api, "GET", path, NULL, 30000, &st, &body, e);
	free(path);
	cJSON *j = rc == 0 && st == 200 ? cJSON_Parse(body.data) : NULL;
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "State"), "Pid");
	int p = cJSON_IsNumber(pid) && pid->valuedouble > 1 && pid->valuedouble < 1 << 30 ? (int)pid->valuedouble : 0;
	cJSON_Delete(j);
	buffree(&body);
	if (rc < 0)
		return -1;
	if (!p)
		return errf(e, "docker: the engine at %s did not say the container's pid (HTTP %ld): network.allow "
		               "needs it to listen in the container's network namespace", d->api.url, st);
	char nspath[64];
	snprintf(nspath, sizeof nspath, "/proc/%d/ns/net", p);
	struct nsjoin nj = {open(nspath, O_RDONLY | O_CLOEXEC), -1, 0};
	pthread_t t;
	if (nj.nsfd < 0)
		nj.err = errno;
	else if (pthread_create(&t, NULL, nsjoinmain, &nj) != 0)
		nj.err = EAGAIN;
	else
		pthread_join(t, NULL);
	if (nj.nsfd >= 0)
		close(nj.nsfd);
	if (nj.fd < 0) {
		errno = nj.err;
		if (nj.err == EPERM || nj.err == EACCES)
			return errf(e, "docker: network.allow: listening in the container's network namespace (%s) takes "
			               "CAP_SYS_ADMIN (nightshift as root, with an engine on this machine); without it the "
			               "allowlist cannot be held, so the job does not run: run as root, or use the namespace "
			               "backend:", nspath);
		return errf(e, "docker: network.allow: listening on 127.0.0.1:%d in the container (%s):", EGRESSPORT,
		            nspath);
	}
	egresslisten(d->eg, nj.fd);
	return 0;
}

/* Create the container, hook its stdin, start it, and wait for the hook to be ready. */
static int containerup(struct dockersbx *d, struct err *e)
{
	struct buf body = {0};
	long st = 0;
	char *path = NULL;
	int rc = -1;

	if (dapicall(&d->api, "POST", "/containers/create", d->create, 300000, &st, &body, e) < 0)
		goto out;
	if (st != 201) {
		char *m = dapimsg(&body);
		if (st == 404)
			errf(e, "docker: image '%s' is not in the engine at %s (%s); nightshift does not pull: "
			        "docker pull or docker import it first", d->image, d->api.url, m);
		else
			errf(e, "docker: creating the container from '%s' (engine at %s): HTTP %ld: %s", d->image,
			     d->api.url, st, m);
		free(m);
		goto out;
	}
	cJSON *j = cJSON_Parse(body.data);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "Id");
	if (hexid(id))
		d->id = xstrdup(id->valuestring);
	if (!d->id) {
		cJSON_Delete(j);
		errf(e, "docker: the engine at %s answered create without a container id", d->api.url);
		goto out;
	}
	int wrc = createwarnings(d, cJSON_GetObjectItemCaseSensitive(j, "Warnings"), e);
	cJSON_Delete(j);
	if (wrc < 0)
		goto out;
	path = xasprintf("/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1", d->id);
	if (dapihook(&d->api, path, NULL, &st, &d->hook, e) < 0)
		goto out;
	free(path);
	path = xasprintf("/containers/%s/start", d->id);
	body.len = 0;
	if (dapicall(&d->api, "POST", path, NULL, 60000, &st, &body, e) < 0)
		goto out;
	if (st != 204 && st != 304) {
		char *m = dapimsg(&body);
		errf(e, "docker: starting the container from '%s' (engine at %s): HTTP %ld: %s", d->image,
		     d->api.url, st, m);
		free(m);
		goto out;
	}
	rc = hookready(d, e);
	if (rc == 0 && d->eg)
		rc = netlisten(d, e);
out:
	if (rc < 0)
		containerdown(d);
	free(path);
	buffree(&body);
	return rc;
}

static void bclose(struct sbx *s);
static int standby(struct dockersbx *d, struct err *e);

static int bopen(struct sbx **s, const struct sbxconf *c, struct err *e)
{
	const struct sandboxconf *sc = c->conf;
	if (!c->workspace || c->workspace[0] != '/')
		return errf(e, "sandbox: the workspace must be an absolute path");
	if (!sc->image || !*sc->image || strcmp(sc->image, "host") == 0)
		return errc(e, ERR_INPUT, "sandbox image '%s' means nothing to the docker backend: set sandbox.image to an "
		                  "image name the engine has (e.g. image: debian:12)", sc->image ? sc->image : "");
	struct stat st;
	for (size_t i = 0; i <= sc->nmounts; i++) { /* the engine would follow a link a step planted */
		char *real = pathstillreal(i ? sc->mounts[i - 1].source : c->workspace, i ? "mount" : "workspace", &st, e);
		if (!real)
			return -1;
		free(real);
	}
	struct dockersbx *d = xcalloc(1, sizeof *d);
	if (dapiopen(&d->api, e) < 0) {
		free(d);
		return -1;
	}
	d->image = xstrdup(sc->image);
	int allow = sc->network_allow && !sc->network_host;
	char *seccomp = seccompopt(d, sc->network_host || allow, e);
	if (!seccomp || (allow && egressopen(&d->eg, sc->allow, sc->nallow, e) < 0)) {
		free(seccomp);
		bclose(&d->base);
		return -1;
	}
	d->create = createbody(c, seccomp, d->eg ? egresssock(d->eg) : NULL);
	free(seccomp);
	for (char **v = c->env; v && *v; v++)
		strvadd(&d->env, *v);
	if (d->eg)
		egressenv(&d->env, sc->allow, sc->nallow);
	d->timeout_ms = sc->timeout_ms;
	d->cap = c->output_cap ? c->output_cap : 1 << 20;
	d->memory = sc->memory > 0;
	d->pids = sc->pids > 0;
	d->cpus = sc->cpus > 0;
	d->nethost = sc->network_host ? 1 : allow ? 2 : 0;
	snprintf(d->user, sizeof d->user, "%d:%d", sc->uid ? sc->uid : SBX_STEPID, sc->uid ? sc->gid : SBX_STEPID);
	d->warnonly = sc->limits_warn;
	setlimits(d, 0, 0, 0);
	*s = &d->base;
	if (containerup(d, e) < 0) {
		bclose(&d->base);
		*s = NULL;
		return -1;
	}
	struct err ignored;
	if (standby(d, &ignored) != 0)
		containerdown(d); /* the first step tries again */
	return 0;
}

/* The exec's multiplexed stream: frames of an 8-byte header [stream, 0, 0, 0, size BE32] and size bytes. */
struct demux {
	unsigned char hdr[8];
	size_t hlen;
	uint32_t left;
	struct buf *b[2]; /* stdout, stderr: what is kept */
	struct buf tail;  /* the last HOLD bytes of stderr, not yet kept */
	size_t cap;
	int truncated;
	int ends;            /* keep the head and the tail of each stream (a step), not only the head */
	struct ring ring[2];
};

static void keep(struct demux *m, int i, const char *p, size_t n)
{
	if (m->ends) {
		m->truncated |= ringkeep(m->b[i], &m->ring[i], m->cap, p, n);
		return;
	}
	size_t have = m->b[i]->len, k = 0;
	if (have < m->cap)
		k = m->cap - have < n ? m->cap - have : n;
	if (k)
		bufadd(m->b[i], p, k);
	if (k < n)
		m->truncated = 1;
}

static void payload(struct demux *m, const char *p, size_t n)
{
	if (m->hdr[0] == 1) {
		keep(m, 0, p, n);
	} else if (m->hdr[0] == 2) {
		bufadd(&m->tail, p, n);
		if (m->tail.len > HOLD) {
			size_t k = m->tail.len - HOLD;
			keep(m, 1, m->tail.data, k);
			memmove(m->tail.data, m->tail.data + k, HOLD);
			m->tail.len = HOLD;
			m->tail.data[HOLD] = 0;
		}
	}
}

static int demuxfn(const char *p, size_t n, void *arg)
{
	struct demux *m = arg;
	while (n) {
		if (m->hlen < 8) {
			size_t k = 8 - m->hlen < n ? 8 - m->hlen : n;
			memcpy(m->hdr + m->hlen, p, k);
			m->hlen += k, p += k, n -= k;
			if (m->hlen == 8) {
				if (m->hdr[0] > 2 || m->hdr[1] || m->hdr[2] || m->hdr[3])
					return -1; /* not a multiplexed stream */
				m->left = (uint32_t)m->hdr[4] << 24 | (uint32_t)m->hdr[5] << 16 | (uint32_t)m->hdr[6] << 8 |
				          m->hdr[7];
				if (!m->left)
					m->hlen = 0;
			}
			continue;
		}
		size_t k = m->left < n ? m->left : n;
		payload(m, p, k);
		m->left -= k, p += k, n -= k;
		if (!m->left)
			m->hlen = 0;
	}
	return 0;
}

/* Take the wrapper's trailer off the end of stderr; its status, or -1 when there is none. */
static int trailer(struct demux *m)
{
	int status = -1;
	size_t tl = strlen(TRAILER), end = m->tail.len;
	const char *t = m->tail.data ? m->tail.data : "";
	for (size_t i = end; i-- > 0;) {
		if (i + tl > end || memcmp(t + i, TRAILER, tl) != 0)
			continue;
		const char *q = t + i + tl;
		size_t digits = strspn(q, "0123456789");
		if (digits && digits <= 3 && q + digits + 1 == t + end && q[digits] == '\n') {
			status = atoi(q);
			end = i;
		}
		break;
	}
	keep(m, 1, t, end);
	buffree(&m->tail);
	return status;
}

/* Wait for the hook to say the wrappers' shell is in place. The wrappers run from that
   execute-only copy, which makes them non-dumpable: the command, the same uid, can neither
   ptrace them nor open their /proc/PID/mem, fd or environ (root's then). */
static int hookready(struct dockersbx *d, struct err *e)
{
	struct buf out = {0}, said = {0};
	struct demux m = {.b = {&out, &said}, .cap = 4096};
	char raw[4096];
	int64_t end = nowms() + 60000;
	int rc = -1;
	for (;;) {
		if (out.data && strstr(out.data, READY "\n")) {
			rc = 0;
			break;
		}
		int left = (int)(end - nowms());
		long k = left > 0 ? dapirecv(d->hook, raw, sizeof raw, left) : -2;
		if (k <= 0 || demuxfn(raw, (size_t)k, &m) < 0 || m.truncated)
			break;
	}
	if (rc < 0) {
		keep(&m, 1, m.tail.data, m.tail.len); /* what stderr held back */
		for (size_t i = 0; i < said.len; i++)
			if ((unsigned char)said.data[i] < 0x20)
				said.data[i] = ' ';
		while (said.len && said.data[said.len - 1] == ' ')
			said.data[--said.len] = 0;
		errf(e, "docker: the container from '%s' did not get ready: %s (as uid 65534 it copies /bin/sh, "
		        "up to 16 MB, to " WRAPDIR " with cp and chmod)",
		     d->image, said.len ? said.data : "it said nothing");
	}
	buffree(&m.tail);
	buffree(&out);
	buffree(&said);
	return rc;
}

/* Did the engine see the container run out of memory since wall-clock time since? */
static int oomsince(struct dockersbx *d, const struct timespec *since)
{
	for (int tries = 0; tries < 10; tries++) {
		struct timespec now;
		struct buf body = {0};
		struct err e;
		long st = 0;
		clock_gettime(CLOCK_REALTIME, &now);
		char *f = xasprintf("{\"container\":[\"%s\"],\"event\":[\"oom\"]}", d->id);
		char *fq = curl_easy_escape(d->api.h, f, 0);
		char *path = xasprintf("/events?since=%lld.%09ld&until=%lld.%09ld&filters=%s", (long long)since->tv_sec,
		                       since->tv_nsec, (long long)now.tv_sec, now.tv_nsec, fq ? fq : "");
		int rc = dapicall(&d->api, "GET", path, NULL, 5000, &st, &body, &e);
		int hit = rc == 0 && st == 200 && body.data && strstr(body.data, "\"oom\"");
		curl_free(fq);
		free(f);
		free(path);
		buffree(&body);
		if (hit)
			return 1;
		if (rc < 0 || st != 200)
			return 0;
		usleep(50000); /* the event comes from the kernel through containerd: give it a moment */
	}
	return 0;
}

/* An exec's request as every exec of the job's container makes it: stdio attached, no TTY, the
 * steps' user in /workspace with their environment; *cmd the empty Cmd array to fill. */
static cJSON *execrequest(const struct dockersbx *d, cJSON **cmd)
{
	cJSON *x = cJSON_CreateObject(), *a;
	cJSON_AddBoolToObject(x, "AttachStdin", 1);
	cJSON_AddBoolToObject(x, "AttachStdout", 1);
	cJSON_AddBoolToObject(x, "AttachStderr", 1);
	cJSON_AddBoolToObject(x, "Tty", 0);
	cJSON_AddStringToObject(x, "User", d->user);
	cJSON_AddStringToObject(x, "WorkingDir", "/workspace");
	a = cJSON_AddArrayToObject(x, "Env");
	for (size_t i = 0; i < d->env.n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(d->env.v[i]));
	*cmd = cJSON_AddArrayToObject(x, "Cmd");
	return x;
}

/* Start the exec for the next step; 0 when it waits, 1 when the container is gone, -1 on error. */
static int standby(struct dockersbx *d, struct err *e)
{
	unsigned char rnd[16];
	if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
		return errf(e, "getrandom:");
	for (int i = 0; i < 16; i++)
		snprintf(d->nonce + 2 * i, 3, "%02x", rnd[i]);

	cJSON *a, *x = execrequest(d, &a);
	cJSON_AddItemToArray(a, cJSON_CreateString(WRAPSH));
	cJSON_AddItemToArray(a, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(a, cJSON_CreateString(wrapper));
	cJSON_AddItemToArray(a, cJSON_CreateString("nightshift-step"));
	cJSON_AddItemToArray(a, cJSON_CreateString(d->nonce));
	struct buf body = {0};
	long st = 0;
	char *path = xasprintf("/containers/%s/exec", d->id), *eid = NULL;
	int rc = dapicall(&d->api, "POST", path, x, 30000, &st, &body, e);
	cJSON_Delete(x);
	free(path);
	if (rc < 0)
		goto out;
	rc = -1;
	if (st == 404 || st == 409) { /* no such container, or it is not running */
		rc = 1;
		goto out;
	}
	cJSON *j = cJSON_Parse(body.data);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "Id");
	if (st == 201 && hexid(id))
		eid = xstrdup(id->valuestring);
	cJSON_Delete(j);
	if (!eid) {
		char *m = dapimsg(&body);
		errf(e, "docker: exec in the container (engine at %s): HTTP %ld: %s", d->api.url, st, m);
		free(m);
		goto out;
	}
	cJSON *sb = cJSON_CreateObject();
	cJSON_AddBoolToObject(sb, "Detach", 0);
	cJSON_AddBoolToObject(sb, "Tty", 0);
	path = xasprintf("/exec/%s/start", eid);
	rc = dapihook(&d->api, path, sb, &st, &d->next, e);
	cJSON_Delete(sb);
	free(path);
	if (rc < 0) {
		rc = st == 404 || st == 409 ? 1 : -1;
		goto out;
	}
	d->nextid = eid;
	eid = NULL;
out:
	free(eid);
	buffree(&body);
	return rc;
}

/* The exec's status once it has ended, or -1. */
static int64_t execstatus(struct dockersbx *d, const char *eid, struct err *e)
{
	int64_t code = -1;
	char *path = xasprintf("/exec/%s/json", eid);
	for (int tries = 0; tries < 500; tries++) {
		struct buf body = {0};
		long st = 0;
		if (dapicall(&d->api, "GET", path, NULL, 10000, &st, &body, e) < 0)
			break;
		cJSON *j = cJSON_Parse(body.data);
		const cJSON *ec = cJSON_GetObjectItemCaseSensitive(j, "ExitCode");
		int running = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "Running"));
		if (st == 200 && !running && cJSON_IsNumber(ec))
			code = (int64_t)ec->valuedouble;
		cJSON_Delete(j);
		buffree(&body);
		if (st != 200 || !running)
			break;
		usleep(2000); /* the stream can end just before the engine has the exit */
	}
	free(path);
	return code;
}

/* Run the command in the exec started ahead; 0 with r filled, 1 when it never
   reached the sandbox (try again in a new container), -1 on error. */
static int step(struct dockersbx *d, const char *command, int64_t deadline, struct sbxresult *r, struct err *e)
{
	CURL *conn = d->next;
	char *eid = d->nextid;
	struct demux m = {.b = {&r->out, &r->err}, .cap = d->cap, .ends = 1};
	struct timespec wall;
	int rc = -1, timedout = 0;

	d->next = NULL;
	d->nextid = NULL;
	clock_gettime(CLOCK_REALTIME, &wall);
	struct buf in = {0};
	bufprintf(&in, "%s\n%s\n", command, d->nonce);
	int src = dapisend(conn, in.data, in.len, deadline, e);
	buffree(&in);
	if (src < 0) { /* without its nonce line the command does not run */
		rc = 1;
		goto out;
	}
	dapishutwr(conn);
	for (;;) {
		char tmp[65536];
		int ms = -1;
		if (deadline > 0) {
			int64_t left = deadline - nowms();
			ms = left < 0 ? 0 : (int)left;
		}
		long n = dapirecv(conn, tmp, sizeof tmp, ms);
		if (n == 0)
			break;
		if (n == -2) {
			timedout = 1;
			break;
		}
		if (n < 0 || demuxfn(tmp, (size_t)n, &m) < 0) {
			errf(e, "docker: the exec's output stream broke (engine at %s)", d->api.url);
			buffree(&m.tail);
			ringend(m.b[0], &m.ring[0]);
			ringend(m.b[1], &m.ring[1]);
			containerdown(d);
			goto out;
		}
	}
	dapiunhook(conn);
	conn = NULL;
	int status = trailer(&m);
	ringend(m.b[0], &m.ring[0]);
	ringend(m.b[1], &m.ring[1]);
	r->truncated = m.truncated;
	if (timedout) {
		r->timed_out = 1;
		r->exit_code = -1;
		r->signal = 9;
		containerdown(d); /* the only way to stop an exec */
		rc = 0;
		goto out;
	}
	int64_t code = execstatus(d, eid, e);
	int clean = code == 0 && status >= 0;
	if (!clean)
		status = (int)code;
	if (status == 137)
		r->oom = oomsince(d, &wall);
	if (clean) {
		r->exit_code = status;
	} else {
		/* The command killed its wrapper: what it started may live on. */
		r->exit_code = code > 128 ? -1 : (int)code;
		r->signal = code > 128 ? (int)(code - 128) : 0;
		bufputs(&r->err, "\nnightshift: the step's wrapper did not finish; the container was removed\n");
		containerdown(d);
	}
	rc = 0;
out:
	dapiunhook(conn);
	free(eid);
	return rc;
}

static int bexec(struct sbx *s, const char *command, struct sbxresult *r, struct err *e)
{
	struct dockersbx *d = (struct dockersbx *)s;
	memset(r, 0, sizeof *r);
	int64_t start = 0;
	for (int attempt = 0;; attempt++) {
		int rc = 0;
		if (!d->id && containerup(d, e) < 0)
			return -1;
		if (!d->next)
			rc = standby(d, e);
		/* The step's time is its command's: making a fresh container (seconds on a loaded engine)
		   is not taken from it. */
		start = nowms();
		int late = 0;
		int64_t deadline = sbxdeadline(&d->base, start, d->timeout_ms, &late);
		if (deadline < 0)
			deadline = 0; /* step's: none */
		if (rc == 0)
			rc = step(d, command, deadline, r, e);
		if (rc == 0 && r->timed_out)
			r->late = late;
		if (rc < 0) {
			sbxresultfree(r);
			return -1;
		}
		if (rc == 0)
			break;
		sbxresultfree(r);
		containerdown(d); /* it stopped under us: make a new one, once */
		if (attempt)
			return errf(e, "docker: the container keeps stopping (engine at %s)", d->api.url);
	}
	r->duration_ms = nowms() - start;
	memcpy(r->limits, d->limits, sizeof r->limits);
	if (d->eg) /* the step's processes are gone: its connections are ending */
		r->nnet = egresstake(d->eg, &r->net, &r->netmore, 500, 1);
	struct err ignored;
	if (d->id && standby(d, &ignored) != 0)
		containerdown(d); /* gone or failing: the next step makes a new one */
	return 0;
}

/* The program as an exec of `sh -c command` as the steps' user in /workspace, its streams pumped
   from and to fds (dup'd: the caller closes its copies). The exec started ahead for a step is
   ended first and waited for: its wrapper's kill -9 -1 would end the program. */
static int bspawn(struct sbx *s, const char *command, int fds[3], struct err *e)
{
	struct dockersbx *d = (struct dockersbx *)s;
	if (d->pump)
		return errf(e, "docker sandbox: it runs a program already");
	if (!d->id && containerup(d, e) < 0)
		return -1;
	if (d->next) {
		dapiunhook(d->next); /* its stdin ends: the wrapper exits without running anything */
		d->next = NULL;
		struct err ignored;
		execstatus(d, d->nextid, &ignored);
		free(d->nextid);
		d->nextid = NULL;
	}
	cJSON *a, *x = execrequest(d, &a);
	cJSON_AddItemToArray(a, cJSON_CreateString("/bin/sh"));
	cJSON_AddItemToArray(a, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(a, cJSON_CreateString(command));
	struct buf body = {0};
	long st = 0;
	char *path = xasprintf("/containers/%s/exec", d->id), *eid = NULL;
	int rc = dapicall(&d->api, "POST", path, x, 30000, &st, &body, e);
	cJSON_Delete(x);
	free(path);
	if (rc == 0) {
		cJSON *j = cJSON_Parse(body.data);
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "Id");
		if (st == 201 && hexid(id))
			eid = xstrdup(id->valuestring);
		cJSON_Delete(j);
		if (!eid) {
			char *m = dapimsg(&body);
			rc = errf(e, "docker: exec in the container (engine at %s): HTTP %ld: %s", d->api.url, st, m);
			free(m);
		}
	}
	buffree(&body);
	if (rc < 0)
		return -1;
	struct pump *p = xcalloc(1, sizeof *p);
	p->in = p->out = p->err = p->stop[0] = p->stop[1] = -1;
	cJSON *sb = cJSON_CreateObject();
	cJSON_AddBoolToObject(sb, "Detach", 0);
	cJSON_AddBoolToObject(sb, "Tty", 0);
	path = xasprintf("/exec/%s/start", eid);
	rc = dapihook(&d->api, path, sb, &st, &p->conn, e);
	cJSON_Delete(sb);
	free(path);
	free(eid);
	if (rc == 0 && ((p->in = fcntl(fds[0], F_DUPFD_CLOEXEC, 3)) < 0 || (p->out = fcntl(fds[1], F_DUPFD_CLOEXEC, 3)) < 0 ||
	                (p->err = fcntl(fds[2], F_DUPFD_CLOEXEC, 3)) < 0 || pipe2(p->stop, O_CLOEXEC) < 0))
		rc = errf(e, "docker sandbox: dup:");
	if (rc == 0 && (fcntl(p->out, F_SETFL, O_NONBLOCK) < 0 || fcntl(p->err, F_SETFL, O_NONBLOCK) < 0))
		rc = errf(e, "docker sandbox: fcntl:");
	if (rc == 0 && (errno = pthread_create(&p->t, NULL, pumpmain, p)) != 0)
		rc = errf(e, "docker sandbox: pthread_create:");
	if (rc < 0) {
		dapiunhook(p->conn);
		for (int i = 0; i < 2; i++)
			if (p->stop[i] >= 0)
				close(p->stop[i]);
		if (p->in >= 0)
			close(p->in);
		if (p->out >= 0)
			close(p->out);
		if (p->err >= 0)
			close(p->err);
		free(p);
		return -1;
	}
	d->pump = p;
	return 0;
}

static void bclose(struct sbx *s)
{
	struct dockersbx *d = (struct dockersbx *)s;
	if (d->pump) {
		struct pump *p = d->pump;
		if (writeall(p->stop[1], "x", 1) < 0) /* a fresh pipe has room: it cannot fail */
			abort();
		pthread_join(p->t, NULL);
		dapiunhook(p->conn);
		close(p->stop[0]), close(p->stop[1]);
		if (p->in >= 0)
			close(p->in);
		free(p);
		d->pump = NULL;
	}
	containerdown(d);
	egressclose(d->eg);
	dapiclose(&d->api);
	cJSON_Delete(d->create);
	if (d->profile)
		unlink(d->profile);
	free(d->profile);
	free(d->image);
	strvfree(&d->env);
	free(d);
}

/* The engine answers and has the image; nothing is made. */
static int bcheck(const struct sandboxconf *sc, struct err *e)
{
	if (!sc->image || !*sc->image || strcmp(sc->image, "host") == 0)
		return errc(e, ERR_INPUT, "sandbox image '%s' means nothing to the docker backend: set sandbox.image to an "
		                  "image name the engine has (e.g. image: debian:12)", sc->image ? sc->image : "");
	struct dapi api;
	if (dapiopen(&api, e) < 0)
		return -1;
	char *esc = curl_easy_escape(api.h, sc->image, 0);
	char *path = xasprintf("/images/%s/json", esc ? esc : "");
	struct buf body = {0};
	long st = 0;
	int rc = dapicall(&api, "GET", path, NULL, 10000, &st, &body, e);
	if (rc == 0 && st == 404)
		rc = errf(e, "docker: image '%s' is not in the engine at %s; nightshift does not pull: docker pull or "
		             "docker import it first", sc->image, api.url);
	else if (rc == 0 && st != 200) {
		char *m = dapimsg(&body);
		rc = errf(e, "docker: the engine at %s answers GET %s with HTTP %ld: %s", api.url, path, st, m);
		free(m);
	}
	buffree(&body);
	free(path);
	curl_free(esc);
	dapiclose(&api);
	return rc;
}

static struct egress *begress(struct sbx *s)
{
	return ((struct dockersbx *)s)->eg;
}

const struct sbxops sbxdocker = {"docker", bopen, bexec, bclose, bspawn, bcheck, begress};
