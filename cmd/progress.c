/* progress: the run's progress on stderr, and its events for --events.
 *
 * On a terminal, finished news scrolls and one live line per running job stays below it (job,
 * turn, step, tokens, what it is doing, elapsed), redrawn every second; elsewhere plain lines with
 * a UTC timestamp, and a heartbeat line for a job that has said nothing for a while (a long step,
 * a long request). Under GitHub Actions each job's lines are a log group printed as the job runs
 * (one group is open at a time: the lines of jobs running beside it are held and printed as their
 * own group when the open one ends). Colour only on a terminal without NO_COLOR. Nothing with
 * --quiet. Every text goes through util/term.h's termclean. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "gha.h"
#include "../run/progress.h"
#include "cmd.h"

enum { MAXLIVE = 32, HELDMAX = 256 * 1024 };

static struct {
	pthread_mutex_t mu;
	pthread_cond_t wake;
	pthread_t ticker;
	int ticking, stopping;
	int tty, color, quiet, gha, dirshown;
	char *dir;         /* the run directory, once it exists */
	int64_t heartbeat; /* ms of silence before a heartbeat line (not on a terminal) */
	int64_t lastdraw;
	int shown;
	FILE *events;      /* --events, or NULL */
	struct live {
		char job[80];
		char doing[64];
		int turns, steps, done;
		int logged;                  /* Actions: its group was printed and closed */
		int64_t tokens, start, news; /* news: when a line about it was last printed */
		struct buf held;             /* Actions: its lines while another job's group is open */
		int cut;                     /* lines held back past HELDMAX */
	} live[MAXLIVE];
	int nlive;
	int open; /* Actions: the job whose group is open, or -1 */
} P = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .open = -1};

/* SGR colours, only on a terminal without NO_COLOR. */
static const char *sgr(const char *code)
{
	return P.color ? code : "";
}

static void clearlive(void)
{
	if (P.shown)
		fprintf(stderr, "\033[%dA\033[J", P.shown);
	P.shown = 0;
}

static void drawlive(void)
{
	int64_t now = nowms();
	int n = 0;
	for (int i = 0; i < P.nlive; i++) {
		struct live *l = &P.live[i];
		if (l->done)
			continue;
		char *doing = termclean(l->doing, TERM_ONELINE);
		fprintf(stderr, "%s  %-24.24s turn %-3d step %-4d %8lld tokens %7.1fs  %.40s%s\n", sgr("\033[2m"), l->job,
		        l->turns, l->steps, (long long)l->tokens, (now - l->start) / 1000.0, doing, sgr("\033[0m"));
		free(doing);
		n++;
	}
	P.shown = n;
	P.lastdraw = now;
	fflush(stderr);
}

static struct live *find(const char *job, int make)
{
	for (int i = 0; i < P.nlive; i++)
		if (strcmp(P.live[i].job, job) == 0)
			return &P.live[i];
	if (!make)
		return NULL;
	/* a finished job's place is taken again once its held lines are out */
	for (int i = 0; i < P.nlive; i++)
		if (P.live[i].done && !P.live[i].held.len && P.open != i && (P.live[i].logged || !P.gha)) {
			buffree(&P.live[i].held);
			memset(&P.live[i], 0, sizeof P.live[i]);
			snprintf(P.live[i].job, sizeof P.live[i].job, "%s", job);
			P.live[i].start = P.live[i].news = nowms();
			return &P.live[i];
		}
	if (P.nlive == MAXLIVE)
		return NULL;
	struct live *l = &P.live[P.nlive++];
	memset(l, 0, sizeof *l);
	snprintf(l->job, sizeof l->job, "%s", job);
	l->start = l->news = nowms();
	return l;
}

/* The colour of a line, by what it says. */
static const char *tone(const char *msg)
{
	if (strstr(msg, "retrying") || strstr(msg, "elided") || strstr(msg, "window lowered") || strncmp(msg, "still ", 6) == 0)
		return "\033[33m";
	if (strstr(msg, ": deny (") || strstr(msg, ": abort (") || strstr(msg, "failed") || strstr(msg, "aborted") ||
	    strstr(msg, "not sent") || strstr(msg, "stopped using its tools"))
		return "\033[31m";
	if (strstr(msg, "succeeded"))
		return "\033[32m";
	return "";
}

