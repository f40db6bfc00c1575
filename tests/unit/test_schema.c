/* test_schema: schemacheck and schemavalidate on our own cases (the suite runner covers the
 * official JSON-Schema-Test-Suite; these cover prefixItems, $defs, patterns, messages, limits). */
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include "../../manifest/schema.h"
#include "t.h"

static struct buf errs;

static void bufclear(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
}

/* Validate value against schema (both JSON text); errs holds the messages. -1: bad JSON. */
static int val(const char *schema, const char *value)
{
	cJSON *s = cJSON_Parse(schema), *v = cJSON_Parse(value);
	int n = -1;
	bufclear(&errs);
	if (s && v)
		n = schemavalidate(s, v, &errs);
	else
		ok(0, "bad test JSON: %s / %s", schema, value);
	cJSON_Delete(s);
	cJSON_Delete(v);
	return n;
}

#define valid(schema, value) do { int n_ = val(schema, value); \
	ok(n_ == 0, "%s should accept %s; got %d: %s", schema, value, n_, errs.data ? errs.data : ""); } while (0)
#define invalid(schema, value) do { int n_ = val(schema, value); \
	ok(n_ > 0, "%s should reject %s", schema, value); } while (0)
/* Exactly these error lines. */
static void errors(const char *schema, const char *value, const char *want)
{
	val(schema, value);
	char *name = xasprintf("%s on %s", schema, value);
	okstr(errs.data ? errs.data : "", want, name);
	free(name);
}

/* schemacheck must reject schema at pointer with a message containing msg. */
static void rejects(const char *schema, const char *wantptr, const char *msg)
{
	cJSON *s = cJSON_Parse(schema);
	struct buf ptr = {0};
	struct err e = {0};
	ok(s != NULL, "bad test JSON: %s", schema);
	int rc = schemacheck(s, &ptr, &e);
	ok(rc < 0, "%s should be rejected", schema);
	if (rc < 0) {
		okstr(ptr.data ? ptr.data : "", wantptr, schema);
		ok(strstr(e.msg, msg) != NULL, "%s: message \"%s\" lacks \"%s\"", schema, e.msg, msg);
	}
	buffree(&ptr);
	cJSON_Delete(s);
}

static void accepts(const char *schema)
{
	cJSON *s = cJSON_Parse(schema);
	struct buf ptr = {0};
	struct err e = {0};
	ok(s != NULL, "bad test JSON: %s", schema);
	int rc = schemacheck(s, &ptr, &e);
	ok(rc == 0, "%s should be accepted; at \"%s\": %s", schema, ptr.data ? ptr.data : "", e.msg);
	ok(ptr.len == 0, "%s: pointer left set", schema);
	buffree(&ptr);
	cJSON_Delete(s);
}

