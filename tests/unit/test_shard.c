/* test_shard: I/N parsing, and the split of random job graphs: a partition, closed under needs,
 * the same every time, balanced, with the empty groups last. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../run/shard.h"
#include "t.h"

static char dir[] = "/tmp/ns-shard.XXXXXX";
static unsigned seed = 7;

static unsigned rnd(unsigned n)
{
	seed = seed * 1103515245 + 12345;
	return (seed >> 16) % n;
}

/* A manifest of n jobs j0..j(n-1), each needing a few earlier ones with probability p/100. */
static int load(struct manifest *m, int n, int p)
{
	struct buf y = {0};
	bufputs(&y, "version: 1\nworkspace: .\nmodels: { default: { provider: scripted, replies: [ { text: hi } ] } }\n"
	            "workers: { w: { instructions: x } }\njobs:\n");
	for (int i = 0; i < n; i++) {
		bufprintf(&y, "  j%d: { worker: w, input: x", i);
		int first = 1;
		for (int k = 0; k < i; k++)
			if ((int)rnd(100) < p && rnd(i) < 3) {
				bufprintf(&y, "%s j%d", first ? ", needs: [" : ",", k);
				first = 0;
			}
		bufputs(&y, first ? " }\n" : "] }\n");
	}
	char *path = pathjoin(dir, "m.yaml");
	struct err e = {0};
	writefile(path, y.data, y.len, &e);
	int rc = manifestload(m, path, &e);
	ok(rc == 0, "load: %s", e.msg);
	free(path);
	buffree(&y);
	return rc;
}

static int groupof(struct strv *g, int n, const char *id)
{
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < g[i].n; k++)
			if (strcmp(g[i].v[k], id) == 0)
				return i;
	return -1;
}

/* Count a problem; show the first few. */
#define PROBLEM(...) do { if (bad++ < 5) ok(0, __VA_ARGS__); } while (0)

static void graphs(void)
{
	int bad = 0;
	for (int round = 0; round < 200; round++) {
		struct manifest m;
		int nj = 1 + (int)rnd(40), p = (int)rnd(60), n = 1 + (int)rnd(8);
		if (load(&m, nj, p) < 0) {
			manifestfree(&m);
			continue;
		}
		struct strv g[8] = {{0}}, again = {0};
		struct err e = {0};
		size_t total = 0, maxload = 0, minload = m.njobs;
		for (int i = 0; i < n; i++) {
			if (shardjobs(&m, i + 1, n, &g[i], &e) != (int)g[i].n)
				PROBLEM("round %d: group %d: count differs from the list", round, i + 1);
			total += g[i].n;
			maxload = g[i].n > maxload ? g[i].n : maxload;
			minload = g[i].n < minload ? g[i].n : minload;
		}
		if (total != m.njobs)
			PROBLEM("round %d: %zu jobs placed of %zu", round, total, m.njobs);
		/* Every job in one group, with every job it needs. */
		for (size_t j = 0; j < m.njobs; j++) {
			int gj = groupof(g, n, m.jobs[j].id);
			if (gj < 0)
				PROBLEM("round %d: %s in no group", round, m.jobs[j].id);
			for (size_t d = 0; d < m.jobs[j].needs.n; d++)
				if (groupof(g, n, m.jobs[j].needs.v[d]) != gj)
					PROBLEM("round %d: %s needs %s of another group", round, m.jobs[j].id, m.jobs[j].needs.v[d]);
		}
		/* Empty groups come last: group i+1 holds jobs only when group i does. */
		for (int i = 1; i < n; i++)
			if (g[i].n && !g[i - 1].n)
				PROBLEM("round %d: group %d empty before %d", round, i, i + 1);
		/* The same call gives the same group. */
		int k = (int)rnd((unsigned)n);
		shardjobs(&m, k + 1, n, &again, &e);
		int same = again.n == g[k].n;
		for (size_t i = 0; same && i < again.n; i++)
			same = strcmp(again.v[i], g[k].v[i]) == 0;
		if (!same)
			PROBLEM("round %d: group %d differs on a second call", round, k + 1);
		/* Balance: with only unrelated jobs (p == 0), loads differ by at most one. */
		if (p == 0 && maxload - minload > 1)
			PROBLEM("round %d: unrelated jobs unbalanced: %zu to %zu", round, minload, maxload);
		strvfree(&again);
		for (int i = 0; i < n; i++)
			strvfree(&g[i]);
		manifestfree(&m);
	}
	ok(bad == 0, "200 random graphs split properly (%d problems)", bad);
}

static void fixed(void)
{
	/* a <- b, a <- c <- b, d <- e, f: components {a,b,c} {d,e} {f}. */
	const char *y = "version: 1\nworkspace: .\nmodels: { default: { provider: scripted, replies: [ { text: hi } ] } }\n"
	                "workers: { w: { instructions: x } }\njobs:\n"
	                "  a: { worker: w, input: x }\n  b: { worker: w, input: x, needs: [a] }\n"
	                "  d: { worker: w, input: x }\n  c: { worker: w, input: x, needs: [a, b] }\n"
	                "  e: { worker: w, input: x, needs: [d] }\n  f: { worker: w, input: x }\n";
	char *path = pathjoin(dir, "f.yaml");
	struct err e = {0};
	struct manifest m;
	writefile(path, y, strlen(y), &e);
	ok(manifestload(&m, path, &e) == 0, "load: %s", e.msg);
	struct strv g1 = {0}, g2 = {0}, g3 = {0};
	ok(shardjobs(&m, 1, 2, &g1, &e) == 3 && shardjobs(&m, 2, 2, &g2, &e) == 3, "2 groups of 3");
	okstr(g1.n == 3 ? g1.v[0] : NULL, "a", "group 1 starts with a");
	okstr(g1.n == 3 ? g1.v[2] : NULL, "c", "group 1 in manifest order: a b c");
	okstr(g2.n == 3 ? g2.v[0] : NULL, "d", "group 2: d e f");
	okstr(g2.n == 3 ? g2.v[2] : NULL, "f", "group 2 ends with f");
	strvfree(&g1);
	strvfree(&g2);
	ok(shardjobs(&m, 3, 4, &g3, &e) == 1 && strcmp(g3.v[0], "f") == 0, "4 groups: the third holds f");
	strvfree(&g3);
	ok(shardjobs(&m, 4, 4, &g3, &e) == 0 && g3.n == 0, "4 groups: the fourth is empty");
	ok(shardjobs(&m, 5, 4, &g3, &e) < 0 && e.kind == ERR_INPUT, "group 5 of 4 refused");
	manifestfree(&m);
	free(path);

	int i, n;
	ok(shardparse("2/3", &i, &n, &e) == 0 && i == 2 && n == 3, "2/3");
	ok(shardparse("1/1", &i, &n, &e) == 0 && i == 1 && n == 1, "1/1");
	static const char *const badspecs[] = {"0/3", "4/3", "3", "/3", "1/", "-1/3", "1/-3", "1/0", "1/257", "a/b", "1/3x",
	                                       "1 /3", "+1/3", ""};
	for (size_t k = 0; k < sizeof badspecs / sizeof badspecs[0]; k++)
		ok(shardparse(badspecs[k], &i, &n, &e) < 0 && e.kind == ERR_INPUT, "'%s' refused", badspecs[k]);
}

int main(void)
{
	ok(mkdtemp(dir) != NULL, "mkdtemp");
	fixed();
	graphs();
	char *cmd = xasprintf("rm -rf '%s'", dir);
	ok(system(cmd) == 0, "cleanup");
	free(cmd);
	return tdone();
}
