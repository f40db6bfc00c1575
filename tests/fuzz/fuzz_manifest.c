/* fuzz_manifest: manifest loading (YAML, worker files, scripted replies, expressions, rule checks).
 * Input: MANIFEST [\n%%%\n WORKERFILE [\n%%%\n SCRIPT]], written as nightshift.yaml, w.md and
 * s.yaml in a folder that also holds a workspace folder ws/. A manifest that loads has its rules
 * checked and each job's input expanded with a finished job's output.
 * Invariants: a failed load says why, with code 2; a loaded manifest's references resolve. */
#include "fuzz.h"
#include "../../manifest/expr.h"
#include "../../manifest/manifest.h"
#include "../../policy/policy.h"

static char *mpath, *wpath, *spath;
static cJSON *outputdoc;

static void init(void)
{
	const char *d = fuzzdir();
	mpath = pathjoin(d, "nightshift.yaml");
	wpath = pathjoin(d, "w.md");
	spath = pathjoin(d, "s.yaml");
	char *ws = pathjoin(d, "ws");
	mkdir(ws, 0755);
	free(ws);
	outputdoc = cJSON_Parse("{\"verdict\":\"ok\",\"findings\":[\"a\",{\"b\":[1,2.5,null,true]}],\"n\":3}");
	setenv("NS_FUZZ_ENV", "value from env", 1);
}

static cJSON *output(void *ctx, const char *job)
{
	(void)ctx;
	return strcmp(job, "none") == 0 ? NULL : outputdoc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!mpath)
		init();
	size_t off = 0, n;
	const uint8_t *p = fuzzpart(data, size, &off, "\n%%%\n", &n);
	fuzzwrite(mpath, p ? (const char *)p : "", p ? n : 0);
	const char *paths[] = {wpath, spath};
	for (int i = 0; i < 2; i++) {
		p = fuzzpart(data, size, &off, "\n%%%\n", &n);
		if (p)
			fuzzwrite(paths[i], p, n);
		else
			unlink(paths[i]);
	}
	struct manifest m;
	struct strv sets = {0};
	strvadd(&sets, "day=monday");
	strvadd(&sets, "empty=");
	struct err e = {0};
	if (manifestloadset(&m, mpath, &sets, &e) < 0) {
		fuzzassert(e.msg[0] && e.kind == ERR_INPUT);
	} else {
		fuzzassert(m.workspace && m.workspace[0] == '/');
		for (size_t i = 0; i < m.nworkers; i++) {
			struct worker *w = &m.workers[i];
			fuzzassert(w->name && manifestworker(&m, w->name) == w);
			struct err pe = {0};
			policycheck(&w->approval, &pe);
		}
		for (size_t i = 0; i < m.njobs; i++) {
			const struct job *j = &m.jobs[i];
			fuzzassert(j->id && manifestjob(&m, j->id) == j);
			fuzzassert(j->worker && manifestworker(&m, j->worker));
			for (size_t k = 0; k < j->needs.n; k++)
				fuzzassert(manifestjob(&m, j->needs.v[k]));
			struct exprenv env = {.sets = &m.sets, .needs = &j->needs, .output = output};
			struct err xe = {0};
			char *s = j->input ? exprexpand(j->input, &env, &xe) : NULL;
			fuzzassert(!j->input || s || xe.msg[0]);
			free(s);
		}
	}
	manifestfree(&m);
	strvfree(&sets);
	return 0;
}
