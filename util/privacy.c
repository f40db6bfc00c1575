/* privacy: the umask of a run takes the workspace's privacy. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "privacy.h"

static int applied;
static mode_t usermask;

mode_t privacydeny(const char *path)
{
	char p[PATH_MAX], real[PATH_MAX];
	if (!path || !*path || strlen(path) >= sizeof p)
		return 0;
	strcpy(p, path);
	struct stat st;
	/* the nearest part of the path that exists: a --out folder may not be made yet */
	while (stat(p, &st) < 0) {
		char *slash = strrchr(p, '/');
		if (!slash)
			strcpy(p, ".");
		else if (slash == p)
			p[1] = 0;
		else
			*slash = 0;
	}
	if (!realpath(p, real))
		return 0;
	/* a class that cannot read the thing itself (a folder: list and enter it) gets nothing */
	mode_t need = S_ISDIR(st.st_mode) ? 5 : 4, deny = 0;
	if (((st.st_mode >> 3) & need) != need)
		deny |= 070;
	if ((st.st_mode & need) != need)
		deny |= 007;
	/* every folder above: one that a class cannot pass hides everything below from it */
	for (char *slash = strrchr(real, '/'); slash && real[1]; slash = strrchr(real, '/')) {
		if (slash == real)
			real[1] = 0;
		else
			*slash = 0;
		if (stat(real, &st) < 0)
			break;
		if (!(st.st_mode & S_IXGRP))
			deny |= 070;
		if (!(st.st_mode & S_IXOTH))
			deny |= 007;
	}
	return deny;
}

void privacyapply(mode_t deny)
{
	mode_t old = umask(0);
	if (!applied)
		usermask = old;
	applied = 1;
	umask(usermask | (deny & 077));
}

mode_t privacyumask(void)
{
	if (applied)
		return usermask;
	mode_t m = umask(0);
	umask(m);
	return m;
}
