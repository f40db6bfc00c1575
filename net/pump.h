/* pump: move the bytes of one direction of a connection, blocking, with splice(); the egress
   proxy runs one per direction. */
#ifndef NS_PUMP_H
#define NS_PUMP_H

#include <stdint.h>

/* Move everything from src to dst (blocking sockets) until src ends or either side fails,
   then shut dst's write side; the bytes moved, or -1 when no pipe could be made. */
int64_t pumpflow(int src, int dst);

#endif
