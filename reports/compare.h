/*
 * compare.h - stored runs side by side (`perturb compare A B [C ...]`, in
 * the spirit of benchstat): the model and its text output.
 *
 * For every (workload, variant, metric) of the runs (measured, successful
 * runs only), one table per metric with its unit in the header:
 *  - each run's median and its spread, the half-width of the order-
 *    statistic CI of the median in % of it (stats_quantile_ci; "±?" when
 *    there are too few runs for one);
 *  - for each run after the first, the change of the median over run A in
 *    %, with the percentile bootstrap CI of that change (stats_dilation,
 *    quantile 0.5, seeded by the names: the same databases print the same
 *    numbers);
 *  - a geomean row: the geometric mean of the medians of the rows every
 *    run has (all > 0), and of the ratios, as a change in %;
 *  - what a perturbation study is about: each variant's dilation against
 *    its own run's baseline (median), in every run, and its change over
 *    run A in percentage points with a CI (stats_dilation_change: the four
 *    samples resampled apart).
 * Verdicts come from the intervals and nothing else, as `perturb gate`'s
 * (reports/decide.h): a change is significant when its interval excludes
 * 0, read at the level of Holm's step-down over every change the output
 * shows (raw and dilation changes, every row and run: one family), so that
 * the interval printed is the one that decided.  A regression over a
 * threshold t (compare_regressions) is a change whose interval lies above
 * t, in its own Holm family of the raw changes.
 *
 * Above the tables: the provenance columns that differ between the runs,
 * whether the experiments differ (their stored sha256), and every
 * variant, workload or metric that only some runs have.
 */
#ifndef PERTURB_REPORTS_COMPARE_H
#define PERTURB_REPORTS_COMPARE_H

#include <stdint.h>
#include <stdio.h>
#include "stats/stats.h"
#include "engine/store.h"
#include "reports/decide.h"

#define COMPARE_MAX_RUNS 8

struct compare_row {
	char *workload, *variant, *metric, *unit;
	double *v[COMPARE_MAX_RUNS];	/* the values of each run */
	size_t n[COMPARE_MAX_RUNS], alloc[COMPARE_MAX_RUNS];
	/* computed by compare_build (where the run has values) */
	double median[COMPARE_MAX_RUNS];
	double spread[COMPARE_MAX_RUNS];	/* CI half-width of the median, %; NaN */
	/* k >= 1 against run 0, when both have values: the change of the
	 * median (pct, CI at the deciding level) and its verdict */
	int has_change[COMPARE_MAX_RUNS];
	double change[COMPARE_MAX_RUNS];
	struct decide_item dec[COMPARE_MAX_RUNS];
	/* the dilation against the run's own baseline (variant rows): pct of
	 * the medians, NaN when there is none */
	double dil[COMPARE_MAX_RUNS];
	int has_dil_change[COMPARE_MAX_RUNS];
	double dil_change[COMPARE_MAX_RUNS];	/* points, run k - run 0 */
	struct decide_item dil_dec[COMPARE_MAX_RUNS];
	const struct compare_row *base[COMPARE_MAX_RUNS];	/* the baseline's row */
	/* sign[k]: stats_one_signed of run k's median (its order-statistic
	 * interval, level confidence): 0 when it holds 0, and then a ratio to
	 * it is no percentage.  A change over A whose sign[0] is 0 is
	 * no_pct: change[k] is NaN, diff[k] the difference of the medians in
	 * the metric's unit is shown instead, it is never decided, and with
	 * --fail-on-regression it fails the comparison (DECIDE_NO_PCT).  A
	 * baseline below 0: the % is of its magnitude. */
	int sign[COMPARE_MAX_RUNS];
	int no_pct;
	double diff[COMPARE_MAX_RUNS];
};

struct compare_run {
	struct store *st;	/* set by the caller */
	int64_t id;
	const char *incomplete;	/* set by the caller: how much of the run's plan
				   is missing (--allow-incomplete), or NULL */
	struct run_header h;
	char *prov[STORE_N_PROVENANCE];
};

struct compare {
	/* set by the caller */
	char **metrics;		/* filter; NULL/0 = all (not freed) */
	size_t n_metrics;
	double confidence;	/* 0 = 0.95 */
	struct compare_run runs[COMPARE_MAX_RUNS];	/* st and id */
	size_t n_runs;		/* 2 .. COMPARE_MAX_RUNS */
	/* filled by compare_build: rows by metric, workload, variant (names) */
	struct compare_row *rows;
	size_t n_rows, alloc_rows;
	size_t n_common;	/* rows every run has */
	size_t n_family;	/* the changes in the Holm family */
	/* private */
	size_t last;
	int side;
};

/* Read every run and compute every row.  Returns 0, or -1 (printed) on a
 * database error. */
int compare_build(struct compare *c);
/* The differences between the runs, the tables and a legend, as text. */
void compare_print(const struct compare *c, FILE *out);
/*
 * The regressions over t (in %): Holm's step-down over the raw changes of
 * every row and run with the hypotheses "change = t"; ABOVE verdicts are
 * regressions.  Fills dec[] (one per row and run k >= 1, index
 * row * n_runs + k, verdict UNDECIDED where there is no change) and
 * returns how many; -1 on allocation failure.
 */
long compare_regressions(const struct compare *c, double t, struct decide_item *dec);
void compare_release(struct compare *c);

#endif
