/* wire: the pieces the providers' wire formats share (token counts, tool calls, tools, messages). */
#ifndef NS_WIRE_H
#define NS_WIRE_H

#include "llm.h"

/* A token count, o[a] (or o[a][b]): anything but a number in (0, 1e15) a server sends counts as 0,
 * so the sums made of them cannot overflow either. */
int64_t wirecount(const cJSON *o, const char *a, const char *b);
/* Whether s is NULL or only white space. */
int wireblank(const char *s);
/* A tool call's arguments as text: a string as it is, another value as JSON, none as none. New. */
char *wireargs(const cJSON *args, const char *none);
/* Add a call to r (r->calls has room for it): its arguments are rawargs (taken) parsed, kept only
 * when they are an object. */
void wirecall(struct llmreply *r, const char *id, const char *name, char *rawargs);
/* A reply cut at the output cap or the context window: its last call may be half written, so it
 * keeps no arguments and never runs. */
void wirecut(struct llmreply *r);
/* The content list of the last message of msgs when it has role, else of a new message
 * {role, content: []} appended (for the APIs whose roles alternate). */
cJSON *wirelast(cJSON *msgs, const char *role);
/* Add a neutral tool's name and its description (when not empty) to w; returns its parameters
 * schema, or {"type":"object"}, as a new value for the caller to place. */
cJSON *wiretool(cJSON *w, const cJSON *t);
/* A new client of size bytes (a struct starting with its struct llm) for ops and m. */
struct llm *wirenew(size_t size, const struct llmops *ops, const struct model *m);
/* Free a client made by wirenew (llmops.free of the providers that hold nothing more). */
void wirefree(struct llm *l);
/* Add "Authorization: Bearer KEY" to headers when the client has a key. */
void wirebearer(const struct llm *l, struct strv *headers);

#endif
