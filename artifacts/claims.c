/* claims: every claim of run.json, output.json and jobs/<job>/files/ is compared with the event line
 * that recorded it; a disagreement names the file, the field and that line. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "claims.h"
#include "finalize.h"
#include "rundir.h"
#include "runjson.h"

int factswanted(const char *type)
{
	return strcmp(type, "job_start") == 0 || strcmp(type, "job_end") == 0 || strcmp(type, "output") == 0 ||
	       strcmp(type, "file") == 0 || strcmp(type, "run") == 0 || strcmp(type, "model_response") == 0 ||
	       strcmp(type, "context_compacted") == 0 || strcmp(type, "changes") == 0;
}

void factsnote(struct facts *f, cJSON *ev, const char *type, long lineno)
{
	f->events = lineno;
	if (strcmp(type, "model_response") == 0 || strcmp(type, "context_compacted") == 0) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(ev, "usage"); /* a summary's model call counts too */
		f->responses += strcmp(type, "model_response") == 0;
		if (cJSON_IsObject(u)) {
			if (!f->usage)
				f->usage = cJSON_CreateObject();
			jsonaddnums(f->usage, u);
		}
		cJSON_Delete(ev);
		return;
	}
	if (strcmp(type, "file") == 0) {
		if (!f->files)
			f->files = cJSON_CreateArray();
		int n = cJSON_GetArraySize(f->files);
		f->filelines = xrealloc(f->filelines, (n + 1) * sizeof *f->filelines);
		f->filelines[n] = lineno;
		cJSON_AddItemToArray(f->files, ev);
		return;
	}
	cJSON **slot = &f->end;
	long *line = &f->endline;
	if (strcmp(type, "job_start") == 0 && lineno == 1) {
		slot = &f->start;
		line = &f->startline;
	} else if (strcmp(type, "output") == 0) {
		slot = &f->output;
		line = &f->outputline;
	} else if (strcmp(type, "changes") == 0) {
		slot = &f->changes;
		line = &f->changesline;
	} else if (strcmp(type, "job_end") != 0 && strcmp(type, "run") != 0) {
		cJSON_Delete(ev);
		return;
	}
	cJSON_Delete(*slot);
	*slot = ev;
	*line = lineno;
}

void factsfree(struct facts *f)
{
	free(f->log);
	cJSON_Delete(f->start);
	cJSON_Delete(f->end);
	cJSON_Delete(f->output);
	cJSON_Delete(f->files);
	cJSON_Delete(f->usage);
	cJSON_Delete(f->changes);
	free(f->filelines);
	memset(f, 0, sizeof *f);
}

static void problem(struct strv *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct strv *p, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	strvadd(p, line);
}

/* j printed on one line and cut short ("absent" for NULL). */
static void shown(const cJSON *j, char *out, size_t n)
{
	char *p = j ? cJSON_PrintUnformatted(j) : NULL;
	snprintf(out, n, "%s", !j ? "absent" : p ? p : "?");
	if (p && strlen(p) >= n && n > 4)
		memcpy(out + n - 4, "...", 4);
	free(p);
}

static int isenvelope(const char *k)
{
	return strcmp(k, "seq") == 0 || strcmp(k, "time") == 0 || strcmp(k, "type") == 0 || strcmp(k, "prev") == 0;
}

/* A name given twice in one object: readers disagree on which one counts. */
static const char *twice(const cJSON *o)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, o)
		if (x->string && cJSON_GetObjectItemCaseSensitive(o, x->string) != x)
			return x->string;
	return NULL;
}

/* The first path (".a.b") where claim and record differ; 0 when they agree. Objects are compared
 * field by field (skip names fields of claim that the record does not hold, envelope fields of the
 * record are left out); anything else as a whole. */
