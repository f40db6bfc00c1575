/* cancel: a run-wide stop request (SIGINT/SIGTERM), seen by every wait of the runner. */
#ifndef NS_CANCEL_H
#define NS_CANCEL_H

#include <signal.h>

/* Set once a stop was requested. */
extern volatile sig_atomic_t cancelled;

/* Make the self-pipe; call once before any thread starts. */
int cancelinit(void);
/* Request a stop; async-signal-safe (for a signal handler). */
void cancelnow(void);
/* A file descriptor that becomes readable once a stop is requested (for poll), or -1. */
int cancelfd(void);

#endif
