/* cgroup: detect the hierarchy as crun does (statfs of /sys/fs/cgroup: cgroup2 →
   unified; tmpfs → legacy or hybrid, whose controllers are v1), make one cgroup per
   sandbox, write the limits, and keep cgroup.procs open so that each step can join
   from inside the sandbox, where no cgroup file system is mounted.
   v2 forbids processes in a cgroup whose controllers are delegated to children, so
   the sandbox cgroup is made beside ours (in our parent) unless we sit at the root. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "../util/util.h"
#include "cgroup.h"

#define CGROUP2_MAGIC 0x63677270
#define TMPFS_MAGIC 0x01021994

static const char *const ctrlname[3] = {"memory", "pids", "cpu"};

static int writestr(const char *dir, const char *file, const char *s)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return writectl(path, s);
}

/* What a cgroupopen looks at, each file read once: /proc/self/cgroup and /proc/self/mountinfo. */
struct where {
	struct buf cgroups, mounts;
};

/* Our cgroup path in the v2 hierarchy (ctrl NULL) or in the v1 hierarchy holding ctrl. */
static char *ownpath(const struct where *w, const char *ctrl)
{
	char *text = xstrdup(w->cgroups.data ? w->cgroups.data : ""), *res = NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = 0;
		char *ctrls = c1 + 1, *path = c2 + 1, *save = NULL;
		if (!ctrl) {
			if (strcmp(line, "0") == 0 && !*ctrls)
				res = xstrdup(path);
		} else {
			for (char *t = strtok_r(ctrls, ",", &save); t; t = strtok_r(NULL, ",", &save))
				if (strcmp(t, ctrl) == 0)
					res = xstrdup(path);
		}
		if (res)
			break;
	}
	free(text);
	return res;
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* The directory of our own cgroup: the mount of fstype (holding ctrl for v1) joined with our path. */
static char *owndir(const struct where *w, const char *fstype, const char *ctrl)
{
	char *own = ownpath(w, ctrl), *res = NULL;
	if (!own || !w->mounts.data) {
		free(own);
		return NULL;
	}
	char *text = xstrdup(w->mounts.data);
	/* The last matching mount wins: a later mount hides an earlier one at the same place. */
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *f[6] = {0}, *sep = strstr(line, " - "), *save = NULL;
		if (!sep)
			continue;
		*sep = 0;
		int n = 0;
		for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
			f[n++] = t;
		char *type = strtok_r(sep + 3, " ", &save), *src = strtok_r(NULL, " ", &save), *opts = strtok_r(NULL, " ", &save);
		(void)src;
		if (n < 5 || !type || strcmp(type, fstype) != 0)
			continue;
		if (ctrl) {
			int has = 0;
			for (char *t = strtok_r(opts ? opts : (char *)"", ",", &save); t; t = strtok_r(NULL, ",", &save))
				if (strcmp(t, ctrl) == 0)
					has = 1;
			if (!has)
				continue;
		}
		char *root = f[3], *mnt = f[4];
		unescape(root);
		unescape(mnt);
		size_t rl = strlen(root);
		const char *rel = own;
		if (strcmp(root, "/") != 0) {
			if (strncmp(own, root, rl) != 0 || (own[rl] && own[rl] != '/'))
				continue; /* our cgroup is not under this mount */
			rel = own + rl;
		}
		free(res);
		res = xasprintf("%s%s", mnt, strcmp(rel, "/") == 0 ? "" : rel);
	}
	free(text);
	free(own);
	return res;
}

/* The folder holding path, opened to remove path later with unlinkat. */
static int opendirof(const char *path)
{
	char *d = dirname_dup(path);
	int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(d);
	return fd;
}

static int version(void)
{
	struct statfs sf;
	if (statfs("/sys/fs/cgroup", &sf) < 0)
		return 0;
	if (sf.f_type == CGROUP2_MAGIC)
		return 2;
	if (sf.f_type == TMPFS_MAGIC)
		return 1; /* legacy, or hybrid with a v2 mount at unified/ that holds no controller we use */
	return 0;
}

static char *newname(void)
{
	static atomic_uint counter;
	return xasprintf("nightshift-%d-%u", (int)getpid(), atomic_fetch_add(&counter, 1));
}

