/* rootfs: bubblewrap's sequence. The init of the new namespaces makes / a slave,
   mounts a tmpfs "base" over /tmp and pivots into it, so that the host is at /oldroot;
   it then fills /newroot (another tmpfs) with bind mounts taken from /oldroot,
   detaches the old root, pivots into /newroot and makes that root read-only.
   Bind mounts get their flags with mount_setattr (recursive, keeps the flags the
   kernel locks in a user namespace); old kernels fall back to MS_REMOUNT carrying
   the locked flags, which covers the top mount only. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "rootfs.h"

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x1
#define MOUNT_ATTR_NOSUID 0x2
#define MOUNT_ATTR_NODEV 0x4
#define MOUNT_ATTR_NOEXEC 0x8
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

struct mattr {
	unsigned long long set, clr, propagation, userns_fd;
};

static void add(struct rootfs *r, enum ropkind kind, const char *src, const char *dst, unsigned flags)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->ops = xrealloc(r->ops, r->cap * sizeof *r->ops);
	}
	r->ops[r->n++] = (struct rop){kind, src ? xstrdup(src) : NULL, xstrdup(dst), flags, 0, 0};
}

/* add an R_BIND of a source pathstillreal found, which init checks it bound (buildop) */
static void addsource(struct rootfs *r, const char *src, const struct stat *st, const char *dst, unsigned flags)
{
	add(r, R_BIND, src, dst, flags);
	r->ops[r->n - 1].dev = st->st_dev;
	r->ops[r->n - 1].ino = st->st_ino;
}

/* Secrets in /etc: every entry that others may not read (shadow, gshadow, sudoers,
   ssh host keys, ssl/private ...). As root the sandbox user is root's uid outside and
   would pass the permission check, so these are hidden. Found once per process. */
static struct strv etcmasks;
static pthread_once_t etconce = PTHREAD_ONCE_INIT;

static void etcwalk(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d)) && etcmasks.n < 4096) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char *p = pathjoin(dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode)) {
			if (S_ISDIR(st.st_mode)) {
				if ((st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH))
					strvadd(&etcmasks, p);
				else if (depth < 8)
					etcwalk(p, depth + 1);
			} else if (!(st.st_mode & S_IROTH)) {
				strvadd(&etcmasks, p);
			}
		}
		free(p);
	}
	closedir(d);
}

static void etcfind(void)
{
	etcwalk("/etc", 0);
}

static const char passwd[] =
	"root:x:0:0:root:/root:/bin/sh\n"
	"nightshift:x:%d:%d:nightshift:/tmp:/bin/sh\n"
	"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char group[] =
	"root:x:0:\n"
	"nightshift:x:%d:\n"
	"nogroup:x:65534:\n";

/* The host's system directories, read-only; symlinks (merged /usr) as symlinks. */
static void planhost(struct rootfs *r, const struct sbxconf *c)
{
	static const char *const sys[] = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt"};
	char target[PATH_MAX];
	for (size_t i = 0; i < sizeof sys / sizeof *sys; i++) {
		char *p = xasprintf("/%s", sys[i]);
		struct stat st;
		if (lstat(p, &st) == 0) {
			ssize_t n;
			if (S_ISLNK(st.st_mode) && (n = readlink(p, target, sizeof target - 1)) > 0) {
				target[n] = 0;
				add(r, R_SYMLINK, target, p, 0);
			} else if (S_ISDIR(st.st_mode)) {
				add(r, R_BIND, p, p, RF_DIR);
			}
		}
		free(p);
	}
	pthread_once(&etconce, etcfind);
	for (size_t i = 0; i < etcmasks.n; i++)
		add(r, R_MASK, NULL, etcmasks.v[i], RF_OPTIONAL);
	struct stat st;
	int uid = c->conf->uid ? c->conf->uid : SBX_STEPID, gid = c->conf->uid ? c->conf->gid : SBX_STEPID;
	char *text = xasprintf(passwd, uid, gid);
	if (stat("/etc/passwd", &st) == 0)
		add(r, R_FILE, text, "/etc/passwd", 0);
	free(text);
	text = xasprintf(group, gid);
	if (stat("/etc/group", &st) == 0)
		add(r, R_FILE, text, "/etc/group", 0);
	free(text);
	/* With the host network, keep DNS working where resolv.conf points into /run. */
	char *res = c->conf->network_host ? realpath("/etc/resolv.conf", NULL) : NULL;
	if (res && strncmp(res, "/etc/", 5) != 0 && stat(res, &st) == 0 && S_ISREG(st.st_mode))
		add(r, R_BIND, res, res, 0);
	free(res);
}

