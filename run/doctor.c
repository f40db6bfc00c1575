/* doctor: can this machine run a manifest? One check a line: ok, or the cause and its remedy.
 *
 * The sandbox is checked by doing what a job does: a namespace sandbox is opened on an empty
 * folder and one step runs in it, so user namespaces, mounts, the seccomp filter and cgroups are
 * all exercised, and a refusal is explained by userns.c as at a job's first step. Models are
 * checked without a billed request: the key is set, the endpoint's host answers a connection. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <curl/curl.h>
#include <seccomp.h>
#include "doctor.h"
#include "../sandbox/sandbox.h"

static struct check *add(struct checks *c, const char *name, int state, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static struct check *add(struct checks *c, const char *name, int state, const char *fmt, ...)
{
	c->v = xrealloc(c->v, (c->n + 1) * sizeof *c->v);
	struct check *k = &c->v[c->n++];
	memset(k, 0, sizeof *k);
	snprintf(k->name, sizeof k->name, "%s", name);
	k->state = state;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(k->what, sizeof k->what, fmt, ap);
	va_end(ap);
	return k;
}

int doctorsandbox(const struct sandboxconf *conf, char limits[128], struct err *e)
{
	struct sandboxconf def = {0};
	if (!conf) {
		def.backend = BACKEND_NAMESPACE;
		def.image = "host";
		def.timeout_ms = 30000;
		def.pids = 64;
		def.memory = (int64_t)256 << 20;
		conf = &def;
	}
	char *ws = tmpfolder("nightshift-doctor", e);
	if (!ws)
		return errctx(e, "a folder to try the sandbox in");
	char *env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
	struct sbxconf sc = {conf, ws, env, 0};
	struct sbx *s = NULL;
	struct sbxresult r = {0};
	int rc = sbxopen(&s, &sc, e);
	if (rc == 0) {
		rc = sbxexec(s, "echo nightshift-doctor", &r, e);
		if (rc == 0 && (r.exit_code != 0 || !r.out.data || !strstr(r.out.data, "nightshift-doctor")))
			rc = errf(e, "a step ran but did not answer (exit %d): %.300s", r.exit_code, r.err.data ? r.err.data : "");
		if (rc == 0)
			snprintf(limits, 128, "%s", r.limits);
		sbxresultfree(&r);
		sbxclose(s);
	}
	rmdir(ws);
	free(ws);
	if (rc < 0)
		e->kind = ERR_INPUT;
	return rc;
}

char *runfolder(const struct manifest *m, const char *outdir, char **from)
{
	if (outdir) {
		*from = xstrdup("--out");
		return xstrdup(outdir);
	}
	if (m && m->userout) {
		*from = xasprintf("out: of %s", m->userconfig ? m->userconfig : "the user's config.yaml");
		return xstrdup(m->userout);
	}
	*from = xstrdup(m ? "runs/ beside the manifest, the default" : "the current directory");
	return m ? pathjoin(m->dir, "runs") : xstrdup(".");
}

int runfolderok(const char *dir, const char *from, struct err *e)
{
	char *at = xstrdup(dir);
	struct stat st;
	int saved = 0;
	while (stat(at, &st) < 0) {
		if (errno != ENOENT) { /* a folder above that this user cannot search */
			saved = errno;
			break;
		}
		char *up = dirname_dup(at);
		int top = strcmp(up, at) == 0;
		free(at);
		at = up;
		if (top)
			break;
	}
	const char *why = saved ? strerror(saved)
	                  : !S_ISDIR(st.st_mode) ? "not a directory"
	                  : faccessat(AT_FDCWD, at, W_OK | X_OK, AT_EACCESS) < 0 ? strerror(errno) : NULL;
	int rc = 0;
	if (why && strcmp(from, "--out") == 0) {
		if (strcmp(at, dir) == 0)
			rc = errc(e, ERR_INPUT, "--out %s: %s (give a folder you can write)", dir, why);
		else
			rc = errc(e, ERR_INPUT, "--out %s cannot be made: %s: %s (give a folder you can write)", dir, at, why);
	} else if (why) {
		if (strcmp(at, dir) == 0)
			rc = errc(e, ERR_INPUT, "run directories go in %s (%s): %s. Remedy: --out DIR, a folder you can write",
			          dir, from, why);
		else
			rc = errc(e, ERR_INPUT, "run directories go in %s (%s), which cannot be made: %s: %s. Remedy: --out DIR, "
			                        "a folder you can write", dir, from, at, why);
	}
	free(at);
	return rc;
}

