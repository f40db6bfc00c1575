/* netrule: one entry of sandbox.network.allow (host, *.domain, host:port, IP literal, CIDR). */
#ifndef NS_NETRULE_H
#define NS_NETRULE_H

#include "manifest.h"

/* Parse text into r (r->text, r->host owned; free with netrulefree); on error -1 with *why
   set to a static explanation. r->pos is left to the caller. */
int netruleparse(const char *text, struct netrule *r, const char **why);
/* Copy and free one entry. */
void netrulecopy(struct netrule *dst, const struct netrule *src);
void netrulefree(struct netrule *r);
/* Does the entry's port part admit port (no port written: 443 and 80)? */
int netruleport(const struct netrule *r, int port);
/* Does the entry name host (lowercase, no trailing dot) as a name or *.domain? */
int netrulename(const struct netrule *r, const char *host);
/* Does the entry's address or range hold addr (4 or 16 bytes, by family AF_INET/AF_INET6)? */
int netruleaddr(const struct netrule *r, int family, const unsigned char *addr);
/* Does entry outer admit everything entry r admits (its ports, its names or its addresses)? */
int netrulewithin(const struct netrule *r, const struct netrule *outer);

#endif
