/* sandbox: pick the backend a step's configuration names. */
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
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
			char tmp[] = "/tmp/nightshift-view-XXXXXX";
			struct sandboxconf bare = *c;
			bare.nmounts = 0;
			sc = (struct sbxconf){.conf = &bare, .workspace = tmp};
			if (mkdtemp(tmp)) {
				rc = rootfsreads(&sc, path, at, sizeof at, &e);
				rmdir(tmp);
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
	return s->ops->exec(s, command, r, e);
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

void sbxclose(struct sbx *s)
{
	if (s)
		s->ops->close(s);
}

