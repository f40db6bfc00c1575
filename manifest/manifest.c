/* manifest: the nightshift manifest format, from YAML to typed structs, with every check. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "manifest.h"
#include "preset.h"
#include "expr.h"
#include "../util/beneath.h"
#include "matrix.h"
#include "netrule.h"
#include "schema.h"
#include "yaml.h"
#include "../util/path.h"
#include "mcpconf.h"
#include "agentfile.h"
#include "skills.h"
#include "layers.h"

static const char *const topkeys[] = {"version", "name", "workspace", "models", "sandbox", "snapshot",
                                      "secrets", "mcp", "budget", "workers", "jobs", NULL};
static const char *const modelkeys[] = {"provider", "model", "base_url", "api_key_env", "temperature",
                                        "max_output_tokens", "timeout", "connect_timeout", "retries", "idle_timeout", "retry_for", "concurrency", "replies",
                                        "script", "api", "deployment", "api_version", "auth", "region",
                                        "project", "headers", "query", "reasoning_effort", "context_window",
                                        "price", "thinking", "max_tokens_field", NULL};
static const char *const pricekeys[] = {"input", "cached_input", "output", NULL};
static const char *const budgetkeys[] = {"cost", NULL};
static const char *const mountkeys[] = {"source", "target", "mode", NULL};
static const char *const approvalkeys[] = {"default", "rules", "examples", "on_deny", NULL};
static const char *const rulekeys[] = {"tool", "command", "path", "worker", "args", "decision", "preset", NULL};
static const char *const examplekeys[] = {"allow", "deny", NULL};
static const char *const jobkeys[] = {"worker", "input", "needs", "files", "timeout", "retries",
                                      "continue_on_error", "max_turns", "max_tokens", "max_cost", "tool_output_limit",
                                      "sandbox", "model", "workspace", "matrix", "fail_fast", "max_parallel", NULL};
static const char *const toolnames[] = {"shell", "read_file", "write_file", "list_dir", "edit_file", NULL};
static const char *const decisions[] = {"allow", "deny", "abort", NULL};

/* Names are ids in paths and tool names: keep them to [A-Za-z0-9_-], 1..64 chars. */
static int checkname(struct ydoc *y, yaml_node_t *n, const char *what, const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > 64)
		return yfail(y, n, "%s name must be 1 to 64 characters", what);
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == '-'))
			return yfail(y, n, "%s name '%s' may hold only letters, digits, '_' and '-'", what, s);
	return 0;
}

/* Expand inputs and env in *s now; check jobs.* references against needs (expanded at run time). */
static int expand(struct manifest *m, struct ydoc *y, yaml_node_t *n, char **s, int later)
{
	struct exprenv env = {.sets = &m->sets, .later = later};
	struct err ee = {0};
	if (!*s || !strstr(*s, "${{"))
		return 0;
	char *out = exprcheck(*s, &env, &ee) < 0 ? NULL : exprexpand(*s, &env, &ee);
	if (!out)
		return yfail(y, n, "%s", ee.msg);
	free(*s);
	*s = out;
	return 0;
}

/* One of a fixed set of words; the index, or -1 with an error naming the choices. */
static int yenum(struct ydoc *y, yaml_node_t *n, const char *what, const char *const *words)
{
	char *s = NULL;
	if (ystr(y, n, &s) < 0)
		return -1;
	for (int i = 0; words[i]; i++) {
		if (strcmp(s, words[i]) == 0) {
			free(s);
			return i;
		}
	}
	struct buf all = {0};
	for (int i = 0; words[i]; i++)
		bufprintf(&all, "%s%s", i ? ", " : "", words[i]);
	const char *near = didyoumean(s, words);
	if (near)
		yfail(y, n, "unknown %s '%s'; did you mean '%s'?", what, s, near);
	else
		yfail(y, n, "unknown %s '%s' (one of: %s)", what, s, all.data);
	buffree(&all);
	free(s);
	return -1;
}

/* Resolve a path relative to base to an absolute one that must exist. */
static int existing(struct ydoc *y, yaml_node_t *n, const char *base, const char *path, int wantdir, char **out)
{
	if (!base) { /* a record's sandbox path: dropped by replay, never looked up on the host */
		free(*out);
		*out = xstrdup(path);
		return 0;
	}
	char *p = path[0] == '/' ? xstrdup(path) : pathjoin(base, path);
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(p, real) || stat(real, &st) < 0) {
		yfail(y, n, "%s does not exist", p);
		free(p);
		return -1;
	}
	free(p);
	if (wantdir && !S_ISDIR(st.st_mode))
		return yfail(y, n, "%s is not a directory", real);
	free(*out);
	*out = xstrdup(real);
	return 0;
}

/* A path holding a value from a job's output from byte at on: what comes before the '/' before
 * that byte is the declared root (relative to base; written in the manifest, trusted); the rest
 * must be a plain relative path (util/beneath.h) that exists beneath the root, no name of it a link. */
static int beneath(struct ydoc *y, yaml_node_t *n, const char *base, const char *path, size_t at, int wantdir,
                   char **out)
{
	if (!base)
		return existing(y, n, base, path, wantdir, out);
	size_t cut = at;
	while (cut > 0 && path[cut - 1] != '/')
		cut--;
	char *pre = xstrndup(path, cut);
	char *root = !*pre ? xstrdup(base) : pre[0] == '/' ? xstrdup(pre) : pathjoin(base, pre);
	const char *rest = path + cut, *why = beneathbad(rest);
	char real[PATH_MAX];
	int rc = 0;
	if (why) {
		rc = yfail(y, n, "'%.200s' (from a job's output) is not a path beneath %s: %s", rest, root, why);
	} else if (!realpath(root, real)) {
		rc = yfail(y, n, "%s does not exist", root);
	} else {
		int rfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
		int fd = rfd < 0 ? -1 : openbeneath(rfd, rest, O_PATH | (wantdir ? O_DIRECTORY : 0), 0);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0)
			rc = yfail(y, n, "'%.200s' (from a job's output) names no %s beneath %s without links: %s", rest,
			           wantdir ? "folder" : "file or folder", real,
			           errno == ELOOP ? "a name on the way is a symbolic link" : errno == EXDEV ? "it leaves the folder"
			                                                                   : strerror(errno));
		else if (S_ISLNK(st.st_mode)) /* O_PATH with O_NOFOLLOW opens a last name that is a link */
			rc = yfail(y, n, "'%.200s' (from a job's output) names a symbolic link beneath %s", rest, real);
		else if (wantdir && !S_ISDIR(st.st_mode))
			rc = yfail(y, n, "%s/%.200s is not a directory", real, rest);
		if (fd >= 0)
			close(fd);
		if (rfd >= 0)
			close(rfd);
		if (rc == 0) {
			free(*out);
			*out = strcmp(real, "/") == 0 ? xasprintf("/%s", rest) : xasprintf("%s/%s", real, rest);
		}
	}
	free(root);
	free(pre);
	return rc;
}

void sandboxcopy(struct sandboxconf *dst, const struct sandboxconf *src)
{
	*dst = *src;
	dst->image = xstrdup(src->image);
	memset(&dst->env, 0, sizeof dst->env);
	for (size_t i = 0; i < src->env.n; i++)
		strvadd(&dst->env, src->env.v[i]);
	memset(&dst->protect, 0, sizeof dst->protect);
	for (size_t i = 0; i < src->protect.n; i++)
		strvadd(&dst->protect, src->protect.v[i]);
	dst->mounts = src->nmounts ? xcalloc(src->nmounts, sizeof *dst->mounts) : NULL;
	for (size_t i = 0; i < src->nmounts; i++) {
		dst->mounts[i] = src->mounts[i];
		dst->mounts[i].source = xstrdup(src->mounts[i].source);
		dst->mounts[i].target = xstrdup(src->mounts[i].target);
	}
	dst->allow = src->nallow ? xcalloc(src->nallow, sizeof *dst->allow) : NULL;
	for (size_t i = 0; i < src->nallow; i++)
		netrulecopy(&dst->allow[i], &src->allow[i]);
}

void sandboxfree(struct sandboxconf *s)
{
	free(s->image);
	strvfree(&s->env);
	strvfree(&s->protect);
	for (size_t i = 0; i < s->nmounts; i++) {
		free(s->mounts[i].source);
		free(s->mounts[i].target);
	}
	free(s->mounts);
	for (size_t i = 0; i < s->nallow; i++)
		netrulefree(&s->allow[i]);
	free(s->allow);
	memset(s, 0, sizeof *s);
}

static void allowfree(struct sandboxconf *sc)
{
	for (size_t i = 0; i < sc->nallow; i++)
		netrulefree(&sc->allow[i]);
	free(sc->allow);
	sc->allow = NULL;
	sc->nallow = 0;
}

/* network: none | host | { allow: [ENTRY, ...] } */
static int parsenetwork(struct ydoc *y, yaml_node_t *n, struct sandboxconf *sc)
{
	static const char *const networks[] = {"none", "host", NULL};
	static const char *const netkeys[] = {"allow", NULL};
	sc->netpos = ypos(y, n);
	allowfree(sc);
	sc->network_host = sc->network_allow = 0;
	if (n->type != YAML_MAPPING_NODE) {
		char *w = NULL;
		if (ystr(y, n, &w) < 0)
			return -1;
		int k = strcmp(w, networks[0]) == 0 ? 0 : strcmp(w, networks[1]) == 0 ? 1 : -1;
		if (k < 0)
			yfail(y, n, "unknown network '%s' (one of: none, host, or { allow: [HOST, ...] })", w);
		free(w);
		sc->network_host = k == 1;
		return k < 0 ? -1 : 0;
	}
	if (ymap(y, n, "network", netkeys) < 0)
		return -1;
	yaml_node_t *list = yget(y, n, "allow"), *it;
	if (!list)
		return yfail(y, n, "network as a mapping needs allow: a list of hosts, *.domains, host:port, "
		                   "IP addresses or CIDRs");
	if (list->type != YAML_SEQUENCE_NODE)
		return yfail(y, list, "network.allow must be a list, e.g. [\"api.github.com\", \"*.pypi.org:443\"]");
	sc->network_allow = 1;
	for (size_t j = 0; (it = yitem(y, list, j)); j++) {
		char *text = NULL;
		const char *why;
		struct netrule r;
		if (ystr(y, it, &text) < 0)
			return -1;
		if (netruleparse(text, &r, &why) < 0) {
			yfail(y, it, "network.allow entry '%s': %s", text, why);
			free(text);
			return -1;
		}
		free(text);
		r.pos = ypos(y, it);
		sc->allow = xrealloc(sc->allow, (sc->nallow + 1) * sizeof *sc->allow);
		sc->allow[sc->nallow++] = r;
	}
	return 0;
}

/* Why t cannot be a mount's target inside the sandbox (a static sentence), or NULL when it can:
 * it must be an absolute, clean path (no empty, '.' or '..' name, no control character, 1024 bytes
 * at most) outside the places the sandbox itself makes: /, /workspace, /proc, /dev, /sys, /skills. */
