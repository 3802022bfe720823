/*
 * report.h - what a report shows, computed once (report_build), and the
 * renderers that format it.  A renderer formats; it computes nothing: every
 * number, interval, test result, method name and ECDF step it prints is in
 * the model.
 *
 * Adding a report format: write reports/render_NAME.c defining
 * `const struct renderer render_NAME`, add one row to renderers[] in
 * report.c.
 *
 * What the model holds, per group (workload x metric) and series (variant):
 *  - the sample summary (n, mean, sample variance, sd, min, max, ...), the
 *    type-7 percentiles asked for with their order-statistic CIs, the failed
 *    runs, and outliers labelled by Tukey's fences (k = 1.5) and by the
 *    modified z-score (|z| > 3.5) - labelled, never dropped;
 *  - against the baseline (not for the baseline itself): the dilation of the
 *    mean and of each percentile (stats_dilation: abs, %, CI with its method;
 *    when either side's runs are nested in blocks - has_blocks - and both
 *    sides have at most max_boot_n runs, the CIs come from the two-stage
 *    bootstrap, nested_dilation_ci),
 *    the Mann-Whitney U test with its p-value Holm-adjusted across every
 *    comparison of the report and its significance at alpha = 1 - confidence,
 *    the Hodges-Lehmann ratio with CI, and the two-sample KS test;
 *  - the ECDF, exact when it has at most REPORT_ECDF_MAX steps, else sampled
 *    at REPORT_ECDF_MAX + 1 evenly spaced probabilities (type-7 quantiles).
 * And per workload and variant with trace_events values (kernel variants:
 * harness/backends/host.c records the tracer's own accounting per run), the
 * tracer accounting (struct report_tracer): events, lost events and bytes
 * per run, and the cost per traced event.
 * Bootstrap seeds are derived from the run's stored seed and the names of
 * the comparison: the same database gives the same report.
 */
#ifndef PERTURB_REPORT_H
#define PERTURB_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "stats/nested.h"
#include "stats/stats.h"
#include "engine/store.h"

#define REPORT_MAX_PERCENTILES 16
#define REPORT_ECDF_MAX 1000
/* Tukey's k and the modified z-score threshold of the outlier labels. */
#define REPORT_TUKEY_K 1.5
#define REPORT_MADZ 3.5
/* Above this many pairs (nb * nv) the Hodges-Lehmann estimate is skipped. */
#define REPORT_HL_MAX_PAIRS 25000000.0
/* The power of the minimum detectable effect (report_series.mde_pct). */
#define REPORT_MDE_POWER 0.8

/* A computed value that may be missing: ok = 0 and reason says why. */
struct report_dilation {
	int ok;
	const char *reason;	/* when !ok */
	struct dilation d;	/* d.ci_abs / d.ci_pct carry has_ci, method, reason */
};

/* One variant's values of one (workload, metric). */
struct report_series {
	const char *variant;
	double *values;		/* measured, successful runs, in plan order */
	int *blocks;		/* the plan block (a boot) of each value */
	size_t n;
	int virtual_time;	/* a deterministic (QEMU -icount) variant: its
				   times count instructions, 1 ns each */
	const char *label;	/* what tables show: the variant, and
				   " (virtual time)" when virtual_time */
	int failed;		/* measured runs of this variant/workload that failed */
	int is_baseline;
	double *sorted;		/* private: values ascending, while report_build runs */

	/* computed by report_build */
	int has_summary;	/* n >= 1 */
	struct summary sum;
	double pct[REPORT_MAX_PERCENTILES];	/* at model.percentiles; NaN when n == 0 */
	struct interval pct_ci[REPORT_MAX_PERCENTILES];	/* order-statistic CIs */
	size_t outliers_tukey, outliers_mad;

	/* ECDF: xs ascending, ps = F(xs); exact = one step per distinct value */
	double *ecdf_x, *ecdf_p;
	size_t n_ecdf;
	int ecdf_exact;

	/* against the baseline; compared = 0 for the baseline and when either
	 * side has no value (reason says which) */
	int compared;
	const char *no_compare_reason;
	struct report_dilation mean_dil;
	struct report_dilation pct_dil[REPORT_MAX_PERCENTILES];
	struct test_result mw;		/* Mann-Whitney U (raw p) */
	double p_holm;			/* Holm-adjusted; NaN when !mw.valid */
	int significant;		/* mw.valid && p_holm < alpha */
	struct test_result ks;
	int has_hl;
	const char *hl_reason;		/* when !has_hl */
	struct hl_ratio hl;

