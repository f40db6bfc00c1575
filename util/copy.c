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

/* Copy in to out from where each stands, a buffer at a time; *bytes and md (each may be NULL)
 * count and hash what went. Where out can seek, a buffer of zeros is skipped, not written: a sparse
 * file stays sparse (a step makes one of a terabyte in a millisecond, at a declared file's name too).
 * 0, or -1 with errno, *inerr telling whether it was the read. */
static int pour(int in, int out, int64_t *bytes, EVP_MD_CTX *md, int *inerr)
{
	static const char zeros[65536];
	char buf[65536];
	ssize_t n;
	off_t at = lseek(out, 0, SEEK_CUR), end = at;
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		*inerr = n < 0;
		if (n < 0)
			return -1;
		if (at >= 0 && memcmp(buf, zeros, (size_t)n) == 0 ? lseek(out, n, SEEK_CUR) < 0
		                                                 : writeall(out, buf, (size_t)n) < 0)
			return -1;
		end += n;
		if (bytes)
			*bytes += n;
		if (md)
			EVP_DigestUpdate(md, buf, (size_t)n);
	}
	*inerr = 0;
	return at >= 0 && ftruncate(out, end) < 0 ? -1 : 0; /* a file that ends in a hole gets its length */
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
	int inerr = 0, rc = pour(in, out, NULL, NULL, &inerr) < 0 ? errf(e, "%s %s:", inerr ? "read" : "write", inerr ? src : dst) : 0;
	if (close(out) < 0 && rc == 0)
		rc = errf(e, "write %s:", dst);
	close(in);
	return rc;
}

int copyfdto(int in, const char *dst, int64_t *bytes, char sha256[65], struct err *e)
{
	char *tmp;
	int out = tmpcreate(dst, &tmp, e);
	if (out < 0)
		return -1;
	*bytes = 0;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL))
		abort();
	int inerr = 0, rc = pour(in, out, bytes, md, &inerr) < 0 ? errf(e, "%s %s:", inerr ? "read for" : "write", dst) : 0;
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
