/* changes: what the steps of a run changed in its workspace, read from the snapshot layers.
 *
 * The layers are read in order into a table of every path with its type, mode and content digest;
 * a later layer's entries and whiteouts are compared with the table, so an entry stored again
 * unchanged (a full end layer, a racy file) is no change. Contents are kept only for small regular
 * files that some later layer touches: a first pass reads the later layers' headers. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include "changes.h"
#include "snapshot.h"

struct node {
	char *path;
	char type;
	int live;
	unsigned mode;
	unsigned char digest[32];
	int64_t size;
	char *content; /* small regular files that change later, else NULL */
	size_t ncontent;
};

struct table {
	struct node *v;
	size_t cap, n;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static struct node *find(struct table *t, const char *path, int add)
{
	if (add && (t->n + 1) * 2 > t->cap) {
		struct table g = {xcalloc(t->cap ? t->cap * 2 : 256, sizeof *g.v), t->cap ? t->cap * 2 : 256, 0};
		for (size_t i = 0; i < t->cap; i++)
			if (t->v[i].path) {
				struct node *d = find(&g, t->v[i].path, 1);
				*d = t->v[i];
			}
		free(t->v);
		*t = g;
	}
	if (!t->cap)
		return NULL;
	for (size_t i = hash(path) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->v[i].path) {
			if (!add)
				return NULL;
			t->v[i].path = xstrdup(path);
			t->n++;
			return &t->v[i];
		}
		if (strcmp(t->v[i].path, path) == 0)
			return &t->v[i];
	}
}

static void tablefree(struct table *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		free(t->v[i].path);
		free(t->v[i].content);
	}
	free(t->v);
}

int changestext(const char *s, size_t n)
{
	return s && !memchr(s, 0, n);
}

static int namecmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The layers of rundir in order: NNNN.tar.zst by number, then end.tar.zst. */
static int layers(const char *rundir, struct strv *names, struct err *e)
{
	char *dir = pathjoin(rundir, "snapshots");
	DIR *d = opendir(dir);
	if (!d) {
		free(dir);
		return 0;
	}
	struct dirent *de;
	int haveend = 0;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (strcmp(de->d_name, "end.tar.zst") == 0)
			haveend = 1;
		else if (n == 12 && strspn(de->d_name, "0123456789") == 4 && strcmp(de->d_name + 4, ".tar.zst") == 0)
			strvadd(names, de->d_name);
	}
	closedir(d);
	free(dir);
	qsort(names->v, names->n, sizeof *names->v, namecmp);
	if (haveend)
		strvadd(names, "end.tar.zst");
	(void)e;
	return 0;
}

static int layerstep(const char *name)
{
	return strcmp(name, "end.tar.zst") == 0 ? 0 : atoi(name);
}


static char typeof_(struct archive_entry *en)
{
	switch (archive_entry_filetype(en)) {
	case AE_IFREG: return 'f';
	case AE_IFDIR: return 'd';
	case AE_IFLNK: return 'l';
	default: return '?';
	}
}

/* A path as stored, without a trailing slash. */
static char *cleanpath(const char *p)
{
	char *s = xstrdup(p);
	size_t n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = 0;
	return s;
}

struct reader {
	struct archive *a;
};

static int openlayer(struct reader *r, const char *file, struct err *e)
{
	r->a = archive_read_new();
	archive_read_support_format_tar(r->a);
	archive_read_support_filter_zstd(r->a);
	if (archive_read_open_filename(r->a, file, 1 << 16) != ARCHIVE_OK) {
		errc(e, 4, "%s: %s", file, archive_error_string(r->a));
		archive_read_free(r->a);
		return -1;
	}
	return 0;
}

