/* test_report: what the report and diff are built from: model text of every provider's recorded
 * response, HTML escaping of hostile text, and line diffs applied back (random texts, seeded). */
#include <stdlib.h>
#include <string.h>
#include "t.h"
#include "../../artifacts/modeltext.h"
#include "../../artifacts/report.h"
#include "../../util/linediff.h"

static void said(const char *json, const char *want)
{
	cJSON *r = cJSON_Parse(json);
	char *t = modeltext(r);
	okstr(t, want, json);
	free(t);
	cJSON_Delete(r);
}

static char *html(const char *s, size_t n)
{
	struct buf b = {0};
	htmltext(&b, s, n);
	bufadd(&b, "", 0);
	return b.data;
}

/* Apply a unified diff's hunks (as linediff writes them) to a; NULL when a hunk does not fit. */
static char *apply(const char *a, const char *d)
{
	struct buf out = {0};
	const char *p = a;
	long line = 1;
	for (const char *h = d; h && *h;) {
		long a0, an, b0, bn;
		if (sscanf(h, "@@ -%ld,%ld +%ld,%ld @@", &a0, &an, &b0, &bn) != 4)
			return buffree(&out), NULL;
		if (an == 0)
			a0++; /* "-N,0": insert after line N */
		for (; line < a0; line++) { /* copy unchanged lines */
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
			bufadd(&out, p, n);
			p += n;
		}
		h = strchr(h, '\n') + 1;
		while (*h && *h != '@') {
			const char *nl = strchr(h, '\n');
			size_t n = (size_t)(nl - h) + 1;
			int noeol = strncmp(nl + 1, "\\ No newline", 12) == 0;
			if (*h == ' ' || *h == '-') {
				const char *pl = strchr(p, '\n');
				size_t pn = pl ? (size_t)(pl - p) + 1 : strlen(p);
				if (pn != n - 1 - noeol + (noeol ? 0 : 0) && !(noeol && pn == n - 2))
					return buffree(&out), NULL;
				if (*h == ' ')
					bufadd(&out, p, pn);
				p += pn;
				line++;
			} else if (*h == '+') {
				bufadd(&out, h + 1, n - 1 - noeol);
			}
			h = nl + 1;
			if (noeol)
				h = strchr(h, '\n') + 1;
		}
	}
	bufputs(&out, p);
	bufadd(&out, "", 0);
	return out.data;
}

static char *randtext(unsigned *seed, int lines)
{
	struct buf b = {0};
	for (int i = 0; i < lines; i++)
		bufprintf(&b, "%c\n", 'a' + rand_r(seed) % 5);
	if (rand_r(seed) % 4 == 0)
		bufputs(&b, "tail");
	bufadd(&b, "", 0);
	return b.data;
}

static char *mutate(unsigned *seed, const char *a)
{
	struct buf b = {0};
	for (const char *p = a; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		int r = rand_r(seed) % 10;
		if (r == 0)
			; /* drop the line */
		else if (r == 1)
			bufprintf(&b, "x%d\n", rand_r(seed) % 3), bufadd(&b, p, n);
		else if (r == 2)
			bufprintf(&b, "y\n");
		else
			bufadd(&b, p, n);
		p += n;
	}
	if (rand_r(seed) % 3 == 0)
		bufputs(&b, "end");
	bufadd(&b, "", 0);
	return b.data;
}

int main(void)
{
	said("{\"text\":\"hello\"}", "hello");
	said("{\"choices\":[{\"message\":{\"content\":\"from chat\"}}]}", "from chat");
	said("{\"choices\":[{\"message\":{\"content\":null,\"refusal\":\"no\"}}]}", "(refusal) no");
	said("{\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\"},{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"tool_use\"},"
	     "{\"type\":\"text\",\"text\":\"b\"}]}", "a\nb");
	said("{\"output\":[{\"type\":\"reasoning\"},{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"resp\"}]},"
	     "{\"type\":\"function_call\"}]}", "resp");
	said("{\"choices\":[{\"message\":{\"tool_calls\":[]}}]}", "");
	said("null", "");

	char *h = html("<script>a&b\"c'</script>", strlen("<script>a&b\"c'</script>"));
	okstr(h, "&lt;script&gt;a&amp;b&quot;c&#39;&lt;/script&gt;", "markup escaped");
	free(h);
	h = html("a\x1b[31mb\x7f\r\n\t", 11);
	okstr(h, "a\\x1b[31mb\\x7f\\x0d\n\t", "C0 and DEL shown, newline and tab kept");
	free(h);
	h = html("x\xc2\x9by", 4);
	okstr(h, "x\\u009by", "C1 CSI shown");
	free(h);
	h = html("\xe2\x80\xaegnp.exe \xe2\x81\xa6i\xe2\x81\xa9 \xe2\x80\x8f", 22);
	okstr(h, "\\u202egnp.exe \\u2066i\\u2069 \\u200f", "bidirectional controls shown");
	free(h);
	h = html("bad\xff\xfe<", 6);
	okstr(h, "bad\xef\xbf\xbd\xef\xbf\xbd&lt;", "invalid UTF-8 replaced");
	free(h);
	h = html("a\0b", 3);
	ok(h && strstr(h, "a") && !strchr(h, 0x1), "a NUL byte does not end the page early: %s", h);
	free(h);

	struct buf d = {0};
	ok(linediff("a\nb\n", 4, "a\nb\n", 4, 3, 100, &d) == 0 && d.len == 0, "equal texts: no hunk");
	ok(linediff("a\nb\nc\n", 6, "a\nc\n", 4, 3, 100, &d) == 0, "a deletion");
	okstr(d.data, "@@ -1,3 +1,2 @@\n a\n-b\n c\n", "deletion hunk");
	d.len = 0;
	ok(linediff("", 0, "x\n", 2, 3, 100, &d) == 0, "from nothing");
	okstr(d.data, "@@ -0,0 +1,1 @@\n+x\n", "added file hunk");
	d.len = 0;
	ok(linediff("a", 1, "b", 1, 3, 100, &d) == 0 && strstr(d.data, "\\ No newline at end of file"), "no newline said");
	d.len = 0;
	ok(linediff("a\nb\nc\nd\n", 8, "w\nx\ny\nz\n", 8, 3, 2, &d) == 1 && d.len == 0, "too many edits: 1, nothing written");
	buffree(&d);

	unsigned seed = 12345;
	int good = 0, total = 500;
	for (int i = 0; i < total; i++) {
		char *a = randtext(&seed, rand_r(&seed) % 40);
		char *b = mutate(&seed, a);
		struct buf out = {0};
		linediff(a, strlen(a), b, strlen(b), 1 + i % 3, 10000, &out);
		bufadd(&out, "", 0);
		char *back = apply(a, out.data);
		if (back && strcmp(back, b) == 0)
			good++;
		else if (good == i)
			fprintf(stderr, "case %d:\n--- a\n%s\n--- b\n%s\n--- diff\n%s\n--- applied\n%s\n", i, a, b, out.data, back ? back : "(no)");
		free(back);
		buffree(&out);
		free(a);
		free(b);
	}
	ok(good == total, "random diffs applied back: %d of %d", good, total);
	return tdone();
}
