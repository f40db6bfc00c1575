/* preset: named, maintained sets of approval rules ("- { preset: read-only }"), safe against the
 * dangerous-option table of policy/danger.c; docs/security.md lists what each allows. */
#ifndef NS_PRESET_H
#define NS_PRESET_H

#include <stddef.h>

/* The shell command patterns a preset allows, NULL-terminated, or NULL for an unknown name. */
const char *const *presetrules(const char *name);
/* Whether a preset's rules may write the workspace by redirection (build); read-only and
 * git-read allow redirections only to /dev/null and the step's /tmp. */
int presetwrites(const char *name);
/* The preset names, NULL-terminated. */
extern const char *const presetnames[];

#endif