static int has(const char *dir, const char *file, const char *word)
{
	char path[4096];
	struct buf b = {0};
	snprintf(path, sizeof path, "%s/%s", dir, file);
	if (readfile(path, &b, NULL) < 0)
		return 0;
	int found = 0;
	for (char *save = NULL, *t = strtok_r(b.data, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
		if (strcmp(t, word) == 0)
			found = 1;
	buffree(&b);
	return found;
}

static void limitsv2(struct cgroup *cg, const char *s, unsigned want, int64_t memory, double cpus, int64_t pids)
{
	char v[64];
	if ((want & CG_MEMORY) && has(s, "cgroup.controllers", "memory")) {
		snprintf(v, sizeof v, "%lld", (long long)memory);
		if (writestr(s, "memory.max", v) == 0) {
			cg->enforced |= CG_MEMORY;
			writestr(s, "memory.swap.max", "0"); /* absent without swap accounting: fine */
		}
	}
	if ((want & CG_PIDS) && has(s, "cgroup.controllers", "pids")) {
		snprintf(v, sizeof v, "%lld", (long long)pids);
		if (writestr(s, "pids.max", v) == 0)
			cg->enforced |= CG_PIDS;
	}
	if ((want & CG_CPU) && has(s, "cgroup.controllers", "cpu")) {
		long long q = (long long)(cpus * 100000);
		snprintf(v, sizeof v, "%lld 100000", q < 1000 ? 1000 : q);
		if (writestr(s, "cpu.max", v) == 0)
			cg->enforced |= CG_CPU;
	}
}

static void openv2(struct cgroup *cg, const struct where *w, unsigned want, int64_t memory, double cpus, int64_t pids)
{
	char *own = owndir(w, "cgroup2", NULL), *rel = ownpath(w, NULL);
	if (!own || !rel) {
		snprintf(cg->note, sizeof cg->note, "cgroup2: cannot find our cgroup");
		goto out;
	}
	/* At the root we may delegate controllers ourselves; elsewhere use what our parent
	   delegates to us and our siblings. */
	int atroot = strcmp(rel, "/") == 0;
	char *parent = atroot ? xstrdup(own) : dirname_dup(own);
	char *name = newname();
	char *s = pathjoin(parent, name);
	free(name);
	if (mkdir(s, 0755) < 0) {
		snprintf(cg->note, sizeof cg->note, "cgroup2 not writable (%s)", strerror(errno));
		free(s);
		free(parent);
		goto out;
	}
	if (atroot)
		for (int i = 0; i < 3; i++)
			if ((want & (1u << i)) && !has(s, "cgroup.controllers", ctrlname[i])) {
				char v[16];
				snprintf(v, sizeof v, "+%s", ctrlname[i]);
				writestr(parent, "cgroup.subtree_control", v);
			}
	free(parent);
	limitsv2(cg, s, want, memory, cpus, pids);
	char path[4096];
	snprintf(path, sizeof path, "%s/cgroup.procs", s);
	cg->procs[0] = open(path, O_WRONLY | O_CLOEXEC);
	if (cg->procs[0] < 0) {
		snprintf(cg->note, sizeof cg->note, "cgroup2 not writable (%s)", strerror(errno));
		rmdir(s);
		free(s);
		cg->enforced = 0;
		goto out;
	}
	cg->dir[0] = s;
	cg->parent[0] = opendirof(s);
	cg->version = 2;
	if (cg->enforced & CG_MEMORY)
		cg->oomfile = xasprintf("%s/memory.events", s);
out:
	free(own);
	free(rel);
}

static void openv1(struct cgroup *cg, const struct where *w, unsigned want, int64_t memory, double cpus, int64_t pids)
{
	char *name = newname(), v[64];
	int fail = 0;
	for (int i = 0; i < 3; i++) {
		if (!(want & (1u << i)))
			continue;
		char *own = owndir(w, "cgroup", ctrlname[i]);
		if (!own) {
			fail = ENOENT;
			continue;
		}
		char *s = pathjoin(own, name);
		free(own);
		if (mkdir(s, 0755) < 0) {
			fail = errno;
			free(s);
			continue;
		}
		int ok = 0;
		if (i == 0) {
			snprintf(v, sizeof v, "%lld", (long long)memory);
			ok = writestr(s, "memory.limit_in_bytes", v) == 0;
			if (ok)
				writestr(s, "memory.memsw.limit_in_bytes", v); /* no swap either, where accounted */
		} else if (i == 1) {
			snprintf(v, sizeof v, "%lld", (long long)pids);
			ok = writestr(s, "pids.max", v) == 0;
		} else {
			long long q = (long long)(cpus * 100000);
			snprintf(v, sizeof v, "%lld", q < 1000 ? 1000 : q);
			ok = writestr(s, "cpu.cfs_quota_us", v) == 0; /* the period is 100000 us from birth */
		}
		char path[4096];
		snprintf(path, sizeof path, "%s/cgroup.procs", s);
		int fd = ok ? open(path, O_WRONLY | O_CLOEXEC) : -1;
		if (fd < 0) {
			fail = errno;
			rmdir(s);
			free(s);
			continue;
		}
		cg->dir[i] = s;
		cg->parent[i] = opendirof(s);
		cg->procs[i] = fd;
		cg->enforced |= 1u << i;
		if (i == 0)
			cg->oomfile = xasprintf("%s/memory.oom_control", s);
	}
	free(name);
	if (cg->enforced)
		cg->version = 1;
	else
		snprintf(cg->note, sizeof cg->note, "cgroup1 not writable (%s)", strerror(fail));
}

void cgroupopen(struct cgroup *cg, int64_t memory, double cpus, int64_t pids)
{
	unsigned want = (memory > 0 ? CG_MEMORY : 0) | (pids > 0 ? CG_PIDS : 0) | (cpus > 0 ? CG_CPU : 0);
	memset(cg, 0, sizeof *cg);
	for (int i = 0; i < 3; i++)
		cg->procs[i] = cg->parent[i] = -1;
	if (!want) {
		snprintf(cg->note, sizeof cg->note, "no cgroup limits asked");
		return;
	}
	int v = version();
	struct where w = {{0}, {0}};
	if (v && (readfile("/proc/self/cgroup", &w.cgroups, NULL) < 0 || readfile("/proc/self/mountinfo", &w.mounts, NULL) < 0))
		snprintf(cg->note, sizeof cg->note, "cgroup%d: cannot read /proc/self/cgroup and mountinfo", v);
	else if (v == 2)
		openv2(cg, &w, want, memory, cpus, pids);
	else if (v == 1)
		openv1(cg, &w, want, memory, cpus, pids);
	else
		snprintf(cg->note, sizeof cg->note, "no cgroup file system at /sys/fs/cgroup");
	buffree(&w.cgroups);
	buffree(&w.mounts);
	if (cg->version) {
		int n = snprintf(cg->note, sizeof cg->note, "cgroup%d", cg->version);
		for (int i = 0; i < 3; i++)
			if (cg->enforced & (1u << i))
				n += snprintf(cg->note + n, sizeof cg->note - n, " %s", ctrlname[i]);
		if (!cg->enforced)
			snprintf(cg->note + n, sizeof cg->note - n, " (no controller delegated)");
	}
}

int cgroupmove(const struct cgroup *cg, int pid)
{
	char s[16];
	int n = snprintf(s, sizeof s, "%d", pid);
	for (int i = 0; i < 3; i++)
		if (cg->procs[i] >= 0 && write(cg->procs[i], s, n) != n)
			return -1;
	return 0;
}

int64_t cgroupooms(const struct cgroup *cg)
{
	struct buf b = {0};
	int64_t n = -1;
	if (!cg->oomfile || readfile(cg->oomfile, &b, NULL) < 0)
		return -1;
	char *p = strstr(b.data, "oom_kill ");
	if (p)
		n = strtoll(p + 9, NULL, 10);
	buffree(&b);
	return n;
}

void cgroupremove(const struct cgroup *cg)
{
	for (int i = 0; i < 3; i++) {
		if (!cg->dir[i] || cg->parent[i] < 0)
			continue;
		const char *name = strrchr(cg->dir[i], '/') + 1;
		/* The last processes may still be exiting: retry for a moment. */
		for (int t = 0; t < 1000 && unlinkat(cg->parent[i], name, AT_REMOVEDIR) < 0 && errno == EBUSY; t++)
			usleep(200);
	}
}

void cgroupforget(struct cgroup *cg)
{
	for (int i = 0; i < 3; i++) {
		if (cg->procs[i] >= 0)
			close(cg->procs[i]);
		if (cg->parent[i] >= 0)
			close(cg->parent[i]);
		cg->procs[i] = cg->parent[i] = -1;
		free(cg->dir[i]);
		cg->dir[i] = NULL;
	}
	free(cg->oomfile);
	cg->oomfile = NULL;
}

void cgroupclose(struct cgroup *cg)
{
	cgroupremove(cg);
	cgroupforget(cg);
}
