/* bound: how much expanding a run archive or a chain of snapshot layers may produce. */
#ifndef NS_BOUND_H
#define NS_BOUND_H

#include <stdint.h>
#include "../util/util.h"

struct archive_entry;
struct stat;

/* Counts against limits, across everything one command expands (a run archive, or the chain of
 * layers one restore applies). */
struct bound {
	const char *what;              /* what grows, for messages: "the unpacked run", "the restore" */
	int64_t maxbytes, bytes;       /* bytes of file data written (a sparse file's data, not its holes) */
	int64_t maxsize, size;         /* bytes of file sizes, holes included */
	long long maxentries, entries; /* entries made (a restore's whiteouts count only in stream) */
	int64_t maxstream, stream;     /* decompressed bytes read: data, headers, padding, whatever follows */
};

/* Limits from max bytes of data (0: bounddefault(packed)): max/4096 entries (at least minentries),
 * 1024 times max of file sizes (holes included), and max plus 4 KiB an entry of decompressed
 * bytes. */
void boundinit(struct bound *b, const char *what, int64_t max, int64_t packed, long long minentries);
/* The least entry bound of what is written to disk (a run archive unpacked, a chain restored:
 * each entry a file made, some 0.1 ms each) and of what is only read into memory (diff and report
 * of a chain: a table of paths, where a workspace of many tiny files, which pack to a few bytes
 * each, is no cost). */
enum { BOUND_WRITEENTRIES = 100000, BOUND_READENTRIES = 1000000 };
/* The compressed bytes a file brings to a default bound (packed): those it takes on disk, its
 * size but no more than its blocks; 0 when it is not a regular file (refused when read). */
int64_t boundondisk(const struct stat *st);
/* The bytes of data entry en carries: its sparse map's data, or its size (0 when it is no file). */
int64_t bounddata(struct archive_entry *en);
/* Count an entry of data bytes and size bytes (holes included) at path before any of it is
 * written: -1 with e saying which bound it would pass (code 4). */
int boundentry(struct bound *b, const char *path, int64_t data, int64_t size, struct err *e);
/* Count n more decompressed bytes read: -1 with e (code 4) once past the bound. */
int boundstream(struct bound *b, int64_t n, struct err *e);

#endif
