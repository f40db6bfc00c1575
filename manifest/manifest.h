/* manifest: the YAML manifest as typed structs, every value with its source position. */
#ifndef NS_MANIFEST_H
#define NS_MANIFEST_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "../util/util.h"

struct ydoc;

/* Where a value came from, for file:line:col messages (line and col from 1). */
struct pos {
	const char *file;
	int line, col;
};

enum decision { DEC_ALLOW, DEC_DENY, DEC_ABORT };
enum provider { PROV_OPENAI, PROV_ANTHROPIC, PROV_SCRIPTED, PROV_AZURE, PROV_BEDROCK, PROV_VERTEX };
enum api { API_CHAT, API_RESPONSES, API_CONVERSE };
enum backend { BACKEND_NAMESPACE, BACKEND_DOCKER, BACKEND_NONE };

/* Tools a worker may opt into; final_result is always present. */
enum tool {
	TOOL_SHELL = 1 << 0,
	TOOL_READ_FILE = 1 << 1,
	TOOL_WRITE_FILE = 1 << 2,
	TOOL_LIST_DIR = 1 << 3,
	TOOL_EDIT_FILE = 1 << 4,
};

struct rule {
	char *tool;    /* glob or NULL (any) */
	char *command; /* glob on each simple command, for shell; NULL = any */
	char *path;    /* glob with ** on the normalised workspace path; NULL = any */
	char *worker;  /* glob on the delegate's name; NULL = any */
	struct strv argkeys, argglobs; /* args: each named argument must match its glob (MCP tools) */
	enum decision decision;
	struct pos pos;
	const char *preset; /* the preset this rule comes from ("read-only"), static, or NULL */
	int num;            /* its number in the YAML list, from 1; a preset's rules share theirs (0: unset) */
	int admin;          /* from the admin policy (its number there), 0 = the manifest's own */
};

struct approval {
	enum decision def;
	struct rule *rules;
	size_t nrules;
	struct strv allow_examples, deny_examples;
	struct pos *allow_pos, *deny_pos; /* where each example is written */
	int on_deny_fail; /* on_deny: fail: a denied call fails the job (else the model is told and goes on) */
	struct pos pos;
};

struct mount {
	char *source; /* absolute host path */
	char *target; /* absolute path inside the sandbox */
	int rw;
	struct pos pos;
};

/* One entry of sandbox.network.allow (manifest/netrule.h parses and matches it). */
struct netrule {
	char *text;              /* as written */
	char *host;              /* lowercase name, or the domain of "*.domain"; NULL for an address */
	int wildcard;            /* "*.domain": any name below domain, not domain itself */
	int family;              /* AF_INET or AF_INET6 for an IP literal or CIDR, else 0 */
	unsigned char addr[16];  /* the address, network byte order */
	int prefix;              /* CIDR prefix length (32 or 128 for a literal) */
	int port;                /* 0: 443 and 80 */
	struct pos pos;
};

struct sandboxconf {
	enum backend backend;
	char *image;        /* "host", a rootfs dir, or a docker image */
	int network_host;   /* 0 = none */
	int network_allow;  /* network: { allow: [...] }: only through the egress proxy, to these */
	struct netrule *allow;
	size_t nallow;
	struct pos netpos;  /* where network was set, for errors about it */
	int64_t memory;     /* bytes, 0 = unlimited */
	double cpus;        /* 0 = unlimited */
	int64_t pids;       /* 0 = unlimited */
	int limits_warn;    /* limits: warn: run on when the engine cannot enforce a limit (strict: fail) */
	int64_t timeout_ms; /* per step */
	struct strv env;    /* names passed in */
	struct strv protect; /* workspace path globs no step or file tool may change */
	int uid, gid;       /* sandbox.uid: who steps run as (docker: also owns what file tools make); 0 = 1000:1000 */
	struct mount *mounts;
	size_t nmounts;
};

/* The sandbox's and the snapshot's limits when a manifest sets none (replay holds a record's to them). */
#define DEF_TIMEOUT_MS 120000LL
#define DEF_PIDS 256LL
#define DEF_MEMORY (1LL << 30)
#define DEF_MAXSIZE (10LL << 30) /* bytes on disk (st_blocks): a sparse file's holes are free */

struct snapconf {
	int level, threads;
	struct strv exclude;
	int64_t max_size;
	int gitignore; /* leave out what the workspace's .gitignore files (and .git/info/exclude) ignore */
};