static const char *below(const char *path, const char *dir);

#define SHADOWCAP 4096 /* entries of a folder shadowed for a mount point */

/* Make room for a mount point at target when the folder it lies in is a read-only bind (a system
 * folder: /opt/mcp with image host) and it does not exist there: the deepest folder of the way
 * that exists is covered by a tmpfs holding its entries again (each bound as before, later steps
 * on them repeated), so that the point can be made without touching the host; that folder goes
 * to shadows, to be made read-only once the mounts are in. */
static int pointin(struct rootfs *r, const char *target, struct strv *shadows, struct err *e)
{
	size_t b = r->n;
	const char *rest = NULL;
	for (size_t i = r->n; i-- > 0;) { /* the last step laid on a folder the target lies in */
		const char *q = below(target, r->ops[i].dst);
		if (!q || !*q || (r->ops[i].kind != R_TMPFS && r->ops[i].kind != R_BIND))
			continue;
		if (r->ops[i].kind == R_TMPFS)
			return 0; /* a tmpfs of ours takes the point */
		b = i;
		rest = q;
		break;
	}
	if (b == r->n || r->ops[b].flags & RF_RW)
		return 0; /* in our own root, or a writable bind: the point is made there */
	char *host = xasprintf("%s%s", r->ops[b].src, rest), *in = xstrdup(target);
	struct stat st;
	if (lstat(host, &st) == 0) {
		free(host);
		free(in);
		return 0; /* there already */
	}
	size_t srclen = strlen(r->ops[b].src);
	for (;;) { /* up to the deepest folder that exists, in both names (they end alike) */
		*strrchr(host, '/') = *strrchr(in, '/') = 0;
		if (strlen(host) <= srclen || (stat(host, &st) == 0 && S_ISDIR(st.st_mode)))
			break;
	}
	if (!*host)
		strcpy(host, "/");
	if (!*in)
		strcpy(in, "/");
	DIR *d = opendir(host);
	int rc = 0;
	if (!d) {
		rc = errc(e, ERR_INPUT, "mount point %s: its folder %s cannot be read: %s", target, host, strerror(errno));
		goto out;
	}
	size_t had = r->n, n = 0;
	add(r, R_TMPFS, "mode=0755", in, 0);
	struct dirent *de;
	while ((de = readdir(d)) && rc == 0) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++n > SHADOWCAP) {
			rc = errc(e, ERR_INPUT, "mount point %s: %s holds more than %d entries to show again around it; "
			                        "pick a target in a smaller folder", target, host, SHADOWCAP);
			break;
		}
		char *hp = pathjoin(host, de->d_name), *ip = pathjoin(in, de->d_name), link[PATH_MAX];
		ssize_t k;
		if (lstat(hp, &st) == 0 && S_ISLNK(st.st_mode) && (k = readlink(hp, link, sizeof link - 1)) > 0) {
			link[k] = 0;
			add(r, R_SYMLINK, link, ip, 0);
		} else if (lstat(hp, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
			add(r, R_BIND, hp, ip, S_ISDIR(st.st_mode) ? RF_DIR : 0);
		}
		free(hp);
		free(ip);
	}
	closedir(d);
	/* what was laid on that folder after its bind (masks, generated files) goes on again */
	for (size_t i = b + 1; rc == 0 && i < had; i++) {
		const char *q = below(r->ops[i].dst, in);
		if (q && *q) {
			char *src = r->ops[i].src ? xstrdup(r->ops[i].src) : NULL, *dst = xstrdup(r->ops[i].dst);
			add(r, r->ops[i].kind, src, dst, r->ops[i].flags);
			free(src);
			free(dst);
		}
	}
	if (rc == 0)
		strvadd(shadows, in);
out:
	free(host);
	free(in);
	return rc;
}

