/* test_schemasuite: run the official JSON-Schema-Test-Suite (draft 7, Debian package
 * json-schema-test-suite) for every keyword manifest/schema.c claims. A few groups are left out,
 * each with its reason printed and never counted as passed; for those that are out because
 * they use something unsupported, we check schemacheck rejects them (fail closed).
 * JSTS_DIR overrides the suite directory. */
#include <stdlib.h>
#include <string.h>
#include "../../manifest/schema.h"
#include "t.h"

/* Suite file (under the draft directory) for each claimed keyword; NULL: none in the suite. */
static const struct { const char *kw, *file; } files[] = {
	{"type", "type.json"}, {"enum", "enum.json"}, {"const", "const.json"},
	{"multipleOf", "multipleOf.json"}, {"minimum", "minimum.json"}, {"maximum", "maximum.json"},
	{"exclusiveMinimum", "exclusiveMinimum.json"}, {"exclusiveMaximum", "exclusiveMaximum.json"},
	{"minLength", "minLength.json"}, {"maxLength", "maxLength.json"}, {"pattern", "pattern.json"},
	{"prefixItems", NULL}, {"items", "items.json"}, {"minItems", "minItems.json"},
	{"maxItems", "maxItems.json"}, {"uniqueItems", "uniqueItems.json"},
	{"required", "required.json"}, {"properties", "properties.json"},
	{"patternProperties", "patternProperties.json"},
	{"additionalProperties", "additionalProperties.json"}, {"allOf", "allOf.json"},
	{"anyOf", "anyOf.json"}, {"oneOf", "oneOf.json"}, {"not", "not.json"}, {"$defs", NULL},
	{"definitions", "definitions.json"}, {"$ref", "ref.json"}, {"default", "default.json"},
	/* boolean schemas are no keyword but are claimed; the optional files test numbers */
	{"(boolean schemas)", "boolean_schema.json"}, {"(big numbers)", "optional/bignum.json"},
	{"(1.0 is an integer)", "optional/zeroTerminatedFloats.json"},
};

/* Groups (or one case of a group, test != NULL) left out, and why. reject: schemacheck must
 * refuse the group's schema. */
static const struct { const char *file, *group, *test, *why; int reject; } skips[] = {
	{"items.json", "an array of schemas for items", NULL,
		"draft-7 tuple form of items (2020-12 prefixItems; own tests)", 1},
	{"items.json", "items with boolean schemas", NULL,
		"draft-7 tuple form of items (2020-12 prefixItems; own tests)", 1},
	{"ref.json", "relative pointer ref to array", NULL, "draft-7 tuple form of items", 1},
	{"ref.json", "escaped pointer ref", NULL,
		"targets are unknown keywords (\"tilda~field\"), rejected; ~0 ~1 %25 decoding has own tests", 1},
	{"ref.json", "remote ref, containing refs itself", NULL, "remote $ref", 1},
	{"ref.json", "Recursive references between schemas", NULL, "$id-relative $ref", 1},
	{"definitions.json", "valid definition", NULL, "remote $ref to the draft-07 meta-schema", 1},
	{"definitions.json", "invalid definition", NULL, "remote $ref to the draft-07 meta-schema", 1},
	{"ref.json", "ref overrides any sibling keywords", "ref valid, maxItems ignored",
		"draft 7 ignores keywords beside $ref; 2020-12 (and we) apply them", 0},
};

static int files_, cases, skipped, rejections, accepted;

static int skipfor(const char *file, const char *group, const char *test)
{
	for (size_t i = 0; i < sizeof skips / sizeof *skips; i++)
		if (strcmp(skips[i].file, file) == 0 && strcmp(skips[i].group, group) == 0 &&
		    (skips[i].test ? test && strcmp(skips[i].test, test) == 0 : !test))
			return (int)i;
	return -1;
}

