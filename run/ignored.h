/* ignored: which workspace paths the workspace's .gitignore files ignore, asked of the host's git. */
#ifndef NS_IGNORED_H
#define NS_IGNORED_H

#include "../util/util.h"

/* For each of paths (relative to folder ws; a directory ends with "/") set flags[i] = 1 when the
 * .gitignore files of ws ignore it. Runs `git check-ignore -z -v -n --stdin --no-index` in ws with
 * a fixed argv and environment and an empty repository of its own (ws's own .git, its config and
 * hooks are never read, nor the user's global excludes); the paths go through stdin. Returns 0;
 * 1 when git is not installed (nothing ignored); -1 with e filled when git failed. */
int gitignored(const char *ws, const struct strv *paths, unsigned char *flags, struct err *e);

#endif