/* A root file system folder: each top-level entry, read-only, except what we provide. */
static int planimage(struct rootfs *r, const char *image, struct err *e)
{
	static const char *const ours[] = {"proc", "dev", "sys", "tmp", "workspace"};
	struct stat st;
	char *dir = pathstillreal(image, "image", &st, e); /* an image folder in a workspace, made a link */
	if (!dir)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		free(dir);
		return errc(e, ERR_INPUT, "sandbox image %s: the namespace backend takes 'host' or an unpacked root file system folder", image);
	}
	DIR *d = opendir(dir);
	if (!d) {
		errc(e, ERR_INPUT, "sandbox image %s:", dir);
		free(dir);
		return -1;
	}
	struct dirent *de;
	char target[PATH_MAX];
	while ((de = readdir(d))) {
		int skip = de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]));
		for (size_t i = 0; i < sizeof ours / sizeof *ours; i++)
			skip |= strcmp(de->d_name, ours[i]) == 0;
		if (skip)
			continue;
		char *src = pathjoin(dir, de->d_name), *dst = xasprintf("/%s", de->d_name);
		ssize_t n;
		if (lstat(src, &st) == 0) {
			if (S_ISLNK(st.st_mode) && (n = readlink(src, target, sizeof target - 1)) > 0) {
				target[n] = 0;
				add(r, R_SYMLINK, target, dst, 0);
			} else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
				add(r, R_BIND, src, dst, S_ISDIR(st.st_mode) ? RF_DIR : 0);
			}
		}
		free(src);
		free(dst);
	}
	closedir(d);
	free(dir);
	return 0;
}

int rootfsplan(struct rootfs *r, const struct sbxconf *c, struct err *e)
{
	struct strv shadows = {0}; /* folders pointin laid a tmpfs over, read-only in the end */
	const struct sandboxconf *sc = c->conf;
	struct stat st;
	memset(r, 0, sizeof *r);
	if (!sc->image || strcmp(sc->image, "host") == 0)
		planhost(r, c);
	else if (planimage(r, sc->image, e) < 0)
		goto fail;

	add(r, R_PROC, NULL, "/proc", 0);
	static const char *const procro[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"};
	for (size_t i = 0; i < sizeof procro / sizeof *procro; i++)
		add(r, R_ROSELF, NULL, procro[i], RF_OPTIONAL);
	/* As Docker does (kcore and kallsyms the kernel itself guards). /proc/keys would list
	   the descriptions of keys the user owns: the host's, when nightshift runs as root. */
	static const char *const procmask[] = {"/proc/keys", "/proc/timer_list", "/proc/sched_debug", "/proc/latency_stats",
	                                      "/proc/acpi", "/proc/scsi"};
	for (size_t i = 0; i < sizeof procmask / sizeof *procmask; i++)
		add(r, R_MASK, NULL, procmask[i], RF_OPTIONAL);

	add(r, R_TMPFS, "mode=0755,size=64k", "/dev", 0);
	static const char *const devs[] = {"null", "zero", "full", "random", "urandom", "tty"};
	for (size_t i = 0; i < sizeof devs / sizeof *devs; i++) {
		char *p = xasprintf("/dev/%s", devs[i]);
		add(r, R_BIND, p, p, RF_RW | RF_DEV);
		free(p);
	}
	add(r, R_DEVPTS, NULL, "/dev/pts", 0);
	add(r, R_SYMLINK, "pts/ptmx", "/dev/ptmx", 0);
	/* /tmp and /dev/shm as large as the memory limit: without a memory cgroup (an ordinary user,
	   rlimits only) nothing else counts what a step keeps in them, and a tmpfs's own default is
	   half the host's memory. */
	char *tmpopts = sc->memory > 0 ? xasprintf("mode=1777,size=%lld", (long long)sc->memory) : xstrdup("mode=1777");
	add(r, R_TMPFS, tmpopts, "/dev/shm", 0);
	add(r, R_SYMLINK, "/proc/self/fd", "/dev/fd", 0);
	add(r, R_SYMLINK, "/proc/self/fd/0", "/dev/stdin", 0);
	add(r, R_SYMLINK, "/proc/self/fd/1", "/dev/stdout", 0);
	add(r, R_SYMLINK, "/proc/self/fd/2", "/dev/stderr", 0);

	add(r, R_TMPFS, tmpopts, "/tmp", 0);
	free(tmpopts);

	char *ws = pathstillreal(c->workspace, "workspace", &st, e);
	if (!ws)
		goto fail;
	if (!S_ISDIR(st.st_mode)) {
		errc(e, ERR_INPUT, "sandbox workspace %s: not a directory", c->workspace);
		free(ws);
		goto fail;
	}
	addsource(r, ws, &st, "/workspace", RF_RW | RF_DIR);
	free(ws);

	for (size_t i = 0; i < sc->nmounts; i++) {
		const struct mount *m = &sc->mounts[i];
		char *src = pathstillreal(m->source, "mount", &st, e);
		if (!src)
			goto fail;
		/* the manifest's targets passed mounttargetbad; the runner's own (the runs folder in
		 * /workspace, skills in /skills) lie where the sandbox puts them */
		if (!m->target || m->target[0] != '/' || strstr(m->target, "/../") || strcmp(m->target, "/") == 0 ||
		    (strlen(m->target) >= 3 && strcmp(m->target + strlen(m->target) - 3, "/..") == 0)) {
			free(src);
			errc(e, ERR_INPUT, "sandbox mount %s: the target must be an absolute path", m->source);
			goto fail;
		}
		if (pointin(r, m->target, &shadows, e) < 0) {
			free(src);
			goto fail;
		}
		addsource(r, src, &st, m->target, (m->rw ? RF_RW : 0) | (S_ISDIR(st.st_mode) ? RF_DIR : 0));
		free(src);
	}
	/* the folders shadowed for mount points read-only again, then the writable mounts in them
	 * bound again on top (the read-only bind covers what lies below it) */
	for (size_t i = 0; i < shadows.n; i++)
		add(r, R_ROSELF, NULL, shadows.v[i], 0);
	for (size_t i = 0; shadows.n && i < sc->nmounts; i++) {
		const struct mount *m = &sc->mounts[i];
		char *src = m->rw ? pathstillreal(m->source, "mount", &st, e) : NULL;
		if (m->rw && !src)
			goto fail;
		if (src)
			addsource(r, src, &st, m->target, RF_RW | (S_ISDIR(st.st_mode) ? RF_DIR : 0));
		free(src);
	}
	strvfree(&shadows);
	return 0;
fail:
	strvfree(&shadows);
	rootfsfree(r);
	return -1;
}

void rootfsadd(struct rootfs *r, enum ropkind kind, const char *src, const char *dst, unsigned flags)
{
	add(r, kind, src, dst, flags);
}

/* The rest of path below dir ("" for dir itself, "/x" below it), or NULL when path is not in dir. */
static const char *below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		return path[0] == '/' ? path : NULL;
	if (strncmp(path, dir, n) != 0 || (path[n] && path[n] != '/'))
		return NULL;
	return path + n;
}

