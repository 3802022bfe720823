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
 *    when both sides were measured in the same blocks (rounds, ABBA boot
 *    pairs) the CIs from the pairs instead (report_dilation.paired),
 *    the verdict (struct report_verdict): the interval of the decisive
 *    dilation read by reports/decide.h's Holm step-down over its family
 *    (n_family: every comparison of the stored run, filters aside), the
 *    rank test (Wilcoxon signed-rank on those pairs, else Mann-Whitney U;
 *    in mw) as information only, never the verdict,
 *    the Hodges-Lehmann ratio with CI, and the two-sample KS test;
 *  - per group, the machine's noise (struct report_noise);
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
#include "calib.h"
#include "decide.h"

#define REPORT_MAX_PERCENTILES 16
#define REPORT_ECDF_MAX 1000
/* Tukey's k and the modified z-score threshold of the outlier labels. */
#define REPORT_TUKEY_K 1.5
#define REPORT_MADZ 3.5
/* The histograms' bins (report_group.n_bins). */
#define REPORT_HIST_MIN_BINS 5
#define REPORT_HIST_MAX_BINS 30
/* Above this many pairs (nb * nv) the Hodges-Lehmann estimate is skipped. */
#define REPORT_HL_MAX_PAIRS 25000000.0
/* The power of the minimum detectable effect (report_series.mde_pct). */
#define REPORT_MDE_POWER 0.8

/* A computed value that may be missing: ok = 0 and reason says why. */
struct report_dilation {
	int ok;
	const char *reason;	/* when !ok */
	struct dilation d;	/* d.ci_abs / d.ci_pct carry has_ci, method, reason */
	/* paired: the design measured both sides in the same blocks (an
	 * interleaved plan's rounds, an ABBA plan's boots), at least
	 * NESTED_MIN_PAIRS of them, and d's intervals come from the pairs
	 * (nested_paired_dilation: the blocks resampled as pairs); pairs is
	 * their number and unpaired_ci_pct the interval the samples give
	 * resampled apart (stats_dilation, or the two-stage bootstrap), kept
	 * to say how much the pairing narrowed it.  The verdicts (significance,
	 * gate) read d, the interval printed. */
	int paired;
	size_t pairs;
	struct interval unpaired_ci_pct;
	/* duet: paired, and the pairs are an order: duet run's (each variant's
	 * run and the baseline's at the same time, docs/experiment.md); the
	 * intervals' method says so (REPORT_DUET_METHOD) */
	int duet;
	/* no_pct: the baseline's interval of the statistic (base_lo, base_hi;
	 * stats_one_signed) holds or touches 0, so a ratio to it is no
	 * percentage: d.pct is NaN, d.ci_pct has no interval (its reason,
	 * DECIDE_NO_PCT, says why) and every format shows the difference in
	 * the metric's unit (d.abs, d.ci_abs) instead; a percentage threshold
	 * on it (a gate) is inconclusive.  A baseline below 0 keeps its
	 * percentage of the baseline's magnitude, 100 (var - base) / |base|,
	 * so that more is + (decide_pct_guard). */
	int no_pct;
	double base_lo, base_hi;
};

#define REPORT_DUET_METHOD "duet: paired percentile bootstrap of the pairs run at the same " \
	"time on two CPUs (Bulej et al., ICPE 2020; Davison & Hinkley 1997, sec. 3.8)"

/*
 * Does a variant differ from the baseline?  One answer, from one interval,
 * decided as `perturb gate` and `perturb compare` decide (reports/decide.h;
 * docs/report-json.md, "Verdicts"): the decisive dilation is the one of
 * the configurations-table statistic (report_stat_name: the median unless
 * --statistic says otherwise), and its hypothesis "the dilation is 0" is
 * one of its Holm family (report_model.n_family: the primary metrics' or
 * the others').  decide_holm() reads it at level 1 - alpha / (m - k) (m
 * the family's size, k the hypotheses decided by the earlier steps): the
 * test obtained by inverting the bootstrap interval, Holm-adjusted (Holm
 * 1979; the duality of intervals and tests: Efron & Tibshirani, "An
 * Introduction to the Bootstrap", 1993, sec. 15.4).  lo, hi and level are
 * the interval of the step that decided it (of the last step when
 * undecided), so that what is printed next to the verdict is what decided
 * it.  A rank test's p never decides.
 */
