/* test_beneath: util/beneath.h gives the same answers with openat2 and with the walk (forced by
 * NIGHTSHIFT_OPENAT2=ENOSYS and =EPERM, as an old kernel and a seccomp profile answer), and its
 * probe is taken once, by many threads at once, without a race (run under TSan or ASan too). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "t.h"
#include "../../util/beneath.h"
#include "../../util/util.h"

static char top[64];

static const struct {
	const char *path;
	int flags, opts;
} cases[] = {
	{"f", O_RDONLY, 0},
	{"d/g", O_RDONLY, 0},
	{"d//g", O_RDONLY, 0},
	{"./d/./g", O_RDONLY, 0},
	{"d", O_RDONLY | O_DIRECTORY, 0},
	{"d/", O_RDONLY | O_DIRECTORY, 0},
	{"d/", O_PATH, 0},
	{"f/", O_RDONLY, 0},
	{"d", O_PATH, 0},
	{"", O_PATH, 0},
	{".", O_PATH | O_DIRECTORY, 0},
	{"nothere", O_RDONLY, 0},
	{"d/nothere/x", O_RDONLY, 0},
	{"new", O_WRONLY | O_CREAT | O_EXCL, 0},
	{"lf", O_RDONLY, 0},       /* a symlink to f */
	{"lf", O_PATH, 0},         /* O_PATH | O_NOFOLLOW: the link itself */
	{"ld/g", O_RDONLY, 0},     /* through a symlink to d */
	{"ld", O_RDONLY | O_DIRECTORY, 0},
	{"lout/x", O_RDONLY, 0},   /* through a symlink out */
	{"d/lup", O_RDONLY, 0},    /* ../f */
	{"..", O_PATH, 0},
	{"../x", O_RDONLY, 0},
	{"d/../f", O_RDONLY, 0},
	{"d/../../x", O_RDONLY, 0},
	{"/etc/passwd", O_RDONLY, 0},
	{"f/g", O_RDONLY, 0},
	{"d", O_RDONLY, BENEATH_NOXDEV},
	{"d/g", O_RDONLY, BENEATH_NOXDEV},
};
#define NCASES (sizeof cases / sizeof *cases)

/* One line per case: "ok" or the errno's name, then whether the new file exists. */
static void answers(char *out, size_t n)
{
	int root = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t used = 0;
	char made[96];
	snprintf(made, sizeof made, "%s/new", top);
	unlink(made);
	for (size_t i = 0; i < NCASES; i++) {
		errno = 0;
		int fd = openbeneath(root, cases[i].path, cases[i].flags, cases[i].opts);
		int err = errno;
		used += (size_t)snprintf(out + used, n - used, "%s: %s\n", cases[i].path, fd >= 0 ? "ok" : strerrorname_np(err));
		if (fd >= 0)
			close(fd);
	}
	/* another mount: /proc beneath / */
	int slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	errno = 0;
	int fd = openbeneath(slash, "proc/self", O_PATH, BENEATH_NOXDEV);
	used += (size_t)snprintf(out + used, n - used, "proc/self noxdev: %s\n", fd >= 0 ? "ok" : strerrorname_np(errno));
	if (fd >= 0)
		close(fd);
	fd = openbeneath(slash, "proc/self", O_PATH, 0);
	used += (size_t)snprintf(out + used, n - used, "proc/self: %s\n", fd >= 0 ? "ok" : strerrorname_np(errno));
	if (fd >= 0)
		close(fd);
	close(slash);
	close(root);
}

static void *race(void *arg)
{
	int *have = arg;
	*have = beneathopenat2();
	int root = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < 200; i++) {
		int fd = openbeneath(root, "d/g", O_RDONLY, 0);
		if (fd < 0)
			*have = -1;
		else
			close(fd);
	}
	close(root);
	return NULL;
}

static void sh(const char *cmd)
{
	if (system(cmd) != 0)
		fprintf(stderr, "failed: %s\n", cmd);
}

int main(int argc, char **argv)
{
	static char mine[8192], other[8192];
	if (argc > 2 && strcmp(argv[1], "answers") == 0) { /* the child: the same cases, another way */
		snprintf(top, sizeof top, "%s", argv[2]);
		answers(mine, sizeof mine);
		printf("openat2 %d\n%s", beneathopenat2(), mine);
		return 0;
	}
	snprintf(top, sizeof top, "/tmp/ns-beneath.XXXXXX");
	if (!mkdtemp(top))
		return perror("mkdtemp"), 1;
	char *cmd = xasprintf("cd %s && mkdir -p d in && echo f >f && echo g >d/g && ln -s f lf && ln -s d ld && "
	                      "ln -s /etc lout && ln -s ../f d/lup", top);
	sh(cmd);
	free(cmd);

	/* many threads take the first call at once: one probe, one answer */
	enum { N = 16 };
	pthread_t th[N];
	int have[N];
	for (int i = 0; i < N; i++)
		pthread_create(&th[i], NULL, race, &have[i]);
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	int same = 1;
	for (int i = 0; i < N; i++)
		same &= have[i] == have[0] && have[i] >= 0;
	ok(same, "%d threads: one answer of the probe, every open worked", N);
	const char *forced = getenv("NIGHTSHIFT_OPENAT2");
	ok(!forced || beneathopenat2() == 0, "NIGHTSHIFT_OPENAT2=%s: the walk", forced ? forced : "");

	answers(mine, sizeof mine);
	ok(strstr(mine, "d/g: ok\n") && strstr(mine, "ld/g: ELOOP\n") && strstr(mine, "lf: ELOOP\n") &&
	   strstr(mine, "../x: EXDEV\n") && strstr(mine, "/etc/passwd: EXDEV\n") && strstr(mine, "d/lup: ELOOP\n") &&
	   strstr(mine, "proc/self noxdev: EXDEV\n") && strstr(mine, "proc/self: ok\n") && strstr(mine, "lf: ok\n"),
	   "the answers (openat2 %d):\n%s", beneathopenat2(), mine);
	const char *modes[] = {"ENOSYS", "EPERM", "none"};
	for (int m = 0; m < 3; m++) {
		char *run = strcmp(modes[m], "none") == 0
		                ? xasprintf("env -u NIGHTSHIFT_OPENAT2 /proc/%d/exe answers %s", (int)getpid(), top)
		                : xasprintf("NIGHTSHIFT_OPENAT2=%s /proc/%d/exe answers %s", modes[m], (int)getpid(), top);
		FILE *p = popen(run, "r");
		size_t n = p ? fread(other, 1, sizeof other - 1, p) : 0;
		other[n] = 0;
		if (p)
			pclose(p);
		free(run);
		char *nl = strchr(other, '\n');
		int walked = strncmp(other, "openat2 0\n", 10) == 0;
		ok(strcmp(modes[m], "none") == 0 || walked, "%s: the child walked (%.12s)", modes[m], other);
		ok(nl && strcmp(nl + 1, mine) == 0, "%s: the same answers as here:\n%s\nthere:\n%s", modes[m], mine, nl ? nl + 1 : other);
	}
	char *rm = xasprintf("rm -rf %s", top);
	sh(rm);
	free(rm);
	return tdone();
}