/* Print one line (already cleaned) as the mode wants it. */
static void emit(const char *job, const char *safe)
{
	if (P.tty) {
		clearlive();
		if (job)
			fprintf(stderr, "%snightshift:%s %sjob %s%s: %s%s%s\n", sgr("\033[2m"), sgr("\033[0m"), sgr("\033[1;36m"),
			        job, sgr("\033[0m"), sgr(tone(safe)), safe, sgr("\033[0m"));
		else
			fprintf(stderr, "%snightshift:%s %s\n", sgr("\033[2m"), sgr("\033[0m"), safe);
		drawlive();
		return;
	}
	char now[32];
	utcnow(now);
	if (P.gha && job)
		ghaline(stderr, "%s nightshift: job %s: %s", now, job, safe);
	else if (P.gha)
		ghaline(stderr, "%s nightshift: %s", now, safe);
	else if (job)
		fprintf(stderr, "%s nightshift: job %s: %s\n", now, job, safe);
	else
		fprintf(stderr, "%s nightshift: %s\n", now, safe);
	fflush(stderr);
}

/* Actions: open the group of live job i and print what it held. */
static void ghaopen(int i)
{
	struct live *l = &P.live[i];
	ghagroup(stderr, "nightshift job %s", l->job);
	if (l->held.len)
		fputs(l->held.data, stderr);
	if (l->cut)
		fprintf(stderr, "nightshift: job %s: %d more lines not shown (the run's report has them all)\n", l->job,
		        l->cut);
	l->held.len = 0;
	if (l->held.data)
		l->held.data[0] = 0;
	l->cut = 0;
	P.open = i;
}

/* Actions: end the open group, the job's log (its events) last in it. */
static void ghaclose(void)
{
	if (P.open < 0)
		return;
	if (P.dir)
		ghajob(stderr, P.dir, P.live[P.open].job);
	ghaendgroup(stderr);
	P.live[P.open].logged = 1;
	P.open = -1;
}

/* Actions: the open group has ended; print the groups of jobs that ended meanwhile, then open
 * the group of a job still running, if any. */
static void ghanext(void)
{
	ghaclose();
	for (int i = 0; i < P.nlive; i++)
		if (P.live[i].done && !P.live[i].logged) {
			ghaopen(i);
			ghaclose();
		}
	for (int i = 0; i < P.nlive; i++)
		if (!P.live[i].done) {
			ghaopen(i);
			break;
		}
	fflush(stderr);
}

static void line(const char *job, const char *raw)
{
	char *safe = termclean(raw, 0); /* no text of a model's drives the terminal or becomes a workflow command */
	pthread_mutex_lock(&P.mu);
	struct live *l = job ? find(job, 0) : NULL;
	if (l)
		l->news = nowms();
	if (P.gha && l) {
		int i = (int)(l - P.live);
		if (P.open < 0 && !l->done)
			ghaopen(i);
		if (P.open != i) {
			char now[32];
			utcnow(now);
			char *esc = ghaescape(safe);
			if (l->held.len < HELDMAX)
				bufprintf(&l->held, "%s nightshift: job %s: %s\n", now, job, esc);
			else
				l->cut++;
			free(esc);
			pthread_mutex_unlock(&P.mu);
			free(safe);
			return;
		}
	}
	emit(job, safe);
	pthread_mutex_unlock(&P.mu);
	free(safe);
}

static void job(const char *name, int turns, int steps, int64_t tokens, const char *doing, int done)
{
	pthread_mutex_lock(&P.mu);
	struct live *l = find(name, !done);
	if (l) {
		l->turns = turns;
		l->steps = steps;
		l->tokens = tokens;
		if (doing)
			snprintf(l->doing, sizeof l->doing, "%s", doing);
		if (done) {
			l->done = 1;
			if (P.gha && P.open == (int)(l - P.live))
				ghanext();
		}
	}
	if (P.tty && (done || nowms() - P.lastdraw >= 100)) {
		clearlive();
		drawlive();
	}
	pthread_mutex_unlock(&P.mu);
}

/* --events: the event as written, with the schema version and the job whose log it is in front
 * (an event's own "job", the delegate a call started, is kept as "delegate_job"). */
static void event(const char *jobid, const char *json)
{
	if (!P.events)
		return;
	cJSON *ev = cJSON_Parse(json), *out = cJSON_CreateObject(), *c;
	if (!cJSON_IsObject(ev)) {
		cJSON_Delete(ev);
		cJSON_Delete(out);
		return;
	}
	cJSON_AddNumberToObject(out, "v", 1);
	if (jobid)
		cJSON_AddStringToObject(out, "job", jobid);
	while ((c = ev->child)) {
		cJSON_DetachItemViaPointer(ev, c);
		if (strcmp(c->string, "job") == 0 && jobid) {
			if (cJSON_IsString(c) && strcmp(c->valuestring, jobid) == 0) {
				cJSON_Delete(c);
				continue;
			}
			cJSON_AddItemToObject(out, "delegate_job", c);
			continue;
		}
		cJSON_AddItemToObject(out, c->string, c);
	}
	cJSON_Delete(ev);
	char *raw = cJSON_PrintUnformatted(out), *line = termjson(raw); /* the same JSON, inert on a terminal */
	free(raw);
	cJSON_Delete(out);
	pthread_mutex_lock(&P.mu);
	if (P.events) {
		fputs(line, P.events);
		fputc('\n', P.events);
		fflush(P.events);
	}
	pthread_mutex_unlock(&P.mu);
	free(line);
}

