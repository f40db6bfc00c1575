/* layers: the files of configuration beside a manifest: a user's defaults
 * ($XDG_CONFIG_HOME/nightshift/config.yaml, else ~/.config/...) and the admin policy
 * (/etc/nightshift/policy.yaml: root-owned, writable by no one else, else refused). Found and
 * checked here; manifest.c parses them with the manifest's own parsers. */
#ifndef NS_LAYERS_H
#define NS_LAYERS_H

#include "../util/util.h"

/* The admin policy's fixed path. */
#define ADMINPOLICY "/etc/nightshift/policy.yaml"

/* The user's config file path (it may not exist), in a new string, or NULL when neither
 * XDG_CONFIG_HOME nor HOME is set to an absolute path. */
char *layersuserpath(void);
/* Is the admin policy at path one to trust? 1 when it exists and is a regular file owned by root
 * in folders owned by root, none of them writable by group or others; 0 when it does not exist;
 * -1 with e (ERR_INPUT) naming what is wrong when it exists but cannot be trusted. */
int layersadmincheck(const char *path, struct err *e);
/* The name of a test-only variable set in the environment that would loosen what the admin
 * policy holds (NIGHTSHIFT_TEST_RESOLVE: names to addresses, believed over DNS), or NULL. */
const char *layerstesthook(void);
/* Is the user's defaults file at path theirs alone, as ssh holds its config? 1 when the file (its
 * link followed) and every folder above it are owned by this user or root and writable by no one
 * else (a sticky folder's others, a group that is the user's own, excepted); 0 when it does not
 * exist; -1 with e (ERR_INPUT) naming what is wrong and the remedy. */
int layersusercheck(const char *path, struct err *e);

#endif
