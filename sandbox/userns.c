/* userns: the diagnosis when the namespace sandbox cannot have its user namespace.
 *
 * The ways a machine says no: Ubuntu 23.10 and later (AppArmor) let an unprivileged program
 * make a user namespace but move it into a profile without capabilities, so writing the gid
 * map or the first mount fails with EPERM or EACCES; user.max_user_namespaces=0; Debian's
 * kernel.unprivileged_userns_clone=0; a seccomp filter around nightshift (Docker's default
 * profile). The sandbox then fails closed and this says which one it found. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "userns.h"

static int sysctl(const char *path)
{
	if (access(path, F_OK) < 0)
		return -2;
	struct buf b = {0};
	int v = -1;
	if (readfile(path, &b, NULL) == 0 && b.len)
		v = atoi(b.data);
	buffree(&b);
	return v;
}

void usernsread(struct usernsfacts *f)
{
	f->apparmor = sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	f->maxns = sysctl("/proc/sys/user/max_user_namespaces");
	f->clone = sysctl("/proc/sys/kernel/unprivileged_userns_clone");
	f->root = geteuid() == 0;
	f->seccomp = 0;
	struct buf st = {0};
	if (readfile("/proc/self/status", &st, NULL) == 0) {
		char *s = strstr(st.data, "\nSeccomp:");
		f->seccomp = s && atoi(s + 9) == 2;
	}
	buffree(&st);
}

/* AppArmor's restriction is on, or may be (the setting exists but only root may read it). */
static int apparmor(const struct usernsfacts *f)
{
	return !f->root && (f->apparmor == 1 || f->apparmor == -1);
}

int usernsrefused(const struct usernsfacts *f, int early, int err)
{
	if (early)
		return 1;
	return (err == EPERM || err == EACCES) && apparmor(f);
}

int usernsexplain(const struct usernsfacts *f, int err, const char *what, struct err *e)
{
	const char *cause, *remedy;
	if (apparmor(f)) {
		cause = f->apparmor == 1
		          ? "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1): "
		            "the namespace is made without capabilities"
		          : "AppArmor likely restricts unprivileged user namespaces "
		            "(kernel.apparmor_restrict_unprivileged_userns exists; only root can read it)";
		remedy = "give nightshift an AppArmor profile that allows userns (docs/security.md shows one), or "
		         "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (for every program on the host; "
		         "what the GitHub action does on Ubuntu runners)";
	} else if (f->maxns == 0) {
		cause = "user namespaces are disabled (user.max_user_namespaces=0)";
		remedy = "sudo sysctl -w user.max_user_namespaces=15000";
	} else if (f->clone == 0) {
		cause = "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0)";
		remedy = "sudo sysctl -w kernel.unprivileged_userns_clone=1";
	} else if (err == ENOSPC) {
		cause = "the limit on user namespaces is reached (user.max_user_namespaces)";
		remedy = "raise user.max_user_namespaces";
	} else if (f->seccomp) {
		cause = "a seccomp filter on nightshift refuses them (as Docker's default profile does in a container)";
		remedy = "run the container with --security-opt seccomp=unconfined, or run nightshift on the host";
	} else {
		cause = "the kernel refuses them";
		remedy = "allow unprivileged user namespaces";
	}
	return errc(e, ERR_FAIL, "namespace sandbox: cannot set up a user namespace (%s: %s): %s. Remedies: %s; or use "
	                  "`backend: docker`; or `backend: none` only if you accept running tools with no isolation",
	            what, strerror(err), cause, remedy);
}
