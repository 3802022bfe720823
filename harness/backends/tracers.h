/*
 * tracers.h - the tracers perturb knows as variant blocks, one row each:
 * the metric in which a variant of that tracer stores the events it
 * counted in each run (unit "events"), and how its attach type is
 * described from the variant's block.  The report's cost per event and
 * overhead compensation (reports/calib.h) read the event metrics by name
 * from this table only, so that a new tracer adds a row here and nothing
 * in the report.
 *
 * Adding a tracer: one row of tracers[] in tracers.c with the event metric
 * its backend stores per run and, when the variant's block says what it
 * attaches to, an attach() function.
 */
#ifndef PERTURB_TRACERS_H
#define PERTURB_TRACERS_H

#include <stddef.h>
#include "core/experiment.h"

struct tracer_kind {
	const char *name;		/* "ftrace", "bpf", ... */
	const char *event_metric;	/* "trace_events", "bpf_runs", ... */
	/* v's attach type into buf ("tracepoint (syscalls:sys_enter_getppid)"),
	 * returning 1; 0 when v has no block of this tracer.  NULL: the row
	 * cannot tell from the variant (the report then says "not recorded"). */
	int (*attach)(const struct variant *v, char *buf, size_t len);
};

extern const struct tracer_kind tracers[];
extern const size_t n_tracers;

/* The row whose event metric is metric, or NULL. */
const struct tracer_kind *tracer_by_metric(const char *metric);

/* The first row that describes v's block: its attach type into buf
 * (", in a qemu guest" after it when v's backend is not the host) and
 * the row; NULL (buf empty) when v has none (or only tracers without an
 * attach() function). */
const struct tracer_kind *tracer_of_variant(const struct variant *v, char *buf, size_t len);

#endif
