/* danger: options by which programs that read can be made to run commands or write files. A
 * rule such as "git log *" or "sed -n *" looks read-only; these options are what would make it
 * otherwise, so such a command only matches an allow rule whose pattern names the option.
 * Keep dangertable (printed in docs/security.md) and the checks below in step. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "danger.h"
#include "shellsplit.h"

const char *const dangertable[][3] = {
	{"git", "-c, --config-env, --exec-path, -C, --git-dir, --work-tree", "configure or point git at another repository's config (aliases, pagers, hooks, fsmonitor run commands)"},
	{"git", "--output, -o/--output-directory (format-patch)", "write a file"},
	{"git", "--ext-diff, --textconv", "run a diff driver"},
	{"git", "-O, --open-files-in-pager (grep)", "run a program"},
	{"git", "--upload-pack, -u, --receive-pack, --exec, --remote, --template, --config", "run a program, or install hooks"},
	{"git", "config, difftool, mergetool, filter-branch, bisect run, submodule foreach, rebase -x/--exec, -x (rebase)", "write the config or run commands"},
	{"sed", "-i, --in-place, -f, --file, and the script commands e, w, W, s///e, s///w", "write files or run commands"},
	{"find", "-exec, -execdir, -ok, -okdir, -delete, -fprint, -fprint0, -fprintf, -fls", "run commands, delete or write files"},
	{"tar", "--checkpoint-action, --to-command, -I, --use-compress-program, -F, --info-script, --new-volume-script, --rsh-command, --rmt-command, --index-file", "run commands or write a file"},
	{"sort", "--compress-program, -o, --output", "run a program or write a file"},
	{"awk, gawk, mawk, nawk", "system(), | (pipes), print > file, -f, -i, -l, --load, --include, -W exec (mawk), -W NAME as --NAME (gawk), @load, @include; the text of -e/--source is a program too", "run commands, write files, load code"},
	{"rsync", "-e, --rsh, --rsync-path, --write-batch, --only-write-batch, --log-file", "run a program or write a file"},
	{"zip", "-T with -TT/--unzip-command", "run a program"},
	{"rg", "--pre", "run a program on every file"},
	{"less", "-o, -O, --log-file, --LOG-FILE, -k, --lesskey-file", "write a file, read key bindings that run commands"},
	{"man", "-P, --pager, -H, --html, --browser", "run a program"},
	{"curl", "-o, -O, --output, --output-dir, -K, --config, -D, --dump-header, -c, --cookie-jar, --trace, --trace-ascii, --libcurl, --etag-save, --hsts, --alt-svc", "write a file or read options from one"},
	{"wget", "-O, -o, -a, --output-document, --output-file, --append-output, -e, --execute, --config, --use-askpass", "write a file or run commands"},
	{"ssh, scp, sftp", "-o, -F, -S, -J, ProxyCommand", "run a program"},
	{"xxd", "a second file operand, -r", "write a file"},
	{"uniq", "a second file operand", "write a file"},
	{"tree", "-o", "write a file"},
	{"shuf", "-o, --output", "write a file"},
	{"dd", "of=", "write a file"},
	{"iconv", "-o, --output", "write a file"},
	{"sdiff", "-o, --output", "write a file"},
	{"yq", "-i, --inplace", "write a file"},
	{"sqlite3", "-cmd, -init, .shell, .system, .output, .once, .import, .save, .backup", "run commands or write files"},
	{"vim, vi, nvim, ex, view", "-c, +, --cmd, -S, -s, -u, -w, -W", "run editor commands"},
	{"time (the program)", "-o, --output", "write a file"},
	{"strace, ltrace", "-o", "write a file"},
	{"any of these", "an argument only known at run time ($X, $(..), *.c) that could start with '-'", "could be any of the above"},
	{NULL, NULL, NULL},
};

static int is(const char *a, const char *b)
{
	return !strcmp(a, b);
}

/* Real long options that are prefixes of dangerous ones: written whole, they are themselves
 * (an exact name wins over an abbreviation). */
