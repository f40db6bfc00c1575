/* llm: one interface to every model provider; the conversation is kept in a neutral form.
 *
 * A chat is a system prompt, the tools offered, and a cJSON array of messages:
 *   {"role":"user","content":TEXT}
 *   {"role":"assistant","content":TEXT|null,"tool_calls":[{"id","name","arguments":OBJECT|"raw"}],
 *    "carry":[PROVIDER ITEMS] (optional: sent back as they came, e.g. reasoning items)}
 *    "thinking":[provider blocks] (optional)}
 *   {"role":"tool","tool_call_id":ID,"name":NAME,"content":TEXT,"is_error":BOOL (optional)}
 * Every tool call of an assistant message is answered by one tool message, in order, before the
 * next user or assistant message. Providers translate it to their wire format and back. */
#ifndef NS_LLM_H
#define NS_LLM_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "../manifest/manifest.h"
#include "../util/secrets.h"

/* Tokens, normalised across providers: input counts every prompt token (cached ones included),
 * cached is the part of input read from the provider's cache, reasoning the part of output spent
 * thinking (0 where the provider does not report it). */
struct usage {
	int64_t input, output, cached, reasoning;
};

/* Usage as the events and run.json write it: {input, output, cached, reasoning}. */
cJSON *usagejson(const struct usage *u);
/* Usage from its JSON as usagejson writes it; a count missing, negative or absurd is 0. */
void usageread(const cJSON *o, struct usage *u);
/* Add b to a. */
void usageadd(struct usage *a, const struct usage *b);

struct llmreq;
struct chat {
	const char *system;
	cJSON *tools;    /* [{"name","description","parameters"}] */
	cJSON *messages; /* neutral messages, owned by the caller */
	int toolchoice;  /* 1: the reply must call a tool (tool_choice required/any), where the API can say so */
	struct llmreq *req; /* this chat's request as llmprepare built it, or NULL: llmcomplete builds it */
	int64_t deadline;   /* monotonic ms by which the answer must have come, every retry and wait
	                     * included (the job's timeout), or 0: only the model's own limits */
};

/* A request built once for a turn: its size known before it is sent, sent as it is (llmcomplete
 * takes what it needs out of it). */
struct llmreq {
	char *url;           /* HTTP providers: where it goes, its headers and its body */
	struct strv headers;
	cJSON *body;
	char *text;          /* the bytes sent (HTTP) or the neutral chat as JSON (local providers) */
	size_t len;          /* strlen(text) */
	char digest[65];     /* SHA-256 of text (exchange.digest) */
};

struct llmcall {
	char *id;
	char *name;
	cJSON *args;   /* the arguments object, or NULL when the model sent invalid or truncated JSON */
	char *rawargs; /* the arguments as the model sent them */
};

/* LENGTH: cut at the output cap; CONTEXT: the conversation filled the model's context window. */
enum finish { FINISH_STOP, FINISH_TOOLS, FINISH_LENGTH, FINISH_REFUSAL, FINISH_OTHER, FINISH_CONTEXT };

/* The most tool calls one reply may make: each is decided, recorded and answered, and costs a walk
 * over the job's calls; a reply making more is unusable (retried as one), as a stream's call index
 * past it is. */
#define LLMCALLSMAX 1024

struct llmreply {
	char *text;
	struct llmcall *calls;
	size_t ncalls;
	enum finish finish;
	char *finish_raw; /* the provider's own word */
	struct usage usage;
	cJSON *carry; /* provider items the next request must send back unchanged (the Responses API's
	               * reasoning items), or NULL; kept in the assistant message as "carry" */
	cJSON *thinking;  /* blocks the provider wants back unchanged with this reply (Anthropic thinking and
	                     redacted_thinking), kept as the assistant message's "thinking"; or NULL */
};

/* What went over the wire, for the event log (secrets are masked by the log). */
struct exchange {
	cJSON *request;  /* the request body sent (last attempt) */
	char digest[65]; /* SHA-256 of the request body bytes sent, "" when nothing was sent */
	cJSON *response; /* the response body parsed, or {"raw": text} when it was not JSON */
	int status;      /* HTTP status of the last attempt, 0 when none */
	int attempts;
	cJSON *errors;   /* one entry per failed attempt: {attempt, status, error, wait_ms} */
	int64_t waited_ms; /* time spent waiting between attempts */
	int64_t window;  /* the request did not fit the provider's context window: the window it named
	                  * in tokens, -1 when it named none; 0 when that was not the failure */
	int streamed;    /* the answer came as a stream (response holds it assembled) */
};

