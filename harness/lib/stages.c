/* stages.c - see stages.h. */
#include "stages.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const names[STAGE_N] = {
	"plan", "cgroup", "spawn (clone, exec)", "wait (the workload)",
	"reap, output, status", "cgroup end", "result", "store",
};

static struct {
	int on;			/* -1 unknown, 0, 1 */
	int cur;		/* -1: none yet */
	double since, total[STAGE_N];
	double cpu_since, cpu[STAGE_N];	/* perturb's own CPU time (this thread) */
	long runs;
	const char *to;
} st = { .on = -1, .cur = -1 };

static void report(void)
{
	double all = 0;
	FILE *f = strcmp(st.to, "1") ? fopen(st.to, "a") : stderr;

	if (!f)
		return;
	stage_leave();		/* closes the stage open at the end */
	for (int i = 0; i < STAGE_N; i++)
		all += st.total[i];
	fprintf(f, "# perturb timing: %ld runs, %.6f s in the stages\n", st.runs, all);
	fprintf(f, "%-22s %12s %12s %7s %12s\n", "stage", "total_s", "per_run_us", "share",
		"cpu_per_run_us");
	for (int i = 0; i < STAGE_N; i++)
		fprintf(f, "%-22s %12.6f %12.2f %6.1f%% %12.2f\n", names[i], st.total[i],
			st.runs ? st.total[i] / (double)st.runs * 1e6 : 0.0,
			all > 0 ? 100.0 * st.total[i] / all : 0.0,
			st.runs ? st.cpu[i] / (double)st.runs * 1e6 : 0.0);
	if (f != stderr)
		fclose(f);
}

/* Add the time since the last mark to the open stage; t and c: now. */
static void close_stage(double *t, double *c)
{
	struct timespec ts;

	*t = now_mono();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	*c = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	if (st.cur >= 0) {
		st.total[st.cur] += *t - st.since;
		st.cpu[st.cur] += *c - st.cpu_since;
	}
}

void stage_leave(void)
{
	double t, c;

	if (st.on <= 0)
		return;
	close_stage(&t, &c);
	st.cur = -1;
}

void stage_enter(enum stage s)
{
	double t, c;

	if (st.on < 0) {
		st.to = getenv("PERTURB_TIMING");
		st.on = st.to && *st.to && strcmp(st.to, "0");
		if (st.on)
			atexit(report);
	}
	if (!st.on)
		return;
	close_stage(&t, &c);
	st.cur = (int)s;
	st.since = t;
	st.cpu_since = c;
	st.runs += s == STAGE_SPAWN;
}
