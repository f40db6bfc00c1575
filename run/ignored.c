/* ignored: the host's git answers, in a repository of our own over the workspace as work tree. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ignored.h"

enum { ANSWERMAX = 256 << 20 }; /* git's answer: four fields per path asked */

/* A path git may be asked about: relative, no "." or ".." segment, no newline tricks needed (-z). */
static int askable(const char *p)
{
	if (!*p || *p == '/')
		return 0;
	for (const char *s = p; *s;) {
		const char *end = strchrnul(s, '/');
		size_t n = (size_t)(end - s);
		if ((n == 0 && *end) || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		if (!*end)
			break;
		s = end + 1;
	}
	return 1;
}

/* An empty repository git accepts as GIT_DIR: HEAD, objects/, refs/. */
static int emptyrepo(const char *dir, struct err *e)
{
	char *p = pathjoin(dir, "objects"), *q = pathjoin(dir, "refs"), *h = pathjoin(dir, "HEAD");
	int rc = mkdir(p, 0700) < 0 || mkdir(q, 0700) < 0 ? errf(e, "%s:", dir) : 0;
	if (rc == 0)
		rc = writefile(h, "ref: refs/heads/main\n", 21, e);
	free(p);
	free(q);
	free(h);
	return rc;
}

int gitignored(const char *ws, const struct strv *paths, unsigned char *flags, struct err *e)
{
	memset(flags, 0, paths->n);
	char *home = tmpfolder("nightshift-git", e);
	if (!home)
		return -1;
	char *gitdir = pathjoin(home, "repo");
	char *in = pathjoin(home, "paths");
	struct buf q = {0};
	size_t *asked = xcalloc(paths->n + 1, sizeof *asked), nasked = 0;
	for (size_t i = 0; i < paths->n; i++)
		if (askable(paths->v[i])) {
			bufadd(&q, paths->v[i], strlen(paths->v[i]) + 1);
			asked[nasked++] = i;
		}
	int rc = mkdir(gitdir, 0700) < 0 ? errf(e, "%s:", gitdir) : emptyrepo(gitdir, e);
	if (rc == 0)
		rc = writefile(in, q.data ? q.data : "", q.len, e);
	int infd = rc == 0 ? open(in, O_RDONLY | O_CLOEXEC) : -1;
	int out[2] = {-1, -1};
	if (rc == 0 && (infd < 0 || pipe2(out, O_CLOEXEC) < 0))
		rc = errf(e, "git check-ignore:");
	char *env[8];
	env[0] = xasprintf("PATH=%s", "/usr/local/bin:/usr/bin:/bin");
	env[1] = xasprintf("HOME=%s", home);
	env[2] = xasprintf("XDG_CONFIG_HOME=%s", home);
	env[3] = xasprintf("GIT_DIR=%s", gitdir);
	env[4] = xstrdup("GIT_WORK_TREE=."); /* the child starts in ws */
	env[5] = xstrdup("GIT_CONFIG_NOSYSTEM=1");
	env[6] = xstrdup("GIT_CONFIG_GLOBAL=/dev/null");
	env[7] = NULL;
	char *argv[] = {"git", "check-ignore", "-z", "-v", "-n", "--stdin", "--no-index", NULL};
	pid_t pid = -1;
	int notfound = 0;
	if (rc == 0 && nasked) {
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, infd, 0);
		posix_spawn_file_actions_adddup2(&fa, out[1], 1);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addchdir_np(&fa, ws);
		int err = 0;
		const char *dirs[] = {"/usr/local/bin/git", "/usr/bin/git", "/bin/git", NULL};
		int tried = 0;
		for (int k = 0; dirs[k]; k++) {
			if (access(dirs[k], X_OK) != 0)
				continue;
			tried = 1;
			err = posix_spawn(&pid, dirs[k], &fa, NULL, argv, env);
			break;
		}
		posix_spawn_file_actions_destroy(&fa);
		if (!tried)
			notfound = 1;
		else if (err)
			errno = err, rc = errf(e, "git check-ignore:");
	}
	if (out[1] >= 0)
		close(out[1]);
	struct buf ans = {0};
	if (pid > 0) {
		char chunk[65536];
		ssize_t n;
		while ((n = read(out[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
			if (n > 0 && ans.len < ANSWERMAX)
				bufadd(&ans, chunk, (size_t)n);
		int st = 0;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		/* 0: some ignored, 1: none; anything else is a failure */
		if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 1))
			rc = errc(e, ERR_FAIL, "git check-ignore in %s failed (status %d)", ws, st);
	}
	/* -v -n: for each path asked, in order, source, line, pattern, path; source empty when none matched */
	const char *p = ans.data, *end = ans.data ? ans.data + ans.len : NULL;
	for (size_t i = 0; rc == 0 && p && i < nasked; i++) {
		const char *f[4];
		for (int k = 0; k < 4; k++) {
			const char *z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
			if (!z) {
				rc = errc(e, ERR_FAIL, "git check-ignore in %s: its answer is cut short", ws);
				break;
			}
			f[k] = p;
			p = z + 1;
		}
		if (rc == 0 && *f[0] && f[2][0] != '!')
			flags[asked[i]] = 1;
	}
	if (rc < 0)
		memset(flags, 0, paths->n);
	buffree(&ans);
	buffree(&q);
	free(asked);
	for (int k = 0; env[k]; k++)
		free(env[k]);
	if (infd >= 0)
		close(infd);
	if (out[0] >= 0)
		close(out[0]);
	unlink(in);
	char *sub[] = {"HEAD", "objects", "refs", NULL};
	for (int k = 0; sub[k]; k++) {
		char *s = pathjoin(gitdir, sub[k]);
		if (unlink(s) < 0)
			rmdir(s);
		free(s);
	}
	rmdir(gitdir);
	rmdir(home);
	free(in);
	free(gitdir);
	free(home);
	return rc < 0 ? -1 : notfound ? 1 : 0;
}