/* The run directory on stdout, absolute, the moment it exists: a run killed later is still found. */
static void rundir(const char *path)
{
	char *abs = realpath(path, NULL);
	printf("%s\n", abs ? abs : path);
	fflush(stdout);
	pthread_mutex_lock(&P.mu);
	free(P.dir);
	P.dir = abs ? abs : xstrdup(path);
	P.dirshown = 1;
	pthread_mutex_unlock(&P.mu);
}

/* Once a second: redraw the live lines on a terminal (their clocks run), elsewhere a heartbeat
 * for a job silent past the heartbeat. */
static void *ticker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&P.mu);
	while (!P.stopping) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&P.wake, &P.mu, &ts);
		if (P.stopping)
			break;
		int64_t now = nowms();
		if (P.tty) {
			clearlive();
			drawlive();
			continue;
		}
		for (int i = 0; i < P.nlive; i++) {
			struct live *l = &P.live[i];
			if (l->done || now - l->news < P.heartbeat)
				continue;
			char msg[160];
			snprintf(msg, sizeof msg, "still %s (%.0fs since its last news; turn %d, step %d)",
			         l->doing[0] ? l->doing : "running", (now - l->news) / 1000.0, l->turns, l->steps);
			l->news = now;
			char *safe = termclean(msg, 0);
			if (!P.gha || P.open == i)
				emit(l->job, safe);
			free(safe);
		}
	}
	pthread_mutex_unlock(&P.mu);
	return NULL;
}

static const struct progressops printer = {line, job, event, rundir};
static const struct progressops quietprinter = {NULL, NULL, event, rundir};

int progressstart(const char *cmd, int quiet, const char *events)
{
	const char *term = getenv("TERM"), *hb = getenv("NIGHTSHIFT_HEARTBEAT");
	if (events && strcmp(events, "-") == 0) {
		P.events = stderr;
		quiet = 1; /* the events take the progress lines' place */
	} else if (events) {
		/* A new file renamed into place before the first line (it is read as it grows): a link at
		 * PATH is replaced, never written through; a pipe or device there is written as it is. */
		struct err e = {0};
		char *tmp;
		int fd = outopen(events, &tmp, &e);
		if (fd >= 0 && tmpplace(tmp, events, &e) < 0) {
			close(fd);
			fd = -1;
		}
		free(tmp);
		if (fd < 0 || !(P.events = fdopen(fd, "w"))) {
			if (fd >= 0)
				close(fd);
			usage(cmd, "--events %s: %s", events, e.msg[0] ? e.msg : strerror(errno));
			return -1;
		}
	}
	P.quiet = quiet;
	P.gha = ghaactive();
	P.tty = isatty(2) && term && strcmp(term, "dumb") != 0 && !P.gha;
	P.color = P.tty && !getenv("NO_COLOR");
	P.heartbeat = hb && atoi(hb) > 0 ? (int64_t)atoi(hb) * 1000 : 30000;
	progressset(quiet ? &quietprinter : &printer);
	if (!quiet && pthread_create(&P.ticker, NULL, ticker, NULL) == 0)
		P.ticking = 1;
	return 0;
}

int progressstop(void)
{
	pthread_mutex_lock(&P.mu);
	P.stopping = 1;
	pthread_cond_broadcast(&P.wake);
	pthread_mutex_unlock(&P.mu);
	if (P.ticking)
		pthread_join(P.ticker, NULL);
	P.ticking = 0;
	pthread_mutex_lock(&P.mu);
	if (P.tty)
		clearlive();
	if (P.gha && !P.quiet && (P.open >= 0 || P.nlive)) {
		for (int i = 0; i < P.nlive; i++)
			P.live[i].done = 1;
		ghanext();
	}
	free(P.dir);
	P.dir = NULL;
	for (int i = 0; i < P.nlive; i++)
		buffree(&P.live[i].held);
	P.nlive = 0;
	if (P.events && P.events != stderr)
		fclose(P.events);
	P.events = NULL;
	pthread_mutex_unlock(&P.mu);
	return P.dirshown;
}
