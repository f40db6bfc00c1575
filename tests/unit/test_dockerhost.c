/* test_dockerhost: finding the engine as the docker CLI does (DOCKER_HOST, TLS variables, the
   current Docker context, the default sockets), and API version comparison. No engine needed:
   the sockets are made here. */
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "t.h"
#include "../../sandbox/dockerapi.h"
#include "../../sandbox/dockerhost.h"

static char dir[64];

static void clearenv_docker(void)
{
	unsetenv("DOCKER_HOST");
	unsetenv("DOCKER_CONTEXT");
	unsetenv("DOCKER_TLS_VERIFY");
	unsetenv("DOCKER_TLS");
	unsetenv("DOCKER_CERT_PATH");
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ok(f != NULL, "open %s", path);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A context NAME whose docker endpoint is host, in the config dir cdir. */
static void context(const char *cdir, const char *name, const char *host, int skipverify, int tls)
{
	char hash[65];
	sha256hex(name, strlen(name), hash);
	char *meta = xasprintf("%s/contexts/meta/%s", cdir, hash), *f = pathjoin(meta, "meta.json");
	struct err e;
	ok(mkdirs(meta, 0755, &e) == 0, "mkdirs %s", meta);
	char *j = xasprintf("{\"Name\":\"%s\",\"Metadata\":{},\"Endpoints\":{\"docker\":{\"Host\":\"%s\","
	                    "\"SkipTLSVerify\":%s}}}", name, host, skipverify ? "true" : "false");
	put(f, j);
	if (tls) {
		char *t = xasprintf("%s/contexts/tls/%s/docker", cdir, hash);
		ok(mkdirs(t, 0700, &e) == 0, "mkdirs %s", t);
		static const char *const n[] = {"ca.pem", "cert.pem", "key.pem"};
		for (int i = 0; i < 3; i++) {
			char *p = pathjoin(t, n[i]);
			put(p, "-----BEGIN NOTHING-----\n");
			free(p);
		}
		free(t);
	}
	free(j);
	free(f);
	free(meta);
}

static void testenv(void)
{
	struct dhost h;
	struct err e = {0};
	clearenv_docker();

	setenv("DOCKER_HOST", "unix:///run/x/docker.sock", 1);
	ok(dhostfind(&h, &e) == 0 && h.sock && strcmp(h.sock, "/run/x/docker.sock") == 0 &&
	   strcmp(h.base, "http://localhost") == 0 && !h.tls && strcmp(h.via, "DOCKER_HOST") == 0,
	   "unix DOCKER_HOST: %s", e.msg);
	dhostfree(&h);

	setenv("DOCKER_HOST", "tcp://127.0.0.1:2999", 1);
	ok(dhostfind(&h, &e) == 0 && !h.sock && strcmp(h.base, "http://127.0.0.1:2999") == 0 &&
	   strcmp(h.url, "tcp://127.0.0.1:2999") == 0 && strcmp(h.host, "127.0.0.1:2999") == 0 && !h.tls,
	   "tcp DOCKER_HOST without TLS variables is plain http: %s", h.base ? h.base : e.msg);
	dhostfree(&h);

	setenv("DOCKER_HOST", "tcp://engine.example", 1);
	setenv("DOCKER_TLS_VERIFY", "1", 1);
	char *certs = pathjoin(dir, "certs");
	struct err me;
	mkdirs(certs, 0700, &me);
	char *ca = pathjoin(certs, "ca.pem"), *cert = pathjoin(certs, "cert.pem"), *key = pathjoin(certs, "key.pem");
	put(ca, "x");
	put(cert, "x");
	put(key, "x");
	setenv("DOCKER_CERT_PATH", certs, 1);
	ok(dhostfind(&h, &e) == 0 && h.tls && h.verify && strcmp(h.base, "https://engine.example:2376") == 0 &&
	   h.ca && strcmp(h.ca, ca) == 0 && h.cert && strcmp(h.cert, cert) == 0 && h.key && strcmp(h.key, key) == 0,
	   "DOCKER_TLS_VERIFY: https on 2376 with DOCKER_CERT_PATH's files: %s", h.base ? h.base : e.msg);
	dhostfree(&h);
	unsetenv("DOCKER_TLS_VERIFY");
	setenv("DOCKER_TLS", "1", 1);
	setenv("DOCKER_HOST", "tcp://[::1]:3000", 1);
	ok(dhostfind(&h, &e) == 0 && h.tls && !h.verify && strcmp(h.base, "https://[::1]:3000") == 0,
	   "DOCKER_TLS without verify, an IPv6 address with its port: %s", h.base ? h.base : e.msg);
	dhostfree(&h);
	unsetenv("DOCKER_TLS");
	unsetenv("DOCKER_CERT_PATH");
	free(ca);
	free(cert);
	free(key);
	free(certs);

	static const char *const bad[] = {"ssh://me@build-host", "npipe:////./pipe/docker_engine", "unix://relative",
	                                  "tcp://h:1/some/path", "http://h:2375"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		setenv("DOCKER_HOST", bad[i], 1);
		e.kind = ERR_FAIL;
		ok(dhostfind(&h, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, bad[i]) && strstr(e.msg, "DOCKER_HOST"),
		   "DOCKER_HOST=%s refused as an input error naming it: %d %s", bad[i], e.kind, e.msg);
	}
	clearenv_docker();
}

static void testcontexts(void)
{
	struct dhost h;
	struct err e = {0};
	char *cdir = pathjoin(dir, "dockerconfig"), *cfg = pathjoin(cdir, "config.json");
	struct err me;
	mkdirs(cdir, 0700, &me);
	setenv("DOCKER_CONFIG", cdir, 1);
	clearenv_docker();

	context(cdir, "rootless", "unix:///run/user/1000/docker.sock", 0, 0);
	context(cdir, "remote", "tcp://10.0.0.5:2376", 0, 1);
	context(cdir, "lax", "tcp://10.0.0.6:2376", 1, 1);
	put(cfg, "{\"auths\":{},\"currentContext\":\"rootless\"}");
	ok(dhostfind(&h, &e) == 0 && h.sock && strcmp(h.sock, "/run/user/1000/docker.sock") == 0 &&
	   strcmp(h.via, "docker context rootless") == 0, "config.json's currentContext: %s",
	   h.sock ? h.sock : e.msg);
	dhostfree(&h);

	setenv("DOCKER_CONTEXT", "remote", 1);
	ok(dhostfind(&h, &e) == 0 && h.tls && h.verify && strcmp(h.base, "https://10.0.0.5:2376") == 0 && h.ca &&
	   strstr(h.ca, "/contexts/tls/") && strstr(h.ca, "/docker/ca.pem") && h.key,
	   "DOCKER_CONTEXT over currentContext, with the context's TLS files: %s", h.base ? h.base : e.msg);
	dhostfree(&h);
	setenv("DOCKER_CONTEXT", "lax", 1);
	ok(dhostfind(&h, &e) == 0 && h.tls && !h.verify, "SkipTLSVerify: TLS without verifying: %s", e.msg);
	dhostfree(&h);

	setenv("DOCKER_HOST", "unix:///from/env.sock", 1);
	ok(dhostfind(&h, &e) == 0 && strcmp(h.sock, "/from/env.sock") == 0, "DOCKER_HOST wins over a context");
	dhostfree(&h);
	unsetenv("DOCKER_HOST");

	setenv("DOCKER_CONTEXT", "gone", 1);
	e.kind = ERR_FAIL;
	ok(dhostfind(&h, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, "docker context gone") &&
	   strstr(e.msg, "DOCKER_CONTEXT"), "an unknown context is an input error naming it: %s", e.msg);

	/* the default context: the sockets decide */
	setenv("DOCKER_CONTEXT", "default", 1);
	char *xdg = pathjoin(dir, "xdg"), *sock = pathjoin(xdg, "docker.sock");
	mkdirs(xdg, 0700, &me);
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	setenv("HOME", dir, 1);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
	ok(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0, "bind %s", sock);
	struct stat st;
	int sys = stat("/var/run/docker.sock", &st) == 0 && S_ISSOCK(st.st_mode);
	ok(dhostfind(&h, &e) == 0 && strcmp(h.via, "the default sockets") == 0, "default context: %s", e.msg);
	if (geteuid() != 0 || !sys)
		ok(h.sock && strcmp(h.sock, sock) == 0, "rootless Docker's socket found: %s", h.sock ? h.sock : "-");
	else
		ok(h.sock && strcmp(h.sock, "/var/run/docker.sock") == 0, "root: the system engine first: %s",
		   h.sock ? h.sock : "-");
	dhostfree(&h);
	close(fd);
	unlink(sock);
	if (!sys) {
		e.msg[0] = 0;
		ok(dhostfind(&h, &e) < 0 && strstr(e.msg, sock) && strstr(e.msg, "podman.sock"),
		   "no socket anywhere: every place tried is named: %s", e.msg);
	}
	unsetenv("DOCKER_CONTEXT");
	unsetenv("DOCKER_CONFIG");
	unsetenv("XDG_RUNTIME_DIR");
	free(xdg);
	free(sock);
	free(cfg);
	free(cdir);
}

static void testversions(void)
{
	ok(dapivercmp("1.41", "1.44") < 0, "1.41 < 1.44");
	ok(dapivercmp("1.52", "1.9") > 0, "1.52 > 1.9 (numbers, not strings)");
	ok(dapivercmp("2.0", "1.99") > 0, "2.0 > 1.99");
	ok(dapivercmp("1.44", "1.44") == 0, "1.44 == 1.44");
	ok(dapivercmp("junk", "1.0") < 0, "a malformed version is the oldest");
	ok(dapivercmp(DAPIMIN, DAPIMAX) < 0, "DAPIMIN %s < DAPIMAX %s", DAPIMIN, DAPIMAX);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/ns-dockerhost.XXXXXX");
	ok(mkdtemp(dir) != NULL, "mkdtemp");
	testenv();
	testcontexts();
	testversions();
	char *rm = xasprintf("rm -rf '%s'", dir);
	ok(system(rm) == 0, "clean up");
	free(rm);
	return tdone();
}
