/* bound: how much expanding a run archive or a chain of snapshot layers may produce.
 *
 * Every entry is counted from its header before any of it is written, so a bound holds whatever
 * the data would be; a sparse file counts its data (what takes disk) against the bytes, and its
 * size with the holes against a bound 1024 times larger (a hole costs nothing to write, but no
 * workspace holds a petabyte). What is read counts too, so that bytes no entry writes (skipped
 * data, padding, what follows the end of the tar) cannot keep a reader busy. */
#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include "bound.h"

enum { BOUNDMIN = 64 << 20, ENTRYBYTES = 4096, SIZEFACTOR = 1024 };

static int64_t bounddefault(int64_t packed)
{
	int64_t b = packed > INT64_MAX / 100 ? INT64_MAX : packed * 100;
	return b < BOUNDMIN ? BOUNDMIN : b;
}

void boundinit(struct bound *b, const char *what, int64_t max, int64_t packed, long long minentries)
{
	*b = (struct bound){.what = what};
	b->maxbytes = max > 0 ? max : bounddefault(packed);
	b->maxentries = b->maxbytes / ENTRYBYTES > minentries ? b->maxbytes / ENTRYBYTES : minentries;
	b->maxsize = b->maxbytes > INT64_MAX / SIZEFACTOR ? INT64_MAX : b->maxbytes * SIZEFACTOR;
	int64_t headers = b->maxentries > INT64_MAX / ENTRYBYTES ? INT64_MAX : b->maxentries * ENTRYBYTES;
	b->maxstream = b->maxbytes > INT64_MAX - headers ? INT64_MAX : b->maxbytes + headers;
}

/* A sparse file's holes read as zeros, which a zstd skippable frame (or bytes after the last frame)
 * may hold: a layer of 1 GiB of holes, 4 KB on disk, raised a chain's bound to 100 GiB for the
 * layers applied before it was read (attack12). */
int64_t boundondisk(const struct stat *st)
{
	if (!S_ISREG(st->st_mode) || st->st_size < 0)
		return 0;
	int64_t used = st->st_blocks > INT64_MAX / 512 ? INT64_MAX : (int64_t)st->st_blocks * 512;
	return used < st->st_size ? used : st->st_size;
}

int64_t bounddata(struct archive_entry *en)
{
	if (archive_entry_filetype(en) != AE_IFREG || archive_entry_hardlink(en))
		return 0;
	if (archive_entry_sparse_count(en) <= 0)
		return archive_entry_size(en);
	int64_t data = 0;
	la_int64_t off, len;
	archive_entry_sparse_reset(en);
	while (archive_entry_sparse_next(en, &off, &len) == ARCHIVE_OK)
		if (len > 0)
			data = len > INT64_MAX - data ? INT64_MAX : data + len;
	return data;
}

int boundentry(struct bound *b, const char *path, int64_t data, int64_t size, struct err *e)
{
	if (++b->entries > b->maxentries)
		return errc(e, ERR_VERIFY, "%s: more than %lld entries in %s; refusing it (--max-unpack raises the bound)", path,
		            b->maxentries, b->what);
	if (data < 0 || data > b->maxbytes - b->bytes)
		return errc(e, ERR_VERIFY, "%s: %lld bytes would take %s past %lld bytes; refusing it (--max-unpack raises the bound)",
		            path, (long long)data, b->what, (long long)b->maxbytes);
	if (size < 0 || size > b->maxsize - b->size)
		return errc(e, ERR_VERIFY, "%s: a file of %lld bytes (holes included) would take %s past %lld bytes of file sizes "
		                  "(1024 times the bound); refusing it (--max-unpack raises the bound)",
		            path, (long long)size, b->what, (long long)b->maxsize);
	b->bytes += data;
	b->size += size;
	return 0;
}

int boundstream(struct bound *b, int64_t n, struct err *e)
{
	if (n > b->maxstream - b->stream) {
		b->stream = b->maxstream;
		return errc(e, ERR_VERIFY, "it decompresses to more than %lld bytes (the bound's data and 4 KiB an entry); refusing "
		                  "it (--max-unpack raises the bound)",
		            (long long)b->maxstream);
	}
	b->stream += n;
	return 0;
}
