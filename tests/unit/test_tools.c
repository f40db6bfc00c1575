/* test_tools: file tools stay beneath the workspace whatever links the model planted. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../../runner/tools.h"
#include "t.h"

static char dir[] = "/tmp/ns-tools.XXXXXX";

int main(void)
{
	struct err e = {0};
	struct buf b = {0};
	int trunc;
	ok(mkdtemp(dir) != NULL, "mkdtemp");
	char *ws = pathjoin(dir, "ws"), *outside = pathjoin(dir, "secret");
	mkdirs(ws, 0755, &e);
	writefile(outside, "TOPSECRET", 9, &e);
	int wsfd = open(ws, O_PATH | O_DIRECTORY);
	ok(wsfd >= 0, "open workspace");

	ok(wswrite(wsfd, "a/b/c.txt", "hello", 5, &e) == 0, "write creates parents: %s", e.msg);
	ok(wsread(wsfd, "a/b/c.txt", 100, &b, &trunc, &e) == 0 && strcmp(b.data, "hello") == 0 && !trunc, "read back");
	buffree(&b);
	ok(wsread(wsfd, "a/b/c.txt", 3, &b, &trunc, &e) == 0 && b.len == 3 && trunc, "read capped and marked truncated");
	buffree(&b);

	/* Links planted in the workspace (as a shell step could) never lead out. */
	char *l1 = pathjoin(ws, "up"), *l2 = pathjoin(ws, "abs"), *l3 = pathjoin(ws, "dir");
	ok(symlink("../secret", l1) == 0 && symlink(outside, l2) == 0 && symlink(dir, l3) == 0, "plant links");
	ok(wsread(wsfd, "up", 100, &b, &trunc, &e) < 0, "relative link out refused");
	ok(wsread(wsfd, "abs", 100, &b, &trunc, &e) < 0, "absolute link out refused");
	ok(wsread(wsfd, "dir/secret", 100, &b, &trunc, &e) < 0, "directory link out refused");
	ok(wsread(wsfd, "../secret", 100, &b, &trunc, &e) < 0, "dot-dot refused");
	ok(wsread(wsfd, "/etc/passwd", 100, &b, &trunc, &e) < 0, "absolute path refused");
	ok(wsread(wsfd, "/proc/self/root/etc/passwd", 100, &b, &trunc, &e) < 0, "magic link refused");
	ok(wswrite(wsfd, "abs", "x", 1, &e) < 0, "write through a link refused");
	ok(wswrite(wsfd, "dir/new.txt", "x", 1, &e) < 0, "write into a linked directory refused");
	ok(wswrite(wsfd, "dir/sub/new.txt", "x", 1, &e) < 0, "mkdir through a linked directory refused");
	struct stat st;
	ok(stat(outside, &st) == 0 && st.st_size == 9, "outside file untouched");
	char *leak = pathjoin(dir, "new.txt"), *leak2 = pathjoin(dir, "sub");
	ok(access(leak, F_OK) < 0 && access(leak2, F_OK) < 0, "nothing created outside");
	char *fifo = pathjoin(ws, "fifo");
	ok(mkfifo(fifo, 0644) == 0, "mkfifo");
	ok(wsread(wsfd, "fifo", 100, &b, &trunc, &e) < 0, "a fifo is not read (no hang)");

	/* UTF-8 cleaning: valid text kept, invalid bytes replaced, empty stays empty. */
	char *s = utf8clean("", 0);
	okstr(s, "", "empty");
	free(s);
	s = utf8clean("h\xc3\xa9llo \xf0\x9f\x98\x80", 11);
	okstr(s, "h\xc3\xa9llo \xf0\x9f\x98\x80", "valid UTF-8 kept");
	free(s);
	s = utf8clean("a\x9c" "b\xc0\xaf" "c\xed\xa0\x80", 9);
	okstr(s, "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "invalid, overlong and surrogates replaced");
	free(s);
	s = utf8clean("a\0b", 3);
	okstr(s, "a\xef\xbf\xbd" "b", "NUL replaced");
	free(s);

	close(wsfd);
	char *rm = xasprintf("rm -rf %s", dir);
	if (system(rm) != 0)
		t_fail++;
	free(rm);
	free(ws); free(outside); free(l1); free(l2); free(l3); free(leak); free(leak2); free(fifo);
	return tdone();
}