static const char *const whole[] = {"--text", "--checkpoint", "--cookie", NULL};

/* a is the long option o or an abbreviation of it, with or without =VALUE: getopt_long, git's
 * parse-options, curl, less and man take any unambiguous prefix of a long option's name
 * ("sed --e='1e id'" is --expression, "git grep --open-f=id" --open-files-in-pager). A prefix
 * that is ambiguous is refused by the program, so counting it costs nothing. */
static int lopt(const char *a, const char *o)
{
	if (a[0] != '-' || a[1] != '-' || !a[2] || a[2] == '=')
		return 0;
	size_t n = strcspn(a, "="), on = strlen(o);
	if (n > on || strncmp(a, o, n))
		return 0;
	for (const char *const *w = whole; n < on && *w; w++)
		if (strlen(*w) == n && !strncmp(a, *w, n))
			return 0;
	return 1;
}

/* a is the option opt, or opt=VALUE, or (short options) opt followed by its value; a long
 * option also abbreviated (lopt). */
static int opt(const char *a, const char *o)
{
	if (o[0] == '-' && o[1] == '-')
		return lopt(a, o);
	size_t n = strlen(o);
	if (strncmp(a, o, n))
		return 0;
	if (!a[n] || a[n] == '=')
		return 1;
	return o[0] == '-' && o[1] != '-' && o[2] == 0; /* -oFILE */
}

/* A cluster of short options (-abc) holding letter ch, before any letter in withval (which take
 * the rest as their value). */
static int cluster(const char *a, char ch, const char *withval)
{
	if (a[0] != '-' || a[1] == '-' || !a[1])
		return 0;
	for (const char *s = a + 1; *s; s++) {
		if (*s == ch)
			return 1;
		if (withval && strchr(withval, *s))
			return 0;
	}
	return 0;
}

/* A word only known at run time that could be an option. */
static int maybeopt(const unsigned char *wf, char *const *argv, size_t k)
{
	return (wf[k] & SHW_UNKNOWN) && !(wf[k] & SHW_NODASH) && (argv[k][0] == SHUNK || (wf[k] & SHW_SPLIT));
}

#define HIT(desc, k, w) do { *key = (k); *word = (w); return (desc); } while (0)

/* sed's script: e, w, W commands and s///e, s///w. Returns 1 when one is there. */
static int sedscript(const char *s)
{
	size_t i = 0, n = strlen(s);
	if (memchr(s, SHUNK, n))
		return 1;
	while (i < n) {
		/* address: numbers, $, /re/, \cREc, ranges, steps, ! */
		for (;;) {
			while (i < n && (isspace((unsigned char)s[i]) || s[i] == ';'))
				i++;
			if (i < n && (isdigit((unsigned char)s[i]) || s[i] == '$' || s[i] == ',' || s[i] == '~' || s[i] == '!' ||
			              s[i] == '+')) {
				i++;
				continue;
			}
			if (i < n && (s[i] == '/' || s[i] == '\\')) {
				char d = s[i] == '\\' && i + 1 < n ? s[++i] : '/';
				for (i++; i < n && s[i] != d; i++)
					if (s[i] == '\\')
						i++;
				i++;
				if (i < n && (s[i] == 'I' || s[i] == 'M'))
					i++;
				continue;
			}
			break;
		}
		if (i >= n)
			break;
		char c = s[i++];
		switch (c) {
		case 'e':
		case 'w':
		case 'W':
			return 1;
		case '{':
		case '}':
			break;
		case '=':
		case 'd': case 'D': case 'g': case 'G': case 'h': case 'H': case 'l': case 'n': case 'N':
		case 'p': case 'P': case 'x': case 'z': case 'F': case 'q': case 'Q': case 'L':
			while (i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}')
				i++; /* q 5, l 70 ... */
			break;
		case 'a': case 'i': case 'c': case 'r': case 'R': case 'b': case 't': case 'T': case ':': case 'v':
			while (i < n && s[i] != '\n' && !(strchr("btT:v", c) && (s[i] == ';' || s[i] == '}')))
				i++;
			break;
		case 's':
		case 'y': {
			if (i >= n)
				return 0;
			char d = s[i++];
			for (int part = 0; part < 2; part++) {
				for (; i < n && s[i] != d; i++)
					if (s[i] == '\\')
						i++;
				i++;
			}
			if (c == 's')
				for (; i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}'; i++)
					if (s[i] == 'e' || s[i] == 'w' || s[i] == 'W')
						return 1;
			break;
		}
		default:
			return 1; /* not read: assume the worst */
		}
	}
	return 0;
}

