/* gitmeta: git's metadata in a workspace, what git reads as configuration or runs as code
 * (config, config.worktree, commondir, hooks, info, worktrees' and modules' config, gitdir and
 * hooks, a .git file, remotes, branches, alternates, ...): no step and no file tool may change it.
 * Commit state stays writable (objects, refs, logs, index, HEAD, packed-refs, ORIG_HEAD,
 * COMMIT_EDITMSG, a rebase's or a merge's state, locks). Every directory named .git in the
 * workspace counts, the one a .git file inside it points to, and any folder git would take for a
 * bare repository (HEAD, and objects and refs or a commondir): there only what git reads at its
 * top (config, hooks, info, commondir, ...), the rest being the workspace's. A HEAD left
 * unreadable is put back (git would look further up), and a .git moved aside behind a .git file
 * is moved back. */
#ifndef NS_GITMETA_H
#define NS_GITMETA_H

#include <stddef.h>
#include "../util/util.h"

/* Whether a normalised workspace-relative path is git metadata: a name .git, or below one and
 * not commit state. For the file tools (protect.h's protectmatch). */
int gitmetapath(const char *rel);

struct gitent;
/* The git metadata of a workspace as it was (paths, kinds, modes, contents). */
struct gitkeep {
	struct gitent *v;
	size_t n;
	size_t bytes;
	struct gitent *heads; /* each git directory's HEAD, put back when a step leaves it unreadable */
	size_t nheads;
};

/* Keep the git metadata beneath wsfd (hidden: the runs folder, left out); k is overwritten. -1
 * when there is more than GITKEEPMAX bytes of it or it cannot be read. */
int gitkeep(struct gitkeep *k, int wsfd, const char *hidden, struct err *e);
/* Put back what changed since gitkeep, never through a link: what is new is removed, what changed
 * or went is written again. Each path undone goes into undone; one that could not be is said in e
 * (-1), the others still put back. */
int gitundo(const struct gitkeep *k, int wsfd, const char *hidden, struct strv *undone, struct err *e);
void gitkeepfree(struct gitkeep *k);

enum { GITKEEPMAX = 64 << 20 };

#endif
