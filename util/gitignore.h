/* gitignore: git's ignore rules (.gitignore files, .git/info/exclude), matched as git does. */
#ifndef NS_GITIGNORE_H
#define NS_GITIGNORE_H

#include <stddef.h>

struct gitignore;

/* An empty set of rules; safe to add to and match from several threads. */
struct gitignore *gitignorenew(void);
/* Add the rules of one file: text (n bytes, untrusted workspace content) read from folder dir of
 * the workspace ("" for the root; .git/info/exclude is added for "" before the root's .gitignore,
 * as the lowest precedence). Lines past 64 KiB or beyond 100 000 rules a set are dropped. */
void gitignoreadd(struct gitignore *g, const char *dir, const char *text, size_t n);
/* Whether path (workspace-relative, no leading or trailing '/') is ignored: its own name or a
 * folder above it matched last by a pattern that is not negated (git check-ignore's verdict for
 * an untracked path). isdir: path is a folder. */
int gitignorematch(struct gitignore *g, const char *path, int isdir);
/* Free the rules. */
void gitignorefree(struct gitignore *g);

#endif
