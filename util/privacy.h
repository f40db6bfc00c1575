/* privacy: files the runner makes are no more open than the workspace they record. */
#ifndef NS_PRIVACY_H
#define NS_PRIVACY_H

#include <sys/types.h>

/* The permission bits (within 077) that the group or others lack to read path: those its own
 * mode leaves out, and all of a class's bits when a folder on the way to it refuses that class
 * passage (no x). A path that does not exist yet is judged by its nearest existing folder. */
mode_t privacydeny(const char *path);
/* From now on every file and folder this process makes leaves out the deny bits too (the umask
 * gets them); once, before any thread starts. The user's own umask is kept for steps. */
void privacyapply(mode_t deny);
/* The umask the process started with: what a step's processes and files in the workspace get. */
mode_t privacyumask(void);

#endif
