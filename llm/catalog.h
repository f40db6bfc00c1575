/* catalog: what nightshift knows of common models without being told: the context window, the most
 * output one reply may have, and whether an OpenAI model is a reasoning model. A manifest's
 * context_window and max_output_tokens come first; a model not in the table gets a 128000-token
 * window and a 4096-token output cap (the limit of the oldest models still served). */
#ifndef NS_CATALOG_H
#define NS_CATALOG_H

#include <stdint.h>
#include "../manifest/manifest.h"

struct modelinfo {
	int64_t context; /* the context window in tokens */
	int64_t limit;   /* the most output tokens a reply may have; 0 when unknown */
	int reasoning;   /* an OpenAI reasoning model (o-series, gpt-5): max_completion_tokens, reasoning_effort */
	int known;       /* the name is in the table */
};

enum { CATALOG_CONTEXT = 128000, CATALOG_OUTCAP = 4096 };

/* What the table says of a model name (the part after the last '/', and after "anthropic." as
 * cloud platforms spell it); the longest matching prefix wins. */
void catalogfind(const char *name, struct modelinfo *mi);
/* The model's context window: its context_window, else the table's, else 128000. */
int64_t modelcontext(const struct model *m);
/* The output cap every request to the model carries: max_output_tokens when set, else a default
 * (16384, or 32768 for reasoning models, or the thinking budget plus 4096), never above the model's
 * known limit; 4096 for a model the table does not know and the manifest does not size. */
int64_t modeloutcap(const struct model *m);
/* Whether an OpenAI model is a reasoning model (by the table, or reasoning_effort being set). */
int modelreasoning(const struct model *m);

#endif
