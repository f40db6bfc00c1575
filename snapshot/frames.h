/* frames: a layer's index of its zstd frames, kept in the layer file's trailer (zst.h).
 *
 * A large layer is compressed in frames of about a MiB of tar each, every one starting at an entry
 * of the sorted part (after the mark and the whiteouts), so that a frame decodes alone into whole
 * entries. The index names, for each frame in file order, its compressed length and the path of
 * its first entry (the first frame's is ""): a restore of a few paths decodes only the frames that
 * can hold them. The index is a hint read from the layer's own bytes: what is decoded is checked
 * as any layer is, and the file's digest covers it. */
#ifndef NS_FRAMES_H
#define NS_FRAMES_H

#include <stdint.h>
#include "../util/util.h"

struct frame {
	int64_t at, len; /* its bytes in the file */
	char *first;     /* the path of its first entry */
};

struct frames {
	struct frame *v;
	size_t n;
};

/* Append to b the record of a frame of len compressed bytes whose first entry is first. */
void framesput(struct buf *b, int64_t len, const char *first);
/* Read an index (b, from a trailer that starts at byte end of the file) into f: 0, or -1 when it
 * is not one (ERR_VERIFY): frames that do not tile the file before the trailer, or first paths
 * out of their order or too long. */
int framesread(const struct buf *b, int64_t end, struct frames *f, struct err *e);
void framesfree(struct frames *f);

struct zstr;

/* A layer's entries held to its index as they are read, whole or by its frames: the entries after
 * its mark and whiteouts in rising order of path, each frame decoded starting at an entry of its
 * first path and holding none past the next frame's. So a layer that reads whole holds what a
 * restore of some of its frames finds there; one that breaks it is refused (ERR_VERIFY). */
struct framecheck {
	struct frames f;   /* the index (n 0: none, nothing is checked) */
	int64_t *at, *met; /* each frame's start in the file, and in the stream (zstrmarks) */
	size_t next;       /* the first frame not yet met */
	size_t cur;        /* the frame the last entry was in */
	char *last;        /* the last entry's path after the mark and whiteouts (NULL: none yet) */
};

/* Read z's index (before z is read) and have z note where its frames start. 0, or -1 when the
 * index is not one (ERR_VERIFY) or on a read error. */
int framecheckopen(struct framecheck *c, struct zstr *z, struct err *e);
struct archive;
struct archive_entry;
/* The entry a has just read from the layer (its header's place in the stream, its path); special
 * when it is the mark or a whiteout (snapspecial). */
int framecheckentry(struct framecheck *c, struct archive *a, struct archive_entry *en, int special, struct err *e);
/* After the last entry: every frame decoded held its first entry. */
int framecheckend(struct framecheck *c, struct err *e);
void framecheckfree(struct framecheck *c);

#endif
