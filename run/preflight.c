/* preflight: the run's outside needs, checked in one pass before the run directory is made.
   Only what a job would otherwise find out at its first model call or first step: a key left
   unset, a base_url nobody can resolve, no engine, an image the engine lacks. */
#include <curl/curl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include "preflight.h"
#include "../llm/llm.h"
#include "../sandbox/sandbox.h"

/* Mark the model named (NULL: the worker's) and those the worker's delegates use (ws: workers seen). */
static void usemodels(const struct manifest *m, const struct worker *w, const char *model, int *ws, int *ms)
{
	const struct model *md = manifestmodel(m, model ? model : w->model);
	if (md)
		ms[md - m->models] = 1;
	size_t wi = (size_t)(w - m->workers);
	if (ws[wi])
		return;
	ws[wi] = 1;
	for (size_t i = 0; i < w->delegates.n; i++) {
		const struct worker *d = manifestworker(m, w->delegates.v[i]);
		if (d)
			usemodels(m, d, NULL, ws, ms);
	}
}

/* Is a proxy set that curl may use (then the proxy resolves the name, not we)? */
static int proxied(void)
{
	static const char *const vars[] = {"https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY", NULL};
	for (int i = 0; vars[i]; i++)
		if (getenv(vars[i]) && *getenv(vars[i]))
			return 1;
	return 0;
}

/* The host of a model's base_url resolves. */
/* A new reason in why, at p (file:line:col) when p is known. */
static void whyat(struct buf *why, const struct pos *p)
{
	if (why->len)
		bufputs(why, "\n");
	if (p->file && p->file[0] == '-') /* a model of --model: the flag, not a file */
		bufprintf(why, "%s: ", p->file);
	else if (p->file)
		bufprintf(why, "%s:%d:%d: ", p->file, p->line, p->col);
}

static int resolves(const struct model *md, struct buf *why)
{
	CURLU *u = curl_url();
	char *host = NULL;
	int ok = 1;
	if (!u || curl_url_set(u, CURLUPART_URL, md->base_url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		whyat(why, &md->pos);
		bufprintf(why, "model '%s': base_url %s is not a URL", md->name, md->base_url);
		ok = 0;
	} else if (!proxied()) {
		char name[256];
		size_t n = strlen(host);
		if (n >= 2 && host[0] == '[' && host[n - 1] == ']') /* an IPv6 literal */
			snprintf(name, sizeof name, "%.*s", (int)(n - 2), host + 1);
		else
			snprintf(name, sizeof name, "%s", host);
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
		int rc = getaddrinfo(name, NULL, &hints, &res);
		if (rc != 0) {
			whyat(why, &md->pos);
			bufprintf(why, "model '%s': the host of base_url %s does not resolve: %s", md->name, md->base_url,
			          gai_strerror(rc));
			ok = 0;
		}
		if (res)
			freeaddrinfo(res);
	}
	curl_free(host);
	curl_url_cleanup(u);
	return ok;
}

void preflightkeys(const struct manifest *m, struct strv *warnings)
{
	int *ws = xcalloc(m->nworkers + 1, sizeof *ws), *ms = xcalloc(m->nmodels + 1, sizeof *ms);
	for (size_t i = 0; i < m->njobs; i++) {
		const struct worker *w = manifestworker(m, m->jobs[i].worker);
		if (w)
			usemodels(m, w, jobmodel(m, &m->jobs[i]), ws, ms);
	}
	for (size_t i = 0; i < m->nmodels; i++) {
		const struct model *md = &m->models[i];
		const char *bad = ms[i] ? llmkeyproblem(md) : NULL;
		if (!bad)
			continue;
		char *w = xasprintf("%s:%d:%d: warning: model '%s': environment variable %s %s",
		                    md->keypos.file ? md->keypos.file : "manifest", md->keypos.line, md->keypos.col,
		                    md->name, llmkeyenv(md), bad);
		strvadd(warnings, w);
		free(w);
	}
	free(ws);
	free(ms);
}

int preflight(const struct manifest *m, const int *sel, int models, int owners, struct err *e)
{
	int *ws = xcalloc(m->nworkers + 1, sizeof *ws), *ms = xcalloc(m->nmodels + 1, sizeof *ms);
	struct buf why = {0};
	for (size_t i = 0; i < m->njobs; i++) {
		const struct worker *w = sel[i] ? manifestworker(m, m->jobs[i].worker) : NULL;
		if (w)
			usemodels(m, w, jobmodel(m, &m->jobs[i]), ws, ms);
	}
	for (size_t i = 0; models && i < m->nmodels; i++) {
		if (!ms[i])
			continue;
		struct llm *l = NULL;
		struct err le = {0};
		if (llmopen(&l, &m->models[i], NULL, &le) < 0) {
			whyat(&why, &m->models[i].keypos); /* at its api_key_env, as validate's warning */
			bufputs(&why, le.msg);
		}
		if (m->models[i].base_url)
			resolves(&m->models[i], &why);
		llmclose(l);
	}
	/* Each distinct sandbox once: jobs share their worker's or the manifest's. */
	for (size_t i = 0; i < m->njobs; i++) {
		if (!sel[i])
			continue;
		const struct sandboxconf *c = &m->jobs[i].sandbox;
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = sel[k] && m->jobs[k].sandbox.backend == c->backend &&
			       !strcmp(m->jobs[k].sandbox.image ? m->jobs[k].sandbox.image : "", c->image ? c->image : "");
		struct err se = {0};
		if (!seen && sbxcheck(c, &se) < 0)
			bufprintf(&why, "%sjob '%s': %s", why.len ? "\n" : "", m->jobs[i].id, se.msg);
		/* steps that could not write their workspace: said now, not as a night of failed steps */
		const char *wsp = m->jobs[i].workspace ? m->jobs[i].workspace : m->workspace;
		struct err oe = {0};
		if (owners && manifestworkerwrites(m, m->jobs[i].worker) && sbxwritable(c, wsp, &oe) < 0 &&
		    !(why.data && strstr(why.data, oe.msg)))
			bufprintf(&why, "%sjob '%s': %s", why.len ? "\n" : "", m->jobs[i].id, oe.msg);
	}
	int rc = 0;
	if (why.len)
		rc = errc(e, ERR_INPUT, "%s", why.data);
	buffree(&why);
	free(ws);
	free(ms);
	return rc;
}
