/* jsonout: a tree printed byte for byte as cJSON_PrintUnformatted prints it, with runs of bytes
   that need no escape copied whole (cJSON looks at every byte twice). For the hot prints: event
   lines and request bodies. */
#ifndef NS_JSONOUT_H
#define NS_JSONOUT_H

#include <cjson/cJSON.h>
#include "util.h"

/* Append j printed to b; -1 (b as it was) where cJSON would print nothing (an invalid item). */
int jsonout(struct buf *b, const cJSON *j);
/* The bytes jsonout appends for j, counted without printing: a parsed text whose strings held raw
 * control bytes prints up to six times its own size. */
size_t jsonoutlen(const cJSON *j);
/* j printed, a new string (caller frees), or NULL as cJSON_PrintUnformatted would give it. */
char *jsonprint(const cJSON *j);

#endif
