/*
 * calib.h - a tracer's calibrated cost per event and the overhead
 * compensation it allows, in the report model (report.h: report_model's
 * calib, comp; docs/experiment.md "calibration"; docs/report-json.md).
 *
 * Cost per event.  A calibration workload (its calibration: block) hits a
 * tracer's instrumented point a known number of times: hits per value of
 * its time metric (per operation of a micro's ns_per_op, per run of wall),
 * or per run from a metric the program prints (hits_metric).  A tracer
 * may record more than one event a hit (raw_syscalls:* records the entry
 * and the exit of each system call), so the events per hit are measured
 * in the same runs, E the variant's mean events per run (its event
 * metric, backends/tracers.h) and H its hits per run:
 *
 *   events/hit = E / H,
 *   ns/event   = (mean(variant) - mean(baseline)) / hits / events/hit,
 *
 * the report's dilation of the mean of the time metric in ns (report.h:
 * mean_dil; paired by rounds when the plan has them) per hit, over the
 * events each hit records; its CI is that dilation's interval divided by
 * the same hits and events per hit, both treated as fixed: the one
 * interval the report computes for the dilation is the one of the cost
 * (the way `lttng calibrate` and the kernel's BPF trigger benchmark give
 * a cost per hit, with the report's interval).  H is the hits for a
 * per-run calibration, and hits x the mean of its ops_metric (the
 * operations a run performed: perturb-micro's ops) for a per-operation
 * one; without an ops_metric (or a value of it, or an event) events/hit
 * is not measured and taken as 1, and the row says so.  Events are
 * counted system-wide: other processes' events add a few, so 2 events a
 * hit measure a little more than 2.  "Hits this point": E at least H / 2
 * (so a tracer that keeps fewer than half its hits' events, discarding
 * the others, is not calibrated there), or, H unknown, at least
 * REPORT_CALIB_MIN_EVENTS (a workload that never reaches the point still
 * sees a few of other processes' events).
 *
 * Overhead compensation (Malony & Shende, "Overhead Compensation in
 * Performance Profiling", Euro-Par 2004, LNCS 3149: a measured cost per
 * event removed from the measured time recovers the uninstrumented one,
 * except where the instrumentation also changes what it does not count -
 * caches, buffers, the scheduler).  For every other workload without
 * per-operation metrics (a real one) under a traced variant with a
 * calibrated cost, with E the variant's mean events per run and c the
 * cost:
 *   measured dilation  D = mean(wall) - mean(baseline wall), with the
 *                      report's interval [Dlo, Dhi] (mean_dil);
 *   predicted          P = E c, interval [E clo, E chi] (E treated as
 *                      fixed, as the cost's hits are);
 *   share explained    100 P / D, interval 100 [Plo / Dhi, Phi / Dlo]
 *                      (only when Dlo > 0: a dilation that may be 0 has
 *                      no bounded share);
 *   compensated time   T = mean(wall) - P, interval
 *                      mean(baseline) + [Dlo - Phi, Dhi - Plo].
 * The compensated interval is interval arithmetic on the two intervals the
 * report already has (no second resampling): each at level 1 - alpha, it
 * covers with at least 1 - 2 alpha (Bonferroni's inequality), so it is
 * conservative.  fits: it holds the baseline's mean, the uninstrumented
 * time the compensation must recover (the mean, because the prediction is
 * of the mean: E c is a mean overhead); when it does not, the report says
 * that a per-event cost does not explain the dilation.
 */
#ifndef PERTURB_REPORTS_CALIB_H
#define PERTURB_REPORTS_CALIB_H

#include <stddef.h>
#include <stdint.h>
#include "stats/stats.h"

/* Events per run below which a per-operation calibration workload is
 * taken as not hitting a variant's point (see above). */
#define REPORT_CALIB_MIN_EVENTS 1000.0

/*
 * A published cost per event, for the calibration table's side column
 * (calib.c: report_published[]; docs/report-json.md).  ns is derived from
 * the published throughputs when both are given, 1e9 / hits_per_s - 1e9 /
 * base_per_s; NaN ("not given") when the source gives no exact figure
 * (still cited: the reader knows where to look).
 */
struct report_published {
	const char *tracer, *attach;	/* as the calibration table names them */
	double hits_per_s, base_per_s;	/* the published throughputs; NaN: none */
	const char *figure;		/* the published figure, as printed */
	const char *source;		/* short: "Nakryiko 2020" */
	const char *citation;		/* the exact reference */
};
extern const struct report_published report_published[];
extern const size_t report_n_published;
/* The ns per event of p (NaN when not given). */
double report_published_ns(const struct report_published *p);

/* One row of the calibration table: a traced variant on a calibration
 * workload (workload NULL: no calibration workload hits its point). */
struct report_calib {
	const char *tracer, *attach, *variant;	/* interned */
	const char *workload, *metric;		/* interned; NULL, see above */
	double hits;		/* per value of metric */
	int hits_per_run;	/* hits are per run (wall, hits_metric) */
	double events_mean;	/* the variant's events per run there (E) */
	double run_hits;	/* hits per run (H); NaN when not known */
	double events_per_hit;	/* E / H; NaN when not measured (taken as 1) */
	const char *eph_reason;	/* why events_per_hit is NaN */
	int ok;
	const char *reason;	/* when !ok */
	double ns_per_hit;	/* the dilation per hit */
	double cost_ns;		/* ns per event: ns_per_hit / events per hit */
	struct interval ci;	/* ns; the dilation's interval / hits / events per hit */
	int paired;		/* the dilation's interval came from rounds */
	/* same tracer and attach type: one with a figure, else one that
	 * gives none ("not given"); NULL when no source covers it */
	const struct report_published *published;
};

/* One row of the compensation table: a traced variant on a real workload. */
struct report_comp {
	const char *tracer, *variant, *workload;	/* interned */
	const char *calib_workload;	/* the calibration used; NULL when none */
	int ok;
	const char *reason;	/* when !ok */
	double events_mean;
	double cost_ns;
	double measured_ns, predicted_ns;	/* D and P */
	struct interval measured_ci, predicted_ci;
	double share_pct;
	struct interval share_ci;
	double base_ns, compensated_ns;		/* mean(baseline), T */
	struct interval compensated_ci;
	int fits;		/* compensated_ci has the baseline's mean */
};

#endif