static int firstdiff(const cJSON *claim, const cJSON *record, const char *const *skip, struct buf *path,
                     const cJSON **dc, const cJSON **dr)
{
	if (cJSON_IsObject(claim) && cJSON_IsObject(record)) {
		const cJSON *x;
		const char *dup = twice(claim) ? twice(claim) : twice(record);
		if (dup) {
			bufprintf(path, ".%s", dup);
			*dc = claim;
			*dr = NULL;
			return 1;
		}
		cJSON_ArrayForEach(x, claim)
		{
			int skipped = 0;
			for (size_t i = 0; skip && skip[i]; i++)
				skipped |= strcmp(skip[i], x->string) == 0;
			if (skipped)
				continue;
			size_t mark = path->len;
			bufprintf(path, ".%s", x->string);
			if (firstdiff(x, cJSON_GetObjectItemCaseSensitive(record, x->string), NULL, path, dc, dr))
				return 1;
			path->len = mark;
			path->data[mark] = 0;
		}
		cJSON_ArrayForEach(x, record)
			if (!isenvelope(x->string) && !cJSON_GetObjectItemCaseSensitive(claim, x->string)) {
				bufprintf(path, ".%s", x->string);
				*dc = NULL;
				*dr = x;
				return 1;
			}
		return 0;
	}
	if (claim && record && cJSON_Compare(claim, record, 1))
		return 0;
	*dc = claim;
	*dr = record;
	return 1;
}

/* Compare claim (in file, its fields named from prefix) with record (line of log, of type what). */
static void compare(struct strv *p, const char *file, const char *prefix, const cJSON *claim, const cJSON *record,
                    const char *const *skip, const char *log, long line, const char *what)
{
	struct buf path = {0};
	const cJSON *dc, *dr;
	bufputs(&path, prefix);
	if (firstdiff(claim, record, skip, &path, &dc, &dr)) {
		char c[120], r[120];
		shown(dc, c, sizeof c);
		shown(dr, r, sizeof r);
		const char *name = path.data[0] == '.' ? path.data + 1 : path.data;
		if (dc && !dr && cJSON_IsObject(dc) && twice(dc))
			problem(p, "%s: %s names %s twice", file, *name ? name : "the top object", twice(dc));
		else if (line)
			problem(p, "%s: %s is %s, %s:%ld (%s) says %s", file, *name ? name : "the whole", c, log, line, what, r);
		else
			problem(p, "%s: %s is %s, %s says %s", file, *name ? name : "the whole", c, log, r);
	}
	buffree(&path);
}

static const char *const chained[] = {"events", "events_head", NULL};

/* A job's entry in run.json against the job's own lines: each field that job_end (rec) records is
 * compared with it, every other field that job_start records with job_start; the rest (a matrix's
 * values, a delegate's parent) is held by the run's own log alone. Every field of job_end must be
 * in the entry. */
static void comparejob(struct strv *p, const char *prefix, const cJSON *info, const cJSON *rec, const char *log,
                       long recline, const char *what, const cJSON *start)
{
	cJSON *fromend = cJSON_CreateObject(), *fromstart = cJSON_CreateObject();
	const cJSON *x;
	cJSON_ArrayForEach(x, info)
	{
		int skip = 0;
		for (size_t i = 0; chained[i]; i++)
			skip |= strcmp(chained[i], x->string) == 0;
		if (skip)
			continue;
		if (cJSON_GetObjectItemCaseSensitive(rec, x->string) || !cJSON_GetObjectItemCaseSensitive(start, x->string))
			cJSON_AddItemToObject(fromend, x->string, cJSON_Duplicate(x, 1));
		else
			cJSON_AddItemToObject(fromstart, x->string, cJSON_Duplicate(x, 1));
	}
	/* Fields neither line holds are not compared: drop them from the claim. */
	cJSON *c = fromend->child;
	while (c) {
		cJSON *next = c->next;
		if (!cJSON_GetObjectItemCaseSensitive(rec, c->string))
			cJSON_Delete(cJSON_DetachItemViaPointer(fromend, c));
		c = next;
	}
	compare(p, "run.json", prefix, fromend, rec, NULL, log, recline, what);
	/* job_start holds more than run.json repeats (job, input, manifest): only the fields it shares. */
	cJSON_ArrayForEach(x, fromstart)
	{
		char *name = xasprintf("%s.%s", prefix, x->string);
		compare(p, "run.json", name, x, cJSON_GetObjectItemCaseSensitive(start, x->string), NULL, log, 1, "job_start");
		free(name);
	}
	if (twice(info))
		problem(p, "run.json: %s names %s twice", prefix, twice(info));
	cJSON_Delete(fromend);
	cJSON_Delete(fromstart);
}

/* job_end's usage (at line) against the sum of the job's model_response usage: each count, a
 * count missing on one side being 0. */
