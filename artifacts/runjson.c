/* runjson: read JSON artifacts back, checking names before they are used in paths. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "events.h"
#include "runjson.h"
#include "../manifest/yaml.h"

cJSON *jsonread(const char *path, struct err *e)
{
	struct buf b = {0};
	if (readfile(path, &b, e) < 0)
		return NULL;
	cJSON *j = cJSON_ParseWithLength(b.data, b.len);
	buffree(&b);
	if (!j)
		errf(e, "%s: not JSON", path);
	return j;
}

cJSON *runjsonread(const char *dir, struct err *e)
{
	char *p = pathjoin(dir, "run.json");
	cJSON *r = jsonread(p, e);
	if (r && (!cJSON_IsObject(r) || !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "jobs")))) {
		errf(e, "%s: not a run's run.json (no \"jobs\" object)", p);
		cJSON_Delete(r);
		r = NULL;
	}
	free(p);
	return r;
}

int runnameok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 255 || s[0] == '.' || strstr(s, ".."))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-' || *s == '.'))
			return 0;
	return 1;
}

const char *jsonstr(const cJSON *obj, const char *key, const char *def)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
	return s ? s : def;
}

int jsonwrite(const char *path, const cJSON *j, const struct secrets *sec, struct err *e)
{
	char *text = cJSON_Print(j);
	char *masked = jsonmask(sec, j, text, 1);
	struct buf b = {0};
	bufprintf(&b, "%s\n", masked ? masked : text);
	int rc = writefile(path, b.data, b.len, e);
	buffree(&b);
	free(masked);
	free(text);
	return rc;
}

void jsonaddnums(cJSON *into, const cJSON *from)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, from)
	{
		if (!f->string)
			continue;
		cJSON *t = cJSON_GetObjectItemCaseSensitive(into, f->string);
		if (cJSON_IsNumber(f)) {
			if (!t)
				cJSON_AddNumberToObject(into, f->string, f->valuedouble);
			else if (cJSON_IsNumber(t))
				cJSON_SetNumberValue(t, t->valuedouble + f->valuedouble);
		} else if (cJSON_IsObject(f)) {
			if (!t)
				t = cJSON_AddObjectToObject(into, f->string);
			if (cJSON_IsObject(t))
				jsonaddnums(t, f);
		}
	}
}

cJSON *runmanifestcopy(const char *dir, const cJSON *run)
{
	const char *file = jsonstr(cJSON_GetObjectItemCaseSensitive(run, "manifest"), "file", NULL);
	if (!file || !runnameok(file))
		return NULL;
	char *path = xasprintf("%s/manifest/%s", dir, file);
	struct buf text = {0};
	struct err e = {0};
	struct ydoc y;
	cJSON *out = NULL;
	if (readfile(path, &text, &e) == 0 && yload(&y, file, text.data, text.len, 0, &e) == 0) {
		if (yroot(&y))
			out = yjson(&y, yroot(&y));
		yfree(&y);
	}
	buffree(&text);
	free(path);
	return out;
}

int runjsonseal(const char *dir, cJSON *run, const struct secrets *sec, struct err *e)
{
	cJSON_DeleteItemFromObjectCaseSensitive(run, "events");
	cJSON_DeleteItemFromObjectCaseSensitive(run, "events_head");
	char *logp = pathjoin(dir, "events.jsonl.zst"), *rj = pathjoin(dir, "run.json");
	struct evlog *l;
	unlink(logp); /* finalize: one a killed run began */
	int rc = evopen(&l, logp, sec, e);
	if (rc == 0) {
		rc = evadd(l, "run", cJSON_Duplicate(run, 1), e);
		char head[65];
		memcpy(head, evhead(l), sizeof head);
		double n = (double)evcount(l);
		if (evclose(l, e) < 0)
			rc = -1;
		cJSON_AddNumberToObject(run, "events", n);
		cJSON_AddStringToObject(run, "events_head", head);
	}
	if (rc == 0)
		rc = jsonwrite(rj, run, sec, e);
	free(logp);
	free(rj);
	return rc;
}
