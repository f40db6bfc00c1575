/* changes: what the steps of a run changed in its workspace, read from the snapshot layers.
 *
 * The layers are read in order into a table of every path with its type, mode and content digest;
 * a later layer's entries and whiteouts are compared with the table, so an entry stored again
 * unchanged (a full end layer, a racy file) is no change. Contents are kept only for small regular
 * files that some later layer touches: a first pass reads the later layers' headers. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include <unistd.h>
#include "../snapshot/bound.h"
#include "../snapshot/frames.h"
#include "calls.h"
#include "changes.h"
#include "events.h"
#include "rundir.h"
#include "runjson.h"
#include "../snapshot/snapshot.h"
#include "../util/gitindex.h"
#include "../util/zst.h"

struct node {
	char *path;
	char type;
	int live;
	unsigned mode;
	unsigned char digest[32];
	unsigned char sum[32]; /* the digest of what it means (see struct change) */
	int64_t size;
	int seen;      /* the last layer that stored it (1 + its place in the chain) */
	int gone;      /* the last layer that removed it */
	size_t didx;   /* its deletion in that layer's list, when reported there (D, to be an M if made again) */
	int dgen;      /* the layer of didx, or 0 */
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
			if (t->v[i].path) { /* moved, path and all (find would copy the path) */
				size_t k = hash(t->v[i].path) & (g.cap - 1);
				while (g.v[k].path)
					k = (k + 1) & (g.cap - 1);
				g.v[k] = t->v[i];
				g.n++;
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

/* By step; a run's old end after the layer of its last step. */
/* The layers of the chain in folder dir in order: NNNN.tar.zst by number (a resumed run's carried
 * NNNN.end.tar.zst after NNNN's), then end.tar.zst. */
static void layers(const char *dir, struct strv *names)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)))
		if (layerparse(de->d_name, NULL) != LAYER_NONE)
			strvadd(names, de->d_name);
	closedir(d);
	if (names->n > 1)
		qsort(names->v, names->n, sizeof *names->v, layercmp);
}

/* The step a layer's changes end at: a carried NNNN.end is after step NNNN, end.tar.zst is 0. */
static int layerstep(const char *name)
{
	int n = 0;
	return layerparse(name, &n) == LAYER_OLDEND ? n + 1 : n;
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
	struct zstr *z;  /* the layer, opened beneath its folder through no link */
	char buf[1 << 16];
	struct bound *b; /* what reading the chain may take */
	int64_t seen;    /* decompressed bytes counted against b so far */
	struct framecheck fc; /* its entries held to its frame index */
};

/* Count what the layer decompressed since the last call against the bound. */
static int readerbound(struct reader *r, struct err *e)
{
	int64_t n = archive_filter_bytes(r->a, 0);
	int rc = n > r->seen ? boundstream(r->b, n - r->seen, e) : 0;
	r->seen = n;
	return rc;
}

/* Count an entry against the bound before its data is read, and hold it to the frame index. */
static int readerentry(struct reader *r, struct archive_entry *en, const char *path, struct err *e)
{
	if (framecheckentry(&r->fc, r->a, en, snapspecial(en), e) < 0)
		return -1;
	int64_t size = archive_entry_filetype(en) == AE_IFREG && !archive_entry_hardlink(en) ? archive_entry_size(en) : 0;
	if (boundentry(r->b, path, bounddata(en), size, e) < 0)
		return -1;
	return readerbound(r, e);
}

static void closelayer(struct reader *r)
{
	archive_read_free(r->a);
	zstrfree(r->z);
	framecheckfree(&r->fc);
}

/* After the tar's end: whether the layer read to it whole (rc the last header's), its index held. */
static int readerend(struct reader *r, int rc, const char *file, struct err *e)
{
	if (rc != ARCHIVE_EOF)
		return errc(e, ERR_VERIFY, "%s: %s", file, archive_error_string(r->a));
	return framecheckend(&r->fc, e) < 0 ? errctx(e, "%s", file) : 0;
}

/* The layer decompressed through zst (no skippable frame: 4 GiB of a sparse file's holes were
 * read through for no byte out, attack12). */
static la_ssize_t readercb(struct archive *a, void *arg, const void **p)
{
	struct reader *r = arg;
	struct err e = {0};
	*p = r->buf;
	ssize_t n = zstread(r->z, r->buf, sizeof r->buf, &e);
	if (n < 0)
		archive_set_error(a, EIO, "%s", e.msg);
	return n < 0 ? ARCHIVE_FATAL : n;
}