/* A retry as it happens, told before its wait (llm.onretry). */
struct llmretry {
	int attempt;       /* the attempt that failed, from 1 */
	int status;        /* its HTTP status, 0 when no answer came */
	const char *error; /* what went wrong (secrets masked) */
	int64_t wait_ms;   /* the wait before the next attempt */
	int64_t left_ms;   /* what remains of retry_for after the wait */
};

struct evreader;
struct sigv4key;
struct gate;
struct llm;
struct llmops {
	/* HTTP providers: the request for a chat (url, extra headers, body), and a 2xx body parsed. */
	int (*request)(struct llm *l, const struct chat *c, char **url, struct strv *headers, cJSON **body,
	               struct err *e);
	int (*parse)(struct llm *l, const cJSON *body, struct llmreply *r, struct err *e);
	/* Local providers answer directly (request and parse are NULL). */
	int (*complete)(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e);
	void (*free)(struct llm *l);
	/* Streaming (NULL: this client does not stream): make a request ask for a stream (its body,
	 * and its url when the stream has its own, *url replaced), and assemble a streamed answer's
	 * events into the body the API answers without one, or NULL with e filled. An error in the
	 * stream is an error body {"error": ...} with *status the HTTP status its class stands for
	 * (429 for throttling, ...; left 0 when the stream says none). */
	int (*stream)(struct llm *l, cJSON *body, char **url);
	cJSON *(*assemble)(struct llm *l, const char *text, size_t len, int *status, struct err *e);
	/* The body as cJSON prints it unformatted, from text the client kept between turns (NULL: no
	 * such text; the body is printed whole). */
	char *(*text)(struct llm *l, const cJSON *body, size_t hint);
};
struct llm {
	const struct llmops *ops;
	const struct model *model;
	char *apikey;
	const struct secrets *sec; /* masked out of every error message; may be NULL */
	int turns;                 /* requests answered so far (kept by llmcomplete) */
	struct evreader *record;   /* replay: serve replies from this job's recorded events, not the network */
	/* replay: serve the next recorded reply (set by llmreplayopen); 1 when the live model must answer */
	int (*recorded)(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e);
	int canlive;               /* replay: may the model take over when the record ends or diverges */
	int live;                  /* replay: it did */
	struct sigv4key *aws;      /* AWS SigV4 signing of every request (bedrock), or NULL; owned */
	struct gate *gate;         /* the model's requests across the run (set by the caller), or NULL */
	void (*onretry)(void *ctx, const struct llmretry *r); /* told of each retry (set by the caller), or NULL */
	void *retryctx;
	void (*onattempt)(void *ctx, int attempt); /* told as each retry's attempt is sent, after its wait, or NULL */
	int plain;                 /* the server answered a streaming request with plain JSON: it does not
	                            * stream, and the idle watchdog is off for it from then on */
	/* Chat completions (openai.c): the neutral messages last sent (copies) and their wire form, kept
	 * between turns so that a turn converts only what is new; owned. */
	cJSON *keptsrc, *keptwire;
	struct buf kepttext;       /* keptwire printed, as sent: each message, a comma after each */
	size_t *keptend, keptcap;  /* where each message's text ends in kepttext (its comma after) */
	const cJSON *sentmsgs;     /* the messages array of the request built last (in its body) */
	int textonly;              /* llmprepare: the body is only printed, so sentmsgs may stay empty
	                            * (its text is printed from kepttext) instead of holding a copy of each */
	char *sentsystem;          /* its system message printed, or NULL; owned */
	size_t lastlen;            /* the size of the last request built, to print the next in one buffer */
	struct sha256grow sent;    /* the last request's text, for the next one's digest */
};

/* Open a client that serves the replies recorded in a job's event log (no key, no network); a
 * request that does not match the record fails with code 4 (a divergence). With live, the model
 * itself takes over from the end of the record or the first divergence (needs its key). */
