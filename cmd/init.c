/* init: nightshift init [RECIPE] [--dir DIR] | --list: a recipe's files written into a repository. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd.h"
#include "recipes.h"

static const char helptext[] =
	"usage: nightshift init RECIPE [--dir DIR]\n"
	"       nightshift init --list\n"
	"\n"
	"Writes one recipe (a real nightly job: its manifest, worker files, README) into the repository\n"
	"at DIR (default .): .nightshift/RECIPE/ and its GitHub Actions workflow\n"
	".github/workflows/nightshift-RECIPE.yml. Nothing is ever overwritten: when one of the files is\n"
	"already there, nothing is written and init says which (exit 2). --list lists the recipes.\n"
	"Then: nightshift validate .nightshift/RECIPE/nightshift.yaml, and read its README.\n"
	"\n"
	"exit codes: 0 written, 2 usage, no such recipe, or a file already there, 1 a write failed\n";

/* The first heading of the recipe's README, as its one-line description. */
static void describe(const char *recipe, char *out, size_t n)
{
	snprintf(out, n, "%s", "");
	for (size_t i = 0; i < nrecipefiles; i++) {
		const struct recipefile *f = &recipefiles[i];
		size_t pl = strlen(f->path);
		if (strcmp(f->recipe, recipe) != 0 || pl < 10 || strcmp(f->path + pl - 10, "/README.md") != 0)
			continue;
		const char *h = f->len > 2 && !strncmp(f->data, "# ", 2) ? f->data + 2 : "";
		const char *nl = memchr(h, '\n', f->len - (size_t)(h - f->data));
		snprintf(out, n, "%.*s", nl ? (int)(nl - h) : 0, h);
	}
}

static int known(const char *recipe)
{
	for (size_t i = 0; i < nrecipefiles; i++)
		if (strcmp(recipefiles[i].recipe, recipe) == 0)
			return 1;
	return 0;
}

static void list(FILE *out)
{
	for (size_t i = 0; i < nrecipefiles; i++) {
		if (i && strcmp(recipefiles[i - 1].recipe, recipefiles[i].recipe) == 0)
			continue;
		char d[200];
		describe(recipefiles[i].recipe, d, sizeof d);
		fprintf(out, "%-14s %s\n", recipefiles[i].recipe, d);
	}
}

/* The first folder or file on the way to rel (beneath rootfd) that is a symlink, as "rel-prefix
 * -> target" (caller frees), or NULL: a checkout may hold .github or .nightshift as a link out of
 * the repository, and init writes nothing through one. */
static char *linkon(int rootfd, const char *rel)
{
	char *p = xstrdup(rel), *found = NULL;
	for (char *s = p;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = 0;
		struct stat st;
		if (fstatat(rootfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
			char to[4096];
			ssize_t n = readlinkat(rootfd, p, to, sizeof to - 1);
			to[n > 0 ? n : 0] = 0;
			found = xasprintf("%s -> %s", p, to);
		}
		*s = c;
		if (found || !c)
			break;
	}
	free(p);
	return found;
}

/* Make the folders above rel beneath rootfd, one by one, each made in its parent held open with
 * O_NOFOLLOW (never through a link); then create rel there, new. The open file, or -1 with errno
 * (ELOOP for a link on the way). */
static int create(int rootfd, const char *rel)
{
	char *p = xstrdup(rel);
	int cur = rootfd, fd = -1;
	char *name = p;
	for (char *s = strchr(name, '/'); s; s = strchr(name, '/')) {
		*s = 0;
		int next = -1;
		if (mkdirat(cur, name, 0755) == 0 || errno == EEXIST)
			next = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cur != rootfd)
			close(cur);
		cur = next;
		if (cur < 0)
			break;
		name = s + 1;
	}
	if (cur >= 0)
		fd = openat(cur, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	int saved = errno;
	if (cur >= 0 && cur != rootfd)
		close(cur);
	free(p);
	errno = saved;
	return fd;
}

int cmdinit(int argc, char **argv)
{
	const char *recipe = NULL, *dir = ".";
	int dolist = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (ishelp(a)) {
			fputs(helptext, stdout);
			return EXIT_OK;
		}
		if (flagis(a, "--list")) {
			if (flagnoval("init", a))
				return EXIT_USAGE;
			dolist = 1;
		} else if (flagis(a, "--dir")) {
			if (!(dir = flagarg("init", argc, argv, &i, "a folder (the repository)")))
				return EXIT_USAGE;
		} else if (positional("init", a, &recipe, "RECIPE") != 0) {
			return EXIT_USAGE;
		}
	}
	if (dolist) {
		list(stdout);
		return EXIT_OK;
	}
	if (!recipe) {
		fputs("nightshift: init: which recipe? one of:\n", stderr);
		list(stderr);
		return EXIT_USAGE;
	}
	if (!known(recipe)) {
		termprintf(stderr, "nightshift: init: no recipe '%s'; `nightshift init --list` lists them\n", recipe);
		return EXIT_USAGE;
	}
	struct stat st;
	int rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || fstat(rootfd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		if (rootfd >= 0)
			close(rootfd);
		return usage("init", "--dir %s: not a folder", dir);
	}
	/* Nothing is written when any file is there already, or when a folder or file on the way is
	 * a symlink (the checkout's, pointing anywhere). */
	for (size_t i = 0; i < nrecipefiles; i++) {
		if (strcmp(recipefiles[i].recipe, recipe) != 0)
			continue;
		char *p = pathjoin(dir, recipefiles[i].path), *link = linkon(rootfd, recipefiles[i].path);
		int there = !link && fstatat(rootfd, recipefiles[i].path, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (link)
			termprintf(stderr, "nightshift: init: %s/%s is a symlink; nothing written (init writes nothing "
			                   "through a link: make it a folder of the repository)\n", dir, link);
		else if (there)
			termprintf(stderr, "nightshift: init: %s is already there; nothing written (move it away, or "
			                   "compare it with `nightshift init %s --dir EMPTY_DIR`)\n", p, recipe);
		free(p);
		free(link);
		if (link || there) {
			close(rootfd);
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < nrecipefiles; i++) {
		const struct recipefile *f = &recipefiles[i];
		if (strcmp(f->recipe, recipe) != 0)
			continue;
		char *p = pathjoin(dir, f->path);
		int fd = create(rootfd, f->path);
		int ok = fd >= 0 && (f->len == 0 || write(fd, f->data, f->len) == (ssize_t)f->len);
		if (fd >= 0 && close(fd) < 0)
			ok = 0;
		if (!ok) {
			int err = errno;
			termprintf(stderr, "nightshift: init: %s: %s%s\n", p, strerror(err),
			           err == ELOOP || err == ENOTDIR ? " (a symlink or a file on the way: nothing written through it)" : "");
			free(p);
			close(rootfd);
			return err == EEXIST || err == ELOOP || err == ENOTDIR ? EXIT_USAGE : EXIT_FAILED;
		}
		termprintf(stdout, "%s\n", p);
		free(p);
	}
	close(rootfd);
	termprintf(stderr, "nightshift: init: next: read %s/.nightshift/%s/README.md, then `nightshift validate "
	                   "%s/.nightshift/%s/nightshift.yaml`\n", dir, recipe, dir, recipe);
	return EXIT_OK;
}
