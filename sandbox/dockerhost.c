/* dockerhost: the engine's address, by the docker CLI's rules.

   DOCKER_HOST wins; then a Docker context (DOCKER_CONTEXT, else config.json's
   currentContext): its meta.json under contexts/meta/SHA256(NAME)/ holds
   Endpoints.docker.Host and SkipTLSVerify, its TLS files are under
   contexts/tls/SHA256(NAME)/docker/. Without either, the first socket found of:
   rootless Docker's (for a user other than root: it is their own engine),
   the system's, Docker Desktop's, Podman's (system, then rootless). A socket
   this user may open is preferred to one it may not. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dockerhost.h"

static int issock(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static int isfile(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* $DOCKER_CONFIG, else ~/.docker; NULL when neither can be said. */
static char *configdir(void)
{
	const char *c = getenv("DOCKER_CONFIG"), *home = getenv("HOME");
	if (c && *c)
		return xstrdup(c);
	return home && *home ? pathjoin(home, ".docker") : NULL;
}

/* Take dir/{ca,cert,key}.pem that exist. */
static void tlsfiles(struct dhost *h, const char *dir)
{
	static const char *const names[] = {"ca.pem", "cert.pem", "key.pem"};
	char **slot[] = {&h->ca, &h->cert, &h->key};
	for (int i = 0; i < 3; i++) {
		char *p = pathjoin(dir, names[i]);
		if (isfile(p))
			*slot[i] = p;
		else
			free(p);
	}
}

/* Fill h from an address: unix:///PATH or tcp://HOST[:PORT]. */
static int setaddr(struct dhost *h, const char *addr, const char *via, struct err *e)
{
	if (strncmp(addr, "unix://", 7) == 0 && addr[7] == '/') {
		h->sock = xstrdup(addr + 7);
		h->url = xstrdup(addr);
		h->base = xstrdup("http://localhost");
		h->host = xstrdup("localhost");
	} else if (strncmp(addr, "tcp://", 6) == 0 && addr[6]) {
		const char *hp = addr + 6;
		size_t n = strcspn(hp, "/?#");
		if (hp[n] && strcmp(hp + n, "/") != 0)
			return errc(e, ERR_INPUT, "%s=%s: a tcp address is tcp://HOST:PORT, without a path", via, addr);
		char *hostport = xstrndup(hp, n);
		const char *colon = strrchr(hostport, ':'), *bracket = strrchr(hostport, ']');
		if (!colon || (bracket && colon < bracket)) { /* no port: Docker's own */
			char *p = xasprintf("%s:%d", hostport, h->tls ? 2376 : 2375);
			free(hostport);
			hostport = p;
		}
		h->url = xasprintf("tcp://%s", hostport);
		h->base = xasprintf("%s://%s", h->tls ? "https" : "http", hostport);
		h->host = hostport;
	} else {
		return errc(e, ERR_INPUT, "%s=%s: the docker backend speaks to unix:///PATH or tcp://HOST:PORT (ssh:// and "
		                  "npipe:// are not supported: forward the engine's socket and name that)", via, addr);
	}
	h->via = xstrdup(via);
	return 0;
}

/* DOCKER_HOST with the CLI's TLS variables. */
static int fromenv(struct dhost *h, const char *addr, struct err *e)
{
	const char *verify = getenv("DOCKER_TLS_VERIFY"), *tls = getenv("DOCKER_TLS");
	if (strncmp(addr, "tcp://", 6) == 0) {
		h->verify = verify && *verify;
		h->tls = h->verify || (tls && *tls);
		if (h->tls) {
			const char *cp = getenv("DOCKER_CERT_PATH");
			char *dir = cp && *cp ? xstrdup(cp) : configdir();
			if (dir)
				tlsfiles(h, dir);
			free(dir);
		}
	}
	return setaddr(h, addr, "DOCKER_HOST", e);
}

