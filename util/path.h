/* path: tool path arguments made workspace-relative, lexically. */
#ifndef NS_PATH_H
#define NS_PATH_H

/* Normalise a tool path argument ("a/./b", "/workspace/a", "a//b/") to a workspace-relative path
 * ("." for the root) in a new string, lexically: NULL when it is empty, longer than 4096 bytes or
 * not UTF-8, absolute outside /workspace, or when a ".." would climb above the workspace root at
 * any point ("/workspace/../workspace/a" too). Symbolic links are the file tools' business. */
char *wspath(const char *p);
/* p with its empty and "." names dropped and each ".." taking away the name before it, lexically,
 * in a new string: an absolute path stays absolute ("/" for its root), an empty relative one is
 * "."; NULL when a ".." would climb above the start ("/.." and "a/../.." too). */
char *pathclean(const char *p);
/* The name a file a manifest names (rel as written, relative to the manifest's folder) keeps in a
 * run's manifest/ folder: rel without leading "./", or its last name when it is absolute, empty
 * or holds ".."; points into rel. Writing the copy and reading it back (replay) both use it. */
const char *pathcopyname(const char *rel);

#endif