int doctortmp(int *warn, struct err *e)
{
	const char *t = getenv("TMPDIR");
	*warn = t && *t && *t != '/';
	char *dir = tmpfolder("nightshift-doctor", e);
	if (!dir)
		return -1;
	rmdir(dir);
	free(dir);
	return 0;
}

/* Does a cgroup hold a limit? Its part of limits (before ';') names a controller, as "cgroup1
 * memory pids"; a failure's note ("cgroup1 not writable (EACCES)", "cgroup2: cannot ...",
 * "cgroup2 (no controller delegated)", "no cgroup ...") names none. */
static int cgroupheld(const char *limits)
{
	char part[128];
	snprintf(part, sizeof part, "%.*s", (int)strcspn(limits, ";"), limits);
	if (strncmp(part, "cgroup", 6) != 0 || strpbrk(part, "(:"))
		return 0;
	char *save = NULL;
	strtok_r(part, " ", &save); /* "cgroupN" */
	for (char *t; (t = strtok_r(NULL, " ", &save));)
		if (!strcmp(t, "memory") || !strcmp(t, "pids") || !strcmp(t, "cpu"))
			return 1;
	return 0;
}

/* The namespace backend, and what it says of cgroups and seccomp. */
static void sandboxchecks(const struct sandboxconf *conf, struct checks *c)
{
	char limits[128] = "";
	struct err e = {0};
	if (doctorsandbox(conf, limits, &e) < 0) {
		add(c, "namespace sandbox", CHECK_FAIL, "no step can run: %s", e.msg);
		return;
	}
	add(c, "namespace sandbox", CHECK_OK, "a step ran in user, mount, pid, network, IPC and UTS namespaces");
	const struct scmp_version *v = seccomp_version();
	add(c, "seccomp", CHECK_OK, "the filter loaded (libseccomp %u.%u.%u, API level %u)", v->major, v->minor, v->micro,
	    seccomp_api_get());
	int held = cgroupheld(limits);
	if (held)
		add(c, "cgroups", CHECK_OK, "limits that hold: %s", limits);
	else
		add(c, "cgroups", CHECK_WARN,
		    "no cgroup could be made for the sandbox, so memory, CPU and pids limits are rlimits only (%s). "
		    "Remedy: run as root, or in a delegated cgroup v2 subtree (systemd-run --user --scope -p Delegate=yes "
		    "nightshift run ...)",
		    *limits ? limits : "none");
}

/* The URL a model's requests go to, for the connection check; NULL when none is known. */
static const char *endpoint(const struct model *md)
{
	if (md->base_url)
		return md->base_url;
	if (md->provider == PROV_OPENAI)
		return "https://api.openai.com/v1";
	if (md->provider == PROV_ANTHROPIC)
		return "https://api.anthropic.com/v1";
	return NULL;
}

/* Whether url's host takes a connection (TCP and TLS), with no request sent. */
static int reach(const char *url, char *why, size_t n)
{
	CURL *h = curl_easy_init();
	if (!h)
		return snprintf(why, n, "libcurl cannot start"), -1;
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK)
		snprintf(why, n, "%s", *errbuf ? errbuf : curl_easy_strerror(rc));
	return rc == CURLE_OK ? 0 : -1;
}

