/* utf8: text from untrusted bytes made valid UTF-8. */
#ifndef NS_UTF8_H
#define NS_UTF8_H

#include <stddef.h>

/* Text as valid UTF-8 (invalid bytes become U+FFFD), as a new string. */
char *utf8clean(const char *s, size_t n);

/* Whether n bytes at s are valid UTF-8 already (no NUL), so that utf8clean would copy them unchanged. */
int utf8valid(const char *s, size_t n);

/* The longest length of at most n that cuts s (of n bytes or more) before a character, not inside
 * one. */
size_t utf8cut(const char *s, size_t n);

#endif