static void testcheck(void)
{
	rejects("{\"properties\":{\"verdict\":{\"patern\":\"x\"}}}", "/properties/verdict/patern",
		"unknown keyword \"patern\" (did you mean \"pattern\"?)");
	rejects("{\"MinLength\":1}", "/MinLength", "did you mean \"minLength\"");
	rejects("{\"frobnicate\":1}", "/frobnicate", "unknown keyword \"frobnicate\"");
	rejects("{\"contains\":{}}", "/contains", "not supported");
	rejects("{\"additionalItems\":false}", "/additionalItems", "not supported");
	rejects("{\"if\":{},\"then\":{}}", "/if", "not supported");
	rejects("{\"minProperties\":1}", "/minProperties", "not supported");
	rejects("{\"properties\":{\"a/b~\":{\"patern\":1}}}", "/properties/a~1b~0/patern", "pattern");
	rejects("{\"required\":\"a\"}", "/required", "array of property names");
	rejects("{\"required\":[\"a\",1]}", "/required/1", "strings");
	rejects("{\"required\":[\"a\",\"a\"]}", "/required/1", "twice");
	rejects("{\"type\":\"strin\"}", "/type", "unknown type \"strin\" (did you mean \"string\"?)");
	rejects("{\"type\":[\"string\",\"nul\"]}", "/type/1", "did you mean \"null\"");
	rejects("{\"type\":\"bogus\"}", "/type", "types: null, boolean");
	rejects("{\"type\":[]}", "/type", "non-empty");
	rejects("{\"type\":[\"string\",\"string\"]}", "/type/1", "twice");
	rejects("{\"type\":5}", "/type", "type name");
	rejects("{\"$ref\":\"http://example.com/s.json\"}", "/$ref", "only local");
	rejects("{\"$ref\":\"other.json#/$defs/a\"}", "/$ref", "only local");
	rejects("{\"$ref\":\"#foo\"}", "/$ref", "anchors");
	rejects("{\"properties\":{\"a\":{\"$ref\":\"#/$defs/missing\"}}}", "/properties/a/$ref", "does not resolve");
	rejects("{\"properties\":{\"a\":{}},\"$defs\":{\"x\":{\"$ref\":\"#/properties\"}}}", "/$defs/x/$ref",
		"does not point to a schema");
	rejects("{\"default\":{\"a\":1},\"$ref\":\"#/default\"}", "/$ref", "does not point to a schema");
	rejects("{\"$ref\":5}", "/$ref", "string");
	rejects("{\"$defs\":{\"a\":{}},\"$ref\":\"#/$defs/%zz\"}", "/$ref", "does not resolve");
	rejects("{\"$defs\":{\"a\":{}},\"$ref\":\"#/$defs/a%2\"}", "/$ref", "does not resolve");
	rejects("{\"$defs\":{\"a\":{}},\"$ref\":\"#/$defs/a~2\"}", "/$ref", "does not resolve");
	rejects("{\"prefixItems\":[{}],\"$ref\":\"#/prefixItems/01\"}", "/$ref", "does not resolve");
	accepts("{\"prefixItems\":[{},{}],\"$ref\":\"#/prefixItems/1\"}");
	rejects("{\"pattern\":\"(\"}", "/pattern", "unmatched (");
	rejects("{\"pattern\":\"a)\"}", "/pattern", "unmatched )");
	rejects("{\"pattern\":\"\\\\bfoo\"}", "/pattern", "word boundary");
	rejects("{\"pattern\":\"(?=a)\"}", "/pattern", "lookaround");
	rejects("{\"pattern\":\"(?<n>a)\"}", "/pattern", "lookaround");
	rejects("{\"pattern\":\"(a)\\\\1\"}", "/pattern", "back-reference");
	rejects("{\"pattern\":\"\\\\0\"}", "/pattern", "NUL");
	rejects("{\"pattern\":\"\\\\x00\"}", "/pattern", "NUL");
	rejects("{\"pattern\":\"\\\\p{L}\"}", "/pattern", "\\p is not supported");
	rejects("{\"pattern\":\"\\\\cA\"}", "/pattern", "\\c is not supported");
	rejects("{\"pattern\":\"a\\\\\"}", "/pattern", "trailing backslash");
	rejects("{\"pattern\":\"[]\"}", "/pattern", "[] and [^]");
	rejects("{\"pattern\":\"[^]\"}", "/pattern", "[] and [^]");
	rejects("{\"pattern\":\"[abc\"}", "/pattern", "unterminated [");
	rejects("{\"pattern\":\"[\\\\D]\"}", "/pattern", "\\D inside [...]");
	rejects("{\"pattern\":\"[\\\\s-z]\"}", "/pattern", "cannot bound a range");
	rejects("{\"pattern\":\"[z-a]\"}", "/pattern", "out of order");
	rejects("{\"pattern\":\"[\\u00e9-\\u00fa]\"}", "/pattern", "non-ASCII");
	rejects("{\"pattern\":\"*a\"}", "/pattern", "nothing to repeat");
	rejects("{\"pattern\":\"a**\"}", "/pattern", "nothing to repeat");
	rejects("{\"pattern\":\"a|+\"}", "/pattern", "nothing to repeat");
	rejects("{\"pattern\":\"a{2}{3}\"}", "/pattern", "nothing to repeat");
	rejects("{\"pattern\":\"\\\\ud800\"}", "/pattern", "lone surrogate");
	rejects("{\"pattern\":\"\\\\xZZ\"}", "/pattern", "two hex digits");
	rejects("{\"pattern\":\"a{70000}\"}", "/pattern", "bad pattern \"a{70000}\"");
	rejects("{\"pattern\":7}", "/pattern", "string");
	rejects("{\"patternProperties\":{\"(\":{}}}", "/patternProperties/(", "unmatched (");
	rejects("{\"patternProperties\":{\"^a\":{\"tpye\":\"string\"}}}", "/patternProperties/^a/tpye", "\"type\"");
	rejects("{\"properties\":{\"a\":{\"$id\":\"x\"}}}", "/properties/a/$id", "only allowed at the root");
	rejects("{\"items\":[{}]}", "/items", "prefixItems");
	rejects("{\"prefixItems\":{}}", "/prefixItems", "non-empty array of schemas");
	rejects("{\"prefixItems\":[]}", "/prefixItems", "non-empty array of schemas");
	rejects("{\"anyOf\":[]}", "/anyOf", "non-empty array");
	rejects("{\"oneOf\":[{}, 3]}", "/oneOf/1", "a schema must be an object");
	rejects("{\"enum\":[]}", "/enum", "non-empty");
	rejects("{\"enum\":\"a\"}", "/enum", "non-empty");
	rejects("{\"minLength\":-1}", "/minLength", "non-negative integer");
	rejects("{\"maxItems\":1.5}", "/maxItems", "non-negative integer");
	rejects("{\"multipleOf\":0}", "/multipleOf", "greater than 0");
	rejects("{\"minimum\":\"3\"}", "/minimum", "must be a number");
	rejects("{\"exclusiveMinimum\":true}", "/exclusiveMinimum", "must be a number");
	rejects("{\"uniqueItems\":1}", "/uniqueItems", "true or false");
	rejects("{\"format\":1}", "/format", "string");
	rejects("{\"properties\":{\"a\":5}}", "/properties/a", "a schema must be an object, true or false");
	rejects("{\"properties\":[]}", "/properties", "object of name: schema");
	rejects("{\"$defs\":{\"a\":\"x\"}}", "/$defs/a", "a schema must be");
	rejects("{\"additionalProperties\":{\"x\":1}}", "/additionalProperties/x", "unknown keyword");
	rejects("\"string\"", "", "a schema must be an object");
	rejects("{\"type\":\"string\",\"type\":\"number\"}", "/type", "appears twice");
	/* loops that never go into the value */
	rejects("{\"$ref\":\"#\"}", "/$ref", "$ref loop");
	rejects("{\"not\":{\"$ref\":\"#\"}}", "/not/$ref", "$ref loop");
	rejects("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"anyOf\":[true,{\"$ref\":\"#/$defs/a\"}]}}}",
		"/$defs/b/anyOf/1/$ref", "reaches #/$defs/a again");
	rejects("{\"$defs\":{\"a\":{\"oneOf\":[{\"$ref\":\"#/$defs/a\"}]}}}", "/$defs/a/oneOf/0/$ref", "$ref loop");
	/* too deep */
	struct buf deep = {0};
	for (int i = 0; i < 300; i++)
		bufputs(&deep, "{\"not\":");
	bufputs(&deep, "{}");
	for (int i = 0; i < 300; i++)
		bufputc(&deep, '}');
	cJSON *d = cJSON_Parse(deep.data);
	struct buf ptr = {0};
	struct err e;
	ok(d && schemacheck(d, &ptr, &e) < 0 && strstr(e.msg, "nested more than"), "deep schema rejected");
	cJSON_Delete(d);
	buffree(&deep);
	ok(schemacheck(NULL, &ptr, &e) < 0, "NULL schema rejected");
	/* a long chain of $refs that never goes into the value */
	bufputs(&deep, "{\"$defs\":{");
	for (int i = 0; i < 300; i++)
		bufprintf(&deep, "%s\"d%d\":{\"$ref\":\"#/$defs/d%d\"}", i ? "," : "", i, i + 1);
	bufputs(&deep, ",\"d300\":{}}}");
	d = cJSON_Parse(deep.data);
	ok(d && schemacheck(d, &ptr, &e) < 0 && strstr(e.msg, "more than 256 schemas applied"), "ref chain: %s", e.msg);
	cJSON_Delete(d);
	buffree(&deep);
	buffree(&ptr);

	/* what is accepted */
	accepts("true");
	accepts("false");
	accepts("{}");
	accepts("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://x/y\","
		"\"title\":\"t\",\"description\":\"d\",\"$comment\":\"c\",\"default\":{},\"examples\":[1],"
		"\"format\":\"email\",\"readOnly\":true,\"writeOnly\":false,\"deprecated\":false}");
	accepts("{\"properties\":{\"a\":{\"$ref\":\"#\"}},\"items\":{\"$ref\":\"#\"}}");
	accepts("{\"$defs\":{\"n\":{\"type\":\"object\",\"properties\":{\"kids\":{\"type\":\"array\","
		"\"items\":{\"$ref\":\"#/$defs/n\"}}}}},\"$ref\":\"#/$defs/n\"}");
	accepts("{\"definitions\":{\"a\":{}},\"$ref\":\"#/definitions/a\"}");
	accepts("{\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"$ref\":\"#/properties/a\"}}}");
	accepts("{\"anyOf\":[{\"$ref\":\"#/$defs/a\"},{\"$ref\":\"#/$defs/a\"}],\"$defs\":{\"a\":{}}}");
	accepts("{\"prefixItems\":[{},true],\"items\":false}");
	accepts("{\"type\":[\"string\",\"null\"],\"minLength\":0,\"maxLength\":3.0}");
	accepts("{\"pattern\":\"^[\\\\w.+-]+@[\\\\w-]+(?:\\\\.[\\\\w-]+)+$\"}");

	/* the pointer is reset on success after a failure */
	struct buf p2 = {0};
	cJSON *bad = cJSON_Parse("{\"x\":1}"), *good = cJSON_Parse("{}");
	schemacheck(bad, &p2, &e);
	ok(schemacheck(good, &p2, &e) == 0 && p2.len == 0 && (!p2.data || !p2.data[0]), "pointer reset");
	cJSON_Delete(bad);
	cJSON_Delete(good);
	buffree(&p2);
}

