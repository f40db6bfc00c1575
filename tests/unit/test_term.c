/* test_term: the terminal/Actions sanitiser as a hostile record would meet it, and secrets cut
 * at a cap or a width, masked all the same. */
#include <stdlib.h>
#include <string.h>
#include "t.h"
#include "../../util/secrets.h"
#include "../../util/term.h"
#include "../../util/utf8.h"

static void clean(const char *in, int flags, const char *want, const char *name)
{
	char *got = termclean(in, flags);
	okstr(got, want, name);
	free(got);
}

/* No byte of s can drive a terminal: no C0 but \n \t, no DEL, no C1 (raw or UTF-8), no bidi. */
static int inert(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 && *p != '\n' && *p != '\t')
			return 0;
		if (*p == 0x7f)
			return 0;
		if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			return 0;
		if (*p == 0xe2 && p[1] == 0x80 && ((p[2] >= 0xaa && p[2] <= 0xae) || p[2] == 0x8e || p[2] == 0x8f))
			return 0;
		if (*p == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)
			return 0;
	}
	return 1;
}

int main(void)
{
	unsetenv("GITHUB_ACTIONS");
	clean("plain text, ünïcode ✓", 0, "plain text, ünïcode ✓", "text and UTF-8 kept");
	clean("a\nb\tc", 0, "a\nb\tc", "newline and tab kept");
	clean("a\nb\tc", TERM_ONELINE, "a b c", "one line: newline and tab as spaces");
	clean("\033]0;owned\007\033[2J", 0, "\\x1b]0;owned\\x07\\x1b[2J", "ESC and BEL shown");
	clean("x\rover", 0, "x\\x0dover", "CR shown");
	clean("del\177", 0, "del\\x7f", "DEL shown");
	clean("csi\302\23331m", 0, "csi\\u009b31m", "C1 CSI in UTF-8 shown");
	clean("raw\233x", 0, "raw\\x9bx", "a raw C1 byte shown");
	clean("bidi\342\200\256txt.exe", 0, "bidi\\u202etxt.exe", "RLO shown");
	clean("\342\201\246iso\342\201\251", 0, "\\u2066iso\\u2069", "isolates shown");
	clean("cut \342\200", 0, "cut \\xe2\\x80", "a cut character shown");
	clean("::error::x\n##[group]y", 0, "::error::x\n##[group]y", "workflow commands left alone outside Actions");

	setenv("GITHUB_ACTIONS", "true", 1);
	clean("::stop-commands::tok", 0, "%3A:stop-commands::tok", "a command line broken under Actions");
	clean("ok\n  ::error::x", 0, "ok\n  %3A:error::x", "after a newline and spaces");
	clean("a ##[stop-commands]x", 0, "a ##%5Bstop-commands]x", "##[ anywhere");
	clean("a ::b", 0, "a ::b", ":: inside a line is no command");
	clean("::x", TERM_NOACTIONS, "::x", "NOACTIONS leaves it to the caller");
	unsetenv("GITHUB_ACTIONS");

	/* Random bytes: nothing dangerous survives, whatever the input. */
	srand(17);
	int bad = 0;
	for (int i = 0; i < 20000; i++) {
		char in[24];
		for (int k = 0; k < 23; k++)
			in[k] = (char)(rand() % 255 + 1);
		in[23] = 0;
		char *got = termclean(in, 0);
		bad += !inert(got);
		free(got);
	}
	ok(bad == 0, "20000 random strings cleaned (%d not)", bad);

	/* JSON lines for a terminal: the same JSON, no control that drives it. */
	char *j = termjson("{\"a\":\"x\xc2\x9b" "2J\xe2\x80\xae" "txt\x7f ##[error] \xe2\x80\xa8 ok \xc3\xa4\"}");
	okstr(j, "{\"a\":\"x\\u009b2J\\u202etxt\\u007f ##\\u005berror] \\u2028 ok \xc3\xa4\"}", "termjson: C1, bidi, DEL, ##[, U+2028 escaped");
	free(j);
	/* Secrets: whole, and a prefix of 8 bytes or more where text was cut. */
	struct secrets s = {0};
	secretsadd(&s, "TOKEN", "ghp_0123456789abcdefghij0123456789ABCD");
	secretsadd(&s, "PIN", "1234");
	char *m = secretsmask(&s, "token ghp_0123456789abcdefghij0123456789ABCD end");
	okstr(m, "token [secret:TOKEN] end", "a whole secret");
	free(m);
	m = secretsmask(&s, "...output cut at its cap: ghp_0123456789abcdefg");
	okstr(m, "...output cut at its cap: [secret:TOKEN]", "a secret cut at the end of the text");
	free(m);
	m = secretsmask(&s, "\"curl -H ghp_012345678...\"");
	okstr(m, "\"curl -H [secret:TOKEN]...\"", "a secret cut by a reason's width");
	free(m);
	ok(secretsmask(&s, "ghp_012 is a prefix too short to tell") == NULL, "under 8 bytes of a long secret: not masked");
	m = secretsmask(&s, "pin 1234, pin 123");
	okstr(m, "pin [secret:PIN], pin 123", "a short secret only whole");
	free(m);
	ok(secretsfound(&s, "x ghp_01234567"), "found: a prefix of 8 bytes");
	/* A value holding '"' or '\\': whole in raw text and in JSON text, where it is escaped. */
	secretsadd(&s, "Q", "abcdefghij\"TAIL\\END");
	m = secretsmask(&s, "raw abcdefghij\"TAIL\\END.");
	okstr(m, "raw [secret:Q].", "a secret with a quote and a backslash, raw");
	free(m);
	m = secretsmask(&s, "{\"r\":\"abcdefghij\\\"TAIL\\\\END\"}");
	okstr(m, "{\"r\":\"[secret:Q]\"}", "the same secret inside a JSON string, escaped");
	free(m);
	/* What a cut left of one: a tail of 8 bytes or more is masked, a shorter one is not, and a
	 * tail after a whole one is found too. */
	secretsadd(&s, "T", "tail-secret-QRSTUVWXYZ");
	m = secretsmask(&s, "[... 9 bytes cut ...]\nQRSTUVWXYZ and more");
	okstr(m, "[... 9 bytes cut ...]\n[secret:T] and more", "a secret's tail after a cut");
	free(m);
	m = secretsmask(&s, "x TUVWXYZ y");
	ok(m == NULL, "a tail under 8 bytes is left be");
	free(m);
	m = secretsmask(&s, "tail-secret-QRSTUVWXYZ then et-QRSTUVWXYZ");
	okstr(m, "[secret:T] then [secret:T]", "a whole one, then a tail");
	free(m);
	/* Spelled other ways by a step: escaped for JSON by a program (non-ASCII as \u, at any depth,
	 * an emoji as a surrogate pair), its newlines as CRLF, its invalid bytes as cleaned text. */
	secretsadd(&s, "U", "p\xc3\xa4ssw\xc3\xb6rd-\xf0\x9f\x94\x91-x");
	m = secretsmask(&s, "json \"p\\u00e4ssw\\u00f6rd-\\ud83d\\udd11-x\" end");
	okstr(m, "json \"[secret:U]\" end", "a secret as JSON with ensure_ascii (\\u escapes, a surrogate pair)");
	free(m);
	m = secretsmask(&s, "{\"out\":\"p\\\\u00e4ssw\\\\u00f6rd-\\\\ud83d\\\\udd11-x\"}");
	okstr(m, "{\"out\":\"[secret:U]\"}", "the same escaped once more (a record of a step's JSON)");
	free(m);
	secretsadd(&s, "NL", "line-one-abc\nline-two-def");
	m = secretsmask(&s, "a line-one-abc\r\nline-two-def b");
	okstr(m, "a [secret:NL] b", "a secret's newline as CRLF");
	free(m);
	m = secretsmask(&s, "\"line-one-abc\\r\\nline-two-def\"");
	okstr(m, "\"[secret:NL]\"", "a secret's newline as an escaped CRLF");
	free(m);
	secretsadd(&s, "BIN", "bin\xff\xfe-secret-value");
	const char *raw = "out bin\xff\xfe-secret-value.";
	char *clean = utf8clean(raw, strlen(raw));
	m = secretsmask(&s, clean);
	okstr(m, "out [secret:BIN].", "a secret with invalid UTF-8, in cleaned text");
	free(m);
	free(clean);
	m = secretsmask(&s, "out bin\xff\xfe-secret-value.");
	okstr(m, "out [secret:BIN].", "the same secret raw");
	free(m);
	ok(secretsmask(&s, "no \\\\ secret \\u00e4 here\r\n") == NULL, "escapes without a secret: nothing masked");

	/* What shells and Python print: printf %q and declare -p, set -x's and export -p's quoting, a
	 * repr, a bytes repr, octal. */
	secretsadd(&s, "SH", "it's a $ecret! \"q\" p\xc3\xa4ss");
	const char *forms[] = {
		"it\\'s\\ a\\ \\$ecret\\!\\ \\\"q\\\"\\ p\xc3\xa4ss",     /* printf %q */
		"'it'\\''s a $ecret! \"q\" p\xc3\xa4ss'",                    /* set -x */
		"'it'\"'\"'s a $ecret! \"q\" p\xc3\xa4ss'",                  /* dash export -p */
		"'it\\'s a $ecret! \"q\" p\xc3\xa4ss'",                      /* repr with both quotes */
		"b'it\\'s a $ecret! \"q\" p\\xc3\\xa4ss'",                   /* a bytes repr */
		"$'it\\'s a $ecret! \"q\" p\\303\\244ss'",                   /* octal */
	};
	for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
		m = secretsmask(&s, forms[i]);
		ok(m && !strstr(m, "$ecret") && !strstr(m, "ss'") && !strstr(m, "it") && strstr(m, "[secret:SH]"), "shell/Python form %zu masked whole: %s", i, m ? m : "(none)");
		free(m);
	}
	/* A key of many lines, printed with something before each line (diff, cat -n): each line. */
	secretsadd(&s, "PEM", "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END KEY-----\n");
	m = secretsmask(&s, "+-----BEGIN KEY-----\n+MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n+BKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n+-----END KEY-----\n");
	okstr(m, "+[secret:PEM]\n+[secret:PEM]\n+[secret:PEM]\n+[secret:PEM]\n", "a key's lines in a patch, each masked, the lines kept");
	free(m);
	m = secretsmask(&s, "     2\tMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n     3\tBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n");
	ok(m && !strstr(m, "MIIE") && !strstr(m, "BKcw") && !strstr(m, "C7VJ"), "cat -n of a key: %s", m ? m : "(none)");
	free(m);
	m = secretsmask(&s, "MIIEvQIBADANBgkq is a prefix of a line, not at the end");
	ok(m == NULL, "8 bytes of a line in the middle of text: not masked (a line is masked whole or cut at the end)");
	free(m);
	/* A flood of backslashes costs once: 64 KiB of them (the time is the bench's; here, it ends). */
	char *flood = malloc(65537);
	memset(flood, '\\', 65536);
	flood[65536] = 0;
	m = secretsmask(&s, flood);
	ok(m == NULL, "a flood of backslashes: nothing masked");
	free(flood);
	secretsfree(&s);
	return tdone();
}