static void modelchecks(const struct manifest *m, struct checks *c)
{
	for (size_t i = 0; i < m->nmodels; i++) {
		const struct model *md = &m->models[i];
		char name[40];
		snprintf(name, sizeof name, "model %s", md->name);
		if (md->provider == PROV_SCRIPTED) {
			add(c, name, CHECK_OK, "the built-in scripted model: no network, no key");
			continue;
		}
		const char *key = md->api_key_env;
		if (key && (!getenv(key) || !*getenv(key))) {
			add(c, name, CHECK_FAIL, "%s is not set: the model's requests would be refused. Remedy: export %s=... "
			                         "(in GitHub Actions: env: { %s: ${{ secrets.%s }} })", key, key, key, key);
			continue;
		}
		const char *url = endpoint(md);
		char why[256] = "";
		if (!url)
			add(c, name, CHECK_OK, "%s%s is set; no endpoint to try without a request", key ? key : "no key",
			    key ? "" : " needed");
		else if (reach(url, why, sizeof why) < 0)
			add(c, name, CHECK_FAIL, "%s does not take a connection: %s. Remedy: check base_url, the network, "
			                         "or HTTPS_PROXY", url, why);
		else
			add(c, name, CHECK_OK, "%s%s; %s takes a connection (no request sent)", key ? key : "no key",
			    key ? " is set" : " needed", url);
	}
}

/* Bytes a folder's files take on disk (blocks, not apparent size), up to a bound of entries. */
static int64_t used(const char *dir, int depth, long *budget)
{
	int64_t sum = 0;
	DIR *d = depth < 64 ? opendir(dir) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d)) && --*budget > 0) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = pathjoin(dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0) {
			sum += (int64_t)st.st_blocks * 512;
			if (S_ISDIR(st.st_mode))
				sum += used(p, depth + 1, budget);
		}
		free(p);
	}
	if (d)
		closedir(d);
	return sum;
}

/* The run directories' disk: room for at least two full layers of the workspace. */
static void diskcheck(const struct manifest *m, const char *outdir, struct checks *c)
{
	char *dir = xstrdup(outdir ? outdir : m ? m->dir : ".");
	struct statvfs vfs;
	while (statvfs(dir, &vfs) < 0 && strcmp(dir, "/") != 0 && strcmp(dir, ".") != 0) {
		char *up = dirname_dup(dir);
		free(dir);
		dir = up;
	}
	if (statvfs(dir, &vfs) < 0) {
		add(c, "disk", CHECK_FAIL, "cannot read the free space under %s: %s", dir, strerror(errno));
		free(dir);
		return;
	}
	int64_t avail = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
	long budget = 200000;
	int64_t ws = m && m->workspace ? used(m->workspace, 0, &budget) : 0;
	int64_t need = 2 * ws + ((int64_t)64 << 20);
	if (avail < ws)
		add(c, "disk", CHECK_FAIL, "%.1f MB free under %s, less than the workspace takes (%.1f MB): the first snapshot "
		                           "cannot be written. Remedy: free space or --out elsewhere",
		    avail / 1e6, dir, ws / 1e6);
	else if (avail < need)
		add(c, "disk", CHECK_WARN, "%.1f MB free under %s; the workspace takes %.1f MB and a run keeps a full layer "
		                           "and the changes: a long night may fill it",
		    avail / 1e6, dir, ws / 1e6);
	else
		add(c, "disk", CHECK_OK, "%.1f MB free under %s (the workspace takes %.1f MB%s)", avail / 1e6, dir, ws / 1e6,
		    budget <= 0 ? ", counted up to 200,000 entries" : "");
	free(dir);
}

