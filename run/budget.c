/* budget: reserve before sending, settle after, on a job's budget and every one above it. */
#include <stdio.h>
#include <string.h>
#include "budget.h"

void budgetinit(struct budget *b, struct budget *parent, pthread_mutex_t *mu, const char *what, int max_turns,
                int64_t max_tokens, double max_cost)
{
	memset(b, 0, sizeof *b);
	b->parent = parent;
	b->mu = mu;
	snprintf(b->what, sizeof b->what, "%s", what);
	b->max_turns = max_turns;
	b->max_tokens = max_tokens;
	b->max_cost = max_cost;
}

double budgetcost(const struct model *m, const struct usage *u)
{
	if (!m->price.set)
		return 0;
	int64_t cached = u->cached < u->input ? u->cached : u->input;
	return ((double)(u->input - cached) * m->price.input + (double)cached * m->price.cached_input +
	        (double)u->output * m->price.output) / 1e6;
}

int budgetreserve(struct budget *b, const struct model *m, int64_t input, int64_t outcap, struct reservation *r,
                  char *why, size_t n)
{
	/* The most the request can cost: all its input uncached, all its output cap used. */
	struct usage most = {input, outcap, 0, 0};
	double cost = budgetcost(m, &most);
	int64_t tokens = input + outcap;
	memset(r, 0, sizeof *r);
	pthread_mutex_lock(b->mu);
	for (struct budget *p = b; p; p = p->parent) {
		if (p->max_turns && p->turns + 1 > p->max_turns) {
			snprintf(why, n, "max_turns (%d) reached by %s: %d requests sent%s", p->max_turns, p->what, p->turns,
			         p == b ? "" : ", its delegates' included");
			pthread_mutex_unlock(b->mu);
			return 1;
		}
		if (p->max_tokens && p->tokens + p->rtokens + tokens > p->max_tokens) {
			snprintf(why, n, "max_tokens (%lld) of %s would be passed: %lld tokens spent%s, this request may use up to "
			         "%lld (about %lld input and an output cap of %lld)", (long long)p->max_tokens, p->what,
			         (long long)(p->tokens + p->rtokens), p == b ? "" : " with its delegates", (long long)tokens,
			         (long long)input, (long long)outcap);
			pthread_mutex_unlock(b->mu);
			return 1;
		}
		if (p->max_cost > 0 && p->cost + p->rcost + cost > p->max_cost) {
			snprintf(why, n, "%s ($%.4f) of %s would be passed: $%.4f spent%s, this request may cost up to $%.4f",
			         p->parent ? "max_cost" : "budget.cost", p->max_cost, p->what, p->cost + p->rcost,
			         p->parent ? (p == b ? "" : " with its delegates") : " by the run's jobs", cost);
			pthread_mutex_unlock(b->mu);
			return 1;
		}
	}
	for (struct budget *p = b; p; p = p->parent) {
		p->turns++;
		p->rtokens += tokens;
		p->rcost += cost;
	}
	pthread_mutex_unlock(b->mu);
	r->tokens = tokens;
	r->cost = cost;
	r->held = 1;
	return 0;
}

struct usage budgetcharged(const struct usage *reported, size_t sent, size_t got, int64_t est, int64_t cap)
{
	struct usage c = *reported;
	if (!c.input && !c.output)
		return (struct usage){est, cap, 0, 0}; /* none reported: what it may have used */
	int64_t in = (int64_t)(sent / BUDGET_TOKEN_BYTES), out = (int64_t)(got / BUDGET_TOKEN_BYTES);
	if (c.input < in)
		c.input = in;
	if (c.output < out)
		c.output = out;
	return c;
}

void budgetsettle(struct budget *b, const struct model *m, struct reservation *r, const struct usage *u)
{
	if (!r->held)
		return;
	double cost = budgetcost(m, u);
	pthread_mutex_lock(b->mu);
	for (struct budget *p = b; p; p = p->parent) {
		p->rtokens -= r->tokens;
		p->rcost -= r->cost;
		p->tokens += u->input + u->output;
		p->cost += cost;
	}
	pthread_mutex_unlock(b->mu);
	r->held = 0;
}

void budgetcharge(struct budget *b, const struct model *m, const struct usage *u)
{
	double cost = budgetcost(m, u);
	pthread_mutex_lock(b->mu);
	for (struct budget *p = b; p; p = p->parent) {
		p->turns++;
		p->tokens += u->input + u->output;
		p->cost += cost;
	}
	pthread_mutex_unlock(b->mu);
}
