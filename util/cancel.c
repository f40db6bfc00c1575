/* cancel: a flag and a self-pipe, so that blocking waits can include the stop request. */
#include <fcntl.h>
#include <unistd.h>
#include "cancel.h"

volatile sig_atomic_t cancelled;
static int pipefd[2] = {-1, -1};

int cancelinit(void)
{
	if (pipefd[0] >= 0)
		return 0;
	return pipe2(pipefd, O_CLOEXEC | O_NONBLOCK);
}

void cancelnow(void)
{
	cancelled = 1;
	if (pipefd[1] >= 0) {
		char c = 1;
		ssize_t n = write(pipefd[1], &c, 1);
		(void)n;
	}
}

int cancelfd(void)
{
	return pipefd[0];
}