/* Pass 1: the paths later layers touch (and directories they white out or replace). */
static int wanted(const char *dir, const struct strv *names, struct table *want, struct err *e)
{
	for (size_t i = 1; i < names->n; i++) {
		char *file = pathjoin(dir, names->v[i]);
		struct reader r;
		int rc = openlayer(&r, file, e);
		free(file);
		if (rc < 0)
			return -1;
		struct archive_entry *en;
		while ((rc = archive_read_next_header(r.a, &en)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
			char *p = cleanpath(archive_entry_pathname(en));
			char *base = strrchr(p, '/');
			base = base ? base + 1 : p;
			const char *wk = snapwhiteout(en, base);
			if (wk && strcmp(wk, "file") == 0)
				memmove(base, base + 4, strlen(base + 4) + 1);
			if (!wk || strcmp(wk, "file") == 0)
				find(want, p, 1);
			free(p);
		}
		int bad = rc != ARCHIVE_EOF;
		if (bad)
			errc(e, 4, "%s: %s", names->v[i], archive_error_string(r.a));
		archive_read_free(r.a);
		if (bad)
			return -1;
	}
	return 0;
}

/* Add a change to a layer's list; a path deleted and made again in one layer is one change. */
static void addchange(struct layerchanges *l, const struct node *was, const char *path, char kind, char type,
                      int64_t size, const char *after, size_t nafter)
{
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].path, path) == 0 && l->v[i].kind == 'D' && kind == 'A') {
			l->v[i].kind = 'M';
			l->v[i].type = type;
			l->v[i].size = size;
			l->v[i].after = after ? xstrndup(after, nafter) : NULL;
			l->v[i].nafter = nafter;
			return;
		}
	}
	l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
	struct change *c = &l->v[l->n++];
	memset(c, 0, sizeof *c);
	c->path = xstrdup(path);
	c->kind = kind;
	c->type = type;
	c->size = size;
	if (was && was->content) {
		c->before = xstrndup(was->content, was->ncontent);
		c->nbefore = was->ncontent;
	}
	if (after) {
		c->after = xstrndup(after, nafter);
		c->nafter = nafter;
	}
}

/* Remove a path (and, for a directory, everything under it) from the table. */
static void removetree(struct table *t, const char *path, struct layerchanges *l)
{
	struct node *n = find(t, path, 0);
	if (n && n->live) {
		n->live = 0;
		if (l)
			addchange(l, n, path, 'D', n->type, n->size, NULL, 0);
	}
	size_t len = strlen(path);
	for (size_t i = 0; i < t->cap; i++) {
		struct node *c = &t->v[i];
		if (c->path && c->live && strncmp(c->path, path, len) == 0 && c->path[len] == '/')
			c->live = 0; /* reported as part of its directory */
	}
}