static void runfile(const char *dir, const char *file)
{
	char *path = xasprintf("%s/%s", dir, file);
	struct buf text = {0};
	struct err e;
	if (readfile(path, &text, &e) < 0) {
		ok(0, "%s", e.msg);
		free(path);
		return;
	}
	cJSON *groups = cJSON_Parse(text.data);
	ok(cJSON_IsArray(groups), "%s: not a JSON array", path);
	files_++;
	for (cJSON *g = groups ? groups->child : NULL; g; g = g->next) {
		const char *gname = cJSON_GetObjectItem(g, "description")->valuestring;
		cJSON *schema = cJSON_GetObjectItem(g, "schema"), *tests = cJSON_GetObjectItem(g, "tests");
		struct buf ptr = {0};
		int s = skipfor(file, gname, NULL);
		int checked = schemacheck(schema, &ptr, &e);
		if (s >= 0) {
			printf("SKIPPED %s: %s: %d cases: %s\n", file, gname, cJSON_GetArraySize(tests), skips[s].why);
			skipped += cJSON_GetArraySize(tests);
			if (skips[s].reject) {
				ok(checked < 0, "%s: %s: schemacheck accepted a schema it cannot honour", file, gname);
				if (checked < 0)
					printf("        rejected at \"%s\": %s\n", ptr.len ? ptr.data : "", e.msg);
				rejections++;
			}
			buffree(&ptr);
			continue;
		}
		ok(checked == 0, "%s: %s: schemacheck rejected at \"%s\": %s", file, gname,
			ptr.len ? ptr.data : "", e.msg);
		buffree(&ptr);
		accepted++;
		if (checked < 0)
			continue;
		for (cJSON *t = tests->child; t; t = t->next) {
			const char *tname = cJSON_GetObjectItem(t, "description")->valuestring;
			int want = cJSON_IsTrue(cJSON_GetObjectItem(t, "valid"));
			if ((s = skipfor(file, gname, tname)) >= 0) {
				printf("SKIPPED %s: %s: %s: %s\n", file, gname, tname, skips[s].why);
				skipped++;
				continue;
			}
			struct buf errs = {0};
			int n = schemavalidate(schema, cJSON_GetObjectItem(t, "data"), &errs);
			int lines = 0;
			for (const char *l = errs.data; l && *l; l = strchr(l, '\n') + 1)
				lines++;
			ok((n == 0) == want && lines == n, "%s: %s: %s: expected %s, got %d errors, %d lines:\n%s",
				file, gname, tname, want ? "valid" : "invalid", n, lines, errs.data ? errs.data : "");
			cases++;
			buffree(&errs);
		}
	}
	cJSON_Delete(groups);
	buffree(&text);
	free(path);
}

int main(void)
{
	const char *dir = getenv("JSTS_DIR");
	if (!dir)
		dir = "/usr/share/json-schema-test-suite/tests/draft7";
	char *probe = xasprintf("%s/type.json", dir);
	struct buf tmp = {0};
	struct err e;
	if (readfile(probe, &tmp, &e) < 0) {
		printf("SKIPPED schemasuite: %s (apt-get install json-schema-test-suite)\n", e.msg);
		free(probe);
		return tdone();
	}
	buffree(&tmp);
	free(probe);

	/* Every claimed keyword must appear in the table above, so nothing claimed goes untested. */
	printf("suite: %s\nclaimed keywords:", dir);
	for (const char *const *k = schemakeywords(); *k; k++) {
		const char *f = NULL;
		int found = 0;
		for (size_t i = 0; i < sizeof files / sizeof *files; i++)
			if (strcmp(files[i].kw, *k) == 0)
				f = files[i].file, found = 1;
		printf(" %s%s", *k, found ? (f ? "" : "(own tests)") : "(annotation)");
	}
	printf("\n");
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		if (files[i].file)
			runfile(dir, files[i].file);
	printf("%d suite cases run, %d skipped (listed above, not counted as passed); also checked: "
		"%d files parsed, %d group schemas accepted, %d unsupported ones rejected\n",
		cases, skipped, files_, accepted, rejections);
	return tdone();
}
