/* verify: SHA256SUMS, then each job's event chain to the head in run.json, then every layer an
 * event references. Streams every file: memory does not grow with the number of events. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "claims.h"
#include "events.h"
#include "rundir.h"
#include "runjson.h"
#include "../snapshot/snapshot.h"
#include "verify.h"

/* One line into report (the first 50 kept), counted in n. */
static void note(struct buf *report, int *n, const char *fmt, va_list ap)
{
	char line[1024];
	vsnprintf(line, sizeof line, fmt, ap);
	if (*n < 50)
		bufprintf(report, "%s\n", line);
	(*n)++;
}

void verdictproblem(struct verdictrun *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note(&v->report, &v->failed, fmt, ap);
	va_end(ap);
}

/* Record a gap in the workspace's history. */
static void verdictgap(struct verdictrun *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verdictgap(struct verdictrun *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note(&v->gapreport, &v->gaps, fmt, ap);
	va_end(ap);
}

/* A JSON number as a long, def when it is not a number or out of range (a tampered file). */
static long jsonlong(const cJSON *n, long def)
{
	return cJSON_IsNumber(n) && n->valuedouble > -9e15 && n->valuedouble < 9e15 ? (long)n->valuedouble : def;
}

/* Every line of SHA256SUMS matches; every file under the run is listed. */
static void checksums(const char *dir, struct verdictrun *v, struct strv *listed)
{
	char *path = pathjoin(dir, "SHA256SUMS");
	FILE *f = fopen(path, "r");
	free(path);
	if (!f) {
		v->incomplete = 1;
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long lineno = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[n - 1] != '\n') {
			verdictproblem(v, "SHA256SUMS:%ld: line not terminated (appended bytes?)", lineno);
			continue;
		}
		line[n - 1] = 0;
		char want[65], hex[65], *rel = NULL;
		struct buf canon = {0};
		if (sumsget(line, (size_t)n - 1, want, &rel) == 0)
			sumsput(&canon, want, rel);
		/* only the spelling nightshift writes (sumsput's, as sha256sum's), or before it escaped a
		 * backslash, that name unescaped */
		if (rel && line[0] != '\\' && !strchr(rel, '\n') && !strchr(rel, '\r')) {
			canon.len = 0;
			bufprintf(&canon, "%s  %s\n", want, rel);
		}
		if (!rel || canon.len != (size_t)n || memcmp(canon.data, line, (size_t)n - 1) != 0) {
			verdictproblem(v, "SHA256SUMS:%ld: malformed line", lineno);
			buffree(&canon);
			free(rel);
			continue;
		}
		buffree(&canon);
		if (rel[0] == '/' || strstr(rel, "..")) {
			verdictproblem(v, "SHA256SUMS:%ld: path %s leaves the run directory", lineno, rel);
			free(rel);
			continue;
		}
		struct err e = {0};
		if (rundirsha(dir, rel, hex, &e) < 0 && e.kind == ERR_VERIFY)
			verdictproblem(v, "%s", e.msg);
		else if (e.msg[0])
			verdictproblem(v, "%s: listed in SHA256SUMS but missing", rel);
		else if (memcmp(hex, want, 64) != 0)
			verdictproblem(v, "%s: digest differs from SHA256SUMS (changed)", rel);
		strvadd(listed, rel);
		free(rel);
		v->files++;
	}
	free(line);
	fclose(f);
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files present but not in SHA256SUMS. */
static void unlisted(const char *root, struct strv *listed, struct verdictrun *v)
{
	struct strv files = {0};
	struct err e = {0};
	if (listed->n)
		qsort(listed->v, listed->n, sizeof *listed->v, cmpstr);
	if (rundirfiles(root, &files, &e) < 0)
		verdictproblem(v, "%s", e.msg);
	for (size_t i = 0; i < files.n; i++)
		if (!listed->n || !bsearch(&files.v[i], listed->v, listed->n, sizeof *listed->v, cmpstr))
			verdictproblem(v, "%s: not listed in SHA256SUMS (added)", files.v[i]);
	strvfree(&files);
}

/* One chain (rel): seq from 0, prev links, head and count as info (run.json's entry) says; layers
 * exist. Lines that claims are checked against go into f when given. */
static void checkchain(const char *dir, const char *rel, const cJSON *info, struct verdictrun *v, struct facts *f,
                       struct strv *layers)
{
	char *path = pathjoin(dir, rel);
	if (f)
		f->log = xstrdup(rel);
	struct evreader *r;
	struct err e = {0};
	if (evropen(&r, path, &e) < 0) {
		/* An unfinished run may have been killed between making a job's folder and its log. */
		if (info)
			verdictproblem(v, "%s: missing", rel);
		free(path);
		return;
	}
	char prev[65];
	memset(prev, '0', 64);
	prev[64] = 0;
	long n = 0;
	const char *line;
	size_t len;
	int rc;
	while ((rc = evrnext(r, &line, &len, &e)) == 1) {
		long seq = -1;
		char type[32] = "", got[65] = "";
		cJSON *ev = NULL;
		int fast = evfields(line, len, &seq, type, got);
		if (!fast || strcmp(type, "snapshot") == 0 || (f && factswanted(type))) {
			ev = cJSON_ParseWithLength(line, len);
			const cJSON *s = cJSON_GetObjectItemCaseSensitive(ev, "seq");
			const char *p = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "prev"));
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "type"));
			seq = jsonlong(s, -1);
			snprintf(got, sizeof got, "%s", p ? p : "");
			snprintf(type, sizeof type, "%s", t ? t : "");
			if (!ev)
				verdictproblem(v, "%s:%ld: not JSON", rel, n + 1);
		}
		if (seq != n)
			verdictproblem(v, "%s:%ld: seq is not %ld (lines removed, added or reordered)", rel, n + 1, n);
		else if (strcmp(got, prev) != 0)
			verdictproblem(v, "%s:%ld: prev does not match the SHA-256 of line %ld", rel, n + 1, n);
		const char *layer = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "layer"));
		const char *digest = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "sha256"));
		if (strcmp(type, "snapshot") == 0 && layer) {
			strvadd(layers, layer);
			char hex[65];
			struct err le = {0};
			if (strstr(layer, "..") || layer[0] == '/')
				verdictproblem(v, "%s:%ld: layer path %s leaves the run", rel, n + 1, layer);
			else if (rundirsha(dir, layer, hex, &le) < 0)
				verdictproblem(v, "%s:%ld: layer %s is %s", rel, n + 1, layer, le.kind == ERR_VERIFY ? le.msg : "missing");
			else if (!digest || strcmp(hex, digest) != 0)
				verdictproblem(v, "%s: digest differs from the one recorded at %s:%ld", layer, rel, n + 1);
			v->layers++;
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ev, "incomplete")))
				verdictgap(v, "%s:%ld: layer %s is incomplete: the job's timeout ran out while it was written", rel, n + 1,
				           layer);
		}
		if (f && ev && factswanted(type))
			factsnote(f, ev, type, n + 1);
		else
			cJSON_Delete(ev);
		sha256hex(line, len, prev);
		n++;
	}
	if (rc < 0)
		verdictproblem(v, "%s:%ld: %s", rel, n + 1, e.msg);
	int cut = evrtruncated(r);
	evrclose(r);
	v->events += n;
	const char *head = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(info, "events_head"));
	const cJSON *count = cJSON_GetObjectItemCaseSensitive(info, "events");
	if (info) {
		if (cut)
			verdictproblem(v, "%s:%ld: ends inside a line or a zstd frame", rel, n + 1);
		if (!head || strcmp(head, prev) != 0)
			verdictproblem(v, "%s:%ld: last line's digest is not the events_head in run.json (lines cut or appended)",
			        rel, n);
		if (jsonlong(count, -1) != n)
			verdictproblem(v, "%s: %ld events, run.json says %ld", rel, n, jsonlong(count, -1));
	}
	free(path);
}

