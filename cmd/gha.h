/* gha: GitHub Actions: the step summary, step outputs, annotations and log groups of a run, with no
 * text from a model or a tool ever taken by the runner as a workflow command. */
#ifndef NS_GHA_H
#define NS_GHA_H

#include <stdio.h>
#include "../util/util.h"

/* The step summary must stay below this (GitHub drops a summary over 1 MiB). */
#define GHASUMMARYMAX (1024 * 1024 - 1024)

/* True when running as a GitHub Actions step (GITHUB_ACTIONS=true). */
int ghaactive(void);
/* s as one log line the runner prints and never runs: '%', CR and LF as %25, %0D, %0A (the runner's
 * own escapes), then util/term.h's termclean: other controls shown as \xNN or \uNNNN, a "::" that
 * would open the line (after any whitespace) as "%3A:", every "##[" as "##%5B". Decoding %XX gives
 * s back when s held no other control. Caller frees. */
char *ghaescape(const char *s);
/* s as the message of a workflow command: the same ('%', CR and LF escaped, then termclean).
 * Caller frees. */
char *ghadata(const char *s);
/* s as a property value of a workflow command: also ':' and ',' escaped. Caller frees. */
char *ghaprop(const char *s);
/* One log line: the formatted text as ghaescape gives it (plain outside Actions). */
void ghaline(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Open a log group named by the formatted text (escaped as a command's message); Actions only. */
void ghagroup(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* End the open log group; Actions only. */
void ghaendgroup(FILE *f);
/* In Actions, the log of a job of rundir that has ended (its events: what the model said, each
 * call with its decision, exit code and first lines of output), for its group printed as it ran
 * (cmd/progress.c); gharun prints no group for it again. */
void ghajob(FILE *log, const char *rundir, const char *job);
/* Append name=value to an output file in the multiline form name<<DELIM / value / DELIM, with a
 * random delimiter; refuses (-1) a name or value that holds it, or a name that is not [A-Za-z0-9_-]. */
int ghaoutput(FILE *f, const char *name, const char *value, struct err *e);
/* In Actions, an ::error annotation for a mistake: "FILE:LINE:COL: message" points at the file, line
 * and column; anything else is a plain error. Does nothing outside Actions. */
void ghamistake(FILE *log, const char *msg);
/* After a run (or a merge) in Actions: append the summary of rundir to $GITHUB_STEP_SUMMARY, write
 * run-dir, status, exit-code, outputs (every job's output in one object) and output-<job> to
 * $GITHUB_OUTPUT, print each job's log as a group and an ::error annotation per failed or aborted job
 * on log. rundir may be NULL when nothing ran (status "error"). Does nothing outside Actions. */
int gharun(const char *rundir, int exitcode, FILE *log, struct err *e);

#endif
