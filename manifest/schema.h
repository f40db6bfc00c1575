/* schema: the JSON Schema subset used for typed worker outputs. */
#ifndef NS_SCHEMA_H
#define NS_SCHEMA_H

#include <cjson/cJSON.h>
#include "../util/util.h"

/* Check a schema uses only supported keywords with well-formed values. On error fills
 * pointer (a JSON pointer into the schema, e.g. "/properties/a/foo") and e. */
int schemacheck(const cJSON *schema, struct buf *pointer, struct err *e);
/* Validate value; returns the number of errors, each appended to errs as "POINTER: message\n". */
int schemavalidate(const cJSON *schema, const cJSON *value, struct buf *errs);

#endif
