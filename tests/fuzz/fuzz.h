/* fuzz.h: helpers shared by the libFuzzer targets tests/fuzz/fuzz_*.c (scratch folders, files). */
#ifndef NS_FUZZ_H
#define NS_FUZZ_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Stop the run with a finding libFuzzer reports (and saves the input of). */
#define fuzzassert(c)                                                                               \
	do {                                                                                            \
		if (!(c)) {                                                                                 \
			fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #c);          \
			abort();                                                                                \
		}                                                                                           \
	} while (0)

/* Remove name in directory dfd, a whole tree if it is a directory; never follows a symlink, and
 * opens up directories so it works as any user. */
static inline void fuzzrmat(int dfd, const char *name)
{
	if (unlinkat(dfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM && errno != ENOTEMPTY))
		return;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fchmodat(dfd, name, 0700, 0);
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd >= 0) {
		fchmod(fd, 0700);
		DIR *d = fdopendir(fd);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d)))
				if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
					fuzzrmat(dirfd(d), de->d_name);
			closedir(d);
		} else {
			close(fd);
		}
	}
	unlinkat(dfd, name, AT_REMOVEDIR);
}

/* Remove a tree (or file) at path. */
static inline void fuzzrmtree(const char *path)
{
	fuzzrmat(AT_FDCWD, path);
}

static char fuzzbase[256];

static inline void fuzzcleanup(void)
{
	if (fuzzbase[0])
		fuzzrmtree(fuzzbase);
}

/* Remove the scratch folders (nsfuzz.PID.XXXXXX in root) of processes that are gone: libFuzzer
 * leaves without running atexit handlers when it reports a finding. */
static inline void fuzzsweep(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		long pid;
		char rest[32];
		if (sscanf(de->d_name, "nsfuzz.%ld.%31s", &pid, rest) != 2 || pid <= 0)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char path[512];
		snprintf(path, sizeof path, "%s/%s", root, de->d_name);
		fuzzrmtree(path);
	}
	if (d)
		closedir(d);
}

/* The process's scratch folder (made on first use, removed at exit); on a tmpfs when there is one. */
static inline const char *fuzzdir(void)
{
	if (!fuzzbase[0]) {
		struct stat st;
		const char *root = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
		                       ? "/dev/shm" : "/tmp";
		fuzzsweep(root);
		snprintf(fuzzbase, sizeof fuzzbase, "%s/nsfuzz.%ld.XXXXXX", root, (long)getpid());
		if (!mkdtemp(fuzzbase)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(fuzzcleanup);
	}
	return fuzzbase;
}

/* Write n bytes to path (replacing it); aborts on failure, which is the harness's, not a finding. */
static inline void fuzzwrite(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		abort();
	}
	const char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0) {
			perror(path);
			abort();
		}
		p += w;
		n -= (size_t)w;
	}
	close(fd);
}

/* The next part of data[*off..size) up to sep (or the end), advancing *off past sep; NULL when
 * nothing is left. */
static inline const uint8_t *fuzzpart(const uint8_t *data, size_t size, size_t *off, const char *sep,
                                      size_t *len)
{
	if (*off > size || (*off == size && *off != 0))
		return NULL;
	size_t sl = strlen(sep);
	const uint8_t *start = data + *off;
	const uint8_t *hit = size - *off >= sl ? memmem(start, size - *off, sep, sl) : NULL;
	if (hit) {
		*len = (size_t)(hit - start);
		*off += *len + sl;
	} else {
		*len = size - *off;
		*off = size + 1;
	}
	return start;
}

#endif
