/* finalize: what a killed run left, made into a sealed run that restore and replay accept. */
#include <dirent.h>
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
#include "zst.h"

int rununfinished(const char *dir)
{
	char *rj = pathjoin(dir, "run.json"), *jobs = pathjoin(dir, "jobs");
	struct stat st;
	int yes = access(rj, F_OK) != 0 && stat(jobs, &st) == 0 && S_ISDIR(st.st_mode);
	free(rj);
	free(jobs);
	return yes;
}

/* Read a job's log up to its last whole line; rewrite it as one ended frame when it was cut. */
static int sealog(const char *path, cJSON *job, struct err *e)
{
	struct evreader *r;
	if (evropen(&r, path, e) < 0)
		return -1;
	struct buf lines = {0};
	char head[65];
	memset(head, '0', 64);
	head[64] = 0;
	long n = 0;
	const char *line;
	size_t len;
	struct err re = {0};
	while (evrnext(r, &line, &len, &re) == 1) {
		bufadd(&lines, line, len);
		bufputc(&lines, '\n');
		sha256hex(line, len, head);
		n++;
	}
	int cut = evrtruncated(r);
	evrclose(r);
	int rc = 0;
	if (cut) {
		char *tmp = xasprintf("%s.seal", path);
		struct zstw *w;
		rc = zstwopen(&w, tmp, 3, 0, 0, e);
		if (rc == 0 && lines.len)
			rc = zstwrite(w, lines.data, lines.len, e);
		if (rc == 0)
			rc = zstwclose(w, NULL, NULL, e);
		else if (w)
			zstwfree(w);
		if (rc == 0 && rename(tmp, path) < 0)
			rc = errf(e, "rename %s:", tmp);
		if (rc < 0)
			unlink(tmp);
		free(tmp);
	}
	buffree(&lines);
	cJSON_AddStringToObject(job, "status", "incomplete");
	cJSON_AddStringToObject(job, "error", "the run was killed; sealed by nightshift finalize");
	cJSON_AddNumberToObject(job, "events", (double)n);
	cJSON_AddStringToObject(job, "events_head", head);
	return rc;
}

int runfinalize(const char *dir, struct err *e)
{
	if (!rununfinished(dir))
		return errc(e, 2, "%s: not an unfinished run directory (it has run.json, or no jobs/)", dir);
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
	cJSON *run = cJSON_CreateObject(), *jobs = cJSON_AddObjectToObject(run, "jobs");
	char now[32];
	utcnow(now);
	const char *id = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	cJSON_AddStringToObject(run, "nightshift", NS_VERSION);
	cJSON_AddStringToObject(run, "run_id", id);
	cJSON_AddStringToObject(run, "status", "incomplete");
	cJSON_AddStringToObject(run, "finalized", now);
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
			rc = sealog(log, cJSON_AddObjectToObject(jobs, names.v[i]), e);
		free(log);
	}
	strvfree(&names);
	free(jd);
	char *rj = pathjoin(dir, "run.json");
	if (rc == 0)
		rc = jsonwrite(rj, run, NULL, e);
	free(rj);
	cJSON_Delete(run);
	if (rc == 0) {
		struct rundir rd = {.path = xstrdup(dir)};
		rc = rundirsums(&rd, e);
		rundirfree(&rd);
	}
	return rc;
}
