/* tools: shell in the sandbox; file tools beneath the workspace (util/beneath.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../artifacts/events.h"
#include "tools.h"
#include "../manifest/schema.h"
#include "../util/privacy.h"
#include "../util/beneath.h"

enum { READ_MAX = 16 << 20, LIST_MAX = 2000, EVENT_OUT_MAX = 64 << 10 };

static cJSON *prop(cJSON *props, const char *name, const char *desc)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "type", "string");
	cJSON_AddStringToObject(p, "description", desc);
	cJSON_AddItemToObject(props, name, p);
	return p;
}

/* One tool definition with string parameters given as name, description pairs. */
static void deftool(cJSON *tools, const char *name, const char *desc, const char *const *params)
{
	cJSON *t = cJSON_CreateObject(), *schema = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "name", name);
	cJSON_AddStringToObject(t, "description", desc);
	cJSON_AddStringToObject(schema, "type", "object");
	cJSON *props = cJSON_AddObjectToObject(schema, "properties");
	cJSON *req = cJSON_AddArrayToObject(schema, "required");
	for (size_t i = 0; params[i]; i += 2) {
		prop(props, params[i], params[i + 1]);
		cJSON_AddItemToArray(req, cJSON_CreateString(params[i]));
	}
	cJSON_AddFalseToObject(schema, "additionalProperties");
	cJSON_AddItemToObject(t, "parameters", schema);
	cJSON_AddTrueToObject(t, "strict"); /* closed, every parameter required: in the strict subset */
	cJSON_AddItemToArray(tools, t);
}

cJSON *tooldefs(const struct manifest *m, const struct worker *w, const cJSON *extra)
{
	static const char *const shellp[] = {"command", "a POSIX sh command line, run in /workspace", NULL};
	static const char *const readp[] = {"path", "path relative to the workspace", NULL};
	static const char *const writep[] = {"path", "path relative to the workspace", "content", "the whole new content",
	                                     NULL};
	static const char *const editp[] = {"path", "path relative to the workspace", "old",
	                                    "exact text to replace; must occur once", "new", "replacement text", NULL};
	static const char *const delegp[] = {"input", "the task for the worker", NULL};
	cJSON *tools = cJSON_CreateArray();
	if (w->tools & TOOL_SHELL)
		deftool(tools, "shell", "Run a shell command in the sandboxed workspace; returns exit code and output.", shellp);
	if (w->tools & TOOL_READ_FILE)
		deftool(tools, "read_file", "Read a text file of the workspace.", readp);
	if (w->tools & TOOL_WRITE_FILE)
		deftool(tools, "write_file", "Create or replace a file of the workspace.", writep);
	if (w->tools & TOOL_LIST_DIR)
		deftool(tools, "list_dir", "List a directory of the workspace.", readp);
	if (w->tools & TOOL_EDIT_FILE)
		deftool(tools, "edit_file", "Replace one exact occurrence of text in a workspace file.", editp);
	for (size_t i = 0; i < w->delegates.n; i++) {
		const struct worker *d = manifestworker(m, w->delegates.v[i]);
		deftool(tools, d->name, d->description ? d->description : "Delegate a task to another worker.", delegp);
	}
	const cJSON *x;
	cJSON_ArrayForEach(x, extra)
	cJSON_AddItemToArray(tools, cJSON_Duplicate(x, 1));
	cJSON *fin = cJSON_CreateObject();
	cJSON_AddStringToObject(fin, "name", "final_result");
	cJSON_AddStringToObject(fin, "description", "Finish the job with its typed result. Call it exactly once, last.");
	if (w->output) {
		cJSON_AddItemToObject(fin, "parameters", cJSON_Duplicate(w->output, 1));
		if (schemastrict(w->output)) /* else nightshift's own validation is all there is */
			cJSON_AddTrueToObject(fin, "strict");
	} else {
		cJSON *s = cJSON_AddObjectToObject(fin, "parameters");
		cJSON_AddStringToObject(s, "type", "object");
	}
	cJSON_AddItemToArray(tools, fin);
	return tools;
}