static void usagesum(struct strv *p, const char *log, long line, const cJSON *claim, const struct facts *f)
{
	const cJSON *sum = f->usage, *x;
	if (claim && !cJSON_IsObject(claim)) {
		problem(p, "%s:%ld (job_end): usage is not an object", log, line);
		return;
	}
	for (int side = 0; side < 2; side++) {
		const cJSON *from = side ? sum : claim;
		cJSON_ArrayForEach(x, from)
		{
			if (side && cJSON_GetObjectItemCaseSensitive(claim, x->string))
				continue; /* compared already */
			const cJSON *c = side ? cJSON_GetObjectItemCaseSensitive(claim, x->string) : x;
			const cJSON *s = side ? x : cJSON_GetObjectItemCaseSensitive(sum, x->string);
			if ((c && !cJSON_IsNumber(c)) || (s && !cJSON_IsNumber(s))) {
				problem(p, "%s:%ld (job_end): usage.%.60s is not a number", log, line, x->string);
				continue;
			}
			double cv = c ? c->valuedouble : 0, sv = s ? s->valuedouble : 0;
			if (cv != sv)
				problem(p, "%s:%ld (job_end): usage.%.60s is %.0f, the job's %ld model_response lines add up to %.0f",
				        log, line, x->string, cv, f->responses, sv);
		}
	}
}

void claimsjob(const char *dir, const char *job, const cJSON *info, const struct facts *f, int finalized,
               struct strv *p)
{
	char *prefix = xasprintf("jobs.%s", job), *log = f ? f->log : NULL;
	const char *status = jsonstr(info, "status", "");
	/* Its status, turns, steps, usage and whatever else job_end holds. */
	if (f && f->end) {
		comparejob(p, prefix, info, f->end, log, f->endline, "job_end", f->start);
		usagesum(p, log, f->endline, cJSON_GetObjectItemCaseSensitive(f->end, "usage"), f);
	} else if (f && !finalized) {
		/* The log ended early (a write failed): run.json says what the runner knew, which the chain
		 * cannot confirm; it may not claim success. */
		if (strcmp(status, "succeeded") == 0 || !cJSON_GetObjectItemCaseSensitive(info, "error"))
			problem(p, "run.json: %s.status is %s without an error, but %s ends without job_end", prefix, status, log);
	} else if (f) {
		char *lp = pathjoin(dir, log);
		struct recovered rec;
		struct err e = {0};
		if (jobrecover(lp, 0, &rec, &e) == 0) {
			char *what = xasprintf("%s (no job_end: counted from its lines)", log);
			comparejob(p, prefix, info, rec.job, what, 0, NULL, f->start);
			free(what);
			recoveredfree(&rec);
		}
		free(lp);
	}
	if (f && !f->start)
		problem(p, "%s:1: not a job_start event", log);
	/* output.json is the output event's result. */
	char *orel = xasprintf("jobs/%s/output.json", job), *opath = pathjoin(dir, orel);
	int exists = access(opath, F_OK) == 0;
	if (f && f->output) {
		struct err e = {0};
		cJSON *out = exists ? jsonread(opath, &e) : NULL;
		if (!exists && strcmp(status, "succeeded") == 0)
			problem(p, "%s: missing, %s:%ld (output) recorded the result", orel, log, f->outputline);
		else if (exists && !out)
			problem(p, "%s: not JSON, %s:%ld (output) recorded the result", orel, log, f->outputline);
		else if (out)
			compare(p, orel, "", out, cJSON_GetObjectItemCaseSensitive(f->output, "output"), NULL, log, f->outputline,
			        "output");
		cJSON_Delete(out);
	} else {
		if (exists)
			problem(p, "%s: %s records no output event", orel, log ? log : "no event log");
		if (strcmp(status, "succeeded") == 0)
			problem(p, "run.json: %s.status is succeeded, but %s records no output event", prefix,
			        log ? log : "no event log");
	}
	/* jobs/<job>/files/ holds exactly the files the file events recorded, with their digests. */
	char *fdir = xasprintf("%s/jobs/%s/files", dir, job);
	struct strv have = {0};
	struct err e = {0};
	struct stat st;
	if (stat(fdir, &st) == 0 && rundirfiles(fdir, &have, &e) < 0)
		problem(p, "jobs/%s/files: %s", job, e.msg);
	char *seen = xcalloc(have.n + 1, 1);
	const cJSON *fe, *fevents = f ? f->files : NULL;
	int i = 0;
	cJSON_ArrayForEach(fe, fevents)
	{
		const char *rel = jsonstr(fe, "path", ""), *want = jsonstr(fe, "sha256", "");
		long line = f->filelines[i++];
		if (!*rel || rel[0] == '/' || strstr(rel, "..")) {
			problem(p, "%s:%ld: file path '%.100s' leaves the job's folder", log, line, rel);
			continue;
		}
		char hex[65], *full = pathjoin(fdir, rel);
		if (sha256file(full, hex, &e) < 0)
			problem(p, "jobs/%s/files/%s: missing, %s:%ld (file) recorded it", job, rel, log, line);
		else if (strcmp(hex, want) != 0)
			problem(p, "jobs/%s/files/%s: digest %.16s..., %s:%ld (file) recorded %.16s...", job, rel, hex, log, line,
			        want);
		free(full);
		for (size_t k = 0; k < have.n; k++)
			if (strcmp(have.v[k], rel) == 0)
				seen[k] = 1;
	}
	for (size_t k = 0; k < have.n; k++)
		if (!seen[k])
			problem(p, "jobs/%s/files/%s: %s records no file event for it", job, have.v[k], log ? log : "no event log");
	free(seen);
	strvfree(&have);
	free(fdir);
	/* jobs/<job>/changes.patch is there exactly when the changes event records it, with its digest. */
	char *cpath = xasprintf("%s/jobs/%s/changes.patch", dir, job), chex[65];
	char *crel = xasprintf("jobs/%s/changes.patch", job);
	const cJSON *ch = f ? f->changes : NULL;
	int chave = sha256file(cpath, chex, &e) == 0;
	if (ch && strcmp(jsonstr(ch, "path", ""), crel) != 0)
		problem(p, "%s:%ld: changes path '%.100s' is not jobs/%s/changes.patch", log, f->changesline,
		        jsonstr(ch, "path", ""), job);
	if (ch && !chave)
		problem(p, "jobs/%s/changes.patch: missing, %s:%ld (changes) recorded it", job, log, f->changesline);
	else if (ch && strcmp(chex, jsonstr(ch, "sha256", "")) != 0)
		problem(p, "jobs/%s/changes.patch: digest %.16s..., %s:%ld (changes) recorded %.16s...", job, chex, log,
		        f->changesline, jsonstr(ch, "sha256", ""));
	else if (!ch && chave)
		problem(p, "jobs/%s/changes.patch: %s records no changes event for it", job, log ? log : "no event log");
	free(cpath);
	free(crel);
	free(orel);
	free(opath);
	free(prefix);
}

