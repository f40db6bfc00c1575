/* fuzz_shellsplit: the shell splitter, the policy that uses it, and path normalisation.
 * Invariants: a line with an opaque part never gets an allow when a deny rule could hide there,
 * and always does under an allow-all rule alone; every command has argc words and a NULL after
 * them, flags for each, and names a wrapper before it; a normalised path stays inside the
 * workspace. */
#include "fuzz.h"
#include "../../policy/policy.h"
#include "../../policy/shellsplit.h"

static void checkpath(const char *p)
{
	char *w = wspath(p);
	if (!w)
		return;
	fuzzassert(w[0] != '/');
	if (strcmp(w, ".") != 0)
		for (const char *s = w; *s;) {
			const char *end = strchrnul(s, '/');
			size_t n = (size_t)(end - s);
			fuzzassert(n > 0);
			fuzzassert(!(n == 1 && s[0] == '.'));
			fuzzassert(!(n == 2 && s[0] == '.' && s[1] == '.'));
			s = *end ? end + 1 : end;
		}
	free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shsplit sp;
	int rc = shsplit((const char *)data, size, &sp);
	fuzzassert(rc == 0 || rc == -1);
	int flagged = sp.unsafe != NULL;
	for (size_t k = 0; k < sp.ncmds; k++) {
		const struct shcmd *c = &sp.cmds[k];
		fuzzassert(c->argv && c->text);
		for (size_t i = 0; i < c->argc; i++)
			fuzzassert(c->argv[i]);
		fuzzassert(c->argv[c->argc] == NULL);
		fuzzassert(c->argc == 0 || c->wf);
		fuzzassert(c->via >= -1 && c->via < (int)k);
		flagged |= c->opaque != NULL;
	}
	fuzzassert((rc == 0) == !flagged);
	shsplitfree(&sp);

	/* The policy on the same line, with rules that allow every command. */
	char *line = strndup((const char *)data, size);
	if (strlen(line) == size) {
		struct rule rules[] = {
			{.tool = "shell", .command = "*", .decision = DEC_ALLOW},
			{.tool = "shell", .command = "rm *", .decision = DEC_DENY},
			{.tool = "*_file", .path = "**", .decision = DEC_ALLOW},
		};
		struct approval a = {.def = DEC_ALLOW, .rules = rules, .nrules = 3};
		cJSON *args = cJSON_CreateObject();
		cJSON_AddStringToObject(args, "command", line);
		struct verdict v;
		policydecide(&a, "w", "shell", args, &v);
		if (rc < 0)
			fuzzassert(v.decision != DEC_ALLOW);
		verdictfree(&v);
		struct approval all = {.def = DEC_DENY, .rules = rules, .nrules = 1};
		rules[0].command = NULL;
		policydecide(&all, "w", "shell", args, &v);
		fuzzassert(v.decision == DEC_ALLOW);
		verdictfree(&v);
		rules[0].command = "*";
		cJSON_Delete(args);

		args = cJSON_CreateObject();
		cJSON_AddStringToObject(args, "path", line);
		policydecide(&a, "w", "write_file", args, &v);
		if (v.decision == DEC_ALLOW) {
			fuzzassert(v.path);
			checkpath(v.path);
		}
		verdictfree(&v);
		cJSON_Delete(args);
		checkpath(line);
	}
	free(line);
	return 0;
}
