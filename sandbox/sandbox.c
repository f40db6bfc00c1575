/* sandbox: pick the backend a step's configuration names. */
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "rootfs.h"
#include "sandbox.h"

static const struct sbxops *backend(const struct sandboxconf *c)
{
	switch (c->backend) {
	case BACKEND_NAMESPACE: return &sbxnamespace;
	case BACKEND_DOCKER: return &sbxdocker;
	case BACKEND_NONE: return &sbxnone;
	default: return NULL;
	}
}

int sbxcheck(const struct sandboxconf *c, struct err *e)
{
	const struct sbxops *ops = backend(c);
	if (!ops)
		return errf(e, "unknown sandbox backend");
	return ops->check ? ops->check(c, e) : 0;
}

/* Can uid, with the groups gids, write in st's folder (write and search) or to st's file? */
static int canwrite(const struct stat *st, int uid, const gid_t *gids, int ngids)
{
	mode_t need = S_ISDIR(st->st_mode) ? 3 : 2; /* w and x for a folder, w for a file */
	if ((int)st->st_uid == uid)
		return (st->st_mode >> 6 & need) == need;
	for (int k = 0; k < ngids; k++)
		if (st->st_gid == gids[k])
			return (st->st_mode >> 3 & need) == need;
	return (st->st_mode & need) == need;
}

int sbxwritable(const struct sandboxconf *c, const char *workspace, struct err *e)
{
	/* none: the steps are the runner. namespace: outside, the runner's uid and groups (mapped to
	   the steps' uid inside, no capability over a file of an owner it does not map, even for
	   root). docker: sandbox.uid or 1000, with no other group (the engine's user has none unless
	   the image's /etc/group says). */
	if (c->backend != BACKEND_DOCKER && c->backend != BACKEND_NAMESPACE)
		return 0;
	int ns = c->backend == BACKEND_NAMESPACE;
	gid_t gids[256];
	int ngids = 1, uid = c->uid ? c->uid : SBX_STEPID;
	gids[0] = (gid_t)(c->uid ? c->gid : SBX_STEPID);
	if (ns) {
		uid = (int)getuid();
		gids[0] = getgid();
		int k = getgroups(255, gids + 1);
		ngids = 1 + (k > 0 ? k : 0);
	}
	for (size_t i = 0; i <= c->nmounts; i++) {
		const char *p = i ? c->mounts[i - 1].source : workspace;
		struct stat st;
		if ((i && !c->mounts[i - 1].rw) || !p || stat(p, &st) < 0 || canwrite(&st, uid, gids, ngids))
			continue;
		if (getxattr(p, "system.posix_acl_access", NULL, 0) >= 0)
			continue; /* an ACL may grant it: the kernel knows, not the mode bits */
		char what[96] = "the workspace";
		if (i)
			snprintf(what, sizeof what, "the mount at %.40s (mode: rw), from", c->mounts[i - 1].target);
		if (ns && (int)st.st_uid == uid) /* the user's own, closed to writing: the mode is the fix */
			return errc(e, ERR_INPUT,
			            "the namespace sandbox's steps are, outside, your uid %d and could not write %s %s: it is yours "
			            "but mode %04o. Remedy: chmod u+w %s (or give the job a worker that only reads)",
			            uid, what, p, (unsigned)(st.st_mode & 07777), p);
		if (ns)
			return errc(e, ERR_INPUT,
			            "the namespace sandbox's steps are, outside, your uid %d and could not write %s %s: it is owned "
			            "by uid %u, gid %u, mode %04o (inside, an owner the sandbox does not map shows as nobody). "
			            "Remedy: chown -R %d:%d %s, or run nightshift as uid %u",
			            uid, what, p, (unsigned)st.st_uid, (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777), uid,
			            (int)gids[0], p, (unsigned)st.st_uid);
		char fix[64] = "";
		if (st.st_uid != 0 && st.st_uid != 65534 && st.st_gid != 0 && st.st_gid != 65534)
			snprintf(fix, sizeof fix, st.st_gid == st.st_uid ? ", or set sandbox.uid: %u" : ", or set sandbox.uid: \"%u:%u\"",
			         (unsigned)st.st_uid, (unsigned)st.st_gid);
		return errc(e, ERR_INPUT,
		            "the docker sandbox's steps run as uid %d (sandbox.uid%s) and could not write %s %s: it is owned "
		            "by uid %u, gid %u, mode %04o. Remedy: chown -R %d:%d %s%s",
		            uid, c->uid ? "" : " unset: 1000:1000", what, p, (unsigned)st.st_uid, (unsigned)st.st_gid,
		            (unsigned)(st.st_mode & 07777), uid, (int)gids[0], p, fix);
	}
	return 0;
}

