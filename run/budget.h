/* budget: what a job may spend and has spent, its delegates at any depth included, and what the
 * run's jobs spend together (budget.cost). A request is reserved before it is sent, with the most
 * it can cost (its estimated input and its whole output cap), and settled when its usage is known:
 * a request that could pass a budget is never sent. Budgets of one run share the run's lock, so
 * jobs running at once cannot pass budget.cost together. */
#ifndef NS_BUDGET_H
#define NS_BUDGET_H

#include <pthread.h>
#include <stdint.h>
#include "../manifest/manifest.h"
#include "../llm/llm.h"

struct budget {
	struct budget *parent; /* the delegating job's budget, or the run's; NULL for the run's own */
	pthread_mutex_t *mu;   /* the run's lock, shared by every budget of the run */
	char what[96];         /* how messages name it: "job build", "the run" */
	int max_turns;         /* 0 = no limit */
	int64_t max_tokens;    /* 0 = no limit */
	double max_cost;       /* USD, 0 = no limit */
	int turns;             /* requests sent, delegates' included (reserved ones too) */
	int64_t tokens;        /* input + output tokens spent, delegates' included */
	double cost;           /* USD spent, delegates' included */
	int64_t rtokens;       /* reserved by requests in flight */
	double rcost;
};

/* The most bytes of a request or a reply one token stands for: tokenizers in use average 3 to 5
 * (JSON, code, prose); a provider's count below bytes / this is not believed. */
#define BUDGET_TOKEN_BYTES 16

/* One request's reservation, to settle. */
struct reservation {
	int64_t tokens;
	double cost;
	int held; /* 1 between a successful budgetreserve and its budgetsettle */
};

/* Set up b (zeroed) with the limits of a job under parent (the run's budget, or the delegating
 * job's), sharing mu. */
void budgetinit(struct budget *b, struct budget *parent, pthread_mutex_t *mu, const char *what, int max_turns,
                int64_t max_tokens, double max_cost);
/* The cost of a usage at a model's price (USD); 0 without a price. */
double budgetcost(const struct model *m, const struct usage *u);
/* Reserve one request of input tokens (estimated) and an output cap on b and every budget above
 * it. When one of them would be passed, nothing is reserved and 1 is returned with why saying
 * which budget (e.g. "max_tokens (5000) of job j: 4800 spent, this request may use up to 900");
 * else 0. */
int budgetreserve(struct budget *b, const struct model *m, int64_t input, int64_t outcap, struct reservation *r,
                  char *why, size_t n);
/* What a request that sent `sent` bytes and got `got` bytes back is charged in the budgets: the
 * usage its provider reported, but never fewer tokens than those bytes hold (a token is at most
 * BUDGET_TOKEN_BYTES of them, whatever the tokenizer); its reservation (est, cap) when it
 * reported none. */
struct usage budgetcharged(const struct usage *reported, size_t sent, size_t got, int64_t est, int64_t cap);
/* Replace a reservation by what the request really used (u, its cost at m's price). */
void budgetsettle(struct budget *b, const struct model *m, struct reservation *r, const struct usage *u);
/* Count one request a record says was sent and what it used (u, its cost at m's price) on b and
 * every budget above it, unreserved and unchecked: a replay spends as the night did. */
void budgetcharge(struct budget *b, const struct model *m, const struct usage *u);

#endif
