/* events: a job's event log, JSON lines hash-chained and zstd-compressed, flushed per line. */
#ifndef NS_EVENTS_H
#define NS_EVENTS_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "../util/util.h"
#include "../util/secrets.h"

/* printed (j printed, formatted or not) with every secret of sec masked, still JSON: the text
 * masked as text (every escaped form), or where that would break its syntax (a mask ending inside
 * an escape), each string of j masked apart and printed again; NULL when nothing matched. */
char *jsonmask(const struct secrets *sec, const cJSON *j, const char *printed, int formatted);

/* The longest event line, without its newline: evadd refuses to write a longer one, evrnext to
 * read one (a record's bytes are a stranger's: a reader keeps at most this much of a line). */
#define EVLINEMAX ((size_t)64 << 20)

struct evlog;

/* Create path and start a log; secrets (may be NULL) are masked in every line. */
int evopen(struct evlog **l, const char *path, const struct secrets *sec, struct err *e);
/* Append an event of type with the fields of obj (consumed); adds seq, time, type, prev. A line
 * longer than EVLINEMAX is not written: an error, the log stays as it was. */
int evadd(struct evlog *l, const char *type, cJSON *obj, struct err *e);
/* Hand every line written from now on (masked, without its newline) to fn with ctx, after it is
 * on disk; fn NULL stops it. For following a run as it happens (run --events). */
void evtap(struct evlog *l, void (*fn)(void *ctx, const char *line), void *ctx);
/* The digest of the last line written (64 zeros before the first). */
const char *evhead(const struct evlog *l);
/* Number of events written. */
int64_t evcount(const struct evlog *l);
/* Fsync and close (the frame on disk is ended after every line); l is freed even on error. */
int evclose(struct evlog *l, struct err *e);

/* Read a log line by line; tolerates a frame cut short by a crash (reports it via truncated). */
struct evreader;
int evropen(struct evreader **r, const char *path, struct err *e);
/* Next line (without newline) into *line, valid until the next call; 1, 0 at the end, -1 on error
 * (corrupt data, or a line longer than EVLINEMAX: ERR_VERIFY naming the file; every later call
 * fails the same way). */
int evrnext(struct evreader *r, const char **line, size_t *len, struct err *e);
/* Whether the file ended inside a zstd frame or mid-line. */
int evrtruncated(const struct evreader *r);
void evrclose(struct evreader *r);
/* The leading fields of a line as evadd writes it, {"seq":N,"time":"..","type":"T","prev":"H",..},
 * read without a full parse; 0 when the line does not start that way (parse it instead). */
int evfields(const char *line, size_t len, long *seq, char type[32], char prev[65]);

#endif