void doctor(const struct manifest *m, const char *outdir, struct checks *out)
{
	memset(out, 0, sizeof *out);
	int ns = !m, docker = 0, none = 0, allow = 0;
	const struct sandboxconf *nsconf = NULL;
	for (size_t i = 0; m && i < m->njobs; i++) {
		const struct sandboxconf *s = &m->jobs[i].sandbox;
		if (s->backend == BACKEND_NAMESPACE && !ns)
			ns = 1, nsconf = s;
		docker |= s->backend == BACKEND_DOCKER;
		none |= s->backend == BACKEND_NONE;
		allow |= s->network_allow;
	}
	struct err te = {0};
	int relative = 0;
	if (doctortmp(&relative, &te) < 0)
		add(out, "temporary files", CHECK_FAIL, "%s", te.msg);
	else if (relative)
		add(out, "temporary files", CHECK_WARN, "TMPDIR=%s is not an absolute path: it is not used, %s is",
		    getenv("TMPDIR"), tmpbase());
	else
		add(out, "temporary files", CHECK_OK, "private folders are made in %s", tmpbase());
	if (ns)
		sandboxchecks(nsconf, out);
	/* The docker engine and each image a job names, once each; nothing is pulled or made. */
	for (size_t i = 0; docker && i < m->njobs; i++) {
		const struct sandboxconf *s = &m->jobs[i].sandbox;
		int seen = s->backend != BACKEND_DOCKER;
		for (size_t k = 0; k < i && !seen; k++)
			seen = m->jobs[k].sandbox.backend == BACKEND_DOCKER &&
			       !strcmp(m->jobs[k].sandbox.image ? m->jobs[k].sandbox.image : "", s->image ? s->image : "");
		if (seen)
			continue;
		struct err e = {0};
		if (sbxcheck(s, &e) < 0)
			add(out, "docker", CHECK_FAIL, "job %s: %s", m->jobs[i].id, e.msg);
		else
			add(out, "docker", CHECK_OK, "the engine answers and has image %s", s->image);
	}
	/* the steps' uid against each job's workspace and mode: rw mounts (run refuses the same) */
	size_t owned = 0, bad = 0;
	for (size_t i = 0; m && i < m->njobs; i++) {
		const struct sandboxconf *s = &m->jobs[i].sandbox;
		if (s->backend != BACKEND_DOCKER && s->backend != BACKEND_NAMESPACE)
			continue;
		struct err e = {0};
		const char *ws = m->jobs[i].workspace ? m->jobs[i].workspace : m->workspace;
		if (!manifestworkerwrites(m, m->jobs[i].worker) || sbxwritable(s, ws, &e) == 0) {
			owned++;
			continue;
		}
		int said = 0;
		for (size_t k = 0; k < out->n && !said; k++)
			said = out->v[k].state == CHECK_FAIL && strstr(out->v[k].what, e.msg) != NULL;
		if (!said)
			add(out, "workspace owner", CHECK_FAIL, "job %s: %s", m->jobs[i].id, e.msg);
		bad++;
	}
	if (owned && !bad)
		add(out, "workspace owner", CHECK_OK, "the steps' uid can write each job's workspace and read-write mounts");
	if (none)
		add(out, "backend none", CHECK_WARN, "a job uses sandbox backend 'none': its commands run on this machine with no "
		                                     "isolation");
	if (allow)
		add(out, "network allow", CHECK_OK, "the egress proxy is built in; steps reach only the hosts the allow lists "
		                                    "name");
	if (m)
		modelchecks(m, out);
	diskcheck(m, outdir, out);
	if (!m && !outdir)
		return; /* no manifest: runs go beside one, which is not known */
	char *from = NULL, *rd = runfolder(m, outdir, &from);
	struct err e = {0};
	if (runfolderok(rd, from, &e) < 0)
		add(out, "run folder", CHECK_FAIL, "%s", e.msg);
	else
		add(out, "run folder", CHECK_OK, "run directories go in %s (%s)", rd, from);
	free(rd);
	free(from);
}

size_t doctorfailed(const struct checks *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		n += c->v[i].state == CHECK_FAIL;
	return n;
}

void checksfree(struct checks *c)
{
	free(c->v);
	memset(c, 0, sizeof *c);
}
