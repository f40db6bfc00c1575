/* rundir: create and seal a run directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "rundir.h"
#include "../snapshot/layername.h"
#include "../snapshot/scan.h"
#include "../util/path.h"

int rundircreate(struct rundir *r, const char *outdir, struct err *e)
{
	static const char *const subs[] = {"manifest", "jobs", "snapshots"};
	memset(r, 0, sizeof *r);
	if (mkdirs(outdir, 0755, e) < 0)
		return errc(e, ERR_INPUT, "--out %s: cannot create: %s", outdir, strerror(errno));
	for (int tries = 0; tries < 16; tries++) {
		time_t t = time(NULL);
		struct tm tm;
		unsigned short rnd = 0;
		gmtime_r(&t, &tm);
		if (getrandom(&rnd, sizeof rnd, 0) < 0)
			rnd = (unsigned short)(getpid() ^ t);
		size_t n = strftime(r->id, sizeof r->id, "%Y%m%dT%H%M%SZ", &tm);
		snprintf(r->id + n, sizeof r->id - n, "-%04x", rnd);
		free(r->path);
		r->path = pathjoin(outdir, r->id);
		/* Made whole under a hidden name, then renamed into place: a run directory never exists
		 * without its folders, so one killed at any moment is still recognised as a run. */
		char *tmp = xasprintf("%s/.%s.new", outdir, r->id);
		if (mkdir(tmp, 0755) < 0) {
			int err = errno;
			free(tmp);
			if (err == EEXIST)
				continue;
			errno = err;
			return errf(e, "mkdir %s:", r->path);
		}
		int rc = 0;
		for (int i = 0; i < 3 && rc == 0; i++) {
			char *p = pathjoin(tmp, subs[i]);
			rc = mkdir(p, 0755);
			free(p);
		}
		/* Locked before it has its name: nobody sees it unlocked while this process lives. */
		int fd = rc == 0 ? rundirlock(tmp) : -1;
		if (fd >= 0 && rename(tmp, r->path) == 0) {
			free(tmp);
			r->lock = fd + 1;
			return 0;
		}
		int err = errno;
		if (fd >= 0)
			close(fd);
		else if (rc == 0)
			rc = -1;
		for (int i = 0; i < 3; i++) {
			char *p = pathjoin(tmp, subs[i]);
			rmdir(p);
			free(p);
		}
		rmdir(tmp);
		free(tmp);
		if (rc == 0 && (err == EEXIST || err == ENOTEMPTY))
			continue;
		errno = err;
		return errf(e, "mkdir %s:", r->path);
	}
	return errf(e, "cannot make a fresh run directory in %s", outdir);
}

int rundircopy(struct rundir *r, const struct manifest *m, struct err *e)
{
	size_t dlen = strlen(m->dir);
	for (size_t i = 0; i < m->files.n; i++) {
		const char *f = m->files.v[i];
		/* beside the manifest: as written (replay reads it back by the same name); else its last name */
		const char *rel = strncmp(f, m->dir, dlen) == 0 && f[dlen] == '/' ? pathcopyname(f + dlen + 1)
		                  : strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
		/* The layers of configuration under the manifest, by role (their names are no one's). */
		if (m->admin.path && strcmp(f, m->admin.path) == 0)
			rel = RUNADMINPOLICY;
		else if (m->userconfig && strcmp(f, m->userconfig) == 0)
			rel = RUNUSERCONFIG;
		char *dst = xasprintf("%s/manifest/%s", r->path, rel);
		char *dir = dirname_dup(dst);
		struct buf data = {0};
		int rc = mkdirs(dir, 0755, e);
		if (rc == 0)
			rc = readfile(f, &data, e);
		if (rc == 0)
			rc = writefile(dst, data.data, data.len, e);
		buffree(&data);
		free(dir);
		free(dst);
		if (rc < 0)
			return -1;
	}
	return 0;
}

