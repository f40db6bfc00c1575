/* replay: a main for the fuzz targets built without libFuzzer (gcc, valgrind, SANITIZE=1): runs
 * the target once on each file named, or on each file of each folder named (a corpus), and ends
 * with the harness's "N passed, N failed" line. A finding aborts, as under libFuzzer. */
#include <dirent.h>
#include "fuzz.h"
#include "../../util/util.h"

static int runfile(const char *path)
{
	struct buf b = {0};
	struct err e = {0};
	if (readfile(path, &b, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return -1;
	}
	/* A copy of exactly the input's size, so a read past it is seen by ASan and valgrind. */
	uint8_t *copy = xmalloc(b.len ? b.len : 1);
	memcpy(copy, b.data ? b.data : "", b.len);
	LLVMFuzzerTestOneInput(copy, b.len);
	free(copy);
	buffree(&b);
	return 0;
}

static int bypath(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	long ran = 0, bad = 0;
	/* Absolute paths: a target may change its working directory. */
	for (int i = 1; i < argc; i++) {
		char *abs = realpath(argv[i], NULL);
		if (abs)
			argv[i] = abs; /* kept to the end */
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "%s: not found\n", argv[i]);
			bad++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad += runfile(argv[i]) < 0;
			ran++;
			continue;
		}
		struct strv files = {0};
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.') {
				char *p = pathjoin(argv[i], de->d_name);
				strvadd(&files, p);
				free(p);
			}
		if (d)
			closedir(d);
		if (files.n)
			qsort(files.v, files.n, sizeof *files.v, bypath);
		for (size_t k = 0; k < files.n; k++) {
			bad += runfile(files.v[k]) < 0;
			ran++;
		}
		strvfree(&files);
	}
	printf("%ld passed, %ld failed\n", ran - bad, bad);
	return bad != 0;
}
