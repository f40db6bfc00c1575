/* danger: the table of options by which programs that read (git log, sed -n, find, tar -t ...)
 * run commands or write files; docs/security.md prints the same table. */
#ifndef NS_DANGER_H
#define NS_DANGER_H

#include <stddef.h>

/* The first dangerous option of a simple command, as a short description ("git --output writes
 * a file"), or NULL. *key is set to what a rule's pattern must hold at the start of one of its
 * words to name it ("--output"), *word to the command's word that holds it. A word only known at
 * run time that could be an option of such a program is dangerous too (key "", never named). */
const char *danger(char *const *argv, const unsigned char *wf, size_t argc, const char **key, const char **word);

/* Whether assigning the variable name[0..n) before a command or with env changes what programs
 * run (LD_PRELOAD, PATH, GIT_*, BASH_ENV, PAGER ...). */
int dangerenv(const char *name, size_t n);

/* The rows of the table, for the docs and tests: program, option, what it does; NULL-ended. */
extern const char *const dangertable[][3];

#endif
