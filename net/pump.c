/* pump: one direction of a connection, on its own thread: splice() from the source socket
   into a pipe and from the pipe into the destination (no copy through user memory); where
   the source cannot splice (EINVAL), recv/send through a 64 KiB buffer. At the source's
   end, the destination's write side is shut, so the far end sees the end too. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "pump.h"

#define PIPECAP (1024 * 1024) /* fewer round trips; where the kernel refuses, the default 64 KiB works */
#define BUFCAP (64 * 1024)

int64_t pumpflow(int src, int dst)
{
	int p[2];
	int64_t moved = 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fcntl(p[1], F_SETPIPE_SZ, PIPECAP);
	char *buf = NULL;
	for (;;) {
		ssize_t n = buf ? recv(src, buf, BUFCAP, 0) : splice(src, NULL, p[1], NULL, PIPECAP, SPLICE_F_MOVE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EINVAL && !buf && (buf = malloc(BUFCAP)))
			continue;
		if (n <= 0)
			break;
		ssize_t left = n, w = 0;
		while (left > 0) {
			w = buf ? send(dst, buf + (n - left), left, MSG_NOSIGNAL)
			        : splice(p[0], NULL, dst, NULL, left, SPLICE_F_MOVE);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			left -= w;
			moved += w;
		}
		if (left > 0)
			break;
	}
	shutdown(dst, SHUT_WR);
	close(p[0]);
	close(p[1]);
	free(buf);
	return moved;
}
