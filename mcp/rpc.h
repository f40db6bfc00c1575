/* rpc: JSON-RPC messages out of an MCP server's bytes, on buffers (no I/O): lines of stdio and
 * events of a Streamable HTTP event stream. Every message is bounded (MCPMSGMAX bytes) and parsed
 * within the JSON budget of util/jsonb.h; what waits for its end is bounded the same way. */
#ifndef NS_RPC_H
#define NS_RPC_H

#include <cjson/cJSON.h>
#include "../util/jsonb.h"

/* The most bytes of one message: a stdio line, an HTTP body, an event's data. */
#define MCPMSGMAX JSONB_BYTES
/* What one call may receive besides its answer, before the server is ended as hostile. */
#define MCPASKS 100     /* requests of the server's (ping, sampling, ...) */
#define MCPNOTES 100000 /* notifications (progress, log, ...) */

/* Bytes cut into lines (LF or CRLF), each line seen once. */
struct rpcframe {
	struct buf b;
	size_t start; /* where the next line begins */
	size_t scan;  /* bytes from start already searched for its end */
};

/* An event stream being read: its lines, the data of the event under way, its id and retry. */
struct rpcsse {
	struct rpcframe f;
	struct buf data;
	struct buf lastid;
	long retry;
};

/* Append n bytes of p (compacting what was taken). */
void rpcfeed(struct rpcframe *f, const char *p, size_t n);
/* One message or batch (p, n) into inbox, each object an item: 0, -1 with e when it is not
 * JSON-RPC, -2 with e when it passes the caps. */
int rpcbody(const char *p, size_t n, cJSON *inbox, struct err *e);
/* Whole stdio lines into inbox; a line that is not JSON goes to junk: 0, or -1 with e when a
 * line passes MCPMSGMAX or the budget. */
int rpcstdio(struct rpcframe *f, cJSON *inbox, struct buf *junk, struct err *e);
/* The whole events of s (final: the stream ended) into inbox: 0, or -1 with e. */
int rpcevents(struct rpcsse *s, int final, cJSON *inbox, struct err *e);
/* Free what s holds and empty it. */
void rpcssefree(struct rpcsse *s);

#endif