int rootfsreads(const struct sbxconf *c, const char *path, char *at, size_t n, struct err *e)
{
	struct rootfs r;
	if (rootfsplan(&r, c, e) < 0)
		return -1;
	int shown = 0;
	for (size_t i = 0; i < r.n && !shown; i++) {
		const struct rop *o = &r.ops[i];
		const char *rest = o->kind == R_BIND ? below(path, o->src) : NULL;
		if (!rest)
			continue;
		char *inside = xasprintf("%s%s", strcmp(o->dst, "/") == 0 && *rest ? "" : o->dst, rest);
		/* What is mounted later over that place decides: a mask, a tmpfs, a file or another bind. */
		int hidden = 0;
		for (size_t k = i + 1; k < r.n && !hidden; k++) {
			const struct rop *q = &r.ops[k];
			const char *qr = below(inside, q->dst);
			if (!qr)
				continue;
			if (q->kind == R_BIND) {
				char *host = xasprintf("%s%s", q->src, qr);
				hidden = strcmp(host, path) != 0;
				free(host);
			} else {
				hidden = 1;
			}
		}
		if (!hidden) {
			snprintf(at, n, "%s", inside);
			shown = 1;
		}
		free(inside);
	}
	rootfsfree(&r);
	return shown;
}

void rootfsfree(struct rootfs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->ops[i].src);
		free(r->ops[i].dst);
	}
	free(r->ops);
	memset(r, 0, sizeof *r);
}

/* ---- the build, inside the namespaces ---- */