static const char *why(int err)
{
	return err == EXDEV || err == ELOOP ? "the path leads out of the workspace or through a link" : strerror(err);
}

int wsopen(int wsfd, const char *path, struct err *e)
{
	/* No link is followed: the rule matched this path, not where a link leads. */
	int fd = openbeneath(wsfd, path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW, BENEATH_NOXDEV);
	if (fd < 0)
		return errf(e, "cannot open %s: %s", path, why(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return errf(e, "%s is not a regular file", path);
	}
	return fd;
}

int wsread(int wsfd, const char *path, size_t max, struct buf *out, int *truncated, struct err *e)
{
	int fd = wsopen(wsfd, path, e);
	if (fd < 0)
		return -1;
	int rc = readfd(fd, max, out, truncated) < 0 ? errf(e, "read %s:", path) : 0;
	close(fd);
	return rc;
}

/* A folder or file the file tools just made: the user's umask, and the steps' owner when given. */
static int ownmade(int fd, mode_t mode, int uid, int gid)
{
	if (fchmod(fd, mode & ~privacyumask()) < 0)
		return -1;
	if (uid > 0 && fchown(fd, (uid_t)uid, (gid_t)gid) < 0 && errno != EPERM)
		return -1; /* EPERM: not root, the runner's own user keeps it */
	return 0;
}

/* Write over an existing file that has no other name and no set-id bit (st: as it was found):
 * no inode made and none deleted (ext4 looks past every inode deleted in the last minutes on each
 * create, so a turn's new file and the one it replaced cost more and more), and none of the
 * writeback a replacing rename or a truncation to nothing starts. The new bytes go over the old,
 * then the file is cut to their length. The old bytes are in the layer taken before the step. 0,
 * -1 when the file is not that (changed since, or linked): replace it instead; or an errno. */
static int inplace(int dfd, const char *name, const struct stat *st, const char *data, size_t n)
{
	if (st->st_nlink != 1 || (st->st_mode & 07000))
		return -1;
	/* Not across a mount: a file bound over the name (mount --bind) is another file, maybe one
	 * outside the workspace, that only a rename could not have reached (EBUSY). */
	int fd = openbeneath(dfd, name, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, BENEATH_NOXDEV);
	struct stat now;
	if (fd < 0)
		return errno == ELOOP || errno == ENXIO || errno == ENOENT || errno == EXDEV ? -1 : errno;
	if (fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) || now.st_nlink != 1 || now.st_ino != st->st_ino ||
	    now.st_dev != st->st_dev || (now.st_mode & 07000)) {
		close(fd);
		return -1;
	}
	int err = writeall(fd, data, n) < 0 ? errno : 0; /* from offset 0: just opened */
	if (!err && (int64_t)n != (int64_t)now.st_size && ftruncate(fd, (off_t)n) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

/* Put the new file tmp in place of the old name, atomically: exchanged with it and the old file
 * unlinked, which ext4 does without the writeback it starts when a rename replaces a file
 * (auto_da_alloc: a cost per write, and disk traffic for a file the next turn may rewrite). A
 * directory swapped in meanwhile is put back; where the exchange fails, a rename.
 * Returns 0 or an errno. */
static int swapin(int dfd, const char *tmp, const char *name)
{
	if (renameat2(dfd, tmp, dfd, name, RENAME_EXCHANGE) < 0)
		return renameat(dfd, tmp, dfd, name) < 0 ? errno : 0; /* no exchange here, or the name is gone */
	if (unlinkat(dfd, tmp, 0) == 0)
		return 0;
	int err = errno;
	renameat2(dfd, tmp, dfd, name, RENAME_EXCHANGE); /* not a file any more: as it was */
	return err;
}

int wswrite(int wsfd, const char *path, const char *data, size_t n, int uid, int gid, struct err *e)
{
	char *p = xstrdup(path), *comp = p, *slash;
	int dfd = dup(wsfd);
	if (dfd < 0) {
		free(p);
		return errf(e, "dup:");
	}
	/* Walk the parents one at a time, creating them, refusing any link. */
	while ((slash = strchr(comp, '/'))) {
		*slash = 0;
		int made = mkdirat(dfd, comp, 0700) == 0;
		if (!made && errno != EEXIST) {
			errf(e, "cannot create directory %s in %s:", comp, path);
			goto fail;
		}
		int nfd = openbeneath(dfd, comp, (made ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW, BENEATH_NOXDEV);
		if (nfd < 0) {
			errf(e, "cannot enter %s of %s: %s", comp, path, errno == ENOTDIR ? "not a directory" : why(errno));
			goto fail;
		}
		if (made && ownmade(nfd, 0755, uid, gid) < 0) {
			errf(e, "cannot create directory %s in %s:", comp, path);
			close(nfd);
			goto fail;
		}
		close(dfd);
		dfd = nfd;
		comp = slash + 1;
	}
	/* A file with no other link is written in place (inplace). Otherwise a new file is put in
	   place of the old name: a hard link to the old file (a name outside the workspace too) keeps
	   its content; the mode is the old file's, without set-id bits. */
	struct stat st;
	mode_t mode = 0644;
	int had = 0;
	if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		had = 1;
		if (!S_ISREG(st.st_mode)) {
			errf(e, "cannot write %s: %s", path, S_ISLNK(st.st_mode) ? why(ELOOP) : "not a regular file");
			goto fail;
		}
		mode = st.st_mode & 0777;
	} else if (errno != ENOENT) {
		errf(e, "cannot write %s:", path);
		goto fail;
	}
	if (had) {
		int rc = inplace(dfd, comp, &st, data, n);
		if (rc == 0) {
			close(dfd);
			free(p);
			return 0;
		}
		if (rc > 0) {
			errno = rc;
			errf(e, "write %s:", path);
			goto fail;
		}
	}
	char tmp[64];
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		unsigned long r;
		if (getrandom(&r, sizeof r, 0) != sizeof r)
			r = (unsigned long)nowms() * 2654435761u + (unsigned long)tries;
		snprintf(tmp, sizeof tmp, ".nightshift-write-%016lx", r);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		errf(e, "cannot write %s:", path);
		goto fail;
	}
	int werr = 0;
	for (size_t off = 0; off < n && !werr;) {
		ssize_t w = write(fd, data + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			werr = errno;
		else
			off += w;
	}
	/* The old file's owner stays (as root; otherwise the file is ours anyway); a new one gets
	 * the user's umask and the steps' owner. */
	if (!werr && had && fchown(fd, st.st_uid, st.st_gid) < 0 && errno != EPERM)
		werr = errno;
	if (!werr && had && fchmod(fd, mode) < 0)
		werr = errno;
	if (!werr && !had && ownmade(fd, mode, uid, gid) < 0)
		werr = errno;
	if (close(fd) < 0 && !werr)
		werr = errno;
	if (!werr && had)
		werr = swapin(dfd, tmp, comp);
	else if (!werr && renameat(dfd, tmp, dfd, comp) < 0)
		werr = errno;
	if (werr) {
		unlinkat(dfd, tmp, 0);
		errno = werr;
		errf(e, "write %s:", path);
		goto fail;
	}
	close(dfd);
	free(p);
	return 0;
fail:
	close(dfd);
	free(p);
	return -1;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int listdir(int wsfd, const char *path, struct buf *out, struct err *e)
{
	int fd = openbeneath(wsfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, BENEATH_NOXDEV);
	if (fd < 0)
		return errf(e, "cannot open directory %s: %s", path, why(errno));
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return errf(e, "cannot list %s:", path);
	}
	struct strv names = {0};
	struct dirent *de;
	while ((de = readdir(d)) && names.n < LIST_MAX) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		struct stat st;
		char *line;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			line = xasprintf("%s/", de->d_name);
		else if (S_ISLNK(st.st_mode))
			line = xasprintf("%s@", de->d_name);
		else
			line = xasprintf("%s\t%lld", de->d_name, (long long)st.st_size);
		strvadd(&names, line);
		free(line);
	}
	int more = de != NULL;
	closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof *names.v, cmpstr);
	for (size_t i = 0; i < names.n; i++)
		bufprintf(out, "%s\n", names.v[i]);
	if (more)
		bufprintf(out, "(listing cut at %d entries)\n", LIST_MAX);
	if (!out->data)
		bufputs(out, "(empty)\n");
	strvfree(&names);
	return 0;
}

