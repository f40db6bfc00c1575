/* cmd: subcommands; the only layer that prints diagnostics and chooses exit codes. */
#ifndef NS_CMD_H
#define NS_CMD_H

#include "../manifest/manifest.h"
#include "../util/term.h"
#include "../util/util.h"

/* Exit codes of shared/DESIGN.md. */
enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_ABORT = 3,
	EXIT_DIVERGED = 4,
	EXIT_INTERRUPTED = 130,
};

int cmdrun(int argc, char **argv);
int cmdvalidate(int argc, char **argv);
int cmdconfig(int argc, char **argv);
int cmdpolicy(int argc, char **argv);
int cmdrestore(int argc, char **argv);
int cmdaudit(int argc, char **argv);
int cmdreplay(int argc, char **argv);
int cmdplan(int argc, char **argv);
int cmdmerge(int argc, char **argv);
int cmdfinalize(int argc, char **argv);
int cmddiff(int argc, char **argv);
int cmdreport(int argc, char **argv);
int cmdexport(int argc, char **argv);
int cmddoctor(int argc, char **argv);
int cmdprune(int argc, char **argv);
int cmdinit(int argc, char **argv);

/* Install the progress printer on stderr (live lines on a terminal, timestamped lines otherwise)
 * and, with events (a path, or "-" for stderr in place of the progress lines), the event stream;
 * -1 after printing (as cmd's usage error) why the events file cannot be made. */
int progressstart(const char *cmd, int quiet, const char *events);
/* Clear the live lines before the last words are printed and close the event stream; whether the
 * run directory was printed on stdout already. */
int progressstop(void);
/* Print "nightshift: CMD: message" to stderr and return EXIT_USAGE. */
int usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print an error's message to stderr prefixed with "nightshift: " and return its exit code. */
int report(const struct err *e);
/* The exit code of an error kind (the one table of them). */
int exitfor(enum errkind kind);
/* The exit code of how a run ended (enum runend of run/run.h). */
int exitforrun(int end);
/* A RUN argument as a directory: itself, or a .tar.zst of one unpacked into *tmp, at most maxunpack
 * bytes of it (0: the default bound of snapunpack). */
int runopen(const char *arg, int64_t maxunpack, char **dir, char **tmp, struct err *e);
/* The help line of --max-unpack, for each command that takes a RUN. */
#define MAXUNPACKHELP                                                                                   \
	"  --max-unpack SIZE  a RUN.tar.zst is unpacked, and a chain of snapshot layers expanded, to at\n"   \
	"             most SIZE bytes of file data (e.g. 8G), SIZE/4K entries (at least 100 000) and\n"     \
	"             1024 x SIZE of file sizes with sparse files' holes; default 100 times the\n"         \
	"             archive's (or the chain's) compressed size, at least 64M\n"
/* --max-unpack SIZE at argv[*i] into *max (advancing *i past its value): -1 when argv[*i] is
 * another argument, EXIT_OK, or EXIT_USAGE after printing why SIZE is refused. */
int maxunpackflag(const char *cmd, int argc, char **argv, int *i, int64_t *max);
/* Free what runopen gave, removing an unpacked copy. */
void runclose(char *dir, char *tmp);
/* The one positional argument (what names it): set *slot, or print why arg is refused and return
 * EXIT_USAGE (an unknown flag, a second positional). */
int positional(const char *cmd, const char *arg, const char **slot, const char *what);
/* True when arg is the flag, alone ("--out") or with its value ("--out=V"). */
int flagis(const char *arg, const char *flag);
/* The value of the flag at argv[*i] (the one flagis matched: "--flag V" or "--flag=V"), advancing
 * *i past a separate value; NULL after printing "FLAG needs WHAT" when it is missing or empty. */
const char *flagarg(const char *cmd, int argc, char **argv, int *i, const char *what);
/* EXIT_OK when arg, a flag that takes no value (flagis matched it), has none; else EXIT_USAGE
 * after printing that "--flag=V" is refused. */
int flagnoval(const char *cmd, const char *arg);
/* --set KEY=VALUE at argv[*i] (flagis matched it) added to sets, advancing *i: EXIT_OK, or
 * EXIT_USAGE after printing why the value is refused. */
int setflag(const char *cmd, int argc, char **argv, int *i, struct strv *sets);
struct signkey;
/* The signing key of --sign (path may be NULL) or else of NIGHTSHIFT_SIGNING_KEY (the path of one)
 * into *k (NULL when neither is given). A key that cannot be read, or, when m is given, one that a
 * step of m's jobs could read (keyreach), is a usage error: the message is printed, EXIT_USAGE returned. */
int signkeyopt(const char *cmd, const char *path, const struct manifest *m, struct signkey **k);
/* The allowed_signers file of --allowed-signers (path may be NULL): one that cannot be read is a
 * usage error, said before any run is read (printed, EXIT_USAGE returned). */
int signersopt(const char *cmd, const char *path);
/* True when argv[i] is "--help" or "-h". */
int ishelp(const char *arg);
/* Load a manifest and check its approval rules and examples: -1 with the first mistake (the caller
 * frees m either way). */
int loadmanifest(struct manifest *m, const char *path, const struct loadopts *o, struct err *e);
/* loadmanifest with the --set inputs: EXIT_OK with *m loaded, or the exit code after printing the
 * mistakes (*m freed then). */
int loadorsay(struct manifest *m, const char *path, const struct strv *sets);

#endif
