/* fuzz_snapshot: restoring hostile snapshot layers and run archives.
 * Input: FLAGS LAYER [SEP LAYER]... with SEP "\0NS-LAYER\0"; each LAYER is a tar, compressed here.
 * FLAGS bit 0: the first LAYER is instead the tar of a whole run directory, restored from
 * run.tar.zst (unpacked in TMPDIR); bit 1: restore "end" (the last layer is end.tar.zst), else
 * every numbered layer; bit 2: the target already holds files and symlinks out of it, and is
 * replaced (--force); bit 3: SHA256SUMS gives the first layer a wrong digest.
 * Invariant: nothing is written outside the target. Each input works in a fresh folder
 *   BASE/{run,to,tmp,cwd,outside}; afterwards BASE holds nothing else, tmp and cwd are empty,
 *   run holds what was put there, and the victims BASE/outside/victim and
 *   /tmp/nsfuzz-outside/victim (symlink and hard link targets in the seeds) are unchanged, as are
 *   their folders. In the target: only files, folders and symlinks, no set-id bits. */
#include <dirent.h>
#include <zstd.h>
#include "fuzz.h"
#include "../../snapshot/snapshot.h"

#define SEP "\0NS-LAYER\0"
#define SEPLEN 10
#define SHARED "/tmp/nsfuzz-outside"
#define VICTIM "victim\n"

static char *base, *run, *snaps, *to, *tmp, *cwd, *outside, *archive;

static void mkvictim(const char *dir)
{
	mkdir(dir, 0755);
	char *v = pathjoin(dir, "victim");
	struct stat st;
	if (lstat(v, &st) < 0)
		fuzzwrite(v, VICTIM, strlen(VICTIM));
	free(v);
}

static void init(void)
{
	base = xstrdup(fuzzdir());
	run = pathjoin(base, "run");
	snaps = pathjoin(run, "snapshots");
	to = pathjoin(base, "to");
	tmp = pathjoin(base, "tmp");
	cwd = pathjoin(base, "cwd");
	outside = pathjoin(base, "outside");
	archive = pathjoin(base, "run.tar.zst");
	mkdir(tmp, 0755);
	mkdir(cwd, 0755);
	mkvictim(outside);
	mkvictim(SHARED);
	setenv("TMPDIR", tmp, 1);
}

/* dir holds exactly the names given (NULL-terminated). */
static void holdsonly(const char *dir, const char *const *names)
{
	DIR *d = opendir(dir);
	fuzzassert(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		int known = 0;
		for (const char *const *n = names; *n && !known; n++)
			known = strcmp(*n, de->d_name) == 0;
		if (!known)
			fprintf(stderr, "fuzz: %s/%s appeared\n", dir, de->d_name);
		fuzzassert(known);
	}
	closedir(d);
}

static void victimsafe(const char *dir)
{
	struct stat st;
	fuzzassert(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0755);
	const char *const only[] = {"victim", NULL};
	holdsonly(dir, only);
	char *v = pathjoin(dir, "victim");
	struct buf b = {0};
	struct err e = {0};
	fuzzassert(lstat(v, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0644 && st.st_nlink == 1);
	fuzzassert(readfile(v, &b, &e) == 0 && b.len == strlen(VICTIM) && memcmp(b.data, VICTIM, b.len) == 0);
	buffree(&b);
	free(v);
}

/* What the restore made: only files, folders and symlinks, without set-id bits. */
static void checktarget(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	fuzzassert(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		struct stat st;
		fuzzassert(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0);
		fuzzassert(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode));
		if (!S_ISLNK(st.st_mode))
			fuzzassert(!(st.st_mode & (S_ISUID | S_ISGID)));
		if (S_ISDIR(st.st_mode) && depth < 64) {
			int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				checktarget(fd, depth + 1);
		}
	}
	closedir(d);
}

static void writelayer(const char *path, const uint8_t *p, size_t n, char hex[65])
{
	size_t cap = ZSTD_compressBound(n);
	char *z = xmalloc(cap);
	size_t zn = ZSTD_compress(z, cap, p, n, 1);
	fuzzassert(!ZSTD_isError(zn));
	fuzzwrite(path, z, zn);
	sha256hex(z, zn, hex);
	free(z);
}

/* A target that already holds a file, a folder and symlinks leading out. */
static void populate(void)
{
	mkdir(to, 0755);
	char *p = pathjoin(to, "old");
	fuzzwrite(p, "old\n", 4);
	free(p);
	p = pathjoin(to, "d");
	mkdir(p, 0500);
	free(p);
	p = pathjoin(to, "out");
	if (symlink("../outside", p) < 0)
		abort();
	free(p);
	p = pathjoin(to, "victim");
	if (symlink(SHARED "/victim", p) < 0)
		abort();
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!base)
		init();
	if (size < 1)
		return 0;
	int flags = data[0];
	data++, size--;
	/* Work in cwd (a write relative to it would show), and go back after: libFuzzer reads the
	 * corpus by the paths it was given. */
	int back = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (back < 0 || chdir(cwd) < 0)
		abort();
	mkdir(run, 0755);
	mkdir(snaps, 0755);
	struct buf sums = {0};
	size_t nlayers = 0;
	char hex[65];
	const char *names[12] = {"run", "to", "tmp", "cwd", "outside", NULL, NULL};
	if (flags & 1) {
		writelayer(archive, data, size, hex);
		names[5] = "run.tar.zst";
	} else {
		const uint8_t *p = data, *end = data + size;
		for (;;) {
			const uint8_t *hit = memmem(p, (size_t)(end - p), SEP, SEPLEN);
			size_t n = hit ? (size_t)(hit - p) : (size_t)(end - p);
			nlayers++;
			int last = !hit || nlayers == 9;
			char name[32];
			if ((flags & 2) && last)
				snprintf(name, sizeof name, "end.tar.zst");
			else
				snprintf(name, sizeof name, "%04zu.tar.zst", nlayers);
			char *path = pathjoin(snaps, name);
			writelayer(path, p, n, hex);
			free(path);
			if (nlayers == 1 && (flags & 8))
				hex[0] = hex[0] == '0' ? '1' : '0';
			bufprintf(&sums, "%s  snapshots/%s\n", hex, name);
			if (last)
				break;
			p = hit + SEPLEN;
		}
	}
	char *sp = pathjoin(run, "SHA256SUMS");
	fuzzwrite(sp, sums.data ? sums.data : "", sums.len);
	free(sp);
	buffree(&sums);
	if (flags & 4)
		populate();

	struct err e = {0};
	int step = (flags & 2) ? 0 : (flags & 1) ? 9 : (int)nlayers;
	int rc = snaprestore((flags & 1) ? archive : run, step, to, (flags & 4) != 0, &e);
	fuzzassert(rc == 0 || (rc < 0 && e.msg[0]));

	holdsonly(base, names);
	const char *none[] = {NULL};
	holdsonly(tmp, none);
	holdsonly(cwd, none);
	const char *runnames[] = {"SHA256SUMS", "snapshots", NULL};
	holdsonly(run, runnames);
	victimsafe(outside);
	victimsafe(SHARED);
	int tfd = open(to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd >= 0) {
		fchmod(tfd, 0755); /* a layer may give the target's root no permissions */
		checktarget(tfd, 0);
	}
	fuzzrmtree(to);
	fuzzrmtree(run);
	unlink(archive);
	if (fchdir(back) < 0)
		abort();
	close(back);
	return 0;
}