struct report_verdict {
	int tested;		/* a hypothesis of its family: compared, and the
				   decisive dilation has an interval at the
				   report's level */
	const char *reason;	/* when !tested */
	enum decide_verdict v;	/* DECIDE_ABOVE: more than the baseline (slower
				   for a time), DECIDE_BELOW: less */
	struct interval ci;	/* the deciding interval, in %, with its level */
};

/*
 * The noise of the machine on one (workload, metric): an A/A comparison of
 * the baseline with itself, its runs split in two halves by the parity of
 * their block (an interleaved plan's rounds: even rounds against odd
 * ones) or, with one block, of their place in plan order, the two halves
 * paired block 2k with block 2k + 1 (nested_paired_dilation) when there
 * are NESTED_MIN_PAIRS such pairs, apart otherwise (stats_dilation), and
 * apart by the asymptotic interval above the size limit (more than
 * --max-bootstrap-n runs a half: the sentence says so).  The
 * resolution is the half-width of the 95 % (the report's level) CI of that
 * A/A median dilation, scaled by 1/sqrt(2) from n/2 runs a side to the n
 * of the real comparison (a CI's half-width shrinks like 1/sqrt(n)): the
 * smallest median dilation this machine tells from nothing on this
 * workload.  No resolution (reason) with fewer than 4 baseline runs, or
 * when not asked for (report_opts.skip_noise; reason REPORT_NOISE_SKIPPED).
 */
#define REPORT_NOISE_SKIPPED "not estimated for this view"
/* struct report_verdict's reason in a model built with report_opts.no_verdicts. */
#define REPORT_NOT_JUDGED "not judged in this view"
/* struct report_dilation's reason for a statistic report_opts.want_mean and want_pcts left out. */
#define REPORT_NOT_COMPUTED "not computed in this view"
struct report_noise {
	int ok;
	const char *reason;	/* when !ok */
	double resolution_pct;
	size_t half;		/* runs in the smaller half */
	int paired;		/* the halves were paired (nested_paired_dilation) */
	const char *paired_by;	/* by what: "neighbouring runs" (a plan without
				   blocks: orders sequential, random), "rounds"
				   (one baseline run a block), "boots" */
	const char *method;	/* the interval's; asymptotic above the size
				   limit (--max-bootstrap-n runs a half) */
};

/*
 * Quieter metrics: for one (workload, variant), which metric resolves "how
 * much more does the variant cost than the baseline" most sharply.  The
 * candidates measure the whole run's cost (report_quiet_metric): wall, the
 * CPU time of the run's process tree (cgroup_cpu_s: user + sys of every
 * process of the run's cgroup, docs/experiment.md "Metrics of every run"),
 * and the counters of total work (task-clock, cycles, instructions, their
 * PAPI presets).  Each is read from the half-width of the interval of its
 * decisive dilation (the configurations-table statistic, in %, at the
 * report's level); one entry where wall and another candidate both have
 * one.
 */
struct report_quiet {
	const char *workload, *variant;	/* interned */
	double wall_hw;		/* wall's half-width, in % */
	const char *alt;	/* the narrowest candidate other than wall */
	double alt_hw;		/* its half-width, in % */
	size_t candidates;	/* candidates with an interval, wall included */
};

/*
 * Runs per boot, sized from the study itself as the pilot (a series with
 * has_blocks): Kalibera & Jones ("Rigorous Benchmarking in Reasonable
 * Time", ISMM 2013) after Cochran ("Sampling Techniques", 1977, ch. 10),
 * the runs per boot that give the narrowest interval of the mean for a
 * given machine time, r = ceil(sqrt(c_boot sigma_w^2 / (c_run sigma_b^2)))
 * (nested_optimal_runs(), stats/nested.h), with sigma_w^2, sigma_b^2 the
 * series' variance components and the costs the engine measured (store.h:
 * block_entries, results.cost_s):
 *   c_boot, the fixed cost of one of the variant's blocks: the time its
 *          backend's enter() and leave() took (the boot, its readiness,
 *          the kernel state, the shutdown) and the warm-up runs it starts
 *          with, per block entry;
 *   c_run, the mean cost of one of the series' measured runs: from its
 *          workload's prepare to its result in hand, perturb's own
 *          per-run work included.
 * The ratio sigma_w^2 / sigma_b^2 has no unit, so the metric's unit does
 * not matter.
 */
