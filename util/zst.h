/* zst: zstd streams to and from files, with the SHA-256 of the compressed bytes as they pass. */
#ifndef NS_ZST_H
#define NS_ZST_H

#include <stdint.h>
#include <sys/types.h>
#include "util.h"

struct zstw;
struct zstr;

/* Flags of zstwopen. */
enum {
	ZSTW_APPEND = 1, /* add frames after what the file holds (a zstd file may hold many frames) */
	ZSTW_PLACE = 2,  /* write a new temporary beside path (tmpcreate), renamed to path by zstwclose */
};

/* Create path (mode 0644) as a zstd stream at level with threads worker threads (0 = compress in
 * the calling thread; with workers, the stream is frames of twice zstframelen(level) bytes, or
 * fewer where zstwframe ends one, each compressed by a worker alone); ZSTW_APPEND keeps what the file holds and adds
 * new frames after it; ZSTW_PLACE never opens what is at path (a link is replaced, not followed)
 * and the file appears there whole or not at all. Without either, a link at path is refused. */
int zstwopen(struct zstw **w, const char *path, int level, int threads, int flags, struct err *e);
/* A compressor kept for one stream after another, so that its worker threads are made once. */
struct zstc;
struct zstc *zstcnew(void);
void zstcfree(struct zstc *c);
/* zstwopen with c's compressor (the same bytes come out): c must outlive the writer, and serves one
 * writer at a time. */
int zstwopenc(struct zstw **w, const char *path, int level, int threads, int flags, struct zstc *c,
              struct err *e);
/* Compress n bytes into the stream. */
int zstwrite(struct zstw *w, const void *p, size_t n, struct err *e);
/* End the frame (when it holds anything) so the next bytes start a new one that decodes alone:
 * *k gets the number of frames ended so far, the new one's place among them. */
int zstwframe(struct zstw *w, int64_t *k, struct err *e);
/* The compressed length of each frame ended so far, in order, once all are written (*n of them;
 * frames a writer with workers cut itself included); NULL with *n 0 when none, or on error. */
const int64_t *zstwsizes(struct zstw *w, size_t *n, struct err *e);
/* The bytes a frame should hold at level (a writer with workers cuts at twice that by itself):
 * twice its window (1 to 8 MiB), so that starting afresh costs about 2%. */
int64_t zstframelen(int level);
/* End the frame and put the n bytes of p last in the file, in a skippable frame of ours (a trailer:
 * `zstd -d` passes over it; zstrtrailer reads it back). Nothing may be written after it. */
int zstwtrailer(struct zstw *w, const void *p, size_t n, struct err *e);
/* Write out everything compressed so far: endframe ends the frame so the file is a complete zstd
 * stream (`zstd -dc` reads it whole); else a block flush, readable up to here by a tolerant reader.
 * sync adds an fsync. */
int zstwflush(struct zstw *w, int endframe, int sync, struct err *e);
/* End the frame and close (ZSTW_PLACE: and rename into place); sha256 (may be NULL) gets the digest
 * of the bytes this writer wrote and bytes (may be NULL) their count. w is freed even on error. */
int zstwclose(struct zstw *w, char sha256[65], int64_t *bytes, struct err *e);
/* Free a writer without ending its stream (an error path; ZSTW_PLACE: its temporary is removed);
 * NULL is fine. */
void zstwfree(struct zstw *w);
/* Worker threads zstd will really use for a wish of n (0 when libzstd was built without threads). */
int zstthreads(int n);

/* A zstd compressor into memory, for a writer that places the bytes itself (the event log ends its
 * frame after every line and overwrites that end with the next). No frame checksum. */
struct zstmem;
/* A compressor at level. */
struct zstmem *zstmemnew(int level);
/* Compress n bytes of p and flush them to a block boundary, appending the output to out. */
int zstmemflush(struct zstmem *m, const void *p, size_t n, struct buf *out, struct err *e);
/* Append a complete, empty zstd frame to out. */
int zstmemempty(struct buf *out, struct err *e);
/* Free a compressor; NULL is fine. */
void zstmemfree(struct zstmem *m);

/* Flags of zstropen. */
enum {
	ZSTR_CUT = 1, /* a stream cut short (a file that ends inside a frame, or holds no byte) ends
	               * without an error, as a log a crash left; zstrtruncated says whether it was */
	ZSTR_NOFOLLOW = 2, /* path's last name is not followed when it is a symbolic link (a run's file) */
	ZSTR_NOSKIP = 4,   /* a skippable frame is corrupt data, but for one trailer (zstwtrailer) of at
	                    * most ZSTTRAILMAX bytes that ends the file: one of 4 GiB of a sparse file's
	                    * holes would be read through with no byte out (attack12) */
	ZSTR_DIGESTED = 8, /* the caller holds the SHA-256 of the bytes read (zstrdigest) to a digest it
	                    * trusts before it keeps anything: zstd's frame checksums, which catch
	                    * nothing that digest does not, are not verified (15 % of decoding) */
};

/* Open path to read the zstd stream it holds (any number of frames); a fifo or a device is refused
 * (ERR_VERIFY), never waited on. */
int zstropen(struct zstr **r, const char *path, int flags, struct err *e);
/* The same from an open descriptor, which the reader owns from then on (closed on failure too);
 * path names it in messages. */
int zstrfdopen(struct zstr **r, int fd, const char *path, int flags, struct err *e);
enum { ZSTTRAILMAX = 8 << 20 };
/* The trailer zstwtrailer put at the file's end into out (emptied first), and where its frame
 * starts into *where (the file's size when none): 1 when there is one, 0 when there is none, -1 when what ends the file says it is one but is not (ERR_VERIFY) or on a
 * read error. Reads with pread: the stream's position does not move. */
int zstrtrailer(struct zstr *r, struct buf *out, int64_t *where, struct err *e);
/* Decode only the frames within the byte ranges of the file in at[0..n) ([start, end), sorted,
 * apart); the bytes around them are read and hashed, not decoded (a file with holes is decoded
 * whole). Before the first zstread. A range that does not hold whole frames is corrupt data at
 * its end. */
void zstrpick(struct zstr *r, const int64_t (*at)[2], size_t n);
/* Note where in the decompressed stream each frame starting at the file's bytes at[0..n) (sorted)
 * begins, into met[i] as it is met (stored atomically: another thread may read them): the count
 * of bytes zstread handed out before it; ZSTSKIPPED when zstrpick passed over it, ZSTINSIDE when no
 * frame starts there, ZSTNOTYET until then. at and met must outlive the reader's reads. */
enum { ZSTNOTYET = -1, ZSTSKIPPED = -2, ZSTINSIDE = -3 };
void zstrmarks(struct zstr *r, const int64_t *at, int64_t *met, size_t n);
/* Read up to n decompressed bytes into p: the count, 0 at the end of the stream, -1 on error
 * (corrupt data, or, without ZSTR_CUT, a file that ends inside a frame or is empty). */
ssize_t zstread(struct zstr *r, void *p, size_t n, struct err *e);
/* After zstread returned 0: whether the stream ended inside a frame (only with ZSTR_CUT). */
int zstrtruncated(const struct zstr *r);
/* After zstread returned 0: the digest of every compressed byte read, and their count. */
void zstrdigest(struct zstr *r, char sha256[65], int64_t *bytes);
/* Close a reader; NULL is fine. */
void zstrfree(struct zstr *r);

#endif
