/* modelspec: parse `--model NAME=SPEC` and put the model it describes in the manifest. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "../../manifest/yaml.h"
#include "modelspec.h"

static const char *const options[] = {"key", "timeout", "retries", "max_output_tokens", "temperature", NULL};

/* Where the options start: the first ',' followed by a known option name and '='. */
static const char *optstart(const char *s)
{
	for (const char *p = strchr(s, ','); p; p = strchr(p + 1, ',')) {
		for (size_t i = 0; options[i]; i++) {
			size_t n = strlen(options[i]);
			if (strncmp(p + 1, options[i], n) == 0 && p[1 + n] == '=')
				return p;
		}
	}
	return s + strlen(s);
}

static int envname(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

/* Apply one OPTION (NAME=VALUE) to md; keyset records that key= was given. */
static int option(struct model *md, const char *opt, int *keyset, struct err *e)
{
	const char *v = strchr(opt, '=') + 1;
	size_t n = (size_t)(v - 1 - opt);
	char *end;
	if (strncmp(opt, "key", n) == 0) {
		if (*v && !envname(v))
			return errc(e, 2, "key=%s: expected the name of an environment variable", v);
		free(md->api_key_env);
		md->api_key_env = *v ? xstrdup(v) : NULL;
		*keyset = 1;
	} else if (strncmp(opt, "timeout", n) == 0) {
		if (parseduration(v, &md->timeout_ms) < 0 || md->timeout_ms <= 0)
			return errc(e, 2, "timeout=%s: expected a duration such as 30s or 2m", v);
	} else if (strncmp(opt, "retries", n) == 0) {
		long r = strtol(v, &end, 10);
		if (!*v || *end || r < 0 || r > 100)
			return errc(e, 2, "retries=%s: expected a number from 0 to 100", v);
		md->retries = (int)r;
	} else if (strncmp(opt, "max_output_tokens", n) == 0) {
		long long t = strtoll(v, &end, 10);
		if (!*v || *end || t < 1 || t > 10000000)
			return errc(e, 2, "max_output_tokens=%s: expected a number from 1 to 10000000", v);
		md->max_output_tokens = t;
	} else {
		double t = strtod(v, &end);
		if (!*v || *end || !(t >= 0 && t <= 2))
			return errc(e, 2, "temperature=%s: expected a number from 0 to 2", v);
		md->temperature = t;
	}
	return 0;
}

/* Check scripted replies have the shape the manifest allows: [{text?, tool_calls?: [{name, arguments?, id?}]}]. */
static int checkreplies(const cJSON *r, const char *file, struct err *e)
{
	const cJSON *it, *tc;
	int i = 0;
	if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) == 0)
		return errc(e, 2, "%s: expected a list of replies", file);
	cJSON_ArrayForEach(it, r)
	{
		i++;
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(it, "text");
		const cJSON *calls = cJSON_GetObjectItemCaseSensitive(it, "tool_calls");
		if (!cJSON_IsObject(it) || (!text && !calls))
			return errc(e, 2, "%s: reply %d needs text or tool_calls", file, i);
		for (const cJSON *k = it->child; k; k = k->next)
			if (strcmp(k->string, "text") != 0 && strcmp(k->string, "tool_calls") != 0)
				return errc(e, 2, "%s: reply %d: unknown key '%s' (text, tool_calls)", file, i, k->string);
		if (text && !cJSON_IsString(text))
			return errc(e, 2, "%s: reply %d: text must be a string (quote it)", file, i);
		if (calls && !cJSON_IsArray(calls))
			return errc(e, 2, "%s: reply %d: tool_calls must be a list", file, i);
		cJSON_ArrayForEach(tc, calls)
		{
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(tc, "name");
			const cJSON *args = cJSON_GetObjectItemCaseSensitive(tc, "arguments");
			const cJSON *id = cJSON_GetObjectItemCaseSensitive(tc, "id");
			if (!cJSON_IsString(name) || !*name->valuestring)
				return errc(e, 2, "%s: reply %d: a tool call needs a name", file, i);
			if (args && !cJSON_IsObject(args))
				return errc(e, 2, "%s: reply %d: arguments of %s must be a mapping", file, i, name->valuestring);
			if (id && !cJSON_IsString(id))
				return errc(e, 2, "%s: reply %d: id of %s must be a string", file, i, name->valuestring);
		}
	}
	return 0;
}

