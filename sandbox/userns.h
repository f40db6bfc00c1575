/* userns: why this machine refuses the namespace sandbox its user namespace, and what to do. */
#ifndef NS_USERNS_H
#define NS_USERNS_H

#include "../util/util.h"

/* What the kernel's settings say; -1 where a setting cannot be read, -2 where it does not exist. */
struct usernsfacts {
	int apparmor; /* kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10+; root-only on some) */
	int maxns;    /* user.max_user_namespaces */
	int clone;    /* kernel.unprivileged_userns_clone (Debian's older kernels) */
	int seccomp;  /* 1: a seccomp filter is on this process (Docker's default profile in a container) */
	int root;     /* 1: running as root, whom none of these restrict */
};

/* Read the facts from /proc. */
void usernsread(struct usernsfacts *f);
/* Whether a set-up step that failed with err is the machine refusing user namespaces rather
 * than a fault: early is 1 for making the namespace or writing its id maps, 0 for what follows
 * (mounts), where AppArmor's restriction shows as a namespace without capabilities. */
int usernsrefused(const struct usernsfacts *f, int early, int err);
/* Fill e (code 1) with what failed, the cause found and the remedies. */
int usernsexplain(const struct usernsfacts *f, int err, const char *what, struct err *e);

#endif