static int openlayer(struct reader *r, const char *file, struct bound *b, struct err *e)
{
	r->b = b;
	r->seen = 0;
	const char *slash = strrchr(file, '/');
	char *dir = slash ? xasprintf("%.*s", (int)(slash - file), file) : xstrdup(".");
	int fd = rundiropen(dir, slash ? slash + 1 : file, e);
	free(dir);
	memset(&r->fc, 0, sizeof r->fc);
	if (fd < 0 || zstrfdopen(&r->z, fd, file, ZSTR_NOSKIP, e) < 0)
		return -1;
	if (framecheckopen(&r->fc, r->z, e) < 0) {
		zstrfree(r->z);
		return errctx(e, "%s", file);
	}
	r->a = archive_read_new();
	archive_read_support_format_tar(r->a);
	if (archive_read_open(r->a, r, NULL, readercb, NULL) != ARCHIVE_OK) {
		errc(e, ERR_VERIFY, "%s: %s", file, archive_error_string(r->a));
		closelayer(r);
		return -1;
	}
	return 0;
}

/* Pass 1: the paths later layers touch (and directories they white out or replace). */
static int wanted(const char *dir, const struct strv *names, struct table *want, struct bound *b, struct err *e)
{
	for (size_t i = 1; i < names->n; i++) {
		char *file = pathjoin(dir, names->v[i]);
		struct reader r;
		int rc = openlayer(&r, file, b, e);
		free(file);
		if (rc < 0)
			return -1;
		struct archive_entry *en;
		while ((rc = archive_read_next_header(r.a, &en)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
			if (readerentry(&r, en, archive_entry_pathname(en), e) < 0) {
				closelayer(&r);
				return errctx(e, "layer %s/%s", dir, names->v[i]);
			}
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
		int bad = readerend(&r, rc, names->v[i], e) < 0;
		closelayer(&r);
		if (bad)
			return -1;
	}
	return 0;
}

/* Add a change to a layer's list; a path deleted and made again in one layer is one change. n is
 * the path's node (NULL for none), was whether its old state is the change's before. */
static struct change *addchange(struct layerchanges *l, int gen, struct node *n, int was, const char *path, char kind,
                                char type, int64_t size, const char *after, size_t nafter)
{
	if (kind == 'A' && n && n->dgen == gen && n->didx < l->n && l->v[n->didx].kind == 'D') {
		struct change *c = &l->v[n->didx];
		c->kind = 'M';
		c->type = type;
		c->size = size;
		c->after = after ? xstrndup(after, nafter) : NULL;
		c->nafter = nafter;
		n->dgen = 0;
		return c;
	}
	l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
	struct change *c = &l->v[l->n++];
	memset(c, 0, sizeof *c);
	c->path = xstrdup(path);
	c->kind = kind;
	c->type = type;
	c->size = size;
	if (was && n && n->content) {
		c->before = xstrndup(n->content, n->ncontent);
		c->nbefore = n->ncontent;
	}
	if (after) {
		c->after = xstrndup(after, nafter);
		c->nafter = nafter;
	}
	if (kind == 'D' && n) {
		n->dgen = gen;
		n->didx = l->n - 1;
		c->mode = n->mode;
		memcpy(c->sum, n->sum, 32);
	}
	return c;
}

/* Remove a path (and, for a directory, everything under it) from the table in layer gen; the
 * path itself is reported in l (when l is not NULL), what was under it goes with it. */
static void removetree(struct table *t, const char *path, struct layerchanges *l, int gen)
{
	struct node *n = find(t, path, 0);
	if (n && n->live) {
		n->live = 0;
		n->gone = gen;
		if (l)
			addchange(l, gen, n, 1, path, 'D', n->type, n->size, NULL, 0);
	}
	if (n && n->type != 'd')
		return; /* nothing is under a file: no walk of the table for each file removed */
	size_t len = strlen(path);
	for (size_t i = 0; i < t->cap; i++) {
		struct node *c = &t->v[i];
		if (c->path && c->live && strncmp(c->path, path, len) == 0 && c->path[len] == '/')
			c->live = 0, c->gone = gen; /* reported as part of its directory */
	}
}

static int bypathname(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether a folder above path was removed in layer gen: path then went with it. */
static int undergone(struct table *t, const char *path, int gen)
{
	char *p = xstrdup(path);
	int under = 0;
	for (char *s = strchr(p, '/'); s && !under; s = strchr(s + 1, '/')) {
		*s = 0;
		struct node *n = find(t, p, 0);
		under = n && !n->live && n->gone == gen;
		*s = '/';
	}
	free(p);
	return under;
}

/* Remove every path of v (live in the table) in layer gen, each reported in l unless a folder
 * above it is removed too: a folder comes before what is in it once v is sorted. */
static void removeall(struct table *t, struct strv *v, struct layerchanges *l, int gen)
{
	if (v->n > 1)
		qsort(v->v, v->n, sizeof *v->v, bypathname);
	for (size_t i = 0; i < v->n; i++) {
		struct node *n = find(t, v->v[i], 0);
		if (!n || !n->live)
			continue;
		n->live = 0;
		n->gone = gen;
		if (l && !undergone(t, v->v[i], gen))
			addchange(l, gen, n, 1, v->v[i], 'D', n->type, n->size, NULL, 0);
	}
}

/* A full layer past the first: what the table holds that layer gen did not store is gone. */
static void rebase(struct table *t, int gen, struct layerchanges *l)
{
	struct strv gone = {0};
	for (size_t i = 0; i < t->cap; i++)
		if (t->v[i].path && t->v[i].live && t->v[i].seen != gen)
			strvadd(&gone, t->v[i].path);
	removeall(t, &gone, l, gen);
	strvfree(&gone);
}

/* Pass 2 for one layer: apply it to the table, noting changes in l (NULL for the first layer).
 * *full: in, what the layer's place implies (the first of a chain, an end layer); out, what its
 * SNAPMARK says. A full layer is a whole tree: compared with the table, what it lacks is deleted. */
static int applyone(const char *file, struct table *t, const struct table *want, struct layerchanges *l, int gen,
                    int *full, struct bound *b, struct err *e)
{
	struct reader r;
	if (openlayer(&r, file, b, e) < 0)
		return -1;
	struct archive_entry *en;
	struct buf data = {0};
	int rc, over = 0;
	while ((rc = archive_read_next_header(r.a, &en)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
		if (readerentry(&r, en, archive_entry_pathname(en), e) < 0) {
			over = 1;
			break;
		}
		char *p = cleanpath(archive_entry_pathname(en));
		if (strcmp(p, ".") == 0) { /* the workspace folder itself: no change of a path in it */
			free(p);
			continue;
		}
		char *base = strrchr(p, '/');
		base = base ? base + 1 : p;
		const char *wk = snapwhiteout(en, base);
		if (wk && strcmp(wk, "file") != 0 && strcmp(wk, "opaque") != 0) { /* the layer's SNAPMARK */
			*full = strcmp(wk, "full") == 0;
			free(p);
			continue;
		}
		if (wk) {
			if (strcmp(wk, "file") == 0) {
				memmove(base, base + 4, strlen(base + 4) + 1);
				removetree(t, p, l, gen);
			} else { /* opaque: the directory's old children are gone */
				*(base > p ? base - 1 : base) = 0;
				size_t len = strlen(p);
				struct strv old = {0};
				for (size_t i = 0; i < t->cap; i++) {
					struct node *c = &t->v[i];
					if (c->path && c->live && (len == 0 || (strncmp(c->path, p, len) == 0 && c->path[len] == '/')))
						strvadd(&old, c->path);
				}
				removeall(t, &old, l, gen);
				strvfree(&old);
			}
			free(p);
			continue;
		}
		char type = typeof_(en);
		int64_t size = archive_entry_size(en);
		unsigned char dg[32], sum[32];
		unsigned int dn = 0;
		int gi = 0, meaning = 0;
		data.len = 0;
		EVP_MD_CTX *md = EVP_MD_CTX_new();
		EVP_DigestInit_ex(md, EVP_sha256(), NULL);
		if (type == 'f') {
			const void *blk;
			size_t n;
			la_int64_t off;
			int keep = size <= CHANGE_TEXT_MAX && (!want || find((struct table *)want, p, 0));
			gi = gitindexpath(p) && size <= GITINDEX_MAX;
			keep |= gi;
			while (!over && archive_read_data_block(r.a, &blk, &n, &off) == ARCHIVE_OK) {
				EVP_DigestUpdate(md, blk, n);
				if (keep)
					bufadd(&data, blk, n);
				over = readerbound(&r, e) < 0;
			}
			if (gi && data.len == (size_t)size && gitindexsum(data.data, data.len, sum) == 0)
				meaning = 1;
			if (!keep || (gi && size > CHANGE_TEXT_MAX))
				data.len = 0;
		} else if (type == 'l') {
			const char *to = archive_entry_symlink(en);
			EVP_DigestUpdate(md, to ? to : "", to ? strlen(to) : 0);
		}
		EVP_DigestFinal_ex(md, dg, &dn);
		EVP_MD_CTX_free(md);
		if (!meaning)
			memcpy(sum, dg, 32);
		struct node *n = find(t, p, 1);
		unsigned mode = archive_entry_perm(en);
		int was = n->live;
		int same = was && n->type == type && n->mode == mode && memcmp(n->digest, dg, 32) == 0;
		if (l && !same && !(was && type == 'd' && n->type == 'd' && n->mode == mode)) {
			struct change *c = addchange(l, gen, n, was, p, was ? 'M' : 'A', type, size,
			                             type == 'f' && data.len == (size_t)size ? data.data : NULL, data.len);
			c->mode = mode;
			memcpy(c->sum, sum, 32);
			c->cosmetic = was && n->type == type && n->mode == mode && memcmp(n->sum, sum, 32) == 0;
		}
		if (was && n->type == 'd' && type != 'd')
			removetree(t, p, NULL, gen);
		n->live = 1;
		n->seen = gen;
		n->type = type;
		n->mode = mode;
		n->size = size;
		memcpy(n->digest, dg, 32);
		memcpy(n->sum, sum, 32);
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
		if (over)
			break;
	}
	buffree(&data);
	int bad = over || readerend(&r, rc, file, e) < 0;
	if (over)
		errctx(e, "layer %s", file);
	else if (!bad && *full && l)
		rebase(t, gen, l);
	closelayer(&r);
	return bad ? -1 : 0;
}

static int bypath(const void *a, const void *b)
{
	return strcmp(((const struct change *)a)->path, ((const struct change *)b)->path);
}

/* Read the chain ws ("" for snapshots/ itself) of rundir, its layers' changes added to out; each
 * pass over it within a bound of maxbytes (0: the default for its compressed bytes). */
static int readchain(const char *rundir, const char *ws, int64_t maxbytes, struct runchanges *out, struct err *e)
{
	struct strv names = {0};
	struct table t = {0}, want = {0};
	char *dir = *ws ? xasprintf("%s/snapshots/%s", rundir, ws) : pathjoin(rundir, "snapshots");
	int rc = 0;
	layers(dir, &names);
	int64_t packed = 0;
	for (size_t i = 0; i < names.n; i++) {
		struct stat st;
		char *file = pathjoin(dir, names.v[i]);
		if (lstat(file, &st) == 0 && boundondisk(&st) < INT64_MAX - packed)
			packed += boundondisk(&st);
		free(file);
	}
	struct bound b1, b2;
	boundinit(&b1, "the layers read", maxbytes, packed, BOUND_READENTRIES);
	boundinit(&b2, "the layers read", maxbytes, packed, BOUND_READENTRIES);
	if (names.n > 1)
		rc = wanted(dir, &names, &want, &b1, e);
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		char *file = pathjoin(dir, names.v[i]);
		struct layerchanges *l = NULL;
		enum layerkind kind = layerparse(names.v[i], NULL);
		int end = kind == LAYER_END || kind == LAYER_OLDEND;
		int full = i == 0 || end;
		if (i > 0) {
			out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
			l = &out->v[out->n++];
			memset(l, 0, sizeof *l);
			l->layer = *ws ? xasprintf("snapshots/%s/%s", ws, names.v[i]) : xasprintf("snapshots/%s", names.v[i]);
			l->ws = xstrdup(ws);
			/* after a run's old end, what changes is after its last step */
			l->from = layerstep(names.v[i - 1]);
			l->to = layerstep(names.v[i]);
		}
		rc = applyone(file, &t, &want, l, (int)i + 1, &full, &b2, e);
		if (l && full && !end)
			l->base = 1; /* the chain begins again here: not one step's changes */
		if (l && l->n)
			qsort(l->v, l->n, sizeof *l->v, bypath);
		free(file);
	}
	free(dir);
	strvfree(&names);
	tablefree(&t);
	tablefree(&want);
	return rc;
}

/* Layers of all chains in the order their changes began: by step, the end layers last. */
static int byfrom(const void *a, const void *b)
{
	const struct layerchanges *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if ((x->to == 0) != (y->to == 0))
		return x->to == 0 ? 1 : -1;
	return strcmp(x->ws, y->ws);
}

int changesread(const char *rundir, int64_t maxbytes, struct runchanges *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	struct strv ws = {0};
	int rc = 0;
	snapchains(rundir, &ws);
	for (size_t i = 0; rc == 0 && i < ws.n; i++)
		rc = readchain(rundir, ws.v[i], maxbytes, out, e);
	strvfree(&ws);
	if (rc < 0)
		changesfree(out);
	else if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, byfrom);
	return rc;
}

const struct layerchanges *changesofstep(const struct runchanges *rc, const char *ws, int step)
{
	const struct layerchanges *base = NULL;
	for (size_t i = 0; i < rc->n; i++)
		if ((!ws || strcmp(rc->v[i].ws, ws) == 0) && step >= rc->v[i].from && (rc->v[i].to == 0 || step < rc->v[i].to)) {
			if (!rc->v[i].base)
				return &rc->v[i];
			if (!base)
				base = &rc->v[i];
		}
	return base;
}

/* The workspace a job's event log names in its snapshot events (snapshots/<ws>/...) into *ws, or
 * NULL; -1 when the log cannot be read (a missing log names none). */
static int eventsws(const char *rundir, const char *job, char **ws, struct err *e)
{
	char *path = xasprintf("%s/jobs/%s/events.jsonl.zst", rundir, job);
	struct evreader *r;
	struct err oe = {0};
	int rc = 0;
	*ws = NULL;
	if (evropen(&r, path, &oe) == 0) {
		const char *line;
		size_t len;
		while (!*ws && (rc = evrnext(r, &line, &len, e)) == 1) {
			if (!memmem(line, len, "\"snapshot\"", 10))
				continue;
			cJSON *ev = cJSON_ParseWithLength(line, len);
			const char *type = jsonstr(ev, "type", ""), *layer = jsonstr(ev, "layer", "");
			const char *slash = strchr(layer + (strncmp(layer, "snapshots/", 10) == 0 ? 10 : 0), '/');
			if (strcmp(type, "snapshot") == 0 && strncmp(layer, "snapshots/", 10) == 0 && slash)
				*ws = xstrndup(layer + 10, (size_t)(slash - layer - 10));
			cJSON_Delete(ev);
		}
		evrclose(r);
	}
	free(path);
	return rc < 0 ? -1 : 0;
}

char *changesstepws(const char *rundir, int step, struct err *e)
{
	struct strv ws = {0};
	char *found = NULL;
	snapchains(rundir, &ws);
	if (ws.n == 0 || (ws.n == 1 && !*ws.v[0])) {
		strvfree(&ws);
		return xstrdup("");
	}
	/* a sandboxed step has a layer of its own in its workspace's chain */
	for (size_t i = 0; !found && i < ws.n; i++) {
		char *l = layerpath(ws.v[i], LAYER_STEP, step);
		char *p = pathjoin(rundir, l);
		free(l);
		if (access(p, F_OK) == 0)
			found = xstrdup(ws.v[i]);
		free(p);
	}
	/* a file tool's step: the workspace of the job that made it (run.json, else its snapshots) */
	const char *job = NULL;
	struct calls *c = NULL;
	struct call k;
	cJSON *run = NULL;
	int rc = 0;
	if (!found && callsopen(&c, rundir, e) == 0) {
		while (!job && (rc = callsnext(c, &k, e)) == 1)
			if (k.step == step && k.job)
				job = k.job;
		char *jobid = job ? xstrdup(job) : NULL;
		callsclose(c);
		struct err je = {0};
		if (rc >= 0 && jobid && (run = runjsonread(rundir, &je))) {
			cJSON *j = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(run, "jobs"), jobid);
			const char *parent = jsonstr(j, "parent", NULL), *w = jsonstr(j, "workspace", NULL);
			if (!w && parent)
				w = jsonstr(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(run, "jobs"), parent),
				            "workspace", NULL);
			if (w)
				found = xstrdup(w);
			if (!found)
				rc = eventsws(rundir, jobid, &found, e);
			if (rc == 0 && !found && parent)
				rc = eventsws(rundir, parent, &found, e);
		}
		free(jobid);
	}
	cJSON_Delete(run);
	if (rc < 0) {
		free(found);
		strvfree(&ws);
		return NULL;
	}
	char *ret = NULL;
	if (found) {
		for (size_t i = 0; !ret && i < ws.n; i++)
			if (strcmp(ws.v[i], found) == 0)
				ret = found;
		if (!ret) {
			errc(e, ERR_INPUT, "step %d ran in workspace '%s', which has no chain in %s/snapshots", step, found, rundir);
			free(found);
		}
	} else if (ws.n == 1) {
		ret = xstrdup(ws.v[0]);
	} else {
		struct buf names = {0};
		for (size_t i = 0; i < ws.n; i++)
			bufprintf(&names, "%s%s", i ? ", " : "", *ws.v[i] ? ws.v[i] : "(snapshots/)");
		errc(e, ERR_INPUT, "no workspace's chain tells step %d; name one with --workspace (%s)", step, names.data);
		buffree(&names);
	}
	strvfree(&ws);
	return ret;
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
		free(rc->v[i].ws);
	}
	free(rc->v);
	memset(rc, 0, sizeof *rc);
}