/* Pass 2 for one layer: apply it to the table, noting changes in l (NULL for the first layer). */
static int applyone(const char *file, struct table *t, const struct table *want, struct layerchanges *l,
                    struct err *e)
{
	struct reader r;
	if (openlayer(&r, file, e) < 0)
		return -1;
	struct archive_entry *en;
	struct buf data = {0};
	int rc;
	while ((rc = archive_read_next_header(r.a, &en)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
		char *p = cleanpath(archive_entry_pathname(en));
		char *base = strrchr(p, '/');
		base = base ? base + 1 : p;
		const char *wk = snapwhiteout(en, base);
		if (wk) {
			if (strcmp(wk, "file") == 0) {
				memmove(base, base + 4, strlen(base + 4) + 1);
				removetree(t, p, l);
			} else { /* opaque: the directory's old children are gone */
				*(base > p ? base - 1 : base) = 0;
				size_t len = strlen(p);
				for (size_t i = 0; i < t->cap; i++) {
					struct node *c = &t->v[i];
					if (c->path && c->live && (len == 0 || (strncmp(c->path, p, len) == 0 && c->path[len] == '/')))
						removetree(t, c->path, l);
				}
			}
			free(p);
			continue;
		}
		char type = typeof_(en);
		int64_t size = archive_entry_size(en);
		unsigned char dg[32];
		unsigned int dn = 0;
		data.len = 0;
		EVP_MD_CTX *md = EVP_MD_CTX_new();
		EVP_DigestInit_ex(md, EVP_sha256(), NULL);
		if (type == 'f') {
			const void *blk;
			size_t n;
			la_int64_t off;
			int keep = size <= CHANGE_TEXT_MAX && (!want || find((struct table *)want, p, 0));
			while (archive_read_data_block(r.a, &blk, &n, &off) == ARCHIVE_OK) {
				EVP_DigestUpdate(md, blk, n);
				if (keep)
					bufadd(&data, blk, n);
			}
			if (!keep)
				data.len = 0;
		} else if (type == 'l') {
			const char *to = archive_entry_symlink(en);
			EVP_DigestUpdate(md, to ? to : "", to ? strlen(to) : 0);
		}
		EVP_DigestFinal_ex(md, dg, &dn);
		EVP_MD_CTX_free(md);
		struct node *n = find(t, p, 1);
		unsigned mode = archive_entry_perm(en);
		int was = n->live;
		int same = was && n->type == type && n->mode == mode && memcmp(n->digest, dg, 32) == 0;
		if (l && !same && !(was && type == 'd' && n->type == 'd'))
			addchange(l, was ? n : NULL, p, was ? 'M' : 'A', type, size, type == 'f' && data.len == (size_t)size ? data.data : NULL,
			          data.len);
		if (was && n->type == 'd' && type != 'd')
			removetree(t, p, NULL);
		n->live = 1;
		n->type = type;
		n->mode = mode;
		n->size = size;
		memcpy(n->digest, dg, 32);
		free(n->content);
		n->content = NULL;
		n->ncontent = 0;
		if (type == 'f' && data.len == (size_t)size && size <= CHANGE_TEXT_MAX && (!want || find((struct table *)want, p, 0))) {
			n->content = xmalloc(data.len + 1);
			memcpy(n->content, data.data ? data.data : "", data.len);
			n->content[data.len] = 0;
			n->ncontent = data.len;
		}
		free(p);
	}
	buffree(&data);
	int bad = rc != ARCHIVE_EOF;
	if (bad)
		errc(e, 4, "%s: %s", file, archive_error_string(r.a));
	archive_read_free(r.a);
	return bad ? -1 : 0;
}

static int bypath(const void *a, const void *b)
{
	return strcmp(((const struct change *)a)->path, ((const struct change *)b)->path);
}

int changesread(const char *rundir, struct runchanges *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	struct strv names = {0};
	struct table t = {0}, want = {0};
	char *dir = pathjoin(rundir, "snapshots");
	int rc = layers(rundir, &names, e);
	if (rc == 0 && names.n > 1)
		rc = wanted(dir, &names, &want, e);
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		char *file = pathjoin(dir, names.v[i]);
		struct layerchanges *l = NULL;
		if (i > 0) {
			out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
			l = &out->v[out->n++];
			memset(l, 0, sizeof *l);
			l->layer = xasprintf("snapshots/%s", names.v[i]);
			l->from = layerstep(names.v[i - 1]);
			l->to = layerstep(names.v[i]);
		}
		rc = applyone(file, &t, &want, l, e);
		if (l && l->n)
			qsort(l->v, l->n, sizeof *l->v, bypath);
		free(file);
	}
	free(dir);
	strvfree(&names);
	tablefree(&t);
	tablefree(&want);
	if (rc < 0)
		changesfree(out);
	return rc;
}

const struct layerchanges *changesofstep(const struct runchanges *rc, int step)
{
	for (size_t i = 0; i < rc->n; i++)
		if (step >= rc->v[i].from && (rc->v[i].to == 0 || step < rc->v[i].to))
			return &rc->v[i];
	return NULL;
}

void changesfree(struct runchanges *rc)
{
	for (size_t i = 0; i < rc->n; i++) {
		for (size_t k = 0; k < rc->v[i].n; k++) {
			free((char *)rc->v[i].v[k].path);
			free((char *)rc->v[i].v[k].before);
			free((char *)rc->v[i].v[k].after);
		}
		free(rc->v[i].v);
		free(rc->v[i].layer);
	}
	free(rc->v);
	memset(rc, 0, sizeof *rc);
}
