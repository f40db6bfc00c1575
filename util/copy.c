/* copy: files and trees of files copied as they are. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "copy.h"

/* Copy in to out from where each stands, a buffer at a time. 0, or -1 with errno, *inerr telling
 * whether it was the read. */
static int pour(int in, int out, int *inerr)
{
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		*inerr = n < 0;
		if (n < 0 || writeall(out, buf, (size_t)n) < 0)
			return -1;
	}
	return 0;
}

int copyfile(const char *src, const char *dst, int linkok, struct err *e)
{
	if (linkok && link(src, dst) == 0)
		return 0;
	int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0)
		return errc(e, ERR_INPUT, "%s:", src);
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (out < 0) {
		close(in);
		return errf(e, "create %s:", dst);
	}
	int inerr = 0, rc = pour(in, out, &inerr) < 0 ? errf(e, "%s %s:", inerr ? "read" : "write", inerr ? src : dst) : 0;
	if (close(out) < 0 && rc == 0)
		rc = errf(e, "write %s:", dst);
	close(in);
	return rc;
}

/* Copy the regular file in to out by its data extents (SEEK_DATA, SEEK_HOLE): a hole is hashed as
 * the zeros it reads as, and left a hole in out. 0, or -1 with errno, *inerr telling whether it was
 * the read. */
static int extents(int in, int out, int64_t size, EVP_MD_CTX *md, int *inerr)
{
	static const char zeros[65536];
	char buf[65536];
	for (off_t at = 0; at < size;) {
		off_t data = lseek(in, at, SEEK_DATA), hole;
		if (data < 0 && errno != ENXIO)
			return *inerr = 1, -1;
		if (data < 0 || data > size)
			data = size; /* a hole to the end */
		for (off_t z = at; z < data; z += (off_t)sizeof zeros)
			EVP_DigestUpdate(md, zeros, (size_t)(data - z < (off_t)sizeof zeros ? data - z : (off_t)sizeof zeros));
		if (data == size)
			break;
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			return *inerr = 1, -1;
		if (hole > size)
			hole = size;
		for (at = data; at < hole;) {
			size_t want = hole - at < (off_t)sizeof buf ? (size_t)(hole - at) : sizeof buf;
			ssize_t n = pread(in, buf, want, at);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				if (n == 0)
					errno = EIO; /* shorter than when it was measured */
				return *inerr = 1, -1;
			}
			if (lseek(out, at, SEEK_SET) < 0 || writeall(out, buf, (size_t)n) < 0)
				return *inerr = 0, -1;
			EVP_DigestUpdate(md, buf, (size_t)n);
			at += n;
		}
	}
	if (ftruncate(out, size) < 0)
		return *inerr = 0, -1;
	return 0;
}

int copyfdto(int in, const char *dst, int64_t *bytes, char sha256[65], struct err *e)
{
	struct stat st;
	if (fstat(in, &st) < 0)
		return errf(e, "stat for %s:", dst);
	char *tmp;
	int out = tmpcreate(dst, &tmp, e);
	if (out < 0)
		return -1;
	*bytes = 0;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL))
		abort();
	int inerr = 0, rc = extents(in, out, st.st_size, md, &inerr) < 0 ?
	                     errf(e, "%s %s:", inerr ? "read for" : "write", dst) : 0;
	*bytes = st.st_size;
	sha256done(md, sha256);
	EVP_MD_CTX_free(md);
	if (rc == 0 && (fsync(out) < 0 || close(out) < 0))
		rc = errf(e, "write %s:", dst);
	else if (rc < 0)
		close(out);
	if (rc == 0)
		rc = tmpplace(tmp, dst, e);
	else
		unlink(tmp);
	free(tmp);
	return rc;
}

static int tree(const char *src, const char *dst, int depth, struct err *e)
{
	if (depth > 64)
		return errc(e, ERR_INPUT, "%s: folders nested too deep", src);
	if (mkdirs(dst, 0755, e) < 0)
		return -1;
	DIR *d = opendir(src);
	if (!d)
		return errc(e, ERR_INPUT, "%s:", src);
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char *s = pathjoin(src, de->d_name), *t = pathjoin(dst, de->d_name);
		struct stat st;
		if (lstat(s, &st) < 0)
			rc = errc(e, ERR_INPUT, "%s:", s);
		else if (S_ISDIR(st.st_mode))
			rc = tree(s, t, depth + 1, e);
		else if (S_ISREG(st.st_mode))
			rc = copyfile(s, t, 0, e);
		else
			rc = errc(e, ERR_INPUT, "%s is neither a file nor a folder", s);
		free(s);
		free(t);
	}
	closedir(d);
	return rc;
}

int copytree(const char *src, const char *dst, struct err *e)
{
	return tree(src, dst, 0, e);
}
