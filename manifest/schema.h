/* schema: the JSON Schema subset used for typed worker outputs.
 *
 * Keywords (2020-12 meaning): type (a name or an array of names), enum, const, multipleOf,
 * minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers, not draft-4 booleans),
 * minLength, maxLength (counted in code points), pattern, prefixItems, items (a schema; it
 * applies to the elements after prefixItems), minItems, maxItems, uniqueItems, required,
 * properties, patternProperties, additionalProperties, allOf, anyOf, oneOf, not, $defs (and
 * its draft-7 alias definitions), $ref, boolean schemas (true / false).
 * Annotations, accepted and ignored: title, description, $comment, default, examples,
 * format (never asserted), readOnly, writeOnly, deprecated, $schema, and $id at the root only.
 * Any other keyword is rejected by schemacheck, never ignored.
 *
 * $ref: only local references, "#" or "#/json/pointer" (URI-%-escapes and ~0 ~1 decoded) to a
 * place that holds a schema, usually "#/$defs/name"; "#" is always the root document ($id
 * is not used for resolution). Keywords beside $ref apply too (2020-12; draft 7 ignored them).
 * A cycle of $ref / allOf / anyOf / oneOf / not that applies a schema to the same value again
 * is rejected; validation also stops at 256 nested schemas with an error.
 * Numbers are doubles: 1.0 is an integer; multipleOf allows a relative error of 1e-9 on the
 * quotient so 0.3 is a multiple of 0.1. Equality (enum, const, uniqueItems) is JSON equality:
 * 1 == 1.0, object key order ignored, true != 1.
 *
 * pattern / patternProperties: ECMA-262 syntax translated to POSIX ERE (regcomp with
 * REG_EXTENDED|REG_NOSUB, run in the C.UTF-8 locale so . and [...] take whole characters;
 * if that locale cannot be made, plain C and byte-wise). Unanchored search, as in JSON Schema.
 * Supported: literals, . (any character but \n and \r), ^ $ | ( ) (?: ), * + ? {n} {n,} {n,m}
 * (a lazy ? after a quantifier is dropped: it cannot change whether a string matches),
 * [...] and [^...] with ranges of ASCII endpoints and non-ASCII single characters,
 * \d \D \w \W \s \S (ASCII: [0-9], [0-9A-Za-z_], [ \t\n\v\f\r]; in [...] only \d \w \s),
 * \t \n \r \f \v \xHH \uHHHH (surrogate pairs too), \b inside [...] (backspace), and \ before
 * any punctuation (a literal). A { that does not open a quantifier is a literal.
 * Rejected by schemacheck: back-references \1, \b \B outside [...], lookaround (?= (?! (?<=
 * (?<!, named groups, \p{...} \c \k \0, non-ASCII range endpoints, [] and [^], a quantifier
 * with nothing to repeat, unbalanced parentheses, groups nested over 256 deep, counted repetitions
 * making more than 1000 copies of what they repeat (regcomp makes them all, regexec its states over them), and whatever regcomp
 * refuses.
 */
#ifndef NS_SCHEMA_H
#define NS_SCHEMA_H

#include <cjson/cJSON.h>
#include "../util/util.h"

/* Check a schema uses only supported keywords with well-formed values. On error fills
 * pointer (a JSON pointer into the schema, e.g. "/properties/a/foo"; "" is the root) and e. */
int schemacheck(const cJSON *schema, struct buf *pointer, struct err *e);
/* Validate value; returns the number of errors, each appended to errs as "POINTER: message\n"
 * where POINTER is the JSON pointer of the failing value, "(root)" for the whole value. At most
 * 25 lines are appended, then one "...: N more errors not shown" line. A schema that fails
 * schemacheck yields one "(schema): ..." error. */
int schemavalidate(const cJSON *schema, const cJSON *value, struct buf *errs);
/* Does the schema lie in the subset OpenAI's strict mode takes (structured outputs): every object
 * closed (additionalProperties: false) with every property required, the root an object, only
 * type, properties, required, additionalProperties, items, enum, const, anyOf, description, title,
 * $defs and local $ref? Strict mode then enforces the schema while decoding. */
int schemastrict(const cJSON *schema);
/* The supported keywords (annotations included), NULL-terminated. */
const char *const *schemakeywords(void);

#endif
