/* mcpconf: the manifest's `mcp:` servers and the `mcp__SERVER__TOOL` names that refer to them. */
#ifndef NS_MCPCONF_H
#define NS_MCPCONF_H

#include "manifest.h"
#include "yaml.h"
#include "../util/secrets.h"

/* Parse the top-level `mcp:` mapping into m->mcp; -1 with file:line:col on error. */
int mcpconfparse(struct manifest *m, struct ydoc *y, yaml_node_t *n);
/* Check one MCP entry of a worker's `tools:` ("mcp__fs__*"): its server is declared and the
 * rest is a non-empty pattern; -1 with file:line:col on error. */
int mcpconftool(const struct manifest *m, struct ydoc *y, yaml_node_t *n, const char *s);
/* Split a model-facing name "mcp__SERVER__TOOL": the server's length, or 0 when s is not one. */
size_t mcpsplit(const char *s);
/* The value of header h ("Name: value") with ${{ env.X }} expanded, in a new string, or NULL with e. */
char *mcpheaderexpand(const struct manifest *m, const char *h, struct err *e);
/* Add the environment values that the servers' headers use to the secrets, to be masked. */
void mcpsecrets(const struct manifest *m, struct secrets *s);
/* Free the servers of a manifest. */
void mcpconffree(struct manifest *m);

#endif
