/* test_upstream: taking finished jobs from other runs (--from): only whole, verified runs of the same
 * manifest; succeeded jobs bring their output, failed ones their status; no job from two runs. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../artifacts/events.h"
#include "../../artifacts/rundir.h"
#include "../../artifacts/runjson.h"
#include "../../run/upstream.h"
#include "t.h"

static char dir[] = "/tmp/ns-upstream.XXXXXX";
static struct manifest m;
static char sha[65];

/* One job's event log as the runner writes it: job_start, the output when it has one, job_end with
 * the fields of its run.json entry; the entry gets the log's head. */
static void mklog(struct rundir *rd, cJSON *entry, const char *output)
{
	struct err e = {0};
	char *jd = rundirjob(rd, entry->string, &e), *lp = pathjoin(jd, "events.jsonl.zst");
	struct evlog *l;
	ok(evopen(&l, lp, NULL, &e) == 0, "evopen: %s", e.msg);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "job", entry->string);
	cJSON_AddStringToObject(ev, "worker", "w");
	evadd(l, "job_start", ev, &e);
	if (output) {
		char *p = pathjoin(jd, "output.json");
		writefile(p, output, strlen(output), &e);
		free(p);
		ev = cJSON_CreateObject();
		cJSON_AddItemToObject(ev, "output", cJSON_Parse(output));
		evadd(l, "output", ev, &e);
	}
	evadd(l, "job_end", cJSON_Duplicate(entry, 1), &e);
	cJSON_AddNumberToObject(entry, "events", (double)evcount(l));
	cJSON_AddStringToObject(entry, "events_head", evhead(l));
	ok(evclose(l, &e) == 0, "evclose: %s", e.msg);
	free(lp);
	free(jd);
}

/* A sealed run directory with run.json jobs (JSON object text), each with its event log, and
 * outputs for the succeeded ones. */
static char *mkrun(const char *name, const char *manifestsha, const char *jobs, const char *const *outputs)
{
	struct rundir rd = {0};
	struct err e = {0};
	char *out = pathjoin(dir, name);
	ok(rundircreate(&rd, out, &e) == 0, "rundircreate: %s", e.msg);
	char *rjs = xasprintf("{\"run_id\":\"%s\",\"manifest\":{\"sha256\":\"%s\"},\"status\":\"failed\",\"jobs\":%s}",
	                      rd.id, manifestsha, jobs);
	cJSON *rj = cJSON_Parse(rjs), *j;
	cJSON_ArrayForEach(j, cJSON_GetObjectItem(rj, "jobs"))
	{
		const char *o = NULL;
		for (size_t i = 0; outputs && outputs[i]; i += 2)
			if (strcmp(outputs[i], j->string) == 0)
				o = outputs[i + 1];
		if (runnameok(j->string))
			mklog(&rd, j, o);
	}
	ok(runjsonseal(rd.path, rj, NULL, &e) == 0, "runjsonseal: %s", e.msg);
	ok(rundirsums(&rd, &e) == 0, "rundirsums: %s", e.msg);
	char *path = xstrdup(rd.path);
	cJSON_Delete(rj);
	free(rjs);
	free(out);
	rundirfree(&rd);
	return path;
}

