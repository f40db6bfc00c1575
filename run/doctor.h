/* doctor: can this machine run a manifest? One check a line: ok, or the cause and its remedy. */
#ifndef NS_DOCTOR_H
#define NS_DOCTOR_H

#include "../manifest/manifest.h"

enum { CHECK_OK, CHECK_WARN, CHECK_FAIL };

struct check {
	char name[40];    /* "namespace sandbox", "model default", "disk", ... */
	int state;        /* CHECK_OK, CHECK_WARN (it runs, with less than asked), CHECK_FAIL (it cannot) */
	char what[1536];  /* what was found; for a failure the cause and the remedy */
};

struct checks {
	struct check *v;
	size_t n;
};

/* Run every check that applies to m (NULL: the machine alone: the namespace sandbox, cgroups,
 * seccomp, a Docker engine if one is found, the disk under outdir). outdir is where run
 * directories would go (NULL: m's runs/ folder, or the current directory). Never fails: what
 * cannot be checked is a check that failed, with the reason. */
void doctor(const struct manifest *m, const char *outdir, struct checks *out);
/* The number of failed checks. */
size_t doctorfailed(const struct checks *c);
void checksfree(struct checks *c);
/* The namespace sandbox of conf (NULL: the defaults) opened on an empty folder and one step run:
 * 0 with the limits that held in limits, or -1 with the cause and remedies in e (code 2). What
 * `run` checks before its first model call when a job uses the namespace backend. */
int doctorsandbox(const struct sandboxconf *conf, char limits[128], struct err *e);
/* Where m's run directories go, in a new string: outdir (--out) when given, else the user's out:
 * (config.yaml), else runs/ beside the manifest (m NULL: the current directory); *from says which,
 * in words for a message ("--out", "out: of FILE", "runs/ beside the manifest, the default"). */
char *runfolder(const struct manifest *m, const char *outdir, char **from);
/* 0 when run directories can be made in dir: it, or the nearest folder above it that is there, is a
 * folder this user can write; else -1 with the cause, from and the remedy in e (ERR_INPUT). */
int runfolderok(const char *dir, const char *from, struct err *e);
/* 0 when a private temporary folder can be made (util tmpfolder: $TMPDIR, else /tmp), *warn set
 * when a TMPDIR that is not absolute is passed over; else -1 with the cause and remedy (ERR_INPUT). */
int doctortmp(int *warn, struct err *e);

#endif
