/* mcpjob: MCP servers as a job sees them. Data flow of a call: the model's mcp__S__T → the
 * approval rules (agent.c) → here: the server S, tools/call T → the result as text → a
 * tool_result event that holds that text, which is what replay answers with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../manifest/mcpconf.h"
#include "../util/glob.h"
#include "../mcp/mcp.h"
#include "mcpjob.h"

struct srv {
	const struct mcpserver *conf;
	struct mcp *c; /* live only */
};

struct mcpjob {
	struct mcpjobconf conf;
	struct srv *srv;
	size_t nsrv;
	cJSON *defs;    /* offered, neutral form */
	cJSON *local;   /* names of offered tools whose server runs in the sandbox */
	int writes;     /* an offered tool lacks its server's readOnlyHint */
	cJSON *results; /* replay: recorded MCP tool_result events */
};

static int wanted(const struct worker *w, const char *name)
{
	for (size_t i = 0; i < w->mcptools.n; i++)
		if (globmatch(w->mcptools.v[i], strlen(w->mcptools.v[i]), name, strlen(name)))
			return 1;
	return 0;
}

static int usesserver(const struct worker *w, const char *server)
{
	size_t n = strlen(server);
	for (size_t i = 0; i < w->mcptools.n; i++)
		if (mcpsplit(w->mcptools.v[i]) == n && strncmp(w->mcptools.v[i] + 5, server, n) == 0)
			return 1;
	return 0;
}

/* A model-facing name the model APIs take: [A-Za-z0-9_-], at most 64 characters. */
static int apiname(const char *s)
{
	if (strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-'))
			return 0;
	return 1;
}

/* Each connection an HTTP server's transport opened or refused as a net_connection event; frees net. */
static int netlog(struct evlog *ev, cJSON *net, struct err *e)
{
	int rc = 0;
	cJSON *it;
	while (net && rc == 0 && (it = net->child)) {
		cJSON_DetachItemViaPointer(net, it);
		rc = evadd(ev, "net_connection", it, e);
	}
	cJSON_Delete(net);
	return rc;
}

/* Start one server live and offer what the worker's globs take of it; logs mcp_tools. */
static int startone(struct mcpjob *mj, struct srv *s, struct err *e)
{
	const struct mcpjobconf *c = &mj->conf;
	struct strv env = {0};
	for (size_t i = 0; c->env && i < c->env->n; i++)
		strvadd(&env, c->env->v[i]);
	for (size_t i = 0; i < s->conf->env.n; i++) {
		const char *v = getenv(s->conf->env.v[i]);
		if (!v)
			continue;
		char *kv = xasprintf("%s=%s", s->conf->env.v[i], v);
		strvadd(&env, kv);
		free(kv);
	}
	struct sbxconf sc = {c->sc, c->workspace, env.v, 0};
	int64_t t0 = nowms();
	cJSON *net = NULL;
	int rc = mcpopen(&s->c, s->conf, &sc, c->m, c->deadline, &net, e);
	strvfree(&env);
	if (netlog(c->ev, net, e) < 0)
		rc = -1;
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "server", s->conf->name);
	cJSON_AddStringToObject(ev, "transport", s->conf->url ? "http" : "stdio");
	if (s->conf->url) {
		cJSON_AddStringToObject(ev, "url", s->conf->url);
	} else {
		cJSON *argv = cJSON_AddArrayToObject(ev, "command");
		for (size_t i = 0; i < s->conf->command.n; i++)
			cJSON_AddItemToArray(argv, cJSON_CreateString(s->conf->command.v[i]));
		cJSON_AddStringToObject(ev, "backend", c->sc->backend == BACKEND_NAMESPACE ? "namespace"
		                                       : c->sc->backend == BACKEND_DOCKER ? "docker" : "none");
	}
	cJSON_AddNumberToObject(ev, "start_ms", (double)(nowms() - t0));
	if (rc < 0) {
		struct err ee;
		cJSON_AddStringToObject(ev, "error", e->msg);
		evadd(c->ev, "mcp_tools", ev, &ee);
		return -1;
	}
	cJSON_AddStringToObject(ev, "protocol_version", s->c->version);
	if (s->c->serverinfo)
		cJSON_AddItemToObject(ev, "server_info", cJSON_Duplicate(s->c->serverinfo, 1));
	cJSON *offered = cJSON_AddArrayToObject(ev, "offered"), *left = cJSON_AddArrayToObject(ev, "not_offered");
	cJSON *ro = cJSON_AddArrayToObject(ev, "read_only");
	for (size_t i = 0; i < s->c->ntools; i++) {
		const struct mcptool *t = &s->c->tools[i];
		char *name = mcpname(s->conf->name, t->name);
		if (!wanted(c->w, name)) {
			cJSON_AddItemToArray(left, cJSON_CreateString(name));
		} else if (!apiname(name)) {
			char *why = xasprintf("%s (not a name model APIs take: [A-Za-z0-9_-], 64 at most)", name);
			cJSON_AddItemToArray(left, cJSON_CreateString(why));
			free(why);
		} else {
			cJSON *d = cJSON_CreateObject();
			cJSON_AddStringToObject(d, "name", name);
			cJSON_AddStringToObject(d, "description", t->description ? t->description : t->name);
			cJSON_AddItemToObject(d, "parameters", cJSON_Duplicate(t->input, 1));
			cJSON_AddItemToArray(offered, d);
			if (t->readonly)
				cJSON_AddItemToArray(ro, cJSON_CreateString(name));
		}
		free(name);
	}
	return evadd(c->ev, "mcp_tools", ev, e);
}

