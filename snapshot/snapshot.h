/* snapshot: workspace layers as deterministic tar.zst, incremental from a stat cache. */
#ifndef NS_SNAPSHOT_H
#define NS_SNAPSHOT_H

#include <locale.h>
#include <stdint.h>
#include "../manifest/manifest.h"
#include "layername.h"

struct snapinfo {
	char path[4096];    /* the layer file written */
	char sha256[65];    /* digest of the layer file */
	int64_t bytes;      /* size of the layer file */
	int full;           /* 1 for a full tar (the first layer of a chain; end without one before it) */
	int incomplete;     /* 1: the deadline came while it was written; the layer is a valid tar of what
	                       went in by then, and the next layer is cut against the last complete one */
	int feed;           /* 1 when the change feed said where to look, 0 when every entry was stat'ed */
	size_t added, changed, deleted;
	struct strv skipped; /* paths left out or cut short: sockets, fifos, devices, directories too deep
	                        or unreadable (what is below them), files that could not be read */
	struct strv why;     /* for each of skipped, the reason */
	struct strv setid;   /* files that became set-uid or set-gid since the last layer: the bits were
	                        removed from the workspace before the layer was cut */
	size_t entries;      /* entries in the workspace (files, directories, symlinks) */
	int64_t treebytes;   /* bytes of its regular files, each inode once */
	int64_t treeused;    /* bytes they take on disk (st_blocks): what snapshot.max_size limits */
};

struct snap;

/* Start snapshotting workspace into dir (the run's snapshots/ folder). */
int snapopen(struct snap **s, const char *workspace, const struct snapconf *c, const char *dir, struct err *e);
/* Let the kernel's change feed say which directories to read again for the next layers, not a
 * stat of every entry. Only when no process a step starts outlives the step (run/wspace.c says
 * for which backends). Returns 1 when the feed is on, 0 when this kernel or filesystem has none. */
int snapfeed(struct snap *s);
/* Stop taking the change feed's word for good: a process may change the workspace unseen. */
void snapdistrust(struct snap *s);
/* Write layer dir/NAME.tar.zst: full the first time, else only what changed since the last. */
int snaptake(struct snap *s, const char *name, struct snapinfo *info, struct err *e);
/* The same, stopping once nowms() passes deadline (0: none): then the layer holds what went in by
 * then and info->incomplete is set. */
int snaptakeby(struct snap *s, const char *name, int64_t deadline, struct snapinfo *info, struct err *e);
/* Write dir/NAME.tar.zst with what changed since the last layer (marked SNAPDELTA; full when there
 * was none), and leave the last layer the base of the next (for end). */
int snapend(struct snap *s, const char *name, struct snapinfo *info, struct err *e);
/* Write dir/NAME.tar.zst as a full tar of the workspace now. */
int snapfull(struct snap *s, const char *name, struct snapinfo *info, struct err *e);
/* Leave folder rel of the workspace (and all below it) out of the layers from the next one on. */
void snapexclude(struct snap *s, const char *rel);
void snapclose(struct snap *s);
void snapinfofree(struct snapinfo *i);

/* Restore the workspace as before step (layers 0001..step), or after the last (step 0: end), into
 * to: made if missing, emptied first when force, else it must be empty. rundir is a run directory
 * or a .tar.zst of one. Every layer must be in rundir/SHA256SUMS; its digest is checked as it is
 * read. Set-id bits are dropped. Nothing is written outside `to`: no entry through a symlink or a
 * hard link, and a layer whose whiteout or entry replaces a directory it already wrote into is
 * refused (code 4). The chain is expanded within the default bound of bound.h (100 times its
 * compressed bytes, at least 64 MiB of data). On failure `to` is left empty (removed when made
 * here). Errors: code 2 bad input (nothing written), 4 a layer not listed, not matching its
 * digest, not a valid layer or past the bound, 1 the rest. */
int snaprestore(const char *rundir, int step, const char *to, int force, struct err *e);
/* The same for a run with several workspaces: the chain of snapshots/<ws>/; ws NULL picks the one
 * holding step's layer, or the only one (a run with one workspace has its layers in snapshots/);
 * maxbytes bounds the data the chain may write (0: the default; see boundinit). */