static void testmessages(void)
{
	const char *out = "{\"type\":\"object\",\"required\":[\"verdict\",\"findings\"],\"properties\":{"
		"\"verdict\":{\"enum\":[\"ok\",\"needs-work\"]},"
		"\"findings\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},\"additionalProperties\":false}";
	valid(out, "{\"verdict\":\"ok\",\"findings\":[]}");
	errors(out, "{\"verdict\":\"ok\",\"findings\":[\"a\",\"b\",3]}", "/findings/2: expected string, got number\n");
	errors(out, "{\"verdict\":\"maybe\",\"findings\":[],\"extra\":1}",
		"/verdict: must be one of: \"ok\", \"needs-work\"\n"
		"/extra: property not allowed; allowed: \"verdict\", \"findings\"\n");
	errors(out, "{}", "(root): missing required property \"verdict\"\n"
		"(root): missing required property \"findings\"\n");
	errors(out, "[1]", "(root): expected object, got array\n");
	errors(out, "{\"verdict\":\"ok\",\"findings\":[],\"verdict\":\"ok\"}", "/verdict: duplicate property\n");
	errors("{\"required\":[\"A\"]}", "{\"a\":1}", "(root): missing required property \"A\"\n");
	ok(val(out, "{\"verdict\":\"ok\",\"findings\":[1,2,3]}") == 3, "three errors counted");

	errors("{\"type\":[\"string\",\"null\"]}", "1", "(root): expected string or null, got number\n");
	errors("{\"type\":[\"integer\",\"string\",\"null\"]}", "1.5",
		"(root): expected integer, string or null, got number\n");
	errors("{\"const\":{\"a\":[1,2]}}", "{\"a\":[2,1]}", "(root): must be {\"a\":[1,2]}\n");
	errors("{\"minimum\":1.5}", "1", "(root): must be >= 1.5, got 1\n");
	errors("{\"exclusiveMinimum\":1}", "1", "(root): must be > 1, got 1\n");
	errors("{\"maximum\":0.1}", "0.30000000000000004", "(root): must be <= 0.1, got 0.30000000000000004\n");
	errors("{\"exclusiveMaximum\":3}", "3.0", "(root): must be < 3, got 3\n");
	errors("{\"multipleOf\":0.5}", "1.2", "(root): must be a multiple of 0.5, got 1.2\n");
	errors("{\"minLength\":3}", "\"ab\"", "(root): must have at least 3 characters, got 2\n");
	errors("{\"maxLength\":1}", "\"\\u00e9\\u00e9\"", "(root): must have at most 1 characters, got 2\n");
	errors("{\"pattern\":\"^a+$\"}", "\"b\"", "(root): must match the pattern \"^a+$\"\n");
	errors("{\"minItems\":2}", "[1]", "(root): must have at least 2 items, got 1\n");
	errors("{\"maxItems\":1}", "[1,2]", "(root): must have at most 1 items, got 2\n");
	errors("{\"uniqueItems\":true}", "[1,2,1.0,{\"a\":1},{\"a\":1}]",
		"/2: duplicate of item 0; items must be unique\n/4: duplicate of item 3; items must be unique\n");
	errors("{\"not\":{\"type\":\"string\"}}", "\"x\"", "(root): must not match the schema under \"not\"\n");
	errors("false", "1", "(root): not allowed here (the schema is false)\n");
	errors("{\"properties\":{\"a\":false}}", "{\"a\":1}", "/a: not allowed here (the schema is false)\n");
	errors("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"object\",\"required\":[\"a\"]}]}", "{}",
		"(root): matches none of the anyOf branches: [0] expected string, got object; "
		"[1] missing required property \"a\"\n");
	errors("{\"anyOf\":[{\"properties\":{\"x\":{\"type\":\"string\"},\"y\":{\"type\":\"string\"}}},"
		"{\"required\":[\"z\"]}]}", "{\"x\":1,\"y\":2}",
		"(root): matches none of the anyOf branches: [0] /x: expected string, got number (+1 more); "
		"[1] missing required property \"z\"\n");
	errors("{\"oneOf\":[{\"type\":\"integer\"},{\"minimum\":2}]}", "3",
		"(root): matches oneOf branches 0 and 1; must match exactly one\n");
	errors("{\"oneOf\":[{\"type\":\"integer\"},{\"minimum\":2}]}", "1.5",
		"(root): matches none of the oneOf branches: [0] expected integer, got number; "
		"[1] must be >= 2, got 1.5\n");
	valid("{\"oneOf\":[{\"type\":\"integer\"},{\"minimum\":2}]}", "1");
	errors("{\"allOf\":[{\"minimum\":5},{\"multipleOf\":2}]}", "3",
		"(root): must be >= 5, got 3\n(root): must be a multiple of 2, got 3\n");
	/* a failed type check stops the other keywords of that schema */
	errors("{\"type\":\"string\",\"enum\":[\"a\"],\"minLength\":3}", "5", "(root): expected string, got number\n");
	errors("{\"additionalProperties\":{\"type\":\"integer\"}}", "{\"a\":\"x\"}", "/a: expected integer, got string\n");
	errors("{\"patternProperties\":{\"^n_\":{\"type\":\"number\"}},\"additionalProperties\":false}",
		"{\"n_1\":1,\"n_2\":\"x\",\"q\":0}",
		"/n_2: expected number, got string\n/q: property not allowed; allowed: names matching patternProperties\n");
	/* instance pointers: ~ and / escaped, control characters shown as \u escapes */
	errors("{\"additionalProperties\":false}", "{\"a/b~c\":1}", "/a~1b~0c: property not allowed\n");
	errors("{\"additionalProperties\":false}", "{\"a\\nb\":1}", "/a\\u000ab: property not allowed\n");
	errors("{\"items\":{\"properties\":{\"\":{\"type\":\"null\"}}}}", "[{\"\":1}]", "/0/: expected null, got number\n");

	/* a huge key is shown with its middle cut out */
	struct buf big = {0};
	bufputs(&big, "{\"");
	for (int i = 0; i < 5000; i++)
		bufputc(&big, 'k');
	bufputs(&big, "\":1}");
	val("{\"additionalProperties\":false}", big.data);
	ok(errs.len < 250 && strncmp(errs.data, "/kkk", 4) == 0 && strstr(errs.data, "kkk...kkk")
	   && strstr(errs.data, "kkk: property not allowed\n"),
		"long pointer cut (%zu bytes): %.300s", errs.len, errs.data);
	buffree(&big);

	/* long lists are capped, the count is not */
	struct buf arr = {0};
	bufputc(&arr, '[');
	for (int i = 0; i < 40; i++)
		bufprintf(&arr, "%s%d", i ? "," : "", i);
	bufputc(&arr, ']');
	int n = val("{\"items\":{\"type\":\"string\"}}", arr.data);
	ok(n == 40, "40 errors counted, got %d", n);
	int lines = 0;
	for (const char *l = errs.data; l && *l; l = strchr(l, '\n') + 1)
		lines++;
	ok(lines == 26, "25 lines and a summary, got %d", lines);
	ok(errs.data && strstr(errs.data, "/24: expected string, got number\n...: 15 more errors not shown\n"),
		"summary line: %s", errs.data ? errs.data : "");
	buffree(&arr);

	/* a schema that fails schemacheck yields one error, never a silent pass */
	errors("{\"typo\":1}", "1", "(schema): invalid output schema at \"/typo\": unknown keyword \"typo\" (did you mean \"type\"?)\n");
	ok(schemavalidate(NULL, NULL, &errs) == 1, "NULL schema is an error");
	cJSON *s = cJSON_Parse("{}");
	bufclear(&errs);
	ok(schemavalidate(s, NULL, &errs) == 1, "no value is an error");
	cJSON_Delete(s);
}

