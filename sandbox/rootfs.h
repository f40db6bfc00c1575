/* rootfs: the file system a namespace sandbox sees, planned in the parent (paths resolved,
   /etc secrets found) and built by the sandbox's init inside its new mount namespace. */
#ifndef NS_ROOTFS_H
#define NS_ROOTFS_H

#include <stddef.h>
#include "sandbox.h"

enum ropkind { R_BIND, R_SYMLINK, R_TMPFS, R_PROC, R_DEVPTS, R_FILE, R_MASK, R_ROSELF };

/* One step of the build; src is a host path (or link target, or file content), dst a sandbox path. */
struct rop {
	enum ropkind kind;
	char *src, *dst;
	unsigned flags; /* RF_ bits */
	dev_t dev;      /* R_BIND of a workspace or mount source: what the bind must show (ino 0: unchecked) */
	ino_t ino;
};
enum { RF_RW = 1, RF_DEV = 2, RF_DIR = 4, RF_OPTIONAL = 8 };

struct rootfs {
	struct rop *ops;
	size_t n, cap;
};

/* Plan the mounts for c: image host (system dirs read-only, /etc secrets masked) or a
   root file system folder, /workspace, the declared mounts, /tmp, /proc, a minimal /dev. */
int rootfsplan(struct rootfs *r, const struct sbxconf *c, struct err *e);
/* Build the plan; run by pid 1 of the new pid namespace in the new mount namespace,
   with capabilities there. Ends chrooted by pivot_root into the new, read-only root. */
int rootfsbuild(const struct rootfs *r, struct err *e);
/* Add one step to a plan, after those rootfsplan made (e.g. a socket bound in). */
void rootfsadd(struct rootfs *r, enum ropkind kind, const char *src, const char *dst, unsigned flags);
/* Whether a step in the sandbox c plans could read the host file path (absolute, without symbolic
 * links): 1 with the sandbox path it has there in at (n bytes), 0 when no mount of the plan shows
 * it (or one later in the plan hides it), -1 when c cannot be planned (e filled). */
int rootfsreads(const struct sbxconf *c, const char *path, char *at, size_t n, struct err *e);
/* Free the plan. */
void rootfsfree(struct rootfs *r);

#endif