struct report_runs_per_boot {
	double used;		/* the series' runs per block: n / k */
	unsigned optimal;	/* r; 0: none, reason says why */
	double boot_cost_s, run_cost_s;	/* NaN when not recorded */
	int no_boot_effect;	/* sigma_b^2 = 0: no finite optimum */
	const char *reason;	/* when optimal is 0 (static storage) */
};

/* The rank tests' names (report_series.rank_test; the JSON's test.name). */
#define REPORT_TEST_SIGNED_RANK "wilcoxon-signed-rank"
#define REPORT_TEST_MANN_WHITNEY "mann-whitney-u"

/* One variant's values of one (workload, metric). */
struct report_series {
	const char *variant;
	double *values;		/* measured, successful runs, in plan order */
	int *blocks;		/* the plan block (a boot) of each value */
	int *seqs;		/* the plan seq (run number) of each value */
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

	/* histogram over the group's bins (report_group.n_bins): runs per bin */
	size_t *hist;

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
	struct test_result mw;		/* the rank test (raw p), information only:
					   Wilcoxon signed-rank on block pairs, or
					   Mann-Whitney U */
	const char *rank_test;		/* which, also when it could not run:
					   REPORT_TEST_SIGNED_RANK or
					   REPORT_TEST_MANN_WHITNEY; NULL when not
					   compared */
	struct report_verdict verdict;
	int significant;		/* verdict.v != DECIDE_UNDECIDED */
	struct test_result ks;
	int has_hl;
	const char *hl_reason;		/* when !has_hl */
	struct hl_ratio hl;

	/*
	 * Noise floor (compared series only): the smallest dilation this data
	 * could have detected.  For the mean, the minimum detectable effect of
	 * the two-sample comparison at two-sided level alpha and power
	 * REPORT_MDE_POWER (the standard power formula, stats_power_z(), with
	 * the Welch standard error in place of a pooled one):
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
	struct report_runs_per_boot rpb;	/* when has_blocks */

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

	/*
	 * The warnings' tests (reports/warnings.c, report_warning_tests()),
	 * made on every group of the run, shown or filtered out, so that
	 * their Holm families do not depend on --metric or --workload:
	 * cold_seq the first run's seq when it is a cold start (-1: none),
	 * drift_p and spread_p the Holm-adjusted p of the trend over the runs
	 * and of the Brown-Forsythe test against the baseline (NaN: not
	 * tested), spread_ratio the MAD ratio to the baseline's.
	 */
	int cold_seq;
	double cold_ratio;	/* the cold start's time over the others' median */
	struct test_result drift;
	double drift_p, spread_p, spread_ratio;

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
	/*
	 * The histogram bins every series of the group shares (series.hist):
	 * n_bins of width bin_w from lo (the last one closed at hi), by
	 * Sturges' rule on the largest series, k = ceil(log2 n) + 1 (Sturges,
	 * "The choice of a class interval", JASA 21, 1926), at least
	 * REPORT_HIST_MIN_BINS, at most REPORT_HIST_MAX_BINS; one bin when
	 * lo == hi; 0 when the group has no value.
	 */
	size_t n_bins;
	double bin_w;
	int nested;		/* a series has nested.ok */
	int hidden;		/* private: filtered out (--metric, --workload), kept
				   while report_build runs for the Holm family */
	struct report_noise noise;	/* the machine's A/A resolution */
	int nodes;		/* a series has has_nodes */
	/* the workload's answer: its primary metric (the experiment's
	 * `primary:`, wall when it names none; --config-metric for every
	 * workload), else, when the report has no group of it (--metric),
	 * the workload's first group.  One group a workload; the report's
	 * answer table and its detail by default (doc.h). */
	int primary;
};