static const char *argstr(const cJSON *args, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, name));
}

/* Text with secrets masked, as a new string (a copy when there is none). */
static char *masked(const struct toolopts *o, char *text)
{
	char *m = o && o->sec ? secretsmask(o->sec, text) : NULL;
	if (!m)
		return text;
	free(text);
	return m;
}

/* Add captured output to the event, capped, with its full digest: of the raw bytes, or of text
 * (the stream cleaned and masked) when masking changed it, since a digest of a secret's bytes
 * would confirm a guess of them. */
static void addout(cJSON *ev, const char *name, const struct buf *b, const char *text)
{
	char hex[65], key[32];
	if (text)
		sha256hex(text, strlen(text), hex);
	else
		sha256hex(b->data ? b->data : "", b->len, hex);
	char *clean = utf8clean(b->data ? b->data : "", b->len < EVENT_OUT_MAX ? b->len : EVENT_OUT_MAX);
	cJSON_AddStringToObject(ev, name, clean);
	snprintf(key, sizeof key, "%s_sha256", name);
	cJSON_AddStringToObject(ev, key, hex);
	snprintf(key, sizeof key, "%s_bytes", name);
	cJSON_AddNumberToObject(ev, key, (double)b->len);
	free(clean);
}

/* The step's connections through the egress proxy: an event each (those the proxy recorded), a
   count on the tool result (all of them), and a line for the model about each one refused. */
