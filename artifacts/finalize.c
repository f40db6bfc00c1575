/* finalize: what a killed run left, made into a sealed run that restore and replay accept. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "events.h"
#include "finalize.h"
#include "rundir.h"
#include "runjson.h"
#include "../util/zst.h"

int rununfinished(const char *dir)
{
	char *rj = pathjoin(dir, "run.json"), *jobs = pathjoin(dir, "jobs");
	struct stat st;
	int yes = access(rj, F_OK) != 0 && stat(jobs, &st) == 0 && S_ISDIR(st.st_mode);
	free(rj);
	free(jobs);
	return yes;
}

static int typeis(const cJSON *ev, const char *t)
{
	return strcmp(jsonstr(ev, "type", ""), t) == 0;
}

int jobrecover(const char *path, int keep, struct recovered *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	memset(r->head, '0', 64);
	struct evreader *rd;
	if (evropen(&rd, path, e) < 0)
		return -1;
	cJSON *end = NULL, *usage = cJSON_CreateObject();
	const char *worker = NULL;
	cJSON *start = NULL;
	long turns = 0, steps = 0;
	const char *line;
	size_t len;
	struct err re = {0};
	int rc;
	while ((rc = evrnext(rd, &line, &len, &re)) == 1) {
		if (keep) {
			bufadd(&r->lines, line, len);
			bufputc(&r->lines, '\n');
		}
		sha256hex(line, len, r->head);
		r->events++;
		cJSON *ev = cJSON_ParseWithLength(line, len);
		snprintf(r->ended, sizeof r->ended, "%s", jsonstr(ev, "time", r->ended));
		if (typeis(ev, "model_request"))
			turns++;
		else if (typeis(ev, "decision"))
			steps++;
		else if (typeis(ev, "model_response") || typeis(ev, "context_compacted"))
			jsonaddnums(usage, cJSON_GetObjectItemCaseSensitive(ev, "usage"));
		if (r->events == 1 && typeis(ev, "job_start")) {
			start = ev;
			continue;
		}
		if (typeis(ev, "job_end")) {
			cJSON_Delete(end);
			end = ev;
			continue;
		}
		cJSON_Delete(ev);
	}
	r->cut = evrtruncated(rd);
	evrclose(rd);
	if (rc < 0 && !r->cut) { /* not a crash's cut (its lines are kept): a line no writer makes */
		cJSON_Delete(start);
		cJSON_Delete(end);
		cJSON_Delete(usage);
		buffree(&r->lines);
		*e = re;
		return -1;
	}
	worker = jsonstr(start, "worker", NULL);
	snprintf(r->started, sizeof r->started, "%s", jsonstr(start, "time", ""));
	r->manifest = cJSON_DetachItemFromObjectCaseSensitive(start, "manifest");
	r->job = cJSON_CreateObject();
	if (end) {
		/* The job ended before the kill: what it said of itself at the end. */
		cJSON *f;
		cJSON_ArrayForEach(f, end)
			if (strcmp(f->string, "seq") && strcmp(f->string, "time") && strcmp(f->string, "type") &&
			    strcmp(f->string, "prev"))
				cJSON_AddItemToObject(r->job, f->string, cJSON_Duplicate(f, 1));
		cJSON_Delete(usage);
	} else {
		cJSON_AddStringToObject(r->job, "status", "incomplete");
		cJSON_AddStringToObject(r->job, "error", "the run was killed; sealed by nightshift finalize");
		cJSON_AddNumberToObject(r->job, "turns", (double)turns);
		cJSON_AddNumberToObject(r->job, "steps", (double)steps);
		cJSON_AddItemToObject(r->job, "usage", usage);
	}
	if (worker && !cJSON_GetObjectItemCaseSensitive(r->job, "worker"))
		cJSON_AddStringToObject(r->job, "worker", worker);
	/* a matrix member says so, as run.json would have: --resume makes the matrix again and
	 * carries the members it finds succeeded with the same values */
	const cJSON *mx = cJSON_GetObjectItemCaseSensitive(start, "matrix");
	if (cJSON_IsObject(mx) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(mx, "job")) &&
	    !cJSON_GetObjectItemCaseSensitive(r->job, "matrix"))
		cJSON_AddItemToObject(r->job, "matrix", cJSON_Duplicate(mx, 1));
	cJSON_Delete(start);
	cJSON_Delete(end);
	return 0;
}

void recoveredfree(struct recovered *r)
{
	cJSON_Delete(r->job);
	cJSON_Delete(r->manifest);
	buffree(&r->lines);
}

