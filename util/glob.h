/* glob: the wildcard patterns of approval rules (tool, command, path, worker). */
#ifndef NS_GLOB_H
#define NS_GLOB_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

/* Decode one UTF-8 character of s[0..n) (n > 0) into *cp: its length 1-4, or -1 when the bytes
 * are not strict UTF-8 (overlong, surrogate, above U+10FFFF, truncated); then *cp is the byte. */
int u8dec(const char *s, size_t n, uint32_t *cp);

/* Match s[0..slen) against pat[0..plen): '*' any run of characters ('/' and spaces too), '?' one
 * character, [set] [!set] [^set] with ranges and [:classes:], '\' quotes the next character. */
int globmatch(const char *pat, size_t plen, const char *s, size_t slen);

/* Match a normalised workspace-relative path ("." for the root) against a path glob: '*', '?'
 * and sets stay inside one segment, a "**" segment spans zero or more segments; "./" and
 * "/workspace/" before the pattern are ignored. */
int globpath(const char *pat, const char *path);

/* Match a simple command's words against a command glob: the pattern is split into words like a
 * shell line (quotes and '\' make characters literal); a word that is a bare '*' matches any
 * number of words, zero included; any other word matches exactly one word. */
int globcmd(const char *pat, char *const *words, size_t nwords);

/* In a subject word: text only known at run time (shellsplit's SHUNK). Only a '*' matches it;
 * '?', sets and literal characters do not. */
#define GLOBUNK '\x01'

/* globcmd with each word's flags (bit 2: it may become any number of words). could = 0: must
 * the words match whatever the unknown text turns out to be (allow rules); could = 1: could they
 * match for some text (deny and abort rules). */
int globcmdx(const char *pat, char *const *words, const unsigned char *wf, size_t nwords, int could);

/* Whether a command glob names an option: one of its words starts with key, literally (before
 * any wildcard), or is word itself. */
int globnames(const char *pat, const char *key, const char *word);

/* Whether a command glob's first word (the program) holds a wildcard: such a rule allows
 * programs it does not name, so what their options do is not its business. */
int globcmdwild(const char *pat);

/* Check a command glob: -1 with the reason in e when it is empty or has an unbalanced quote. */
int globcmdcheck(const char *pat, struct err *e);

#endif