static void testsemantics(void)
{
	/* numbers */
	valid("{\"type\":\"integer\"}", "1.0");
	valid("{\"type\":\"integer\"}", "-0");
	valid("{\"type\":\"integer\"}", "1e300");
	invalid("{\"type\":\"integer\"}", "1.5");
	invalid("{\"type\":\"integer\"}", "\"1\"");
	valid("{\"multipleOf\":0.1}", "0.3");
	valid("{\"multipleOf\":0.01}", "19.99");
	valid("{\"multipleOf\":2}", "-4");
	valid("{\"multipleOf\":2}", "9007199254740992");
	invalid("{\"multipleOf\":2}", "9007199254740991");
	invalid("{\"multipleOf\":0.1}", "0.35");
	invalid("{\"multipleOf\":3}", "10");
	invalid("{\"multipleOf\":1e-300}", "1e300");
	valid("{\"minimum\":-1,\"maximum\":1}", "1");
	invalid("{\"exclusiveMaximum\":1}", "1");

	/* JSON equality */
	valid("{\"enum\":[1]}", "1.0");
	valid("{\"const\":{\"a\":1,\"b\":[null,true]}}", "{\"b\":[null,true],\"a\":1}");
	invalid("{\"const\":{\"a\":1}}", "{\"a\":1,\"b\":2}");
	invalid("{\"const\":[1,2]}", "[2,1]");
	invalid("{\"enum\":[true]}", "1");
	invalid("{\"enum\":[0]}", "false");
	invalid("{\"enum\":[null]}", "0");
	valid("{\"uniqueItems\":true}", "[0,false,null,\"0\",[0],{\"0\":0}]");
	invalid("{\"uniqueItems\":true}", "[[1,{\"a\":2}],[1,{\"a\":2.0}]]");
	valid("{\"uniqueItems\":false}", "[1,1]");

	/* strings count code points */
	valid("{\"minLength\":1,\"maxLength\":1}", "\"\\u00e9\"");
	valid("{\"maxLength\":1}", "\"\\ud83d\\udca9\"");
	valid("{\"maxLength\":2}", "\"\xe6\x97\xa5\xe6\x9c\xac\"");
	invalid("{\"maxLength\":2}", "\"abc\"");

	/* prefixItems and items */
	const char *tuple = "{\"prefixItems\":[{\"type\":\"integer\"},{\"type\":\"string\"}],\"items\":false}";
	valid(tuple, "[1,\"a\"]");
	valid(tuple, "[1]");
	valid(tuple, "[]");
	valid(tuple, "\"not an array\"");
	errors(tuple, "[1,\"a\",2]", "(root): must have at most 2 items (items is false), got 3\n");
	errors(tuple, "[\"a\",1]", "/0: expected integer, got string\n/1: expected string, got number\n");
	const char *rest = "{\"prefixItems\":[{\"type\":\"integer\"}],\"items\":{\"type\":\"boolean\"}}";
	valid(rest, "[1,true,false]");
	errors(rest, "[1,true,3]", "/2: expected boolean, got number\n");
	errors(rest, "[true]", "/0: expected integer, got boolean\n");
	valid("{\"prefixItems\":[{\"type\":\"integer\"}]}", "[1,\"anything\",null]");
	errors("{\"items\":false}", "[1]", "(root): must have at most 0 items (items is false), got 1\n");
	valid("{\"items\":false}", "[]");
	valid("{\"prefixItems\":[true,false]}", "[1]");
	errors("{\"prefixItems\":[true,false]}", "[1,2]", "/1: not allowed here (the schema is false)\n");

	/* $defs and $ref */
	const char *tree = "{\"$defs\":{\"node\":{\"type\":\"object\",\"required\":[\"value\"],\"properties\":{"
		"\"value\":{\"type\":\"number\"},\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"}}},"
		"\"additionalProperties\":false}},\"$ref\":\"#/$defs/node\"}";
	valid(tree, "{\"value\":1,\"kids\":[{\"value\":2},{\"value\":3,\"kids\":[{\"value\":4}]}]}");
	errors(tree, "{\"value\":1,\"kids\":[{\"value\":2},{\"value\":3,\"kids\":[{\"value\":\"4\"}]}]}",
		"/kids/1/kids/0/value: expected number, got string\n");
	errors(tree, "{\"value\":1,\"kids\":[{\"valeu\":2}]}",
		"/kids/0: missing required property \"value\"\n/kids/0/valeu: property not allowed; allowed: \"value\", \"kids\"\n");
	const char *esc = "{\"$defs\":{\"a/b\":{\"type\":\"integer\"},\"c~d\":{\"type\":\"string\"},\"e%f\":{\"type\":\"null\"}},"
		"\"properties\":{\"x\":{\"$ref\":\"#/$defs/a~1b\"},\"y\":{\"$ref\":\"#/$defs/c~0d\"},"
		"\"z\":{\"$ref\":\"#/$defs/e%25f\"}}}";
	valid(esc, "{\"x\":1,\"y\":\"s\",\"z\":null}");
	errors(esc, "{\"x\":\"1\",\"y\":2,\"z\":0}",
		"/x: expected integer, got string\n/y: expected string, got number\n/z: expected null, got number\n");
	valid("{\"definitions\":{\"a\":{\"type\":\"integer\"}},\"$ref\":\"#/definitions/a\"}", "1");
	invalid("{\"definitions\":{\"a\":{\"type\":\"integer\"}},\"$ref\":\"#/definitions/a\"}", "\"1\"");
	valid("{\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"$ref\":\"#/properties/a\"}}}", "{\"b\":2}");
	invalid("{\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"$ref\":\"#/properties/a\"}}}", "{\"b\":\"2\"}");
	valid("{\"anyOf\":[{\"type\":\"integer\"},{\"$ref\":\"#/anyOf/0\"}]}", "1");
	/* keywords beside $ref apply (2020-12) */
	invalid("{\"$defs\":{\"a\":{\"type\":\"array\"}},\"$ref\":\"#/$defs/a\",\"maxItems\":2}", "[1,2,3]");
	valid("{\"$defs\":{\"a\":{\"type\":\"array\"}},\"$ref\":\"#/$defs/a\",\"maxItems\":2}", "[1,2]");
	/* recursion through the value ends at the depth limit, with an error, not a crash */
	const char *nest = "{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}";
	struct buf deep = {0};
	for (int i = 0; i < 100; i++)
		bufputc(&deep, '[');
	for (int i = 0; i < 100; i++)
		bufputc(&deep, ']');
	valid(nest, deep.data);
	bufclear(&deep);
	for (int i = 0; i < 600; i++)
		bufputc(&deep, '[');
	for (int i = 0; i < 600; i++)
		bufputc(&deep, ']');
	int n = val(nest, deep.data);
	ok(n == 1 && strstr(errs.data, "nested too deeply"), "depth limit: %d %s", n, errs.data ? errs.data : "");
	buffree(&deep);

	/* annotations never assert */
	valid("{\"format\":\"email\",\"title\":\"t\",\"default\":5,\"examples\":[\"x\"],\"readOnly\":true}", "\"not an email\"");
	valid("true", "{\"anything\":[1]}");

	/* invalid UTF-8 in the value: counted per lead byte, matched without crashing */
	cJSON *schema = cJSON_Parse("{\"pattern\":\"^.+$\",\"maxLength\":1}");
	cJSON *bad = cJSON_CreateString("\xff\xfe");
	bufclear(&errs);
	ok(schemavalidate(schema, bad, &errs) >= 1, "invalid UTF-8: 2 bytes that are no characters");
	cJSON_Delete(schema);
	cJSON_Delete(bad);
}

