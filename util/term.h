/* term: the one sanitiser for text printed to a terminal or into a GitHub Actions log. */
#ifndef NS_TERM_H
#define NS_TERM_H

#include <stdio.h>

enum {
	TERM_ONELINE = 1,   /* newline and tab shown as spaces too (table cells) */
	TERM_NOACTIONS = 2, /* leave workflow commands alone (the caller escapes for Actions itself) */
	TERM_ACTIONS = 4,   /* break workflow commands as under Actions, whatever GITHUB_ACTIONS says */
};

/* A copy of s (caller frees) in which nothing can drive a terminal or the Actions runner: C0
 * controls but newline and tab, DEL, C1 controls (U+0080..U+009F, U+009B the CSI among them),
 * raw bytes that are not UTF-8, and bidirectional controls are shown as \xNN or \uNNNN; under
 * GitHub Actions (GITHUB_ACTIONS=true) a line whose text starts with "::", and any "##[", is
 * broken ("%3A:", "##%5B") so that the runner takes neither for a workflow command. */
char *termclean(const char *s, int flags);
/* True when fd is the GitHub Actions log: GITHUB_ACTIONS=true and fd not a regular file (a pipe
 * or terminal the runner reads; a redirect to a file keeps its bytes). Recorded text written there
 * goes through termclean with TERM_ACTIONS, or is refused. */
int termactionslog(int fd);
/* True when fd, a file a command opened by name (--out /dev/stdout, /dev/stderr, /proc/self/fd/1),
 * is the step's log all the same: termactionslog(fd) and the same file as stdout or stderr. What
 * the command would refuse or sanitise for "-", it refuses or sanitises for such a name. */
int termactionsout(int fd);
/* A JSON text as the same JSON that cannot drive a terminal or the Actions runner: DEL, C1 and
 * bidirectional controls and line separators escaped as \uNNNN, "##[" as "##\u005b" (JSON's C0
 * escapes are the printer's). For JSON lines written where a person may be watching. */
char *termjson(const char *json);
/* termjson of json written to f, then a newline: every --json line of recorded content. */
void termjsonline(FILE *f, const char *json);
/* termclean of the formatted text, written to f. */
void termprintf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
