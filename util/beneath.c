/* beneath: opening a path that a stranger chose, beneath a root, never through a link. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "beneath.h"
#include "util.h"

int openbeneath(int rootfd, const char *path, int flags)
{
	static int noopenat2;
	if (!noopenat2) {
		struct open_how how = {
			.flags = (uint64_t)flags | O_NOFOLLOW | O_CLOEXEC,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		int fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof how);
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
		noopenat2 = 1;
	}
	/* Without openat2: one component at a time, none of them a symlink. */
	if (path[0] == '/')
		return errno = EXDEV, -1;
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
		if (!slash) {
			fd = openat(dfd, *c ? c : ".", flags | O_NOFOLLOW | O_CLOEXEC);
			break;
		}
		int next = *c ? openat(dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : dup(dfd);
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
