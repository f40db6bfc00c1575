/* cli: what every subcommand shares: usage errors, reporting, RUN arguments, loading a manifest. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../artifacts/rundir.h"
#include "../artifacts/sign.h"
#include "../snapshot/snapshot.h"
#include "../policy/rulecheck.h"
#include "../run/keyreach.h"
#include "../run/run.h"
#include "cmd.h"
#include "gha.h"

int usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	char msg[2048];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	termprintf(stderr, "nightshift: %s: %s\n(see nightshift %s --help)\n", cmd, msg, cmd);
	if (ghaactive()) {
		char *full = xasprintf("%s: %s", cmd, msg);
		ghamistake(stderr, full);
		free(full);
	}
	return EXIT_USAGE;
}

int exitfor(enum errkind kind)
{
	static const int codes[] = {
	    [ERR_FAIL] = EXIT_FAILED, [ERR_INPUT] = EXIT_USAGE,     [ERR_ABORT] = EXIT_ABORT,
	    [ERR_VERIFY] = EXIT_DIVERGED, [ERR_INTR] = EXIT_INTERRUPTED,
	};
	return (unsigned)kind < sizeof codes / sizeof *codes ? codes[kind] : EXIT_FAILED;
}

int exitforrun(int end)
{
	static const int codes[] = {
	    [RUN_SUCCEEDED] = EXIT_OK, [RUN_FAILED] = EXIT_FAILED,
	    [RUN_ABORTED] = EXIT_ABORT, [RUN_CANCELLED] = EXIT_INTERRUPTED,
	};
	return end >= 0 && (unsigned)end < sizeof codes / sizeof *codes ? codes[end] : EXIT_FAILED;
}

int report(const struct err *e)
{
	termprintf(stderr, "nightshift: %s\n", e->msg);
	if (e->kind == ERR_INPUT)
		ghamistake(stderr, e->msg);
	return exitfor(e->kind);
}

int runopen(const char *arg, int64_t maxunpack, char **dir, char **tmp, struct err *e)
{
	struct stat st;
	*dir = *tmp = NULL;
	if (stat(arg, &st) < 0)
		return errc(e, ERR_INPUT, "%s: no such run directory or archive", arg);
	if (S_ISDIR(st.st_mode)) {
		if (!(*dir = realpath(arg, NULL)))
			return errc(e, ERR_INPUT, "%s:", arg);
		if (!rundirisrun(*dir)) {
			free(*dir);
			*dir = NULL;
			return errc(e, ERR_INPUT, "%s: not a run directory (no run.json, SHA256SUMS or jobs/ folder)", arg);
		}
	} else if (snapunpack(arg, maxunpack, tmp, dir, e) < 0) {
		return -1;
	}
	/* Readers of a run (audit, diff, report, restore, export, replay) follow no link in it and
	 * open no fifo or device: a run directory that holds one is refused as verification refuses it. */
	if (rundirshape(*dir, ERR_VERIFY, e) < 0) {
		runclose(*dir, *tmp);
		*dir = *tmp = NULL;
		return -1;
	}
	return 0;
}

int maxunpackflag(const char *cmd, int argc, char **argv, int *i, int64_t *max)
{
	if (!flagis(argv[*i], "--max-unpack"))
		return -1;
	const char *v = flagarg(cmd, argc, argv, i, "a size (e.g. 8G)");
	if (!v)
		return EXIT_USAGE;
	if (parsesize(v, max) < 0 || *max < 1)
		return usage(cmd, "--max-unpack %s: want a size such as 512M or 8G", v);
	return EXIT_OK;
}

void runclose(char *dir, char *tmp)
{
	if (tmp)
		snapremove(tmp);
	free(tmp);
	free(dir);
}

int positional(const char *cmd, const char *arg, const char **slot, const char *what)
{
	if (arg[0] == '-' && arg[1])
		return usage(cmd, "unknown flag %s", arg);
	if (*slot)
		return usage(cmd, "unexpected argument %s (one %s at a time)", arg, what);
	*slot = arg;
	return 0;
}

int flagis(const char *arg, const char *flag)
{
	size_t n = strlen(flag);
	return strncmp(arg, flag, n) == 0 && (arg[n] == 0 || arg[n] == '=');
}

/* The value of flag at argv[*i] ("--flag V" or "--flag=V"), advancing *i past a separate value;
 * NULL when it is missing. */
static const char *flagval(int argc, char **argv, int *i, const char *flag)
{
	size_t n = strlen(flag);
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

const char *flagarg(const char *cmd, int argc, char **argv, int *i, const char *what)
{
	const char *a = argv[*i];
	int n = (int)strcspn(a, "=");
	char flag[64];
	snprintf(flag, sizeof flag, "%.*s", n, a);
	const char *v = flagval(argc, argv, i, flag);
	if (!v || !*v) {
		usage(cmd, "%s needs %s", flag, what);
		return NULL;
	}
	return v;
}

int flagnoval(const char *cmd, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq)
		return EXIT_OK;
	return usage(cmd, "%.*s takes no value (got %s)", (int)(eq - arg), arg, arg);
}

int setflag(const char *cmd, int argc, char **argv, int *i, struct strv *sets)
{
	const char *v = flagarg(cmd, argc, argv, i, "KEY=VALUE");
	if (!v)
		return EXIT_USAGE;
	if (!strchr(v, '=') || v[0] == '=')
		return usage(cmd, "--set %s: expected KEY=VALUE", v);
	strvadd(sets, v);
	return EXIT_OK;
}

int ishelp(const char *arg)
{
	return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int loadmanifest(struct manifest *m, const char *path, const struct loadopts *o, struct err *e)
{
	int rc = manifestloadopts(m, path, o, e);
	if (rc == 0 && (rc = rulecheck(m, &m->errors, e)) < 0)
		manifestsorterrors(m);
	if (rc == 0 || m->errors.n < 2)
		return rc;
	/* Every mistake, one a line (and an annotation each in Actions), then a count in e. */
	for (size_t i = 0; i < m->errors.n; i++) {
		termprintf(stderr, "nightshift: %s\n", m->errors.v[i]);
		ghamistake(stderr, m->errors.v[i]);
	}
	errc(e, ERR_INPUT, "%s: %zu mistakes%s", path, m->errors.n, m->errors.n >= MANIFEST_MAXERRORS ? " (the first ones)" : "");
	return -1;
}

int loadorsay(struct manifest *m, const char *path, const struct strv *sets)
{
	struct err e = {0};
	if (loadmanifest(m, path, &(struct loadopts){.sets = sets}, &e) == 0)
		return EXIT_OK;
	manifestfree(m);
	return report(&e);
}

int signersopt(const char *cmd, const char *path)
{
	struct stat st;
	int fd;
	if (!path)
		return EXIT_OK;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return usage(cmd, "--allowed-signers %s: %s", path, strerror(errno));
	int reg = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	close(fd);
	return reg ? EXIT_OK : usage(cmd, "--allowed-signers %s: not a regular file", path);
}

int signkeyopt(const char *cmd, const char *path, const struct manifest *m, struct signkey **k)
{
	const char *env = getenv("NIGHTSHIFT_SIGNING_KEY");
	*k = NULL;
	if (!path && env && *env)
		path = env;
	if (!path)
		return EXIT_OK;
	struct err e = {0};
	if (m && keyreach(m, path, &e) < 0)
		return usage(cmd, "%s", e.msg);
	if (signkeyload(path, k, &e) < 0)
		return usage(cmd, "%s", e.msg);
	return EXIT_OK;
}
