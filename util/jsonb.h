/* jsonb: JSON from an untrusted source (an MCP server, a model) parsed within a memory budget.
   The text is measured before cJSON sees it: too many bytes, nesting too deep or too many
   values and it is refused, so a tree never grows past what the caps allow (docs/security.md,
   "Hostile bytes"). */
#ifndef NS_JSONB_H
#define NS_JSONB_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "util.h"

/* The caps: bytes of one message or body, nesting depth, values (nodes of the tree). */
#define JSONB_BYTES ((size_t)16 << 20)
#define JSONB_DEPTH 128
#define JSONB_NODES ((size_t)256 << 10)

/* Whether n bytes of s stay within the caps: 0, or -1 with e saying which it passes. */
int jsonbfits(const char *s, size_t n, struct err *e);
/* Parse n bytes of s (no NUL needed): the tree (caller frees), or NULL with e saying why (over a
   cap, or not JSON). */
cJSON *jsonbparse(const char *s, size_t n, struct err *e);
/* Marks rep[i] (rep holds one byte a member, zeroed by the caller) for each member i of object o
   whose key an earlier member has, byte for byte; n log n in the members. */
void jsonbrepeats(const cJSON *o, unsigned char *rep);
/* The key some object in v (at any depth) holds twice, or NULL. Keys count as one when they are
   equal to a reader that ignores case (ASCII, and Go's folds of U+017F and U+212A): cJSON finds
   the first, other readers the last or either, so a value checked is not the value used. */
const char *jsonbtwice(const cJSON *v);

#endif
