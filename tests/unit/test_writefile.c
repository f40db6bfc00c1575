/* test_writefile: a file written into place is a new file renamed there: a link at its name is
 * replaced, never written through; the temporary is hidden, new, and gone after. */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "t.h"
#include "../../util/util.h"
#include "../../util/zst.h"

static char dir[] = "/tmp/ns-test-writefile.XXXXXX";

/* What the victim holds, or "" when it cannot be read. */
static char *victim(void)
{
	static char s[64];
	char *p = pathjoin(dir, "victim");
	FILE *f = fopen(p, "r");
	size_t n = f ? fread(s, 1, sizeof s - 1, f) : 0;
	s[n] = 0;
	if (f)
		fclose(f);
	free(p);
	return s;
}

static void plant(const char *name)
{
	char *p = pathjoin(dir, "victim"), *l = pathjoin(dir, name);
	FILE *f = fopen(p, "w");
	fputs("VICTIM", f);
	fclose(f);
	unlink(l);
	ok(symlink(p, l) == 0, "a link at %s", name);
	free(p);
	free(l);
}

static int islink(const char *name)
{
	struct stat st;
	char *p = pathjoin(dir, name);
	int r = lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
	free(p);
	return r;
}

/* Entries of dir with ".tmp." in their names. */
static int temps(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d)))
		n += strstr(de->d_name, ".tmp.") != NULL;
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	struct err e = {0};
	if (!mkdtemp(dir))
		return 1;
	char *out = pathjoin(dir, "out");

	plant("out");
	ok(writefile(out, "new", 3, &e) == 0, "writefile onto a link: %s", e.msg);
	okstr(victim(), "VICTIM", "writefile: the link's target");
	ok(!islink("out"), "writefile: the link itself replaced");
	ok(temps() == 0, "writefile: no temporary left");

	char *tmp = NULL;
	int fd = tmpcreate(out, &tmp, &e);
	ok(fd >= 0 && tmp, "tmpcreate: %s", e.msg);
	ok(tmp && strncmp(tmp, dir, strlen(dir)) == 0 && strstr(tmp, "/.out.tmp."), "tmpcreate: hidden, beside: %s",
	   tmp ? tmp : "");
	plant("out");
	ok(fd >= 0 && write(fd, "x", 1) == 1 && close(fd) == 0, "tmpcreate: written");
	ok(tmpplace(tmp, out, &e) == 0, "tmpplace: %s", e.msg);
	okstr(victim(), "VICTIM", "tmpplace: the link's target");
	ok(!islink("out"), "tmpplace: the link itself replaced");
	free(tmp);
	ok(tmpplace(NULL, out, &e) == 0, "tmpplace of nothing: nothing to do");

	plant("out");
	struct zstw *w;
	ok(zstwopen(&w, out, 3, 0, ZSTW_PLACE, &e) == 0, "zstwopen ZSTW_PLACE: %s", e.msg);
	ok(temps() == 1, "ZSTW_PLACE: the stream goes to a temporary");
	ok(zstwrite(w, "line\n", 5, &e) == 0 && zstwclose(w, NULL, NULL, &e) == 0, "ZSTW_PLACE: closed: %s", e.msg);
	okstr(victim(), "VICTIM", "ZSTW_PLACE: the link's target");
	ok(!islink("out") && temps() == 0, "ZSTW_PLACE: in the link's place, no temporary left");
	ok(zstwopen(&w, out, 3, 0, ZSTW_PLACE, &e) == 0, "ZSTW_PLACE again");
	zstwfree(w);
	ok(temps() == 0, "zstwfree: the temporary removed");
	plant("out");
	ok(zstwopen(&w, out, 3, 0, 0, &e) < 0, "zstwopen without ZSTW_PLACE refuses a link");
	okstr(victim(), "VICTIM", "zstwopen: the link's target");

	fd = outopen("/dev/null", &tmp, &e);
	ok(fd >= 0 && !tmp, "outopen: /dev/null as it is");
	if (fd >= 0)
		close(fd);
	plant("out");
	fd = outopen(out, &tmp, &e);
	ok(fd >= 0 && tmp, "outopen: a link to a file: a temporary");
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	okstr(victim(), "VICTIM", "outopen: the link's target");

	free(out);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return tdone();
}
