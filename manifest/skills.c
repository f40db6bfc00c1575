/* skills: Agent Skills (agentskills.io): a folder with SKILL.md, whose YAML front matter holds
 * `name` (lowercase letters, digits and hyphens, 1-64, the folder's name) and `description`
 * (1-1024 characters); license, compatibility, metadata and allowed-tools are accepted. The
 * model is told the names and descriptions; the folder is mounted read-only at /skills/NAME. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "skills.h"

static const char *const skillkeys[] = {"name", "description", "license", "compatibility", "metadata",
                                        "allowed-tools", NULL};

static int goodname(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64 || s[0] == '-' || s[n - 1] == '-' || strstr(s, "--"))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	return 1;
}

/* One skill folder: its SKILL.md's front matter, checked. */
static int loadone(struct ydoc *y, yaml_node_t *item, const char *dir, struct worker *w)
{
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return yfail(y, item, "skill folder %s does not exist", dir);
	char *md = pathjoin(dir, "SKILL.md");
	struct buf text = {0};
	struct err re;
	if (readfile(md, &text, &re) < 0) {
		free(md);
		return yfail(y, item, "skill folder %s has no SKILL.md", dir);
	}
	int rc = -1;
	const char *s = text.data, *fm, *end;
	if (strncmp(s, "---\n", 4) != 0 && strncmp(s, "---\r\n", 5) != 0) {
		errc(y->e, ERR_INPUT, "%s:1:1: SKILL.md must open with YAML front matter (---, name, description, ---)", md);
		goto out;
	}
	fm = end = strchr(s, '\n') + 1;
	while (!(strncmp(end, "---", 3) == 0 && (end[3] == '\n' || end[3] == '\r' || end[3] == 0))) {
		const char *nl = strchr(end, '\n');
		if (!nl) {
			errc(y->e, ERR_INPUT, "%s:1:1: front matter opened with --- is never closed", md);
			goto out;
		}
		end = nl + 1;
	}
	struct ydoc fy;
	if (yload(&fy, md, fm, end - fm, 1, y->e) < 0)
		goto out;
	yaml_node_t *root = yroot(&fy), *v;
	char *name = NULL, *desc = NULL;
	const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	if (!root || ymap(&fy, root, "SKILL.md front matter", skillkeys) < 0) {
		if (!root)
			errc(y->e, ERR_INPUT, "%s:2:1: SKILL.md's front matter is empty: it needs name and description", md);
	} else if (!(v = yget(&fy, root, "name"))) {
		yfail(&fy, root, "SKILL.md needs a name");
	} else if (ystr(&fy, v, &name) < 0) {
	} else if (!goodname(name)) {
		yfail(&fy, v, "skill name '%s' must be 1-64 lowercase letters, digits and single hyphens", name);
	} else if (strcmp(name, base) != 0) {
		yfail(&fy, v, "skill name '%s' must be the name of its folder, '%s'", name, base);
	} else if (!(v = yget(&fy, root, "description"))) {
		yfail(&fy, root, "SKILL.md needs a description (what the skill does and when to use it)");
	} else if (ystr(&fy, v, &desc) < 0) {
	} else if (!*desc || strlen(desc) > 1024) {
		yfail(&fy, v, "a skill's description must be 1 to 1024 characters");
	} else {
		int dup = 0;
		for (size_t i = 0; i < w->skillnames.n; i++)
			dup |= strcmp(w->skillnames.v[i], name) == 0;
		if (dup) {
			yfail(y, item, "worker has two skills named '%s'", name);
		} else {
			strvadd(&w->skills, dir);
			strvadd(&w->skillnames, name);
			strvadd(&w->skilldescs, desc);
			rc = 0;
		}
	}
	free(name);
	free(desc);
	yfree(&fy);
out:
	if (rc < 0 && y->errs)
		ynote(y);
	free(md);
	buffree(&text);
	return rc;
}

int skillsload(struct ydoc *y, yaml_node_t *list, struct worker *w)
{
	yaml_node_t *it;
	int bad = 0;
	if (list->type != YAML_SEQUENCE_NODE)
		return yfail(y, list, "skills must be a list of folders");
	strvfree(&w->skills);
	strvfree(&w->skillnames);
	strvfree(&w->skilldescs);
	char *base = dirname_dup(y->file);
	for (size_t i = 0; (it = yitem(y, list, i)); i++) {
		char *rel = NULL;
		if (ystr(y, it, &rel) < 0) {
			bad = -1;
			continue;
		}
		char *dir = rel[0] == '/' ? xstrdup(rel) : pathjoin(base, rel);
		size_t n = strlen(dir);
		while (n > 1 && dir[n - 1] == '/')
			dir[--n] = 0;
		char *real = realpath(dir, NULL);
		if (loadone(y, it, real ? real : dir, w) < 0)
			bad = -1;
		free(real);
		free(dir);
		free(rel);
	}
	free(base);
	return bad;
}

char *skillsprompt(const struct worker *w)
{
	if (!w->skillnames.n)
		return NULL;
	struct buf b = {0};
	bufputs(&b, "\n\nSkills: folders of instructions and files, read-only in the sandbox. When a task matches a "
	            "skill's description, read /skills/NAME/SKILL.md first and follow it.\n");
	for (size_t i = 0; i < w->skillnames.n; i++)
		bufprintf(&b, "- %s: %s\n", w->skillnames.v[i], w->skilldescs.v[i]);
	return b.data;
}
