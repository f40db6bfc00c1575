/* path: tool path arguments made workspace-relative, lexically. */
#ifndef NS_PATH_H
#define NS_PATH_H

/* Normalise a tool path argument ("a/./b", "/workspace/a", "a//b/") to a workspace-relative path
 * ("." for the root) in a new string, lexically: NULL when it is empty, longer than 4096 bytes or
 * not UTF-8, absolute outside /workspace, or when a ".." would climb above the workspace root at
 * any point ("/workspace/../workspace/a" too). Symbolic links are the file tools' business. */
char *wspath(const char *p);

#endif
