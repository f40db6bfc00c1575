/* scan: one walk of a workspace into a path-sorted list of entries with the stat fields that
 * detect change (size, mtime, ctime, inode, mode), never following a symlink. */
#ifndef NS_SCAN_H
#define NS_SCAN_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "../util/util.h"
#include "../util/beneath.h"
#include "watch.h"

/* A change within this of a scan's start may leave the times it saw unchanged ("racy"): the
 * scan cannot tell it by the times alone. */
#define RACYFINE (50 * 1000000LL)     /* ns: above a coarse kernel tick on a fine-grained filesystem */
#define RACYCOARSE (2 * 1000000000LL) /* ns: whole-second (or FAT's two-second) timestamps */

struct sent {
	const char *path; /* relative to the root, no "./"; points into the scan's blocks */
	uint32_t mode;    /* st_mode: type and permission bits */
	uint32_t nlink;
	int64_t size;
	int64_t blocks;   /* st_blocks: 512-byte units the file takes on disk */
	int64_t mtime, ctime; /* nanoseconds since the epoch */
	uint64_t ino, dev;
	int32_t link;     /* regular files with nlink > 1: index of the first path of the same inode
	                     (its own index when it is the first); -1 otherwise */
	int32_t wd;       /* directories: the change feed's watch on it, or -1 */
	uint8_t hashed;   /* hash holds the SHA-256 of the content last put in a layer */
	uint8_t unread;   /* a directory whose names this scan did not read whole (gone, unreadable, or
	                     not the inode its entry was stat'ed as when opened): never reused */
	uint8_t hash[32]; /* file data, or the link target of a symlink */
};

struct scan {
	struct sent *v;   /* sorted by path bytes */
	size_t n, cap;
	char **blocks;    /* the path bytes */
	size_t nblocks;
	int64_t start;    /* CLOCK_REALTIME in ns when the walk began */
	int64_t bytes;    /* bytes of regular files, each inode once */
	int64_t used;     /* bytes they take on disk (st_blocks), each inode once: a sparse file's holes
	                     count for nothing */
	int finetime;     /* some timestamp had a fraction of a second (a fine-grained filesystem) */
	int rootwd;       /* the change feed's watch on the root, or -1 */
	size_t same;      /* scanwith: directories whose names were taken from the scan before */
	struct strv skipped; /* entries left out, each a kind (SKIP*) then its path, sorted by path */
};

/* Why an entry was left out: the first byte of a skipped string. A directory that is too deep or
 * cannot be read is itself an entry; what is below it is not. */
enum { SKIPSPECIAL = 's' /* socket, fifo or device */, SKIPDEEP = 'd', SKIPUNREAD = 'u',
       SKIPLONG = 'l' /* a path of PATH_MAX bytes or more, which restore refuses: no entry at all */ };

struct scanopt {
	const struct strv *exclude; /* path globs as util/glob.h's globpath ("**" spans zero or more
	                               segments); a matching directory is left out with all under it */
	int threads;                /* threads walking the tree (0: one per CPU up to 4 for a whole
	                               tree, one for a walk again of a few folders) */
	int haveskip;               /* leave out the directory with this device and inode (the run's own) */
	dev_t skipdev;
	ino_t skipino;
	struct watch *watch;        /* the change feed: every directory read is watched (may be NULL) */
	int vouchonly;              /* with watch: trust its watches, add none (a scan that is no base for
	                               the next: a watch added now would vouch for what it never saw) */
	int gitignore;              /* leave out what git ignores: each folder's .gitignore is read as the
	                               walk enters it, .git/info/exclude first (util/gitignore.h); every
	                               scan then reads the whole tree (scanagain does as scanrun) */
	int64_t max_entries;        /* entries a walk reads before it fails (0: no limit): each costs the
	                               runner memory, whatever blocks it takes */
};

/* The least room an entry counts for in a scan's used: an inode and its name take room even when
 * a file takes no block, and a scan holds each entry in memory. */
enum { SCANENTRYROOM = 4096 };

/* Walk the tree under rootfd into s (zeroed or freed before), directories read in parallel where
 * o->threads allows. */
int scanrun(struct scan *s, int rootfd, const struct scanopt *o, struct err *e);
/* Walk the whole tree as scanrun does, but take the names of a directory unchanged since prev
 * (the last scan with the same options: same inode and times, changed before prev began) from
 * prev instead of reading it, as git's untracked cache does; every entry is still stat'ed. Reads
 * every directory with a change feed, gitignore, or a filesystem not known to keep directory
 * times. */
int scanwith(struct scan *s, int rootfd, const struct scanopt *o, const struct scan *prev, struct err *e);
/* Scan again from prev, the last scan with the same options, reading only the directories in
 * dirty (sorted; from the change feed) and any directory below them that the feed does not vouch
 * for; the result is what scanrun would give. */
int scanagain(struct scan *s, int rootfd, const struct scanopt *o, const struct scan *prev, const struct strv *dirty,
              struct err *e);
/* Whether path lies below a directory that s could not read (too deep or unreadable): what the
 * scan cannot tell about it is unknown, not gone. */
int scanunknown(const struct scan *s, const char *path);
/* A time as nanoseconds since 1970, held at the ends of an int64 (1677 to 2262) past them: a step
 * may set any time its filesystem keeps (ext4 to 2446, tmpfs any), which overflowed it. INT64_MIN
 * itself is never given (snapshot.c marks an entry to be read again with it). */
int64_t scanns(struct timespec t);
/* The words for a skipped kind. */
const char *scanwhy(int kind);
/* Where path p sorts by bytes against the paths under directory dir[0..len) ("dir/..."): before
 * them (< 0), among them (0), or after them (> 0). */
int scandircmp(const char *p, const char *dir, size_t len);
/* The index of the entry for path[0..len) in s, or -1. */
ssize_t scanfind(const struct scan *s, const char *path, size_t len);
/* Free what s holds and zero it. */
void scanfree(struct scan *s);


#endif
