/* agentfile: Claude Code's subagent format, front matter `name`, `description`, `tools` (a comma
 * list of its tool names), `model`; the body is the system prompt, as in ours. */
#include <stdlib.h>
#include <string.h>
#include "agentfile.h"

static const char *const agentkeys[] = {"name", "description", "tools", "model", "color", NULL};

/* Claude Code's tools and ours. Grep runs as a shell command (under the shell rules); Glob and
 * LS list a folder. */
static const struct {
	const char *theirs;
	unsigned ours;
} map[] = {
	{"Read", TOOL_READ_FILE},   {"Write", TOOL_WRITE_FILE}, {"Edit", TOOL_EDIT_FILE},
	{"MultiEdit", TOOL_EDIT_FILE}, {"Bash", TOOL_SHELL},    {"Grep", TOOL_SHELL},
	{"Glob", TOOL_LIST_DIR},    {"LS", TOOL_LIST_DIR},
};

int agentfileis(struct ydoc *y, yaml_node_t *root)
{
	return root && root->type == YAML_MAPPING_NODE && yget(y, root, "name") != NULL;
}

/* The position of the byte at off in a one-line scalar. */
static struct pos at(struct ydoc *y, yaml_node_t *n, size_t off)
{
	struct pos p = ypos(y, n);
	int quoted = n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	             n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	p.col += (int)off + quoted;
	return p;
}

static int tools(struct ydoc *y, yaml_node_t *n, struct worker *w)
{
	if (n->type != YAML_SCALAR_NODE)
		return yfail(y, n, "tools of a Claude Code agent file is one line of names: tools: Read, Grep, Bash");
	const char *s = (const char *)n->data.scalar.value;
	int bad = 0;
	w->tools = 0;
	strvfree(&w->mcptools);
	for (size_t i = 0; s[i];) {
		while (s[i] == ' ' || s[i] == ',' || s[i] == '\t')
			i++;
		size_t j = i;
		while (s[j] && s[j] != ',')
			j++;
		size_t k = j;
		while (k > i && (s[k - 1] == ' ' || s[k - 1] == '\t'))
			k--;
		if (k > i) {
			char *name = xstrndup(s + i, k - i);
			unsigned bit = 0;
			for (size_t t = 0; t < sizeof map / sizeof *map; t++)
				if (strcmp(map[t].theirs, name) == 0)
					bit = map[t].ours;
			if (bit) {
				w->tools |= bit;
			} else if (strncmp(name, "mcp__", 5) == 0) {
				strvadd(&w->mcptools, name);
			} else {
				struct pos p = at(y, n, i);
				errc(y->e, ERR_INPUT, "%s:%d:%d: Claude Code tool '%s' has no nightshift counterpart (known: Read, "
				              "Write, Edit, MultiEdit, Bash, Grep, Glob, LS, and mcp__SERVER__TOOL)",
				     p.file, p.line, p.col, name);
				if (y->errs)
					ynote(y);
				bad = -1;
			}
			free(name);
		}
		i = j;
	}
	return bad;
}

int agentfileapply(const struct manifest *m, struct ydoc *y, yaml_node_t *root, struct worker *w)
{
	struct ypair p;
	int bad = ymap(y, root, "a Claude Code agent file", agentkeys);
	for (size_t i = 0; yeach(y, root, i, &p); i++) {
		int rc = 0;
		if (strcmp(p.key, "description") == 0) {
			free(w->description);
			w->description = NULL;
			rc = ystr(y, p.val, &w->description);
		} else if (strcmp(p.key, "tools") == 0) {
			rc = tools(y, p.val, w);
		} else if (strcmp(p.key, "model") == 0) {
			char *model = NULL;
			rc = ystr(y, p.val, &model);
			if (rc == 0 && strcmp(model, "inherit") != 0) {
				int known = 0; /* the models, read here: manifest.c calls this file, not the other way */
				for (size_t k = 0; k < m->nmodels; k++)
					known |= m->models[k].name && strcmp(m->models[k].name, model) == 0;
				if (!known) {
					rc = yfail(y, p.val, "model '%s' is not one of the manifest's models: declare it under models, "
					                     "or write model: inherit", model);
				} else {
					free(w->model);
					w->model = xstrdup(model);
				}
			}
			free(model);
		} else if (strcmp(p.key, "name") == 0 || strcmp(p.key, "color") == 0) {
			char *s = NULL;
			rc = ystr(y, p.val, &s);
			free(s);
		}
		if (rc < 0)
			bad = -1;
	}
	return bad;
}