int main(void)
{
	struct err e = {0};
	ok(mkdtemp(dir) != NULL, "mkdtemp");
	const char *y = "version: 1\nworkspace: .\nmodels: { default: { provider: scripted, replies: [ { text: hi } ] } }\n"
	                "workers: { w: { instructions: x } }\njobs:\n"
	                "  a: { worker: w, input: x }\n  b: { worker: w, input: x, needs: [a] }\n"
	                "  c: { worker: w, input: x, needs: [b] }\n";
	char *mp = pathjoin(dir, "m.yaml");
	writefile(mp, y, strlen(y), &e);
	ok(manifestload(&m, mp, &e) == 0, "load: %s", e.msg);
	sha256file(mp, sha, &e);

	static const char *const outs[] = {"a", "{\"word\":\"w-a\"}", "a.helper-3", "{}", NULL};
	char *r1 = mkrun("r1", sha,
	                 "{\"a\":{\"status\":\"succeeded\"},\"b\":{\"status\":\"failed\",\"error\":\"boom\"},"
	                 "\"a.helper-3\":{\"status\":\"succeeded\",\"parent\":\"a\"}}",
	                 outs);
	struct upstream u = {0};
	ok(upstreamload(&u, r1, &m, &e) == 0, "load r1: %s", e.msg);
	ok(u.n == 2, "two jobs taken, the delegate's run left with its parent (%zu)", u.n);
	const struct upjob *a = upstreamjob(&u, "a"), *b = upstreamjob(&u, "b");
	ok(a && a->output && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(a->output, "word")), "w-a") == 0,
	   "a's output");
	ok(b && !b->output && strcmp(b->status, "failed") == 0 && b->error && strcmp(b->error, "boom") == 0,
	   "b failed, with its error");
	ok(!upstreamjob(&u, "c"), "c is not there");

	struct jobresult res[3];
	int taken[3] = {0};
	memset(res, 0, sizeof res);
	ok(upstreamapply(&u, &m, res, taken) == 2, "two applied");
	ok(taken[0] && taken[1] && !taken[2], "a and b taken, c not");
	ok(res[0].status == JOB_SUCCEEDED && res[0].output && res[0].output != a->output, "a succeeded, its own copy");
	ok(res[1].status == JOB_FAILED && !res[1].output && strstr(res[1].error, "boom"), "b failed: %s", res[1].error);
	ok(strstr(res[0].error, "from run ") != NULL, "names the run it came from: %s", res[0].error);
	cJSON *uj = upstreamjson(&u, &m, taken);
	char *ujs = cJSON_PrintUnformatted(uj);
	ok(strstr(ujs, "\"a\":{\"run_id\":") && strstr(ujs, "\"status\":\"failed\""), "upstream json: %s", ujs);
	free(ujs);
	cJSON_Delete(uj);
	for (int i = 0; i < 3; i++)
		jobresultfree(&res[i]);

	/* The same job from a second run is refused. */
	char *r2 = mkrun("r2", sha, "{\"a\":{\"status\":\"succeeded\"}}", outs);
	ok(upstreamload(&u, r2, &m, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, "in both"), "a twice: %s", e.msg);
	upstreamfree(&u);

	/* Another manifest. */
	char *r3 = mkrun("r3", "0000000000000000000000000000000000000000000000000000000000000000",
	                 "{\"a\":{\"status\":\"succeeded\"}}", outs);
	ok(upstreamload(&u, r3, &m, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, "another manifest"), "other manifest: %s",
	   e.msg);
	upstreamfree(&u);
	/* A succeeded job without its output. */
	char *r4 = mkrun("r4", sha, "{\"c\":{\"status\":\"succeeded\"}}", NULL);
	ok(upstreamload(&u, r4, &m, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, "output"), "no output: %s", e.msg);
	upstreamfree(&u);
	/* A job the manifest does not have, or a name that is no job id. */
	static const char *const zz[] = {"zz", "{}", NULL};
	char *r5 = mkrun("r5", sha, "{\"zz\":{\"status\":\"succeeded\"}}", zz);
	ok(upstreamload(&u, r5, &m, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, "not in"), "unknown job: %s", e.msg);
	upstreamfree(&u);
	char *r6 = mkrun("r6", sha, "{\"../a\":{\"status\":\"succeeded\"}}", NULL);
	ok(upstreamload(&u, r6, &m, &e) < 0 && e.kind == ERR_INPUT, "../a refused: %s", e.msg);
	upstreamfree(&u);
	/* Changed after it was sealed, or never sealed. */
	char *p = xasprintf("%s/jobs/a/output.json", r2);
	writefile(p, "{\"word\":\"forged\"}", 17, &e);
	ok(upstreamload(&u, r2, &m, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, "verification failed"), "edited: %s", e.msg);
	upstreamfree(&u);
	free(p);
	p = pathjoin(r1, "SHA256SUMS");
	unlink(p);
	ok(upstreamload(&u, r1, &m, &e) < 0 && e.kind == ERR_INPUT && strstr(e.msg, "did not finish"), "unsealed: %s", e.msg);
	upstreamfree(&u);
	free(p);
	ok(upstreamload(&u, "/nonexistent/run", &m, &e) < 0 && e.kind == ERR_INPUT, "missing: %s", e.msg);
	upstreamfree(&u);

	char *r[] = {r1, r2, r3, r4, r5, r6};
	for (int i = 0; i < 6; i++)
		free(r[i]);
	manifestfree(&m);
	free(mp);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	ok(system(cmd) == 0, "cleanup");
	free(cmd);
	return tdone();
}
