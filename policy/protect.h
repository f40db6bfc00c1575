/* protect: what no step and no file tool may change (DESIGN.md, "What a step may change"): the
 * manifest and every file it read, .git/config, .git/hooks, .git/info, the run directories and
 * the paths of sandbox.protect. Git objects and refs stay writable, so commits work. */
#ifndef NS_PROTECT_H
#define NS_PROTECT_H

#include "../manifest/manifest.h"

struct protect {
	struct strv paths; /* workspace-relative, normalised: each protected with all under it */
	struct strv globs; /* sandbox.protect entries with wildcards (util/glob.h's globpath) */
	struct strv linked; /* regular files with hard links outside the workspace (protectlinks) */
	struct strv absent; /* sandbox.protect paths (no wildcard) missing when the job began: no mount
	                       can keep a step from making them, so protectmade looks after each step */
};

/* The protected paths of workspace ws for a job whose sandbox is sc; hidden is the runs folder
 * inside ws (relative, may be NULL). Reads the workspace, changes nothing. */
void protectinit(struct protect *p, const struct manifest *m, const char *ws, const char *hidden,
                 const struct sandboxconf *sc);
/* The first of p->absent that is there now (or cannot be looked at) beneath the workspace wsfd:
 * a step made what sandbox.protect names; NULL when none. */
const char *protectmade(const struct protect *p, int wsfd);
/* Make .git/hooks and .git/info in ws when .git is a directory without them, so that they can be
 * bound read-only and a step cannot plant them (a run, before its first step). */
void protecthooks(const char *ws);
/* Find the regular files of ws (the runs folder hidden left out) whose link count says they have
 * names outside it (st_nlink above the names found inside) into p->linked, sorted: a write
 * through one would change a file outside the workspace. protectmounts binds them read-only and
 * protectmatch refuses them to the file tools (a rename over the name would leave steps seeing
 * the old file). More than cap of them is an error (-1) saying how to break the links; 1 with e
 * set when the walk could not see everything (a tree too deep), what it found kept. */
int protectlinks(struct protect *p, const char *ws, const char *hidden, size_t cap, struct err *e);
/* The protected entry a normalised workspace-relative path falls under (itself or an ancestor
 * listed, or a glob it matches), or NULL. For the file tools, and for redirect targets. */
const char *protectmatch(const struct protect *p, const char *path);
/* Add to sc a read-only bind mount of each protected path that exists under ws (never through a
 * symlink), after a bind of each parent directory onto itself, so that no step can rename a
 * protected entry, or a folder holding one, out of the way; and one of each linked file (the
 * file itself is what is kept, wherever a step moves it). */
void protectmounts(const struct protect *p, const char *ws, struct sandboxconf *sc);
void protectfree(struct protect *p);

#endif
