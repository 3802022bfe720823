/*
 * result.h - one builder of a run's result (struct run_result, runner.h)
 * from how the run ended and what it printed, for every place a run is
 * measured: the host runner (runner.c) and the qemu backend, whose guest
 * agent sends the same facts back (harness/backends/proto.h).  The same
 * output gives the same status, reason, metrics and tail wherever the
 * workload ran.
 *
 * Status and reason:
 *   exit 0              RUN_OK (then the metrics may still fail it)
 *   exit N              RUN_FAILED, "exited with status N"
 *   signal S            RUN_CRASHED, "killed by signal S (NAME)"
 *   time-out            RUN_TIMEOUT, "timed out after T s"
 *   stop signal S       RUN_INTERRUPTED, "interrupted by signal S (NAME)"
 *   not started         RUN_ERROR, the reason given
 *
 * Metrics (only of a run that is RUN_OK so far; a run that failed has
 * none): for each metric_def, the first line-wise match of its regex in
 * stdout, then in stderr (the regex recompiled with REG_NEWLINE: '^' and
 * '$' at line boundaries); the value is group 1 (or the whole match).  It
 * must be a finite decimal or hexadecimal floating-point number
 * (metric_parse(): strtod() on the whole token, however long), with blanks
 * after it at most: "12abc", "inf" and "nan" are not numbers, a subnormal
 * (4.9e-324) is one, and a value beyond a double (1e400, or 1e-400 that
 * would be 0) is refused with that reason.  The first metric that is not
 * found or not a number makes the run RUN_FAILED with "metric 'NAME' not
 * found in output" or "metric 'NAME': cannot parse 'TEXT' as a number:
 * WHY"; the others still get their values.
 *
 * The metrics are scanned in chunks of whole lines of at most 256 KiB (a
 * longer line is cut there), as the output comes: the whole output is
 * scanned however long it is, also what is not kept (runner.h: the bound).
 *
 * Output tail: the last RUNNER_TAIL_BYTES of stdout followed by stderr
 * (stderr first gets its share), starting on a UTF-8 character boundary
 * when cut, NUL bytes shown as spaces.
 */
#ifndef PERTURB_RESULT_H
#define PERTURB_RESULT_H

#include <stddef.h>
#include <stdint.h>
#include "core/runner.h"

struct counter_reading;

enum run_end {
	RUN_END_EXIT,		/* code: the exit status */
	RUN_END_SIGNAL,		/* code: the signal that killed it */
	RUN_END_TIMEOUT,	/* killed after req->timeout_s */
	RUN_END_STOP,		/* code: perturb's stop signal */
	RUN_END_ERROR,		/* not started: why */
};

struct run_outcome {
	enum run_end end;
	int code;
	const char *why;	/* RUN_END_ERROR */
	double wall_s, user_s, sys_s;
	long maxrss_kb;
	/* what the workload printed (NULL when nothing), or its last part */
	const char *out, *err;
	size_t out_len, err_len;
	/* NULL: the metrics are scanned from out and err; else the scan that
	 * was fed all of the output as it came */
	const struct metric_scan *scan;
	uint64_t dropped;	/* bytes of output not kept (res->output_dropped) */
};

/*
 * A metric scan fed as the output comes: metric_scan_stream(s, 0) is the
 * arg of metric_scan_feed() for stdout, (s, 1) for stderr; the feed has
 * the signature of proc.h's capture_feed (whole lines, see there).  req
 * must outlive s.
 */
/* The one rule for a metric's text (above): 0 with *v, or -1 with *why
 * (a static string: "not a number", "too large for a double ..."). */
int metric_parse(const char *text, double *v, const char **why);

struct metric_scan;
struct metric_scan *metric_scan_new(const struct run_request *req);
void *metric_scan_stream(struct metric_scan *s, int k);
size_t metric_scan_feed(void *stream, const char *text, size_t len, int final);
void metric_scan_free(struct metric_scan *s);

/*
 * Fill res (res->started is left as it is) from o and the request's
 * metrics: status, reason, exit_code / signal, times, the metrics' values
 * and out_tail (malloc'd).  res->values holds at most req->n_metrics
 * values; release with run_result_release().
 */
void result_build(const struct run_request *req, const struct run_outcome *o,
		  struct run_result *res);

/*
 * The metric names perturb stores itself, the one list: the columns of a
 * result ("wall", "user", "sys", "maxrss": column set) and the values
 * perturb adds to a run (cgroup_*, leftover_procs, each tracer's
 * accounting: trace_*, bpf_*, perf_*, lttng_*, stored only for a variant
 * holding the tracer's block).  The loader refuses a workload metric of
 * one of these names (config_workload.c; a tracer's, in a study with a
 * variant holding its block: config.c), the store a run_result value
 * named like a column (store_write.c), and the walk gives the columns as
 * metrics with their units (store_read.c); tests/test_config.c checks that
 * every name perturb adds is here.  Ends with a NULL name.
 */
struct reserved_metric {
	const char *name, *unit;
	int column;		/* a column of results, not a metric value */
	/* NULL: stored for every run; else only for a variant holding this
	 * block ("kernel", "bpf", "perf", "lttng"), and a workload of a study
	 * without one may name its own metric so (a tracer's simulation) */
	const char *block;
};
extern const struct reserved_metric result_reserved_metrics[];
/* The entry of name in result_reserved_metrics[], or NULL. */
const struct reserved_metric *result_metric_reserved(const char *name);

/* Append one value (name and unit copied) to res->values. */
void result_add_value(struct run_result *res, const char *name, double value,
		      const char *unit);
/* Append a counter's reading (counters.h) with its times and scaled flag. */
void result_add_reading(struct run_result *res, const struct counter_reading *rd);

#endif
