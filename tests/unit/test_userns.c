/* test_userns: the diagnosis when user namespaces are refused names the cause found and its
 * remedies, and tells a refusal from a fault. */
#include <errno.h>
#include <string.h>
#include "../../sandbox/userns.h"
#include "t.h"

static const char *explain(struct usernsfacts f, int err)
{
	static struct err e;
	memset(&e, 0, sizeof e);
	usernsexplain(&f, err, "write gid_map", &e);
	ok(e.kind == ERR_FAIL, "exit code 1 (code %d)", e.kind);
	ok(strstr(e.msg, "write gid_map") && strstr(e.msg, strerror(err)), "names what failed and how: %s", e.msg);
	ok(strstr(e.msg, "backend: docker") && strstr(e.msg, "backend: none"), "names the other backends");
	return e.msg;
}

int main(void)
{
	struct usernsfacts none = {.apparmor = -2, .maxns = 15000, .clone = -2, .seccomp = 0, .root = 0};
	struct usernsfacts f;

	/* Ubuntu's AppArmor restriction: the namespace is made, then refused capabilities. */
	f = none, f.apparmor = 1;
	const char *m = explain(f, EPERM);
	ok(strstr(m, "apparmor_restrict_unprivileged_userns=1") && strstr(m, "without capabilities"), "AppArmor named: %s", m);
	ok(strstr(m, "AppArmor profile that allows userns") && strstr(m, "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"),
	   "both remedies: a profile, or the sysctl");
	ok(usernsrefused(&f, 0, EACCES), "a mount refused (EACCES) after the namespace was made is AppArmor's doing");
	ok(usernsrefused(&f, 0, EPERM), "and EPERM likewise");
	ok(!usernsrefused(&f, 0, ENOENT), "but ENOENT is a fault of its own");
	/* The setting exists but only root may read it (as on some Ubuntu kernels). */
	f = none, f.apparmor = -1;
	m = explain(f, EPERM);
	ok(strstr(m, "AppArmor likely restricts") && strstr(m, "only root can read it"), "unreadable setting: likely AppArmor: %s", m);
	ok(usernsrefused(&f, 0, EACCES), "unreadable setting: a refused mount is taken for AppArmor");
	/* Root is not restricted by it: a refused mount as root is a fault, and the cause lies elsewhere. */
	f = none, f.apparmor = 1, f.root = 1;
	ok(!usernsrefused(&f, 0, EPERM), "as root, a refused mount is not AppArmor's restriction");
	m = explain(f, EPERM);
	ok(!strstr(m, "AppArmor"), "as root, AppArmor is not blamed: %s", m);
	/* The restriction switched off: not blamed. */
	f = none, f.apparmor = 0;
	ok(!usernsrefused(&f, 0, EPERM), "AppArmor's restriction off: a refused mount is a fault");
	m = explain(f, EPERM);
	ok(strstr(m, "the kernel refuses them"), "nothing found: says the kernel refuses: %s", m);

	f = none, f.maxns = 0;
	m = explain(f, EPERM);
	ok(strstr(m, "user.max_user_namespaces=0") && strstr(m, "max_user_namespaces=15000"), "max_user_namespaces=0: %s", m);
	f = none, f.clone = 0;
	m = explain(f, EPERM);
	ok(strstr(m, "unprivileged_userns_clone=0") && strstr(m, "unprivileged_userns_clone=1"), "Debian's switch: %s", m);
	f = none;
	m = explain(f, ENOSPC);
	ok(strstr(m, "limit on user namespaces is reached"), "ENOSPC: the limit: %s", m);
	f = none, f.seccomp = 1;
	m = explain(f, EPERM);
	ok(strstr(m, "seccomp filter") && strstr(m, "seccomp=unconfined"), "seccomp around nightshift: %s", m);

	/* Failing to make the namespace or write its maps is always a refusal. */
	f = none;
	ok(usernsrefused(&f, 1, EPERM) && usernsrefused(&f, 1, EINVAL), "early failures are refusals");

	/* This machine's own facts read without error. */
	usernsread(&f);
	ok(f.maxns != -2, "user.max_user_namespaces exists here (%d)", f.maxns);
	return tdone();
}
