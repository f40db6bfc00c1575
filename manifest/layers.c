/* layers: where a user's defaults and the admin policy are, and whether the policy is trusted. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "layers.h"

char *layersuserpath(void)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	if (x && *x == '/')
		return xasprintf("%s/nightshift/config.yaml", x);
	if (h && *h == '/') /* a relative HOME would name a file under whatever folder nightshift ran in */
		return xasprintf("%s/.config/nightshift/config.yaml", h);
	return NULL;
}

/* One component of the admin policy's path: owned by root, not writable by group or others. */
static int trusted(const char *p, const struct stat *st, const char *what, struct err *e)
{
	if (st->st_uid != 0)
		return errc(e, ERR_INPUT, "%s: the admin policy is refused: %s %s is owned by uid %u, not root", ADMINPOLICY,
		            what, p, (unsigned)st->st_uid);
	if ((st->st_mode & 022) && !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX)))
		return errc(e, ERR_INPUT, "%s: the admin policy is refused: %s %s is writable by %s (chmod go-w %s)",
		            ADMINPOLICY, what, p, st->st_mode & 002 ? "anyone" : "its group", p);
	return 0;
}

int layersadmincheck(const char *path, struct err *e)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		if (errno == EACCES)
			return errc(e, ERR_INPUT, "%s: the admin policy cannot be read by uid %u, so nothing runs: its folders must "
			            "be searchable by everyone who runs nightshift (chmod 755 on each)", path, (unsigned)getuid());
		return errc(e, ERR_INPUT, "%s:", path);
	}
	if (!S_ISREG(st.st_mode))
		return errc(e, ERR_INPUT, "%s: the admin policy is refused: not a regular file (a link or other)", path);
	if (trusted(path, &st, "the file", e) < 0)
		return -1;
	/* Every folder above it too: whoever may replace the file decides the policy. */
	char *dir = xstrdup(path);
	int rc = 1;
	for (char *slash; rc > 0 && (slash = strrchr(dir, '/'));) {
		*slash = 0;
		const char *d = *dir ? dir : "/";
		if (stat(d, &st) < 0)
			rc = errc(e, ERR_INPUT, "%s:", d);
		else if (trusted(d, &st, "its folder", e) < 0)
			rc = -1;
		if (!*dir)
			break;
	}
	free(dir);
	if (rc > 0 && access(path, R_OK) < 0 && errno == EACCES)
		return errc(e, ERR_INPUT, "%s: the admin policy cannot be read by uid %u, so nothing runs: it must be readable "
		            "by everyone who runs nightshift (chmod 644 %s)", path, (unsigned)getuid(), path);
	return rc;
}

const char *layerstesthook(void)
{
	static const char *const hooks[] = {"NIGHTSHIFT_TEST_RESOLVE", NULL};
	for (size_t i = 0; hooks[i]; i++)
		if (getenv(hooks[i]) && *getenv(hooks[i]))
			return hooks[i];
	return NULL;
}

/* A group that is the user's own (a user private group): named as the user, no other member. */
static int owngroup(gid_t gid, uid_t uid)
{
	struct passwd *pw = getpwuid(uid);
	char name[256];
	if (!pw || snprintf(name, sizeof name, "%s", pw->pw_name) >= (int)sizeof name)
		return 0;
	struct group *gr = getgrgid(gid);
	if (!gr || strcmp(gr->gr_name, name) != 0)
		return 0;
	for (char **m = gr->gr_mem; *m; m++)
		if (strcmp(*m, name) != 0)
			return 0;
	return 1;
}

/* One name on the way to the user's defaults: the user's or root's, writable by no one else. */
static int usertrusted(const char *cfg, const char *p, const struct stat *st, const char *what, struct err *e)
{
	uid_t me = geteuid();
	/* a HOME another uid owns (a container job's /github/home is the runner's) is no folder to chown:
	 * the defaults can live in a folder of the user's own */
	if (st->st_uid != me && st->st_uid != 0)
		return errc(e, ERR_INPUT, "%s: your defaults are refused: %s %s is owned by uid %u, not you (uid %u), who "
		            "could change them (chown or move it, or keep them in a folder of your own: "
		            "XDG_CONFIG_HOME=DIR reads DIR/nightshift/config.yaml)",
		            cfg, what, p, (unsigned)st->st_uid, (unsigned)me);
	int sticky = S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX);
	if ((st->st_mode & 002) && !sticky)
		return errc(e, ERR_INPUT, "%s: your defaults are refused: %s %s is writable by anyone (chmod go-w %s)", cfg,
		            what, p, p);
	if ((st->st_mode & 020) && !sticky && !owngroup(st->st_gid, me))
		return errc(e, ERR_INPUT, "%s: your defaults are refused: %s %s is writable by its group (chmod go-w %s)", cfg,
		            what, p, p);
	return 0;
}

int layersusercheck(const char *path, struct err *e)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : errc(e, ERR_INPUT, "%s:", path);
	char *real = realpath(path, NULL);
	if (!real)
		return errc(e, ERR_INPUT, "%s:", path);
	int rc = usertrusted(path, real, &st, "the file", e) < 0 ? -1 : 1;
	/* every folder above it too: whoever may replace the file decides the user's defaults */
	for (char *slash; rc > 0 && (slash = strrchr(real, '/'));) {
		*slash = 0;
		const char *d = *real ? real : "/";
		if (stat(d, &st) < 0)
			rc = errc(e, ERR_INPUT, "%s:", d);
		else if (usertrusted(path, d, &st, "its folder", e) < 0)
			rc = -1;
		if (!*real)
			break;
	}
	free(real);
	return rc;
}
