/* merge: each shard run is copied whole, byte for byte, under shards/<run-id>/: its event logs are
 * hash-chained and name their snapshot layers relative to their own run directory, so nothing in them
 * can be rewritten or renumbered. The merged run.json lists the shards (with the digest of each one's
 * SHA256SUMS) and every job with the shard it ran in; jobs/<job>/ gets copies of the outputs and files,
 * so readers of a run find them where they always are. verify checks each shard as a run of its own. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "merge.h"
#include "rundir.h"
#include "runjson.h"
#include "sign.h"
#include "verify.h"
#include "../util/copy.h"

struct shard {
	const char *dir; /* as given */
	cJSON *run;      /* its run.json */
	const char *id;  /* its run_id */
	int index;       /* I of its "shard": "I/N", or 0 */
};

static int rmone(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path); /* best effort */
	return 0;
}

/* The run at dir must be signed as o asks, finished, and pass verification. */
static int checkshard(const char *dir, const struct mergeopts *o, struct err *e)
{
	char *who = NULL;
	int rc = runsigsource(dir, o ? o->allowed : NULL, o && o->signing, ERR_VERIFY, &who, e);
	free(who);
	if (rc < 0)
		return errctx(e, "cannot merge");
	return runverified(dir, ERR_VERIFY, e) < 0 ? errctx(e, "cannot merge") : 0;
}

static int byindex(const void *a, const void *b)
{
	const struct shard *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

/* How bad a run status is, and the exit code it stands for. */
static int severity(const char *status, int *code)
{
	static const struct {
		const char *name;
		int code;
	} order[] = {{"succeeded", 0}, {"failed", 1}, {"aborted", 3}, {"cancelled", 130}, {"error", 1}};
	for (int i = 0; i < 5; i++)
		if (strcmp(status, order[i].name) == 0) {
			*code = order[i].code;
			return i;
		}
	*code = 1;
	return 1; /* unknown: as bad as failed */
}

static void addusage(cJSON *total, const cJSON *u)
{
	static const char *const keys[] = {"input", "output", "cached", "reasoning"};
	for (int i = 0; i < 4; i++) {
		cJSON *t = cJSON_GetObjectItemCaseSensitive(total, keys[i]);
		double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(u, keys[i]));
		if (v == v) /* not NaN */
			cJSON_SetNumberValue(t, t->valuedouble + v);
	}
}

/* The shards must have run the same manifest with the same inputs and models. */
static int samerun(const struct shard *a, const struct shard *b, struct err *e)
{
	const char *ha = jsonstr(cJSON_GetObjectItemCaseSensitive(a->run, "manifest"), "sha256", "");
	const char *hb = jsonstr(cJSON_GetObjectItemCaseSensitive(b->run, "manifest"), "sha256", "");
	if (!*ha || strcmp(ha, hb) != 0)
		return errc(e, ERR_INPUT, "%s and %s ran different manifests (sha256 %.12s and %.12s)", a->dir, b->dir, ha, hb);
	static const char *const keys[] = {"inputs", "model_overrides"};
	for (int i = 0; i < 2; i++)
		if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(a->run, keys[i]),
		                   cJSON_GetObjectItemCaseSensitive(b->run, keys[i]), 1))
			return errc(e, ERR_INPUT, "%s and %s ran with different %s", a->dir, b->dir, keys[i]);
	return 0;
}

/* Copy jobs/<job>/output.json, jobs/<job>/changes.patch and jobs/<job>/files/ of a shard into the
 * merged run. */
static int copyjob(const char *shard, const char *merged, const char *job, struct err *e)
{
	char *src = xasprintf("%s/jobs/%s", shard, job), *dst = xasprintf("%s/jobs/%s", merged, job);
	char *so = pathjoin(src, "output.json"), *doo = pathjoin(dst, "output.json");
	char *sf = pathjoin(src, "files"), *df = pathjoin(dst, "files");
	char *sp = pathjoin(src, "changes.patch"), *dp = pathjoin(dst, "changes.patch");
	struct stat st;
	int rc = mkdirs(dst, 0755, e);
	if (rc == 0 && lstat(so, &st) == 0)
		rc = S_ISREG(st.st_mode) ? copyfile(so, doo, 0, e) : errc(e, ERR_INPUT, "%s: not a regular file", so);
	if (rc == 0 && lstat(sp, &st) == 0)
		rc = S_ISREG(st.st_mode) ? copyfile(sp, dp, 0, e) : errc(e, ERR_INPUT, "%s: not a regular file", sp);
	if (rc == 0 && lstat(sf, &st) == 0)
		rc = S_ISDIR(st.st_mode) ? copytree(sf, df, e) : errc(e, ERR_INPUT, "%s: not a directory", sf);
	free(src);
	free(dst);
	free(so);
	free(doo);
	free(sf);
	free(df);
	free(sp);
	free(dp);
	return rc;
}

