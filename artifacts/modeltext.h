/* modeltext: what a model said, from a recorded response of any provider. */
#ifndef NS_MODELTEXT_H
#define NS_MODELTEXT_H

#include <cjson/cJSON.h>

/* The text of a recorded model response as a new string ("" when it said nothing): the scripted
 * model's {text}, a chat completion's message content or refusal, an Anthropic message's text
 * blocks, a Responses API output's message text. */
char *modeltext(const cJSON *response);

#endif
