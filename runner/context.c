/* context: estimating a request's tokens, and (below) eliding old tool results to fit the window. */
#include <math.h>
#include "context.h"

void ctxinit(struct ctx *c)
{
	c->rate = CTX_RATE0;
	c->lastbytes = 0;
}

int64_t ctxestimate(const struct ctx *c, size_t bytes)
{
	return (int64_t)ceil((double)bytes * c->rate) + 16;
}

void ctxcalibrate(struct ctx *c, size_t bytes, int64_t input)
{
	if (input <= 0 || bytes == 0)
		return;
	/* The rate of the last request, with a 10% margin for what the next one adds: new text may
	 * tokenize denser than the conversation so far. */
	c->rate = (double)input / (double)bytes * 1.1;
}
