/* gitindex: the entries of a git index, digested (the format: git's
 * Documentation/gitformat-index.txt). Every read is bounds-checked: the bytes come from a
 * workspace, which is not trusted. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include "gitindex.h"
#include "util.h"

int gitindexpath(const char *path)
{
	size_t n = strlen(path);
	return strcmp(path, ".git/index") == 0 || (n > 11 && strcmp(path + n - 11, "/.git/index") == 0);
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* How many bytes a and b begin with alike. */
static size_t common(const char *a, size_t na, const unsigned char *b, size_t nb)
{
	size_t i = 0;
	while (i < na && i < nb && (unsigned char)a[i] == b[i])
		i++;
	return i;
}

/* Read the entries with object ids of oidlen bytes, into md, or into paths (each path whole, at most
 * budget bytes of them in all); 0 when they parse to the end of the list.
 * A path is hashed as the count of bytes it shares with the one before (8 bytes, big-endian) and
 * the bytes after those, then its NUL: what is hashed depends on the paths alone, whatever the
 * version, and each byte of a path is compared and hashed about once. (Hashing each whole path
 * was quadratic: a version-4 entry names its path by its change from the one before, so a few
 * bytes an entry grow one path without end.) */
static int entries(const unsigned char *d, size_t n, size_t oidlen, EVP_MD_CTX *md, struct strv *paths,
                   size_t budget, size_t *end)
{
	if (n < 12)
		return -1; /* a short file's trailing checksum overlaps the header: n counts it out */
	uint32_t ver = be32(d + 4), count = be32(d + 8);
	size_t off = 12;
	struct buf prev = {0};
	int rc = 0;
	for (uint32_t i = 0; i < count && rc == 0; i++) {
		size_t start = off, fixed = 40 + oidlen + 2, same;
		if (n - off < fixed) {
			rc = -1;
			break;
		}
		const unsigned char *mode = d + off + 24, *oid = d + off + 40;
		unsigned flags = (unsigned)d[off + fixed - 2] << 8 | d[off + fixed - 1];
		unsigned ext = 0;
		off += fixed;
		if (flags & 0x4000) { /* extended: version 3 and up */
			if (ver < 3 || n - off < 2) {
				rc = -1;
				break;
			}
			ext = (unsigned)d[off] << 8 | d[off + 1];
			off += 2;
		}
		if (ver == 4) {
			/* the path: how many bytes of the previous one to drop (a varint), then the rest */
			uint64_t drop = 0;
			int k = 0;
			for (;; k++) {
				if (off >= n || k > 9) {
					rc = -1;
					break;
				}
				unsigned char c = d[off++];
				drop = (drop << 7) | (c & 0x7f);
				if (!(c & 0x80))
					break;
				drop++;
			}
			const unsigned char *z = rc == 0 ? memchr(d + off, 0, n - off) : NULL;
			if (!z || drop > prev.len) {
				rc = -1;
				break;
			}
			size_t keep = prev.len - (size_t)drop, len = (size_t)(z - (d + off));
			same = keep + (keep < prev.len ? common(prev.data + keep, prev.len - keep, d + off, len) : 0);
			prev.len = keep;
			bufadd(&prev, d + off, len);
			off = (size_t)(z - d) + 1;
		} else {
			const unsigned char *z = memchr(d + off, 0, n - off);
			if (!z) {
				rc = -1;
				break;
			}
			same = prev.len ? common(prev.data, prev.len, d + off, (size_t)(z - (d + off))) : 0;
			prev.len = 0;
			bufadd(&prev, d + off, (size_t)(z - (d + off)));
			size_t len = (size_t)(z - d) - start; /* up to the path's end, its NUL not counted */
			size_t padded = (len + 8) & ~(size_t)7; /* 1 to 8 NULs */
			if (padded > n - start) {
				rc = -1;
				break;
			}
			off = start + padded;
		}
		if (paths) { /* listed instead of hashed, each path whole: within the budget of their bytes */
			if (prev.len + 1 > budget) {
				rc = -1;
				break;
			}
			budget -= prev.len + 1;
			char *p = xstrndup(prev.data ? prev.data : "", prev.len);
			strvadd(paths, p);
			free(p);
			continue;
		}
		unsigned char meta[10];
		memcpy(meta, mode, 4);
		meta[4] = (unsigned char)((flags >> 8) & 0xf0); /* assume-valid, extended, stage; not the name length */
		meta[5] = (unsigned char)(ext >> 8);
		meta[6] = (unsigned char)ext;
		meta[7] = meta[8] = meta[9] = 0;
		unsigned char shared[8];
		for (int b = 0; b < 8; b++)
			shared[b] = (unsigned char)((uint64_t)same >> (56 - 8 * b));
		EVP_DigestUpdate(md, shared, sizeof shared);
		EVP_DigestUpdate(md, prev.data ? prev.data + same : "", prev.len - same + 1); /* the rest and its NUL */
		EVP_DigestUpdate(md, meta, sizeof meta);
		EVP_DigestUpdate(md, oid, oidlen);
	}
	buffree(&prev);
	*end = off;
	return rc;
}

/* Whether the extensions in d[off..n) (each a 4-byte signature, a 4-byte size, its bytes) name
 * a shared index ("link"): then the entries are in another file, and the ones here may be
 * changes to those with empty names. */
static int splitindex(const unsigned char *d, size_t n, size_t off)
{
	while (n - off >= 8) {
		if (memcmp(d + off, "link", 4) == 0)
			return 1;
		size_t size = be32(d + off + 4);
		if (size > n - off - 8)
			break;
		off += 8 + size;
	}
	return 0;
}

/* Whether data looks like an index of a version this reads. */
static int isindex(const unsigned char *d, size_t n)
{
	if (!d || n < 12 + 20 || memcmp(d, "DIRC", 4) != 0)
		return 0;
	uint32_t ver = be32(d + 4);
	return ver >= 2 && ver <= 4 && be32(d + 8) <= n / 40;
}

int gitindexsum(const char *data, size_t n, unsigned char out[32])
{
	const unsigned char *d = (const unsigned char *)data;
	if (!isindex(d, n))
		return -1;
	/* SHA-1 ids first; a SHA-256 repository's index reads only with 32-byte ones */
	static const size_t lens[] = {20, 32};
	for (int i = 0; i < 2; i++) {
		EVP_MD_CTX *md = EVP_MD_CTX_new();
		EVP_DigestInit_ex(md, EVP_sha256(), NULL);
		size_t end;
		int rc = entries(d, n - lens[i], lens[i], md, NULL, 0, &end); /* the trailing checksum is no entry */
		unsigned int len = 0;
		EVP_DigestFinal_ex(md, out, &len);
		EVP_MD_CTX_free(md);
		if (rc == 0)
			return splitindex(d, n - lens[i], end) ? -1 : 0; /* its entries are elsewhere */
	}
	return -1;
}

int gitindexpaths(const char *data, size_t n, size_t budget, struct strv *paths)
{
	const unsigned char *d = (const unsigned char *)data;
	if (!isindex(d, n))
		return -1;
	static const size_t lens[] = {20, 32};
	for (int i = 0; i < 2; i++) {
		struct strv got = {0};
		size_t end;
		int rc = entries(d, n - lens[i], lens[i], NULL, &got, budget, &end);
		if (rc == 0 && !splitindex(d, n - lens[i], end)) {
			*paths = got;
			return 0;
		}
		strvfree(&got);
		if (rc == 0)
			return -1; /* split: not to be read again with other ids, which cut its extensions short */
	}
	return -1;
}