char *rundirjob(struct rundir *r, const char *job, struct err *e)
{
	char *p = xasprintf("%s/jobs/%s", r->path, job);
	if (mkdirs(p, 0755, e) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What an entry that is neither a regular file nor a folder is. */
static const char *oddkind(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a named pipe (fifo)" : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "not a regular file";
}

/* Collect every regular file below dir (relative paths with prefix) into out, and every other
 * entry that is not a folder into odd ("REL: what it is"), when odd is given. Never follows a link. */
static int walk(const char *root, const char *rel, struct strv *out, struct strv *odd, struct err *e)
{
	char *dir = *rel ? pathjoin(root, rel) : xstrdup(root);
	DIR *d = opendir(dir);
	if (!d) {
		errf(e, "open %s:", dir);
		free(dir);
		return -1;
	}
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char *r = *rel ? pathjoin(rel, de->d_name) : xstrdup(de->d_name);
		char *full = pathjoin(root, r);
		struct stat st;
		if (lstat(full, &st) == 0) {
			if (S_ISDIR(st.st_mode)) {
				rc = walk(root, r, out, odd, e);
			} else if (S_ISREG(st.st_mode)) {
				if (out && strcmp(r, "SHA256SUMS") != 0 && strcmp(r, "SHA256SUMS.sig") != 0)
					strvadd(out, r);
			} else if (odd) {
				char *line = xasprintf("%s: %s", r, oddkind(st.st_mode));
				strvadd(odd, line);
				free(line);
			}
		}
		free(full);
		free(r);
	}
	closedir(d);
	free(dir);
	return rc;
}

int rundirfiles(const char *dir, struct strv *files, struct err *e)
{
	int rc = walk(dir, "", files, NULL, e);
	if (rc == 0 && files->n)
		qsort(files->v, files->n, sizeof *files->v, cmpstr);
	return rc;
}

int rundirsums(struct rundir *r, struct err *e)
{
	struct strv files = {0};
	struct buf sums = {0};
	int rc = rundirfiles(r->path, &files, e);
	for (size_t i = 0; rc == 0 && i < files.n; i++) {
		if (strstr(files.v[i], ".tmp."))
			continue; /* a write that never finished */
		char hex[65], *full = pathjoin(r->path, files.v[i]);
		rc = sha256file(full, hex, e);
		free(full);
		if (rc == 0)
			sumsput(&sums, hex, files.v[i]);
	}
	if (rc == 0) {
		char *p = pathjoin(r->path, "SHA256SUMS");
		rc = writefile(p, sums.data ? sums.data : "", sums.len, e);
		free(p);
	}
	strvfree(&files);
	buffree(&sums);
	return rc;
}

int rundirodd(const char *dir, struct strv *odd, struct err *e)
{
	int rc = walk(dir, "", NULL, odd, e);
	if (rc == 0 && odd->n)
		qsort(odd->v, odd->n, sizeof *odd->v, cmpstr);
	return rc;
}

int rundirheld(const char *dir, const char *under, struct err *e)
{
	struct strv files = {0};
	struct buf sums = {0};
	char *sp = pathjoin(dir, "SHA256SUMS");
	int rc = rundirfiles(dir, &files, e);
	if (rc == 0 && (readfile(sp, &sums, e) < 0 || !sums.data))
		rc = errc(e, ERR_VERIFY, "%s: no SHA256SUMS to hold its layers to (an unsealed run: nightshift finalize it)", dir);
	size_t ul = strlen(under);
	for (size_t i = 0; rc == 0 && i < files.n; i++) {
		if (strncmp(files.v[i], under, ul) != 0)
			continue;
		char hex[65];
		struct buf line = {0};
		if (rundirsha(dir, files.v[i], hex, e) < 0) {
			rc = -1;
			break;
		}
		bufputc(&line, '\n');
		sumsput(&line, hex, files.v[i]); /* a whole line of SHA256SUMS */
		if (strncmp(sums.data, line.data + 1, line.len - 1) != 0 && !strstr(sums.data, line.data))
			rc = errc(e, ERR_VERIFY, "%s: %s is not in SHA256SUMS as it is (changed, or added after sealing)", dir,
			          files.v[i]);
		buffree(&line);
	}
	free(sp);
	buffree(&sums);
	strvfree(&files);
	return rc;
}

int rundirshape(const char *dir, enum errkind kind, struct err *e)
{
	struct strv odd = {0};
	struct err we = {0};
	int rc = 0;
	if (rundirodd(dir, &odd, &we) < 0)
		rc = errc(e, kind, "%s: %s", dir, we.msg);
	else if (odd.n)
		rc = errc(e, kind, "%s: %s%s; a run directory holds only regular files and folders, and nightshift reads "
		                   "nothing else in one (audit --verify refuses it)", dir, odd.v[0],
		          odd.n > 1 ? " (and more)" : "");
	strvfree(&odd);
	return rc;
}

int rundiropen(const char *dir, const char *rel, struct err *e)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errf(e, "%s:", dir);
	int fd = openbeneath(dfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	int saved = errno;
	close(dfd);
	struct stat st;
	if (fd < 0) {
		errno = saved;
		return saved == ELOOP || saved == EXDEV ? errc(e, ERR_VERIFY, "%s: reached through a symbolic link", rel)
		                                        : errf(e, "%s:", rel);
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return errc(e, ERR_VERIFY, "%s: %s", rel, oddkind(st.st_mode));
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int rundirsha(const char *dir, const char *rel, char out[65], struct err *e)
{
	int fd = rundiropen(dir, rel, e);
	if (fd < 0)
		return -1;
	int rc = sha256fd(fd, out, e) < 0 ? errctx(e, "%s", rel) : 0;
	close(fd);
	return rc;
}

int rundirisrun(const char *dir)
{
	char *rj = pathjoin(dir, "run.json"), *sums = pathjoin(dir, "SHA256SUMS"), *jobs = pathjoin(dir, "jobs");
	struct stat st;
	int yes = (stat(rj, &st) == 0 && S_ISREG(st.st_mode)) || (stat(sums, &st) == 0 && S_ISREG(st.st_mode)) ||
	          (stat(jobs, &st) == 0 && S_ISDIR(st.st_mode));
	free(rj);
	free(sums);
	free(jobs);
	return yes;
}

int rundirlock(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	int err = errno;
	close(fd);
	errno = err;
	return -1;
}

long rundirholder(const char *dir)
{
	int fd = rundirlock(dir);
	if (fd >= 0 || errno != EWOULDBLOCK) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	struct stat st;
	FILE *f = stat(dir, &st) == 0 ? fopen("/proc/locks", "re") : NULL;
	long pid = -1;
	char line[256];
	while (f && pid < 0 && fgets(line, sizeof line, f)) {
		/* "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF" */
		char kind[16];
		long p;
		unsigned maj, min;
		unsigned long long ino;
		if (sscanf(line, "%*s %15s %*s %*s %ld %x:%x:%llu", kind, &p, &maj, &min, &ino) == 5 &&
		    strcmp(kind, "FLOCK") == 0 && ino == (unsigned long long)st.st_ino && maj == major(st.st_dev) &&
		    min == minor(st.st_dev) && p > 0)
			pid = p;
	}
	if (f)
		fclose(f);
	return pid;
}

void rundirfree(struct rundir *r)
{
	if (r->lock > 0)
		close(r->lock - 1);
	r->lock = 0;
	free(r->path);
	r->path = NULL;
}

int rundirlayers(const char *dir, struct strv *files, struct err *e)
{
	struct strv all = {0};
	char *sd = pathjoin(dir, "snapshots");
	struct stat st;
	int rc = lstat(sd, &st) == 0 ? rundirfiles(sd, &all, e) : 0;
	for (size_t i = 0; rc == 0 && i < all.n; i++) {
		char *p = xasprintf("snapshots/%s", all.v[i]);
		strvadd(files, p);
		free(p);
	}
	strvfree(&all);
	free(sd);
	return rc;
}

cJSON *rundirsealed(const char *dir, const struct strv *carried, struct err *e)
{
	struct strv files = {0};
	if (rundirlayers(dir, &files, e) < 0)
		return NULL;
	cJSON *out = cJSON_CreateObject();
	for (size_t i = 0; i < files.n; i++) {
		const char *base = strrchr(files.v[i], '/') + 1;
		enum layerkind k = layerparse(base, NULL);
		int take = k == LAYER_END || k == LAYER_OLDEND;
		for (size_t j = 0; !take && carried && j < carried->n; j++)
			take = strcmp(carried->v[j], files.v[i]) == 0;
		char hex[65];
		if (!take)
			continue;
		if (rundirsha(dir, files.v[i], hex, e) < 0) {
			cJSON_Delete(out);
			out = NULL;
			break;
		}
		cJSON_AddStringToObject(out, files.v[i], hex);
	}
	strvfree(&files);
	return out;
}