/* pattern: ECMA-262 → ERE translation, through validation. */
static void pat(const char *pattern, const char *s, int want)
{
	cJSON *schema = cJSON_CreateObject(), *v = cJSON_CreateString(s);
	cJSON_AddStringToObject(schema, "pattern", pattern);
	struct buf e = {0};
	int n = schemavalidate(schema, v, &e);
	ok((n == 0) == want, "pattern /%s/ on \"%s\": want %s; %s", pattern, s, want ? "match" : "no match",
		e.data ? e.data : "");
	buffree(&e);
	cJSON_Delete(schema);
	cJSON_Delete(v);
}

static void testpatterns(void)
{
	pat("^\\d{3}-\\d{4}$", "555-1234", 1);
	pat("^\\d{3}-\\d{4}$", "555-12a4", 0);
	pat("^\\d+$", "\xd9\xa3", 0);          /* ARABIC-INDIC DIGIT THREE: \d is ASCII */
	pat("^\\w+$", "abc_XYZ_09", 1);
	pat("^\\w+$", "ab c", 0);
	pat("^\\w+$", "\xc3\xa9", 0);          /* é: \w is ASCII */
	pat("^\\s*$", " \t\r\n\v\f", 1);
	pat("^\\s$", "x", 0);
	pat("^\\D+$", "abc", 1);
	pat("^\\D+$", "a1", 0);
	pat("^\\W$", "-", 1);
	pat("^\\W$", "_", 0);
	pat("^\\S+$", "a b", 0);
	pat("^\\S+$", "ab", 1);
	pat("^[\\w.+-]+@[\\w-]+\\.[a-z]{2,}$", "a.b+c-d@x-y.io", 1);
	pat("^[\\w.+-]+@[\\w-]+\\.[a-z]{2,}$", "a@b", 0);
	pat("^[^\\s]+$", "ab", 1);
	pat("^[^\\s]+$", "a b", 0);
	pat("^[\\d\\s]+$", "1 2", 1);
	pat("^[\\d\\s]+$", "1a", 0);
	pat("^a.c$", "abc", 1);
	pat("^a.c$", "a\nc", 0);
	pat("^a.c$", "a\rc", 0);
	pat("^a.c$", "a\xc3\xa9" "c", 1);      /* . is one character, not one byte */
	pat("^.$", "\xf0\x9f\x92\xa9", 1);
	pat("^[\xc3\xa9x]$", "\xc3\xa9", 1);
	pat("^[^x]$", "\xc3\xa9", 1);
	pat("^\\.$", ".", 1);
	pat("^\\.$", "a", 0);
	pat("^\\/\\-\\\\$", "/-\\", 1);
	pat("^(?:ab)+$", "abab", 1);
	pat("^(?:ab)+$", "aba", 0);
	pat("^(a|b)*c$", "abbac", 1);
	pat("^a+?$", "aaa", 1);
	pat("^a+?b", "b", 0);
	pat("^a??b$", "b", 1);
	pat("^a{2,3}?$", "aaa", 1);
	pat("^a{2,3}$", "aaaa", 0);
	pat("^a{2,}$", "aaaaa", 1);
	pat("^a{$", "a{", 1);
	pat("^{}$", "{}", 1);
	pat("^a{,2}$", "a{,2}", 1);            /* not a quantifier in ECMA: literal */
	pat("^x}$", "x}", 1);
	pat("^\\u00e9$", "\xc3\xa9", 1);
	pat("^\\x41$", "A", 1);
	pat("^\\uD83D\\uDCA9$", "\xf0\x9f\x92\xa9", 1);
	pat("^\\t$", "\t", 1);
	pat("^[\\]\\[^-]+$", "]^[-", 1);
	pat("^[\\]\\[^-]+$", "a", 0);
	pat("^[\\^]$", "^", 1);
	pat("^[\\^]$", "a", 0);
	pat("^[\\^-]$", "-", 1);
	pat("^[\\^-]$", "^", 1);
	pat("^[^\\^]$", "^", 0);
	pat("^[^\\^]$", "a", 1);
	pat("^[!-/]+$", "!-/+", 1);
	pat("^[!-/]+$", "a", 0);
	pat("^[Z-a]+$", "Z[\\]^_`a", 1);
	pat("^[a\\-z]$", "-", 1);
	pat("^[a\\-z]$", "b", 0);
	pat("^[a-]$", "-", 1);
	pat("^[-a]$", "-", 1);
	pat("^[\\b]$", "\b", 1);
	pat("^[[:alpha:]]$", "a]", 1);          /* ECMA: a class of [ : a l p h, then ] */
	pat("^[[:alpha:]]$", "a", 0);
	pat("^\\$\\d+(\\.\\d\\d)?$", "$10.50", 1);
	pat("^\\$\\d+(\\.\\d\\d)?$", "$10.5", 0);
	pat("^abc$", "ABC", 0);
	pat("a+", "xxaayy", 1);                 /* unanchored */
	pat("^a|b$", "xb", 1);
	pat("^(|a)$", "", 1);
	pat("^\\(\\)\\*\\+\\?\\|\\{\\}$", "()*+?|{}", 1);
}

