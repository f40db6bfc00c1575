/* config: nightshift config [MANIFEST]: the layers of configuration in force and where each value
 * came from: the admin policy, the user's defaults, and with MANIFEST the manifest over them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../manifest/layers.h"
#include "../manifest/manifest.h"
#include "../util/term.h"
#include "cmd.h"

static const char confighelp[] =
	"usage: nightshift config [MANIFEST]\n"
	"\n"
	"Prints the layers of configuration a run would use, and where each came from:\n"
	"  the admin policy   " ADMINPOLICY " (root-owned, writable by no one else): approval\n"
	"                     rules joined to every worker's (strictest wins), caps on every budget\n"
	"                     and floors on the sandbox that no manifest can weaken\n"
	"  the user defaults  $XDG_CONFIG_HOME/nightshift/config.yaml (default ~/.config): models a\n"
	"                     manifest may name without defining, out:, sandbox: defaults\n"
	"  the manifest       with MANIFEST: what it decides over the defaults\n"
	"exit codes: 0 printed, 2 a layer is refused or has mistakes (each printed)\n";

static void printcaps(const struct adminpolicy *a)
{
	static const char *const backends[] = {"namespace", "docker", "none"};
	printf("  approval rules: %zu", a->approval.nrules);
	if (a->def >= 0)
		printf(", default %s (a manifest's default is no weaker)", decisionname(a->def));
	printf("\n");
	for (size_t i = 0; i < a->approval.nrules; i++) {
		const struct rule *r = &a->approval.rules[i];
		termprintf(stdout, "    admin rule %zu (line %d): %s%s%s%s%s -> %s\n", i + 1, r->pos.line,
		           r->preset ? "preset " : "tool ", r->preset ? r->preset : r->tool ? r->tool : "*",
		           r->command ? " command " : "", r->command ? r->command : "", r->path ? " path ..." : "",
		           decisionname(r->decision));
	}
	if (a->max_cost > 0)
		printf("  max_cost: %g USD a job at most\n", a->max_cost);
	if (a->max_tokens > 0)
		printf("  max_tokens: %lld a job at most\n", (long long)a->max_tokens);
	if (a->max_turns > 0)
		printf("  max_turns: %d a job at most\n", a->max_turns);
	if (a->budget_cost > 0)
		printf("  budget.cost: %g USD a run at most\n", a->budget_cost);
	if (a->backends) {
		printf("  sandbox backends allowed:");
		for (int b = 0; b < 3; b++)
			if (a->backends & (1u << b))
				printf(" %s", backends[b]);
		printf("\n");
	}
	if (a->network >= 0) {
		printf("  network at most: %s", a->network == 0 ? "none" : a->network == 2 ? "host" : "allow");
		for (size_t i = 0; a->network == 1 && i < a->net.nallow; i++)
			termprintf(stdout, "%s%s", i ? ", " : " ", a->net.allow[i].text);
		printf("\n");
	}
	for (size_t i = 0; i < a->protect.n; i++)
		termprintf(stdout, "  protect: %s\n", a->protect.v[i]);
	for (size_t i = 0; i < a->nprices; i++)
		termprintf(stdout, "  price of %s at least: input %g, cached_input %g, output %g USD per million tokens\n",
		           a->prices[i].model, a->prices[i].price.input, a->prices[i].price.cached_input,
		           a->prices[i].price.output);
}

int cmdconfig(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (ishelp(argv[i])) {
			fputs(confighelp, stdout);
			return EXIT_OK;
		}
		if (positional("config", argv[i], &path, "manifest"))
			return EXIT_USAGE;
	}
	struct manifest m;
	struct err e = {0};
	int rc = path ? loadmanifest(&m, path, &(struct loadopts){0}, &e) : manifestlayers(&m, &e);
	if (rc < 0) {
		/* loadmanifest has said every mistake of a manifest already; the layers alone are said here */
		if (!path && m.errors.n > 1) {
			for (size_t i = 0; i < m.errors.n; i++)
				termprintf(stderr, "nightshift: %s\n", m.errors.v[i]);
			errc(&e, ERR_INPUT, "the layers of configuration: %zu mistakes", m.errors.n);
		}
		rc = report(&e);
		manifestfree(&m);
		return rc;
	}
	if (m.admin.path) {
		printf("admin policy: %s (sha256 %s)\n", m.admin.path, m.admin.sha256);
		printcaps(&m.admin);
	} else {
		printf("admin policy: none (%s does not exist)\n", ADMINPOLICY);
	}
	char *user = layersuserpath();
	if (m.userconfig) {
		termprintf(stdout, "user defaults: %s\n", m.userconfig);
		if (m.userout)
			termprintf(stdout, "  out: %s\n", m.userout);
		if (m.usersandbox)
			termprintf(stdout, "  sandbox: %s (under the manifest's own sandbox: keys)\n", m.usersandbox);
	} else {
		const char *h = getenv("HOME");
		if (user)
			termprintf(stdout, "user defaults: none (%s does not exist)\n", user);
		else
			printf("user defaults: none (%s)\n", h && *h ? "HOME is not an absolute path"
			                                             : "neither XDG_CONFIG_HOME nor HOME is set");
	}
	free(user);
	for (size_t i = 0; i < m.nmodels; i++) {
		const struct model *md = &m.models[i];
		const char *from = md->pos.file && m.userconfig && strcmp(md->pos.file, m.userconfig) == 0 ? "user defaults"
		                   : path                                                                ? "manifest"
		                                                                                         : "user defaults";
		termprintf(stdout, "model %s: %s%s%s (%s, %s:%d)\n", md->name,
		           md->model ? md->model : md->provider == PROV_SCRIPTED ? "scripted" : "",
		           md->base_url ? " at " : "", md->base_url ? md->base_url : "", from,
		           md->pos.file ? md->pos.file : "?", md->pos.line);
	}
	if (path)
		termprintf(stdout, "manifest: %s (%zu workers, %zu jobs)\n", m.path, m.nworkers, m.njobs);
	manifestfree(&m);
	return EXIT_OK;
}
