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
#include "../snapshot/layername.h"

int carryjob(const char *from, const char *to, const char *id, struct err *e)
{
	char *s = xasprintf("%s/jobs/%s", from, id), *t = xasprintf("%s/jobs/%s", to, id);
	struct stat st;
	int rc;
	if (lstat(s, &st) < 0 || !S_ISDIR(st.st_mode))
		rc = errc(e, ERR_INPUT, "%s is not a folder", s);
	else if (lstat(t, &st) == 0)
		rc = errc(e, ERR_INPUT, "%s is there already", t);
	else
		rc = copytree(s, t, e);
	free(s);
	free(t);
	return rc;
}

static int carrydir(const char *src, const char *dst, int top, int last, int closed, struct err *e)
{
	DIR *d = opendir(src);
	if (!d)
		return errno == ENOENT ? 0 : errc(e, ERR_INPUT, "%s:", src);
	struct dirent *de;
	int rc = mkdirs(dst, 0755, e);
	while (rc == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *s = pathjoin(src, de->d_name), *t = pathjoin(dst, de->d_name);
		struct stat st, there;
		enum layerkind kind = layerparse(de->d_name, NULL);
		if (lstat(s, &st) < 0)
			rc = errc(e, ERR_INPUT, "%s:", s);
		else if (S_ISREG(st.st_mode) && (kind == LAYER_STEP || kind == LAYER_OLDEND))
			rc = copyfile(s, t, 1, e);
		else if (S_ISREG(st.st_mode) && kind == LAYER_END && top && closed)
			rc = copyfile(s, t, 1, e); /* a chain the new run does not continue ends as it ended */
		else if (S_ISREG(st.st_mode) && kind == LAYER_END) {
			/* the workspace after the run's last step, as NNNN.end.tar.zst: the changes of the
			 * steps after the chain's last layer, so that they are not taken for the next run's */
			char *name = layerfile(LAYER_OLDEND, last);
			char *oe = pathjoin(dst, name), *had = pathjoin(src, name);
			if (lstat(had, &there) < 0) /* else the earlier run's, of the same step, is kept */
				rc = copyfile(s, oe, 1, e);
			free(name);
			free(oe);
			free(had);
		} else if (S_ISDIR(st.st_mode) && top)
			rc = carrydir(s, t, 0, last, 0, e); /* a workspace's chain */
		free(s);
		free(t);
	}
	closedir(d);
	return rc;
}

int carrylayers(const char *from, const char *to, int last, int closed, struct err *e)
{
	char *s = pathjoin(from, "snapshots"), *t = pathjoin(to, "snapshots");
	int rc = carrydir(s, t, 1, last, closed, e);
	free(s);
	free(t);
	return rc;
}

int carrychains(const char *from)
{
	char *s = pathjoin(from, "snapshots");
	DIR *d = opendir(s);
	int found = 0;
	struct dirent *de;
	while (d && !found && (de = readdir(d))) {
		struct stat st;
		char *p = pathjoin(s, de->d_name);
		found = de->d_name[0] != '.' && lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
		free(p);
	}
	if (d)
		closedir(d);
	free(s);
	return found;
}

int carrydrop(const char *to, const struct strv *keep, struct err *e)
{
	char *s = pathjoin(to, "snapshots");
	DIR *d = opendir(s);
	int rc = 0;
	struct dirent *de;
	while (d && rc == 0 && (de = readdir(d))) {
		int kept = de->d_name[0] == '.';
		for (size_t i = 0; !kept && i < keep->n; i++)
			kept = strcmp(keep->v[i], de->d_name) == 0;
		char *p = pathjoin(s, de->d_name);
		struct stat st;
		if (!kept && lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			/* only what carrylayers put there: numbered layers */
			DIR *c = opendir(p);
			struct dirent *ce;
			while (c && rc == 0 && (ce = readdir(c))) {
				if (strcmp(ce->d_name, ".") == 0 || strcmp(ce->d_name, "..") == 0)
					continue;
				char *f = pathjoin(p, ce->d_name);
				enum layerkind k = layerparse(ce->d_name, NULL);
				if ((k != LAYER_STEP && k != LAYER_OLDEND) || unlink(f) < 0)
					rc = errc(e, ERR_INPUT, "%s: cannot drop a carried chain's layer", f);
				free(f);
			}
			if (c)
				closedir(c);
			if (rc == 0 && rmdir(p) < 0)
				rc = errc(e, ERR_INPUT, "%s:", p);
		}
		free(p);
	}
	if (d)
		closedir(d);
	free(s);
	return rc;
}
