/* mcpconf: `mcp:` servers, stdio (command, env) or Streamable HTTP (url, headers). */
#include <stdlib.h>
#include <string.h>
#include "expr.h"
#include "mcpconf.h"

static const char *const serverkeys[] = {"command", "env", "url", "headers", "timeout", NULL};

/* Server names become part of tool names: [A-Za-z0-9_-], 1..32 chars, no "__" (the separator). */
static int checkserver(struct ydoc *y, yaml_node_t *n, const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > 32)
		return yfail(y, n, "MCP server name must be 1 to 32 characters");
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == '-'))
			return yfail(y, n, "MCP server name '%s' may hold only letters, digits, '_' and '-'", s);
	if (strstr(s, "__") || s[0] == '_' || s[len - 1] == '_')
		return yfail(y, n, "MCP server name '%s' may not hold \"__\" or start or end with '_': tools are "
		                   "named mcp__SERVER__TOOL", s);
	return 0;
}

static int envname(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

static int parseheaders(struct ydoc *y, yaml_node_t *n, struct mcpserver *s, const struct strv *sets)
{
	struct ypair p;
	if (ymap(y, n, "headers", NULL) < 0)
		return -1;
	for (size_t i = 0; yeach(y, n, i, &p); i++) {
		char *v = NULL;
		for (const char *c = p.key; *c; c++)
			if (*c <= ' ' || *c == ':' || *c == 0x7f || (unsigned char)*c >= 0x80)
				return yfail(y, p.knode, "header name '%s' is not an HTTP token", p.key);
		if (!*p.key)
			return yfail(y, p.knode, "empty header name");
		if (ystr(y, p.val, &v) < 0)
			return -1;
		if (strpbrk(v, "\r\n")) {
			free(v);
			return yfail(y, p.val, "a header value may not hold a line break");
		}
		struct exprenv env = {.sets = sets};
		struct err ee = {0};
		if (exprcheck(v, &env, &ee) < 0) {
			free(v);
			return yfail(y, p.val, "%s", ee.msg);
		}
		char *h = xasprintf("%s: %s", p.key, v);
		strvadd(&s->headers, h);
		free(h);
		free(v);
	}
	return 0;
}

static int parseserver(struct manifest *m, struct ydoc *y, const char *name, yaml_node_t *n, struct mcpserver *s)
{
	yaml_node_t *v;
	s->name = xstrdup(name);
	s->pos = ypos(y, n);
	s->timeout_ms = 60000;
	if (ymap(y, n, "an MCP server", serverkeys) < 0)
		return -1;
	yaml_node_t *cmd = yget(y, n, "command"), *url = yget(y, n, "url");
	if (!cmd == !url)
		return yfail(y, n, "MCP server '%s' needs exactly one of command (a stdio server, run in the sandbox) "
		                   "or url (a Streamable HTTP server)", name);
	if (cmd) {
		if (cmd->type != YAML_SEQUENCE_NODE)
			return yfail(y, cmd, "command must be a list of words, program first ([node, server.js, /workspace])");
		if (ystrv(y, cmd, &s->command) < 0)
			return -1;
		if (!s->command.n || !*s->command.v[0])
			return yfail(y, cmd, "command needs a program");
		if ((v = yget(y, n, "headers")))
			return yfail(y, v, "headers are for a url server; a stdio server takes env");
		if ((v = yget(y, n, "env"))) {
			if (ystrv(y, v, &s->env) < 0)
				return -1;
			for (size_t i = 0; i < s->env.n; i++)
				if (!envname(s->env.v[i]))
					return yfail(y, yitem(y, v, i) ? yitem(y, v, i) : v,
					             "env lists variable names; '%s' is not one", s->env.v[i]);
		}
	} else {
		if (ystr(y, url, &s->url) < 0)
			return -1;
		if (strncmp(s->url, "http://", 7) != 0 && strncmp(s->url, "https://", 8) != 0)
			return yfail(y, url, "url must start with http:// or https://");
		if (strpbrk(s->url, " \t\r\n"))
			return yfail(y, url, "url may not hold spaces or line breaks");
		if ((v = yget(y, n, "env")))
			return yfail(y, v, "env is for a stdio server; a url server takes headers");
		if ((v = yget(y, n, "headers")) && parseheaders(y, v, s, &m->sets) < 0)
			return -1;
	}
	if ((v = yget(y, n, "timeout")) && yduration(y, v, &s->timeout_ms) < 0)
		return -1;
	if (s->timeout_ms <= 0)
		return yfail(y, v, "timeout must be positive");
	return 0;
}

int mcpconfparse(struct manifest *m, struct ydoc *y, yaml_node_t *n)
{
	struct ypair p;
	if (ymap(y, n, "mcp", NULL) < 0)
		return -1;
	for (size_t i = 0; yeach(y, n, i, &p); i++) {
		m->mcp = xrealloc(m->mcp, (i + 1) * sizeof *m->mcp);
		memset(&m->mcp[i], 0, sizeof m->mcp[i]);
		m->nmcp = i + 1;
		if (checkserver(y, p.knode, p.key) < 0 || parseserver(m, y, p.key, p.val, &m->mcp[i]) < 0)
			return -1;
	}
	return 0;
}

size_t mcpsplit(const char *s)
{
	if (strncmp(s, "mcp__", 5) != 0)
		return 0;
	const char *sep = strstr(s + 5, "__");
	return sep && sep > s + 5 ? (size_t)(sep - (s + 5)) : 0;
}

int mcpconftool(const struct manifest *m, struct ydoc *y, yaml_node_t *n, const char *s)
{
	size_t len = mcpsplit(s);
	if (!len || !s[5 + len + 2])
		return yfail(y, n, "MCP tools are named mcp__SERVER__TOOL (a pattern may follow the server: "
		                   "\"mcp__fs__*\"); '%s' is not", s);
	for (size_t i = 0; i < m->nmcp; i++)
		if (strlen(m->mcp[i].name) == len && strncmp(m->mcp[i].name, s + 5, len) == 0)
			return 0;
	return yfail(y, n, "'%s' names MCP server '%.*s', which is not declared under mcp:", s, (int)len, s + 5);
}

char *mcpheaderexpand(const struct manifest *m, const char *h, struct err *e)
{
	const char *colon = strchr(h, ':');
	struct exprenv env = {.sets = &m->sets};
	char *v = exprexpand(colon ? colon + 2 : h, &env, e);
	if (!v)
		return NULL;
	char *out = xasprintf("%.*s: %s", (int)(colon ? colon - h : 0), h, v);
	free(v);
	return out;
}

void mcpsecrets(const struct manifest *m, struct secrets *s)
{
	for (size_t i = 0; i < m->nmcp; i++)
		for (size_t k = 0; k < m->mcp[i].headers.n; k++) {
			const char *h = m->mcp[i].headers.v[k], *p = h;
			while ((p = strstr(p, "env."))) {
				p += 4;
				size_t len = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
				char *name = xstrndup(p, len);
				secretsadd(s, name, getenv(name));
				free(name);
				p += len;
			}
		}
}

void mcpconffree(struct manifest *m)
{
	for (size_t i = 0; i < m->nmcp; i++) {
		free(m->mcp[i].name);
		strvfree(&m->mcp[i].command);
		strvfree(&m->mcp[i].env);
		free(m->mcp[i].url);
		strvfree(&m->mcp[i].headers);
	}
	free(m->mcp);
	m->mcp = NULL;
	m->nmcp = 0;
}
