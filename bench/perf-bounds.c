/*
 * perf-bounds.c - what a perf: variant adds to each run outside its timed
 * part: both bounds of a run (perf_tracer_mark() and perf_tracer_count(),
 * harness/backends/perf_tracer.h), timed directly on a perf that records
 * (or traces) getppid only, so that nearly nothing is written: the cost
 * of the bounds themselves (two "ping"s answered on perf record's control
 * fifo each; a marker system call per CPU waited for in perf trace's
 * output).  Built and run by bench/perf-bounds.sh.
 *
 *   perf-bounds record|trace FOLDER [N]
 */
#include "backends/perf_tracer.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int main(int argc, char **argv)
{
	char *ev[] = { "syscalls:sys_enter_getppid", NULL }, *sc[] = { "getppid", NULL };
	struct perf_cfg c = { 0 };
	struct perf_tracer *t;
	struct perf_counts pc;
	double sum = 0, best = 1e9;
	int n = argc > 3 ? atoi(argv[3]) : 200, trace;

	if (argc < 3 || n < 1)
		return fprintf(stderr, "usage: perf-bounds record|trace FOLDER [N]\n"), 2;
	trace = !strcmp(argv[1], "trace");
	c.mode = trace ? PERF_TRACE : PERF_RECORD;
	if (trace) {
		c.syscalls = sc;
		c.n_syscalls = 1;
	} else {
		c.events = ev;
		c.n_events = 1;
	}
	if (perf_tracer_start(&c, argv[2], argv[1], environ, 60, &t) < 0)
		return 1;
	for (int i = 0; i < n; i++) {
		double a = now_mono(), d;
		if (perf_tracer_mark(t) < 0 || perf_tracer_count(t, &pc) < 0)
			return perf_tracer_stop(t), 1;
		d = now_mono() - a;
		sum += d;
		best = d < best ? d : best;
	}
	printf("  perf %-6s both bounds of a run: mean %.3f ms, min %.3f ms (%d runs)\n",
	       argv[1], sum / n * 1e3, best * 1e3, n);
	return perf_tracer_stop(t) < 0;
}