/* Set flags on a mount and everything under it; a read-only bind needs this second step. */
static int setflags(const char *path, int ro, int dev, struct err *e)
{
	struct mattr a = {0};
	a.set = MOUNT_ATTR_NOSUID | (dev ? 0 : MOUNT_ATTR_NODEV) | (ro ? MOUNT_ATTR_RDONLY : 0);
	if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &a, sizeof a) == 0)
		return 0;
	if (errno != ENOSYS)
		return errf(e, "mount_setattr %s:", path);
	/* Before Linux 5.12: remount, repeating the flags the kernel locked, or it says EPERM. */
	struct statvfs sv;
	if (statvfs(path, &sv) < 0)
		return errf(e, "statvfs %s:", path);
	unsigned long fl = MS_REMOUNT | MS_BIND | MS_NOSUID | (dev ? 0 : MS_NODEV) | (ro ? MS_RDONLY : 0);
	static const struct { unsigned long st, ms; } keep[] = {
		{ST_NODEV, MS_NODEV}, {ST_NOEXEC, MS_NOEXEC}, {ST_NOATIME, MS_NOATIME},
		{ST_NODIRATIME, MS_NODIRATIME}, {ST_RELATIME, MS_RELATIME}, {ST_RDONLY, MS_RDONLY},
	};
	for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
		if (sv.f_flag & keep[i].st)
			fl |= keep[i].ms;
	if (mount("none", path, "none", fl, NULL) < 0)
		return errf(e, "remount %s:", path);
	return 0;
}

