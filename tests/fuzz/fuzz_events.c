/* fuzz_events: the event log reader and `audit --verify` on a run that holds the log.
 * Input: FLAGS TRIM TEXT [\0 RUNJSON]. FLAGS bit 0: TEXT is the compressed file as is; else it is
 * compressed here as the writer does (a zstd flush after each line), ending the frame unless bit 1
 * is set, and losing its last TRIM bytes when bit 2 is set (a crash mid-write). Bit 3: a
 * SHA256SUMS listing the files is written (a finished run), else the run is incomplete.
 * The tool-call listing of `audit` reads the same run.
 * Invariants: lines come without their newline, a log cut short is reported as truncated, never
 * as more lines than were written; verify runs to the end. */
#include <zstd.h>
#include "fuzz.h"
#include "../../artifacts/calls.h"
#include "../../artifacts/events.h"
#include "../../artifacts/verify.h"

static char *run, *jobdir, *logpath, *runjson, *sums;

static void init(void)
{
	const char *d = fuzzdir();
	run = pathjoin(d, "run");
	jobdir = pathjoin(run, "jobs/a");
	logpath = pathjoin(jobdir, "events.jsonl.zst");
	runjson = pathjoin(run, "run.json");
	sums = pathjoin(run, "SHA256SUMS");
	struct err e = {0};
	if (mkdirs(jobdir, 0755, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		abort();
	}
}

/* Compress text line by line as evadd does. */
static void compress(struct buf *out, const uint8_t *text, size_t n, int end)
{
	ZSTD_CCtx *z = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
	size_t cap = ZSTD_compressBound(n + 64) + 4096 + 64 * (n / 8 + 1);
	bufgrow(out, cap);
	size_t off = 0;
	do {
		const uint8_t *nl = memchr(text + off, '\n', n - off);
		size_t len = nl ? (size_t)(nl - text - off) + 1 : n - off;
		ZSTD_inBuffer in = {text + off, len, 0};
		ZSTD_EndDirective dir = nl || !end ? ZSTD_e_flush : ZSTD_e_end;
		for (;;) {
			ZSTD_outBuffer o = {out->data + out->len, out->cap - out->len - 1, 0};
			size_t left = ZSTD_compressStream2(z, &o, &in, dir);
			fuzzassert(!ZSTD_isError(left));
			out->len += o.pos;
			if (left == 0 && in.pos == in.size)
				break;
			bufgrow(out, 65536);
		}
		off += len;
	} while (off < n);
	if (end && n && text[n - 1] == '\n') {
		ZSTD_inBuffer in = {"", 0, 0};
		for (;;) {
			ZSTD_outBuffer o = {out->data + out->len, out->cap - out->len - 1, 0};
			size_t left = ZSTD_compressStream2(z, &o, &in, ZSTD_e_end);
			out->len += o.pos;
			if (left == 0)
				break;
			bufgrow(out, 65536);
		}
	}
	ZSTD_freeCCtx(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!run)
		init();
	if (size < 2)
		return 0;
	int flags = data[0], trim = data[1];
	data += 2, size -= 2;
	const uint8_t *zero = memchr(data, 0, size);
	size_t tn = zero ? (size_t)(zero - data) : size;
	struct buf file = {0};
	size_t written = 0; /* whole lines the writer finished */
	if (flags & 1) {
		bufadd(&file, (const char *)data, tn);
	} else {
		compress(&file, data, tn, !(flags & 2));
		for (size_t i = 0; i < tn; i++)
			written += data[i] == '\n';
		if ((flags & 4) && trim) {
			file.len = (size_t)trim < file.len ? file.len - trim : 0;
			written = SIZE_MAX; /* unknown; only an upper bound is checked */
		}
	}
	fuzzwrite(logpath, file.data ? file.data : "", file.len);
	unlink(runjson);
	unlink(sums);
	if (zero)
		fuzzwrite(runjson, zero + 1, size - tn - 1);
	if (flags & 8) {
		char h1[65], h2[65];
		struct buf s = {0};
		sha256hex(file.data ? file.data : "", file.len, h1);
		bufprintf(&s, "%s  jobs/a/events.jsonl.zst\n", h1);
		if (zero) {
			sha256hex(zero + 1, size - tn - 1, h2);
			bufprintf(&s, "%s  run.json\n", h2);
		}
		fuzzwrite(sums, s.data, s.len);
		buffree(&s);
	}
	buffree(&file);

	struct evreader *r;
	struct err e = {0};
	fuzzassert(evropen(&r, logpath, &e) == 0);
	const char *line;
	size_t len, lines = 0;
	int rc;
	while ((rc = evrnext(r, &line, &len, &e)) == 1) {
		fuzzassert(memchr(line, '\n', len) == NULL);
		lines++;
	}
	if (!(flags & 1)) {
		fuzzassert(rc == 0 || (flags & 4));
		fuzzassert(lines <= written);
		if (!(flags & 6))
			fuzzassert(lines == written && evrtruncated(r) == (tn && data[tn - 1] != '\n'));
	}
	evrclose(r);

	struct verdictrun v;
	if (runverify(run, &v, &e) == 0) {
		fuzzassert(v.failed >= 0 && v.events >= 0);
		verdictrunfree(&v);
	}

	struct calls *c;
	if (callsopen(&c, run, &e) == 0) {
		struct call call;
		int prev = -1;
		while (callsnext(c, &call, &e) == 1) {
			fuzzassert(call.decided);
			prev = call.step;
		}
		(void)prev;
		callsclose(c);
	}
	return 0;
}
