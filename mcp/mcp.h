/* mcp: a Model Context Protocol client: one server, spoken to over stdio (a program in its own
 * sandbox) or Streamable HTTP (libcurl), JSON-RPC 2.0 with version negotiation. */
#ifndef NS_MCP_H
#define NS_MCP_H

#include <cjson/cJSON.h>
#include "../manifest/manifest.h"
#include "../sandbox/sandbox.h"
#include "rpc.h"

struct mcptool {
	char *name;        /* the server's name for it */
	char *description; /* or NULL */
	cJSON *input;      /* inputSchema (an object schema) */
	cJSON *output;     /* outputSchema, or NULL */
	int checkable;     /* output can be validated (our schema subset takes it) */
	int readonly;      /* annotations.readOnlyHint is true: the server says it does not change its
	                    * environment (its word, untrusted: it only lets the job share its workspace) */
};

struct mcp {
	const struct mcpserver *conf;
	char version[32];   /* the protocol revision agreed */
	cJSON *serverinfo;  /* the server's serverInfo, or NULL */
	struct mcptool *tools;
	size_t ntools;
	int changed;        /* the server said its tool list changed (notifications/tools/list_changed) */
	struct buf log;     /* stderr and log notifications not yet taken (mcplog), capped */
	int dead;           /* the server is gone; why is in deadwhy */
	char deadwhy[256];
	/* transport */
	struct sbx *sbx;    /* stdio: the server's own sandbox */
	struct sbxproc proc;
	struct rpcframe in; /* stdio: bytes read, not yet whole lines */
	void *http;         /* HTTP: the transport's state */
	int64_t nextid;
	int64_t requests;   /* requests sent, for the events */
	cJSON *net;         /* HTTP: connections opened (net_connection events) not yet taken */
	/* the call under way: its id, what came besides its answer (budgets MCPASKS, MCPNOTES) */
	int64_t want;
	int asks, notes, progress;
};

/* The outcome of one tools/call. */
struct mcpresult {
	int failed;        /* isError, a JSON-RPC error, a timeout, a dead server, an invalid result */
	char *text;        /* what the model is told */
	cJSON *event;      /* fields for the tool_result event: content kinds, notes, progress, errors */
	int64_t server_ms; /* from the request's write to its answer's read */
};

/* Protocol revisions spoken, newest first (NULL-terminated); the first is asked for. */
extern const char *const mcpversions[];

/* Start server conf: stdio in a sandbox opened from sc (the job's sandbox settings, its env
 * plus the server's), or HTTP; initialize, notifications/initialized, tools/list (all pages);
 * initialize within the server's timeout, the whole list within another, neither past jobend
 * (the job's end, monotonic ms; 0: none).
 * On error *c is NULL and e says why (with what the server wrote on stderr). When net is given,
 * *net gets the connections HTTP opened or refused meanwhile (as mcpnet), failed or not. */
int mcpopen(struct mcp **c, const struct mcpserver *conf, const struct sbxconf *sc, const struct manifest *m,
            int64_t jobend, cJSON **net, struct err *e);
/* Call a tool (its server name) with arguments; r is filled (free with mcpresultfree). Never
 * fails: every failure, a timeout or a crash included, is a failed result the model sees. A tool
 * list the server said changed is asked for again first, all its pages within the server's
 * timeout; the call has its own; neither passes jobend (monotonic ms; 0: none). */
void mcpcall(struct mcp *c, const char *tool, const cJSON *args, int64_t jobend, struct mcpresult *r);
/* Take what the server logged since the last call (stderr lines, log notifications): a new
 * string, or NULL when nothing. */
char *mcplog(struct mcp *c);
/* Take the connections the HTTP transport opened (or refused), or a stdio server made through its
 * sandbox's egress proxy, since the last call: an array of net_connection event bodies (caller
 * frees), or NULL when none. ending: the server is about to be closed (its open tunnels are cut
 * and taken too). */
cJSON *mcpnet(struct mcp *c, int ending);
/* End the session and the server (its sandbox with it). */
void mcpclose(struct mcp *c);
void mcpresultfree(struct mcpresult *r);

/* The model-facing name of a server's tool, mcp__SERVER__TOOL, in a new string. */
char *mcpname(const char *server, const char *tool);

#endif