static void testlocale(void)
{
	locale_t before = uselocale((locale_t)0);
	pat("^.$", "\xc3\xa9", 1);
	ok(uselocale((locale_t)0) == before, "thread locale restored");
}

/* The work of one validation is bounded: two recursive anyOf branches over a value that fails both
 * only at its bottom applied 2^depth schemas (40 levels: days of CPU); allOf alike on a good value. */
static void testwork(void)
{
	cJSON *sc;
	static const char *const schemas[] = {
		"{\"$defs\":{\"n\":{\"anyOf\":[{\"type\":\"object\",\"properties\":{\"op\":{\"const\":\"add\"},"
		"\"args\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/n\"}}}},{\"type\":\"object\",\"properties\":"
		"{\"op\":{\"const\":\"neg\"},\"args\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/n\"}}}},"
		"{\"type\":\"number\"}]}},\"$ref\":\"#/$defs/n\"}",
		"{\"$defs\":{\"n\":{\"type\":[\"object\",\"number\"],\"properties\":{\"args\":{\"items\":{\"allOf\":"
		"[{\"$ref\":\"#/$defs/n\"},{\"$ref\":\"#/$defs/n\"}]}}}}},\"$ref\":\"#/$defs/n\"}",
	};
	for (int k = 0; k < 2; k++) {
		struct buf v = {0};
		for (int i = 0; i < 40; i++)
			bufputs(&v, "{\"op\":\"mul\",\"args\":[");
		bufputs(&v, k == 0 ? "\"x\"" : "1");
		for (int i = 0; i < 40; i++)
			bufputs(&v, "]}");
		cJSON *val_ = cJSON_Parse(v.data);
		sc = cJSON_Parse(schemas[k]);
		bufclear(&errs);
		int64_t t0 = nowms();
		int n = schemavalidate(sc, val_, &errs);
		int64_t ms = nowms() - t0;
		ok(n == 1 && errs.data && strstr(errs.data, "takes more than"), "work %d: refused past the budget: %s", k,
		   errs.data ? errs.data : "");
		ok(ms < 20000, "work %d: within seconds (%lld ms)", k, (long long)ms);
		cJSON_Delete(sc);
		cJSON_Delete(val_);
		buffree(&v);
	}
	/* a pattern whose repetitions make regcomp copy its atom 60^4 times: refused before regcomp */
	struct buf ptr = {0};
	struct err e = {0};
	sc = cJSON_Parse("{\"pattern\":\"(((a{1,60}){1,60}){1,60}){1,60}\"}");
	ok(schemacheck(sc, &ptr, &e) < 0 && strstr(e.msg, "more than 1000 copies"), "regexbomb refused: %s", e.msg);
	cJSON_Delete(sc);
	sc = cJSON_Parse("{\"pattern\":\"(a{1,99999})(a{1,99999})\"}");
	ok(schemacheck(sc, &ptr, &e) < 0, "siblings add up: %s", e.msg);
	cJSON_Delete(sc);
	sc = cJSON_Parse("{\"pattern\":\"^(ab|cd){2,5}[0-9]{1,3}x+$\"}");
	ok(schemacheck(sc, &ptr, &e) == 0, "an ordinary counted pattern is kept");
	cJSON_Delete(sc);
	buffree(&ptr);
	/* a broad value that is fine is not refused: 100 000 elements, each checked by a few schemas */
	sc = cJSON_Parse("{\"type\":\"array\",\"items\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\","
	                        "\"minimum\":0}]}}");
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < 100000; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(i));
	bufclear(&errs);
	ok(schemavalidate(sc, arr, &errs) == 0, "work: 100000 good values pass: %s", errs.data ? errs.data : "");
	cJSON_Delete(sc);
	cJSON_Delete(arr);
}