/* A stored value, for tidy formats (CSV), in the set of its (metric,
 * workload, variant). */
struct report_row {
	int seq, repetition, warmup;
	int block;		/* the plan block: a boot of a boot: variant */
	const char *unit, *status;	/* interned */
	double value;
};

/*
 * The rows of one (metric, workload, variant), in seq order once
 * report_order_rows() has run.  The rows are kept by set, not in one array
 * with an index in the tables' order: the writer then reads each set from
 * start to end (issue 25: at 10^6 runs, 4·10^6 rows of 80 bytes read
 * through an index, 8 rows apart, made `report --format csv` 2.1 times
 * slower than on half as many runs).
 */
struct report_row_set {
	const char *variant, *workload, *metric;	/* interned */
	int workload_idx, variant_idx;	/* stored order (for the sets' order) */
	int virtual_time;	/* the variant's times are virtual (QEMU -icount) */
	struct report_row *rows;
	size_t n, alloc;
};

/* The tracer's accounting metrics of a run (harness/backends/host.c). */
#define REPORT_TRACE_EVENTS "trace_events"
#define REPORT_TRACE_LOST "trace_lost"
#define REPORT_TRACE_BYTES "trace_bytes"

/*
 * The tracer's accounting of one variant on one workload, over its
 * measured, successful runs: events, lost events and bytes per run
 * (counted system-wide).  The cost per event is calibrated on a
 * calibration workload, not derived here (reports/calib.h: report_model's
 * calib).
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
};

/*
 * The overhead curve (reports/curve.c): the dilation of the instances of
 * one matrix (engine/matrix.h) against one of its parameters, the others
 * fixed.  A variant's matrix gives a curve per workload (its instances
 * against the baseline); a workload's matrix a curve per variant (that
 * variant on each instance of the workload).  Each point is the
 * configurations-table statistic's dilation (report_stat_dilation(), of
 * metric config_metric) with its CI.
 */
struct report_curve_point {
	const char *label;	/* the parameter's value as written */
	double x;		/* on a numeric axis; NaN when the curve is categorical */
	const char *variant, *workload;	/* the series (interned) */
	int ok;			/* a dilation exists */
	const char *reason;	/* when !ok */
	double value;		/* the statistic of the series (NaN when none) */
	double pct;		/* dilation in % */
	struct interval ci;	/* its CI, in % */
	int significant;	/* the series' verdict (struct report_verdict) */
};

struct report_curve {
	int of_variant;		/* the varied instances are variants, else workloads */
	const char *base;	/* the matrix's variant or workload as written */
	const char *param;	/* the x axis */
	const char *fixed;	/* the other parameters, "p=v,q=w", or "" */
	const char *workload;	/* of a variant's curve: the workload; else NULL */
	const char *variant;	/* of a workload's curve: the variant; else NULL */
	const char *metric, *unit;
	int numeric;		/* every value has an x (numbers, sizes in bytes,
				   a list's length: is_list) */
	int is_list;		/* x is the number of items of a list value */
	int log_x;		/* numeric, all x > 0 and max / min > 10 */
	struct report_curve_point *pts;	/* by x when numeric, else as listed */
	size_t n;
};

/* The lines of a failed run's output a report keeps: the last ones. */
#define REPORT_TAIL_LINES 5

/*
 * The failed runs of one variant on one workload, warm-ups included (a
 * run whose status is not ok: failed, crashed, timeout, error; store.h):
 * how many, and the first of them with its reason ("exited with status 2")
 * and the last REPORT_TAIL_LINES lines of its output as stored (the end of
 * its stdout, then of its stderr), so that every format says why it failed.
 * In plan order of the first failure.
 */
struct report_failure {
	const char *workload, *variant;	/* interned */
	size_t n;		/* failed runs */
	int seq, repetition, warmup;	/* the first one: plan seq, 0-based repetition */
	const char *status, *reason;	/* interned; reason may be "" */
	const char *tail;	/* interned; its last lines, "" when it printed nothing */
};

