/* carry: copy a finished run's job folders and layers into a new run directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "carry.h"
#include "../util/copy.h"

int carryjob(const char *from, const char *to, const char *id, struct err *e)
{
	char *s = xasprintf("%s/jobs/%s", from, id), *t = xasprintf("%s/jobs/%s", to, id);
	struct stat st;
	int rc;
	if (lstat(s, &st) < 0 || !S_ISDIR(st.st_mode))
		rc = errc(e, 2, "%s is not a folder", s);
	else if (lstat(t, &st) == 0)
		rc = errc(e, 2, "%s is there already", t);
	else
		rc = copytree(s, t, e);
	free(s);
	free(t);
	return rc;
}

static int numbered(const char *name)
{
	size_t digits = strspn(name, "0123456789");
	return digits >= 4 && strcmp(name + digits, ".tar.zst") == 0;
}

static int carrydir(const char *src, const char *dst, int top, struct err *e)
{
	DIR *d = opendir(src);
	if (!d)
		return errno == ENOENT ? 0 : errc(e, 2, "%s:", src);
	struct dirent *de;
	int rc = mkdirs(dst, 0755, e);
	while (rc == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *s = pathjoin(src, de->d_name), *t = pathjoin(dst, de->d_name);
		struct stat st;
		if (lstat(s, &st) < 0)
			rc = errc(e, 2, "%s:", s);
		else if (S_ISREG(st.st_mode) && numbered(de->d_name))
			rc = copyfile(s, t, 1, e);
		else if (S_ISDIR(st.st_mode) && top)
			rc = carrydir(s, t, 0, e); /* a workspace's chain */
		free(s);
		free(t);
	}
	closedir(d);
	return rc;
}

int carrylayers(const char *from, const char *to, struct err *e)
{
	char *s = pathjoin(from, "snapshots"), *t = pathjoin(to, "snapshots");
	int rc = carrydir(s, t, 1, e);
	free(s);
	free(t);
	return rc;
}
