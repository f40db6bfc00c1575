/* carry: what a resumed run takes from the run it resumes: finished jobs' folders and the layers
 * their events name, byte for byte, so that the new run verifies on its own. */
#ifndef NS_CARRY_H
#define NS_CARRY_H

#include "../util/util.h"

/* Copy the folder from/jobs/ID into to/jobs/ID (made; must not exist). Regular files and folders
 * only: anything else in it is an error (code 2). */
int carryjob(const char *from, const char *to, const char *id, struct err *e);
/* Copy every numbered layer of from/snapshots (and of each workspace's folder in it) into the same
 * place under to/snapshots, hard-linked when both are on one filesystem; each end.tar.zst goes in
 * as NNNN.end.tar.zst, NNNN the run's last step (unless a layer of that name is there: a run that
 * ran no step after its own origin's end keeps that one). closed: the chain in from/snapshots
 * itself is not continued (the new run keeps a chain per workspace): its end.tar.zst goes in as
 * end.tar.zst. */
int carrylayers(const char *from, const char *to, int last, int closed, struct err *e);
/* Whether the run at from keeps a chain per workspace (folders in from/snapshots). */
int carrychains(const char *from);
/* Remove the carried chains of to/snapshots whose workspace is not in keep (no job of the new run,
 * carried or run, worked there): folders holding only numbered layers. */
int carrydrop(const char *to, const struct strv *keep, struct err *e);

#endif