static void mergeverify(const char *dir, const cJSON *run, struct verdictrun *v);

/* Every file under snapshots/ is a layer an event recorded (its digest checked there) or one that
 * run.json's sealed_layers lists, with the digest it lists: nothing added to or swapped into a
 * chain (a layer between two steps, another end layer) passes with SHA256SUMS written again. A run
 * from before sealed_layers is not held to it. */
static void sealedlayers(const char *dir, const cJSON *run, struct strv *seen, struct verdictrun *v)
{
	const cJSON *sealed = cJSON_GetObjectItemCaseSensitive(run, "sealed_layers"), *s;
	if (!sealed)
		return;
	if (!cJSON_IsObject(sealed)) {
		verdictproblem(v, "run.json: sealed_layers is not an object");
		return;
	}
	struct strv files = {0};
	struct err e = {0};
	if (rundirlayers(dir, &files, &e) < 0)
		verdictproblem(v, "%s", e.msg);
	if (seen->n)
		qsort(seen->v, seen->n, sizeof *seen->v, cmpstr);
	for (size_t i = 0; i < files.n; i++) {
		if (seen->n && bsearch(&files.v[i], seen->v, seen->n, sizeof *seen->v, cmpstr))
			continue;
		const char *want = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sealed, files.v[i]));
		char hex[65];
		if (!want)
			verdictproblem(v, "%s: a layer no event and no run.json sealed_layers entry records (added)", files.v[i]);
		else if (rundirsha(dir, files.v[i], hex, &e) < 0 || strcmp(hex, want) != 0)
			verdictproblem(v, "%s: digest differs from run.json's sealed_layers", files.v[i]);
	}
	cJSON_ArrayForEach(s, sealed)
	{
		size_t k = 0;
		while (k < files.n && strcmp(files.v[k], s->string) != 0)
			k++;
		/* a layer gone is a gap, as an event's is; a chain's end layer endlayers says once */
		const char *base = strrchr(s->string, '/');
		if (k == files.n && strcmp(base ? base + 1 : s->string, "end.tar.zst") != 0)
			verdictgap(v, "%.200s: in run.json's sealed_layers, missing", s->string);
	}
	strvfree(&files);
}

