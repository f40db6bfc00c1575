/* watch: the kernel's change feed (inotify) for a workspace, so that a scan reads again only the
 * directories something happened in. Trusted only where no process outlives the step that
 * started it (run/wspace.c says which backends): then every change has been reported by the time the
 * next scan drains the queue. Whatever the feed cannot vouch for (a queue overflow, a watch
 * limit, a mount inside the tree, a filesystem other than a local one) makes it "lost", and the
 * caller scans everything. */
#ifndef NS_WATCH_H
#define NS_WATCH_H

#include <stdint.h>
#include "../util/util.h"

struct watch;

/* Whether the filesystem under fd is a local one whose changes all pass through this kernel
 * (ext2/3/4, xfs, btrfs, tmpfs, f2fs), each change of a name giving its directory new times. A
 * network or FUSE filesystem may change unseen, or serve times from a cache. */
int watchlocal(int fd);
/* A feed for the tree under rootfd; NULL when this kernel or filesystem cannot give one. */
struct watch *watchopen(int rootfd);
/* Watch the directory open as fd, at path ("" for the root) with inode ino; thread-safe.
 * Returns the watch descriptor, or -1 (the feed is then lost for good). */
int watchadd(struct watch *w, int fd, const char *path, uint64_t ino);
/* Whether watch wd still reports for the directory at path with inode ino. */
int watchlive(struct watch *w, int wd, const char *path, uint64_t ino);
/* Read the queued events into the set of directories to read again; with skipopen, opens of
 * files are left out (the scan's own reads). -1 when the feed has lost track. */
int watchread(struct watch *w, int skipopen);
/* Move the directories to read again into dirty (sorted, each once). */
void watchdirty(struct watch *w, struct strv *dirty);
/* Give directories back to read again: what watchdirty took for a layer that is no base. */
void watchkeep(struct watch *w, const struct strv *dirty);
/* Forget what was read and whether track was lost: a full scan follows. */
void watchreset(struct watch *w);
/* Mark the feed lost: the next scan must read everything; forgood: and every one after. */
void watchlose(struct watch *w, int forgood);
/* Whether the feed is lost for good (a watch limit reached, a mount inside the tree). */
int watchbroken(struct watch *w);
void watchclose(struct watch *w);

#endif