static void netevents(const struct sbxresult *res, struct toolres *r, struct buf *msg)
{
	int refused = 0;
	if (!res->nnet)
		return;
	r->net = cJSON_CreateArray();
	for (size_t i = 0; i < res->nnet; i++) {
		const struct netconn *c = &res->net[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "method", c->method);
		cJSON_AddStringToObject(o, "host", c->host);
		cJSON_AddNumberToObject(o, "port", c->port);
		cJSON_AddStringToObject(o, "address", c->addr);
		cJSON_AddStringToObject(o, "decision", c->allowed ? "allow" : "deny");
		cJSON_AddStringToObject(o, "rule", c->rule);
		if (c->reason[0])
			cJSON_AddStringToObject(o, "reason", c->reason);
		cJSON_AddNumberToObject(o, "bytes_sent", (double)c->sent);
		cJSON_AddNumberToObject(o, "bytes_received", (double)c->received);
		cJSON_AddNumberToObject(o, "duration_ms", (double)c->duration_ms);
		cJSON_AddItemToArray(r->net, o);
		if (!c->allowed && refused++ < 8)
			bufprintf(msg, "network: refused %s %s:%d: %s\n", c->method[0] ? c->method : "(no request)",
			          c->host[0] ? c->host : "?", c->port, c->reason);
	}
	cJSON_AddNumberToObject(r->event, "connections", (double)res->nnet + (double)res->netmore.n);
	cJSON_AddNumberToObject(r->event, "connections_refused", refused + (double)res->netmore.refused);
	if (res->netmore.n) {
		cJSON_AddNumberToObject(r->event, "connections_unrecorded", (double)res->netmore.n);
		bufprintf(msg, "network: %lld more connections (%lld refused) past the %d recorded\n",
		          (long long)res->netmore.n, (long long)res->netmore.refused, EGRESSKEEP);
	}
}

