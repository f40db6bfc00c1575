/* window: an error answer that says the request did not fit the model's context window, and the
 * window it names. The providers' words:
 *   OpenAI, vLLM, Groq: code context_length_exceeded, "This model's maximum context length is
 *     128000 tokens. However, your messages resulted in 130001 tokens", or "Input tokens exceed the
 *     configured limit of 272000 tokens"; the Responses API: "Your input exceeds the context
 *     window of this model" (no number)
 *   Anthropic, Bedrock: "prompt is too long: 208310 tokens > 200000 maximum", "input length and
 *     `max_tokens` exceed context limit: 188240 + 21333 > 200000"
 *   llama.cpp: type exceed_context_size_error, "the request exceeds the available context size",
 *     with n_ctx; LM Studio: "the model is loaded with context length of only 4096 tokens";
 *   Gemini's compatible endpoint: "The input token count (N) exceeds the maximum number of tokens
 *     allowed (M)". */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "llm.h"

/* The first number after the phrase in msg (case-insensitive), skipping '(' and spaces; 0 when none. */
static int64_t after(const char *msg, const char *phrase)
{
	size_t n = strlen(phrase);
	for (const char *p = msg; *p; p++) {
		if (strncasecmp(p, phrase, n) != 0)
			continue;
		const char *q = p + n;
		while (*q == ' ' || *q == '(' || *q == ':')
			q++;
		if (isdigit((unsigned char)*q))
			return strtoll(q, NULL, 10);
	}
	return 0;
}

static int has(const char *msg, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = msg; *p; p++)
		if (strncasecmp(p, word, n) == 0)
			return 1;
	return 0;
}

int64_t llmwindowerror(int status, const cJSON *body)
{
	if (status < 400 || status >= 500 || !body)
		return 0;
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(body, "error");
	const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, "message"));
	if (!msg)
		msg = cJSON_GetStringValue(err);
	if (!msg)
		msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "message")); /* Bedrock */
	const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, "code"));
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, "type"));
	if (!msg)
		msg = "";
	static const char *const words[] = {"maximum context length", "context length exceeded", "context_length_exceeded",
	                                    "context window", "prompt is too long", "exceed context limit",
	                                    "exceeds the available context size", "input is too long",
	                                    "context length of only", "maximum number of tokens allowed",
	                                    "exceed the configured limit", "exceeds the context", NULL};
	int window = (code && strcmp(code, "context_length_exceeded") == 0) ||
	             (type && strcmp(type, "exceed_context_size_error") == 0);
	for (size_t i = 0; !window && words[i]; i++)
		window = has(msg, words[i]);
	if (!window)
		return 0;
	const cJSON *nctx = cJSON_GetObjectItemCaseSensitive(err, "n_ctx");
	int64_t n = cJSON_IsNumber(nctx) ? (int64_t)nctx->valuedouble : 0;
	static const char *const before[] = {"maximum context length is", "context length of only", "limit of",
	                                     "maximum number of tokens allowed", "context window of", "context window is",
	                                     "context size is", NULL};
	for (size_t i = 0; !n && before[i]; i++)
		n = after(msg, before[i]);
	if (!n) {
		/* "N tokens > M maximum", "a + b > M": the number after the last '>' */
		const char *gt = strrchr(msg, '>');
		if (gt)
			n = after(gt, ">");
	}
	return n >= 256 && n <= 100000000 ? n : -1;
}
