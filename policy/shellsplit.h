/* shellsplit: a shell command line (bash and dash both) cut into every simple command it would
 * run, through control structures, substitutions and the commands wrappers run; what is only
 * known at run time is marked. docs/security.md describes what is read. */
#ifndef NS_SHELLSPLIT_H
#define NS_SHELLSPLIT_H

#include <stddef.h>
#include <stdint.h>

/* Longest command line the splitter reads; anything longer is opaque whole. */
#define SHMAXLEN 65536

/* In a word: text only known at run time (an expansion, a glob, a tilde). Never in a line: the
 * splitter refuses control characters. */
#define SHUNK '\x01'

/* Word flags. */
enum {
	SHW_UNKNOWN = 1, /* holds SHUNK somewhere */
	SHW_SPLIT = 2,   /* an unquoted expansion or glob: may become any number of words */
	SHW_NODASH = 4,  /* unknown, but cannot start with '-' (find's {}; $!, $$, $?, $#: digits) */
};

/* One simple command as the shell would run it. */
struct shcmd {
	char **argv;        /* words after quote removal, NULL-terminated, one allocation; leading
	                     * VAR=value assignments and redirections are not words */
	unsigned char *wf;  /* SHW_* of each word (same allocation) */
	size_t argc;
	char *text;         /* the command as written (its span of the line), or its words joined */
	const char *opaque; /* why what it runs is only known at run time (a static string), or NULL */
	const char *redir;  /* why one of its redirections leaves /workspace, /tmp and /dev/null, or NULL */
	const char *wsredir; /* one of its redirections writes a file in /workspace (static), or NULL */
	const char *danger; /* the dangerous option it uses (danger.h), or NULL */
	const char *dangerkey; /* the option a rule's pattern must name to allow it */
	const char *dangerword; /* the word holding it (points into argv or envkey, or static) */
	char *envkey;       /* owned: "NAME=" of a dangerous variable assigned before it, or NULL */
	char **assign;      /* owned, one allocation: its VAR=value assignments as words, NULL-
	                     * terminated (SHUNK where only known at run time), or NULL for none */
	size_t nassign;
	int via;            /* index of the command that runs this one (a wrapper, bash -c ...), or -1 */
	int dash;           /* only dash reads the line this way ([[ ]] and (( )) are bash's) */
};

struct shsplit {
	struct shcmd *cmds; /* in the order their text ends; a $( ) inside a command comes first */
	size_t ncmds, cap;
	const char *unsafe; /* the line could not be read whole (it is then opaque), or NULL */
	size_t unsafeat;    /* byte offset where that was found */
	char why[96];       /* storage for a formatted reason */
};

/* Split s[0..n) into *out (zeroed first). Returns 0 when the line was read whole and nothing in
 * it is opaque, -1 otherwise; out holds what was found either way. */
int shsplit(const char *s, size_t n, struct shsplit *out);
/* Characters that cannot be seen or change how text is shown (controls but tab and newline,
 * bidi and zero-width marks, tag characters ...): a line holding one is opaque. */
int shhidden(uint32_t c);
/* Is w, a NAME=VALUE assignment (git: a -c KEY=VALUE setting), one whose VALUE a program runs as a
 * command line, which the split reads as commands of their own (GIT_PAGER=cat, core.pager=cat)? */
int shheld(const char *w, int git);
/* Free what a split owns. */
void shsplitfree(struct shsplit *sp);

#endif
