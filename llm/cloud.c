/* cloud: request rewrites shared by azure.c, bedrock.c and vertex.c. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cloud.h"

void cloudunheader(struct strv *headers, const char *const *names)
{
	size_t k = 0;
	for (size_t i = 0; i < headers->n; i++) {
		const char *h = headers->v[i];
		size_t n = strcspn(h, ":");
		int drop = 0;
		for (const char *const *p = names; *p && !drop; p++)
			drop = strlen(*p) == n && strncasecmp(h, *p, n) == 0;
		if (drop)
			free(headers->v[i]);
		else
			headers->v[k++] = headers->v[i];
	}
	headers->n = k;
	if (headers->v)
		headers->v[k] = NULL;
}

void cloudanthropic(cJSON *body, const char *version)
{
	cJSON_DeleteItemFromObjectCaseSensitive(body, "model");
	cJSON_DeleteItemFromObjectCaseSensitive(body, "anthropic_version");
	cJSON_AddStringToObject(body, "anthropic_version", version);
}