/*
 * What a careful reader should know before trusting the numbers, each
 * saying what to do (reports/warnings.h computes them; the wording is
 * there).  One line each; the model holds no text twice.  workload,
 * metric and variant are NULL when the warning is about the whole run.
 */
enum report_warning_kind {
	RW_MACHINE,	/* the machine was loaded, its frequency changed */
	RW_WARMUP,	/* the first measured run much slower than the rest */
	RW_OUTLIERS,	/* runs far from the median, by seq */
	RW_DRIFT,	/* a trend of the values over the runs */
	RW_SPREAD,	/* a variant's spread far from the baseline's */
	RW_FEW_RUNS,	/* fewer runs than a percentile's CI needs */
	RW_NO_PCT,	/* a baseline whose interval holds 0: no percentage */
	RW_N_KINDS
};
/* "machine", "warm-up", ...: by kind, the group heading. */
extern const char *const report_warning_kinds[RW_N_KINDS];

struct report_warning {
	enum report_warning_kind kind;
	const char *workload, *metric, *variant;	/* interned or NULL */
	const char *text;				/* interned, one line */
	int *seqs;		/* RW_OUTLIERS, RW_WARMUP: the runs (plan seq) */
	size_t n_seqs;
};

/* The statistic of the configurations (LTT) table. */
enum report_statistic {
	REPORT_STAT_MEDIAN,
	REPORT_STAT_MEAN,
	REPORT_STAT_PERCENTILE,		/* report_opts.statistic_p */
};

struct report_opts {
	int64_t run_id;		/* 0 = latest */
	const char *run_status;	/* the run's status as listed (engine/study.h,
				   study_listed_status: "interrupted" for a run
				   stored "running" that nothing runs); NULL:
				   the stored one */
	const char *baseline;	/* NULL = the run's */
	char **metrics;		/* filters; NULL/0 = all */
	size_t n_metrics;
	char **workloads;
	size_t n_workloads;
	int want_rows;		/* fill rows[] (tidy formats) */
	/* the rows and the run's header only: no statistic, failure, curve,
	 * calibration or warning computed (the tidy CSV writes nothing else;
	 * at 10^6 runs they were a fifth of its time, with the series' copy of
	 * every value) */
	int rows_only;
	int include_warmup, include_failed;	/* tidy rows only */
	int color;		/* text: colour allowed */
	/* statistics; zero values mean the defaults */
	double percentiles[REPORT_MAX_PERCENTILES];	/* in [0, 100] */
	size_t n_percentiles;	/* 0 = 0,50,80,99 */
	double confidence;	/* 0 = 0.95 */
	unsigned bootstrap;	/* B; 0 = 2000 */
	size_t max_boot_n;	/* bootstrap up to this n a side; 0 = stats' default */
	int bca;
	enum report_statistic statistic;	/* the answer's and the verdicts' */
	double statistic_p;	/* in [0, 100] for REPORT_STAT_PERCENTILE */
	const char *config_metric;	/* every workload's primary metric (--config-metric);
				   NULL: each workload's primary:, else wall */
	int all_metrics;	/* the detail of every metric, not only the
				   workloads' primary ones (doc.h) */
	const char *db;		/* the database, for the commands a report
				   suggests; NULL: the default one */
	/* 1: a Holm family (report_model.n_family) none of whose groups is
	 * shown (--metric, --workload) is not judged: the shown verdicts are
	 * the same, the hidden ones are not computed (for perturb history,
	 * which reads the shown ones only; n_family of that family is 0) */
	int wanted_families;
	/* 1: no A/A noise estimate (struct report_noise: not ok, reason
	 * REPORT_NOISE_SKIPPED).  Only section 1 of the document and the
	 * JSON show it; its bootstrap was nearly all of the closing screen of
	 * a one-variant study (126 ms at 500 runs; 6 ms without), so the
	 * views that show neither (the closing screen, gate, history,
	 * bisect, perturb run's --target-ci) skip it */
	int skip_noise;
	/* 1: the answer and the warnings only (the closing screen): a group
	 * whose metric is neither its workload's answer (primary:) nor one the
	 * warnings read (report_metric_matters: user, sys, maxrss, cgroup_*,
	 * the tracers' accounting, counters) is kept for its Holm family only,
	 * as a filtered one is, and with wanted_families its family is not
	 * judged when no group of it is left.  The answer and the warnings
	 * are the same; at 2 x 250 runs with cgroup metrics the screen was
	 * 0.6 s of bootstraps of metrics it does not show */
	int answer_only;
	/* 1: no verdict (struct report_verdict: untested, reason
	 * REPORT_NOT_JUDGED; n_family 0), and the groups filtered out (kept
	 * for their Holm families only) are not even read: for the readers
	 * of dilations only,
	 * which judge with intervals of their own or none (gate.c's models,
	 * one a level, judged by the gate's Holm over its rules; bisect's
	 * values; perturb run's --target-ci).  The Holm families were 88 % of
	 * such a model at a high level: every member of them, every metric,
	 * at its Holm level, up to 10^6 replicates each */
	int no_verdicts;
	/* with no_verdicts, when one is set: only the dilations of the
	 * statistics wanted (want_mean; want_pcts, of the report's
	 * percentiles) are computed, the others not (report_dilation.ok 0,
	 * reason REPORT_NOT_COMPUTED): for the gate, each of whose rules
	 * reads one.  A computed one keeps its seed (by the percentile's
	 * place in the list): the same interval as perturb report's */
	int want_mean;
	double want_pcts[REPORT_MAX_PERCENTILES];
	size_t n_want_pcts;
};

