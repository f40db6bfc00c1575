/* modelspec: parse `--model NAME=SPEC` into the models: section's keys, have the manifest's model
 * parser read them, and put the model in the manifest. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "modelspec.h"

static const char *const options[] = {"key", "timeout", "retries", "max_output_tokens", "temperature", "idle_timeout",
                                      "retry_for", NULL};

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

/* Add KEY=VALUE to the pairs, and where in the spec it came from. */
static void pair(struct strv *kv, struct strv *from, const char *key, const char *val, const char *src)
{
	char *p = xasprintf("%s=%s", key, val);
	strvadd(kv, p);
	strvadd(from, src);
	free(p);
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* An error of the model parser ("--model:I:1: message") said as "--model ARG: PART: message", PART
 * the piece of the spec pair I came from; an error in a script file keeps its own position. */
static int specerr(const char *arg, const struct strv *from, struct err *e)
{
	int line = 0, at = 0;
	if (sscanf(e->msg, "--model:%d:%*d: %n", &line, &at) == 1 && at > 0 && line >= 1 && (size_t)line <= from->n) {
		char *msg = xstrdup(e->msg + at);
		errc(e, ERR_INPUT, "--model %s: %s: %s", arg, from->v[line - 1], msg);
		free(msg);
		return -1;
	}
	e->kind = ERR_INPUT;
	return errctx(e, "--model %s", arg);
}

/* The id of a job, or the name of a worker (a delegate), of model name with a cost budget, or NULL. */
static const char *costbound(const struct manifest *m, const char *name)
{
	for (size_t i = 0; i < m->njobs; i++)
		if ((m->jobs[i].max_cost > 0 || m->budget_cost > 0) && strcmp(jobmodel(m, &m->jobs[i]), name) == 0)
			return m->jobs[i].id;
	for (size_t i = 0; i < m->nworkers; i++) /* a delegate's */
		if ((m->workers[i].max_cost > 0 || m->budget_cost > 0) && strcmp(m->workers[i].model, name) == 0)
			return m->workers[i].name;
	return NULL;
}

int modelspec(struct manifest *m, const char *arg, struct err *e)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return errc(e, ERR_INPUT, "--model %s: expected NAME=SPEC, e.g. default=scripted:replies.yaml", arg);
	char *name = xstrndup(arg, (size_t)(eq - arg));
	const char *spec = eq + 1;
	struct model *old = manifestmodel(m, name);
	if (!old) {
		struct buf names = {0};
		for (size_t i = 0; i < m->nmodels; i++)
			bufprintf(&names, "%s%s", i ? ", " : "", m->models[i].name);
		errc(e, ERR_INPUT, "--model %s: the manifest has no model '%s' (it has: %s)", arg, name, names.data ? names.data : "none");
		buffree(&names);
		free(name);
		return -1;
	}
	free(name);
	/* The spec as the models: section's keys, parsed by the manifest's own model parser. */
	struct strv kv = {0}, from = {0};
	int keyset = 0, rc = 0;
	unsigned given = 0; /* options given: 1 timeout, 2 retries, 4 max_output_tokens, 8 temperature, 16 idle_timeout,
	                    * 32 retry_for */
	const char *colon = strchr(spec, ':');
	size_t plen = colon ? (size_t)(colon - spec) : 0;
	const char *rest = colon ? colon + 1 : "";
	if (plen == 8 && strncmp(spec, "scripted", 8) == 0) {
		if (!*rest) {
			rc = errc(e, ERR_INPUT, "--model %s: scripted needs a file: %s=scripted:FILE", arg, old->name);
		} else {
			char cwd[4096];
			char *file = rest[0] == '/' || !getcwd(cwd, sizeof cwd) ? xstrdup(rest) : pathjoin(cwd, rest);
			pair(&kv, &from, "provider", "scripted", spec);
			pair(&kv, &from, "script", file, spec);
			free(file);
		}
	} else if ((plen == 6 && strncmp(spec, "openai", 6) == 0) || (plen == 9 && strncmp(spec, "anthropic", 9) == 0)) {
		const char *opts = optstart(rest);
		char *head = xstrndup(rest, (size_t)(opts - rest));
		char *at = strstr(head, "@http://");
		if (!at)
			at = strstr(head, "@https://");
		if (at)
			*at = 0;
		if (!*head) {
			rc = errc(e, ERR_INPUT, "--model %s: no model name after '%.*s:'", arg, (int)plen, spec);
		} else {
			pair(&kv, &from, "provider", plen == 6 ? "openai" : "anthropic", spec);
			pair(&kv, &from, "model", head, spec);
			if (at)
				pair(&kv, &from, "base_url", at + 1, spec);
		}
		free(head);
		while (rc == 0 && *opts) {
			const char *next = optstart(opts + 1);
			char *src = xstrndup(opts + 1, (size_t)(next - opts - 1)); /* NAME=VALUE */
			char *opt = xstrdup(src), *v = strchr(opt, '=');
			*v++ = 0;
			if (strcmp(opt, "key") == 0) {
				keyset = 1; /* key= (empty): no key at all */
				if (*v && !envname(v))
					rc = errc(e, ERR_INPUT, "--model %s: key=%s: expected the name of an environment variable", arg, v);
				else if (*v)
					pair(&kv, &from, "api_key_env", v, src);
			} else {
				for (size_t i = 1; options[i]; i++)
					if (strcmp(opt, options[i]) == 0)
						given |= 1u << (i - 1);
				pair(&kv, &from, opt, v, src); /* the same name in the models: section */
			}
			free(opt);
			free(src);
			opts = next;
		}
	} else {
		rc = errc(e, ERR_INPUT, "--model %s: unknown provider in '%s' (scripted:FILE, openai:MODEL[@URL], anthropic:MODEL[@URL])",
		          arg, spec);
	}
	struct model md;
	if (rc == 0 && manifestmodelpairs(m, old->name, "--model", &kv, &md, e) < 0)
		rc = specerr(arg, &from, e);
	strvfree(&kv);
	strvfree(&from);
	if (rc < 0)
		return -1;
	/* What the spec does not say carries over: the timeouts, retries and output cap; the
	 * temperature for the same provider; the key for the same provider and endpoint. */
	if (!(given & 1))
		md.timeout_ms = old->timeout_ms;
	if (!(given & 2))
		md.retries = old->retries;
	if (!(given & 4))
		md.max_output_tokens = old->max_output_tokens;
	if (!(given & 16))
		md.idle_timeout_ms = old->idle_timeout_ms;
	if (!(given & 32))
		md.retry_for_ms = old->retry_for_ms;
	if (md.provider == old->provider && md.provider != PROV_SCRIPTED) {
		if (!(given & 8))
			md.temperature = old->temperature;
		if (!keyset && same(md.base_url, old->base_url) && old->api_key_env)
			md.api_key_env = xstrdup(old->api_key_env);
	}
	/* A scripted stand-in, or the same model elsewhere, keeps the window, price and provider options. */
	if (md.provider == PROV_SCRIPTED || (md.provider == old->provider && same(md.model, old->model))) {
		md.context_window = old->context_window;
		md.price = old->price;
		if (md.provider == old->provider) {
			md.thinking = old->thinking;
			md.cap_field = old->cap_field;
			free(md.reasoning_effort);
			md.reasoning_effort = old->reasoning_effort ? xstrdup(old->reasoning_effort) : NULL;
		}
	}
	modelfree(old);
	*old = md;
	struct err pe = {0};
	if (manifestadminprice(m, old, &pe) < 0)
		return errc(e, ERR_INPUT, "--model %s: %s", arg, pe.msg);
	const char *who = old->price.set ? NULL : costbound(m, old->name);
	if (who)
		return errc(e, ERR_INPUT, "--model %s: '%s' has a cost budget (max_cost or budget.cost) and this model no "
		            "price (only a scripted stand-in or the same model keeps the replaced one's): name it with its price "
		            "in the manifest's models", arg, who);
	return 0;
}
