/* catalog: the built-in table of model limits. Figures from the providers' model pages (OpenAI
 * "Models", Anthropic "Models overview"); a manifest overrides them with context_window and
 * max_output_tokens. */
#include <ctype.h>
#include <string.h>
#include "catalog.h"

struct entry {
	const char *prefix;
	int64_t context, limit;
	int reasoning;
};

static const struct entry table[] = {
	/* OpenAI */
	{"gpt-3.5-turbo", 16385, 4096, 0},
	{"gpt-4", 8192, 8192, 0},
	{"gpt-4-32k", 32768, 8192, 0},
	{"gpt-4-turbo", 128000, 4096, 0},
	{"gpt-4-1106", 128000, 4096, 0},
	{"gpt-4-0125", 128000, 4096, 0},
	{"gpt-4o", 128000, 16384, 0},
	{"chatgpt-4o", 128000, 16384, 0},
	{"gpt-4.1", 1047576, 32768, 0},
	{"gpt-4.5", 128000, 16384, 0},
	{"gpt-5", 400000, 128000, 1},
	{"gpt-5-chat", 128000, 16384, 0},
	{"o1", 200000, 100000, 1},
	{"o1-mini", 128000, 65536, 1},
	{"o1-preview", 128000, 32768, 1},
	{"o3", 200000, 100000, 1},
	{"o3-mini", 200000, 100000, 1},
	{"o4-mini", 200000, 100000, 1},
	/* Anthropic */
	{"claude-2", 100000, 4096, 0},
	{"claude-instant", 100000, 4096, 0},
	{"claude-3-haiku", 200000, 4096, 0},
	{"claude-3-sonnet", 200000, 4096, 0},
	{"claude-3-opus", 200000, 4096, 0},
	{"claude-3-5-sonnet", 200000, 8192, 0},
	{"claude-3-5-haiku", 200000, 8192, 0},
	{"claude-3-7-sonnet", 200000, 64000, 0},
	{"claude-sonnet-4", 200000, 64000, 0},
	{"claude-opus-4", 200000, 32000, 0},
	{"claude-opus-4-5", 200000, 64000, 0},
	{"claude-haiku-4", 200000, 64000, 0},
};

/* A prefix matches at the start of name and ends there or before a '-', '.', ':' or '@'
 * ("o1" matches "o1-2024-12-17", not "o100"). */
static int matches(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	for (size_t i = 0; i < n; i++)
		if (tolower((unsigned char)name[i]) != prefix[i])
			return 0;
	return name[n] == 0 || name[n] == '-' || name[n] == '.' || name[n] == ':' || name[n] == '@';
}

void catalogfind(const char *name, struct modelinfo *mi)
{
	memset(mi, 0, sizeof *mi);
	mi->context = CATALOG_CONTEXT;
	if (!name)
		return;
	const char *slash = strrchr(name, '/');
	if (slash)
		name = slash + 1;
	const char *a = strstr(name, "anthropic.");
	if (a)
		name = a + strlen("anthropic.");
	size_t best = 0;
	for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
		size_t n = strlen(table[i].prefix);
		if (n > best && matches(name, table[i].prefix)) {
			best = n;
			mi->context = table[i].context;
			mi->limit = table[i].limit;
			mi->reasoning = table[i].reasoning;
			mi->known = 1;
		}
	}
}

int64_t modelcontext(const struct model *m)
{
	struct modelinfo mi;
	if (m->context_window > 0)
		return m->context_window;
	catalogfind(m->model, &mi);
	return mi.context;
}

int modelreasoning(const struct model *m)
{
	struct modelinfo mi;
	catalogfind(m->model, &mi);
	return m->provider == PROV_OPENAI && (mi.reasoning || m->reasoning_effort);
}

int64_t modeloutcap(const struct model *m)
{
	struct modelinfo mi;
	catalogfind(m->model, &mi);
	int64_t cap;
	if (m->max_output_tokens > 0)
		cap = m->max_output_tokens;
	else if (!mi.known)
		cap = m->thinking > 0 ? m->thinking + CATALOG_OUTCAP : CATALOG_OUTCAP;
	else
		cap = m->thinking > 0 ? m->thinking + 4096 : mi.reasoning ? 32768 : 16384;
	if (mi.limit > 0 && cap > mi.limit)
		cap = mi.limit;
	return cap;
}
