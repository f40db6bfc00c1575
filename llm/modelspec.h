/* modelspec: `--model NAME=SPEC`, swapping a manifest's model from the command line.
 *
 *   SPEC = scripted:FILE                       replies from FILE (a YAML list, or {replies: [...]})
 *        | openai:MODEL[@URL][,OPTION]...      OpenAI, or a compatible server at URL (http:// or https://)
 *        | anthropic:MODEL[@URL][,OPTION]...   Anthropic, or a proxy at URL
 *   OPTION = key=ENV | timeout=DURATION | retries=N | max_output_tokens=N | temperature=X
 *
 * The API key comes from key=ENV, else from the model's api_key_env when provider and URL are
 * unchanged, else (no URL only) from OPENAI_API_KEY / ANTHROPIC_API_KEY; a URL given without key=
 * gets no key, so a key never travels to a server nobody named it for. timeout, retries and
 * max_output_tokens carry over from the replaced model unless set; temperature only when the
 * provider stays the same. */
#ifndef NS_MODELSPEC_H
#define NS_MODELSPEC_H

#include "../manifest/manifest.h"

/* Replace models[NAME] by what "NAME=SPEC" describes; an unknown NAME is an error (code 2). */
int modelspec(struct manifest *m, const char *arg, struct err *e);

#endif
