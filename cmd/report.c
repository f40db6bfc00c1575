/* report: nightshift report RUN [--out FILE]: one self-contained HTML page of a run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "../artifacts/report.h"
#include "../util/term.h"

static const char helptext[] =
	"usage: nightshift report RUN [--out FILE]\n"
	"\n"
	"Writes one HTML file that shows the run: its jobs with status, tokens and cost, each job's\n"
	"turns and tool calls with arguments, decision and rule, exit code and output, what each step\n"
	"changed in the workspace (with diffs of small text files), and whether the run verifies. The\n"
	"page loads nothing from anywhere (open it from a download or file://); everything in it that\n"
	"came from the run is escaped, and its Content-Security-Policy lets only its own script run.\n"
	"RUN is a run directory or its .tar.zst. The page goes to FILE (- for stdout); by default to\n"
	"RUN.html beside RUN. The path written is printed on stdout. Under GitHub Actions --out - is\n"
	"refused unless stdout is a regular file (the step's log would take the run's text for workflow\n"
	"commands), and so is a FILE that is the step's stdout or stderr (/dev/stdout, /dev/stderr). Snapshot layers that cannot be\n"
	"read (past --max-unpack, or not valid) leave the page without the workspace's changes, saying\n"
	"why, with a WARNING on stderr.\n"
	"\n" MAXUNPACKHELP
	"\n"
	"exit codes: 0 written, 2 usage or input error (not a run), 1 the page could not be written,\n"
	"4 the record cannot be read as one (a link or a fifo in RUN, an event line past 64 MiB)\n";

int cmdreport(int argc, char **argv)
{
	const char *run = NULL, *outpath = NULL;
	int64_t maxu = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int k;
		if (ishelp(a)) {
			fputs(helptext, stdout);
			return EXIT_OK;
		}
		if ((k = maxunpackflag("report", argc, argv, &i, &maxu)) >= 0) {
			if (k != EXIT_OK)
				return k;
		} else if (flagis(a, "--out")) {
			if (!(outpath = flagarg("report", argc, argv, &i, "a file (- for stdout)")))
				return EXIT_USAGE;
		} else if (positional("report", a, &run, "RUN") != 0) {
			return EXIT_USAGE;
		}
	}
	if (!run)
		return usage("report", "missing RUN (a run directory or its .tar.zst)");
	struct err e = {0}, warn = {0};
	char *dir, *tmp, *def = NULL;
	if (runopen(run, maxu, &dir, &tmp, &e) < 0)
		return report(&e);
	if (!outpath) {
		size_t n = strlen(run);
		while (n > 1 && run[n - 1] == '/')
			n--;
		if (n > 8 && strncmp(run + n - 8, ".tar.zst", 8) == 0)
			n -= 8;
		def = xasprintf("%.*s.html", (int)n, run);
		outpath = def;
	}
	int tostdout = strcmp(outpath, "-") == 0, code = EXIT_OK, fd = -1;
	if (tostdout && termactionslog(STDOUT_FILENO)) {
		runclose(dir, tmp);
		free(def);
		return usage("report", "--out -: under GitHub Actions stdout is the step's log, where the run's text "
		                       "could be taken for workflow commands; use --out FILE (or redirect stdout to a file)");
	}
	/* A new file beside outpath, renamed over it: never written through a link. A pipe or device
	 * only where --out names one. */
	char *part = NULL;
	if (!tostdout)
		fd = def ? tmpcreate(outpath, &part, &e) : outopen(outpath, &part, &e);
	if (fd >= 0 && termactionsout(fd)) { /* --out /dev/stdout and the like: "-" by another name */
		close(fd);
		if (part)
			unlink(part);
		free(part);
		runclose(dir, tmp);
		free(def);
		return usage("report", "--out: under GitHub Actions that file is the step's log, where the run's text could "
		                       "be taken for workflow commands; use --out FILE (or redirect stdout to a file)");
	}
	FILE *f = tostdout ? stdout : fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0) {
			close(fd);
			if (part)
				unlink(part);
		}
		termprintf(stderr, "nightshift: report: cannot write %s%s: %s\n", outpath,
		           def ? " (beside RUN, the default; --out FILE writes elsewhere)" : "", fd < 0 ? e.msg : strerror(errno));
		code = EXIT_FAILED;
	} else if (reportwrite(dir, maxu, f, &warn, &e) < 0) {
		code = report(&e);
		if (!tostdout) {
			fclose(f);
			if (part)
				unlink(part);
		}
	} else if (!tostdout && fclose(f) != 0) {
		fprintf(stderr, "nightshift: report: cannot write %s: %m\n", outpath);
		if (part)
			unlink(part);
		code = EXIT_FAILED;
	} else if (!tostdout && tmpplace(part, outpath, &e) < 0) {
		fprintf(stderr, "nightshift: report: cannot write %s: %s\n", outpath, e.msg);
		code = EXIT_FAILED;
	} else if (!tostdout) {
		puts(outpath);
	}
	if (warn.msg[0] && code == EXIT_OK)
		termprintf(stderr, "nightshift: report: WARNING: %s\n", warn.msg);
	free(part);
	free(def);
	runclose(dir, tmp);
	return code;
}
