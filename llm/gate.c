/* gate: a counting semaphore with a shared hold, waited on in slices so an interrupt is seen. */
#include <time.h>
#include "../util/util.h"
#include "gate.h"
#include "http.h"

void gateinit(struct gate *g, int cap)
{
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->cap = cap;
	g->inflight = 0;
	g->until = 0;
}

void gatefree(struct gate *g)
{
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->cv);
}

int gateenter(struct gate *g, int64_t until)
{
	pthread_mutex_lock(&g->mu);
	for (;;) {
		if (httpinterrupted() || (until && nowms() >= until)) {
			pthread_mutex_unlock(&g->mu);
			return -1;
		}
		int64_t now = nowms(), wait = g->until > now ? g->until - now : 0;
		if (!wait && (!g->cap || g->inflight < g->cap))
			break;
		if (!wait || wait > 100)
			wait = 100; /* look again for an interrupt, a freed place or the hold's end */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(wait % 1000) * 1000000L;
		ts.tv_sec += wait / 1000 + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&g->cv, &g->mu, &ts);
	}
	g->inflight++;
	pthread_mutex_unlock(&g->mu);
	return 0;
}

void gateleave(struct gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->inflight--;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

void gatehold(struct gate *g, int64_t ms)
{
	pthread_mutex_lock(&g->mu);
	int64_t t = nowms() + ms;
	if (t > g->until)
		g->until = t;
	pthread_mutex_unlock(&g->mu);
}