	/*
	 * Noise floor (compared series only): the smallest dilation this data
	 * could have detected.  For the mean, the minimum detectable effect of
	 * the two-sample comparison at two-sided level alpha and power
	 * REPORT_MDE_POWER (the standard power formula, e.g. Cohen, "Statistical
	 * Power Analysis for the Behavioral Sciences", 2nd ed., 1988, ch. 2,
	 * with the Welch standard error in place of a pooled one):
	 *   MDE = (z(1 - alpha/2) + z(power)) * sqrt(s_b^2/n_b + s_v^2/n_v),
	 *   mde_pct = 100 * MDE / |mean(base)|;
	 * no MDE (mde_reason says why) when a side has n < 2 or the baseline
	 * mean is 0.  For the median it is a resolution, not a power figure:
	 * the half-width of the CI of the p50 % dilation, (hi - lo) / 2
	 * (p50_resolution_pct, NaN when p50 is not among the percentiles or
	 * has no CI).
	 */
	int has_mde;
	const char *mde_reason;	/* when !has_mde */
	double mde_pct;
	double p50_resolution_pct;

	/*
	 * Runs nested in blocks (plan.h: a block is one boot of a boot:
	 * variant, one entry of the variant otherwise): the variance split
	 * into between-block and within-block parts by one-way random-effects
	 * ANOVA, and the CI of the mean from the block means (Kalibera & Jones,
	 * "Rigorous Benchmarking in Reasonable Time", ISMM 2013; stats/nested.h).
	 * has_blocks: the series spans >= 2 blocks and some block has >= 2
	 * runs, so that the components are estimated (nested.ok).
	 */
	int has_blocks;
	struct nested_result nested;

	/*
	 * Runs on several nodes (a study run in shards on a cluster,
	 * docs/distributed.md): nodes[i] is the node (an index into
	 * report_model.node_names) of values[i], -1 when not known.  has_nodes:
	 * the series spans >= 2 nodes and nested3 (boots in nodes,
	 * stats/nested.h) is ok; then the dilation CIs resample nodes, then
	 * boots, then runs (nested3_dilation_ci), and for a compared series
	 * node_dil_pct[j] is the dilation of the mean on node j alone
	 * (100 (mean_v,j - mean_b,j) / mean_b,j; NaN when a side has no run
	 * there), with node_dil_sd their sample sd over the nodes that have
	 * one (NaN below 2) and node_dil_min, node_dil_max their range.
	 */
	int *nodes;
	int has_nodes;
	int node_blocks;	/* one run per block: a node's runs taken as one boot */
	struct nested3_result nested3;
	double *node_dil_pct;	/* n_nodes of the model, or NULL */
	double node_dil_sd, node_dil_min, node_dil_max;

	/* kept for the first renderers' callers */
	double median;		/* type-7 quantile at 0.5; NaN when n == 0 */
	int has_change;		/* baseline exists with n > 0 and median != 0 */
	double median_change_pct;	/* 100 (median - base median) / base median */
};

struct report_group {
	const char *workload, *metric, *unit;
	struct report_series *series;	/* in the run's variant order */
	size_t n_series;
	int micro;		/* a per-operation metric: ns_per_op, tsc_cycles_per_op,
				   cycles_per_op (the Markers table) */
	double lo, hi;		/* range of all values of the group (NaN if none) */
	int nested;		/* a series has nested.ok */
	int nodes;		/* a series has has_nodes */
};

/* A stored value, for tidy formats (CSV). */
struct report_row {
	int seq, repetition, warmup;
	const char *variant, *workload, *metric, *unit, *status;
	double value;
	int workload_idx, variant_idx;	/* stored order (for report.c's sort) */
	int block;		/* the plan block: a boot of a boot: variant */
	int virtual_time;	/* the variant's times are virtual (QEMU -icount) */
};

/* The tracer's accounting metrics of a run (harness/backends/host.c). */
#define REPORT_TRACE_EVENTS "trace_events"
#define REPORT_TRACE_LOST "trace_lost"
#define REPORT_TRACE_BYTES "trace_bytes"

/*
 * The tracer's accounting of one variant on one workload, over its
 * measured, successful runs.  The cost per traced event is the mean wall
 * dilation in absolute units, mean(variant wall) - mean(baseline wall), in
 * ns, divided by the mean events per run; its CI is the dilation's CI of
 * the mean divided by the same mean events: the events count is treated as
 * fixed (its own variation is ignored), an approximation.  Events are
 * counted per run, system-wide, so per-operation metrics get no cost per
 * event.
 */
struct report_tracer {
	const char *workload, *variant;	/* interned */
	int is_baseline;
	size_t n;		/* runs with a trace_events value */
	double events_median, events_mean;	/* NaN when not finite */
	size_t lost_n;		/* runs with a trace_lost value */
	size_t lost_runs;	/* ... of which trace_lost > 0 */
	double lost_median;	/* NaN when lost_n == 0 */
	size_t bytes_n;		/* runs with a trace_bytes value */
	double bytes_median;	/* NaN when bytes_n == 0 */

