/* secrets: values that must never reach an artifact, a log line or stderr. */
#ifndef NS_SECRETS_H
#define NS_SECRETS_H

#include "util.h"

struct secrets {
	struct strv names;  /* what each value is called in the placeholder */
	struct strv values; /* raw values */
	struct strv clean;  /* the same values as cleaned text shows them (utf8.h) */
	struct strv lines;  /* each line of a value of many lines, 8 bytes or more */
	size_t *lineof;     /* the value each line is of */
};

/* Add a named value (ignored when empty); short values are masked too. */
void secretsadd(struct secrets *s, const char *name, const char *value);
/* Add the value of each environment variable named in names, when set. */
void secretsenv(struct secrets *s, const struct strv *names);
/* A copy of text with every secret replaced by "[secret:NAME]", and so is any prefix of one at
 * least 8 bytes long (a secret cut at a cap or a width); NULL when nothing matched. A secret is
 * found raw, as cleaned UTF-8, JSON-escaped at any depth (\n, \", \u00e4, \\u00e4, ...) and
 * with its line ends as CRLF. */
char *secretsmask(const struct secrets *s, const char *text);
/* secretsmask for bytes that may hold NULs (a binary file): each run between NULs masked; NULL
 * when nothing matched, else a new buffer of *outlen bytes. */
char *secretsmaskbytes(const struct secrets *s, const char *p, size_t n, size_t *outlen);
/* True when text holds any secret, or a prefix of one as secretsmask masks it. */
int secretsfound(const struct secrets *s, const char *text);
void secretsfree(struct secrets *s);

#endif