struct model {
	char *name;
	enum provider provider;
	char *model;
	char *base_url;
	char *api_key_env;
	double temperature; /* < 0 = unset */
	int64_t max_output_tokens;
	int64_t timeout_ms;
	int64_t connect_timeout_ms; /* 0 = min(10 s, timeout) */
	int retries;                /* -1: as many as retry_for allows */
	int64_t idle_timeout_ms;    /* no byte for this long during a request = a dead connection */
	int64_t retry_for_ms;       /* how long transient failures are retried */
	int64_t context_window;  /* tokens; 0 = the catalog's (llm/catalog.h) */
	int64_t thinking;        /* anthropic: extended thinking budget in tokens; 0 = off */
	char *reasoning_effort;  /* openai: sent as reasoning_effort (chat) or reasoning.effort (responses) when set */
	int cap_field;           /* openai: the output cap's name: 0 = by model, 1 = max_tokens, 2 = max_completion_tokens */
	struct price {
		double input, cached_input, output; /* USD per million tokens */
		int set;                            /* 0 = no price: max_cost and budget.cost cannot be used */
	} price;
	int concurrency; /* requests in flight at once across the run, 0 = no cap */
	cJSON *replies; /* scripted: array of {text?, tool_calls?[{name, arguments}]} */
	char *script;   /* scripted: the file replies came from, if any */
	enum api api;         /* openai, azure-openai: chat completions or the Responses API; bedrock: converse */
	char *deployment;     /* azure-openai */
	char *api_version;    /* azure-openai: the api-version query */
	int bearer;           /* azure-openai: auth: bearer (an Entra ID token in api_key_env), else api-key */
	char *region;         /* bedrock, vertex */
	char *project;        /* vertex */
	struct strv headers;  /* headers: "Name: value" sent with every request */
	struct strv query;    /* query: "name=value" (unencoded) added to every request's URL */
	struct strv hidden;   /* header and query values taken from ${{ env.X }}: masked like keys */
	struct pos pos;
	struct pos keypos;    /* where api_key_env is written (its value), else the model's pos */
};

struct worker {
	char *name;
	char *description;
	char *model;
	char *instructions;
	char *file; /* worker file it came from, or NULL */
	unsigned tools;
	struct strv delegates;
	struct pos *delegates_pos; /* where each delegate is named */
	struct strv mcptools; /* globs over MCP tool names, each "mcp__SERVER__PATTERN" */
	struct strv skills;   /* Agent Skills folders, absolute host paths */
	struct strv skillnames, skilldescs; /* from each folder's SKILL.md front matter */
	struct approval approval;
	cJSON *output; /* JSON Schema of the typed result, or NULL (any object) */
	int max_turns;
	int max_text_turns; /* replies in a row without a tool call that end the job (given up) */
	int64_t max_tokens; /* 0 = unlimited */
	double max_cost;    /* USD, 0 = unlimited */
	int64_t tool_output_limit; /* bytes of one tool result the model sees; 0 = the default */
	int compact;               /* context.compact: COMPACT_ELIDE (the default) or COMPACT_SUMMARIZE */
	struct sandboxconf sandbox;
	struct pos pos;
};

/* What a job does when its conversation passes the window's high-water mark. */
enum { COMPACT_ELIDE, COMPACT_SUMMARIZE };

struct job {
	char *id;
	char *worker;
	char *input;
	struct strv needs;
	struct pos *needs_pos; /* where each need is named */
	struct strv files;
	int64_t timeout_ms;
	int retries;
	int continue_on_error;
	int max_turns;      /* the worker's unless the job sets it */
	int64_t max_tokens; /* the worker's unless the job sets it */
	double max_cost;    /* the worker's unless the job sets it */
	int64_t tool_output_limit; /* the worker's unless the job sets it */
	struct sandboxconf sandbox; /* worker's, with the job's overrides applied */
	char *model;        /* `model:` the job picks over its worker's, or NULL */
	char *workspace;    /* its own workspace (absolute host path), or NULL: the manifest's */
	char *wsname;       /* that workspace's name (snapshots/<wsname>/), or NULL: WSDEFAULT */
	/* A job made from a matrix: one per combination of its values. */
	char *group;        /* the matrix job's id as written (what --job and needs may name), or NULL */
	char *mxkey;        /* its key in ${{ jobs.GROUP.outputs }}: its values joined by '-' */
	cJSON *mxvalues;    /* {KEY: value} */
	int fail_fast;      /* a failed member cancels the group's members not yet ended */
	int max_parallel;   /* members of the group running at once, 0 = no cap beyond -j */
	struct strv needgroups; /* matrix jobs named in needs (their members are in needs) */
	int mxpending;      /* stands for a matrix whose values come from a needed job's output: made
	                     * into its members by manifestexpand once that job has finished */
	char *unloaded;     /* a member made from a job's output that could not be read (a value its
	                     * workspace or a mount refused): why; it fails without running */
	struct pos pos, inputpos;
};

