/* agentfile: Claude Code agent files (.claude/agents/NAME.md) accepted as worker files. */
#ifndef NS_AGENTFILE_H
#define NS_AGENTFILE_H

#include "manifest.h"
#include "yaml.h"

/* Whether a worker file's front matter is a Claude Code agent file: it names itself (`name`),
 * which a nightshift worker file never does. */
int agentfileis(struct ydoc *y, yaml_node_t *root);
/* Apply an agent file's front matter on w: description, tools ("Read, Grep, Bash", mapped to
 * ours), model (one of the manifest's models, or inherit), name and color (accepted, unused).
 * -1 with file:line:col for an unknown key, tool or model. */
int agentfileapply(const struct manifest *m, struct ydoc *y, yaml_node_t *root, struct worker *w);

#endif
