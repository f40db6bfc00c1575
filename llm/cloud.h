/* cloud: helpers shared by the providers that wrap another's wire format (azure, bedrock, vertex). */
#ifndef NS_CLOUD_H
#define NS_CLOUD_H

#include "llm.h"

/* Drop the headers whose name (case-insensitive) is one of names (NULL-terminated). */
void cloudunheader(struct strv *headers, const char *const *names);
/* An Anthropic messages body for a cloud: without "model", with anthropic_version set to v. */
void cloudanthropic(cJSON *body, const char *version);

#endif