	int has_cost;
	const char *no_cost_reason;	/* when !has_cost */
	double wall_dilation_ns;	/* mean(variant wall) - mean(baseline wall) */
	double cost_ns;		/* wall_dilation_ns / events_mean */
	struct interval cost_ci;	/* ns: the dilation's CI / events_mean */
};

/* The statistic of the configurations (LTT) table. */
enum report_statistic {
	REPORT_STAT_MEDIAN,
	REPORT_STAT_MEAN,
	REPORT_STAT_PERCENTILE,		/* report_opts.statistic_p */
};

struct report_opts {
	int64_t run_id;		/* 0 = latest */
	const char *baseline;	/* NULL = the run's */
	char **metrics;		/* filters; NULL/0 = all */
	size_t n_metrics;
	char **workloads;
	size_t n_workloads;
	int want_rows;		/* fill rows[] (tidy formats) */
	int include_warmup, include_failed;	/* tidy rows only */
	int color;		/* text: colour allowed */
	/* statistics; zero values mean the defaults */
	double percentiles[REPORT_MAX_PERCENTILES];	/* in [0, 100] */
	size_t n_percentiles;	/* 0 = 0,50,80,99 */
	double confidence;	/* 0 = 0.95 */
	unsigned bootstrap;	/* B; 0 = 2000 */
	size_t max_boot_n;	/* bootstrap up to this n a side; 0 = stats' default */
	int bca;
	enum report_statistic statistic;	/* configurations table */
	double statistic_p;	/* in [0, 100] for REPORT_STAT_PERCENTILE */
	const char *config_metric;	/* configurations table; NULL = wall */
};

struct report_model {
	struct run_header run;
	const char *baseline;
	struct report_group *groups;
	size_t n_groups;
	struct report_row *rows;
	size_t n_rows;
	const struct report_opts *opts;
	/* the statistics settings in force (defaults filled in) */
	double percentiles[REPORT_MAX_PERCENTILES];	/* in [0, 100] */
	size_t n_percentiles;
	double confidence, alpha;
	unsigned bootstrap;
	size_t max_boot_n;
	int bca;
	size_t n_comparisons;	/* valid U tests, the Holm family */
	const char *config_metric;	/* configurations table */
	/* groups with a series whose nested components are ok (blocks with
	 * >= 2 runs): the report shows the between/within-block table */
	size_t n_nested_groups;
	/* the nodes of a study run in shards (store_load_shards()), by index;
	 * none for a study run on one machine */
	const char **node_names;
	size_t n_nodes;
	/* variants whose times are virtual (store_variant_timebases()) */
	const char **virtual_variants;
	size_t n_virtual;
	/* tracer accounting: by workload (report order), then variant (run
	 * order); n_tracer_lossy entries have runs that lost events */
	struct report_tracer *tracer;
	size_t n_tracer, n_tracer_lossy;
	/* private */
	char **strings;
	size_t n_strings, alloc_strings;
	size_t alloc_groups, alloc_rows, alloc_tracer, alloc_virtual;
};

/* Returns 0, or -1 (printed) for a database error or a bad option value
 * (unknown baseline, no such run): *usage_error is set in the latter case. */
/* What the node table (tw_nodes) shows, for the writers' text above it. */
extern const char report_nodes_note[];

int report_build(struct store *st, const struct report_opts *o,
		 struct report_model *m, int *usage_error);
void report_release(struct report_model *m);

/* Helpers for renderers (formatting only). */

/* "p50", "p99.9": the label of a percentile. */
void report_pct_label(char *buf, size_t len, double p);
/* The value of the configurations-table statistic of a series (NaN when
 * absent) and its dilation (NULL when there is none). */
double report_stat_value(const struct report_model *m, const struct report_series *s);
const struct report_dilation *report_stat_dilation(const struct report_model *m,
						   const struct report_series *s);
/* "median", "mean", "p80": the name of that statistic. */
void report_stat_name(const struct report_model *m, char *buf, size_t len);
/* What "(virtual time)" means, one sentence for every format. */
extern const char report_virtual_time_note[];
/* The baseline series of a group, or NULL. */
const struct report_series *report_baseline(const struct report_group *g);

/* The distinct interval methods of the report, for footers: fills methods[]
 * (at most max) with the method strings in the order first met; returns how
 * many.  what: 1 = dilations, 2 = percentile CIs, 4 = HL ratios. */
size_t report_methods(const struct report_model *m, unsigned what,
		      const char **methods, size_t max);

struct renderer {
	const char *name;
	int tidy;		/* needs report_model.rows */
	int (*render)(const struct report_model *m, FILE *out);
};
const struct renderer *renderer_find(const char *name);
/* "text, csv" - for messages. */
const char *renderer_names(void);

extern const struct renderer render_text;
extern const struct renderer render_markdown;
extern const struct renderer render_csv;
extern const struct renderer render_json;
extern const struct renderer render_html;

#endif