/* At most this many mistakes are kept from one load. */
#define MANIFEST_MAXERRORS 50
/* An MCP server (mcp: NAME: ...): a program spoken to over stdio inside the job's sandbox, or a
 * Streamable HTTP endpoint spoken to by the runner. */
struct mcpserver {
	char *name;
	struct strv command; /* argv of a stdio server; empty for an HTTP one */
	struct strv env;     /* names passed into a stdio server beside the sandbox's */
	char *url;           /* Streamable HTTP endpoint, or NULL */
	struct strv headers; /* "Name: value" for HTTP, ${{ env.X }} expanded when connecting */
	int64_t timeout_ms;  /* per request (default 60 s) */
	struct pos pos;
};

/* The admin policy (/etc/nightshift/policy.yaml, manifest/layers.h): joined to every manifest,
 * weakened by none. */
struct adminpolicy {
	char *path;          /* the file read, or NULL when there is none */
	char sha256[65];     /* of its bytes */
	struct approval approval; /* its rules join every worker's (strictest wins) */
	int def;             /* its approval.default when written (the stricter default wins), else -1 */
	double max_cost, budget_cost; /* caps; 0 = none */
	int64_t max_tokens;
	int max_turns;
	unsigned backends;   /* 1 << BACKEND_X for each backend allowed; 0 = any */
	int network;         /* the most network allowed: -1 any, 0 none, 1 the allow list below, 2 host */
	struct sandboxconf net; /* its allow list, when network is 1 */
	struct strv protect; /* paths no step may change, added to every sandbox's */
	struct adminprice {
		char *model;       /* a provider's model name, or "*" for every other */
		struct price price;
	} *prices;           /* under a cost cap, the least price of each model */
	size_t nprices;
};

struct manifest {
	char *path;      /* as given */
	char *dir;       /* directory holding it */
	char *name;
	char *workspace; /* absolute host path */
	struct sandboxconf sandbox;
	struct snapconf snapshot;
	struct strv secrets;
	double budget_cost; /* budget.cost: USD shared by every job of the run; 0 = none */
	struct model *models;
	size_t nmodels;
	struct worker *workers;
	size_t nworkers;
	struct job *jobs;
	size_t njobs;
	struct mcpserver *mcp;
	size_t nmcp;
	struct strv sets;  /* KEY=VALUE inputs from --set */
	struct strv files; /* every file read: manifest, scripts, worker files */
	struct strv errors; /* after a failed load: every mistake found, "file:line:col: message", in order */
	char **filenames;  /* owned copies that struct pos points into */
	const char *wsroot; /* while loading: loadopts.wsroot */
	size_t nfilenames;
	size_t jobcap;      /* jobs has room for this many: njobs, and every member a pending matrix may
	                     * make, so that expanding one moves no job */
	struct ydoc *later; /* with a pending matrix: the document, read again by manifestexpand */
	const struct strv *mxtainted; /* while a matrix member is read: its keys from a job's output */
	char *laterwsroot;  /* and loadopts.wsroot */
	int onews;          /* loadopts.onews */
	char *confine;      /* loadopts.confine, or NULL */
	struct strv unread; /* what a record's manifest named that was not read (skills folders) */
	char *userconfig;   /* the user's defaults file read (manifest/layers.h), or NULL */
	char *userout;      /* its out: (absolute), or NULL */
	char *usersandbox;  /* its sandbox: as compact JSON, as written, or NULL */
	struct ydoc *cfg;   /* while loading: the user's defaults, for models the manifest lacks */
	struct adminpolicy admin;
};

