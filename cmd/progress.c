/* progress: the run's progress on stderr. On a terminal, finished news scrolls and one live line
 * per running job stays below it (job, turn, step, tokens, elapsed); elsewhere plain lines with a
 * UTC timestamp; nothing with --quiet. NO_COLOR turns the dim styling off. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gha.h"
#include "../run/progress.h"
#include "cmd.h"

enum { MAXLIVE = 32 };

static struct {
	pthread_mutex_t mu;
	int tty, color, quiet, shown;
	int64_t lastdraw;
	struct live {
		char job[80];
		int turns, steps;
		int64_t tokens, start;
	} live[MAXLIVE];
	int nlive;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void clearlive(void)
{
	if (P.shown)
		fprintf(stderr, "\033[%dA\033[J", P.shown);
	P.shown = 0;
}

static void drawlive(void)
{
	int64_t now = nowms();
	for (int i = 0; i < P.nlive; i++) {
		struct live *l = &P.live[i];
		fprintf(stderr, "%s  %-24.24s turn %-3d step %-4d %8lld tokens %7.1fs%s\n", P.color ? "\033[2m" : "",
		        l->job, l->turns, l->steps, (long long)l->tokens, (now - l->start) / 1000.0, P.color ? "\033[0m" : "");
	}
	P.shown = P.nlive;
	P.lastdraw = now;
	fflush(stderr);
}

static void line(const char *raw)
{
	char *safe = termclean(raw, 0); /* no text of a model's drives the terminal or becomes a workflow command */
	const char *msg = safe;
	pthread_mutex_lock(&P.mu);
	if (P.tty) {
		clearlive();
		fprintf(stderr, "nightshift: %s\n", msg);
		drawlive();
	} else {
		char now[32];
		utcnow(now);
		fprintf(stderr, "%s nightshift: %s\n", now, msg);
	}
	pthread_mutex_unlock(&P.mu);
	free(safe);
}

static void job(const char *name, int turns, int steps, int64_t tokens, int done)
{
	if (!P.tty)
		return;
	pthread_mutex_lock(&P.mu);
	int i = 0;
	while (i < P.nlive && strcmp(P.live[i].job, name) != 0)
		i++;
	if (done) {
		if (i < P.nlive)
			P.live[i] = P.live[--P.nlive];
	} else {
		if (i == P.nlive && P.nlive < MAXLIVE) {
			P.nlive++;
			snprintf(P.live[i].job, sizeof P.live[i].job, "%s", name);
			P.live[i].start = nowms();
		}
		if (i < P.nlive) {
			P.live[i].turns = turns;
			P.live[i].steps = steps;
			P.live[i].tokens = tokens;
		}
	}
	if (done || nowms() - P.lastdraw >= 100) {
		clearlive();
		drawlive();
	}
	pthread_mutex_unlock(&P.mu);
}

static const struct progressops printer = {line, job};
static const struct progressops quietprinter = {NULL, NULL};

void progressstart(int quiet)
{
	const char *term = getenv("TERM");
	P.quiet = quiet;
	P.tty = isatty(2) && term && strcmp(term, "dumb") != 0 && !getenv("GITHUB_ACTIONS");
	P.color = P.tty && !getenv("NO_COLOR");
	progressset(quiet ? &quietprinter : &printer);
}

void progressstop(void)
{
	pthread_mutex_lock(&P.mu);
	if (P.tty)
		clearlive();
	P.nlive = 0;
	pthread_mutex_unlock(&P.mu);
}