/* Take the offered tools of every mcp_tools event into defs (live: just logged; replay: the record's). */
static void adddefs(struct mcpjob *mj, const cJSON *ev)
{
	const cJSON *d;
	int local = !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ev, "url"));
	const cJSON *ro = cJSON_GetObjectItemCaseSensitive(ev, "read_only");
	cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(ev, "offered"))
	{
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "name"));
		int hinted = 0;
		const cJSON *r;
		cJSON_ArrayForEach(r, ro)
		hinted |= name && cJSON_IsString(r) && strcmp(r->valuestring, name) == 0;
		mj->writes |= !hinted;
		cJSON_AddItemToArray(mj->defs, cJSON_Duplicate(d, 1));
		if (local)
			cJSON_AddItemToArray(mj->local,
			                     cJSON_CreateString(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "name"))));
	}
}

/* Replay: the mcp_tools and MCP tool_result events of the record. */
static int readrecord(struct mcpjob *mj, struct err *e)
{
	struct evreader *r;
	const char *line;
	size_t len;
	int got = 0, rc;
	if (evropen(&r, mj->conf.record, e) < 0)
		return errctx(e, "the record of the MCP calls");
	mj->results = cJSON_CreateArray();
	while ((rc = evrnext(r, &line, &len, e)) == 1) {
		cJSON *ev = cJSON_ParseWithLength(line, len);
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "type"));
		if (t && strcmp(t, "mcp_tools") == 0) {
			adddefs(mj, ev);
			got++;
		} else if (t && strcmp(t, "tool_result") == 0 && cJSON_GetObjectItemCaseSensitive(ev, "mcp_server")) {
			cJSON_AddItemToArray(mj->results, ev);
			continue;
		}
		cJSON_Delete(ev);
	}
	evrclose(r);
	if (rc < 0)
		return errctx(e, "the record of the MCP calls");
	if (!got)
		return errc(e, ERR_VERIFY, "the record holds no MCP server events for this job");
	return 0;
}

int mcpjobopen(struct mcpjob **out, const struct mcpjobconf *c, struct err *e)
{
	struct mcpjob *mj = xcalloc(1, sizeof *mj);
	mj->conf = *c;
	mj->defs = cJSON_CreateArray();
	mj->local = cJSON_CreateArray();
	*out = mj;
	if (!c->w->mcptools.n)
		return 0;
	if (c->record)
		return readrecord(mj, e);
	for (size_t i = 0; i < c->m->nmcp; i++) {
		if (!usesserver(c->w, c->m->mcp[i].name))
			continue;
		mj->srv = xrealloc(mj->srv, (mj->nsrv + 1) * sizeof *mj->srv);
		struct srv *s = &mj->srv[mj->nsrv++];
		memset(s, 0, sizeof *s);
		s->conf = &c->m->mcp[i];
		if (startone(mj, s, e) < 0)
			return -1;
	}
	/* the definitions exactly as logged, so that replay offers the same */
	for (size_t i = 0; i < mj->nsrv; i++) {
		struct srv *s = &mj->srv[i];
		for (size_t k = 0; k < s->c->ntools; k++) {
			char *name = mcpname(s->conf->name, s->c->tools[k].name);
			if (wanted(c->w, name) && apiname(name)) {
				const struct mcptool *t = &s->c->tools[k];
				cJSON *d = cJSON_CreateObject();
				cJSON_AddStringToObject(d, "name", name);
				cJSON_AddStringToObject(d, "description", t->description ? t->description : t->name);
				cJSON_AddItemToObject(d, "parameters", cJSON_Duplicate(t->input, 1));
				cJSON_AddItemToArray(mj->defs, d);
				mj->writes |= !t->readonly;
				if (!s->conf->url)
					cJSON_AddItemToArray(mj->local, cJSON_CreateString(name));
			}
			free(name);
		}
	}
	return 0;
}

int mcpjobwrites(const struct mcpjob *mj)
{
	return mj && mj->writes;
}

const cJSON *mcpjobdefs(const struct mcpjob *mj)
{
	return mj->defs;
}

int mcpjoboffers(const struct mcpjob *mj, const char *name)
{
	const cJSON *d;
	if (!mj)
		return 0;
	cJSON_ArrayForEach(d, mj->defs)
	{
		const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "name"));
		if (n && strcmp(n, name) == 0) {
			const cJSON *l;
			cJSON_ArrayForEach(l, mj->local)
			if (strcmp(l->valuestring, name) == 0)
				return 2;
			return 1;
		}
	}
	return 0;
}