int runmerge(const struct strv *runs, const char *outdir, const struct mergeopts *mo, char **merged, struct err *e)
{
	size_t n = runs->n;
	if (n == 0)
		return errc(e, ERR_INPUT, "merge: no runs given");
	struct shard *s = xcalloc(n, sizeof *s);
	*merged = NULL;
	struct rundir rd = {0};
	cJSON *out = NULL;
	int rc = -1, code = 0, worst = 0, indexed = 1;
	for (size_t i = 0; i < n; i++) {
		s[i].dir = runs->v[i];
		if (checkshard(s[i].dir, mo, e) < 0)
			goto done;
		if (!(s[i].run = runjsonread(s[i].dir, e))) {
			e->kind = ERR_VERIFY;
			goto done;
		}
		s[i].id = jsonstr(s[i].run, "run_id", "");
		if (!runnameok(s[i].id)) {
			errc(e, ERR_INPUT, "%s: run.json has no usable run_id", s[i].dir);
			goto done;
		}
		if (cJSON_GetObjectItemCaseSensitive(s[i].run, "shards")) {
			errc(e, ERR_INPUT, "%s is itself a merged run; merge the shard runs it holds (%s/shards/*) instead", s[i].dir,
			     s[i].dir);
			goto done;
		}
		int si, sn;
		const char *spec = jsonstr(s[i].run, "shard", NULL);
		if (spec && sscanf(spec, "%d/%d", &si, &sn) == 2 && si >= 1)
			s[i].index = si;
		else
			indexed = 0;
		if (i > 0 && samerun(&s[0], &s[i], e) < 0)
			goto done;
		for (size_t k = 0; k < i; k++) {
			if (strcmp(s[k].id, s[i].id) == 0) {
				errc(e, ERR_INPUT, "%s and %s are the same run (%s)", s[k].dir, s[i].dir, s[i].id);
				goto done;
			}
			if (indexed && s[k].index == s[i].index) {
				errc(e, ERR_INPUT, "%s and %s both ran shard %d", s[k].dir, s[i].dir, s[i].index);
				goto done;
			}
		}
	}
	if (indexed)
		qsort(s, n, sizeof *s, byindex);
	/* Every job ran in one shard at most. */
	cJSON *jobs = cJSON_CreateObject(), *j;
	for (size_t i = 0; i < n; i++)
		cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(s[i].run, "jobs"))
		{
			if (!runnameok(j->string)) {
				errc(e, ERR_INPUT, "%s: run.json names a job '%.80s' that is not a job id", s[i].dir, j->string);
				cJSON_Delete(jobs);
				goto done;
			}
			cJSON *had = cJSON_GetObjectItemCaseSensitive(jobs, j->string);
			if (had) {
				errc(e, ERR_INPUT, "job '%s' ran in both %s and %s", j->string, jsonstr(had, "run", "?"), s[i].dir);
				cJSON_Delete(jobs);
				goto done;
			}
			cJSON *c = cJSON_Duplicate(j, 1);
			cJSON_DeleteItemFromObjectCaseSensitive(c, "events_head");
			cJSON_DeleteItemFromObjectCaseSensitive(c, "events");
			char *rel = xasprintf("shards/%s", s[i].id);
			cJSON_AddStringToObject(c, "run", rel);
			free(rel);
			cJSON_AddItemToObject(jobs, j->string, c);
		}
	if (rundircreate(&rd, outdir, e) < 0) {
		cJSON_Delete(jobs);
		goto done;
	}
	*merged = xstrdup(rd.path);
	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "nightshift", NS_VERSION);
	cJSON_AddStringToObject(out, "run_id", rd.id);
	static const char *const same[] = {"manifest", "workspace", "inputs", "model_overrides"};
	for (int k = 0; k < 4; k++) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(s[0].run, same[k]);
		if (v)
			cJSON_AddItemToObject(out, same[k], cJSON_Duplicate(v, 1));
	}
	const char *started = NULL, *ended = NULL;
	for (size_t i = 0; i < n; i++) {
		const char *a = jsonstr(s[i].run, "started", NULL), *b = jsonstr(s[i].run, "ended", NULL);
		if (a && (!started || strcmp(a, started) < 0))
			started = a;
		if (b && (!ended || strcmp(b, ended) > 0))
			ended = b;
		int c, sev = severity(jsonstr(s[i].run, "status", "error"), &c);
		if (sev > worst || i == 0) {
			worst = sev;
			code = c;
		}
	}
	if (started)
		cJSON_AddStringToObject(out, "started", started);
	if (ended)
		cJSON_AddStringToObject(out, "ended", ended);
	{
		static const char *const names[] = {"succeeded", "failed", "aborted", "cancelled", "error"};
		cJSON_AddStringToObject(out, "status", names[worst]);
	}
	/* The manifest as it ran (the same file in every shard), where readers of a run look for it. */
	{
		char *src = pathjoin(s[0].dir, "manifest"), *dst = pathjoin(rd.path, "manifest"), *snaps;
		struct stat st;
		int crc = lstat(src, &st) == 0 && S_ISDIR(st.st_mode) ? copytree(src, dst, e) : 0;
		free(src);
		free(dst);
		snaps = pathjoin(rd.path, "snapshots");
		rmdir(snaps); /* layers stay in their shards: no empty folder that looks like a run's */
		free(snaps);
		if (crc < 0) {
			cJSON_Delete(jobs);
			goto done;
		}
	}
	cJSON *sh = cJSON_AddArrayToObject(out, "shards");
	/* Copy each shard whole, then the jobs' outputs and files. */
	for (size_t i = 0; i < n; i++) {
		char *rel = xasprintf("shards/%s", s[i].id), *dst = pathjoin(rd.path, rel), *sums = NULL, hex[65];
		if (copytree(s[i].dir, dst, e) < 0 || (sums = pathjoin(dst, "SHA256SUMS"), sha256file(sums, hex, e)) < 0) {
			free(rel);
			free(dst);
			free(sums);
			cJSON_Delete(jobs);
			goto done;
		}
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "dir", rel);
		cJSON_AddStringToObject(o, "run_id", s[i].id);
		if (jsonstr(s[i].run, "shard", NULL))
			cJSON_AddStringToObject(o, "shard", jsonstr(s[i].run, "shard", NULL));
		cJSON_AddStringToObject(o, "status", jsonstr(s[i].run, "status", "error"));
		cJSON_AddStringToObject(o, "sha256sums", hex);
		cJSON_AddItemToArray(sh, o);
		free(rel);
		free(dst);
		free(sums);
	}
	cJSON *total = cJSON_CreateObject();
	cJSON_AddNumberToObject(total, "input", 0);
	cJSON_AddNumberToObject(total, "output", 0);
	cJSON_AddNumberToObject(total, "cached", 0);
	cJSON_AddNumberToObject(total, "reasoning", 0);
	cJSON_ArrayForEach(j, jobs)
	{
		char *src = pathjoin(rd.path, jsonstr(j, "run", ""));
		int crc = copyjob(src, rd.path, j->string, e);
		free(src);
		if (crc < 0) {
			cJSON_Delete(jobs);
			cJSON_Delete(total);
			goto done;
		}
		addusage(total, cJSON_GetObjectItemCaseSensitive(j, "usage"));
	}
	cJSON_AddItemToObject(out, "jobs", jobs);
	/* Jobs the shards took from runs that are not part of this merge. */
	cJSON *up = cJSON_CreateObject();
	for (size_t i = 0; i < n; i++)
		cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(s[i].run, "upstream"))
		{
			if (!cJSON_GetObjectItemCaseSensitive(jobs, j->string) && !cJSON_GetObjectItemCaseSensitive(up, j->string))
				cJSON_AddItemToObject(up, j->string, cJSON_Duplicate(j, 1));
		}
	if (cJSON_GetArraySize(up))
		cJSON_AddItemToObject(out, "upstream", up);
	else
		cJSON_Delete(up);
	cJSON_AddItemToObject(out, "usage", total);
	int wrc = runjsonseal(rd.path, out, NULL, e);
	if (wrc < 0)
		goto done;
	int dfd = open(rd.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		syncfs(dfd); /* the copies reach the disk before SHA256SUMS seals them */
		close(dfd);
	}
	if (rundirsums(&rd, e) < 0)
		goto done;
	rc = code;
done:
	if (rc < 0 && rd.path) {
		/* A half-made merge is no run: take it away rather than leave it to be mistaken for one. */
		nftw(rd.path, rmone, 16, FTW_DEPTH | FTW_PHYS);
		free(*merged);
		*merged = NULL;
	}
	cJSON_Delete(out);
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(s[i].run);
	free(s);
	rundirfree(&rd);
	return rc;
}