/* awk's program: system(), pipes, print/printf redirections, @load/@include. */
static int awkprog(const char *s)
{
	if (strchr(s, SHUNK) || strstr(s, "system") || strstr(s, "@load") || strstr(s, "@include"))
		return 1;
	int inprint = 0, paren = 0;
	char q = 0;
	for (size_t i = 0; s[i]; i++) {
		char c = s[i];
		if (q) {
			if (c == '\\' && s[i + 1])
				i++;
			else if (c == q)
				q = 0;
			continue;
		}
		if (c == '"') {
			q = c;
			continue;
		}
		if (c == '/' && !inprint) { /* a regex: skip it roughly */
			continue;
		}
		if (c == '|' && s[i + 1] != '|' && (i == 0 || s[i - 1] != '|'))
			return 1;
		if (c == '(')
			paren++;
		else if (c == ')' && paren)
			paren--;
		else if (c == ';' || c == '\n' || c == '}' || c == '{')
			inprint = 0, paren = 0;
		else if (c == '>' && inprint && !paren)
			return 1;
		if ((i == 0 || !isalnum((unsigned char)s[i - 1])) && !strncmp(s + i, "print", 5))
			inprint = 1;
	}
	return 0;
}

static const char *git(char *const *argv, const unsigned char *wf, size_t argc, const char **key, const char **word)
{
	size_t k = 1;
	for (; k < argc; k++) { /* options before the subcommand */
		const char *a = argv[k];
		if (maybeopt(wf, argv, k))
			HIT("a git option only known at run time", "", a);
		if (a[0] != '-')
			break;
		if (opt(a, "-c") || opt(a, "--config-env"))
			HIT("git -c sets configuration (aliases, pagers, fsmonitor run commands)", "-c", a);
		if (opt(a, "--exec-path") && strchr(a, '='))
			HIT("git --exec-path runs git commands from another directory", "--exec-path", a);
		if (opt(a, "-C") || opt(a, "--git-dir") || opt(a, "--work-tree"))
			HIT("git -C/--git-dir/--work-tree reads another repository's config", a[1] == 'C' ? "-C" : strchr(a, 'g') ? "--git-dir" : "--work-tree", a);
		if (is(a, "--namespace") || is(a, "--super-prefix") || is(a, "--list-cmds"))
			k++;
	}
	if (k >= argc)
		return NULL;
	const char *sub = argv[k];
	static const char *const subs[] = {"config", "difftool", "mergetool", "filter-branch", "filter-repo", "instaweb", "daemon", "web--browse", "credential", "credential-store", "send-email", "p4", "svn", "cvsimport", "archimport", "quiltimport", NULL};
	for (const char *const *s = subs; *s; s++)
		if (is(sub, *s))
			HIT("this git subcommand writes the configuration or runs commands", sub, sub);
	int ddash = 0;
	for (size_t j = k + 1; j < argc; j++) {
		const char *a = argv[j];
		if (ddash)
			break;
		if (is(a, "--")) {
			ddash = 1;
			continue;
		}
		if (maybeopt(wf, argv, j))
			HIT("an argument only known at run time could be a git option (--output=...)", "", a);
		if (a[0] != '-')
			continue;
		if (opt(a, "--output") || (is(sub, "format-patch") && (opt(a, "-o") || opt(a, "--output-directory"))) ||
		    (is(sub, "archive") && opt(a, "-o")))
			HIT("git --output writes a file", a[1] == '-' ? (strncmp(a, "--output-d", 10) ? "--output" : "--output-directory") : "-o", a);
		if (lopt(a, "--ext-diff") || lopt(a, "--textconv"))
			HIT("git --ext-diff/--textconv runs a diff driver", a, a);
		if (is(sub, "grep") && (opt(a, "-O") || opt(a, "--open-files-in-pager") || cluster(a, 'O', "ABCefm")))
			HIT("git grep -O runs a program", a[1] == 'O' || a[1] != '-' ? "-O" : "--open-files-in-pager", a);
		if (opt(a, "--upload-pack") || opt(a, "--receive-pack") || opt(a, "--exec") || opt(a, "--template") ||
		    opt(a, "--config") || (is(sub, "clone") && opt(a, "-c")) || ((is(sub, "clone") || is(sub, "fetch") || is(sub, "ls-remote") || is(sub, "pull")) && opt(a, "-u")) ||
		    (is(sub, "archive") && opt(a, "--remote")))
			HIT("this git option runs a program or installs hooks", a, a);
		if ((is(sub, "rebase") && (opt(a, "-x") || cluster(a, 'x', NULL))) || (is(sub, "bisect") && is(a, "run")))
			HIT("git rebase -x runs commands", a, a);
	}
	if ((is(sub, "bisect") && k + 1 < argc && is(argv[k + 1], "run")) ||
	    (is(sub, "submodule") && k + 1 < argc && is(argv[k + 1], "foreach")))
		HIT("git bisect run / submodule foreach runs commands", argv[k + 1], argv[k + 1]);
	return NULL;
}

