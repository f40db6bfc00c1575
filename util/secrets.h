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
	struct strv unmasked; /* names of values too short to mask (SECRETMIN), each once */
};

/* A value shorter than this is not masked: replacing every `k` of a test key rewrites the record
 * itself (run.json's "skipped", the log's keys), as other CI maskers agree (Ansible, Octopus: 4). */
enum { SECRETMIN = 4 };

/* Add a named value (ignored when empty; named in unmasked, not masked, when shorter than
 * SECRETMIN bytes). */
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
