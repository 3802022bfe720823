/*
 * warnings.h - what a careful reader should know before trusting a report,
 * each warning one line that says what to do (struct report_warning in
 * report.h).  The statistics are stats/'s (trend.h, outliers); the rules
 * and the wording are here, once, for every writer and for `perturb run`'s
 * closing summary (summary.h).
 *
 * report_build() calls report_warning_tests() on every group of the run,
 * those a --metric or --workload filter hides included, before it drops
 * them, and report_warnings() at its end; a caller that saw the machine
 * around the study (perturb run) adds report_warn_machine().  Warnings
 * are kept grouped by kind (enum report_warning_kind order) and no text
 * is held twice.
 *
 * The rules (every group of a metric that matters, report_metric_matters):
 *  - RW_WARMUP: a wall series of >= 6 runs whose first measured run is
 *    its slowest, more than 1.2 times the median of the others and an
 *    outlier among them (modified z-score > REPORT_MADZ; with MAD 0, any
 *    value above);
 *  - RW_OUTLIERS: runs with a modified z-score > REPORT_MADZ (Iglewicz &
 *    Hoaglin 1993) in their series, one warning per group naming each
 *    variant's runs by plan seq (at most 5 a variant, then a count);
 *  - RW_DRIFT: Spearman's rho of the values against run order
 *    (stats_trend; without a first run said to be a cold start),
 *    Holm-adjusted across every series tested (of every group of the
 *    run, shown or not: the family does not move with a filter), below
 *    the model's alpha;
 *  - RW_SPREAD: the Brown-Forsythe test of a variant against the baseline
 *    (stats_brown_forsythe), Holm-adjusted across the comparisons (of
 *    every group of the run, as drift's), below alpha, and the MADs at
 *    least 2 times apart;
 *  - RW_FEW_RUNS: one line naming every percentile asked for whose
 *    distribution-free CI needs more runs than the smallest series has
 *    (report_few_runs), and those that lie between extreme runs
 *    (report_pct_extreme);
 *  - RW_NO_PCT: a compared series with a statistic whose baseline
 *    interval holds 0 (report.h, report_dilation.no_pct): one line naming
 *    those statistics and the first interval (metrics that matter only);
 *  - RW_MACHINE: the load average stored with the run (at its start)
 *    above what the machine could spare (machine_overloaded, one CPU
 *    assumed used), and report_warn_machine()'s findings.
 */
#ifndef PERTURB_REPORTS_WARNINGS_H
#define PERTURB_REPORTS_WARNINGS_H

#include "report.h"
#include "lib/machine.h"

/* The drift and spread tests of every group of metrics that matter, and
 * the cold starts they leave out, Holm-adjusted across each family, into
 * the series (report.h: cold_seq, drift, drift_p, spread_p, spread_ratio). */
void report_warning_tests(struct report_model *m);

/* Fills m->warnings from the model's groups (after report_warning_tests())
 * and run header. */
void report_warnings(struct report_model *m);

/*
 * What perturb run saw of the machine: start sampled before the first
 * run, end after the last (either NULL: not sampled); cpus_used the CPUs
 * the study keeps busy (its cpus:, else 1).  Adds RW_MACHINE warnings:
 * a load average too high at the start or the end (machine_overloaded),
 * more runnable tasks than the CPUs the study leaves free, and CPU
 * frequencies more than 10 % apart over the two samples.
 */
void report_warn_machine(struct report_model *m, const struct machine_load *start,
			 const struct machine_load *end, int cpus_used);

/* Is metric shown by the closing summary and checked by the warnings?
 * wall and the workloads' own metrics; not user, sys, maxrss, the tracer
 * accounting, event counters, what the run's cgroup measured (cgroup_*,
 * leftover_procs) nor a bpf: variant's accounting (bpf_*).  Advice is said
 * once per kind of warning, after its first finding. */
int report_metric_matters(const char *metric);

#endif