static int strpcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The programs of the table, sorted. */
static const char *const programs[] = {"awk", "busybox-awk", "curl", "dd", "ex", "find", "gawk", "git", "iconv", "less", "ltrace", "man", "mawk", "nawk", "nvim", "rg", "rsync", "scp", "sdiff", "sed", "sftp", "shuf", "sort", "sqlite3", "ssh", "strace", "tar", "time", "tree", "uniq", "vi", "view", "vim", "wget", "xxd", "yq", "zip"};

const char *danger(char *const *argv, const unsigned char *wf, size_t argc, const char **key, const char **word)
{
	if (!argc)
		return NULL;
	const char *n = strrchr(argv[0], '/');
	n = n ? n + 1 : argv[0];
	if (!bsearch(&n, programs, sizeof programs / sizeof programs[0], sizeof *programs, strpcmp))
		return NULL;
	if (is(n, "git"))
		return git(argv, wf, argc, key, word);
	int kind = is(n, "sed") ? 's' : is(n, "find") ? 'f' : is(n, "tar") ? 't' : is(n, "sort") ? 'o' :
	           (is(n, "awk") || is(n, "gawk") || is(n, "mawk") || is(n, "nawk") || is(n, "busybox-awk")) ? 'a' :
	           is(n, "rsync") ? 'r' : is(n, "zip") ? 'z' : is(n, "rg") ? 'g' : is(n, "less") ? 'l' : is(n, "man") ? 'm' :
	           is(n, "curl") ? 'c' : is(n, "wget") ? 'w' : (is(n, "ssh") || is(n, "scp") || is(n, "sftp")) ? 'h' :
	           is(n, "xxd") ? 'x' : is(n, "uniq") ? 'u' : is(n, "tree") ? 'T' : is(n, "shuf") ? 'S' : is(n, "dd") ? 'd' :
	           is(n, "iconv") ? 'i' : is(n, "sdiff") ? 'D' : is(n, "yq") ? 'y' : is(n, "sqlite3") ? 'q' :
	           (is(n, "vim") || is(n, "vi") || is(n, "nvim") || is(n, "ex") || is(n, "view")) ? 'v' :
	           (is(n, "strace") || is(n, "ltrace") || is(n, "time")) ? 'e' : 0;
	if (!kind)
		return NULL;
	int ddash = 0, script = 0, operands = 0;
	for (size_t k = 1; k < argc; k++) {
		const char *a = argv[k];
		if (!ddash && kind != 'f' && kind != 'd' && maybeopt(wf, argv, k))
			HIT("an argument only known at run time could be a dangerous option", "", a);
		if (kind == 'f' && maybeopt(wf, argv, k) && a[0] == SHUNK)
			HIT("an argument only known at run time could be a find action (-exec, -delete)", "", a);
		if (!ddash && is(a, "--") && kind != 'f') {
			ddash = 1;
			continue;
		}
		int isop = !ddash && a[0] == '-' && a[1];
		switch (kind) {
		case 's':
			if (isop && (opt(a, "--in-place") || is(a, "-i") || cluster(a, 'i', "efl") || !strncmp(a, "-i", 2)))
				HIT("sed -i writes files", "-i", a);
			if (isop && (opt(a, "-f") || opt(a, "--file") || cluster(a, 'f', "el")))
				HIT("sed -f reads a script from a file", "-f", a);
			if (isop && (is(a, "-e") || (lopt(a, "--expression") && !strchr(a, '='))) && k + 1 < argc) {
				script = 1;
				if (sedscript(argv[++k]))
					HIT("this sed script runs commands or writes files (e, w, s///e)", argv[k], argv[k]);
			} else if (isop && (lopt(a, "--expression") || (a[1] == 'e' && a[2]))) {
				script = 1;
				if (sedscript(a[1] == 'e' ? a + 2 : strchr(a, '=') + 1))
					HIT("this sed script runs commands or writes files (e, w, s///e)", a, a);
			} else if (isop && (is(a, "-l") || (lopt(a, "--line-length") && !strchr(a, '=')))) {
				k++;
			} else if (!isop && !script) {
				script = 1;
				if (sedscript(a))
					HIT("this sed script runs commands or writes files (e, w, s///e)", a, a);
			}
			break;
		case 'f':
			if (is(a, "-exec") || is(a, "-execdir") || is(a, "-ok") || is(a, "-okdir") || is(a, "-delete") ||
			    is(a, "-fprint") || is(a, "-fprint0") || is(a, "-fprintf") || is(a, "-fls"))
				HIT("this find action runs commands, deletes or writes files", a, a);
			break;
		case 't':
			if (isop && (opt(a, "--checkpoint-action") || opt(a, "--to-command") || opt(a, "--use-compress-program") ||
			             opt(a, "--info-script") || opt(a, "--new-volume-script") || opt(a, "--rsh-command") ||
			             opt(a, "--rmt-command") || opt(a, "--index-file")))
				HIT("this tar option runs a program or writes a file", a, a);
			if (isop && a[1] != '-' && (cluster(a, 'I', "fbCgGhHKLNTVX") || cluster(a, 'F', "fbCgGhHKLNTVX")))
				HIT("tar -I/-F runs a program", strchr(a, 'I') ? "-I" : "-F", a);
			if (k == 1 && a[0] != '-' && (strchr(a, 'I') || strchr(a, 'F')))
				HIT("tar's I/F letter runs a program", a, a);
			break;
		case 'o':
			if (isop && (opt(a, "--compress-program") || opt(a, "--output") || opt(a, "-o") || cluster(a, 'o', "kStTz")))
				HIT("sort -o writes a file, --compress-program runs one", a[1] == '-' ? (a[2] == 'c' ? "--compress-program" : "--output") : "-o", a);
			break;
		case 'a': {
			/* gawk reads -W NAME and -WNAME as --NAME; mawk (Debian's awk) reads its -W names
			 * abbreviated, -W exec FILE among them: both are long options here */
			char wl[64];
			const char *lo = a, *nm = a; /* the option as --NAME[=V], and where NAME[=V] is */
			if (isop && a[1] == 'W') {
				if (!a[2] && ++k >= argc)
					break;
				if (!a[2] && (wf[k] & SHW_UNKNOWN))
					HIT("an awk -W option only known at run time", "", argv[k]);
				nm = a[2] ? a + 2 : argv[k];
				snprintf(wl, sizeof wl, "--%s", nm);
				lo = wl;
			}
			if (isop && (opt(a, "-f") || opt(lo, "--file") || opt(a, "-i") || opt(lo, "--include") || opt(a, "-l") ||
			             opt(lo, "--load") || opt(a, "-E") || opt(lo, "--exec")))
				HIT("awk -f/-i/-l/-W exec reads program text or loads code", a, a);
			if (isop && (is(a, "-e") || opt(lo, "--source"))) { /* gawk: program text, and no operand is */
				script = 1;
				const char *eq = is(a, "-e") ? NULL : strchr(nm, '=');
				const char *text = eq ? eq + 1 : NULL;
				if (!eq && k + 1 < argc)
					text = argv[++k];
				if (text && awkprog(text))
					HIT("this awk program runs commands or writes files (system(), |, >)", text, text);
				break;
			}
			if (isop && (is(a, "-v") || is(a, "-F") || ((lopt(lo, "--assign") || lopt(lo, "--field-separator")) && !strchr(lo, '=')))) {
				k++;
				break;
			}
			if (!isop && !script) {
				script = 1;
				if (awkprog(a))
					HIT("this awk program runs commands or writes files (system(), |, >)", a, a);
			}
			break;
		}
		case 'r':
			if (isop && (opt(a, "-e") || opt(a, "--rsh") || opt(a, "--rsync-path") || opt(a, "--write-batch") ||
			             opt(a, "--only-write-batch") || opt(a, "--log-file") || cluster(a, 'e', NULL)))
				HIT("rsync -e/--rsync-path runs a program", a[1] == '-' ? a : "-e", a);
			break;
		case 'z':
			if (isop && (opt(a, "-TT") || opt(a, "--unzip-command")))
				HIT("zip -TT runs a program", a, a);
			break;
		case 'g':
			if (isop && opt(a, "--pre"))
				HIT("rg --pre runs a program on every file", "--pre", a);
			break;
		case 'l':
			if (isop && (opt(a, "-o") || opt(a, "-O") || opt(a, "--log-file") || opt(a, "--LOG-FILE") || opt(a, "-k") ||
			             opt(a, "--lesskey-file") || opt(a, "--lesskey-src")))
				HIT("less -o writes a file, -k reads key bindings", a, a);
			break;
		case 'm':
			if (isop && (opt(a, "-P") || opt(a, "--pager") || opt(a, "-H") || opt(a, "--html") || opt(a, "--browser")))
				HIT("man -P/-H runs a program", a, a);
			break;
		case 'c':
			if (isop && (opt(a, "-o") || opt(a, "-O") || opt(a, "--output") || opt(a, "--output-dir") || opt(a, "-K") ||
			             opt(a, "--config") || opt(a, "-D") || opt(a, "--dump-header") || opt(a, "-c") ||
			             opt(a, "--cookie-jar") || opt(a, "--trace") || opt(a, "--trace-ascii") || opt(a, "--libcurl") ||
			             opt(a, "--etag-save") || opt(a, "--hsts") || opt(a, "--alt-svc") || opt(a, "--remote-name") ||
			             opt(a, "--remote-name-all") || (a[1] != '-' && strpbrk(a + 1, "oODKc"))))
				HIT("this curl option writes a file or reads options from one", a, a);
			break;
		case 'w':
			if (isop && (opt(a, "-O") || opt(a, "-o") || opt(a, "-a") || opt(a, "--output-document") ||
			             opt(a, "--output-file") || opt(a, "--append-output") || opt(a, "-e") || opt(a, "--execute") ||
			             opt(a, "--config") || opt(a, "--use-askpass")))
				HIT("this wget option writes a file or runs commands", a, a);
			break;
		case 'h':
			if (isop && (opt(a, "-o") || opt(a, "-F") || opt(a, "-S") || opt(a, "-J") || (a[1] != '-' && strpbrk(a + 1, "oFSJ"))))
				HIT("this ssh option runs a program (ProxyCommand ...)", a, a);
			break;
		case 'x':
		case 'u':
			if (isop && kind == 'x' && (is(a, "-r") || is(a, "-revert")))
				HIT("xxd -r writes binary", a, a);
			if (isop && kind == 'x' && (is(a, "-c") || is(a, "-g") || is(a, "-l") || is(a, "-o") || is(a, "-s") || is(a, "-n") || is(a, "-cols") || is(a, "-len") || is(a, "-seek")))
				k++;
			else if (isop && kind == 'u' && (is(a, "-f") || is(a, "-s") || is(a, "-w")))
				k++;
			else if (!isop && ++operands == 2)
				HIT("a second file operand is the file it writes", a, a);
			break;
		case 'T':
			if (isop && opt(a, "-o"))
				HIT("tree -o writes a file", "-o", a);
			break;
		case 'S':
		case 'i':
		case 'D':
			if (isop && (opt(a, "-o") || opt(a, "--output")))
				HIT("this option writes a file", a[1] == '-' ? "--output" : "-o", a);
			break;
		case 'd':
			if (!strncmp(a, "of=", 3))
				HIT("dd of= writes a file", "of=", a);
			if (maybeopt(wf, argv, k))
				HIT("a dd operand only known at run time could be of=", "", a);
			break;
		case 'y':
			if (isop && (opt(a, "-i") || opt(a, "--inplace") || cluster(a, 'i', NULL)))
				HIT("yq -i writes a file", "-i", a);
			break;
		case 'q':
			if (opt(a, "-cmd") || opt(a, "-init") || opt(a, "--cmd") || opt(a, "--init") || a[0] == '.' || strstr(a, ".shell") || strstr(a, ".system") ||
			    strstr(a, ".output") || strstr(a, ".once") || strstr(a, ".import") || strstr(a, ".save") || strstr(a, ".backup") ||
			    strstr(a, ".load") || strstr(a, "load_extension"))
				HIT("this sqlite3 argument runs commands or writes files", a, a);
			break;
		case 'v':
			if (a[0] == '+' || (isop && (opt(a, "-c") || opt(a, "--cmd") || opt(a, "-S") || opt(a, "-s") || opt(a, "-u") ||
			                             opt(a, "-w") || opt(a, "-W"))))
				HIT("this editor option runs editor commands", a[0] == '+' ? "+" : a, a);
			break;
		case 'e':
			if (isop && (opt(a, "-o") || opt(a, "--output")))
				HIT("-o writes a file", a[1] == '-' ? "--output" : "-o", a);
			if (!isop)
				return NULL; /* the command it runs is judged on its own */
			break;
		}
	}
	return NULL;
}

