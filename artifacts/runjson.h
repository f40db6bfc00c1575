/* runjson: reading a finished run back: run.json, output.json, and the names it may hold. */
#ifndef NS_RUNJSON_H
#define NS_RUNJSON_H

#include <cjson/cJSON.h>
#include "../util/util.h"
#include "../util/secrets.h"

/* Parse the JSON file at path; NULL with e filled when it is missing or not JSON. */
cJSON *jsonread(const char *path, struct err *e);
/* RUN/run.json of the run directory dir, which must be an object with a "jobs" object. */
cJSON *runjsonread(const char *dir, struct err *e);
/* True when s can name a job (nested ones too, "job.delegate-3") or a run inside a run directory:
 * 1 to 255 of [A-Za-z0-9_.-], not starting with '.', no "..". */
int runnameok(const char *s);
/* Write j to path as indented JSON and a newline, atomically, every secret of sec (may be NULL)
 * masked. */
int jsonwrite(const char *path, const cJSON *j, const struct secrets *sec, struct err *e);
/* The manifest copy a run holds (manifest/FILE, FILE from run.json) as JSON, or NULL when it is
 * missing or unreadable. */
cJSON *runmanifestcopy(const char *dir, const cJSON *run);
/* Write dir/run.json from run, first sealing its content into the run's own event log,
 * dir/events.jsonl.zst: one event of type "run" holding every field of run, whose digest and count
 * go into run as events_head and events. audit --verify holds run.json to that line. */
int runjsonseal(const char *dir, cJSON *run, const struct secrets *sec, struct err *e);
/* The string field key of obj, or def. */
const char *jsonstr(const cJSON *obj, const char *key, const char *def);

/* Add every number of from into the same field of into (made when missing), objects recursively:
 * totals of usage, cost and the like, whatever fields they have. */
void jsonaddnums(cJSON *into, const cJSON *from);

#endif
