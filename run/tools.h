/* tools: what the model may call: definitions offered to it, and their execution. */
#ifndef NS_TOOLS_H
#define NS_TOOLS_H

#include <cjson/cJSON.h>
#include "../manifest/manifest.h"
#include "../sandbox/sandbox.h"
#include "../util/secrets.h"
#include "../util/utf8.h"

/* The tools offered to a worker's model, final_result last, in the neutral llm form; extra (an
 * array of definitions, may be NULL: the job's MCP tools) come before final_result. */
cJSON *tooldefs(const struct manifest *m, const struct worker *w, const cJSON *extra);

struct toolres {
	int failed;    /* 1 when the call failed (the model sees an error) */
	char *content; /* what the model is told */
	cJSON *event;  /* fields for the tool_result event */
	cJSON *net;    /* shell under network.allow: one net_connection event's fields per connection, or NULL */
	int leftover;  /* shell: a process of the step may outlive it (sbxresult.leftover) */
};

enum { TOOL_OUTPUT_LIMIT = 32 << 10 };

/* How a tool's result is shaped for the model. */
struct toolopts {
	size_t limit;       /* bytes of one result the model sees, head and tail kept; 0 = TOOL_OUTPUT_LIMIT */
	int64_t timeout_ms; /* the step's time limit, said when it runs out */
	int uid, gid;       /* > 0: files and folders the file tools make belong to them (docker: the
	                     * steps' user, so that later steps can change them); 0: the runner's */
	const struct secrets *sec; /* masked before a result is cut (a tail may start inside one) and
	                            * before its digest (no oracle for a guess); may be NULL */
	int64_t until;      /* the job's end (nowms(); 0: none): a step still running then is killed */
};

/* Run one allowed call. Shell runs in sbx; file tools act beneath wsfd (the workspace), never
 * following a link out of it. path is the policy's normalised path for file tools. The result the
 * model sees is cut to o->limit; the event keeps the full output's size and digest. On error r
 * holds nothing. */
int toolrun(struct sbx *sbx, int wsfd, const char *tool, const cJSON *args, const char *path,
            const struct toolopts *o, struct toolres *r, struct err *e);
/* Text cut to about limit bytes: its head and its tail, with a line between them saying how many
 * bytes and lines were cut; never splits a UTF-8 character. A new string (a copy when it fits). */
char *toolclip(const char *s, size_t len, size_t limit);
void toolresfree(struct toolres *r);

/* Read a regular file beneath wsfd, at most max bytes (sets *truncated). */
/* Open the regular file path beneath the workspace wsfd for reading, following no link: the fd,
 * or -1 with e. */
int wsopen(int wsfd, const char *path, struct err *e);
int wsread(int wsfd, const char *path, size_t max, struct buf *out, int *truncated, struct err *e);
/* Write a file beneath wsfd, creating parent directories; refuses symlinks on the way. What it
 * makes gets the user's umask (not the run directories') and, when uid > 0, belongs to uid:gid;
 * a file written over keeps its owner. */
int wswrite(int wsfd, const char *path, const char *data, size_t n, int uid, int gid, struct err *e);


#endif
