/* test_tools: file tools stay beneath the workspace whatever links the model planted. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../../run/tools.h"
#include "../../sandbox/capture.h"
#include "t.h"

static char dir[] = "/tmp/ns-tools.XXXXXX";

/* toolclip: bounded, head and tail kept exactly, the cut counted, whole UTF-8 characters only. */
static void clip(void)
{
	unsigned seed = 15;
	int bad = 0;
	for (int round = 0; round < 400; round++) {
		size_t len = (size_t)(rand_r(&seed) % 200000), limit = 1024 + (size_t)(rand_r(&seed) % 40000);
		char *s = malloc(len + 1);
		size_t nl = 0;
		for (size_t i = 0; i < len; i++) {
			int r = rand_r(&seed) % 40;
			s[i] = r == 0 ? '\n' : r == 1 ? (char)0xc3 : r == 2 ? (char)0xa9 : (char)('a' + r % 26);
		}
		/* make every 0xc3 0xa9 pair whole, so the input is valid UTF-8 where it was */
		for (size_t i = 0; i < len; i++) {
			if ((unsigned char)s[i] == 0xc3 && (i + 1 == len || (unsigned char)s[i + 1] != 0xa9))
				s[i] = 'x';
			else if ((unsigned char)s[i] == 0xa9 && (i == 0 || (unsigned char)s[i - 1] != 0xc3))
				s[i] = 'y';
		}
		s[len] = 0;
		char *c = toolclip(s, len, limit);
		size_t cl = strlen(c);
		if (len <= limit) {
			bad += strcmp(c, s) != 0;
		} else {
			const char *note = strstr(c, "[... ");
			size_t cut = 0, lines = 0, of = 0;
			if (!note || sscanf(note, "[... %zu bytes (%zu lines) cut here, of %zu", &cut, &lines, &of) != 3)
				bad++, fprintf(stderr, "no note\n");
			else {
				size_t head = (size_t)(note - c) - (note > c && s[note - c - 1] != '\n');
				const char *tail = strchr(note, '\n') + 1;
				size_t tl = strlen(tail);
				for (size_t i = head; i < head + cut; i++)
					nl += s[i] == '\n';
				if (cl > limit + 120 || of != len || memcmp(c, s, head) != 0 || head + cut + tl != len ||
				    strcmp(tail, s + len - tl) != 0 || nl != lines || tl < limit / 2 ||
				    ((unsigned char)s[head + cut] & 0xC0) == 0x80 || ((unsigned char)s[head] & 0xC0) == 0x80)
					bad++, fprintf(stderr, "len %zu limit %zu: clip %zu head %zu cut %zu tail %zu lines %zu/%zu\n",
					               len, limit, cl, head, cut, tl, lines, nl);
			}
		}
		free(c);
		free(s);
	}
	ok(bad == 0, "400 random texts: cut within the limit, head and tail exact, bytes and lines counted");
	char *c = toolclip("", 0, 10);
	okstr(c, "", "empty stays empty");
	free(c);
}

/* ringkeep/ringend: the first cap/2 and the last cap - cap/2 bytes of a stream however it arrives. */
static void ring(void)
{
	unsigned seed = 7;
	int bad = 0;
	for (int round = 0; round < 300; round++) {
		size_t total = (size_t)(rand_r(&seed) % 5000), cap = 1 + (size_t)(rand_r(&seed) % 1200);
		char *s = malloc(total + 1);
		for (size_t i = 0; i < total; i++)
			s[i] = (char)('a' + rand_r(&seed) % 26);
		struct buf b = {0};
		struct ring r = {0};
		int dropped = 0;
		for (size_t at = 0; at < total;) {
			size_t n = 1 + (size_t)(rand_r(&seed) % 700);
			if (n > total - at)
				n = total - at;
			dropped |= ringkeep(&b, &r, cap, s + at, n);
			at += n;
		}
		ringend(&b, &r);
		struct buf want = {0};
		size_t head = ringhead(cap), tail = head < cap ? cap - cap / 2 : 0;
		if (!tail) {
			bufadd(&want, s, total < head ? total : head);
		} else if (total <= head + tail) {
			bufadd(&want, s, total);
		} else {
			bufadd(&want, s, head);
			bufprintf(&want, "\n[... %zu bytes not kept by the sandbox ...]\n", total - head - tail);
			bufadd(&want, s + total - tail, tail);
		}
		if (dropped != (total > head + tail) || b.len > cap || b.len != want.len || (b.len && memcmp(b.data, want.data, b.len) != 0)) {
			if (bad++ < 3)
				fprintf(stderr, "total %zu cap %zu: got %zu bytes, want %zu\n", total, cap, b.len, want.len);
		}
		buffree(&b);
		buffree(&want);
		free(s);
	}
	ok(bad == 0, "300 random streams: head and tail kept exactly, the bytes between counted");
}

