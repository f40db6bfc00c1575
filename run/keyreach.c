/* keyreach: steps run as the runner's own user, so a file mode keeps nothing from them: only a
 * place no sandbox shows does. The sandbox room says what each backend shows (sbxreads); here
 * every sandbox a step of the run can have is asked: each job's, with the workspace and mounts it
 * will have, and each worker's with every workspace, since a delegate runs in its own worker's
 * sandbox and its caller's workspace (run/agent.c delegatecall). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "../sandbox/sandbox.h"
#include "keyreach.h"

static const char where[] = "keep it where no step sees it, e.g. in ~/.ssh/ or another folder outside the "
                            "workspaces, the mounts and the system folders the sandbox shows (/usr, /opt, /etc, ...)";

/* A host path that still holds ${{ }} (a matrix made from a job's output): the folder before it,
 * which any value may lead below. */
static char *fixedpart(const char *p)
{
	const char *x = strstr(p, "${{");
	if (!x)
		return xstrdup(p);
	while (x > p && x[-1] != '/')
		x--;
	return x > p + 1 ? xasprintf("%.*s", (int)(x - p - 1), p) : xstrdup("/");
}

/* Whether a step in sandbox sc with workspace wsp could read real; why filled. */
static int reads(const struct sandboxconf *sc, const char *wsp, const char *real, char *why, size_t n)
{
	struct sandboxconf c = *sc;
	struct mount *mt = xcalloc(c.nmounts + 1, sizeof *mt);
	for (size_t i = 0; i < c.nmounts; i++) {
		mt[i] = c.mounts[i];
		mt[i].source = fixedpart(c.mounts[i].source);
	}
	c.mounts = mt;
	char *ws = fixedpart(wsp);
	int rc = sbxreads(&c, ws, real, why, n);
	free(ws);
	for (size_t i = 0; i < c.nmounts; i++)
		free(mt[i].source);
	free(mt);
	return rc;
}

/* Whether real is dir or below it. */
static int inside(const char *real, const char *dir)
{
	char *d = realpath(dir, NULL);
	size_t n = d ? strlen(d) : 0;
	int in = d && strncmp(real, d, n) == 0 && (real[n] == '/' || !real[n] || n == 1);
	free(d);
	return in;
}

int keyreach(const struct manifest *m, const char *key, struct err *e)
{
	char *real = realpath(key, NULL), why[1024];
	struct stat st;
	int rc = 0;
	if (!real || stat(real, &st) < 0) {
		free(real);
		return 0; /* loading it says why it cannot be read */
	}
	if (st.st_nlink > 1)
		rc = errc(e, ERR_INPUT, "signing key %s: it has %ld names (hard links), and a step may see another of "
		                        "them; keep one name only, and %s", key, (long)st.st_nlink, where);
	for (size_t i = 0; rc == 0 && i < m->njobs; i++) {
		const struct job *j = &m->jobs[i];
		if (reads(&j->sandbox, j->workspace ? j->workspace : m->workspace, real, why, sizeof why))
			rc = errc(e, ERR_INPUT, "signing key %s: the steps of job %s could read it (%s), and a step that reads "
			                        "it can sign anything as you; %s", key, j->id, why, where);
	}
	/* Any worker may run as a delegate, in its own sandbox and any job's workspace: every pair is
	 * asked, so no reachability reasoning can miss one. */
	for (size_t i = 0; rc == 0 && i < m->nworkers; i++)
		for (size_t k = 0; rc == 0 && k <= m->njobs; k++) {
			const char *ws = k < m->njobs && m->jobs[k].workspace ? m->jobs[k].workspace : m->workspace;
			if (ws && reads(&m->workers[i].sandbox, ws, real, why, sizeof why))
				rc = errc(e, ERR_INPUT, "signing key %s: the steps of worker %s (as a delegate) could read it "
				                        "(%s), and a step that reads it can sign anything as you; %s",
				          key, m->workers[i].name, why, where);
		}
	for (size_t i = 0; rc == 0 && i < m->nworkers; i++)
		for (size_t k = 0; rc == 0 && k < m->workers[i].skills.n; k++)
			if (inside(real, m->workers[i].skills.v[k]))
				rc = errc(e, ERR_INPUT, "signing key %s: it lies in %s, the skill folder worker %s shows every step "
				                        "at /skills/; %s", key, m->workers[i].skills.v[k], m->workers[i].name, where);
	free(real);
	return rc;
}