/* A wide value costs what its width does: the check for a repeated property compared every member
 * with every one before it (60 000 members: seconds; 200 000 in a model's final_result: 100 s a
 * turn, charged nothing), and uniqueItems every item with every one before it. */
static void testwide(void)
{
	cJSON *obj = cJSON_CreateObject(), *arr = cJSON_CreateArray();
	char k[32];
	for (int i = 0; i < 60000; i++) {
		snprintf(k, sizeof k, "k%d", i);
		cJSON_AddNumberToObject(obj, k, i);
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(i));
	}
	cJSON *sc = cJSON_Parse("{\"type\":\"object\"}");
	bufclear(&errs);
	int64_t t0 = nowms();
	int n = schemavalidate(sc, obj, &errs);
	int64_t ms = nowms() - t0;
	ok(n == 0, "wide: 60000 properties pass: %s", errs.data ? errs.data : "");
	ok(ms < 2000, "wide: 60000 properties checked for repeats in %lld ms", (long long)ms);
	cJSON_Delete(sc);
	sc = cJSON_Parse("{\"type\":\"array\",\"uniqueItems\":true}");
	bufclear(&errs);
	t0 = nowms();
	n = schemavalidate(sc, arr, &errs);
	ms = nowms() - t0;
	ok(n == 1 && errs.data && strstr(errs.data, "takes more than"), "wide: 60000 unique items refused past the "
	   "budget: %s", errs.data ? errs.data : "");
	ok(ms < 2000, "wide: uniqueItems over 60000 items stops in %lld ms", (long long)ms);
	cJSON_Delete(sc);
	cJSON_Delete(obj);
	cJSON_Delete(arr);
	errors("{\"type\":\"object\"}", "{\"a\":1,\"b\":2,\"a\":3,\"b\":4,\"A\":5}",
	       "/a: duplicate property\n/b: duplicate property\n");
	errors("{\"uniqueItems\":true}", "[1,2,[3],{\"a\":1},[3]]", "/4: duplicate of item 2; items must be unique\n");
	/* a comparison of two objects looks each member up by name: 2,000 items of 128 members alike
	 * but the last were charged 2 million comparisons and took 2 minutes */
	arr = cJSON_CreateArray();
	for (int i = 0; i < 2000; i++) {
		cJSON *o = cJSON_CreateObject();
		for (int j = 0; j < 127; j++) {
			snprintf(k, sizeof k, "k%d", j);
			cJSON_AddNumberToObject(o, k, 0);
		}
		cJSON_AddNumberToObject(o, "z", i);
		cJSON_AddItemToArray(arr, o);
	}
	sc = cJSON_Parse("{\"type\":\"array\",\"uniqueItems\":true}");
	bufclear(&errs);
	t0 = nowms();
	n = schemavalidate(sc, arr, &errs);
	ms = nowms() - t0;
	ok(n == 1 && errs.data && strstr(errs.data, "takes more than"), "wide: 2000 objects of 128 members refused past "
	   "the budget: %s", errs.data ? errs.data : "");
	ok(ms < 2000, "wide: uniqueItems over 2000 wide objects stops in %lld ms", (long long)ms);
	cJSON_Delete(sc);
	cJSON_Delete(arr);
}

int main(void)
{
	testwide();
	testwork();
	testcheck();
	testmessages();
	testsemantics();
	testpatterns();
	testlocale();
	buffree(&errs);
	return tdone();
}
