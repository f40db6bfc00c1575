/* beneath: open beneath a folder, with openat2 or a walk that gives the same answers. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "beneath.h"
#include "util.h"

static pthread_once_t probed = PTHREAD_ONCE_INIT;
static int have; /* written once under probed, then only read; cleared atomically by a refusal */

static int forced(void)
{
	const char *f = getenv("NIGHTSHIFT_OPENAT2");
	return !f ? 0 : strcmp(f, "ENOSYS") == 0 ? ENOSYS : strcmp(f, "EPERM") == 0 ? EPERM : 0;
}

static void probe(void)
{
	int err = forced();
	if (!err) {
		struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
		int fd = (int)syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof how);
		err = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	}
	__atomic_store_n(&have, err != ENOSYS && err != EPERM, __ATOMIC_RELEASE);
}

int beneathopenat2(void)
{
	pthread_once(&probed, probe);
	return __atomic_load_n(&have, __ATOMIC_ACQUIRE);
}

/* Is fd on the device dev? (EXDEV when not) */
static int samedev(int fd, dev_t dev)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return 0;
	if (st.st_dev != dev)
		return errno = EXDEV, 0;
	return 1;
}

/* One component at a time, each opened with O_NOFOLLOW: a symlink anywhere is ELOOP (or ENOTDIR
 * for one in the middle, made ELOOP here), ".." is EXDEV, as openat2 answers. */
static int walk(int rootfd, const char *path, int flags, int opts)
{
	struct stat rs;
	if ((opts & BENEATH_NOXDEV) && fstat(rootfd, &rs) < 0)
		return -1;
	char *p = xstrdup(path);
	int dfd = rootfd, fd = -1;
	for (char *c = p;;) {
		char *slash = strchr(c, '/');
		if (slash)
			*slash = 0;
		if (strcmp(c, "..") == 0) {
			errno = EXDEV;
			break;
		}
		if (!slash || !slash[strspn(slash + 1, "/") + 1]) { /* the last component ("a/" too) */
			int f = flags | O_NOFOLLOW | O_CLOEXEC | (slash ? O_DIRECTORY : 0);
			fd = openat(dfd, *c ? c : ".", f, (flags & O_CREAT) ? 0644 : 0);
			if (fd >= 0 && (opts & BENEATH_NOXDEV) && !samedev(fd, rs.st_dev)) {
				close(fd);
				fd = -1;
			}
			break;
		}
		int next = *c ? openat(dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : dup(dfd);
		if (next < 0 && errno == ENOTDIR) { /* a symlink in the middle: as openat2 says it */
			struct stat ls;
			if (fstatat(dfd, c, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode))
				errno = ELOOP;
			else
				errno = ENOTDIR;
		}
		if (next >= 0 && (opts & BENEATH_NOXDEV) && !samedev(next, rs.st_dev)) {
			close(next);
			next = -1;
		}
		if (next < 0)
			break;
		if (dfd != rootfd)
			close(dfd);
		dfd = next;
		c = slash + 1;
	}
	int saved = errno;
	if (dfd != rootfd)
		close(dfd);
	free(p);
	errno = saved;
	return fd;
}

/* Does path have a ".." component? openat2 follows one that stays beneath; neither way does here. */
static int dotdot(const char *path)
{
	for (const char *c = path; (c = strstr(c, "..")); c += 2)
		if ((c == path || c[-1] == '/') && (c[2] == 0 || c[2] == '/'))
			return 1;
	return 0;
}

int openbeneath(int rootfd, const char *path, int flags, int opts)
{
	if (!*path)
		return errno = ENOENT, -1;
	if (path[0] == '/' || dotdot(path))
		return errno = EXDEV, -1;
	if (beneathopenat2()) {
		struct open_how how = {
			.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
			.mode = (flags & O_CREAT) ? 0644 : 0,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			           ((opts & BENEATH_NOXDEV) ? RESOLVE_NO_XDEV : 0),
		};
		int fd;
		do
			fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof how);
		while (fd < 0 && errno == EINTR);
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
		/* refused after the probe said yes (a filter installed since): the walk from now on */
		__atomic_store_n(&have, 0, __ATOMIC_RELEASE);
	}
	return walk(rootfd, path, flags, opts);
}

const char *beneathbad(const char *rel)
{
	size_t n = strlen(rel);
	if (!n)
		return "it is empty";
	if (rel[0] == '/')
		return "it is an absolute path";
	if (n > 1024)
		return "it is longer than 1024 bytes";
	for (const char *c = rel; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "it holds a control character";
	for (const char *c = rel;;) {
		size_t k = strcspn(c, "/");
		if (k == 0)
			return "it has an empty name (\"//\" or a trailing \"/\")";
		if ((k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
			return "it has a \".\" or \"..\" name";
		if (!c[k])
			return NULL;
		c += k + 1;
	}
}

int readbeneath(const char *root, const char *rel, size_t max, struct buf *out, struct err *e)
{
	int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = rfd < 0 ? -1 : openbeneath(rfd, rel, O_RDONLY | O_NONBLOCK, 0);
	int err = errno;
	if (rfd >= 0)
		close(rfd);
	if (fd < 0)
		return errc(e, ERR_INPUT, "%s/%.200s: %s", root, rel,
		            err == ELOOP ? "a name on the way is a symbolic link"
		            : err == EXDEV ? "not a path beneath the folder" : strerror(err));
	struct stat st;
	int trunc = 0, rc = 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		rc = errc(e, ERR_INPUT, "%s/%.200s: not a regular file", root, rel);
	else if (readfd(fd, max, out, &trunc) < 0)
		rc = errf(e, "read %s/%.200s:", root, rel);
	else if (trunc)
		rc = errc(e, ERR_INPUT, "%s/%.200s: larger than %zu bytes", root, rel, max);
	close(fd);
	if (rc < 0)
		buffree(out);
	return rc;
}