/* The sum of field k over the jobs, when some job has it as a number or an object of numbers. */
static cJSON *jobsum(const cJSON *jobs, const char *k)
{
	cJSON *sum = cJSON_CreateObject(), *j;
	int found = 0;
	cJSON_ArrayForEach(j, jobs)
	{
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, k);
		if (cJSON_IsNumber(x) || cJSON_IsObject(x)) {
			cJSON *one = cJSON_CreateObject();
			cJSON_AddItemToObject(one, k, cJSON_Duplicate(x, 1));
			jsonaddnums(sum, one);
			cJSON_Delete(one);
			found = 1;
		}
	}
	if (!found) {
		cJSON_Delete(sum);
		return NULL;
	}
	cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(sum, k);
	cJSON_Delete(sum);
	return v;
}

/* Whether two totals agree: numbers within a relative 1e-9 (sums of prices), objects field by field. */
static int sameish(const cJSON *a, const cJSON *b, struct buf *path, const cJSON **da, const cJSON **db)
{
	*da = a;
	*db = b;
	if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
		return fabs(a->valuedouble - b->valuedouble) <= 1e-9 * fmax(1, fmax(fabs(a->valuedouble), fabs(b->valuedouble)));
	if (!cJSON_IsObject(a) || !cJSON_IsObject(b))
		return 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, b)
	{
		size_t mark = path->len;
		bufprintf(path, ".%s", x->string);
		if (!sameish(cJSON_GetObjectItemCaseSensitive(a, x->string), x, path, da, db))
			return 0;
		path->len = mark;
		path->data[mark] = 0;
	}
	return 1;
}