/* A sealed run has an end layer in each chain of snapshots/ (one there, or one per workspace folder). */
static void endlayers(const char *dir, struct verdictrun *v)
{
	char *sd = pathjoin(dir, "snapshots");
	struct stat st;
	struct strv c = {0};
	snapchains(dir, &c);
	/* one chain in snapshots/ itself (or no layer at all: then only when snapshots/ is there), or
	 * one per workspace folder */
	size_t n = !c.n || !*c.v[0] ? 1 : c.n;
	for (size_t i = 0; i < n; i++) {
		const char *ws = c.n ? c.v[i] : "";
		char *rel = layerpath(ws, LAYER_END, 0), *end = pathjoin(dir, rel);
		if ((c.n || stat(sd, &st) == 0) && stat(end, &st) < 0)
			verdictgap(v, "%s: missing: the workspace after the last step was not stored", rel);
		free(rel);
		free(end);
	}
	strvfree(&c);
	free(sd);
}

int runverify(const char *dir, struct verdictrun *v, struct err *e)
{
	struct strv listed = {0};
	memset(v, 0, sizeof *v);
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return errc(e, ERR_INPUT, "%s: not a run directory", dir);
	/* Only regular files and folders: a link or a fifo is refused before anything is read (a
	 * link would show what it points to as the run's, a fifo would hold the reader forever). */
	struct strv odd = {0};
	struct err oe = {0};
	if (rundirodd(dir, &odd, &oe) < 0)
		verdictproblem(v, "%s", oe.msg);
	for (size_t i = 0; i < odd.n; i++)
		verdictproblem(v, "%s; a run directory holds only regular files and folders", odd.v[i]);
	size_t nodd = odd.n;
	strvfree(&odd);
	if (v->failed || nodd)
		return 0;
	checksums(dir, v, &listed);
	if (!v->incomplete)
		unlisted(dir, &listed, v);
	strvfree(&listed);
	char *rp = pathjoin(dir, "run.json");
	struct buf text = {0};
	struct err re = {0};
	cJSON *run = readfile(rp, &text, &re) == 0 ? cJSON_Parse(text.data) : NULL;
	free(rp);
	buffree(&text);
	if (!run) {
		if (!v->incomplete)
			verdictproblem(v, "run.json: missing or not JSON");
		v->incomplete = 1;
	}
	/* Complete runs: the jobs run.json names. Incomplete: whatever job folders exist. */
	cJSON *jobs = cJSON_GetObjectItemCaseSensitive(run, "jobs"), *j;
	if (run && !v->incomplete) {
		/* Each chain, then what run.json and the job folders claim against what they recorded. */
		size_t nj = (size_t)cJSON_GetArraySize(jobs), k = 0;
		struct facts rf = {0}, *jf = xcalloc(nj + 1, sizeof *jf);
		struct strv problems = {0};
		int finalized = cJSON_GetObjectItemCaseSensitive(run, "finalized") != NULL;
		struct strv seen = {0};
		checkchain(dir, "events.jsonl.zst", run, v, &rf, &seen);
		cJSON_ArrayForEach(j, jobs)
		{
			if (!runnameok(j->string)) {
				verdictproblem(v, "run.json: job '%.80s' is not a job id", j->string);
			} else if (cJSON_GetObjectItemCaseSensitive(j, "events_head")) {
				char *rel = xasprintf("jobs/%s/events.jsonl.zst", j->string);
				checkchain(dir, rel, j, v, &jf[k], &seen);
				claimsjob(dir, j->string, j, &jf[k], finalized, &problems);
				free(rel);
			} else if (!cJSON_GetObjectItemCaseSensitive(j, "run")) {
				claimsjob(dir, j->string, j, NULL, finalized, &problems); /* never started: nothing of it may be there */
			}
			k++;
		}
		claimsrun(dir, run, &rf, jf, k, &problems);
		/* Gaps in the workspace's history: a snapshot that failed, an end layer that is not there
		 * (a run that finalize sealed after a crash never wrote one). */
		cJSON_ArrayForEach(j, jobs)
		{
			const char *err = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "error"));
			if (err && strncmp(err, "snapshot before step ", 21) == 0)
				verdictgap(v, "run.json: job %.80s: %.300s", j->string, err);
		}
		if (!finalized && !cJSON_GetObjectItemCaseSensitive(run, "shards"))
			endlayers(dir, v);
		sealedlayers(dir, run, &seen, v);
		strvfree(&seen);
		for (size_t i = 0; i < problems.n; i++)
			verdictproblem(v, "%s", problems.v[i]);
		strvfree(&problems);
		for (size_t i = 0; i < k; i++)
			factsfree(&jf[i]);
		free(jf);
		factsfree(&rf);
		mergeverify(dir, run, v); /* a merged run: each shard, as a run of its own */
	} else {
		char *jd = pathjoin(dir, "jobs");
		DIR *d = opendir(jd);
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.') {
				char *rel = xasprintf("jobs/%s/events.jsonl.zst", de->d_name);
				struct strv seen = {0}; /* an unfinished run has no run.json to hold its layers to */
				checkchain(dir, rel, NULL, v, NULL, &seen);
				strvfree(&seen);
				free(rel);
			}
		if (d)
			closedir(d);
		free(jd);
	}
	cJSON_Delete(run);
	return 0;
}