int main(void)
{
	clip();
	ring();
	struct err e = {0};
	struct buf b = {0};
	int trunc;
	ok(mkdtemp(dir) != NULL, "mkdtemp");
	char *ws = pathjoin(dir, "ws"), *outside = pathjoin(dir, "secret");
	mkdirs(ws, 0755, &e);
	writefile(outside, "TOPSECRET", 9, &e);
	int wsfd = open(ws, O_PATH | O_DIRECTORY);
	ok(wsfd >= 0, "open workspace");

	ok(wswrite(wsfd, "a/b/c.txt", "hello", 5, 0, 0, &e) == 0, "write creates parents: %s", e.msg);
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
	ok(wswrite(wsfd, "abs", "x", 1, 0, 0, &e) < 0, "write through a link refused");
	ok(wswrite(wsfd, "dir/new.txt", "x", 1, 0, 0, &e) < 0, "write into a linked directory refused");
	ok(wswrite(wsfd, "dir/sub/new.txt", "x", 1, 0, 0, &e) < 0, "mkdir through a linked directory refused");
	struct stat st;
	ok(stat(outside, &st) == 0 && st.st_size == 9, "outside file untouched");
	char *leak = pathjoin(dir, "new.txt"), *leak2 = pathjoin(dir, "sub");
	ok(access(leak, F_OK) < 0 && access(leak2, F_OK) < 0, "nothing created outside");
	/* A link inside the workspace leads out of the rule's reach (a rule allows reports and all
	   under it, not secrets/): the rule matched reports/link/prod.env, so nothing behind the
	   link is read or listed. */
	ok(wswrite(wsfd, "secrets/prod.env", "DB=hunter2", 10, 0, 0, &e) == 0 && wswrite(wsfd, "reports/r.txt", "r", 1, 0, 0, &e) == 0,
	   "secrets/ and reports/");
	char *rl = pathjoin(ws, "reports/link"), *rf = pathjoin(ws, "reports/file");
	ok(symlink("../secrets", rl) == 0 && symlink("../secrets/prod.env", rf) == 0, "plant reports/link -> ../secrets");
	b.len = 0;
	ok(wsread(wsfd, "reports/link/prod.env", 100, &b, &trunc, &e) < 0, "read through an in-workspace directory link refused");
	ok(wsread(wsfd, "reports/file", 100, &b, &trunc, &e) < 0, "read of an in-workspace file link refused");
	ok(!b.data || !strstr(b.data, "hunter2"), "and nothing of the file read");
	{
		struct toolres tr = {0};
		cJSON *args = cJSON_Parse("{\"path\":\"reports/link\"}");
		toolrun(NULL, wsfd, "list_dir", args, "reports/link", &(struct toolopts){0}, &tr, &e);
		ok(tr.failed && (!tr.content || !strstr(tr.content, "prod.env")), "list_dir through a link refused: %s",
		   tr.content ? tr.content : e.msg);
		toolresfree(&tr);
		cJSON_Delete(args);
	}
	{
		/* A step that fails hands nothing back (the caller frees nothing; sanitizers see a leak) */
		struct toolres tr;
		cJSON *args = cJSON_Parse("{\"cmd\":\"true\"}");
		ok(toolrun(NULL, wsfd, "shell", args, NULL, &(struct toolopts){0}, &tr, &e) < 0 && !tr.event && !tr.content,
		   "a failed shell call holds no event and no content: %s", e.msg);
		cJSON_Delete(args);
	}
	buffree(&b);
	{
		/* edit_file on a file it cannot hold whole as text: a NUL byte ended the text strstr saw,
		   and what came after it was dropped when the file was written back (data.bin became
		   "HEAD-edited"); the file is left as it was and the model told why. */
		static const char bin[] = "HEAD-one\0tail kept after the NUL";
		ok(wswrite(wsfd, "data.bin", bin, sizeof bin - 1, 0, 0, &e) == 0, "write data.bin");
		struct toolres tr = {0};
		cJSON *args = cJSON_Parse("{\"path\":\"data.bin\",\"old\":\"one\",\"new\":\"edited\"}");
		toolrun(NULL, wsfd, "edit_file", args, "data.bin", &(struct toolopts){0}, &tr, &e);
		b.len = 0;
		ok(wsread(wsfd, "data.bin", 100, &b, &trunc, &e) == 0 && b.len == sizeof bin - 1 &&
		   memcmp(b.data, bin, b.len) == 0, "edit_file of a file holding a NUL keeps every byte (%zu of %zu)", b.len,
		   sizeof bin - 1);
		ok(tr.failed, "and fails: %s", tr.content ? tr.content : e.msg);
		toolresfree(&tr);
		cJSON_Delete(args);
	}
	buffree(&b);

	/* A hard link to a file outside the workspace (uv, pnpm, git clone of a local path make them),
	   read-only too: write_file replaces the name, the outside file keeps its bytes and mode. */
	char *hard = pathjoin(dir, "hard-outside"), *hin = pathjoin(ws, "vendored.py");
	writefile(hard, "ORIGINAL", 8, &e);
	chmod(hard, 0444);
	ok(link(hard, hin) == 0, "hard link into the workspace");
	ok(wswrite(wsfd, "vendored.py", "PWNED", 5, 0, 0, &e) == 0, "write_file of the linked name: %s", e.msg);
	b.len = 0;
	ok(readfile(hard, &b, &e) == 0 && strcmp(b.data, "ORIGINAL") == 0, "outside file keeps its bytes: %s", b.data);
	buffree(&b);
	ok(stat(hard, &st) == 0 && (st.st_mode & 0777) == 0444 && st.st_nlink == 1, "and its mode, and is no longer linked");
	ok(wsread(wsfd, "vendored.py", 100, &b, &trunc, &e) == 0 && strcmp(b.data, "PWNED") == 0, "the workspace name has the new bytes");
	buffree(&b);
	ok(stat(hin, &st) == 0 && (st.st_mode & 0777) == 0444, "with the old mode");
	/* A file with no other name is written in place: the same inode, the new bytes only (longer,
	   then shorter, then none), its mode kept; one with a set-id bit is replaced without it. */
	char *one = pathjoin(ws, "one.txt");
	writefile(one, "0123456789", 10, &e);
	chmod(one, 0640);
	struct stat before, after;
	stat(one, &before);
	static const char *const texts[] = {"a longer text than the first one", "short", ""};
	for (int i = 0; i < 3; i++) {
		ok(wswrite(wsfd, "one.txt", texts[i], strlen(texts[i]), 0, 0, &e) == 0, "write in place %d: %s", i, e.msg);
		b.len = 0;
		ok(wsread(wsfd, "one.txt", 100, &b, &trunc, &e) == 0 && b.len == strlen(texts[i]) &&
		       memcmp(b.data ? b.data : "", texts[i], b.len) == 0,
		   "in place %d: the new bytes and no more (%zu)", i, b.len);
		ok(stat(one, &after) == 0 && after.st_ino == before.st_ino && (after.st_mode & 0777) == 0640,
		   "in place %d: the same file, its mode kept", i);
	}
	buffree(&b);
	chmod(one, 04755);
	ok(wswrite(wsfd, "one.txt", "x", 1, 0, 0, &e) == 0 && stat(one, &after) == 0 && after.st_ino != before.st_ino &&
	       (after.st_mode & 07777) == 0755,
	   "a set-id file is replaced, without the bit (mode %o)", (unsigned)(after.st_mode & 07777));
	free(one);
	int left = 0; /* the old file, swapped out by the exchange, is gone with its temporary name */
	DIR *dd = opendir(ws);
	for (struct dirent *de; dd && (de = readdir(dd));)
		left += strncmp(de->d_name, ".nightshift-write-", 18) == 0;
	if (dd)
		closedir(dd);
	ok(left == 0, "no temporary name is left in the workspace (%d)", left);
	free(hard);
	free(hin);
	free(rl);
	free(rf);

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
	/* The eight-byte ASCII path: a NUL or a high byte at each place of a block, a sequence across
	 * blocks, a bad byte last. */
	for (int at = 0; at < 16; at++) {
		char in[24], want[40];
		memset(in, 'x', sizeof in);
		in[at] = 0;
		memcpy(want, in, (size_t)at);
		memcpy(want + at, "\xef\xbf\xbd", 3);
		memset(want + at + 3, 'x', sizeof in - at - 1);
		want[sizeof in + 2] = 0;
		s = utf8clean(in, sizeof in);
		ok(strcmp(s, want) == 0, "NUL at %d of 24 ASCII bytes replaced", at);
		free(s);
	}
	s = utf8clean("abcdefg\xc3\xa9hijklmnopq\xff", 20);
	okstr(s, "abcdefg\xc3\xa9hijklmnopq\xef\xbf\xbd", "a sequence across blocks kept, a bad last byte replaced");
	free(s);
	/* utf8valid agrees with utf8clean: valid exactly when cleaning changes nothing */
	static const char *const cases[] = {"", "h\xc3\xa9llo \xf0\x9f\x98\x80", "a\x9c" "b", "b\xc0\xaf", "c\xed\xa0\x80",
	                                    "abcdefg\xc3\xa9hijklmnopq", "abcdefg\xc3\xa9hijklmnopq\xff", "abcdefghijklmnop\xe2\x82",
	                                    "\xf4\x90\x80\x80", NULL};
	for (size_t i = 0; cases[i]; i++) {
		size_t n = strlen(cases[i]);
		s = utf8clean(cases[i], n);
		ok(utf8valid(cases[i], n) == (strcmp(s, cases[i]) == 0), "utf8valid agrees with utf8clean on case %zu", i);
		free(s);
	}
	ok(!utf8valid("abcdefgh\0ijklmno", 16), "a NUL is not valid");

	close(wsfd);
	char *rm = xasprintf("rm -rf %s", dir);
	if (system(rm) != 0)
		t_fail++;
	free(rm);
	free(ws); free(outside); free(l1); free(l2); free(l3); free(leak); free(leak2); free(fifo);
	return tdone();
}