/* Load and check a manifest; on error e->msg is "file:line:col: message" and e->code 2. */
int manifestload(struct manifest *m, const char *path, struct err *e);
/* The same with inputs (KEY=VALUE strings from --set) for ${{ inputs.KEY }}. */
int manifestloadset(struct manifest *m, const char *path, const struct strv *sets, struct err *e);

struct loadopts {
	const struct strv *sets; /* KEY=VALUE inputs */
	const char *workspace;   /* use this folder instead of the manifest's workspace (replay) */
	const char *wsroot;      /* and WSROOT/<name> instead of each job's own workspace (replay) */
	int onews;               /* with wsroot: the record had one workspace, every job's is workspace */
	const char *confine;     /* a record's manifest folder: every file named is read from beneath it
	                          * (never a link, never outside), skills folders are not read */
};

/* The largest file of a manifest (the manifest, a script, a worker file) that is read. */
#define MANIFESTFILEMAX (4u << 20)

/* The name of the manifest's workspace among jobs' own ones (snapshots/default/). */
#define WSDEFAULT "default"
/* The same with every option. */
int manifestloadopts(struct manifest *m, const char *path, const struct loadopts *o, struct err *e);
/* Only the layers under any manifest (manifest/layers.h): the admin policy into m->admin, the
 * user's defaults into m's sandbox, userout and models; 0, or -1 with e (ERR_INPUT). */
int manifestlayers(struct manifest *m, struct err *e);
/* Deep-copy a sandbox configuration (dst is overwritten, not freed). */
void sandboxcopy(struct sandboxconf *dst, const struct sandboxconf *src);
void sandboxfree(struct sandboxconf *s);
/* Sort m->errors by file, line and column, drop repeats, keep at most MANIFEST_MAXERRORS. */
void manifestsorterrors(struct manifest *m);
/* Free everything a model owns and clear it. */
void modelfree(struct model *md);
/* Parse one model named name from "KEY=VALUE" pairs of the models: section's keys, exactly as that
 * section parses its mapping (for --model). An error is "where:I:1: message", I the failing
 * pair's index from 1, code 2; a script it reads is not added to the manifest's files. */
int manifestmodelpairs(struct manifest *m, const char *name, const char *where, const struct strv *pairs,
                       struct model *md, struct err *e);
/* Free everything a manifest owns. */
void manifestfree(struct manifest *m);

struct model *manifestmodel(const struct manifest *m, const char *name);
/* Hold model md's price to the admin policy's: under its cost cap (max_cost or budget.cost) each
 * part of the price is at least the policy's for md's model name (its entry, else "*"), and a
 * model the policy gives no price for is refused (-1, e naming the remedy, code 2). A scripted
 * model bills nothing and is left alone. */
int manifestadminprice(const struct manifest *m, struct model *md, struct err *e);
struct worker *manifestworker(const struct manifest *m, const char *name);
/* May the worker named, or a worker it delegates to (at any depth), change its workspace: a tool
 * that runs steps or writes (shell, write_file, edit_file) or any MCP tool? 1 or 0; an unknown
 * name counts as writing. */
int manifestworkerwrites(const struct manifest *m, const char *name);
struct job *manifestjob(const struct manifest *m, const char *id);
/* The job of m that a recorded job id stands for: that job, else the matrix job group names (a
 * member of a matrix made from a job's output is no job of m until that output is there: run.json's
 * matrix.job), when m has it and its matrix is still pending; NULL when neither. */
struct job *manifestjobof(const struct manifest *m, const char *id, const char *group);
/* The jobs id names: the job of that id, or every member of the matrix job id; 0 when none. */
size_t manifestselect(const struct manifest *m, const char *id, struct strv *ids);
/* Make the pending matrix job i (mxpending) into its members, with outputs ({ID: output}) of the
 * jobs it needs: member 0 takes its place, the others are added at the end (jobs does not move);
 * jobs that need it need the members instead. Returns the number of members, or -1 with
 * "file:line:col: message" in e (a list that is not one, a member that does not load). */
int manifestexpand(struct manifest *m, size_t i, const cJSON *outputs, struct err *e);
/* The model a job uses: its own, else its worker's. */
const char *jobmodel(const struct manifest *m, const struct job *j);

const char *decisionname(enum decision d);
/* The tool bit for a name, or 0 when unknown. */
unsigned toolbyname(const char *name);
/* The name of built-in tool number i (its bit is 1 << i), NULL past the last. */
const char *toolnameat(int i);

#endif