static int replaycall(struct mcpjob *mj, const char *callid, const char *name, struct toolres *r, int *diverged)
{
	cJSON *ev;
	cJSON_ArrayForEach(ev, mj->results)
	{
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "call_id"));
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "tool"));
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "output"));
		if (!id || !t || strcmp(id, callid) != 0 || strcmp(t, name) != 0 || !text)
			continue;
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(ev, "exit_code");
		r->failed = cJSON_IsNumber(code) && code->valueint != 0;
		r->content = xstrdup(text);
		static const char *const keep[] = {"mcp_server", "mcp_tool", "output", "output_sha256", "exit_code",
		                                   "content", "error", NULL};
		for (size_t i = 0; keep[i]; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, keep[i]);
			if (v)
				cJSON_AddItemToObject(r->event, keep[i], cJSON_Duplicate(v, 1));
		}
		cJSON_AddTrueToObject(r->event, "replayed");
		/* each recorded result answers one call: a reply that gave two calls one id (a provider
		 * may) is answered in order, not twice with the first */
		cJSON_Delete(cJSON_DetachItemViaPointer(mj->results, ev));
		return 0;
	}
	*diverged = 1;
	r->failed = 1;
	r->content = xasprintf("replay: the record has no result for MCP call %s (%s)", callid, name);
	cJSON_AddStringToObject(r->event, "error", r->content);
	return 0;
}

int mcpjobcall(struct mcpjob *mj, const char *callid, const char *name, const cJSON *args, struct toolres *r,
               int *diverged, struct err *e)
{
	memset(r, 0, sizeof *r);
	r->event = cJSON_CreateObject();
	if (mj->conf.record)
		return replaycall(mj, callid, name, r, diverged);
	size_t n = mcpsplit(name);
	struct srv *s = NULL;
	for (size_t i = 0; n && i < mj->nsrv; i++)
		if (strlen(mj->srv[i].conf->name) == n && strncmp(mj->srv[i].conf->name, name + 5, n) == 0)
			s = &mj->srv[i];
	if (!s) {
		r->failed = 1;
		r->content = xasprintf("no MCP server runs for %s", name);
		return 0;
	}
	const char *tool = name + 5 + n + 2;
	int64_t t0 = nowms();
	struct mcpresult mr;
	mcpcall(s->c, tool, args, mj->conf.deadline, &mr);
	int64_t total = nowms() - t0;
	if (netlog(mj->conf.ev, mcpnet(s->c, 0), e) < 0) {
		mcpresultfree(&mr);
		return -1;
	}
	cJSON *ev = r->event;
	cJSON *it;
	while ((it = mr.event->child)) {
		cJSON_DetachItemViaPointer(mr.event, it);
		cJSON_AddItemToObject(ev, it->string, it);
	}
	cJSON_AddStringToObject(ev, "mcp_server", s->conf->name);
	cJSON_AddStringToObject(ev, "mcp_tool", tool);
	cJSON_AddNumberToObject(ev, "server_ms", (double)mr.server_ms);
	cJSON_AddNumberToObject(ev, "duration_ms", (double)total);
	cJSON_AddNumberToObject(ev, "exit_code", mr.failed);
	cJSON_AddStringToObject(ev, "output", mr.text);
	char hex[65];
	sha256hex(mr.text, strlen(mr.text), hex);
	cJSON_AddStringToObject(ev, "output_sha256", hex);
	r->failed = mr.failed;
	r->content = mr.text;
	mr.text = NULL;
	mcpresultfree(&mr);
	char *log = mcplog(s->c);
	if (log) {
		cJSON *lev = cJSON_CreateObject();
		cJSON_AddStringToObject(lev, "server", s->conf->name);
		cJSON_AddStringToObject(lev, "stderr", log);
		free(log);
		if (evadd(mj->conf.ev, "mcp_log", lev, e) < 0)
			return -1;
	}
	return 0;
}

void mcpjobclose(struct mcpjob *mj)
{
	if (!mj)
		return;
	for (size_t i = 0; i < mj->nsrv; i++) {
		if (mj->srv[i].c) {
			struct err ne;
			netlog(mj->conf.ev, mcpnet(mj->srv[i].c, 1), &ne); /* what it made since its last call */
			char *log = mcplog(mj->srv[i].c);
			if (log) {
				struct err e;
				cJSON *lev = cJSON_CreateObject();
				cJSON_AddStringToObject(lev, "server", mj->srv[i].conf->name);
				cJSON_AddStringToObject(lev, "stderr", log);
				evadd(mj->conf.ev, "mcp_log", lev, &e);
				free(log);
			}
		}
		mcpclose(mj->srv[i].c);
	}
	free(mj->srv);
	cJSON_Delete(mj->defs);
	cJSON_Delete(mj->local);
	cJSON_Delete(mj->results);
	free(mj);
}