/* Whether path is dir or below it, dir resolved when it exists. */
static int within(const char *path, const char *dir)
{
	char *real = realpath(dir, NULL);
	const char *d = real ? real : dir;
	size_t n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		n--;
	int in = (n == 1 && d[0] == '/') || (strncmp(path, d, n) == 0 && (path[n] == '/' || !path[n]));
	free(real);
	return in;
}

int sbxreads(const struct sandboxconf *c, const char *workspace, const char *path, char *why, size_t n)
{
	if (c->backend == BACKEND_NONE) {
		snprintf(why, n, "sandbox backend none runs steps on this machine as you, with no isolation");
		return 1;
	}
	if (c->backend == BACKEND_NAMESPACE) {
		char at[4096];
		struct err e = {0};
		struct sbxconf sc = {.conf = c, .workspace = workspace};
		int rc = rootfsreads(&sc, path, at, sizeof at, &e);
		if (rc > 0)
			snprintf(why, n, "the namespace sandbox shows it to every step at %s (steps run as your user)", at);
		if (rc < 0) {
			/* a workspace or a mount not there yet: the system folders as an empty workspace shows them */
			char *tmp = tmpfolder("nightshift-view", &e);
			struct sandboxconf bare = *c;
			bare.nmounts = 0;
			sc = (struct sbxconf){.conf = &bare, .workspace = tmp};
			if (tmp) {
				rc = rootfsreads(&sc, path, at, sizeof at, &e);
				rmdir(tmp);
				free(tmp);
			}
			if (rc > 0)
				snprintf(why, n, "the namespace sandbox shows it to every step at %s (steps run as your user)", at);
			if (rc > 0)
				return 1;
		} else {
			return rc;
		}
	}
	/* docker binds the workspace and the mounts only; an unplanned namespace view counts them too */
	if (within(path, workspace)) {
		snprintf(why, n, "it lies in the workspace %s, which steps read and snapshots copy into the run", workspace);
		return 1;
	}
	for (size_t i = 0; i < c->nmounts; i++)
		if (within(path, c->mounts[i].source)) {
			snprintf(why, n, "it lies in %s, mounted into every step at %s", c->mounts[i].source, c->mounts[i].target);
			return 1;
		}
	return 0;
}

int sbxopen(struct sbx **s, const struct sbxconf *c, struct err *e)
{
	const struct sbxops *ops = backend(c->conf);
	if (!ops)
		return errf(e, "unknown sandbox backend");
	*s = NULL;
	if (ops->open(s, c, e) < 0)
		return -1;
	(*s)->ops = ops;
	return 0;
}

int sbxexec(struct sbx *s, const char *command, struct sbxresult *r, struct err *e)
{
	return sbxexecby(s, command, 0, r, e);
}

int sbxexecby(struct sbx *s, const char *command, int64_t until, struct sbxresult *r, struct err *e)
{
	s->until = until;
	int rc = s->ops->exec(s, command, r, e);
	s->until = 0;
	return rc;
}

/* argv as one sh -c line that execs it, each word single-quoted. */
static char *shquote(char *const argv[])
{
	struct buf b = {0};
	bufputs(&b, "exec");
	for (size_t i = 0; argv[i]; i++) {
		bufputs(&b, " '");
		for (const char *c = argv[i]; *c; c++)
			if (*c == '\'')
				bufputs(&b, "'\\''");
			else
				bufputc(&b, *c);
		bufputc(&b, '\'');
	}
	return b.data;
}

int sbxspawn(struct sbx *s, char *const argv[], struct sbxproc *p, struct err *e)
{
	int in[2], out[2], err[2];
	p->in = p->out = p->err = -1;
	if (!s->ops->spawn)
		return errf(e, "the %s sandbox cannot run a long-running program (an MCP server) yet", s->ops->name);
	if (!argv[0])
		return errf(e, "nothing to run");
	if (pipe2(in, O_CLOEXEC) < 0)
		return errf(e, "pipe:");
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]), close(in[1]);
		return errf(e, "pipe:");
	}
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		return errf(e, "pipe:");
	}
	char *cmd = shquote(argv);
	int fds[3] = {in[0], out[1], err[1]};
	int rc = s->ops->spawn(s, cmd, fds, e);
	free(cmd);
	close(in[0]), close(out[1]), close(err[1]);
	if (rc < 0) {
		close(in[1]), close(out[0]), close(err[0]);
		return -1;
	}
	p->in = in[1], p->out = out[0], p->err = err[0];
	return 0;
}

size_t sbxnet(struct sbx *s, struct netconn **out, struct netmore *more, int ending)
{
	struct egress *g = s && s->ops->egress ? s->ops->egress(s) : NULL;
	*out = NULL;
	*more = (struct netmore){0, 0};
	return g ? egresstake(g, out, more, 0, ending) : 0;
}

void sbxclose(struct sbx *s)
{
	if (s)
		s->ops->close(s);
}