struct report_model {
	struct run_header run;
	const char *baseline;
	struct report_group *groups;
	size_t n_groups;
	/* the tidy rows (report_opts.want_rows), by (metric, workload,
	 * variant) stored index; row_set_order: the sets that hold rows, in
	 * the tables' order (report_order_rows()) */
	struct report_row_set *row_sets;
	size_t n_row_sets;
	size_t *row_set_order, n_row_set_order;
	const struct report_opts *opts;
	/* the statistics settings in force (defaults filled in) */
	double percentiles[REPORT_MAX_PERCENTILES];	/* in [0, 100] */
	size_t n_percentiles;
	double confidence, alpha;
	unsigned bootstrap;
	size_t max_boot_n;
	int bca;
	/*
	 * The Holm families of the verdicts (struct report_verdict): every
	 * tested comparison of the stored run, whatever --metric and
	 * --workload show, so that a verdict is a property of the data.
	 * n_family[0]: the primary metrics (report_primary_metric: wall
	 * and the per-operation times), every workload and variant;
	 * n_family[1]: every other metric (user, sys, maxrss, counters, the
	 * tracer's accounting), a family of its own so that secondary metrics
	 * do not dilute the primary question.
	 */
	size_t n_family[2];
	size_t n_comparisons;	/* n_family[0] + n_family[1] */
	const char *config_metric;	/* --config-metric, else wall */
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
	/* overhead curves of the run's matrices (none without a matrix) */
	struct report_curve *curves;
	size_t n_curves;
	/* failed runs, by (workload, variant) (struct report_failure) */
	struct report_failure *failures;
	size_t n_failures;
	/* quieter metrics (struct report_quiet), by workload then variant */
	struct report_quiet *quiet;
	size_t n_quiet, alloc_quiet;
	/* warnings (reports/warnings.h), grouped by kind, in kind order */
	struct report_warning *warnings;
	size_t n_warnings;
	/* calibrated cost per event and overhead compensation (reports/calib.h;
	 * none without a calibration workload): calib by calibration workload
	 * (run order), then tracer (backends/tracers.h order), then variant;
	 * comp by workload, then tracer, then variant */
	struct report_calib *calib;
	size_t n_calib;
	struct report_comp *comp;
	size_t n_comp;
	/* private */
	char **strings;
	size_t n_strings, alloc_strings;
	size_t alloc_groups, alloc_tracer, alloc_virtual, alloc_curves, alloc_failures;
	size_t alloc_warnings;
};