/* Recover a job from its log into jobs; rewrite the log as one ended frame when it was cut. */
static int sealog(const char *path, const char *name, cJSON *run, struct err *e)
{
	struct recovered r;
	if (jobrecover(path, 1, &r, e) < 0)
		return -1;
	int rc = 0;
	if (r.cut) { /* a new file renamed over the log: nothing the run folder holds is written through */
		struct zstw *w;
		rc = zstwopen(&w, path, 3, 0, ZSTW_PLACE, e);
		if (rc == 0 && r.lines.len)
			rc = zstwrite(w, r.lines.data, r.lines.len, e);
		if (rc == 0)
			rc = zstwclose(w, NULL, NULL, e);
		else if (w)
			zstwfree(w);
	}
	cJSON_AddNumberToObject(r.job, "events", (double)r.events);
	cJSON_AddStringToObject(r.job, "events_head", r.head);
	jsonaddnums(cJSON_GetObjectItemCaseSensitive(run, "usage"), cJSON_GetObjectItemCaseSensitive(r.job, "usage"));
	cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(run, "jobs"), name, r.job);
	r.job = NULL;
	/* The run started with its first job; every job names the same manifest. */
	cJSON *st = cJSON_GetObjectItemCaseSensitive(run, "started");
	if (r.started[0] && (!cJSON_IsString(st) || strcmp(r.started, st->valuestring) < 0)) {
		cJSON_DeleteItemFromObjectCaseSensitive(run, "started");
		cJSON_AddStringToObject(run, "started", r.started);
	}
	if (r.manifest && !cJSON_GetObjectItemCaseSensitive(run, "manifest")) {
		cJSON_AddItemToObject(run, "manifest", r.manifest);
		r.manifest = NULL;
	}
	recoveredfree(&r);
	return rc;
}

int runfinalize(const char *dir, struct err *e)
{
	if (!rununfinished(dir))
		return errc(e, ERR_INPUT, "%s: not an unfinished run directory (it has run.json, or no jobs/)", dir);
	int lock = rundirlock(dir);
	if (lock < 0 && errno == EWOULDBLOCK) {
		long pid = rundirholder(dir);
		if (pid > 0)
			return errc(e, ERR_INPUT, "%s: still running (pid %ld); stop it first", dir, pid);
		return errc(e, ERR_INPUT, "%s: still running (a live process holds it); stop it first", dir);
	}
	if (lock >= 0)
		close(lock); /* a run made before runs were locked has none to take */
	struct strv files = {0};
	if (rundirfiles(dir, &files, e) < 0)
		return -1;
	int rc = 0;
	/* Leftovers of writes that never finished: temporary files by their names. */
	for (size_t i = 0; rc == 0 && i < files.n; i++) {
		const char *f = files.v[i], *base = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
		if (strstr(f, ".tmp.") || (base[0] == '.' && strstr(base, ".tmp"))) {
			char *p = pathjoin(dir, f);
			if (unlink(p) < 0)
				rc = errf(e, "remove %s:", p);
			free(p);
		}
	}
	strvfree(&files);
	cJSON *run = cJSON_CreateObject();
	char now[32];
	utcnow(now);
	const char *id = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	cJSON_AddStringToObject(run, "nightshift", NS_VERSION);
	cJSON_AddStringToObject(run, "run_id", id);
	cJSON_AddStringToObject(run, "status", "incomplete");
	cJSON_AddStringToObject(run, "finalized", now);
	cJSON_AddObjectToObject(run, "usage");
	cJSON_AddObjectToObject(run, "jobs");
	char *jd = pathjoin(dir, "jobs");
	DIR *d = opendir(jd);
	struct dirent *de;
	struct strv names = {0};
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			strvadd(&names, de->d_name);
	if (d)
		closedir(d);
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		char *log = xasprintf("%s/%s/events.jsonl.zst", jd, names.v[i]);
		if (access(log, F_OK) == 0)
			rc = sealog(log, names.v[i], run, e);
		free(log);
	}
	strvfree(&names);
	free(jd);
	char *rj = pathjoin(dir, "run.json");
	if (rc == 0)
		rc = runjsonseal(dir, run, NULL, e);
	free(rj);
	cJSON_Delete(run);
	if (rc == 0) {
		struct rundir rd = {.path = xstrdup(dir)};
		rc = rundirsums(&rd, e);
		rundirfree(&rd);
	}
	return rc;
}