int snaprestorews(const char *rundir, const char *ws, int step, const char *to, int force, int64_t maxbytes,
                  struct err *e);
/* The same for the run this process is sealing (a folder, ws "" or a chain's name): its layers,
 * written here and not yet in SHA256SUMS, are read without their digests checked. */
int snaprestoreown(const char *rundir, const char *ws, int step, const char *to, struct err *e);
/* What a chain's layers after step from, up to step to (0: its end), name: the paths a restore at
 * from and one at to must write to differ as whole restores do. NULL when only whole restores show
 * the change (a full layer or a hard link among those layers, over a million names, a layer that
 * does not read: the restore says why). */
struct snapset *snapsetof(const char *rundir, const char *ws, int from, int to, int64_t maxbytes);
void snapsetfree(struct snapset *s);
/* snaprestorews of the run folder rundir (own: snaprestoreown) writing only what set holds, lies
 * beneath a name of it that replaced a folder, or holds a name of it. 1 when a hard link there
 * reaches a file the set leaves out (restore whole instead; to is left empty). */
int snaprestoreset(const char *rundir, const char *ws, int step, const char *to, int own, int64_t maxbytes,
                   const struct snapset *set, struct err *e);
/* For tests and benches: apply a chain layer by layer, oldest first (1), as restores did before
 * they applied it in one pass, newest first (0, the default). */
void snaprestoreorder(int inorder);

/* Unpack a .tar.zst of a run directory into a new folder *tmp under $TMPDIR (removed again on
 * failure); *run gets the run inside it (tmp itself, or its only folder when that holds
 * SHA256SUMS). Only files and directories with names inside; at most maxbytes of file data (0:
 * 100 times the archive's size, at least 64 MiB) and maxbytes/4096 entries (at least 100 000),
 * each entry's declared size counted before any of it is written; each file hashed as it is
 * written and held to the run's SHA256SUMS as soon as both are in; at the end every file it lists
 * must have arrived. Errors: code 4 a file that SHA256SUMS does not list, whose digest differs, or
 * that it lists and the archive lacks, 2 the rest. */
int snapunpack(const char *file, int64_t maxbytes, char **tmp, char **run, struct err *e);
/* Remove a folder made here and all in it (never following a link, never leaving its device). */
void snapremove(const char *dir);

/* The layer format, for readers: a whiteout is an empty file ".wh.NAME" (remove NAME) or
 * ".wh..wh..opq" (empty the directory) carrying the pax attribute SCHILY.xattr.<this> with the
 * value "file" or "opaque"; without it, such a name is an ordinary file. */
#define SNAPWHITEOUT "nightshift.whiteout"
/* A layer whose kind is not the one its name implies (NNNN: full for the first of a chain, else
 * changes; end: full) opens with an empty file of this name carrying SNAPWHITEOUT "full" or
 * "delta"; readers take it as no entry. */
#define SNAPMARK ".wh..wh..layer"
/* The workspace folder itself is the directory entry "." of a layer (its mode and mtime): in every
 * full layer, and in a later one where either changed; restore gives them to the target last. */

struct archive_entry;
/* The kind of whiteout a layer entry is ("file" or "opaque"; for the SNAPMARK entry at the top,
 * "full" or "delta"), or NULL for an ordinary entry; base is the last component of its path. */
const char *snapwhiteout(struct archive_entry *en, const char *base);
/* Whether an entry is a whiteout or the SNAPMARK (snapwhiteout of its own last name). */
int snapspecial(struct archive_entry *en);
/* The chains of rundir's snapshots/: "" first when layers lie in snapshots/ itself (a run with one
 * workspace), then the name of each folder of snapshots/ (a workspace's chain), sorted by name. */
void snapchains(const char *rundir, struct strv *out);
/* Pin the calling thread's locale to C.UTF-8, as libarchive must see it for layers; returns what
 * snapunpin takes to put it back. */
locale_t snappin(void);
void snapunpin(locale_t old);

#endif
