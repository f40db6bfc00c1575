/* skills: Agent Skills folders (a SKILL.md with front matter name and description) of a worker. */
#ifndef NS_SKILLS_H
#define NS_SKILLS_H

#include "manifest.h"
#include "yaml.h"

/* Take the worker's `skills:` list (folders relative to the file that names them): each must hold
 * a SKILL.md whose front matter has a valid name (the folder's own name) and a description.
 * Fills w->skills (absolute folders), w->skillnames, w->skilldescs; -1 with file:line:col. */
int skillsload(struct ydoc *y, yaml_node_t *list, struct worker *w);
/* The part of the system prompt that lists the worker's skills, or NULL when it has none. */
char *skillsprompt(const struct worker *w);

#endif