int runverified(const char *dir, enum errkind kind, struct err *e)
{
	struct verdictrun v;
	if (runverify(dir, &v, e) < 0)
		return -1;
	int rc = 0;
	if (v.incomplete)
		rc = errc(e, kind, "%s: the run did not finish (no SHA256SUMS or run.json)", dir);
	else if (v.failed) {
		char *nl = v.report.data ? strchr(v.report.data, '\n') : NULL;
		if (nl)
			*nl = 0;
		rc = errc(e, kind, "%s: verification failed (%d problems; first: %s)", dir, v.failed,
		          v.report.data ? v.report.data : "?");
	}
	verdictrunfree(&v);
	return rc;
}

void verdictrunfree(struct verdictrun *v)
{
	buffree(&v->report);
	buffree(&v->gapreport);
}

/* The shard at dir/rel: a whole run, pinned, and agreeing with the jobs the top says it ran. */
static void verifyshard(const char *dir, const char *rel, const cJSON *run, const cJSON *pin, const cJSON *jobs,
                        struct verdictrun *v)
{
	char *sub = pathjoin(dir, rel), *sums = pathjoin(rel, "SHA256SUMS"), hex[65];
	struct err e = {0};
	cJSON *sr = runjsonread(sub, &e), *j;
	if (!sr) {
		verdictproblem(v, "%s/run.json: missing or not a run's", rel);
	} else if (cJSON_GetObjectItemCaseSensitive(sr, "shards")) {
		verdictproblem(v, "%s: a shard that is itself a merged run", rel);
	} else {
		struct verdictrun sv;
		if (runverify(sub, &sv, &e) < 0) {
			verdictproblem(v, "%s: %s", rel, e.msg);
		} else {
			int lines = 0;
			for (char *l = sv.report.data, *nl; l && *l; l = nl + 1) {
				if (!(nl = strchr(l, '\n')))
					break;
				*nl = 0;
				verdictproblem(v, "%s/%s", rel, l);
				lines++;
			}
			v->failed += sv.failed - lines;
			for (char *l = sv.gapreport.data, *nl; l && *l; l = nl + 1) {
				if (!(nl = strchr(l, '\n')))
					break;
				*nl = 0;
				verdictgap(v, "%s/%s", rel, l);
			}
			if (sv.incomplete)
				verdictproblem(v, "%s: the shard run did not finish", rel);
			v->events += sv.events;
			v->layers += sv.layers;
			verdictrunfree(&sv);
		}
	}
	const char *ours = jsonstr(cJSON_GetObjectItemCaseSensitive(run, "manifest"), "sha256", "");
	const char *theirs = jsonstr(cJSON_GetObjectItemCaseSensitive(sr, "manifest"), "sha256", "");
	if (sr && strcmp(ours, theirs) != 0)
		verdictproblem(v, "run.json: manifest.sha256 is %.16s..., %s/run.json ran %.16s...", *ours ? ours : "absent", rel,
		               *theirs ? theirs : "absent");
	if (rundirsha(dir, sums, hex, &e) < 0 || strcmp(hex, jsonstr(pin, "sha256sums", "")) != 0)
		verdictproblem(v, "%s/SHA256SUMS: digest differs from the one run.json pinned at the merge", rel);
	/* Each job the shard ran is at the top, with its status and the same output. */
	cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(sr, "jobs"))
	{
		const cJSON *top = cJSON_GetObjectItemCaseSensitive(jobs, j->string);
		if (!runnameok(j->string)) {
			verdictproblem(v, "%s/run.json: job '%.80s' is not a job id", rel, j->string);
			continue;
		}
		if (!top || strcmp(jsonstr(top, "run", ""), rel) != 0) {
			verdictproblem(v, "run.json: job %s, run in %s, is not listed as run there", j->string, rel);
			continue;
		}
		struct strv problems = {0};
		claimsmerged(dir, rel, j->string, top, j, &problems);
		for (size_t i = 0; i < problems.n; i++)
			verdictproblem(v, "%s", problems.v[i]);
		strvfree(&problems);
	}
	cJSON_ArrayForEach(j, jobs)
	{
		if (sr && strcmp(jsonstr(j, "run", ""), rel) == 0 &&
		    !cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sr, "jobs"), j->string))
			verdictproblem(v, "run.json: job %.80s is said to have run in %s, which has no such job", j->string, rel);
	}
	cJSON_Delete(sr);
	free(sums);
	free(sub);
}

static void mergeverify(const char *dir, const cJSON *run, struct verdictrun *v)
{
	const cJSON *shards = cJSON_GetObjectItemCaseSensitive(run, "shards"), *s, *j;
	const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(run, "jobs");
	if (!shards)
		return;
	if (!cJSON_IsArray(shards)) {
		verdictproblem(v, "run.json: \"shards\" is not a list");
		return;
	}
	struct strv dirs = {0};
	cJSON_ArrayForEach(s, shards)
	{
		const char *rel = jsonstr(s, "dir", "");
		if (strncmp(rel, "shards/", 7) != 0 || !runnameok(rel + 7)) {
			verdictproblem(v, "run.json: shard dir '%.100s' is not shards/<run-id>", rel);
			continue;
		}
		strvadd(&dirs, rel);
		verifyshard(dir, rel, run, s, jobs, v);
	}
	cJSON_ArrayForEach(j, jobs)
	{
		const char *rel = jsonstr(j, "run", "");
		size_t k = 0;
		while (k < dirs.n && strcmp(dirs.v[k], rel) != 0)
			k++;
		if (k == dirs.n)
			verdictproblem(v, "run.json: job %.80s names no shard of this run ('%.100s')", j->string, rel);
	}
	strvfree(&dirs);
}