/* Returns 0, or -1 (printed) for a database error or a bad option value
 * (unknown baseline, no such run): *usage_error is set in the latter case. */
/* What the node table (tw_nodes) shows, for the writers' text above it. */
extern const char report_nodes_note[];

int report_build(struct store *st, const struct report_opts *o,
		 struct report_model *m, int *usage_error);
void report_release(struct report_model *m);

/*
 * The model's lookups (reports/model.c), for what builds the model
 * (report.c), what derives from it (calib.c, curve.c, warnings.c) and its
 * writers.  They call nothing of those files.
 *
 * A string owned by the model, the same pointer for equal strings; a group
 * and a series by interned workload / variant names (NULL when absent).
 */
const char *report_intern(struct report_model *m, const char *s);
const struct report_group *report_find_group(const struct report_model *m, const char *workload,
					     const char *metric);
const struct report_series *report_find_series(const struct report_group *g, const char *variant);
/* The baseline series of a group, or NULL. */
const struct report_series *report_baseline(const struct report_group *g);
/* ns in one unit of a time ("s", "ms", "us", "ns"), or 0 when unit is not
 * one. */
double report_ns_per_unit(const char *unit);
/* "p50", "p99.9": the label of a percentile. */
void report_pct_label(char *buf, size_t len, double p);
/* The value of the configurations-table statistic of a series (NaN when
 * absent) and its dilation (NULL when there is none). */
double report_stat_value(const struct report_model *m, const struct report_series *s);
const struct report_dilation *report_stat_dilation(const struct report_model *m,
						   const struct report_series *s);
/* "median", "mean", "p80": the name of that statistic. */
void report_stat_name(const struct report_model *m, char *buf, size_t len);
/*
 * Is the p-th percentile (p in (0, 100)) of n >= 2 runs an interpolation
 * that involves an extreme run (type 7: between the two largest or the two
 * smallest order statistics)?  Then a bootstrap interval of its dilation
 * resamples mostly that one run: the model gives it no interval
 * (pct_dil[].d.ci_pct.reason from report_few_runs()) when the runs are
 * also fewer than its order-statistic CI needs.
 */
int report_pct_extreme(double p, size_t n);

/* Fill m->calib and m->comp (reports/calib.c), after the groups are
 * computed; 0 or -1 (a database error, printed).  report_calib_release()
 * frees them. */
int report_calibration(struct store *st, int64_t run_id, struct report_model *m);
void report_calib_release(struct report_model *m);
/* Fill every group's histogram bins and every series' counts
 * (reports/curve.c). */
void report_histograms(struct report_model *m);
/* Fill m->curves from the run's stored matrix (reports/curve.c); 0 or -1
 * (a database error, printed). */
int report_curves(struct store *st, int64_t run_id, struct report_model *m);
/*
 * Too few runs for a distribution-free CI of the p-th percentile (p in
 * (0, 100)) at the model's confidence: why, e.g. "p99 of 10 runs lies
 * between the two largest: a 95 % CI of it needs >= 299 runs" (interned;
 * reports/warnings.c); NULL when n is enough, or for p0 and p100 (they
 * never have one).
 */
const char *report_few_runs(struct report_model *m, double p, size_t n);

/* Helpers for renderers (formatting only). */

/* Where the tables come from (the published studies whose tables they
 * follow), one sentence for every format's notes. */
extern const char report_papers_note[];
/* What "(virtual time)" means, one sentence for every format. */
extern const char report_virtual_time_note[];
/* Is g's metric a time (unit s, ms, us, ns) or a count of cycles: more is
 * slower? */
int report_time_like(const struct report_group *g);
/* 1 for the metrics of the primary Holm family: wall, ns_per_op,
 * tsc_cycles_per_op, cycles_per_op. */
int report_primary_metric(const char *metric);
/*
 * The noise verdict of a group, one sentence without a full stop: "this
 * machine resolves about X % on W (metric, median dilation; A/A ...);
 * dilations below X % are not distinguishable: V (+a %), ...", or why
 * there is none.  Every format prints it for the primary metrics.
 */