/* Load scripted replies from a YAML file. */
static cJSON *loadreplies(const char *file, struct err *e)
{
	struct buf text = {0};
	struct ydoc y;
	cJSON *r = NULL;
	if (readfile(file, &text, e) < 0) {
		errc(e, 2, "%s", e->msg);
		return NULL;
	}
	if (yload(&y, file, text.data, text.len, 0, e) == 0) {
		yaml_node_t *root = yroot(&y);
		if (root && root->type == YAML_MAPPING_NODE && yget(&y, root, "replies"))
			root = yget(&y, root, "replies");
		if (root)
			r = yjson(&y, root);
		else
			errc(e, 2, "%s: empty", file);
		if (r && checkreplies(r, file, e) < 0) {
			cJSON_Delete(r);
			r = NULL;
		}
	}
	yfree(&y);
	buffree(&text);
	return r;
}

/* Free what a model owns and clear it, keeping nothing. */
static void modelclear(struct model *md)
{
	free(md->name);
	free(md->model);
	free(md->base_url);
	free(md->api_key_env);
	free(md->script);
	cJSON_Delete(md->replies);
	modelextrafree(md);
	memset(md, 0, sizeof *md);
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

int modelspec(struct manifest *m, const char *arg, struct err *e)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return errc(e, 2, "--model %s: expected NAME=SPEC, e.g. default=scripted:replies.yaml", arg);
	char *name = xstrndup(arg, (size_t)(eq - arg));
	const char *spec = eq + 1;
	struct model *old = manifestmodel(m, name);
	if (!old) {
		struct buf names = {0};
		for (size_t i = 0; i < m->nmodels; i++)
			bufprintf(&names, "%s%s", i ? ", " : "", m->models[i].name);
		errc(e, 2, "--model %s: the manifest has no model '%s' (it has: %s)", arg, name, names.data ? names.data : "none");
		buffree(&names);
		free(name);
		return -1;
	}
	struct model md = {0};
	md.name = name;
	md.pos = (struct pos){"--model", 1, 1};
	md.temperature = -1;
	md.timeout_ms = old->timeout_ms;
	md.retries = old->retries;
	md.max_output_tokens = old->max_output_tokens;
	const char *colon = strchr(spec, ':');
	size_t plen = colon ? (size_t)(colon - spec) : 0;
	const char *rest = colon ? colon + 1 : "";
	if (plen == 8 && strncmp(spec, "scripted", 8) == 0) {
		md.provider = PROV_SCRIPTED;
		if (!*rest) {
			modelclear(&md);
			return errc(e, 2, "--model %s: scripted needs a file: %s=scripted:FILE", arg, old->name);
		}
		md.script = xstrdup(rest);
		if (!(md.replies = loadreplies(rest, e))) {
			modelclear(&md);
			return errctx(e, "--model %s", arg);
		}
	} else if ((plen == 6 && strncmp(spec, "openai", 6) == 0) || (plen == 9 && strncmp(spec, "anthropic", 9) == 0)) {
		md.provider = plen == 6 ? PROV_OPENAI : PROV_ANTHROPIC;
		const char *opts = optstart(rest);
		char *head = xstrndup(rest, (size_t)(opts - rest));
		char *at = strstr(head, "@http://");
		if (!at)
			at = strstr(head, "@https://");
		if (at) {
			md.base_url = xstrdup(at + 1);
			*at = 0;
		}
		md.model = head;
		if (!*head) {
			modelclear(&md);
			return errc(e, 2, "--model %s: no model name after '%.*s:'", arg, (int)plen, spec);
		}
		if (md.provider == old->provider) {
			md.temperature = old->temperature;
			if (same(md.base_url, old->base_url) && old->api_key_env)
				md.api_key_env = xstrdup(old->api_key_env);
		}
		int keyset = 0;
		while (*opts) {
			const char *next = optstart(opts + 1);
			char *opt = xstrndup(opts + 1, (size_t)(next - opts - 1));
			int rc = option(&md, opt, &keyset, e);
			free(opt);
			if (rc < 0) {
				modelclear(&md);
				return errctx(e, "--model %s", arg);
			}
			opts = next;
		}
	} else {
		modelclear(&md);
		return errc(e, 2, "--model %s: unknown provider in '%s' (scripted:FILE, openai:MODEL[@URL], anthropic:MODEL[@URL])",
		            arg, spec);
	}
	/* A scripted stand-in, or the same model elsewhere, keeps the window, price and provider options. */
	if (md.provider == PROV_SCRIPTED || (md.provider == old->provider && same(md.model, old->model))) {
		md.context_window = old->context_window;
		md.price = old->price;
		if (md.provider == old->provider) {
			md.thinking = old->thinking;
			md.cap_field = old->cap_field;
			md.reasoning_effort = old->reasoning_effort ? xstrdup(old->reasoning_effort) : NULL;
		}
	}
	modelclear(old);
	*old = md;
	return 0;
}