/* Whether job entry info of run.json, carried over from a run resumed, ran the manifest sha (one of
 * run.json's origin.manifests, which claimsrun checks against their copies in manifest/). */
static int ranbefore(const cJSON *run, const cJSON *info, const char *sha)
{
	const cJSON *x;
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(info, "carried_from")))
		return 0;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(run, "origin"), "manifests"))
		if (strcmp(jsonstr(x, "sha256", ""), sha) == 0)
			return 1;
	return 0;
}

void claimsrun(const char *dir, const cJSON *run, const struct facts *runlog, const struct facts *jobf, size_t njobs,
               struct strv *p)
{
	static const char *const sealed[] = {"events", "events_head", NULL};
	const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(run, "jobs"), *k;
	/* Every field of run.json, as the run's own log recorded it. */
	if (!runlog || !runlog->end)
		problem(p, "run.json: events.jsonl.zst records no run event (run.json is not sealed in a chain)");
	else
		compare(p, "run.json", "", run, runlog->end, sealed, runlog->log, runlog->endline, "run");
	/* Totals: usage, cost and the like are the sums of the jobs'. */
	cJSON_ArrayForEach(k, run)
	{
		if (strcmp(k->string, "events") == 0 || strcmp(k->string, "jobs") == 0 || !(cJSON_IsNumber(k) || cJSON_IsObject(k)))
			continue;
		cJSON *sum = jobsum(jobs, k->string);
		struct buf path = {0};
		bufputs(&path, k->string);
		const cJSON *dc, *dr;
		if (sum && !sameish(k, sum, &path, &dc, &dr)) {
			char c[120], r[120];
			shown(dc, c, sizeof c);
			shown(dr, r, sizeof r);
			problem(p, "run.json: %s is %s, the sum of its jobs' is %s", path.data, c, r);
		}
		buffree(&path);
		cJSON_Delete(sum);
	}
	/* The run spans its jobs' logs; every job ran the manifest it names. */
	const char *started = jsonstr(run, "started", NULL), *ended = jsonstr(run, "ended", NULL);
	const cJSON *man = cJSON_GetObjectItemCaseSensitive(run, "manifest");
	const char *mfile = jsonstr(man, "file", NULL), *msha = jsonstr(man, "sha256", NULL);
	for (size_t i = 0; i < njobs; i++) {
		const struct facts *f = &jobf[i];
		if (!f->log)
			continue;
		const char *t0 = jsonstr(f->start, "time", NULL), *t1 = jsonstr(f->end, "time", NULL);
		const char *fsha = jsonstr(cJSON_GetObjectItemCaseSensitive(f->start, "manifest"), "sha256", NULL);
		if (started && t0 && strcmp(started, t0) > 0)
			problem(p, "run.json: started is %s, after %s:1 (job_start) at %s", started, f->log, t0);
		if (ended && t1 && strcmp(ended, t1) < 0)
			problem(p, "run.json: ended is %s, before %s:%ld (job_end) at %s", ended, f->log, f->endline, t1);
		if (fsha && (!msha || strcmp(fsha, msha) != 0) && !ranbefore(run, cJSON_GetArrayItem(jobs, (int)i), fsha))
			problem(p, "run.json: manifest.sha256 is %.16s..., %s:1 (job_start) ran %.16s...", msha ? msha : "absent",
			        f->log, fsha);
	}
	/* The manifests carried jobs ran under (a resumed run whose manifest was edited), each copied. */
	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(run, "origin"), "manifests"))
	{
		const char *osha = jsonstr(k, "sha256", "");
		char hex[65], *op = NULL;
		struct err e = {0};
		if (strlen(osha) != 64 || strspn(osha, "0123456789abcdef") != 64)
			problem(p, "run.json: origin.manifests names a sha256 '%.80s' that is not one", osha);
		else if (sha256file(op = xasprintf("%s/manifest/origin-%s.yaml", dir, osha), hex, &e) < 0)
			problem(p, "run.json: origin.manifests names %.16s..., which manifest/ does not hold", osha);
		else if (strcmp(hex, osha) != 0)
			problem(p, "run.json: origin.manifests names %.16s..., manifest/origin-%.16s....yaml has %.16s...", osha,
			        osha, hex);
		free(op);
	}
	/* a merged run's copy too: replay, resume and policy read it as the manifest the shards ran */
	if (mfile && msha) {
		char hex[65], *mp = NULL;
		struct err e = {0};
		if (!runnameok(mfile))
			problem(p, "run.json: manifest.file '%.100s' is not a file name", mfile);
		else if (sha256file(mp = xasprintf("%s/manifest/%s", dir, mfile), hex, &e) < 0)
			problem(p, "run.json: manifest.file is %s, which manifest/ does not hold", mfile);
		else if (strcmp(hex, msha) != 0)
			problem(p, "run.json: manifest.sha256 is %.16s..., manifest/%s has %.16s...", msha, mfile, hex);
		free(mp);
	}
	/* The admin policy in force is the one copied in manifest/, byte for byte. */
	const cJSON *ap = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(run, "layers"), "admin_policy");
	const char *asha = jsonstr(ap, "sha256", NULL);
	if (ap && !asha)
		problem(p, "run.json: layers.admin_policy has no sha256");
	if (asha) {
		char hex[65], *apath = xasprintf("%s/manifest/" RUNADMINPOLICY, dir);
		struct err e = {0};
		if (sha256file(apath, hex, &e) < 0)
			problem(p, "run.json: an admin policy was in force, and manifest/" RUNADMINPOLICY " is missing");
		else if (strcmp(hex, asha) != 0)
			problem(p, "run.json: the admin policy in force had sha256 %.16s..., manifest/" RUNADMINPOLICY " has %.16s...",
			        asha, hex);
		free(apath);
	}
	/* Every job folder is a job of run.json. */
	char *jd = pathjoin(dir, "jobs");
	DIR *d = opendir(jd);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' && !cJSON_GetObjectItemCaseSensitive(jobs, de->d_name))
			problem(p, "jobs/%.100s: a job folder run.json does not list", de->d_name);
	if (d)
		closedir(d);
	free(jd);
}