int llmreplayopen(struct llm **l, const struct model *m, const char *events, int live, struct secrets *sec,
                  struct err *e);
/* The environment variable a model's API key is read from, or NULL when it needs none. */
const char *llmkeyenv(const struct model *m);
/* What is wrong with the API key llmopen would read ("is not set (api_key_env)", ...), or NULL. */
const char *llmkeyproblem(const struct model *m);
/* A client for a model that only builds and reads wire bodies, without its key (offline: without
 * any credential at all, as replay needs it). */
int llmwire(struct llm **l, const struct model *m, int offline, struct err *e);
/* Open a client for a model; reads the API key from its api_key_env and adds it to sec. */
int llmopen(struct llm **l, const struct model *m, struct secrets *sec, struct err *e);
/* Ask for the next reply; retries transient failures as the official SDKs do. */
int llmcomplete(struct llm *l, const struct chat *c, struct llmreply *r, struct exchange *x, struct err *e);
/* The wire body an HTTP provider would send for a chat, without sending it (NULL for local ones). */
cJSON *llmbody(struct llm *l, const struct chat *c, struct err *e);
/* Build the request a chat makes, once: the wire body of an HTTP provider, the neutral chat of a
 * local one; q->len is its size, for estimating its tokens before sending. Set c->req = q to send
 * it as built. Frees what q held before. */
int llmprepare(struct llm *l, const struct chat *c, struct llmreq *q, struct err *e);
/* Free what a prepared request still holds. */
void llmreqfree(struct llmreq *q);
/* The digest a request is known by (exchange.digest): SHA-256 of the body an HTTP provider sends,
 * or of the neutral chat {system, tools, messages} for a local one. For replay to match requests. */
int llmdigest(struct llm *l, const struct chat *c, char out[65], struct err *e);
/* Make every model call in progress or to come fail at once, waits included; async-signal-safe,
 * for a SIGINT/SIGTERM handler. */
void llminterrupt(void);
void llmclose(struct llm *l);
void llmreplyfree(struct llmreply *r);
void exchangefree(struct exchange *x);
/* The word used in events for a finish reason. */
const char *finishname(enum finish f);

/* Whether an error answer (HTTP status, body parsed or NULL) says the request did not fit the
 * model's context window: the window it names in tokens, -1 when it names none, 0 when it is
 * another error. Knows OpenAI's (code context_length_exceeded, "maximum context length is N
 * tokens"), Anthropic's ("prompt is too long: N tokens > M maximum"), and compatible servers'. */
int64_t llmwindowerror(int status, const cJSON *body);
/* Whether an attempt that got HTTP status (0: no response) may be retried; shouldretry is the
 * x-should-retry header (1, 0, or -1 when absent). */
int llmretryable(int status, int shouldretry);
/* Milliseconds to wait before retry n (0-based): the server's retryms when 0 < it <= 60 s,
 * else min(0.5 * 2^n, 8) s less up to 25% jitter; r01 is a random number in [0, 1). */
int64_t llmbackoff(int64_t retryms, int n, double r01);

/* Backends. */
int openaiopen(struct llm **l, const struct model *m, struct err *e);
int anthropicopen(struct llm **l, const struct model *m, struct err *e);
int scriptedopen(struct llm **l, const struct model *m, struct err *e);
int responsesopen(struct llm **l, const struct model *m, struct err *e);
int azureopen(struct llm **l, const struct model *m, struct err *e);
int bedrockopen(struct llm **l, const struct model *m, int offline, struct err *e);
int vertexopen(struct llm **l, const struct model *m, struct err *e);
extern const struct llmops openaiops;    /* chat completions (openai.c) */
extern const struct llmops responsesops; /* the Responses API (responses.c) */
extern const struct llmops anthropicops; /* messages (anthropic.c) */
extern const struct llmops converseops;  /* Bedrock's Converse API (converse.c) */
int converseopen(struct llm **l, const struct model *m, struct err *e);

/* The request URL: the model's base_url (else def) with path appended, a query base_url holds kept
 * after the path, and the model's query: pairs added (encoded). A path starting /v1/ drops its /v1
 * when the base ends in /v1. A new string. */
char *llmurl(const struct model *m, const char *def, const char *path);

#endif
