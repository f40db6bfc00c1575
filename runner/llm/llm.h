/* llm: one interface to every model provider; the conversation is kept in a neutral form.
 *
 * A chat is a system prompt, the tools offered, and a cJSON array of messages:
 *   {"role":"user","content":TEXT}
 *   {"role":"assistant","content":TEXT|null,"tool_calls":[{"id","name","arguments":OBJECT|"raw"}]}
 *   {"role":"tool","tool_call_id":ID,"name":NAME,"content":TEXT}
 * Providers translate it to their wire format and back. */
#ifndef NS_LLM_H
#define NS_LLM_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "../../manifest/manifest.h"
#include "../../util/secrets.h"

struct usage {
	int64_t input, output, cached, reasoning;
};

struct chat {
	const char *system;
	cJSON *tools;    /* [{"name","description","parameters"}] */
	cJSON *messages; /* neutral messages, owned by the caller */
};

struct llmcall {
	char *id;
	char *name;
	cJSON *args;   /* the arguments object, or NULL when the model sent invalid JSON */
	char *rawargs; /* the arguments as the model sent them */
};

enum finish { FINISH_STOP, FINISH_TOOLS, FINISH_LENGTH, FINISH_REFUSAL, FINISH_OTHER };

struct llmreply {
	char *text;
	struct llmcall *calls;
	size_t ncalls;
	enum finish finish;
	char *finish_raw; /* the provider's own word */
	struct usage usage;
};

/* What went over the wire, for the event log (secrets are masked by the log). */
struct exchange {
	cJSON *request;  /* the request body sent (last attempt) */
	cJSON *response; /* the response body parsed, or {"raw": text} when it was not JSON */
	int status;      /* HTTP status of the last attempt, 0 when none */
	int attempts;
	cJSON *errors;   /* one entry per failed attempt: {attempt, status, error, wait_ms} */
};

struct llm;
struct llmops {
	/* HTTP providers: the request for a chat (url, extra headers, body), and a 2xx body parsed. */
	int (*request)(struct llm *l, const struct chat *c, char **url, struct strv *headers, cJSON **body,
	               struct err *e);
	int (*parse)(struct llm *l, const cJSON *body, struct llmreply *r, struct err *e);
	/* Local providers answer directly (request and parse are NULL). */
	int (*complete)(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e);
	void (*free)(struct llm *l);
};
struct llm {
	const struct llmops *ops;
	const struct model *model;
	char *apikey;
};

/* Open a client for a model; reads the API key from its api_key_env and adds it to sec. */
int llmopen(struct llm **l, const struct model *m, struct secrets *sec, struct err *e);
/* Ask for the next reply; retries transient failures as the official SDKs do. */
int llmcomplete(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e);
void llmclose(struct llm *l);
void llmreplyfree(struct llmreply *r);
void exchangefree(struct exchange *x);
/* The word used in events for a finish reason. */
const char *finishname(enum finish f);

/* Backends. */
int openaiopen(struct llm **l, const struct model *m, struct err *e);
int scriptedopen(struct llm **l, const struct model *m, struct err *e);

#endif