/* mkdir -p, trying the last component first: the parent nearly always exists. */
static int mkdirp(const char *path, struct err *e)
{
	struct stat st;
	if (mkdir(path, 0755) == 0 || (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	if (errno != ENOENT)
		return errf(e, "mkdir %s:", path);
	return mkdirs(path, 0755, e);
}

/* mkdirp of dst's parent (dst is absolute). No malloc: init builds the root (namespace.c says why). */
static int mkparent(const char *dst, struct err *e)
{
	char parent[PATH_MAX];
	if (snprintf(parent, sizeof parent, "%s", dst) >= (int)sizeof parent) {
		errno = ENAMETOOLONG;
		return errf(e, "mkdir %s:", dst);
	}
	char *slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return 0; /* the root */
	*slash = 0;
	return mkdirp(parent, e);
}

/* An empty file at dst to mount on; whatever is there already will do (mknod neither
   opens nor follows it). The parent nearly always exists. */
static int mkfile(const char *dst, struct err *e)
{
	if (mknod(dst, S_IFREG | 0644, 0) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return errf(e, "create %s:", dst);
	if (mkparent(dst, e) < 0)
		return -1;
	if (mknod(dst, S_IFREG | 0644, 0) == 0 || errno == EEXIST)
		return 0;
	return errf(e, "create %s:", dst);
}

/* Make the mount point for dst: a directory, or an empty file. */
static int mkpoint(const char *dst, int dir, struct err *e)
{
	if ((dir ? mkdirp(dst, e) : mkfile(dst, e)) == 0)
		return 0;
	if (errno == EROFS)
		errf(e, "mount point %s: it would have to be made in a read-only folder; pick a target that exists "
		        "or lies outside the system folders", dst + strlen("/newroot"));
	return -1;
}

static int bind(const char *src, const char *dst, int ro, int dev, struct err *e)
{
	if (mount(src, dst, "none", MS_BIND | MS_REC, NULL) < 0)
		return errf(e, "bind %s on %s:", src, dst);
	return setflags(dst, ro, dev, e);
}

/* Bind from the read-only staging folder: the new mount copies its flags, so no second step. */
static int rbind(const char *src, const char *dst, struct err *e)
{
	if (mount(src, dst, "none", MS_BIND, NULL) < 0)
		return errf(e, "bind %s on %s:", src, dst);
	return 0;
}

/* Where the content of an R_FILE for dst is staged. */
static void filename(char *out, size_t n, const char *dst)
{
	snprintf(out, n, "/.ro/file%s", dst);
	for (char *p = out + 8; *p; p++)
		if (*p == '/')
			*p = '_';
}

/* The staging folder: the mask sources (an empty file and folder nobody may read) and
   the generated files, made read-only once. */
static int stage(const struct rootfs *r, struct err *e)
{
	char path[PATH_MAX];
	if (mkdir("/.ro", 0755) < 0 || mkdir("/.ro/emptydir", 0) < 0)
		return errf(e, "staging folder:");
	int fd = open("/.ro/empty", O_WRONLY | O_CREAT | O_CLOEXEC, 0);
	if (fd < 0)
		return errf(e, "staging folder:");
	close(fd);
	for (size_t i = 0; i < r->n; i++) {
		if (r->ops[i].kind != R_FILE)
			continue;
		filename(path, sizeof path, r->ops[i].dst);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return errf(e, "create %s:", path);
		ssize_t n = write(fd, r->ops[i].src, strlen(r->ops[i].src));
		close(fd);
		if (n != (ssize_t)strlen(r->ops[i].src))
			return errf(e, "write %s:", path);
	}
	return bind("/.ro", "/.ro", 1, 0, e);
}

static int buildop(const struct rop *o, struct err *e)
{
	char dst[PATH_MAX], src[PATH_MAX];
	struct stat st;
	snprintf(dst, sizeof dst, "/newroot%s", o->dst);
	switch (o->kind) {
	case R_BIND:
		snprintf(src, sizeof src, "/oldroot%s", o->src);
		if (mkpoint(dst, o->flags & RF_DIR, e) < 0)
			return -1;
		if (o->flags & RF_DEV) /* device nodes: nothing to execute, setuid means nothing */
			return rbind(src, dst, e);
		if (bind(src, dst, !(o->flags & RF_RW), 0, e) < 0)
			return -1;
		/* A source checked when planned must be what got bound: a link made on its way since
		   (a step's, before this sandbox restarted) was followed by the bind. */
		if (o->ino && (stat(dst, &st) < 0 || st.st_dev != o->dev || st.st_ino != o->ino))
			return errf(e, "bind %s on %s: it is no longer what it was when planned (a name on its way became a "
			               "symbolic link?); refused", o->src, o->dst);
		return 0;
	case R_SYMLINK: /* the parent nearly always exists */
		if (symlink(o->src, dst) == 0)
			return 0;
		if (errno != ENOENT || mkparent(dst, e) < 0 || symlink(o->src, dst) < 0)
			return errf(e, "symlink %s:", o->dst);
		return 0;
	case R_TMPFS:
		if (mkpoint(dst, 1, e) < 0)
			return -1;
		if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, o->src) < 0)
			return errf(e, "tmpfs on %s:", o->dst);
		return 0;
	case R_PROC:
		if (mkpoint(dst, 1, e) < 0)
			return -1;
		if (mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			return errf(e, "mount a fresh /proc (a /proc with hidden parts, as in a container, prevents it):");
		return 0;
	case R_DEVPTS:
		if (mkpoint(dst, 1, e) < 0)
			return -1;
		if (mount("devpts", dst, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") < 0)
			return errf(e, "devpts on %s:", o->dst);
		return 0;
	case R_FILE:
		filename(src, sizeof src, o->dst);
		if (mkpoint(dst, 0, e) < 0)
			return -1;
		return rbind(src, dst, e);
	case R_MASK:
		if (lstat(dst, &st) < 0 || S_ISLNK(st.st_mode))
			return (o->flags & RF_OPTIONAL) ? 0 : errf(e, "mask %s:", o->dst);
		return rbind(S_ISDIR(st.st_mode) ? "/.ro/emptydir" : "/.ro/empty", dst, e);
	case R_ROSELF:
		if (lstat(dst, &st) < 0)
			return (o->flags & RF_OPTIONAL) ? 0 : errf(e, "%s:", o->dst);
		return bind(dst, dst, 1, 0, e);
	}
	return errf(e, "unknown mount step");
}

int rootfsbuild(const struct rootfs *r, struct err *e)
{
	/* Nothing we mount may propagate back to the host. */
	if (mount("none", "/", "none", MS_SLAVE | MS_REC, NULL) < 0)
		return errf(e, "make / a slave mount:");
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0)
		return errf(e, "tmpfs base on /tmp:");
	if (chdir("/tmp") < 0 || mkdir("newroot", 0755) < 0 || mkdir("oldroot", 0755) < 0)
		return errf(e, "base directories:");
	if (mount("tmpfs", "newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return errf(e, "tmpfs root:");
	if (syscall(SYS_pivot_root, ".", "oldroot") < 0)
		return errf(e, "pivot_root:");
	if (chdir("/") < 0)
		return errf(e, "chdir /:");
	if (stage(r, e) < 0)
		return -1;
	for (size_t i = 0; i < r->n; i++)
		if (buildop(&r->ops[i], e) < 0)
			return -1;
	if (umount2("/oldroot", MNT_DETACH) < 0)
		return errf(e, "detach the old root:");
	if (chdir("/newroot") < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return errf(e, "pivot into the new root:");
	if (mount("none", "/", "none", MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		return errf(e, "make the root read-only:");
	return 0;
}