/* The line a step's shell runs: first a fresh, empty HOME of an unguessable name under the step's
 * /tmp, so that a dotfile an earlier step planted (.gitconfig, .bashrc ...) configures nothing;
 * then the command, on a line of its own, as written. */
static char *withhome(const char *cmd)
{
	unsigned char rnd[12];
	char hex[sizeof rnd * 2 + 1];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return NULL;
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
	return xasprintf("HOME=/tmp/.home-%s; mkdir -m 700 \"$HOME\" || exit 125; export HOME\n%s", hex, cmd);
}

/* Back up over UTF-8 continuation bytes, so that s[i] starts a character. */
static size_t charstart(const char *s, size_t i, size_t len)
{
	while (i > 0 && i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
		i--;
	return i;
}

char *toolclip(const char *s, size_t len, size_t limit)
{
	if (limit == 0)
		limit = TOOL_OUTPUT_LIMIT;
	if (len <= limit)
		return xstrndup(s, len);
	/* The tail matters most (where a build or a test run says what failed): 3/5 of it. */
	size_t head = limit * 2 / 5, tail = limit - head;
	const char *nl = memrchr(s, '\n', head);
	if (nl && (size_t)(nl + 1 - s) >= head * 3 / 4)
		head = (size_t)(nl + 1 - s); /* end the head at a line's end when one is near */
	head = charstart(s, head, len);
	size_t from = len - tail;
	nl = memchr(s + from, '\n', tail / 4);
	if (nl)
		from = (size_t)(nl + 1 - s);
	from = charstart(s, from, len);
	if (from < head)
		from = head;
	size_t lines = 0;
	for (const char *p = s + head; (p = memchr(p, '\n', (size_t)(s + from - p))); p++)
		lines++;
	struct buf b = {0};
	bufadd(&b, s, head);
	if (head && s[head - 1] != '\n')
		bufputc(&b, '\n');
	bufprintf(&b, "[... %zu bytes (%zu lines) cut here, of %zu; the head and the tail are shown ...]\n",
	          from - head, lines, len);
	bufadd(&b, s + from, len - from);
	return b.data;
}

/* Say how a step ended: exit code, signal or the limit it ran into. */
static void stepstatus(struct buf *msg, const struct sbxresult *res, const struct toolopts *o)
{
	if (res->late)
		bufputs(msg, "the job's time limit ran out while the command ran, and it was killed\n");
	else if (res->timed_out && o && o->timeout_ms > 0)
		bufprintf(msg, "the command ran past the step's time limit (%llds) and was killed\n",
		          (long long)(o->timeout_ms / 1000));
	else if (res->timed_out)
		bufputs(msg, "the command timed out and was killed\n");
	else if (res->interrupted)
		bufputs(msg, "the command was stopped: the run was interrupted\n");
	else if (res->oom)
		bufputs(msg, "the command ran out of memory (the sandbox's memory limit) and was killed\n");
	else if (res->signal)
		bufprintf(msg, "killed by signal %d (SIG%s)\n", res->signal,
		          sigabbrev_np(res->signal) ? sigabbrev_np(res->signal) : "?");
	else
		bufprintf(msg, "exit code %d\n", res->exit_code);
}

static int runshell(struct sbx *sbx, const char *cmd, const struct toolopts *o, struct toolres *r, struct err *e)
{
	struct sbxresult res;
	memset(&res, 0, sizeof res);
	if (!sbx)
		return errf(e, "no sandbox for shell");
	char *line = withhome(cmd);
	if (!line)
		return errf(e, "no random bytes for the step's HOME");
	int xrc = sbxexecby(sbx, line, o ? o->until : 0, &res, e);
	free(line);
	if (xrc < 0)
		return -1;
	cJSON *ev = r->event;
	r->leftover = res.leftover;
	if (res.leftover)
		cJSON_AddBoolToObject(ev, "leftover", 1);
	cJSON_AddNumberToObject(ev, "exit_code", res.exit_code);
	cJSON_AddNumberToObject(ev, "signal", res.signal);
	cJSON_AddBoolToObject(ev, "timed_out", res.timed_out);
	if (res.interrupted)
		cJSON_AddTrueToObject(ev, "interrupted");
	if (res.late)
		cJSON_AddTrueToObject(ev, "job_timeout");
	cJSON_AddBoolToObject(ev, "oom", res.oom);
	cJSON_AddBoolToObject(ev, "truncated", res.truncated);
	cJSON_AddNumberToObject(ev, "duration_ms", (double)res.duration_ms);
	if (res.limits[0])
		cJSON_AddStringToObject(ev, "limits", res.limits);
	if (res.note[0])
		cJSON_AddStringToObject(ev, "sandbox_note", res.note);
	/* Each stream cleaned and masked once: for the digest and for what the model sees. */
	char *out = utf8clean(res.out.data ? res.out.data : "", res.out.len);
	char *er = utf8clean(res.err.data ? res.err.data : "", res.err.len);
	char *mout = o && o->sec ? secretsmask(o->sec, out) : NULL, *merr = o && o->sec ? secretsmask(o->sec, er) : NULL;
	addout(ev, "stdout", &res.out, mout);
	addout(ev, "stderr", &res.err, merr);
	if (mout)
		free(out), out = mout;
	if (merr)
		free(er), er = merr;
	struct buf msg = {0};
	stepstatus(&msg, &res, o);
	netevents(&res, r, &msg);
	/* Each stream cut to its share of the limit: half each, or what the other leaves. */
	size_t limit = o && o->limit ? o->limit : TOOL_OUTPUT_LIMIT, ol = strlen(out), el = strlen(er);
	size_t olim = limit / 2, elim = limit - limit / 2;
	if (ol < olim)
		elim = limit - ol;
	else if (el < elim)
		olim = limit - el;
	char *oc = toolclip(out, ol, olim), *ec = toolclip(er, el, elim);
	if (*oc)
		bufprintf(&msg, "stdout:\n%s%s", oc, oc[strlen(oc) - 1] == '\n' ? "" : "\n");
	if (*ec)
		bufprintf(&msg, "stderr:\n%s%s", ec, ec[strlen(ec) - 1] == '\n' ? "" : "\n");
	if (res.truncated)
		bufputs(&msg, "(the step printed more than the sandbox keeps of a stream; the rest was not read)\n");
	if (ol > olim || el > elim || res.truncated)
		stepstatus(&msg, &res, o); /* said again below a long output */
	free(out);
	free(er);
	free(oc);
	free(ec);
	r->failed = res.exit_code != 0;
	r->content = msg.data;
	sbxresultfree(&res);
	return 0;
}

#define EDITMAX (64 << 20) /* bytes of a file edit_file reads and writes back */

static int editfile(int wsfd, const char *path, const cJSON *args, const struct toolopts *o, struct toolres *r,
                    struct err *e)
{
	const char *old = argstr(args, "old"), *new = argstr(args, "new");
	struct buf b = {0};
	int trunc;
	if (!old || !new || !*old)
		return errf(e, "edit_file needs string arguments old (non-empty) and new");
	if (wsread(wsfd, path, EDITMAX, &b, &trunc, e) < 0)
		return -1;
	/* the edit is made on text: what a NUL or the cap would cut off must not be written back lost */
	const char *cut = trunc ? "is longer than that" : b.len && memchr(b.data, 0, b.len) ? "holds a NUL byte" : NULL;
	char *at = cut || !b.data ? NULL : strstr(b.data, old);
	int rc;
	if (cut) {
		rc = errf(e, "%s %s: edit_file edits text files of at most %d MiB", path, cut, EDITMAX >> 20);
	} else if (!at || strstr(at + 1, old)) {
		rc = errf(e, "the text to replace occurs %s in %s", at ? "more than once" : "nowhere", path);
	} else {
		struct buf nb = {0};
		bufadd(&nb, b.data, at - b.data);
		bufputs(&nb, new);
		bufputs(&nb, at + strlen(old));
		rc = wswrite(wsfd, path, nb.data, nb.len, o->uid, o->gid, e);
		buffree(&nb);
		if (rc == 0)
			r->content = xasprintf("edited %s", path);
	}
	buffree(&b);
	return rc;
}

int toolrun(struct sbx *sbx, int wsfd, const char *tool, const cJSON *args, const char *path,
            const struct toolopts *o, struct toolres *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	r->event = cJSON_CreateObject();
	int64_t start = nowms();
	struct buf b = {0};
	int rc, trunc = 0;
	if (strcmp(tool, "shell") == 0) {
		const char *cmd = argstr(args, "command");
		rc = cmd ? runshell(sbx, cmd, o, r, e) : errf(e, "shell needs a string argument command");
	} else if (!path) {
		rc = errf(e, "%s needs a path inside the workspace", tool);
	} else if (strcmp(tool, "read_file") == 0) {
		rc = wsread(wsfd, path, READ_MAX, &b, &trunc, e);
		if (rc == 0) {
			char *clean = utf8clean(b.data, b.len);
			r->content = trunc ? xasprintf("%s\n(only the first %d bytes of the file were read)", clean, READ_MAX)
			                   : xstrdup(clean);
			char hex[65];
			sha256hex(b.data, b.len, hex);
			cJSON_AddNumberToObject(r->event, "bytes", (double)b.len);
			cJSON_AddStringToObject(r->event, "sha256", hex);
			cJSON_AddBoolToObject(r->event, "truncated", trunc);
			free(clean);
		}
	} else if (strcmp(tool, "write_file") == 0) {
		const char *content = argstr(args, "content");
		rc = content ? wswrite(wsfd, path, content, strlen(content), o->uid, o->gid, e)
		             : errf(e, "write_file needs a string argument content");
		if (rc == 0) {
			r->content = xasprintf("wrote %zu bytes to %s", strlen(content), path);
			cJSON_AddNumberToObject(r->event, "bytes", (double)strlen(content));
		}
	} else if (strcmp(tool, "list_dir") == 0) {
		rc = listdir(wsfd, path, &b, e);
		if (rc == 0)
			r->content = xstrdup(b.data);
	} else if (strcmp(tool, "edit_file") == 0) {
		rc = editfile(wsfd, path, args, o, r, e);
	} else {
		rc = errf(e, "unknown tool %s", tool);
	}
	buffree(&b);
	if (rc < 0 && strcmp(tool, "shell") != 0) {
		/* A file tool's failure is the model's problem, not the job's: report it as a tool error. */
		r->failed = 1;
		r->content = xstrdup(e->msg);
		cJSON_AddStringToObject(r->event, "error", e->msg);
		rc = 0;
	}
	if (strcmp(tool, "shell") != 0) {
		/* The digest and size of the whole result; the model sees it cut to the limit. */
		if (r->content)
			r->content = masked(o, r->content);
		size_t limit = o && o->limit ? o->limit : TOOL_OUTPUT_LIMIT, len = r->content ? strlen(r->content) : 0;
		char hex[65];
		sha256hex(r->content ? r->content : "", len, hex);
		cJSON_AddNumberToObject(r->event, "exit_code", r->failed);
		cJSON_AddNumberToObject(r->event, "duration_ms", (double)(nowms() - start));
		cJSON_AddStringToObject(r->event, "output_sha256", hex);
		cJSON_AddNumberToObject(r->event, "output_bytes", (double)len);
		if (len > limit + 256) {
			char *cut = toolclip(r->content, len, limit);
			free(r->content);
			r->content = cut;
		}
	}
	if (rc < 0)
		toolresfree(r); /* a shell step that failed (a stop, the engine gone): nothing to hand back */
	return rc;
}

void toolresfree(struct toolres *r)
{
	cJSON_Delete(r->net);
	r->net = NULL;
	free(r->content);
	cJSON_Delete(r->event);
	memset(r, 0, sizeof *r);
}
