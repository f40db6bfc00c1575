/* preset: the rule sets behind "- { preset: NAME }". Every pattern allows a program whose
 * options that run commands or write files are in policy/danger.c's table; those options stay
 * refused, since no pattern here names one. Wrappers (xargs, timeout ...) are safe to allow:
 * what they run must be allowed on its own. */
#include <string.h>
#include "preset.h"

/* Commands that read the workspace and print: nothing here writes a file or runs code. */
static const char *const readonly[] = {
	"cat *", "head *", "tail *", "wc *", "ls *", "tree *", "stat *", "file *", "du *", "df *", "pwd",
	"echo *", "printf *", "true", "false", "test *", "[ *", "[[ *", ": *", "grep *", "egrep *", "fgrep *",
	"rg *", "find *", "sort *", "uniq *", "cut *", "tr *", "nl *", "tac *", "rev *", "column *", "fold *",
	"paste *", "join *", "diff *", "cmp *", "comm *", "jq *", "sed *", "awk *", "basename *", "dirname *",
	"realpath *", "readlink *", "which *", "type *", "command -v *", "date *", "whoami", "id *", "uname *",
	"hostname", "nproc", "md5sum *", "sha1sum *", "sha256sum *", "sha512sum *", "cksum *", "base64 *",
	"xxd *", "od *", "hexdump *", "strings *", "cd *", "tar -t* *", "tar t* *", "tar --list *",
	"unzip -l *", "unzip -Z *", "zcat *", "gzip -l *", "gzip -t *", "less -F *", "sleep *", "env", "printenv *",
	"xargs *", "timeout *", "time *", "nice *", "nohup *", "stdbuf *", "read *", "exit *", "return *",
	"shift *", "set *", "local *", "export *", "declare *", "unset *", NULL,
};

/* Git commands that read the repository; "git --no-pager S *" too. */
static const char *const gitread[] = {
	"git status *", "git log *", "git diff *", "git show *", "git blame *", "git rev-parse *",
	"git ls-files *", "git ls-tree *", "git cat-file *", "git describe *", "git shortlog *", "git grep *",
	"git rev-list *", "git merge-base *", "git name-rev *", "git show-ref *", "git for-each-ref *",
	"git count-objects *", "git whatchanged *", "git reflog", "git reflog show *", "git stash list *",
	"git stash show *", "git tag -l *", "git tag --list *", "git branch", "git branch --list *",
	"git branch -a *", "git branch -r *", "git branch -v *", "git branch -vv *", "git branch --show-current",
	"git branch --contains *", "git remote", "git remote -v", "git remote show *", "git --version",
	"git --no-pager status *", "git --no-pager log *", "git --no-pager diff *", "git --no-pager show *",
	"git --no-pager blame *", "git --no-pager grep *", "git -P log *", "git -P diff *", "git -P show *",
	NULL,
};

/* Building and testing a project: these run the project's code by design (inside the sandbox). */
static const char *const build[] = {
	"make *", "cmake *", "ctest *", "ninja *", "meson *", "cargo *", "rustc *", "go *", "gcc *", "g++ *",
	"cc *", "c++ *", "clang *", "clang++ *", "ld *", "ar *", "pkg-config *", "npm *", "npx *", "pnpm *",
	"yarn *", "node *", "tsc *", "python *", "python3 *", "pip *", "pip3 *", "pytest *", "tox *", "nox *",
	"uv *", "poetry *", "pipenv *", "ruff *", "mypy *", "black *", "flake8 *", "pylint *", "javac *",
	"java *", "mvn *", "gradle *", "./gradlew *", "./mvnw *", "dotnet *", "ruby *", "bundle *", "rake *",
	"gem *", "php *", "composer *", "source *", ". *", "sh *", "bash *", "mkdir *", "touch *", "chmod +x *",
	"./configure *", NULL,
};

const char *const presetnames[] = {"read-only", "git-read", "build", NULL};

/* Each preset; one that writes the workspace says so in its name (build writes its outputs).
 * The others allow redirections only to /dev/null and the step's /tmp. */
static const struct {
	const char *name;
	const char *const *rules;
	int writes;
} presets[] = {{"read-only", readonly, 0}, {"git-read", gitread, 0}, {"build", build, 1}};

const char *const *presetrules(const char *name)
{
	for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++)
		if (!strcmp(name, presets[k].name))
			return presets[k].rules;
	return NULL;
}

int presetwrites(const char *name)
{
	for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++)
		if (!strcmp(name, presets[k].name))
			return presets[k].writes;
	return 1;
}
