/* policy: a worker's approval rules applied to one tool call; strictest match wins. */
#ifndef NS_POLICY_H
#define NS_POLICY_H

#include <cjson/cJSON.h>
#include "../manifest/manifest.h"

struct verdict {
	enum decision decision;
	int rule;             /* index into approval.rules, or -1 when the default decided */
	char reason[256];     /* one line, for the event and for the model's error */
	struct strv commands; /* simple commands found by the shell splitter (shell only) */
	char *path;           /* normalised workspace-relative path (file tools), or NULL */
};

/* Decide a call of tool with its JSON arguments; never fails open: anything odd is denied. */
void policydecide(const struct approval *a, const char *worker, const char *tool,
                  const cJSON *args, struct verdict *v);
/* Free what a verdict owns. */
void verdictfree(struct verdict *v);

/* Normalise a tool path argument ("a/./b", "/workspace/a", "a/../b") to a workspace-relative
 * path ("." for the root) in a new string; NULL when it leaves the workspace or is malformed. */
char *wspath(const char *p);

#endif
