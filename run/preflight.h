/* preflight: can this run start at all, checked before anything is spent or made. */
#ifndef NS_PREFLIGHT_H
#define NS_PREFLIGHT_H

#include "../manifest/manifest.h"

/* Check what the selected jobs (sel[i] set for m->jobs[i]) need before the first model call: each
 * model they and their delegates use opens (its API key is set, its own settings hold) and its
 * base_url's host resolves (unless a proxy is set); each sandbox backend they use is ready (the
 * Docker engine answers and has the image); with owners, the steps' uid could write each job's
 * workspace and mode: rw mounts (a replay makes its own workspace). models = 0 leaves the models
 * out (replay answers from the record). Every problem found is said, one per line; the error has
 * code 2. */
int preflight(const struct manifest *m, const int *sel, int models, int owners, struct err *e);

/* For validate: a warning for each model the jobs (and their delegates) use whose API key llmopen
 * would refuse, "FILE:LINE:COL: warning: model 'M': environment variable V is not set ...", at
 * the api_key_env key (or the model when the key is not written). */
void preflightkeys(const struct manifest *m, struct strv *warnings);

#endif
