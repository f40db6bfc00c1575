/* fuzz_gitindex: a workspace's .git/index (the model writes any bytes there), digested and listed.
 * Input: the index file's bytes.
 * Invariants: what lists paths also digests (the budget aside), never more paths than the header
 * counts, their bytes within the budget, and a budget of exactly those bytes lists the same paths. */
#include "fuzz.h"
#include "../../util/gitindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *)data;
	unsigned char sum[32];
	int summed = gitindexsum(d, size, sum) == 0;
	struct strv big = {0}, small = {0};
	int listed = gitindexpaths(d, size, (size_t)64 << 20, &big) == 0;
	if (listed) {
		uint32_t count = (uint32_t)data[8] << 24 | (uint32_t)data[9] << 16 | (uint32_t)data[10] << 8 | data[11];
		fuzzassert(big.n == count);
		size_t bytes = 0;
		for (size_t i = 0; i < big.n; i++)
			bytes += strlen(big.v[i]) + 1;
		fuzzassert(bytes <= (size_t)64 << 20);
		fuzzassert(summed);
		/* a budget of exactly their bytes holds them */
		int fits = gitindexpaths(d, size, bytes, &small) == 0;
		fuzzassert(fits && small.n == big.n);
		for (size_t i = 0; i < big.n; i++)
			fuzzassert(strcmp(big.v[i], small.v[i]) == 0);
		strvfree(&small);
	}
	strvfree(&big);
	return 0;
}