int dangerenv(const char *name, size_t n)
{
	static const char *const exact[] = {"PATH", "BASH_ENV", "ENV", "IFS", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
	                                    "PAGER", "MANPAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "LESSKEY",
	                                    "LESS", "HOME", "XDG_CONFIG_HOME", "TAR_OPTIONS", "GZIP", "NODE_OPTIONS",
	                                    "RUBYOPT", "PERL5OPT", "PERL5LIB", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME",
	                                    "CDPATH", "GLOBIGNORE", "BASH_XTRACEFD", "TMPDIR", "SSH_ASKPASS", "SUDO_ASKPASS",
	                                    "GCONV_PATH", "CURL_HOME", "WGETRC", "SQLITE_HISTORY", "EXINIT", "VIMINIT",
	                                    "MYVIMRC", "INPUTRC", "HISTFILE", "SHELL", NULL};
	static const char *const prefix[] = {"LD_", "GIT_", "DYLD_", "BASH_FUNC_", "NPM_CONFIG_", "PIP_", NULL};
	for (const char *const *e = exact; *e; e++)
		if (strlen(*e) == n && !strncmp(*e, name, n))
			return 1;
	for (const char *const *e = prefix; *e; e++)
		if (n >= strlen(*e) && !strncmp(*e, name, strlen(*e)))
			return 1;
	return 0;
}
