/* shellsplit: a POSIX sh command line cut into the simple commands it would run, with every
 * construct the policy cannot judge flagged; docs/security.md lists exactly what is recognised. */
#ifndef NS_SHELLSPLIT_H
#define NS_SHELLSPLIT_H

#include <stddef.h>
#include <stdint.h>

/* Longest command line the splitter reads; anything longer is refused whole. */
#define SHMAXLEN 65536

/* One simple command as the shell would run it. */
struct shcmd {
	char **argv;        /* words after quote removal, NULL-terminated, one allocation; leading
	                     * VAR=value assignments and redirections are not words */
	size_t argc;
	char *text;         /* the command as written: its span of the line */
	const char *unsafe; /* why it cannot be proven harmless (a static string), or NULL */
	int relredir;       /* it redirects to a relative path */
};

struct shsplit {
	struct shcmd *cmds; /* in the order their text ends; a $( ) inside a command comes first */
	size_t ncmds, cap;
	const char *unsafe; /* why the line as a whole cannot be proven harmless, or NULL */
	size_t unsafeat;    /* byte offset where that was found */
	char why[96];       /* storage for a formatted unsafe reason */
};

/* Split s[0..n) into *out (zeroed first). Returns 0 when every part is understood and none is
 * flagged, -1 otherwise (out->unsafe or some command's unsafe says why); out holds what was found
 * either way, so deny and abort rules can still see the commands. */
int shsplit(const char *s, size_t n, struct shsplit *out);
/* Characters that cannot be seen or change how text is shown (controls but tab and newline,
 * bidi and zero-width marks, tag characters ...): refused anywhere in a line. */
int shhidden(uint32_t c);
/* Free what a split owns. */
void shsplitfree(struct shsplit *sp);

#endif