/* The context NAME's endpoint; 1 when NAME is the default context (no meta: the sockets decide). */
static int fromcontext(struct dhost *h, const char *cdir, const char *name, struct err *e)
{
	if (!*name || strcmp(name, "default") == 0)
		return 1;
	char hash[65], *meta, *via = xasprintf("docker context %s", name);
	sha256hex(name, strlen(name), hash);
	char *p = xasprintf("%s/contexts/meta/%s/meta.json", cdir, hash);
	struct buf b = {0};
	struct err re;
	int rc = -1;
	if (readfile(p, &b, &re) < 0) {
		errc(e, ERR_INPUT, "%s (the current one, from %s): no %s (docker context ls lists the contexts there are)", via,
		     getenv("DOCKER_CONTEXT") && *getenv("DOCKER_CONTEXT") ? "DOCKER_CONTEXT" : "config.json", p);
		goto out;
	}
	cJSON *j = cJSON_Parse(b.data);
	const cJSON *ep = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "Endpoints"), "docker");
	const cJSON *host = cJSON_GetObjectItemCaseSensitive(ep, "Host");
	const cJSON *skip = cJSON_GetObjectItemCaseSensitive(ep, "SkipTLSVerify");
	if (!cJSON_IsString(host) || !*host->valuestring) {
		errc(e, ERR_INPUT, "%s: %s names no Endpoints.docker.Host", via, p);
		cJSON_Delete(j);
		goto out;
	}
	meta = xasprintf("%s/contexts/tls/%s/docker", cdir, hash);
	if (strncmp(host->valuestring, "tcp://", 6) == 0) {
		tlsfiles(h, meta);
		h->tls = h->ca || h->cert;
		h->verify = h->tls && !cJSON_IsTrue(skip);
	}
	free(meta);
	rc = setaddr(h, host->valuestring, via, e);
	cJSON_Delete(j);
out:
	buffree(&b);
	free(p);
	free(via);
	return rc;
}

/* The current context's name: DOCKER_CONTEXT, else config.json's currentContext, else "". */
static char *contextname(const char *cdir)
{
	const char *env = getenv("DOCKER_CONTEXT");
	if (env && *env)
		return xstrdup(env);
	char *name = NULL;
	if (!cdir)
		return xstrdup("");
	char *p = pathjoin(cdir, "config.json");
	struct buf b = {0};
	struct err ignored;
	if (readfile(p, &b, &ignored) == 0) {
		cJSON *j = cJSON_Parse(b.data);
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "currentContext");
		if (cJSON_IsString(c))
			name = xstrdup(c->valuestring);
		cJSON_Delete(j);
	}
	buffree(&b);
	free(p);
	return name ? name : xstrdup("");
}

static int fromsockets(struct dhost *h, struct err *e)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
	struct strv c = {0};
	if (geteuid() != 0 && xdg && *xdg) {
		char *p = pathjoin(xdg, "docker.sock");
		strvadd(&c, p);
		free(p);
	}
	strvadd(&c, "/var/run/docker.sock");
	if (geteuid() == 0 && xdg && *xdg) {
		char *p = pathjoin(xdg, "docker.sock");
		strvadd(&c, p);
		free(p);
	}
	if (home && *home) {
		char *p = pathjoin(home, ".docker/run/docker.sock");
		strvadd(&c, p);
		free(p);
	}
	strvadd(&c, "/run/podman/podman.sock");
	if (xdg && *xdg) {
		char *p = pathjoin(xdg, "podman/podman.sock");
		strvadd(&c, p);
		free(p);
	}
	const char *pick = NULL;
	for (size_t i = 0; i < c.n && !pick; i++)
		if (issock(c.v[i]) && access(c.v[i], R_OK | W_OK) == 0)
			pick = c.v[i];
	for (size_t i = 0; i < c.n && !pick; i++)
		if (issock(c.v[i]))
			pick = c.v[i]; /* connecting will say why not */
	int rc;
	if (pick) {
		char *url = xasprintf("unix://%s", pick);
		rc = setaddr(h, url, "the default sockets", e);
		free(url);
	} else {
		struct buf names = {0};
		for (size_t i = 0; i < c.n; i++)
			bufprintf(&names, "%sunix://%s", i ? ", " : "", c.v[i]);
		rc = errf(e, "no Docker engine: no socket at %s, and neither DOCKER_HOST nor a Docker context names one "
		             "(start dockerd or Podman's service, or set DOCKER_HOST=unix:///PATH)", names.data);
		buffree(&names);
	}
	strvfree(&c);
	return rc;
}

int dhostfind(struct dhost *h, struct err *e)
{
	memset(h, 0, sizeof *h);
	const char *env = getenv("DOCKER_HOST");
	int rc;
	if (env && *env) {
		rc = fromenv(h, env, e);
	} else {
		char *cdir = configdir(), *name = contextname(cdir);
		rc = cdir && *name ? fromcontext(h, cdir, name, e) : 1;
		if (rc == 1)
			rc = fromsockets(h, e);
		free(name);
		free(cdir);
	}
	if (rc < 0)
		dhostfree(h);
	return rc;
}

void dhostfree(struct dhost *h)
{
	free(h->url);
	free(h->sock);
	free(h->base);
	free(h->host);
	free(h->via);
	free(h->ca);
	free(h->cert);
	free(h->key);
	memset(h, 0, sizeof *h);
}
