/* gate: one model's requests across a run: at most `concurrency` in flight, and a rate limit one
 * job was told about (429, retry-after) holds back the other jobs on that model too. */
#ifndef NS_GATE_H
#define NS_GATE_H

#include <pthread.h>
#include <stdint.h>

struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int cap;          /* requests in flight at most, 0 = no cap */
	int inflight;
	int64_t until;    /* monotonic ms: no request starts before this */
};

/* A gate letting cap requests (0: any number) through at once. */
void gateinit(struct gate *g, int cap);
void gatefree(struct gate *g);
/* Wait for a place and for any hold to pass, until the monotonic time until (0: no end); 0, or -1
 * when interrupted or until came first (no place taken). */
int gateenter(struct gate *g, int64_t until);
void gateleave(struct gate *g);
/* Hold every request on this gate back for ms from now (a longer hold already set stays). */
void gatehold(struct gate *g, int64_t ms);

#endif