static const char *mounttargetbad(const char *t)
{
	static const char *const made[] = {"/workspace", "/proc", "/dev", "/sys", "/skills"};
	size_t n = strlen(t);
	if (t[0] != '/')
		return "must be an absolute path (it is a place inside the sandbox, like /data)";
	if (n == 1)
		return "may not be / (the sandbox's root is made by nightshift)";
	if (n > 1024)
		return "is longer than 1024 bytes";
	for (const char *p = t; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return "holds a control character";
	for (const char *p = t; *p;) {
		const char *q = ++p;
		while (*q && *q != '/')
			q++;
		size_t k = (size_t)(q - p);
		if (k == 0 || (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.'))
			return "must be a clean path: no empty, '.' or '..' name in it";
		p = q;
	}
	for (size_t i = 0; i < sizeof made / sizeof *made; i++) {
		size_t k = strlen(made[i]);
		if (strncmp(t, made[i], k) == 0 && (t[k] == 0 || t[k] == '/'))
			return "may not be /workspace, /proc, /dev, /sys or /skills or lie in them: the sandbox makes those";
	}
	return NULL;
}

static int parsemount(struct ydoc *y, yaml_node_t *n, const char *base, struct mount *mt)
{
	yaml_node_t *v;
	if (ymap(y, n, "a mount", mountkeys) < 0)
		return -1;
	mt->pos = ypos(y, n);
	char *src = NULL;
	if (!(v = yget(y, n, "source")))
		return yfail(y, n, "a mount needs a source");
	long at = ytainted(y, v);
	int rc = ystr(y, v, &src) < 0 ? -1 : at >= 0 ? beneath(y, v, base, src, (size_t)at, 0, &mt->source)
	                                              : existing(y, v, base, src, 0, &mt->source);
	free(src);
	if (rc < 0)
		return -1;
	if (!(v = yget(y, n, "target")))
		return yfail(y, n, "a mount needs a target");
	if (ystr(y, v, &mt->target) < 0)
		return -1;
	const char *why = mounttargetbad(mt->target);
	if (why)
		return yfail(y, v, "a mount's target %s", why);
	mt->rw = 0;
	if ((v = yget(y, n, "mode"))) {
		static const char *const modes[] = {"ro", "rw", NULL};
		int i = yenum(y, v, "mount mode", modes);
		if (i < 0)
			return -1;
		mt->rw = i == 1;
	}
	return 0;
}

/* sandbox.uid: UID (the group the same number) or "UID:GID", neither root (a step as root owns
 * the workspace outright) nor 65534 (the docker backend's hook, which steps may not signal). */
static int parseuid(struct ydoc *y, yaml_node_t *n, struct sandboxconf *sc)
{
	char *text = NULL, *end;
	if (ystr(y, n, &text) < 0)
		return -1;
	long long u = -1, g = -1;
	if (isdigit((unsigned char)text[0])) {
		u = strtoll(text, &end, 10);
		g = u;
		if (*end == ':' && isdigit((unsigned char)end[1]))
			g = strtoll(end + 1, &end, 10);
		else if (*end)
			u = -1;
		if (*end)
			u = -1;
	}
	int rc = 0;
	if (u < 0 || g < 0)
		rc = yfail(y, n, "sandbox.uid: '%s' is not a uid or uid:gid (numbers, e.g. 1001 or \"1001:118\")", text);
	else if (u == 0 || g == 0)
		rc = yfail(y, n, "sandbox.uid: steps never run as root (uid or gid 0)");
	else if (u > 2147483646 || g > 2147483646 || u == 65534 || g == 65534)
		rc = yfail(y, n, "sandbox.uid: '%s' is out of range (1 to 2147483646, not 65534: nobody)", text);
	else
		sc->uid = (int)u, sc->gid = (int)g;
	free(text);
	return rc;
}

/* Apply the keys of a sandbox mapping on top of sc (which holds the inherited values). */
/* The names of a table's rows (each row begins with its const char *name), NULL-ended, for ymap. */
static void keynames(const void *rows, size_t n, size_t stride, const char **out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = *(const char *const *)(const void *)((const char *)rows + i * stride);
	out[n] = NULL;
}

/* sandbox: one parser per key, each reading its value into sc (base: the folder paths are
 * relative to). */
static int scbackend(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	static const char *const backends[] = {"namespace", "docker", "none", NULL};
	int k = yenum(y, v, "sandbox backend", backends);
	(void)base;
	sc->backend = k;
	return k;
}

static int scimage(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	int rc = ystr(y, v, &sc->image);
	if (rc == 0 && strcmp(sc->image, "host") != 0 && (sc->image[0] == '.' || sc->image[0] == '/')) {
		char *dir = NULL;
		rc = existing(y, v, base, sc->image, 1, &dir);
		if (rc == 0) {
			free(sc->image);
			sc->image = dir;
		}
	}
	return rc;
}

static int scnetwork(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	(void)base;
	return parsenetwork(y, v, sc);
}

static int scmemory(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	(void)base;
	return ysize(y, v, &sc->memory);
}

static int sccpus(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	(void)base;
	return ynum(y, v, 0.01, 1024, &sc->cpus);
}

static int scpids(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	(void)base;
	return yint(y, v, 1, 1 << 22, &sc->pids);
}

static int sclimits(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	static const char *const limitmodes[] = {"strict", "warn", NULL};
	int k = yenum(y, v, "sandbox limits", limitmodes);
	(void)base;
	sc->limits_warn = k == 1;
	return k;
}

static int sctimeout(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	(void)base;
	int rc = yduration(y, v, &sc->timeout_ms);
	if (rc == 0 && sc->timeout_ms <= 0)
		rc = yfail(y, v, "timeout must be positive");
	return rc;
}

static int scenv(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	(void)base;
	int rc = ystrv(y, v, &sc->env);
	for (size_t j = 0; rc == 0 && j < sc->env.n; j++) { /* NAME, or NAME=VALUE */
		const char *s = sc->env.v[j];
		size_t nl = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (!nl || (s[0] >= '0' && s[0] <= '9') || (s[nl] && s[nl] != '='))
			rc = yfail(y, v, "sandbox.env: '%.80s' is neither a variable's name (passed in with its "
			           "value here) nor NAME=VALUE", s);
	}
	return rc;
}

static int scprotect(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	(void)base;
	strvfree(&sc->protect);
	int rc = ystrv(y, v, &sc->protect);
	for (size_t j = 0; rc == 0 && j < sc->protect.n; j++) {
		const char *g = sc->protect.v[j];
		if (!*g || g[0] == '/' || strcmp(g, "..") == 0 || strncmp(g, "../", 3) == 0 || strstr(g, "/../"))
			rc = yfail(y, v, "sandbox.protect: '%s' is not a path inside the workspace", g);
	}
	return rc;
}

static int scuid(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	(void)base;
	return parseuid(y, v, sc);
}

static int scmounts(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc)
{
	yaml_node_t *it;
	int rc = 0;
	if (v->type != YAML_SEQUENCE_NODE)
		return yfail(y, v, "mounts must be a list");
	for (size_t j = 0; j < sc->nmounts; j++) {
		free(sc->mounts[j].source);
		free(sc->mounts[j].target);
	}
	free(sc->mounts);
	sc->mounts = NULL;
	sc->nmounts = 0;
	for (size_t j = 0; (it = yitem(y, v, j)); j++) {
		sc->mounts = xrealloc(sc->mounts, (j + 1) * sizeof *sc->mounts);
		memset(&sc->mounts[j], 0, sizeof sc->mounts[j]);
		sc->nmounts = j + 1;
		if (parsemount(y, it, base, &sc->mounts[j]) < 0)
			rc = -1, ynote(y);
	}
	return rc;
}

/* The keys of sandbox:, one row each. */
static const struct sandboxkey {
	const char *name;
	int (*parse)(struct ydoc *y, yaml_node_t *v, const char *base, struct sandboxconf *sc);
} sandboxkeys[] = {
	{"backend", scbackend}, {"image", scimage},     {"network", scnetwork}, {"memory", scmemory},
	{"cpus", sccpus},       {"pids", scpids},       {"timeout", sctimeout}, {"env", scenv},
	{"mounts", scmounts},   {"limits", sclimits},   {"protect", scprotect}, {"uid", scuid},
};
#define NSANDBOXKEYS (sizeof sandboxkeys / sizeof *sandboxkeys)

static int parsesandbox(struct ydoc *y, yaml_node_t *n, const char *base, struct sandboxconf *sc)
{
	const char *names[NSANDBOXKEYS + 1];
	keynames(sandboxkeys, NSANDBOXKEYS, sizeof *sandboxkeys, names);
	struct ypair p;
	int bad = ymap(y, n, "sandbox", names);
	if (!n || n->type != YAML_MAPPING_NODE)
		return -1;
	for (size_t i = 0; yeach(y, n, i, &p); i++)
		for (size_t k = 0; k < NSANDBOXKEYS; k++)
			if (strcmp(p.key, sandboxkeys[k].name) == 0 && sandboxkeys[k].parse(y, p.val, base, sc) < 0)
				bad = -1, ynote(y);
	return bad;
}

/* snapshot: one parser per key. */
static int snaplevel(struct ydoc *y, yaml_node_t *v, struct snapconf *sc)
{
	int64_t n;
	int rc = yint(y, v, 1, 19, &n);
	if (rc == 0)
		sc->level = n;
	return rc;
}

static int snapthreads(struct ydoc *y, yaml_node_t *v, struct snapconf *sc)
{
	int64_t n;
	int rc = yint(y, v, 0, 256, &n);
	if (rc == 0)
		sc->threads = n;
	return rc;
}

static int snapexclude(struct ydoc *y, yaml_node_t *v, struct snapconf *sc)
{
	return ystrv(y, v, &sc->exclude);
}

static int snapmaxsize(struct ydoc *y, yaml_node_t *v, struct snapconf *sc)
{
	return ysize(y, v, &sc->max_size);
}

static int snapgitignore(struct ydoc *y, yaml_node_t *v, struct snapconf *sc)
{
	return ybool(y, v, &sc->gitignore);
}

/* The keys of snapshot:, one row each. */
static const struct snapkey {
	const char *name;
	int (*parse)(struct ydoc *y, yaml_node_t *v, struct snapconf *sc);
} snapkeys[] = {
	{"level", snaplevel}, {"threads", snapthreads}, {"exclude", snapexclude}, {"max_size", snapmaxsize},
	{"gitignore", snapgitignore},
};
#define NSNAPKEYS (sizeof snapkeys / sizeof *snapkeys)

static int parsesnapshot(struct ydoc *y, yaml_node_t *n, struct snapconf *sc)
{
	const char *names[NSNAPKEYS + 1];
	keynames(snapkeys, NSNAPKEYS, sizeof *snapkeys, names);
	struct ypair p;
	int bad = ymap(y, n, "snapshot", names);
	if (!n || n->type != YAML_MAPPING_NODE)
		return -1;
	for (size_t i = 0; yeach(y, n, i, &p); i++)
		for (size_t k = 0; k < NSNAPKEYS; k++)
			if (strcmp(p.key, snapkeys[k].name) == 0 && snapkeys[k].parse(y, p.val, sc) < 0)
				bad = -1;
	return bad;
}

/* Check the shape of a scripted model's replies: [{text?, tool_calls?: [{name, arguments}]}]. */
static int checkreplies(struct ydoc *y, yaml_node_t *n)
{
	static const char *const replykeys[] = {"text", "tool_calls", NULL};
	static const char *const callkeys[] = {"name", "arguments", "id", NULL};
	yaml_node_t *r, *c, *v;
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return yfail(y, n, "replies must be a list");
	for (size_t i = 0; (r = yitem(y, n, i)); i++) {
		if (ymap(y, r, "a scripted reply", replykeys) < 0)
			return -1;
		if (!yget(y, r, "text") && !yget(y, r, "tool_calls"))
			return yfail(y, r, "a scripted reply needs text or tool_calls");
		if ((v = yget(y, r, "text")) && v->type != YAML_SCALAR_NODE)
			return yfail(y, v, "text must be a string");
		if (!(v = yget(y, r, "tool_calls")))
			continue;
		if (v->type != YAML_SEQUENCE_NODE)
			return yfail(y, v, "tool_calls must be a list");
		for (size_t j = 0; (c = yitem(y, v, j)); j++) {
			if (ymap(y, c, "a tool call", callkeys) < 0)
				return -1;
			yaml_node_t *name = yget(y, c, "name"), *args = yget(y, c, "arguments");
			if (!name || name->type != YAML_SCALAR_NODE)
				return yfail(y, name ? name : c, "a tool call needs a name");
			if (args && args->type != YAML_MAPPING_NODE)
				return yfail(y, args, "arguments must be a mapping");
		}
	}
	return 0;
}

static int addfile(struct manifest *m, const char *path)
{
	m->filenames = xrealloc(m->filenames, (m->nfilenames + 1) * sizeof *m->filenames);
	m->filenames[m->nfilenames++] = xstrdup(path);
	strvadd(&m->files, path);
	return 0;
}

/* Where a file the manifest names (rel, as written) is read from: beside the manifest; for a
 * record's manifest (m->confine), the copy its run made beneath manifest/ (util/path.h
 * pathcopyname, as artifacts/rundir.c rundircopy wrote it). */
static char *namedpath(const struct manifest *m, const char *rel)
{
	if (!m->confine)
		return rel[0] == '/' ? xstrdup(rel) : pathjoin(m->dir, rel);
	return pathjoin(m->confine, pathcopyname(rel));
}

/* Read a file of the manifest (the manifest, a script, a worker file): at most MANIFESTFILEMAX
 * bytes; for a record's manifest only a regular file beneath m->confine, never through a link. */
static int readnamed(const struct manifest *m, const char *path, struct buf *text, struct err *e)
{
	if (!m->confine)
		return readfilemax(path, MANIFESTFILEMAX, text, e);
	size_t n = strlen(m->confine);
	if (strncmp(path, m->confine, n) != 0 || path[n] != '/')
		return errc(e, ERR_INPUT, "%s: not in the record's manifest folder %s", path, m->confine);
	return readbeneath(m->confine, path + n + 1, MANIFESTFILEMAX, text, e);
}

/* Load a YAML file into y, remembering its name for positions. */
static int loadyaml(struct manifest *m, const char *path, struct ydoc *y, struct buf *text, struct err *e)
{
	if (readnamed(m, path, text, e) < 0)
		return -1;
	addfile(m, path);
	return yload(y, m->filenames[m->nfilenames - 1], text->data, text->len, 0, e);
}

/* Load a layer of configuration (the admin policy, the user's defaults) into y: the machine's or
 * the user's own file, read where it is even for a record's manifest (m->confine). */
static int loadlayer(struct manifest *m, const char *path, struct ydoc *y, struct buf *text, struct err *e)
{
	if (readfilemax(path, MANIFESTFILEMAX, text, e) < 0)
		return -1;
	addfile(m, path);
	return yload(y, m->filenames[m->nfilenames - 1], text->data, text->len, 0, e);
}

/* headers: or query: a mapping of names to strings, each value expanded (${{ env.X }}, ${{ inputs.X }});
   what came from the environment is kept in hidden, to be masked. */
static int parsepairs(struct manifest *m, struct ydoc *y, yaml_node_t *n, int header, struct strv *out,
                      struct strv *hidden)
{
	struct ypair p;
	if (!n || n->type != YAML_MAPPING_NODE)
		return yfail(y, n, "%s must be a mapping of names to strings", header ? "headers" : "query");
	for (size_t i = 0; yeach(y, n, i, &p); i++) {
		char *v = NULL;
		if (ystr(y, p.val, &v) < 0)
			return -1;
		int fromenv = strstr(v, "${{") && strstr(v, "env.");
		if (expand(m, y, p.val, &v, 0) < 0) {
			free(v);
			return -1;
		}
		size_t bad = strcspn(p.key, "()<>@,;:\\\"/[]?={} \t\r\n");
		if (!*p.key || (header && p.key[bad])) {
			free(v);
			return yfail(y, p.val, "'%s' is not a header name", p.key);
		}
		for (const char *c = v; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f) {
				free(v);
				return yfail(y, p.val, "the value of %s '%s' holds a control character", header ? "header" : "query",
				             p.key);
			}
		char *kv = xasprintf(header ? "%s: %s" : "%s=%s", p.key, v);
		strvadd(out, kv);
		if (fromenv && *v)
			strvadd(hidden, v);
		free(kv);
		free(v);
	}
	return 0;
}

/* price: {input, cached_input, output} in USD per million tokens; cached_input defaults to input. */
static int parseprice(struct ydoc *y, yaml_node_t *n, struct price *pr)
{
	yaml_node_t *v;
	if (ymap(y, n, "price", pricekeys) < 0)
		return -1;
	if (!yget(y, n, "input") || !yget(y, n, "output"))
		return yfail(y, n, "price needs input and output (USD per million tokens)");
	if (ynum(y, yget(y, n, "input"), 0, 1e6, &pr->input) < 0 || ynum(y, yget(y, n, "output"), 0, 1e6, &pr->output) < 0)
		return -1;
	pr->cached_input = pr->input;
	if ((v = yget(y, n, "cached_input")) && ynum(y, v, 0, 1e6, &pr->cached_input) < 0)
		return -1;
	pr->set = 1;
	return 0;
}

static int parsemodel(struct manifest *m, struct ydoc *y, const char *name, yaml_node_t *n, struct model *md,
                      struct err *e)
{
	static const char *const providers[] = {"openai", "anthropic", "scripted", "azure-openai", "bedrock", "vertex",
	                                        NULL};
	static const char *const apis[] = {"chat", "responses", "converse", NULL};
	static const char *const auths[] = {"api-key", "bearer", NULL};
	struct ypair p;
	int64_t v;
	md->name = xstrdup(name);
	md->pos = md->keypos = ypos(y, n);
	md->temperature = -1;
	md->retries = -1;
	md->timeout_ms = 600000;
	md->idle_timeout_ms = 120000;
	md->retry_for_ms = 600000;
	int bad = ymap(y, n, "a model", modelkeys);
	if (!n || n->type != YAML_MAPPING_NODE)
		return -1;
	yaml_node_t *pv = yget(y, n, "provider");
	if (!pv)
		return yfail(y, n, "model '%s' needs a provider (openai, anthropic or scripted)", name);
	int k = yenum(y, pv, "provider", providers);
	if (k < 0)
		return -1;
	md->provider = k;
	for (size_t i = 0; yeach(y, n, i, &p); i++) {
		int rc = 0;
		if (strcmp(p.key, "model") == 0)
			rc = ystr(y, p.val, &md->model);
		else if (strcmp(p.key, "base_url") == 0)
			rc = ystr(y, p.val, &md->base_url);
		else if (strcmp(p.key, "api_key_env") == 0) {
			rc = ystr(y, p.val, &md->api_key_env);
			md->keypos = ypos(y, p.knode);
		}
		else if (strcmp(p.key, "temperature") == 0)
			rc = ynum(y, p.val, 0, 2, &md->temperature);
		else if (strcmp(p.key, "max_output_tokens") == 0)
			rc = yint(y, p.val, 1, 10000000, &md->max_output_tokens);
		else if (strcmp(p.key, "timeout") == 0)
			rc = yduration(y, p.val, &md->timeout_ms);
		else if (strcmp(p.key, "connect_timeout") == 0)
			rc = yduration(y, p.val, &md->connect_timeout_ms);
		else if (strcmp(p.key, "idle_timeout") == 0) {
			rc = yduration(y, p.val, &md->idle_timeout_ms);
			if (rc == 0 && md->idle_timeout_ms < 1000)
				rc = yfail(y, p.val, "idle_timeout must be at least 1s");
		} else if (strcmp(p.key, "retry_for") == 0) {
			rc = yduration(y, p.val, &md->retry_for_ms);
			if (rc == 0 && md->retry_for_ms > 86400000)
				rc = yfail(y, p.val, "retry_for must be at most 24h");
		}
		else if (strcmp(p.key, "retries") == 0) {
			rc = yint(y, p.val, 0, 100, &v);
			md->retries = v;
		} else if (strcmp(p.key, "api") == 0) {
			rc = k = yenum(y, p.val, "api", apis);
			md->api = k == 1 ? API_RESPONSES : k == 2 ? API_CONVERSE : API_CHAT;
			if (k == 1 && md->provider != PROV_OPENAI && md->provider != PROV_AZURE)
				rc = yfail(y, p.val, "api: responses is for provider openai or azure-openai");
			if (k == 2 && md->provider != PROV_BEDROCK)
				rc = yfail(y, p.val, "api: converse is for provider bedrock");
		} else if (strcmp(p.key, "auth") == 0) {
			rc = k = yenum(y, p.val, "auth", auths);
			md->bearer = k == 1;
		} else if (strcmp(p.key, "deployment") == 0)
			rc = ystr(y, p.val, &md->deployment);
		else if (strcmp(p.key, "api_version") == 0)
			rc = ystr(y, p.val, &md->api_version);
		else if (strcmp(p.key, "region") == 0)
			rc = ystr(y, p.val, &md->region);
		else if (strcmp(p.key, "project") == 0)
			rc = ystr(y, p.val, &md->project);
		else if (strcmp(p.key, "headers") == 0)
			rc = parsepairs(m, y, p.val, 1, &md->headers, &md->hidden);
		else if (strcmp(p.key, "query") == 0)
			rc = parsepairs(m, y, p.val, 0, &md->query, &md->hidden);
		else if (strcmp(p.key, "context_window") == 0)
			rc = yint(y, p.val, 1024, 100000000, &md->context_window);
		else if (strcmp(p.key, "thinking") == 0) {
			rc = yint(y, p.val, 1024, 10000000, &md->thinking);
			if (rc == 0 && md->provider != PROV_ANTHROPIC)
				rc = yfail(y, p.knode, "thinking is an Anthropic option (for OpenAI use reasoning_effort)");
		} else if (strcmp(p.key, "reasoning_effort") == 0) {
			static const char *const efforts[] = {"minimal", "low", "medium", "high", NULL};
			rc = yenum(y, p.val, "reasoning_effort", efforts);
			if (rc >= 0) {
				free(md->reasoning_effort);
				md->reasoning_effort = xstrdup(efforts[rc]);
			}
			if (rc >= 0 && md->provider != PROV_OPENAI && md->provider != PROV_AZURE)
				rc = yfail(y, p.knode, "reasoning_effort is an OpenAI option (for Anthropic use thinking)");
		} else if (strcmp(p.key, "max_tokens_field") == 0) {
			static const char *const fields[] = {"max_tokens", "max_completion_tokens", NULL};
			rc = yenum(y, p.val, "max_tokens_field", fields);
			md->cap_field = rc + 1;
			if (rc >= 0 && md->provider != PROV_OPENAI)
				rc = yfail(y, p.knode, "max_tokens_field is an OpenAI option");
		} else if (strcmp(p.key, "price") == 0)
			rc = parseprice(y, p.val, &md->price);
		else if (strcmp(p.key, "concurrency") == 0) {
			rc = yint(y, p.val, 1, 1024, &v);
			md->concurrency = v;
		}
		if (rc < 0)
			bad = -1;
	}
	if (bad == 0 && md->provider == PROV_AZURE && (!md->base_url || !md->deployment))
		bad = yfail(y, n, "model '%s': provider azure-openai needs base_url (https://NAME.openai.azure.com) and "
		                  "deployment", name);
	if (bad == 0 && md->provider == PROV_VERTEX && (!md->project || !md->region))
		bad = yfail(y, n, "model '%s': provider vertex needs project and region", name);
	if (bad == 0 && md->bearer && md->provider != PROV_AZURE)
		bad = yfail(y, yget(y, n, "auth"), "auth: is for provider azure-openai");
	if (bad < 0)
		return -1;
	if (md->thinking && md->temperature >= 0)
		return yfail(y, yget(y, n, "temperature"), "temperature cannot be set with thinking (the API refuses it)");
	if (md->thinking && md->max_output_tokens && md->max_output_tokens <= md->thinking)
		return yfail(y, yget(y, n, "max_output_tokens"), "max_output_tokens must be above the thinking budget (%lld)",
		             (long long)md->thinking);
	if ((pv = yget(y, n, "replies")) || (pv = yget(y, n, "script"))) {
		if (md->provider != PROV_SCRIPTED)
			return yfail(y, pv, "replies and script belong to provider: scripted");
	}
	if (md->provider == PROV_SCRIPTED) {
		yaml_node_t *rv = yget(y, n, "replies"), *sv = yget(y, n, "script");
		if (!!rv == !!sv)
			return yfail(y, n, "a scripted model needs exactly one of replies or script");
		if (rv) {
			if (checkreplies(y, rv) < 0 || !(md->replies = yjson(y, rv)))
				return -1;
		} else {
			if (ystr(y, sv, &md->script) < 0)
				return -1;
			char *path = namedpath(m, md->script);
			struct ydoc sy = {0};
			struct buf text = {0};
			int rc = loadyaml(m, path, &sy, &text, e);
			sy.errs = y->errs;
			free(path);
			if (rc == 0) {
				yaml_node_t *root = yroot(&sy);
				if (root && root->type == YAML_MAPPING_NODE && yget(&sy, root, "replies"))
					root = yget(&sy, root, "replies");
				rc = checkreplies(&sy, root);
				if (rc == 0 && !(md->replies = yjson(&sy, root)))
					rc = -1;
			} else if (!strstr(e->msg, ": YAML")) {
				yfail(y, sv, "cannot read script %s", e->msg);
			}
			yfree(&sy);
			buffree(&text);
			if (rc < 0)
				return -1;
		}
	} else if (!md->model && md->provider == PROV_AZURE) {
		md->model = xstrdup(md->deployment); /* the deployment names the model */
	} else if (!md->model) {
		return yfail(y, n, "model '%s' needs a model name (model: ...)", name);
	}
	if (md->max_output_tokens && md->context_window && md->max_output_tokens >= md->context_window)
		return yfail(y, yget(y, n, "max_output_tokens"), "max_output_tokens (%lld) must be below context_window (%lld): "
		             "the reply shares the window with the prompt", (long long)md->max_output_tokens,
		             (long long)md->context_window);
	return 0;
}

int manifestmodelpairs(struct manifest *m, const char *name, const char *where, const struct strv *pairs,
                       struct model *md, struct err *e)
{
	struct ydoc y;
	size_t nfiles = m->files.n;
	memset(md, 0, sizeof *md);
	if (yfrompairs(&y, where, pairs, e) < 0)
		return -1;
	int rc = parsemodel(m, &y, name, yroot(&y), md, e);
	yfree(&y);
	while (m->files.n > nfiles) { /* a --model script is not the manifest's: not copied, not protected */
		free(m->files.v[--m->files.n]);
		m->files.v[m->files.n] = NULL;
	}
	if (rc < 0)
		modelfree(md);
	return rc;
}

static void rulesfree(struct approval *a)
{
	for (size_t i = 0; i < a->nrules; i++) {
		free(a->rules[i].tool);
		free(a->rules[i].command);
		free(a->rules[i].path);
		free(a->rules[i].worker);
		strvfree(&a->rules[i].argkeys);
		strvfree(&a->rules[i].argglobs);
	}
	free(a->rules);
	a->rules = NULL;
	a->nrules = 0;
}

static int parseapproval(struct ydoc *y, yaml_node_t *n, struct approval *a)
{
	yaml_node_t *v, *it;
	int bad = ymap(y, n, "approval", approvalkeys);
	if (!n || n->type != YAML_MAPPING_NODE)
		return -1;
	a->pos = ypos(y, n);
	if ((v = yget(y, n, "default"))) {
		int k = yenum(y, v, "decision", decisions);
		if (k < 0)
			bad = -1;
		else
			a->def = k;
	}
	if ((v = yget(y, n, "on_deny"))) {
		static const char *const ondeny[] = {"continue", "fail", NULL};
		int k = yenum(y, v, "on_deny", ondeny);
		if (k < 0)
			bad = -1;
		else
			a->on_deny_fail = k;
	}
	if ((v = yget(y, n, "rules"))) {
		if (v->type != YAML_SEQUENCE_NODE)
			return yfail(y, v, "rules must be a list");
		rulesfree(a); /* the manifest's rules replace those of the worker file */
		for (size_t i = 0; (it = yitem(y, v, i)); i++) {
			yaml_node_t *pr = it->type == YAML_MAPPING_NODE ? yget(y, it, "preset") : NULL;
			if (pr) { /* - { preset: NAME }: the preset's allow rules, in place */
				char *name = NULL;
				const char *const *pats = NULL;
				if (ymap(y, it, "a rule", rulekeys) < 0 || ystr(y, pr, &name) < 0) {
					bad = -1;
				} else if (yget(y, it, "tool") || yget(y, it, "command") || yget(y, it, "path") ||
				           yget(y, it, "worker") || yget(y, it, "args") || yget(y, it, "decision")) {
					bad = yfail(y, it, "a preset stands alone in its rule: - { preset: %s }", name);
				} else if (!(pats = presetrules(name))) {
					bad = yfail(y, pr, "unknown preset '%s' (read-only, git-read, build)", name);
				}
				const char *pname = NULL;
				for (size_t k = 0; pats && presetnames[k]; k++)
					if (!strcmp(presetnames[k], name))
						pname = presetnames[k];
				for (size_t k = 0; pats && pats[k]; k++) {
					a->rules = xrealloc(a->rules, (a->nrules + 1) * sizeof *a->rules);
					struct rule *r = &a->rules[a->nrules++];
					memset(r, 0, sizeof *r);
					r->pos = ypos(y, it);
					r->tool = xstrdup("shell");
					r->command = xstrdup(pats[k]);
					r->decision = DEC_ALLOW;
					r->preset = pname;
					r->num = (int)i + 1;
				}
				free(name);
				continue;
			}
			a->rules = xrealloc(a->rules, (a->nrules + 1) * sizeof *a->rules);
			struct rule *r = &a->rules[a->nrules++];
			memset(r, 0, sizeof *r);
			r->pos = ypos(y, it);
			r->num = (int)i + 1;
			r->decision = DEC_ABORT; /* a rule with a mistake is never an allow */
			if (ymap(y, it, "a rule", rulekeys) < 0) {
				bad = -1;
				if (it->type != YAML_MAPPING_NODE)
					continue;
			}
			yaml_node_t *d = yget(y, it, "decision");
			int k = d ? yenum(y, d, "decision", decisions)
			          : yfail(y, it, "a rule needs a decision (allow, deny or abort)");
			if (k < 0)
				bad = -1;
			else
				r->decision = k;
			if (((d = yget(y, it, "tool")) && ystr(y, d, &r->tool) < 0) ||
			    ((d = yget(y, it, "command")) && ystr(y, d, &r->command) < 0) ||
			    ((d = yget(y, it, "path")) && ystr(y, d, &r->path) < 0) ||
			    ((d = yget(y, it, "worker")) && ystr(y, d, &r->worker) < 0))
				bad = -1;
			if ((d = yget(y, it, "args"))) {
				struct ypair ap;
				if (ymap(y, d, "args", NULL) < 0) {
					bad = -1;
				} else {
					for (size_t ai = 0; yeach(y, d, ai, &ap); ai++) {
						char *g = NULL;
						if (ystr(y, ap.val, &g) < 0) {
							bad = -1;
							continue;
						}
						strvadd(&r->argkeys, ap.key);
						strvadd(&r->argglobs, g);
						free(g);
					}
					if (!r->argkeys.n)
						bad = yfail(y, d, "args needs at least one argument name and its pattern");
				}
			}
		}
	}
	if ((v = yget(y, n, "examples"))) {
		if (ymap(y, v, "examples", examplekeys) < 0)
			return -1;
		if ((it = yget(y, v, "allow")) && ystrvpos(y, it, &a->allow_examples, &a->allow_pos) < 0)
			return -1;
		if ((it = yget(y, v, "deny")) && ystrvpos(y, it, &a->deny_examples, &a->deny_pos) < 0)
			return -1;
	}
	return bad;
}

/* tool_output_limit: a size (32k, 1M or bytes), 1 KiB to 16 MiB. */
static int outputlimit(struct ydoc *y, yaml_node_t *n, int64_t *out)
{
	if (ysize(y, n, out) < 0)
		return -1;
	if (*out < 1024 || *out > ((int64_t)16 << 20))
		return yfail(y, n, "tool_output_limit must be between 1k and 16M");
	return 0;
}

/* The keys of a worker mapping (inline or front matter) applied on w. */
/* A worker's key being read: the manifest (its MCP servers), the worker, and whether the keys
 * come from a worker file. */
struct wkctx {
	struct manifest *m;
	struct worker *w;
	int filemode;
};

/* worker: one parser per key; -1 an error, STOPKEYS an error after which no other key is read. */
enum { STOPKEYS = -2 };

static int wkdescription(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	return ystr(y, p->val, &c->w->description);
}

static int wkmodel(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	return ystr(y, p->val, &c->w->model);
}

static int wkinstructions(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	return ystr(y, p->val, &c->w->instructions);
}

static int wkfile(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	return c->filemode ? yfail(y, p->knode, "a worker file cannot point to another file") : 0;
}

static int wktools(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	struct worker *w = c->w;
	yaml_node_t *it;
	int bad = 0;
	if (p->val->type != YAML_SEQUENCE_NODE)
		return yfail(y, p->val, "tools must be a list");
	w->tools = 0;
	strvfree(&w->mcptools);
	for (size_t j = 0; (it = yitem(y, p->val, j)); j++) {
		if (it->type == YAML_SCALAR_NODE && strncmp((const char *)it->data.scalar.value, "mcp__", 5) == 0) {
			const char *s = (const char *)it->data.scalar.value;
			if (mcpconftool(c->m, y, it, s) < 0)
				bad = -1;
			else
				strvadd(&w->mcptools, s);
			continue;
		}
		int k = yenum(y, it, "tool", toolnames);
		if (k < 0)
			bad = -1;
		else
			w->tools |= 1u << k;
	}
	return bad;
}

static int wkdelegates(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	return ystrvpos(y, p->val, &c->w->delegates, &c->w->delegates_pos);
}

static int wkapproval(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	return parseapproval(y, p->val, &c->w->approval);
}

static int wkskills(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	if (c->m->confine) { /* a record's: folders of the host a stranger named, not read */
		yaml_node_t *it;
		for (size_t i = 0; (it = yitem(y, p->val, i)); i++)
			if (it->type == YAML_SCALAR_NODE) {
				char *s = xasprintf("worker %s: skills folder %.200s", c->w->name, (const char *)it->data.scalar.value);
				strvadd(&c->m->unread, s);
				free(s);
			}
		return 0;
	}
	return skillsload(y, p->val, c->w);
}

static int wkoutput(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	struct worker *w = c->w;
	struct buf ptr = {0};
	cJSON_Delete(w->output);
	w->output = yjson(y, p->val);
	if (!w->output)
		return STOPKEYS;
	if (!cJSON_IsObject(w->output))
		return yfail(y, p->val, "output must be a JSON Schema mapping"), STOPKEYS;
	if (schemacheck(w->output, &ptr, y->e) < 0) {
		char msg[sizeof y->e->msg];
		memcpy(msg, y->e->msg, sizeof msg);
		yfail(y, yat(y, p->val, ptr.data ? ptr.data : ""), "output schema: %s", msg);
		buffree(&ptr);
		return STOPKEYS;
	}
	buffree(&ptr);
	/* The result is a tool call's arguments: an object, as every provider requires. */
	const cJSON *ty = cJSON_GetObjectItemCaseSensitive(w->output, "type");
	if (!cJSON_IsString(ty) || strcmp(ty->valuestring, "object") != 0)
		return yfail(y, ty ? yat(y, p->val, "/type") : p->val,
		             "output schema: the root must be an object (type: object): the result is the "
		             "arguments of a final_result call, which every provider takes as an object"),
		       STOPKEYS;
	return 0;
}

static int wkmaxturns(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	int64_t v = 0;
	int rc = yint(y, p->val, 1, 100000, &v);
	if (rc == 0)
		c->w->max_turns = (int)v;
	return rc;
}

static int wkmaxtextturns(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	int64_t v = 0;
	int rc = yint(y, p->val, 1, 100000, &v);
	if (rc == 0)
		c->w->max_text_turns = (int)v;
	return rc;
}

static int wkmaxtokens(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	return yint(y, p->val, 1, INT64_MAX / 2, &c->w->max_tokens);
}

static int wkmaxcost(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	return ynum(y, p->val, 1e-9, 1e9, &c->w->max_cost);
}

static int wkoutputlimit(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	return outputlimit(y, p->val, &c->w->tool_output_limit);
}

/* context: { compact: elide | summarize }: what the job does when its conversation passes the
 * window's high-water mark. */
static int wkcontext(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	static const char *const known[] = {"compact", NULL};
	static const char *const compacts[] = {"elide", "summarize", NULL};
	int rc = ymap(y, p->val, "context", known);
	yaml_node_t *v = p->val->type == YAML_MAPPING_NODE ? yget(y, p->val, "compact") : NULL;
	if (!v)
		return rc;
	int k = yenum(y, v, "compact", compacts);
	if (k < 0 || rc < 0)
		return -1;
	c->w->compact = k;
	return 0;
}

static int wksandbox(struct ydoc *y, struct ypair *p, struct wkctx *c)
{
	char *base = c->m->confine ? NULL : dirname_dup(y->file); /* NULL: a record's (existing) */
	int rc = parsesandbox(y, p->val, base, &c->w->sandbox);
	free(base);
	return rc;
}

/* The keys of a worker, one row each. */
static const struct workerkey {
	const char *name;
	int (*parse)(struct ydoc *y, struct ypair *p, struct wkctx *c);
} workerkeys[] = {
	{"description", wkdescription},
	{"model", wkmodel},
	{"instructions", wkinstructions},
	{"file", wkfile},
	{"tools", wktools},
	{"delegates", wkdelegates},
	{"approval", wkapproval},
	{"output", wkoutput},
	{"max_turns", wkmaxturns},
	{"max_text_turns", wkmaxtextturns},
	{"max_tokens", wkmaxtokens},
	{"max_cost", wkmaxcost},
	{"tool_output_limit", wkoutputlimit},
	{"context", wkcontext},
	{"sandbox", wksandbox},
	{"skills", wkskills},
};
#define NWORKERKEYS (sizeof workerkeys / sizeof *workerkeys)

static int workerkeys_apply(struct manifest *m, struct ydoc *y, yaml_node_t *n, struct worker *w,
                            int filemode)
{
	const char *names[NWORKERKEYS + 1];
	keynames(workerkeys, NWORKERKEYS, sizeof *workerkeys, names);
	struct wkctx c = {m, w, filemode};
	struct ypair p;
	int bad = ymap(y, n, "a worker", names);
	if (!n || n->type != YAML_MAPPING_NODE)
		return -1;
	for (size_t i = 0; yeach(y, n, i, &p); i++)
		for (size_t k = 0; k < NWORKERKEYS; k++) {
			if (strcmp(p.key, workerkeys[k].name) != 0)
				continue;
			int rc = workerkeys[k].parse(y, &p, &c);
			if (rc == STOPKEYS)
				return -1;
			if (rc < 0)
				bad = -1, ynote(y);
		}
	return bad;
}

/* A worker file: markdown with YAML front matter between --- lines; the body is the instructions. */
static int loadworkerfile(struct manifest *m, struct ydoc *y, yaml_node_t *fnode, struct worker *w, struct err *e)
{
	char *rel = NULL;
	if (ystr(y, fnode, &rel) < 0)
		return -1;
	char *path = namedpath(m, rel);
	free(rel);
	struct buf text = {0};
	if (readnamed(m, path, &text, e) < 0) {
		yfail(y, fnode, "cannot read worker file %s", e->msg);
		buffree(&text);
		free(path);
		return -1;
	}
	addfile(m, path);
	free(path);
	const char *file = m->filenames[m->nfilenames - 1];
	w->file = xstrdup(file);
	const char *s = text.data, *body = s;
	int rc = 0;
	if (strncmp(s, "---\n", 4) == 0 || strncmp(s, "---\r\n", 5) == 0) {
		const char *fm = strchr(s, '\n') + 1, *end = fm;
		for (;;) {
			if (strncmp(end, "---", 3) == 0 && (end[3] == '\n' || end[3] == '\r' || end[3] == 0))
				break;
			const char *nl = strchr(end, '\n');
			if (!nl) {
				buffree(&text);
				return errc(e, ERR_INPUT, "%s:1:1: front matter opened with --- is never closed", file);
			}
			end = nl + 1;
		}
		body = strchr(end, '\n') ? strchr(end, '\n') + 1 : end + strlen(end);
		struct ydoc fy;
		rc = yload(&fy, file, fm, end - fm, 1, e);
		fy.errs = y->errs;
		if (rc == 0 && yroot(&fy))
			rc = agentfileis(&fy, yroot(&fy)) ? agentfileapply(m, &fy, yroot(&fy), w)
			                                  : workerkeys_apply(m, &fy, yroot(&fy), w, 1);
		yfree(&fy);
	}
	while (*body == '\n' || *body == '\r')
		body++;
	if (rc == 0 && !w->instructions && *body)
		w->instructions = xstrdup(body);
	buffree(&text);
	return rc;
}

static int parseworker(struct manifest *m, struct ydoc *y, const char *name, yaml_node_t *n, struct worker *w,
                       struct err *e)
{
	yaml_node_t *f;
	w->name = xstrdup(name);
	w->pos = ypos(y, n);
	w->max_turns = 50;
	w->max_text_turns = 3;
	w->approval.def = DEC_DENY;
	sandboxcopy(&w->sandbox, &m->sandbox);
	if (!n || n->type != YAML_MAPPING_NODE)
		return yfail(y, n, "a worker must be a mapping");
	int bad = 0;
	if ((f = yget(y, n, "file")) && loadworkerfile(m, y, f, w, e) < 0)
		bad = -1, ynote(y);
	if (workerkeys_apply(m, y, n, w, 0) < 0 || bad < 0)
		return -1;
	if (!w->instructions || !*w->instructions)
		return yfail(y, n, "worker '%s' has no instructions", name);
	return expand(m, y, yget(y, n, "instructions") ? yget(y, n, "instructions") : n, &w->instructions, 0);
}

/* A workspace's name in snapshots/<name>/: the path as written, '/' and any character other than
 * a letter, digit, '.', '_' or '-' made '_', leading '.' and '_' dropped. */
static char *wsnameof(const char *written)
{
	struct buf b = {0};
	const char *p = written;
	while (*p == '.' || *p == '/' || *p == '_')
		p++;
	for (; *p; p++) {
		int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
		         *p == '-' || *p == '_';
		if (*p == '/' && (p[1] == '/' || p[1] == 0))
			continue;
		if (*p == '.' && b.len && b.data[b.len - 1] == '.')
			ok = 0; /* never "..": a layer path holding one leaves the run, for verify */
		bufputc(&b, ok ? *p : '_');
	}
	return b.data ? b.data : xstrdup("");
}

/* A job's own workspace: an existing folder, relative to the manifest (or, in a replay, the
 * folder of its name under wsroot); the manifest's own is no workspace of its own. */
static int parseworkspace(struct manifest *m, struct ydoc *y, yaml_node_t *n, struct job *j)
{
	char *ws = NULL;
	size_t at = SIZE_MAX;
	if (ystr(y, n, &ws) < 0)
		return -1;
	if (strstr(ws, "${{")) {
		/* one pass: inputs, env and the matrix's values; none of them is read again */
		struct exprenv env = {.sets = &m->sets, .matrix = j->mxvalues, .tainted = m->mxtainted, .taintat = &at};
		struct err xe = {0};
		char *x = exprexpand(ws, &env, &xe);
		if (!x) {
			free(ws);
			return yfail(y, n, "%s", xe.msg);
		}
		free(ws);
		ws = x;
	}
	char *name = wsnameof(ws);
	int rc = 0;
	if (!*name || strcmp(name, WSDEFAULT) == 0 || strlen(name) > 128)
		rc = yfail(y, n, "workspace '%s' makes the name '%s' for its snapshots, which is %s", ws, name,
		           *name ? (strlen(name) > 128 ? "too long" : "the manifest's workspace's") : "empty");
	else if (m->wsroot && m->onews) {
		/* a replay of a record with one workspace: every job worked in it */
		rc = existing(y, n, "/", m->workspace, 1, &j->workspace);
	} else if (m->wsroot) {
		/* a replay: a workspace the record has no chain for had no job of the run; it stays empty */
		char *p = pathjoin(m->wsroot, name);
		struct err me = {0};
		if (mkdirs(p, 0755, &me) < 0)
			rc = yfail(y, n, "%s", me.msg);
		else
			rc = existing(y, n, "/", p, 1, &j->workspace);
		free(p);
	} else if (at != SIZE_MAX) {
		rc = beneath(y, n, m->dir, ws, at, 1, &j->workspace);
	} else {
		rc = existing(y, n, m->dir, ws, 1, &j->workspace);
	}
	free(ws);
	if (rc == 0 && m->workspace && strcmp(j->workspace, m->workspace) == 0) {
		free(j->workspace);
		free(j->wsname);
		j->workspace = NULL;
	}
	if (rc == 0 && j->workspace) {
		free(j->wsname);
		j->wsname = name;
		name = NULL;
	}
	free(name);
	return rc;
}

/* An allowlist only where the backend can hold it: never a silently open network. */
static int netcheck(struct ydoc *y, const struct sandboxconf *sc, const char *job)
{
	const struct pos *p = &sc->netpos;
	if (!sc->network_allow || sc->backend != BACKEND_NONE)
		return 0;
	errc(y->e, ERR_INPUT, "%s:%d:%d: job '%s': network.allow needs a sandbox: the none backend runs steps on the host, "
	     "where nothing can hold them to an allowlist; use backend: namespace or docker",
	     p->file ? p->file : y->file, p->line, p->col, job);
	ynote(y);
	return -1;
}

static const char *const cfgkeys[] = {"models", "out", "sandbox", NULL};
static const char *const adminkeys[] = {"approval", "budget", "max_cost", "max_tokens", "max_turns", "prices", "sandbox",
                                        NULL};
static const char *const adminsbxkeys[] = {"backend", "network", "protect", NULL};

/* The user's defaults: sandbox: over the built-in defaults, out:, and models: kept in m->cfg for
 * parse to take those the manifest does not define. */
static int parseconfig(struct manifest *m, struct ydoc *y)
{
	yaml_node_t *root = yroot(y), *v;
	if (!root)
		return 0; /* an empty file: no defaults */
	int bad = ymap(y, root, "the user config", cfgkeys);
	if (root->type != YAML_MAPPING_NODE)
		return -1;
	char *dir = dirname_dup(y->file);
	if ((v = yget(y, root, "sandbox")) && parsesandbox(y, v, dir, &m->sandbox) < 0) {
		bad = -1;
	} else if (v) {
		cJSON *j = yjson(y, v);
		m->usersandbox = j ? cJSON_PrintUnformatted(j) : NULL;
		cJSON_Delete(j);
	}
	if ((v = yget(y, root, "out"))) {
		char *out = NULL;
		const char *home = getenv("HOME");
		if (ystr(y, v, &out) < 0) {
			bad = -1;
		} else if (out[0] == '~' && (out[1] == '/' || !out[1])) { /* ~/runs, as a shell reads it */
			if (!home || *home != '/') {
				bad = yfail(y, v, "out: '%s' needs HOME set to an absolute path", out);
			} else {
				m->userout = out[1] ? pathjoin(home, out + 2) : xstrdup(home);
			}
		} else {
			m->userout = out[0] == '/' ? xstrdup(out) : pathjoin(dir, out);
		}
		free(out);
	}
	if ((v = yget(y, root, "models")) && ymap(y, v, "models", NULL) < 0)
		bad = -1;
	free(dir);
	return bad;
}

/* The admin policy's sandbox: floors, not defaults: backends allowed, the most network, protect. */
static int parseadminsandbox(struct ydoc *y, yaml_node_t *n, struct adminpolicy *a)
{
	static const char *const backends[] = {"namespace", "docker", "none", NULL};
	yaml_node_t *v, *it;
	int bad = ymap(y, n, "sandbox", adminsbxkeys);
	if (!n || n->type != YAML_MAPPING_NODE)
		return -1;
	if ((v = yget(y, n, "backend"))) { /* one backend, or a list of those allowed */
		if (v->type == YAML_SEQUENCE_NODE) {
			for (size_t i = 0; (it = yitem(y, v, i)); i++) {
				int k = yenum(y, it, "sandbox backend", backends);
				if (k < 0)
					bad = -1;
				else
					a->backends |= 1u << k;
			}
		} else {
			int k = yenum(y, v, "sandbox backend", backends);
			if (k < 0)
				bad = -1;
			else
				a->backends |= 1u << k;
		}
	}
	if ((v = yget(y, n, "network"))) {
		if (parsenetwork(y, v, &a->net) < 0)
			bad = -1;
		else
			a->network = a->net.network_host ? 2 : a->net.network_allow ? 1 : 0;
	}
	if ((v = yget(y, n, "protect")) && ystrv(y, v, &a->protect) < 0)
		bad = -1;
	return bad;
}

/* The admin policy: the manifest's own keys (approval, budget, max_cost, max_tokens, max_turns,
 * sandbox), read as caps and floors for every manifest. */
static int parseadmin(struct adminpolicy *a, struct ydoc *y)
{
	yaml_node_t *root = yroot(y), *v, *c;
	a->def = -1;
	a->network = -1;
	if (!root)
		return 0;
	int bad = ymap(y, root, "the admin policy", adminkeys);
	if (root->type != YAML_MAPPING_NODE)
		return -1;
	if ((v = yget(y, root, "approval"))) {
		a->approval.def = DEC_ALLOW;
		if (parseapproval(y, v, &a->approval) < 0)
			bad = -1;
		if (yget(y, v, "default"))
			a->def = a->approval.def;
		for (size_t i = 0; i < a->approval.nrules; i++)
			a->approval.rules[i].admin = (int)i + 1;
	}
	if ((v = yget(y, root, "budget"))) {
		if (ymap(y, v, "budget", budgetkeys) < 0)
			bad = -1;
		else if ((c = yget(y, v, "cost")) && ynum(y, c, 1e-9, 1e9, &a->budget_cost) < 0)
			bad = -1;
	}
	int64_t t;
	if ((v = yget(y, root, "max_cost")) && ynum(y, v, 1e-9, 1e9, &a->max_cost) < 0)
		bad = -1;
	if ((v = yget(y, root, "max_tokens")) && yint(y, v, 1, INT64_MAX / 2, &a->max_tokens) < 0)
		bad = -1;
	if ((v = yget(y, root, "max_turns"))) {
		if (yint(y, v, 1, 100000, &t) < 0)
			bad = -1;
		else
			a->max_turns = (int)t;
	}
	if ((v = yget(y, root, "sandbox")) && parseadminsandbox(y, v, a) < 0)
		bad = -1;
	struct ypair p;
	if ((v = yget(y, root, "prices")) && ymap(y, v, "prices", NULL) < 0)
		bad = -1;
	for (size_t i = 0; v && v->type == YAML_MAPPING_NODE && yeach(y, v, i, &p); i++) {
		a->prices = xrealloc(a->prices, (a->nprices + 1) * sizeof *a->prices);
		struct adminprice *ap = &a->prices[a->nprices++];
		memset(ap, 0, sizeof *ap);
		ap->model = xstrdup(p.key);
		if (parseprice(y, p.val, &ap->price) < 0)
			bad = -1;
	}
	return bad;
}

int manifestadminprice(const struct manifest *m, struct model *md, struct err *e)
{
	const struct adminpolicy *a = &m->admin;
	if (!a->path || (a->max_cost <= 0 && a->budget_cost <= 0) || md->provider == PROV_SCRIPTED)
		return 0;
	const struct price *floor = NULL;
	for (size_t i = 0; i < a->nprices && !floor; i++)
		if (md->model && strcmp(a->prices[i].model, md->model) == 0)
			floor = &a->prices[i].price;
	for (size_t i = 0; i < a->nprices && !floor; i++)
		if (strcmp(a->prices[i].model, "*") == 0)
			floor = &a->prices[i].price;
	/* Without the admin's price, the manifest's stands, but not a price of nothing: that would make
	 * the cap hold nothing. */
	if (!floor && md->price.set && (md->price.input > 0 || md->price.output > 0))
		return 0;
	if (!floor)
		return errc(e, ERR_INPUT, "model '%s' (%s): the admin policy %s caps cost, and this model has %s: the cap "
		            "would hold nothing (give it its price, or add %s, or \"*\", to the policy's prices)", md->name,
		            md->model ? md->model : "?", a->path, md->price.set ? "a price of 0" : "no price",
		            md->model ? md->model : "it");
	if (!md->price.set || md->price.input < floor->input)
		md->price.input = floor->input;
	if (!md->price.set || md->price.cached_input < floor->cached_input)
		md->price.cached_input = floor->cached_input;
	if (!md->price.set || md->price.output < floor->output)
		md->price.output = floor->output;
	md->price.set = 1;
	return 0;
}

/* A cap on a budget (0 = none on either side): the smaller wins. */
static void capd(double *v, double cap)
{
	if (cap > 0 && (*v <= 0 || *v > cap))
		*v = cap;
}

static void capi(int64_t *v, int64_t cap)
{
	if (cap > 0 && (*v <= 0 || *v > cap))
		*v = cap;
}

static void capt(int *v, int cap)
{
	if (cap > 0 && (*v <= 0 || *v > cap))
		*v = cap;
}

/* Does the admin policy's allow list admit all that entry r admits (some entry holds it)? */
static int adminallows(const struct adminpolicy *a, const struct netrule *r)
{
	for (size_t i = 0; i < a->net.nallow; i++)
		if (netrulewithin(r, &a->net.allow[i]))
			return 1;
	return 0;
}

/* Where a sandbox's backend and its network were written: the manifest's node, or the user's. */
struct floorat {
	struct ydoc *by, *ny;
	yaml_node_t *bn, *nn;
};

/* Hold one sandbox to the admin policy's floors: a backend or network the policy does not allow
 * refused where it was written. */
static int adminfloors(const struct adminpolicy *a, const struct floorat *at, const char *what,
                       const struct sandboxconf *sc)
{
	static const char *const names[] = {"namespace", "docker", "none"};
	struct ydoc *y = at->ny;
	yaml_node_t *n = at->nn;
	if (!a->path)
		return 0;
	if (a->backends && !(a->backends & (1u << sc->backend)))
		return yfail(at->by, at->bn, "%s: sandbox backend '%s' is not allowed by the admin policy %s", what,
		             names[sc->backend], a->path);
	int net = sc->network_host ? 2 : sc->network_allow ? 1 : 0;
	if (a->network >= 0 && net > a->network)
		return yfail(y, n, "%s: network %s is more than the admin policy %s allows (%s)", what,
		             net == 2 ? "host" : "with an allow list", a->path, a->network == 0 ? "none" : "an allow list");
	if (a->network == 1 && net == 1)
		for (size_t i = 0; i < sc->nallow; i++)
			if (!adminallows(a, &sc->allow[i]))
				return yfail(y, n, "%s: network.allow entry '%s' is not in the admin policy %s's allow list", what,
				             sc->allow[i].text, a->path);
	return 0;
}

/* The same with the policy's protect paths added to the sandbox. */
static int adminsandbox(const struct adminpolicy *a, struct ydoc *y, yaml_node_t *n, const char *what,
                        struct sandboxconf *sc)
{
	for (size_t i = 0; a->path && i < a->protect.n; i++)
		strvadd(&sc->protect, a->protect.v[i]);
	struct floorat at = {y, y, n, n};
	return adminfloors(a, &at, what, sc);
}

/* A worker under the admin policy: its rules joined, its default no weaker, its budgets capped. */
static void adminworker(const struct adminpolicy *a, struct worker *w)
{
	if (!a->path)
		return;
	struct approval *ap = &w->approval;
	if (a->approval.nrules) {
		ap->rules = xrealloc(ap->rules, (ap->nrules + a->approval.nrules) * sizeof *ap->rules);
		for (size_t i = 0; i < a->approval.nrules; i++) {
			const struct rule *r = &a->approval.rules[i];
			struct rule *d = &ap->rules[ap->nrules++];
			memset(d, 0, sizeof *d);
			d->tool = r->tool ? xstrdup(r->tool) : NULL;
			d->command = r->command ? xstrdup(r->command) : NULL;
			d->path = r->path ? xstrdup(r->path) : NULL;
			d->worker = r->worker ? xstrdup(r->worker) : NULL;
			for (size_t k = 0; k < r->argkeys.n; k++) {
				strvadd(&d->argkeys, r->argkeys.v[k]);
				strvadd(&d->argglobs, r->argglobs.v[k]);
			}
			d->decision = r->decision;
			d->pos = r->pos;
			d->preset = r->preset;
			d->admin = r->admin;
		}
	}
	if (a->def >= 0 && (int)ap->def < a->def)
		ap->def = a->def;
	capd(&w->max_cost, a->max_cost);
	capi(&w->max_tokens, a->max_tokens);
	capt(&w->max_turns, a->max_turns);
}

/* A job under the admin policy: budgets capped, sandbox held to its floors. */
static int adminjob(const struct adminpolicy *a, struct ydoc *y, yaml_node_t *n, struct job *j)
{
	if (!a->path)
		return 0;
	capd(&j->max_cost, a->max_cost);
	capi(&j->max_tokens, a->max_tokens);
	capt(&j->max_turns, a->max_turns);
	char *what = xasprintf("job '%s'", j->id);
	int rc = adminsandbox(a, y, n, what, &j->sandbox);
	free(what);
	return rc;
}

static void adminfree(struct adminpolicy *a)
{
	free(a->path);
	rulesfree(&a->approval);
	sandboxfree(&a->net);
	strvfree(&a->protect);
	for (size_t i = 0; i < a->nprices; i++)
		free(a->prices[i].model);
	free(a->prices);
}

static int parsejob(struct manifest *m, struct ydoc *y, const char *id, yaml_node_t *n, struct job *j)
{
	struct ypair p;
	int64_t v;
	j->id = xstrdup(id);
	j->pos = ypos(y, n);
	int bad = ymap(y, n, "a job", jobkeys);
	if (!n || n->type != YAML_MAPPING_NODE)
		return -1;
	yaml_node_t *wn = yget(y, n, "worker");
	if (!wn)
		return yfail(y, n, "job '%s' needs a worker", id);
	if (ystr(y, wn, &j->worker) < 0)
		return -1;
	struct worker *w = manifestworker(m, j->worker);
	if (!w) {
		const char **names = xcalloc(m->nworkers + 1, sizeof *names);
		for (size_t i = 0; i < m->nworkers; i++)
			names[i] = m->workers[i].name;
		const char *near = didyoumean(j->worker, names);
		free(names);
		return near ? yfail(y, wn, "unknown worker '%s'; did you mean '%s'?", j->worker, near)
		            : yfail(y, wn, "unknown worker '%s'", j->worker);
	}
	sandboxcopy(&j->sandbox, &w->sandbox);
	j->max_turns = w->max_turns;
	j->max_tokens = w->max_tokens;
	j->max_cost = w->max_cost;
	j->tool_output_limit = w->tool_output_limit;
	for (size_t i = 0; yeach(y, n, i, &p); i++) {
		int rc = 0;
		if (strcmp(p.key, "input") == 0)
			rc = ystr(y, p.val, &j->input);
		else if (strcmp(p.key, "needs") == 0)
			rc = ystrvpos(y, p.val, &j->needs, &j->needs_pos);
		else if (strcmp(p.key, "files") == 0) {
			rc = ystrv(y, p.val, &j->files);
			for (size_t k = 0; rc == 0 && k < j->files.n; k++) {
				char *norm = wspath(j->files.v[k]);
				if (!norm || strcmp(norm, ".") == 0)
					rc = yfail(y, p.val, "file '%s' is not a path inside the workspace", j->files.v[k]);
				free(norm);
			}
		} else if (strcmp(p.key, "timeout") == 0)
			rc = yduration(y, p.val, &j->timeout_ms);
		else if (strcmp(p.key, "retries") == 0) {
			rc = yint(y, p.val, 0, 100, &v);
			j->retries = v;
		} else if (strcmp(p.key, "continue_on_error") == 0)
			rc = ybool(y, p.val, &j->continue_on_error);
		else if (strcmp(p.key, "max_turns") == 0) {
			rc = yint(y, p.val, 1, 100000, &v);
			j->max_turns = v;
		} else if (strcmp(p.key, "max_tokens") == 0)
			rc = yint(y, p.val, 1, INT64_MAX / 2, &j->max_tokens);
		else if (strcmp(p.key, "max_cost") == 0)
			rc = ynum(y, p.val, 1e-9, 1e9, &j->max_cost);
		else if (strcmp(p.key, "tool_output_limit") == 0)
			rc = outputlimit(y, p.val, &j->tool_output_limit);
		else if (strcmp(p.key, "sandbox") == 0)
			rc = parsesandbox(y, p.val, m->confine ? NULL : m->dir, &j->sandbox);
		else if (strcmp(p.key, "model") == 0)
			rc = ystr(y, p.val, &j->model);
		else if (strcmp(p.key, "workspace") == 0)
			rc = parseworkspace(m, y, p.val, j);
		if (rc < 0)
			bad = -1, ynote(y);
	}
	/* before any return: the input's expressions are checked later, a mistake here or not */
	j->inputpos = ypos(y, yget(y, n, "input") ? yget(y, n, "input") : n);
	if (bad < 0)
		return -1;
	if (!j->input)
		j->input = xstrdup("");
	if (netcheck(y, &j->sandbox, id) < 0 || adminjob(&m->admin, y, n, j) < 0)
		return -1;
	/* Checked now, expanded once when the job starts (run.c), in one pass with the outputs of the
	 * jobs it needs: a value is never read again as an expression. jobs.* are checked in groupneeds. */
	struct exprenv env = {.sets = &m->sets, .later = 1, .matrix = j->mxvalues};
	struct err ee = {0};
	if (strstr(j->input, "${{") && exprcheck(j->input, &env, &ee) < 0)
		return yfail(y, yget(y, n, "input"), "%s", ee.msg);
	return 0;
}

static struct job *newjob(struct manifest *m)
{
	m->jobs = xrealloc(m->jobs, (m->njobs + 1) * sizeof *m->jobs);
	memset(&m->jobs[m->njobs], 0, sizeof m->jobs[m->njobs]);
	return &m->jobs[m->njobs++];
}

/* Combination c of matrix mx of job id (node n) into j. */
static int parsemember(struct manifest *m, struct ydoc *y, const char *id, yaml_node_t *n, const struct matrix *mx,
                       size_t c, struct job *j)
{
	struct mxbound b = {0}; /* unbound (and so nothing to undo) when the id is refused first */
	char *mid = matrixid(id, mx, c);
	int rc;
	if (strlen(mid) > 128)
		rc = yfail(y, n, "matrix job id '%.80s...' is longer than 128 characters", mid);
	else if ((rc = matrixbind(y, n, mx, c, &b)) == 0) {
		j->mxvalues = matrixvalues(mx, c);
		m->mxtainted = &mx->tainted;
		rc = parsejob(m, y, mid, n, j);
		m->mxtainted = NULL;
		j->group = xstrdup(id);
		j->mxkey = matrixkey(mx, c);
		j->fail_fast = mx->fail_fast;
		j->max_parallel = mx->max_parallel;
	}
	matrixunbind(&b);
	free(mid);
	return rc;
}

/* A matrix job whose values come from a needed job's output: one job that stands for its members
 * until manifestexpand; its worker, needs and continue_on_error are read now. */
static int parsepending(struct manifest *m, struct ydoc *y, const char *id, yaml_node_t *n, const struct matrix *mx)
{
	struct job *j = newjob(m);
	j->id = xstrdup(id);
	j->group = xstrdup(id);
	j->mxpending = 1;
	j->mxkey = xstrdup("");
	j->mxvalues = cJSON_CreateObject();
	j->fail_fast = mx->fail_fast;
	j->max_parallel = mx->max_parallel;
	j->input = xstrdup("");
	j->pos = j->inputpos = ypos(y, n);
	int bad = ymap(y, n, "a job", jobkeys);
	yaml_node_t *wn = yget(y, n, "worker"), *v;
	if (!wn)
		return yfail(y, n, "job '%s' needs a worker", id);
	if (ystr(y, wn, &j->worker) < 0)
		return -1;
	struct worker *w = manifestworker(m, j->worker);
	if (!w)
		return yfail(y, wn, "unknown worker '%s'", j->worker);
	sandboxcopy(&j->sandbox, &w->sandbox);
	j->max_turns = w->max_turns;
	j->max_tokens = w->max_tokens;
	j->max_cost = w->max_cost;
	j->tool_output_limit = w->tool_output_limit;
	if ((v = yget(y, n, "needs")) && ystrvpos(y, v, &j->needs, &j->needs_pos) < 0)
		bad = -1;
	if ((v = yget(y, n, "continue_on_error")) && ybool(y, v, &j->continue_on_error) < 0)
		bad = -1;
	return bad;
}

/* One job as written: a job, or with a matrix one job per combination of its values. */
static int parsejobs(struct manifest *m, struct ydoc *y, const char *id, yaml_node_t *n)
{
	struct matrix mx;
	struct mxbound b;
	int has = matrixparse(y, n, &m->sets, NULL, &mx), rc = has < 0 ? -1 : 0;
	if (has == 0) {
		rc = matrixbind(y, n, NULL, 0, &b);
		if (rc == 0)
			rc = parsejob(m, y, id, n, newjob(m));
		matrixunbind(&b);
	} else if (has == 2) {
		rc = parsepending(m, y, id, n, &mx);
	}
	for (size_t c = 0; has == 1 && rc == 0 && c < mx.ncombos; c++)
		rc = parsemember(m, y, id, n, &mx, c, newjob(m));
	matrixfree(&mx);
	return rc;
}

/* The output schema of job id's worker (exprenv.schema), or NULL (any object). */
static const cJSON *outschema(void *ctx, const char *id)
{
	struct manifest *m = ctx;
	struct job *j = manifestjob(m, id);
	struct worker *w = j && j->worker ? manifestworker(m, j->worker) : NULL;
	return w ? w->output : NULL;
}

/* A job's needs that name a matrix job made into its members (the matrix job kept in needgroups),
 * and its input's ${{ jobs.* }} checked against them. */
static int jobneeds(struct manifest *m, struct job *j, const struct strv *groups, struct err *e)
{
	struct strv needs = {0};
	for (size_t k = 0; k < j->needs.n; k++) {
		size_t had = needs.n;
		if (!manifestjob(m, j->needs.v[k]) && manifestselect(m, j->needs.v[k], &needs) > 0)
			strvadd(&j->needgroups, j->needs.v[k]);
		if (needs.n == had)
			strvadd(&needs, j->needs.v[k]);
	}
	strvfree(&j->needs);
	j->needs = needs;
	struct strv all = {0};
	for (size_t k = 0; k < needs.n; k++)
		strvadd(&all, needs.v[k]);
	for (size_t k = 0; k < j->needgroups.n; k++)
		strvadd(&all, j->needgroups.v[k]);
	struct exprenv env = {.sets = &m->sets, .needs = &all, .groups = groups, .matrix = j->mxvalues, .schema = outschema,
	                      .ctx = m};
	struct err xe = {0};
	int rc = 0;
	if (j->input && exprcheck(j->input, &env, &xe) < 0)
		rc = errc(e, ERR_INPUT, "%s:%d:%d: %s%s%.900s", j->inputpos.file, j->inputpos.line, j->inputpos.col,
		          j->group ? j->id : "", j->group ? ": " : "", xe.msg);
	strvfree(&all);
	return rc;
}

/* Needs that name a matrix job stand for all its members; ids must be unique once expanded;
 * ${{ jobs.X.outputs }} is for matrix jobs, ${{ jobs.X.output }} for the others. */
static int groupneeds(struct manifest *m, struct err *e)
{
	struct strv groups = {0};
	int rc = 0;
	for (size_t i = 0; i < m->njobs; i++) {
		for (size_t k = 0; k < i && rc == 0; k++)
			if (strcmp(m->jobs[i].id, m->jobs[k].id) == 0)
				rc = errc(e, ERR_INPUT, "%s:%d:%d: job id '%s' is made twice (a matrix job's ids are ID-VALUE...)",
				          m->jobs[i].pos.file, m->jobs[i].pos.line, m->jobs[i].pos.col, m->jobs[i].id);
		if (m->jobs[i].group && (i == 0 || !m->jobs[i - 1].group || strcmp(m->jobs[i - 1].group, m->jobs[i].group)))
			strvadd(&groups, m->jobs[i].group);
	}
	for (size_t i = 0; i < m->njobs && rc == 0; i++)
		rc = jobneeds(m, &m->jobs[i], &groups, e);
	strvfree(&groups);
	return rc;
}

size_t manifestselect(const struct manifest *m, const char *id, struct strv *ids)
{
	const struct job *j = manifestjob(m, id);
	if (j) {
		strvadd(ids, j->id);
		return 1;
	}
	size_t n = 0;
	for (size_t i = 0; i < m->njobs; i++)
		if (m->jobs[i].group && strcmp(m->jobs[i].group, id) == 0) {
			strvadd(ids, m->jobs[i].id);
			n++;
		}
	return n;
}

const char *jobmodel(const struct manifest *m, const struct job *j)
{
	return j->model ? j->model : manifestworker(m, j->worker)->model;
}

/* A graph for the cycle search: next gives node i's k-th neighbour (-1 past the last). */
struct graph {
	const struct manifest *m;
	long (*next)(const struct manifest *m, size_t i, size_t k);
	const char *(*name)(const struct manifest *m, size_t i);
};

static long needof(const struct manifest *m, size_t i, size_t k)
{
	return k < m->jobs[i].needs.n ? manifestjob(m, m->jobs[i].needs.v[k]) - m->jobs : -1;
}

static const char *jobname(const struct manifest *m, size_t i)
{
	return m->jobs[i].id;
}

static long delegateof(const struct manifest *m, size_t i, size_t k)
{
	return k < m->workers[i].delegates.n ? manifestworker(m, m->workers[i].delegates.v[k]) - m->workers : -1;
}

static const char *workername(const struct manifest *m, size_t i)
{
	return m->workers[i].name;
}

/* Depth-first search from i; on a cycle, path gets "a -> b -> a", *from and *edge the node and the
 * number of its edge that closes it, and 1 is returned. */
static int cycle(const struct graph *g, size_t i, int *state, size_t *stack, size_t depth, struct buf *path,
                 size_t *from, size_t *edge)
{
	long d;
	state[i] = 1;
	stack[depth] = i;
	for (size_t k = 0; (d = g->next(g->m, i, k)) >= 0; k++) {
		if (state[d] == 1) {
			size_t first = 0;
			while (stack[first] != (size_t)d)
				first++;
			for (size_t s = first; s <= depth; s++)
				bufprintf(path, "%s -> ", g->name(g->m, stack[s]));
			bufputs(path, g->name(g->m, d));
			*from = i;
			*edge = k;
			return 1;
		}
		if (state[d] == 0 && cycle(g, d, state, stack, depth + 1, path, from, edge))
			return 1;
	}
	state[i] = 2;
	return 0;
}

/* Fail at a position, as yfail does at a node. */
static int errat(struct ydoc *y, struct pos p, const char *fmt, const char *a, const char *b)
{
	char msg[768];
	snprintf(msg, sizeof msg, fmt, a, b ? b : "");
	errc(y->e, ERR_INPUT, "%s:%d:%d: %s", p.file, p.line, p.col, msg);
	ynote(y);
	return -1;
}

/* The position of item k of a list whose items' positions were kept, else of its owner. */
static struct pos itempos(const struct pos *items, size_t k, struct pos owner)
{
	return items ? items[k] : owner;
}

/* Whether a cost budget can hold model md: it has a price, or bills nothing (scripted), or there is
 * no such model (said elsewhere). */
static int pricedornone(const struct model *md)
{
	return !md || md->price.set || md->provider == PROV_SCRIPTED;
}

/* Cross-references: models, delegates, needs, cycles; every mistake, at the item that makes it. */
static int crosscheck(struct manifest *m, struct ydoc *y)
{
	int rc = 0;
	for (size_t i = 0; i < m->nworkers; i++) {
		struct worker *w = &m->workers[i];
		if (!w->model)
			w->model = xstrdup("default");
		if (!manifestmodel(m, w->model))
			rc = errat(y, w->pos, "worker '%s' uses model '%s', which is not in models", w->name, w->model);
		for (size_t k = 0; k < w->delegates.n; k++) {
			struct pos at = itempos(w->delegates_pos, k, w->pos);
			if (!manifestworker(m, w->delegates.v[k]))
				rc = errat(y, at, "worker '%s' delegates to unknown worker '%s'", w->name, w->delegates.v[k]);
			else if (toolbyname(w->delegates.v[k]) || strcmp(w->delegates.v[k], "final_result") == 0)
				rc = errat(y, at, "worker '%s': delegate '%s' clashes with a built-in tool name", w->name,
				           w->delegates.v[k]);
		}
		if ((w->max_cost > 0 || m->budget_cost > 0) && !pricedornone(manifestmodel(m, w->model)))
			rc = errat(y, w->pos, "worker '%s' has a cost budget (max_cost or budget.cost) but its model '%s' has no "
			           "price: set models.X.price {input, output} in USD per million tokens", w->name, w->model);
	}
	for (size_t i = 0; i < m->njobs; i++)
		if ((m->jobs[i].max_cost > 0 || m->budget_cost > 0) && !pricedornone(manifestmodel(m, jobmodel(m, &m->jobs[i]))))
			rc = errat(y, m->jobs[i].pos, "job '%s' has a cost budget but its model '%s' has no price", m->jobs[i].id,
			           jobmodel(m, &m->jobs[i]));
	for (size_t i = 0; i < m->njobs; i++) {
		struct job *j = &m->jobs[i];
		if (j->sandbox.backend == BACKEND_DOCKER && j->sandbox.image && strcmp(j->sandbox.image, "host") == 0)
			rc = errat(y, j->pos, "job '%s' uses the docker backend with image 'host': name a docker image in "
			                      "sandbox.image%s", j->id, NULL);
		for (size_t k = 0; j->workspace && k < i; k++)
			if (m->jobs[k].workspace && strcmp(m->jobs[k].wsname, j->wsname) == 0 &&
			    strcmp(m->jobs[k].workspace, j->workspace) != 0) {
				rc = errat(y, j->pos, "job '%s': its workspace and job '%s''s are two folders with one name "
				                      "for their snapshots; name them apart", j->id, m->jobs[k].id);
				break;
			}
		if (j->model && !manifestmodel(m, j->model))
			rc = errat(y, j->pos, "job '%s' uses model '%s', which is not in models", j->id, j->model);
		for (size_t k = 0; k < j->needs.n; k++)
			if (!manifestjob(m, j->needs.v[k]))
				rc = errat(y, itempos(j->needs_pos, k, j->pos), "job '%s' needs unknown job '%s'", j->id,
				           j->needs.v[k]);
	}
	if (rc < 0)
		return rc; /* cycles are looked for in a graph whose every edge leads somewhere */
	struct buf path = {0};
	size_t n = m->njobs > m->nworkers ? m->njobs : m->nworkers, at = 0, edge = 0;
	int *state = xcalloc(n + 1, sizeof *state);
	size_t *stack = xcalloc(n + 1, sizeof *stack);
	struct graph needs = {m, needof, jobname}, delegs = {m, delegateof, workername};
	for (size_t i = 0; i < m->njobs && rc == 0; i++)
		if (state[i] == 0 && cycle(&needs, i, state, stack, 0, &path, &at, &edge)) {
			const struct job *j = &m->jobs[at]; /* its need number edge closes the cycle */
			rc = errat(y, itempos(j->needs_pos, edge, j->pos), "cycle in needs: %s%s", path.data, NULL);
		}
	memset(state, 0, (n + 1) * sizeof *state);
	for (size_t i = 0; i < m->nworkers && rc == 0; i++)
		if (state[i] == 0 && cycle(&delegs, i, state, stack, 0, &path, &at, &edge)) {
			const struct worker *w = &m->workers[at];
			rc = errat(y, itempos(w->delegates_pos, edge, w->pos), "cycle in delegates: %s%s", path.data, NULL);
		}
	free(state);
	free(stack);
	buffree(&path);
	return rc;
}

static void defaults(struct manifest *m)
{
	m->sandbox.backend = BACKEND_NAMESPACE;
	m->sandbox.image = xstrdup("host");
	m->sandbox.timeout_ms = DEF_TIMEOUT_MS;
	m->sandbox.pids = DEF_PIDS;
	m->sandbox.memory = DEF_MEMORY;
	m->snapshot.level = 3;
	m->snapshot.threads = 0;
	m->snapshot.max_size = DEF_MAXSIZE;
}

/* The manifest's own sandbox (node n) held to the admin policy. A backend or network the manifest
 * does not write is the user's defaults' when they write it: refused at the user's line, and the
 * built-in floor stands in, so the workers and jobs that inherit it are not blamed for it. */
static int toplevelfloors(struct manifest *m, struct ydoc *y, yaml_node_t *n)
{
	struct ydoc *cy = m->cfg;
	yaml_node_t *cs = cy && yroot(cy) ? yget(cy, yroot(cy), "sandbox") : NULL;
	int ub = cs && yget(cy, cs, "backend") && !yget(y, n, "backend");
	int un = cs && yget(cy, cs, "network") && !yget(y, n, "network");
	struct floorat at = {ub ? cy : y, un ? cy : y, ub ? cs : n, un ? cs : n};
	for (size_t i = 0; m->admin.path && i < m->admin.protect.n; i++)
		strvadd(&m->sandbox.protect, m->admin.protect.v[i]);
	if (adminfloors(&m->admin, &at, "sandbox", &m->sandbox) == 0)
		return 0;
	if (ub || un) {
		m->sandbox.backend = BACKEND_NAMESPACE;
		m->sandbox.network_host = m->sandbox.network_allow = 0;
		allowfree(&m->sandbox);
	}
	return -1;
}

/* A matrix whose values come from a job's output (node jobs holds the jobs): each key's
 * jobs.ID.output.PATH held to that job's output schema, as an input's is. */
static int matrixschemas(struct manifest *m, struct ydoc *y, yaml_node_t *jobs)
{
	int bad = 0;
	for (size_t i = 0; i < m->njobs; i++) {
		struct job *j = &m->jobs[i];
		yaml_node_t *mx = j->mxpending ? yget(y, yget(y, jobs, j->id), "matrix") : NULL;
		struct ypair p;
		for (size_t k = 0; mx && mx->type == YAML_MAPPING_NODE && yeach(y, mx, k, &p); k++) {
			struct exprenv env = {.sets = &m->sets, .needs = &j->needs, .schema = outschema, .ctx = m};
			struct err xe = {0};
			if (p.val->type == YAML_SCALAR_NODE && exprcheck((const char *)p.val->data.scalar.value, &env, &xe) < 0)
				bad = yfail(y, p.val, "matrix key '%s': %s", p.key, xe.msg);
		}
	}
	return bad;
}

/* manifestadminprice for the model at node n, its refusal at n. */
static int adminprice(const struct manifest *m, struct ydoc *y, yaml_node_t *n, struct model *md)
{
	struct err pe = {0};
	return manifestadminprice(m, md, &pe) < 0 ? yfail(y, n, "%s", pe.msg) : 0;
}

static int parse(struct manifest *m, struct ydoc *y, const char *wsoverride, struct err *e)
{
	yaml_node_t *root = yroot(y), *v;
	struct ypair p;
	int64_t ver;
	if (!root)
		return errc(e, ERR_INPUT, "%s:1:1: the manifest is empty", y->file);
	int bad = ymap(y, root, "the manifest", topkeys);
	if (root->type != YAML_MAPPING_NODE)
		return -1;
	if (!(v = yget(y, root, "version")))
		bad = yfail(y, root, "missing 'version: 1'");
	else if (yint(y, v, INT64_MIN, INT64_MAX, &ver) < 0)
		bad = -1;
	else if (ver != 1)
		bad = yfail(y, v, "version %lld is not known: this nightshift reads manifests of version 1", (long long)ver);
	if ((v = yget(y, root, "name")) && ystr(y, v, &m->name) < 0)
		bad = -1;
	char *ws = NULL;
	if (wsoverride) {
		if (existing(y, root, ".", wsoverride, 1, &m->workspace) < 0)
			return -1;
	} else if ((v = yget(y, root, "workspace"))) {
		if (ystr(y, v, &ws) < 0 || existing(y, v, m->dir, ws, 1, &m->workspace) < 0) {
			free(ws);
			return -1;
		}
		free(ws);
	} else if (existing(y, root, m->dir, ".", 1, &m->workspace) < 0) {
		return -1;
	}
	if ((v = yget(y, root, "sandbox")) && parsesandbox(y, v, m->confine ? NULL : m->dir, &m->sandbox) < 0)
		bad = -1;
	if (toplevelfloors(m, y, v ? v : root) < 0)
		bad = -1;
	if ((v = yget(y, root, "snapshot")) && parsesnapshot(y, v, &m->snapshot) < 0)
		bad = -1;
	if ((v = yget(y, root, "secrets")) && ystrv(y, v, &m->secrets) < 0)
		bad = -1;
	if ((v = yget(y, root, "budget"))) {
		yaml_node_t *c;
		if (ymap(y, v, "budget", budgetkeys) < 0)
			bad = -1;
		else if ((c = yget(y, v, "cost")) && ynum(y, c, 1e-9, 1e9, &m->budget_cost) < 0)
			bad = -1;
	}
	capd(&m->budget_cost, m->admin.budget_cost);
	yaml_node_t *cfgmodels = m->cfg && yroot(m->cfg) ? yget(m->cfg, yroot(m->cfg), "models") : NULL;
	if (!(v = yget(y, root, "models")) && !cfgmodels)
		bad = yfail(y, root, "missing 'models' (in the manifest or the user's defaults, %s)",
		            "$XDG_CONFIG_HOME/nightshift/config.yaml"), ynote(y); /* the other mistakes are said too */
	else if (v && ymap(y, v, "models", NULL) < 0)
		bad = -1;
	for (size_t i = 0; v && v->type == YAML_MAPPING_NODE && yeach(y, v, i, &p); i++) {
		m->models = xrealloc(m->models, (i + 1) * sizeof *m->models);
		memset(&m->models[i], 0, sizeof m->models[i]);
		m->nmodels = i + 1;
		if (checkname(y, p.knode, "model", p.key) < 0 || parsemodel(m, y, p.key, p.val, &m->models[i], e) < 0)
			bad = -1, ynote(y);
		else if (adminprice(m, y, p.val, &m->models[i]) < 0)
			bad = -1;
	}
	/* The user's models that the manifest does not define (the manifest's own win). */
	for (size_t i = 0; cfgmodels && cfgmodels->type == YAML_MAPPING_NODE && yeach(m->cfg, cfgmodels, i, &p); i++) {
		if (manifestmodel(m, p.key))
			continue;
		m->models = xrealloc(m->models, (m->nmodels + 1) * sizeof *m->models);
		struct model *md = &m->models[m->nmodels++];
		memset(md, 0, sizeof *md);
		if (checkname(m->cfg, p.knode, "model", p.key) < 0 || parsemodel(m, m->cfg, p.key, p.val, md, e) < 0)
			bad = -1, ynote(m->cfg);
		else if (adminprice(m, m->cfg, p.val, md) < 0)
			bad = -1;
	}
	if ((v = yget(y, root, "mcp")) && mcpconfparse(m, y, v) < 0)
		bad = -1, ynote(y);
	if (!(v = yget(y, root, "workers")))
		return yfail(y, root, "missing 'workers'");
	if (ymap(y, v, "workers", NULL) < 0)
		return -1;
	/* Workers first by name, so that jobs and delegates can refer to any of them. */
	size_t nw = 0;
	while (yeach(y, v, nw, &p))
		nw++;
	m->workers = xcalloc(nw, sizeof *m->workers);
	for (size_t i = 0; yeach(y, v, i, &p); i++) {
		m->nworkers = i + 1;
		if (checkname(y, p.knode, "worker", p.key) < 0 || parseworker(m, y, p.key, p.val, &m->workers[i], e) < 0) {
			bad = -1, ynote(y);
			if (!m->workers[i].name)
				m->workers[i].name = xstrdup(p.key);
		}
		adminworker(&m->admin, &m->workers[i]);
		char *what = xasprintf("worker '%s'", p.key);
		if (adminsandbox(&m->admin, y, p.val, what, &m->workers[i].sandbox) < 0)
			bad = -1, ynote(y);
		free(what);
	}
	if (!(v = yget(y, root, "jobs")))
		return yfail(y, root, "missing 'jobs'");
	if (ymap(y, v, "jobs", NULL) < 0)
		return -1;
	for (size_t i = 0; yeach(y, v, i, &p); i++)
		if (checkname(y, p.knode, "job", p.key) < 0 || parsejobs(m, y, p.key, p.val) < 0)
			bad = -1, ynote(y);
	if (m->njobs == 0)
		return bad < 0 ? -1 : yfail(y, v, "no jobs");
	if (groupneeds(m, e) < 0) {
		ynote(y);
		return -1;
	}
	if (matrixschemas(m, y, v) < 0)
		bad = -1;
	return crosscheck(m, y) < 0 ? -1 : bad;
}

/* Where a "file:line:col: message" points: the file's number among those read, line, column. */
struct errkey {
	size_t file;
	long line, col;
	const char *msg;
};

static struct errkey errkey(const struct manifest *m, const char *msg)
{
	struct errkey k = {m->nfilenames, 0, 0, msg};
	size_t best = 0;
	for (size_t i = 0; i < m->nfilenames; i++) {
		size_t n = strlen(m->filenames[i]);
		if (n > best && strncmp(msg, m->filenames[i], n) == 0 && msg[n] == ':' &&
		    sscanf(msg + n, ":%ld:%ld:", &k.line, &k.col) == 2)
			k.file = i, best = n;
	}
	return k;
}

static int errkeycmp(const void *pa, const void *pb)
{
	const struct errkey *a = pa, *b = pb;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	return a->msg < b->msg ? -1 : a->msg > b->msg; /* as found */
}

void manifestsorterrors(struct manifest *m)
{
	size_t n = m->errors.n;
	struct errkey *k = xcalloc(n ? n : 1, sizeof *k);
	for (size_t i = 0; i < n; i++)
		k[i] = errkey(m, m->errors.v[i]);
	qsort(k, n, sizeof *k, errkeycmp);
	struct strv out = {0};
	for (size_t i = 0; i < n && out.n < MANIFEST_MAXERRORS; i++)
		if (out.n == 0 || strcmp(out.v[out.n - 1], k[i].msg) != 0)
			strvadd(&out, k[i].msg);
	free(k);
	strvfree(&m->errors);
	m->errors = out;
}

int manifestload(struct manifest *m, const char *path, struct err *e)
{
	return manifestloadset(m, path, NULL, e);
}

int manifestloadset(struct manifest *m, const char *path, const struct strv *sets, struct err *e)
{
	struct loadopts o = {.sets = sets};
	return manifestloadopts(m, path, &o, e);
}

/* The layers under a manifest: the admin policy's floors into m->admin, the user's defaults into
 * m (m->cfg left pointing at cy for the models). The documents stay loaded for positions. */
static int loadlayers(struct manifest *m, struct ydoc *ay, struct buf *atext, int *haveadmin, struct ydoc *cy,
                      struct buf *ctext, int *havecfg, struct err *e)
{
	int rc = layersadmincheck(ADMINPOLICY, e);
	if (rc > 0 && (rc = loadlayer(m, ADMINPOLICY, ay, atext, e)) == 0) {
		*haveadmin = 1;
		ay->errs = &m->errors;
		m->admin.path = xstrdup(ADMINPOLICY);
		sha256hex(atext->data, atext->len, m->admin.sha256);
		rc = parseadmin(&m->admin, ay);
		const char *hook = layerstesthook();
		if (hook)
			rc = errc(e, ERR_INPUT, "%s is set: a test-only variable is refused under the admin policy %s (it would "
			          "send a name the policy allows to any address); unset it", hook, ADMINPOLICY);
	}
	char *cfgpath = rc >= 0 ? layersuserpath() : NULL;
	if (cfgpath && access(cfgpath, F_OK) == 0 && (rc = layersusercheck(cfgpath, e)) > 0 &&
	    (rc = loadlayer(m, cfgpath, cy, ctext, e)) == 0) {
		*havecfg = 1;
		cy->errs = &m->errors;
		m->userconfig = xstrdup(cfgpath);
		m->cfg = cy;
		rc = parseconfig(m, cy);
	}
	free(cfgpath);
	if (rc < 0 && !m->errors.n && !e->msg[0])
		errc(e, ERR_INPUT, "cannot read the configuration layers");
	return rc;
}

int manifestlayers(struct manifest *m, struct err *e)
{
	struct ydoc ay = {0}, cy = {0};
	struct buf atext = {0}, ctext = {0};
	int haveadmin = 0, havecfg = 0;
	memset(m, 0, sizeof *m);
	defaults(m);
	int rc = loadlayers(m, &ay, &atext, &haveadmin, &cy, &ctext, &havecfg, e);
	yaml_node_t *mn = rc >= 0 && havecfg && yroot(&cy) ? yget(&cy, yroot(&cy), "models") : NULL;
	struct ypair p;
	for (size_t i = 0; mn && mn->type == YAML_MAPPING_NODE && yeach(&cy, mn, i, &p); i++) {
		m->models = xrealloc(m->models, (m->nmodels + 1) * sizeof *m->models);
		struct model *md = &m->models[m->nmodels++];
		memset(md, 0, sizeof *md);
		if (parsemodel(m, &cy, p.key, p.val, md, e) < 0)
			rc = -1;
	}
	m->cfg = NULL;
	if (haveadmin)
		yfree(&ay);
	if (havecfg)
		yfree(&cy);
	buffree(&atext);
	buffree(&ctext);
	if (m->errors.n) {
		manifestsorterrors(m);
		snprintf(e->msg, sizeof e->msg, "%s", m->errors.v[0]);
		rc = -1;
	}
	if (rc < 0)
		e->kind = ERR_INPUT;
	return rc < 0 ? -1 : 0;
}

int manifestloadopts(struct manifest *m, const char *path, const struct loadopts *o, struct err *e)
{
	const struct strv *sets = o->sets;
	struct ydoc y;
	struct buf text = {0};
	memset(m, 0, sizeof *m);
	for (size_t i = 0; sets && i < sets->n; i++)
		strvadd(&m->sets, sets->v[i]);
	m->path = xstrdup(path);
	m->dir = dirname_dup(path);
	m->confine = o->confine ? xstrdup(o->confine) : NULL;
	defaults(m);
	struct ydoc ay = {0}, cy = {0};
	struct buf atext = {0}, ctext = {0};
	int haveadmin = 0, havecfg = 0;
	int rc = loadlayers(m, &ay, &atext, &haveadmin, &cy, &ctext, &havecfg, e);
	if (rc >= 0 && loadyaml(m, path, &y, &text, e) < 0)
		rc = -2;
	if (rc < 0) {
		if (haveadmin)
			yfree(&ay);
		if (havecfg)
			yfree(&cy);
		m->cfg = NULL;
		buffree(&atext);
		buffree(&ctext);
		buffree(&text);
		if (m->errors.n) {
			manifestsorterrors(m);
			snprintf(e->msg, sizeof e->msg, "%s", m->errors.v[0]);
		}
		e->kind = ERR_INPUT;
		return -1;
	}
	y.errs = &m->errors;
	m->wsroot = o->wsroot;
	m->onews = o->onews;
	rc = parse(m, &y, o->workspace, e);
	m->wsroot = NULL;
	m->cfg = NULL;
	if (havecfg)
		yfree(&cy);
	if (haveadmin)
		yfree(&ay);
	buffree(&ctext);
	buffree(&atext);
	/* room for the members of every matrix from a job's output, and the document to make them from */
	size_t pending = 0;
	for (size_t i = 0; i < m->njobs; i++)
		pending += m->jobs[i].mxpending;
	m->jobcap = m->njobs + pending * (MATRIXMAX - 1);
	if (pending && rc == 0 && !m->errors.n) {
		m->jobs = xrealloc(m->jobs, m->jobcap * sizeof *m->jobs);
		m->later = xmalloc(sizeof *m->later);
		*m->later = y;
		m->later->e = NULL;
		m->later->errs = NULL;
		m->laterwsroot = o->wsroot ? xstrdup(o->wsroot) : NULL;
		buffree(&text);
		return 0;
	}
	if (rc < 0 || m->errors.n) {
		ynote(&y); /* a mistake reported without yfail */
		manifestsorterrors(m);
		if (m->errors.n)
			snprintf(e->msg, sizeof e->msg, "%s", m->errors.v[0]);
		e->kind = ERR_INPUT;
		rc = -1;
	}
	yfree(&y);
	buffree(&text);
	return rc;
}

static void approvalfree(struct approval *a)
{
	rulesfree(a);
	strvfree(&a->allow_examples);
	strvfree(&a->deny_examples);
	free(a->allow_pos);
	free(a->deny_pos);
}

static void modelextrafree(struct model *md)
{
	free(md->deployment);
	free(md->api_version);
	free(md->region);
	free(md->project);
	free(md->reasoning_effort);
	strvfree(&md->headers);
	strvfree(&md->query);
	strvfree(&md->hidden);
}

void modelfree(struct model *md)
{
	free(md->name);
	free(md->model);
	free(md->base_url);
	free(md->api_key_env);
	free(md->script);
	cJSON_Delete(md->replies);
	modelextrafree(md);
	memset(md, 0, sizeof *md);
}

static void jobfree(struct job *j)
{
	free(j->id);
	free(j->worker);
	free(j->input);
	strvfree(&j->needs);
	free(j->needs_pos);
	strvfree(&j->files);
	sandboxfree(&j->sandbox);
	free(j->model);
	free(j->workspace);
	free(j->wsname);
	free(j->group);
	free(j->mxkey);
	cJSON_Delete(j->mxvalues);
	strvfree(&j->needgroups);
	free(j->unloaded);
	memset(j, 0, sizeof *j);
}

/* Whether the list holds s. */
static int holds(const struct strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
			return 1;
	return 0;
}

/* In member c's place, a job that fails without running, saying why: what the pending matrix job
 * p says of it (worker, needs), its id and values. */
static void standin(const struct job *p, const struct matrix *mx, size_t c, const char *why, struct job *j)
{
	jobfree(j);
	j->id = matrixid(p->id, mx, c);
	if (strlen(j->id) > 128) { /* a value too long for an id: its head and a digest of the whole */
		char hex[65];
		sha256hex(j->id, strlen(j->id), hex);
		char *shortid = xasprintf("%.100s-%.16s", j->id, hex);
		free(j->id);
		j->id = shortid;
	}
	j->worker = xstrdup(p->worker);
	j->input = xstrdup("");
	for (size_t k = 0; k < p->needs.n; k++)
		strvadd(&j->needs, p->needs.v[k]);
	if (p->needs_pos && p->needs.n) {
		j->needs_pos = xcalloc(p->needs.n, sizeof *j->needs_pos);
		memcpy(j->needs_pos, p->needs_pos, p->needs.n * sizeof *j->needs_pos);
	}
	sandboxcopy(&j->sandbox, &p->sandbox);
	j->max_turns = p->max_turns;
	j->max_tokens = p->max_tokens;
	j->max_cost = p->max_cost;
	j->tool_output_limit = p->tool_output_limit;
	j->continue_on_error = p->continue_on_error;
	j->group = xstrdup(p->id);
	j->mxkey = matrixkey(mx, c);
	j->mxvalues = matrixvalues(mx, c);
	j->fail_fast = mx->fail_fast;
	j->max_parallel = mx->max_parallel;
	j->pos = p->pos;
	j->inputpos = p->inputpos;
	j->unloaded = xstrdup(why && *why ? why : "it could not be read");
}

int manifestexpand(struct manifest *m, size_t i, const cJSON *outputs, struct err *e)
{
	if (i >= m->njobs || !m->jobs[i].mxpending || !m->later)
		return errc(e, ERR_INPUT, "job '%s' has no matrix waiting for a job's output", i < m->njobs ? m->jobs[i].id : "?");
	struct ydoc *y = m->later;
	struct err ye = {0};
	y->e = &ye;
	y->errs = NULL;
	const char *id = m->jobs[i].id;
	yaml_node_t *n = yget(y, yget(y, yroot(y), "jobs"), id);
	struct matrix mx;
	m->wsroot = m->laterwsroot;
	int has = n ? matrixparse(y, n, &m->sets, outputs, &mx) : -1, rc = has == 1 ? 0 : -1;
	if (has == 2)
		errc(&ye, ERR_INPUT, "job '%s': its matrix still waits for a job's output", id);
	size_t k = rc == 0 ? mx.ncombos : 0, made = 0;
	if (rc == 0 && m->njobs + k - 1 > m->jobcap)
		rc = errc(&ye, ERR_INPUT, "job '%s': its matrix makes more jobs than there is room for", id);
	struct job *nj = xcalloc(k ? k : 1, sizeof *nj);
	struct strv groups = {0};
	for (size_t c = 0; rc == 0 && c < k; c++, made++) {
		/* A member that does not load (a value its workspace or a mount refuses) fails alone. */
		struct err me = {0};
		y->e = &me;
		if (parsemember(m, y, id, n, &mx, c, &nj[c]) < 0)
			standin(&m->jobs[i], &mx, c, me.msg, &nj[c]);
		y->e = &ye;
	}
	for (size_t c = 0; rc == 0 && c < k; c++) {
		const struct job *j = &nj[c];
		for (size_t q = 0; rc == 0 && q < m->njobs + c; q++) {
			const struct job *o = q < m->njobs ? &m->jobs[q] : &nj[q - m->njobs];
			if (q == i || o == j)
				continue;
			/* equal but for case is the same id too: GitHub reads step outputs and fromJSON's
			 * properties ignoring case, and so does a case-insensitive disk the run is copied to */
			if (strcasecmp(o->id, j->id) == 0)
				rc = errc(&ye, ERR_INPUT, "%s:%d:%d: job id '%s' is made twice (a matrix job's ids are ID-VALUE...)",
				          j->pos.file, j->pos.line, j->pos.col, j->id);
			else if (j->workspace && o->workspace && strcmp(o->wsname, j->wsname) == 0 &&
			         strcmp(o->workspace, j->workspace) != 0)
				rc = errc(&ye, ERR_INPUT, "%s:%d:%d: job '%s': its workspace and job '%s''s are two folders with one name "
				          "for their snapshots; name them apart", j->pos.file, j->pos.line, j->pos.col, j->id, o->id);
		}
		if (rc == 0 && j->model && !manifestmodel(m, j->model))
			rc = errc(&ye, ERR_INPUT, "%s:%d:%d: job '%s' uses model '%s', which is not in models", j->pos.file, j->pos.line,
			          j->pos.col, j->id, j->model);
	}
	m->wsroot = NULL;
	for (size_t q = 0; q < m->njobs; q++)
		if (m->jobs[q].group && !holds(&groups, m->jobs[q].group))
			strvadd(&groups, m->jobs[q].group);
	if (rc == 0) {
		/* member 0 in the matrix job's place, the others after the last job */
		char *group = xstrdup(id);
		size_t first = m->njobs;
		jobfree(&m->jobs[i]);
		m->jobs[i] = nj[0];
		for (size_t c = 1; c < k; c++)
			m->jobs[m->njobs++] = nj[c];
		memset(nj, 0, k * sizeof *nj);
		made = 0;
		for (size_t c = 0; rc == 0 && c < k; c++)
			rc = jobneeds(m, &m->jobs[c == 0 ? i : first + c - 1], &groups, &ye);
		/* jobs that need the matrix job need its members */
		for (size_t q = 0; q < m->njobs; q++) {
			struct job *d = &m->jobs[q];
			if (!holds(&d->needs, group) || (d->group && strcmp(d->group, group) == 0))
				continue;
			struct strv needs = {0};
			for (size_t x = 0; x < d->needs.n; x++) {
				if (strcmp(d->needs.v[x], group) != 0) {
					strvadd(&needs, d->needs.v[x]);
					continue;
				}
				strvadd(&needs, m->jobs[i].id);
				for (size_t c = first; c < m->njobs; c++)
					strvadd(&needs, m->jobs[c].id);
			}
			strvfree(&d->needs);
			d->needs = needs;
			if (!holds(&d->needgroups, group))
				strvadd(&d->needgroups, group);
		}
		free(group);
	}
	for (size_t c = 0; c < made; c++)
		jobfree(&nj[c]);
	free(nj);
	strvfree(&groups);
	if (has >= 0)
		matrixfree(&mx);
	if (rc < 0) {
		*e = ye;
		e->kind = ERR_INPUT;
		return -1;
	}
	return (int)k;
}

void manifestfree(struct manifest *m)
{
	adminfree(&m->admin);
	free(m->userconfig);
	free(m->userout);
	free(m->usersandbox);
	for (size_t i = 0; i < m->nmodels; i++)
		modelfree(&m->models[i]);
	free(m->models);
	for (size_t i = 0; i < m->nworkers; i++) {
		struct worker *w = &m->workers[i];
		free(w->name);
		free(w->description);
		free(w->model);
		free(w->instructions);
		free(w->file);
		strvfree(&w->delegates);
		free(w->delegates_pos);
		strvfree(&w->mcptools);
		strvfree(&w->skills);
		strvfree(&w->skillnames);
		strvfree(&w->skilldescs);
		approvalfree(&w->approval);
		cJSON_Delete(w->output);
		sandboxfree(&w->sandbox);
	}
	free(m->workers);
	for (size_t i = 0; i < m->njobs; i++)
		jobfree(&m->jobs[i]);
	free(m->jobs);
	if (m->later) {
		yfree(m->later);
		free(m->later);
	}
	free(m->laterwsroot);
	free(m->confine);
	strvfree(&m->unread);
	mcpconffree(m);
	sandboxfree(&m->sandbox);
	strvfree(&m->snapshot.exclude);
	strvfree(&m->secrets);
	strvfree(&m->files);
	strvfree(&m->errors);
	strvfree(&m->sets);
	for (size_t i = 0; i < m->nfilenames; i++)
		free(m->filenames[i]);
	free(m->filenames);
	free(m->path);
	free(m->dir);
	free(m->name);
	free(m->workspace);
	memset(m, 0, sizeof *m);
}

struct model *manifestmodel(const struct manifest *m, const char *name)
{
	for (size_t i = 0; i < m->nmodels; i++)
		if (strcmp(m->models[i].name, name) == 0)
			return &m->models[i];
	return NULL;
}

struct worker *manifestworker(const struct manifest *m, const char *name)
{
	for (size_t i = 0; i < m->nworkers; i++)
		if (m->workers[i].name && strcmp(m->workers[i].name, name) == 0)
			return &m->workers[i];
	return NULL;
}

static int writes(const struct manifest *m, const char *name, unsigned char *seen)
{
	struct worker *w = manifestworker(m, name);
	if (!w)
		return 1;
	size_t i = (size_t)(w - m->workers);
	if (seen[i])
		return 0;
	seen[i] = 1;
	if ((w->tools & (TOOL_SHELL | TOOL_WRITE_FILE | TOOL_EDIT_FILE)) || w->mcptools.n)
		return 1;
	for (size_t k = 0; k < w->delegates.n; k++)
		if (writes(m, w->delegates.v[k], seen))
			return 1;
	return 0;
}

int manifestworkerwrites(const struct manifest *m, const char *name)
{
	if (!name)
		return 1;
	unsigned char *seen = xcalloc(m->nworkers + 1, 1);
	int w = writes(m, name, seen);
	free(seen);
	return w;
}

struct job *manifestjob(const struct manifest *m, const char *id)
{
	for (size_t i = 0; i < m->njobs; i++)
		if (strcmp(m->jobs[i].id, id) == 0)
			return &m->jobs[i];
	return NULL;
}

struct job *manifestjobof(const struct manifest *m, const char *id, const char *group)
{
	struct job *j = manifestjob(m, id);
	if (j || !group)
		return j;
	j = manifestjob(m, group);
	return j && j->mxpending ? j : NULL;
}

const char *decisionname(enum decision d)
{
	return d == DEC_ALLOW ? "allow" : d == DEC_DENY ? "deny" : "abort";
}

const char *toolnameat(int i)
{
	return i >= 0 && i < (int)(sizeof toolnames / sizeof toolnames[0]) ? toolnames[i] : NULL;
}

unsigned toolbyname(const char *name)
{
	for (int i = 0; toolnames[i]; i++)
		if (strcmp(name, toolnames[i]) == 0)
			return 1u << i;
	return 0;
}
