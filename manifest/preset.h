/* preset: named, maintained sets of approval rules ("- { preset: read-only }"), safe against the
 * dangerous-option table of policy/danger.c; docs/security.md lists what each allows. */
#ifndef NS_PRESET_H
#define NS_PRESET_H

#include <stddef.h>

/* The shell command patterns a preset allows, NULL-terminated, or NULL for an unknown name. */
const char *const *presetrules(const char *name);
/* The preset names, NULL-terminated. */
extern const char *const presetnames[];

#endif