void report_noise_verdict(const struct report_model *m, const struct report_group *g,
			  char *buf, size_t len);
/* The note on the paired intervals: how many dilations came from pairs
 * and how much narrower (median ratio of half-widths paired / unpaired)
 * they are; 0 (buf empty) when none did. */
int report_paired_note(const struct report_model *m, char *buf, size_t len);
/* 1 for the candidates of the quieter-metric line (struct report_quiet):
 * wall, cgroup_cpu_s, task-clock, cycles, instructions, PAPI_TOT_CYC,
 * PAPI_TOT_INS, ref-cycles. */
int report_quiet_metric(const char *metric);
/* One quieter-metric line, without a full stop: "w, v: cgroup_cpu_s
 * resolves this comparison 3.1x more sharply than wall (half-width 0.8 %
 * vs 2.5 %)", or that wall does best. */
void report_quiet_line(const struct report_quiet *q, char *buf, size_t len);
/* The order of metrics in reports: wall, user, sys, maxrss (0-3), then
 * the others (4; by name). */
int report_metric_rank(const char *metric);
/* The note on the verdicts (which interval decides, at which level) and
 * their families, one sentence without a full stop, for every format. */
void report_holm_note(const struct report_model *m, char *buf, size_t len);
/* What the "runs/boot (best)" column of the "Runs nested in blocks" table
 * says, for every format's text above it. */
extern const char report_runs_per_boot_column[];
/*
 * The runs-per-boot sentence of a series with has_blocks, without a full
 * stop: "VARIANT: this study ran 4 runs per boot; from its own variance
 * components and costs (boot 14.2 s, run 3.1 s), 9 runs per boot would
 * give the narrowest interval of the mean for the same machine time
 * (Kalibera & Jones 2013)", or that there is no measurable boot effect,
 * or what is missing.  Every format but JSON prints it under the "Runs
 * nested in blocks" table.
 */
void report_runs_per_boot_note(const struct report_series *s, char *buf, size_t len);
/*
 * The sentence, without a full stop, of a series whose boots disagree: it
 * has blocks, its times are real (not virtual) and the F test of its
 * between-boot variance is below alpha: "VARIANT: its boots disagree
 * (between-boot share 84 %, F p 0.0036)".  Returns 1 with buf filled, 0
 * (buf untouched) when they do not; buf NULL with len 0 asks only that.  Every format but JSON prints these
 * above the "Runs nested in blocks" table, then once
 * report_boots_disagree_advice: what such a share is under TCG (the host's
 * speed of the moment, bench/tcg-boots.sh; docs/experiment.md, `boots:`)
 * and the two ways to compare such variants.  JSON has the F test's p.
 */
int report_boots_disagree_note(const struct report_series *s, double alpha, char *buf,
				size_t len);
extern const char report_boots_disagree_advice[];

/* The distinct interval methods of the report, for footers: fills methods[]
 * (at most max) with the method strings in the order first met; returns how
 * many.  what: 1 = dilations, 2 = percentile CIs, 4 = HL ratios. */
size_t report_methods(const struct report_model *m, unsigned what,
		      const char **methods, size_t max);

struct renderer {
	const char *name;
	int tidy;		/* needs report_model.rows, and nothing else of the
				   model but its run header (report_opts.rows_only) */
	int skip_noise;		/* shows no noise estimate (report_opts.skip_noise) */
	int answer_only;	/* shows the answer and the warnings only
				   (report_opts.answer_only, wanted_families) */
	int (*render)(const struct report_model *m, FILE *out);
};
const struct renderer *renderer_find(const char *name);
/* What o builds for r's eyes only: its rows (tidy), no noise estimate,
 * the answer and the warnings only (and their Holm families). */
void report_opts_for(struct report_opts *o, const struct renderer *r);
/* "text, csv" - for messages. */
const char *renderer_names(void);

extern const struct renderer render_text;
extern const struct renderer render_markdown;
extern const struct renderer render_csv;
extern const struct renderer render_csv_curves;
extern const struct renderer render_json;
extern const struct renderer render_html;
extern const struct renderer render_summary;	/* summary.h */

#endif
