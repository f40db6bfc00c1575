/* providers: which client speaks for a model (its provider, and its api for OpenAI's). */
#include "llm.h"

int llmwire(struct llm **l, const struct model *m, int offline, struct err *e)
{
	*l = NULL;
	switch (m->provider) {
	case PROV_OPENAI: return m->api == API_RESPONSES ? responsesopen(l, m, e) : openaiopen(l, m, e);
	case PROV_ANTHROPIC: return anthropicopen(l, m, e);
	case PROV_SCRIPTED: return scriptedopen(l, m, e);
	case PROV_AZURE: return azureopen(l, m, e);
	case PROV_BEDROCK: return bedrockopen(l, m, offline, e);
	case PROV_VERTEX: return vertexopen(l, m, e);
	default: return errc(e, ERR_INPUT, "model '%s': unknown provider", m->name);
	}
}