void claimsmerged(const char *dir, const char *shard, const char *job, const cJSON *info, const cJSON *theirs,
                  struct strv *p)
{
	static const char *const top[] = {"run", NULL};
	char *prefix = xasprintf("jobs.%s", job), *sr = xasprintf("%s/run.json", shard);
	cJSON *t = cJSON_Duplicate(theirs, 1);
	cJSON_DeleteItemFromObjectCaseSensitive(t, "events");
	cJSON_DeleteItemFromObjectCaseSensitive(t, "events_head");
	compare(p, "run.json", prefix, info, t, top, sr, 0, NULL);
	cJSON_Delete(t);
	/* Its folder at the top is the shard's: output.json and every declared file. */
	char *a = xasprintf("%s/jobs/%s", dir, job), *b = xasprintf("%s/%s/jobs/%s", dir, shard, job);
	struct strv fa = {0}, fb = {0};
	struct err e = {0};
	struct stat st;
	if (stat(a, &st) == 0)
		rundirfiles(a, &fa, &e);
	if (stat(b, &st) == 0)
		rundirfiles(b, &fb, &e);
	for (size_t i = 0, j = 0; i < fa.n || j < fb.n;) {
		int c = i == fa.n ? 1 : j == fb.n ? -1 : strcmp(fa.v[i], fb.v[j]);
		if (c == 0 && strcmp(fa.v[i], "events.jsonl.zst") != 0) {
			char ha[65], hb[65], *pa = pathjoin(a, fa.v[i]), *pb = pathjoin(b, fb.v[j]);
			if (sha256file(pa, ha, &e) < 0 || sha256file(pb, hb, &e) < 0 || strcmp(ha, hb) != 0)
				problem(p, "jobs/%s/%s: differs from the one in %s", job, fa.v[i], shard);
			free(pa);
			free(pb);
		} else if (c < 0) {
			problem(p, "jobs/%s/%s: not in %s, which ran the job", job, fa.v[i], shard);
		} else if (c > 0 && strcmp(fb.v[j], "events.jsonl.zst") != 0) {
			problem(p, "jobs/%s/%s: missing, %s holds it", job, fb.v[j], shard);
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	strvfree(&fa);
	strvfree(&fb);
	free(a);
	free(b);
	free(sr);
	free(prefix);
}
