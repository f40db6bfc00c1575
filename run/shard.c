/* shard: connected components of the needs graph, packed onto N groups (longest processing time first).
 * A group holds whole components, so no job ever needs a job of another group: every group of a
 * GitHub Actions matrix can start at once, and one group's run is the same as those jobs' part of
 * an unsharded run. */
#include <stdlib.h>
#include <string.h>
#include "shard.h"

int shardparse(const char *spec, int *i, int *n, struct err *e)
{
	char *end;
	long a = strtol(spec, &end, 10);
	if (end == spec || *end != '/' || spec[0] == '-' || spec[0] == '+')
		return errc(e, ERR_INPUT, "--shard %s: expected I/N, e.g. 1/3", spec);
	const char *b = end + 1;
	long c = strtol(b, &end, 10);
	if (end == b || *end || b[0] == '-' || b[0] == '+')
		return errc(e, ERR_INPUT, "--shard %s: expected I/N, e.g. 1/3", spec);
	if (c < 1 || c > SHARDMAX)
		return errc(e, ERR_INPUT, "--shard %s: N must be from 1 to %d", spec, SHARDMAX);
	if (a < 1 || a > c)
		return errc(e, ERR_INPUT, "--shard %s: I must be from 1 to %ld", spec, c);
	*i = (int)a;
	*n = (int)c;
	return 0;
}

static size_t root(size_t *parent, size_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

struct comp {
	size_t first; /* manifest index of its first job: the tie-breaker */
	size_t size;
	size_t root;
};

static int bysize(const void *a, const void *b)
{
	const struct comp *x = a, *y = b;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* after[k]: job k needs a matrix member, directly or through another job. */
static int *aftermarks(const struct manifest *m)
{
	int *after = xcalloc(m->njobs ? m->njobs : 1, sizeof *after);
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t k = 0; k < m->njobs; k++)
			for (size_t d = 0; !after[k] && d < m->jobs[k].needs.n; d++) {
				const struct job *dep = manifestjob(m, m->jobs[k].needs.v[d]);
				if (dep && (dep->group || after[dep - m->jobs]))
					after[k] = changed = 1;
			}
	}
	return after;
}

int shardafter(const struct manifest *m, struct strv *jobs)
{
	int *after = aftermarks(m), n = 0;
	for (size_t k = 0; k < m->njobs; k++)
		if (after[k]) {
			strvadd(jobs, m->jobs[k].id);
			n++;
		}
	free(after);
	return n;
}

int shardjobs(const struct manifest *m, int i, int n, struct strv *jobs, struct err *e)
{
	if (n < 1 || n > SHARDMAX || i < 1 || i > n)
		return errc(e, ERR_INPUT, "shard %d/%d: I must be from 1 to N, N from 1 to %d", i, n, SHARDMAX);
	size_t nj = m->njobs;
	size_t *parent = xcalloc(nj ? nj : 1, sizeof *parent);
	for (size_t k = 0; k < nj; k++)
		parent[k] = k;
	int *after = aftermarks(m);
	for (size_t k = 0; k < nj; k++)
		for (size_t d = 0; d < m->jobs[k].needs.n; d++) {
			const struct job *dep = manifestjob(m, m->jobs[k].needs.v[d]);
			if (!dep) {
				free(parent);
				free(after);
				return errc(e, ERR_INPUT, "job '%s' needs unknown job '%s'", m->jobs[k].id, m->jobs[k].needs.v[d]);
			}
			if (after[k])
				continue; /* it runs after the groups: it joins none of them */
			size_t a = root(parent, k), b = root(parent, (size_t)(dep - m->jobs));
			if (a != b)
				parent[a > b ? a : b] = a < b ? a : b; /* the lower index stays the root */
		}
	/* Components in order of their first job (the root is the lowest index of each). */
	struct comp *c = xcalloc(nj ? nj : 1, sizeof *c);
	size_t *slot = xcalloc(nj ? nj : 1, sizeof *slot), nc = 0;
	for (size_t k = 0; k < nj; k++) {
		size_t r = root(parent, k);
		if (after[k])
			continue;
		if (r == k) {
			c[nc] = (struct comp){.first = k, .size = 0, .root = k};
			slot[k] = nc++;
		}
		c[slot[r]].size++;
	}
	qsort(c, nc, sizeof *c, bysize);
	/* Largest first onto the least loaded group; ties go to the lowest group. */
	size_t *load = xcalloc((size_t)n, sizeof *load);
	int *group = xcalloc(nj ? nj : 1, sizeof *group); /* by root */
	for (size_t k = 0; k < nc; k++) {
		int best = 0;
		for (int g = 1; g < n; g++)
			if (load[g] < load[best])
				best = g;
		load[best] += c[k].size;
		group[c[k].root] = best + 1;
	}
	int count = 0;
	for (size_t k = 0; k < nj; k++)
		if (!after[k] && group[root(parent, k)] == i) {
			strvadd(jobs, m->jobs[k].id);
			count++;
		}
	free(group);
	free(after);
	free(load);
	free(slot);
	free(c);
	free(parent);
	return count;
}
