/*
 * stats.h - the statistics library: pure functions over arrays of doubles,
 * no I/O, no globals, GSL underneath.  Every function names its method and a
 * reference where it is defined.
 *
 * Conventions:
 *  - inputs are never modified; "sorted" parameters must be ascending;
 *  - NaN or infinite inputs are rejected: functions returning int give
 *    -EDOM (and leave *out zeroed); functions returning double give NaN;
 *  - too few observations for an answer is not an error of the caller but a
 *    fact to report: results carry a flag (has_ci, ...) and a reason string
 *    (static storage) saying why there is none, e.g. "n < 6: a 95 % median
 *    CI needs at least 6 runs";
 *  - confidence levels are in (0, 1), e.g. 0.95;
 *  - randomness (bootstrap) comes only from the seed passed in: the same
 *    inputs and seed give the same interval on every machine (GSL MT19937).
 */
#ifndef PERTURB_STATS_H
#define PERTURB_STATS_H

#include <stddef.h>
#include <stdint.h>

/* ---- summaries ---- */

/*
 * Quantile of type 7 in Hyndman & Fan's taxonomy ("Sample quantiles in
 * statistical packages", The American Statistician 50(4), 1996): linear
 * interpolation between order statistics, h = (n-1)p, as R's default and
 * GSL's gsl_stats_quantile_from_sorted_data.
 * sorted: ascending, n >= 1; 0 <= p <= 1.  Returns NaN when n == 0.
 */
double stats_quantile_sorted(const double *sorted, size_t n, double p);

/* Sort a copy of x ascending (malloc'd; NULL on allocation failure). */
double *stats_sorted_copy(const double *x, size_t n);

/*
 * Sort x ascending in place: LSD radix sort on the IEEE-754 bits for
 * n >= 2048 (O(n), 2 n extra words), gsl_sort below that or when the extra
 * memory cannot be had.  No NaN (their place is unspecified).
 */
void stats_sort(double *x, size_t n);
/*
 * The order of x (no NaN): idx[k] is the index of the k-th smallest value,
 * ties in index order (a stable argsort; the radix sort above on (key,
 * index) pairs, O(n)).  Returns 0, or -1 without memory.
 */
int stats_order(const double *x, size_t n, size_t *idx);
/*
 * The ranks of x (no NaN), 1-based, ties given their mid-rank (the mean of
 * the ranks they share; -0.0 and 0.0 tie): by the same sort, the ties read
 * from the sorted pairs rather than from x through the order (at 5·10^5
 * values those reads missed the cache).  Returns 0, or -1 without memory.
 */
int stats_ranks(const double *x, size_t n, double *rank);

/* 100 * (b - a) / a: the dilation of b over a in %.  NaN when a == 0. */
double stats_pct_change(double a, double b);

/* 1 when every x[i] is finite (not NaN, not +-inf), else 0; 1 for n == 0. */
int stats_all_finite(const double *x, size_t n);
/* stats_all_finite() of an ascending array, in O(1): an ascending array
 * holds no NaN (NaN has no place in an order), so its ends bound every
 * value.  The functions taking "sorted" check it so, not with a pass over
 * the values (about 140 passes of 10^6 values in one report). */
int stats_sorted_finite(const double *sorted, size_t n);

/*
 * Selection (Hoare's FIND, "Algorithm 65", CACM 4(7), 1961; median-of-3
 * pivot, Hoare partition): reorders a[0..n-1] in place so that a[k] is the
 * (k+1)-th smallest, a[i] <= a[k] for i < k and a[i] >= a[k] for i > k, as
 * C++'s nth_element.  Expected O(n).  n >= 1, k < n, no NaN.
 */
double stats_select(double *a, size_t n, size_t k);

/*
 * The type-7 p-quantile of an unsorted array, by selection: the same value
 * as stats_quantile_sorted() on the sorted array (bit for bit), in expected
 * O(n).  Reorders work[] (see stats_select).  NaN when n == 0 or p is
 * outside [0, 1].
 */
double stats_quantile_select(double *work, size_t n, double p);

/*
 * The type-7 p-quantile of a sample kept as counts: cnt[i] copies of
 * sorted[i] (ascending, n of them), m = the sum of cnt, read by one scan
 * of the counts from the nearer end: a counting selection, O(n) with no
 * data movement, several times faster than stats_quantile_select() on the
 * m values, and the same value to the bit.  How the bootstraps take a
 * resample's quantile: indices drawn into a sorted copy are counted, not
 * gathered.  NaN when n or m is 0 or p is outside [0, 1].
 */
double stats_quantile_counts(const double *sorted, const uint32_t *cnt, size_t n, size_t m,
			     double p);

struct summary {
	size_t n;
	double mean;
	double var;		/* sample variance, denominator n - 1; NaN when n < 2 */
	double sd;		/* sqrt(var) */
	double cv;		/* sd / mean; NaN when mean == 0 or n < 2 */
	double min, max;
	double median;		/* type 7 */
	double q1, q3, iqr;	/* type-7 quartiles, q3 - q1 */
	double mad;		/* median absolute deviation, unscaled (multiply by
				   1.4826 for a normal-consistent sd estimate) */
};
/* n >= 1.  -EDOM on NaN/inf, -EINVAL on n == 0. */
int stats_summary(const double *x, size_t n, struct summary *out);

/*
 * Empirical CDF of a sorted sample as steps: xs[k] the distinct values,
 * ps[k] = #{x <= xs[k]} / n.  xs and ps must hold n entries; returns the
 * number of steps written.
 */
size_t stats_ecdf(const double *sorted, size_t n, double *xs, double *ps);
/* The number of steps stats_ecdf() writes (distinct values), to size its
 * arrays or to decide against it. */
size_t stats_ecdf_steps(const double *sorted, size_t n);

/* ---- confidence intervals ---- */

struct interval {
	int has_ci;		/* 0: lo/hi are NaN, reason says why */
	double lo, hi;
	double level;		/* achieved (order statistics) or nominal level */
	const char *method;	/* e.g. "order statistics (exact binomial)" */
	const char *reason;	/* when !has_ci */
};

/*
 * Distribution-free CI for the p-quantile from order statistics: the
 * narrowest pair (x(l), x(u)) with binomial coverage >= conf (Hahn & Meeker,
 * "Statistical Intervals", 1991, section 5.2; Conover, "Practical
 * Nonparametric Statistics", 3rd ed., section 3.2).  No CI when even
 * (x(1), x(n)) does not reach conf (e.g. n < 6 for a 95 % median CI).
 */
int stats_quantile_ci(const double *sorted, size_t n, double p, double conf,
		      struct interval *out);
/* The same interval, bit for bit, from an unsorted array by selection
 * (stats_select(), expected O(n)): its two order statistics are all it
 * reads.  Reorders work[]. */
int stats_quantile_ci_select(double *work, size_t n, double p, double conf,
			     struct interval *out);

/*
 * The smallest n for which stats_quantile_ci() gives an interval, i.e. for
 * which 1 - p^n - (1-p)^n >= conf (e.g. 6 for the median at 0.95, 59 for
 * p = 0.95 at 0.95); 0 when there is none (p = 0 or 1, or conf not in
 * (0, 1)).  For reports that say "needs at least N runs".
 */
size_t stats_quantile_ci_min_n(double p, double conf);

/* Which statistic a dilation is about. */
enum stat_kind {
	STATK_MEAN,
	STATK_QUANTILE,		/* with parameter p in [0, 1] */
};

struct boot_opts {
	unsigned B;		/* resamples; 0 = default 2000; more when the level
				   asks for them (stats_boot_replicates()) */
	uint64_t seed;		/* the report's seed */
	double conf;		/* e.g. 0.95 */
	int bca;		/* 1 = BCa (Efron 1987) instead of plain percentile */
	size_t max_boot_n;	/* above this sample size (either side) use the
				   asymptotic method; 0 = default 20000 */
	double deff_base, deff_var;	/* the asymptotic method's design effects
				   (stats/nested.h: runs nested in blocks),
				   each side's variance multiplied by its own;
				   0 or 1: independent runs */
};

/*
 * The replicates a percentile interval at level conf is computed from: B
 * (0: 2000), or more, so that at least STATS_BOOT_TAIL of them lie beyond
 * each end ((1 - conf) / 2 of them; Davison & Hinkley 1997, ch. 5: about
 * 1000 for 95 % limits, more for a higher level).  With too few, an end is one of
 * the most extreme replicates and the interval misses its truth at B's
 * rate, not the level's: a paired interval of 30 pairs said 99.99 % and
 * missed 0.06 % of A/A samples with B = 2000, not 0.01 %.
 * 10 replicates a tail: 95 % and 99 % keep 2000 (a Holm level of 99.5 %
 * takes 4000), 99.9 % takes 20000; at most STATS_BOOT_MAX_B (a level
 * above 1 - 2e-5 is as wide as that many give).  struct dilation's B is
 * the number used.
 */
#define STATS_BOOT_TAIL 10
#define STATS_BOOT_MAX_B 1000000u
unsigned stats_boot_replicates(unsigned B, double conf);

/*
 * Is a statistic's interval strictly on one side of 0, so that a ratio to
 * it (a dilation in %) is a percentage?  The interval at level conf of the
 * statistic of one sorted sample: the whole sample [x(1), x(n)] when it
 * lies on one side of 0 (then every statistic of it does); else for the
 * mean the t interval (mean +- t(n-1) s / sqrt(n)), for a quantile
 * 0 < p < 1 its order-statistic CI (stats_quantile_ci), the whole sample
 * when there is none (n < 2, p0, p100, too few runs).  *lo, *hi get it.
 * Returns 1 (above 0), -1 (below 0), or 0: it holds or touches 0, and a
 * ratio to it is no percentage (a loop-subtracted ns_per_op near 0: "+5 ns"
 * over -10 ns is "-50 %").  0 for n == 0.
 */
int stats_one_signed(const double *sorted, size_t n, enum stat_kind kind, double p,
		     double conf, double *lo, double *hi);

/*
 * Dilation of a variant over the baseline for one statistic:
 *   abs = T(var) - T(base), pct = 100 * abs / T(base),
 * with a confidence interval for both.  Method:
 *  - percentile bootstrap, the two samples resampled independently
 *    (Efron & Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 13
 *    and 14 for BCa), B resamples, seeded;
 *  - for samples larger than max_boot_n: asymptotic normal intervals (mean:
 *    Welch standard error; quantiles: the order-statistic CIs of the two
 *    quantiles combined as independent normal errors: se = half-width /
 *    z(1-alpha/2)), pct interval by the delta method; a side's variance
 *    times its design effect (o->deff_base, o->deff_var) when its runs are
 *    nested in blocks, and the method says so.
 *  - no CI when a side has n < 2 (reason set).
 * out->ci.method says which was used.
 *
 * Details (see bootstrap.c): o == NULL means all defaults with conf 0.95;
 * resamples are drawn from a sorted copy, so the interval does not depend
 * on the order of the input; pct replicates are 100 (Tv* - Tb*) / Tb*
 * directly (no CI, reason set, when some Tb* is 0; pct = NaN and no pct CI
 * when T(base) is 0); BCa's acceleration is the two-sample jackknife,
 * O(n) after one sort also for quantiles; BCa falls back to percentile
 * when its bias correction is infinite (method says so); samples without
 * spread give the degenerate interval [abs, abs] (e.g. [0, 0] for two
 * identical constant samples).  nb, nv <= 2^32 - 1.
 * Errors: -EINVAL (n == 0, conf outside (0, 1), p outside [0, 1]),
 * -EDOM (NaN/inf), -ENOMEM; *out is zeroed then.
 */
struct dilation {
	double base, var;	/* T(base), T(var) */
	double abs, pct;
	struct interval ci_abs;
	struct interval ci_pct;	/* in % */
	unsigned B;		/* resamples behind the CIs; 0 when no bootstrap
				   ran (asymptotic method, or no CI) */
};
int stats_dilation(const double *base, size_t nb, const double *var, size_t nv,
		   enum stat_kind kind, double p, const struct boot_opts *o,
		   struct dilation *out);

/*
 * The change of a dilation between two studies, in percentage points:
 * x[0], x[1] the baseline and the variant of study A, x[2], x[3] those of
 * study B; est = 100 (T(x3)/T(x2) - T(x1)/T(x0)), the dilation in B minus
 * the dilation in A, with its percentile bootstrap interval (the four
 * samples resampled independently, B resamples, seeded by o->seed; BCa and
 * max_boot_n do not apply).  No interval (reason) when a side has n < 2 or
 * a (resampled) baseline statistic is 0; est NaN when a baseline statistic
 * is 0.  Errors as stats_dilation: -EINVAL, -EDOM, -ENOMEM.
 */
int stats_dilation_change(const double *const x[4], const size_t n[4], enum stat_kind kind,
			  double p, const struct boot_opts *o, double *est, struct interval *ci);

/* ---- tests ---- */

struct test_result {
	int valid;		/* 0: not computed, reason says why */
	double statistic;	/* U, D, t, ... */
	double p;		/* two-sided p-value */
	double df;		/* degrees of freedom of a t or F test (trend.c); 0 else */
	int exact;		/* p from the exact null distribution */
	const char *method;
	const char *reason;
};

/*
 * Mann-Whitney U (Wilcoxon rank-sum), two-sided: exact null distribution
 * when both n <= 50 and there are no ties (Mann & Whitney 1947), otherwise
 * the normal approximation with tie correction and continuity correction
 * (Hollander & Wolfe, "Nonparametric Statistical Methods", 1999, 4.1).
 * statistic = U of x (number of pairs x > y, ties counting 1/2).
 * Not valid with n < 4 on either side ("a U test at alpha = 0.05 needs
 * n >= 4 a side"): reason set, valid = 0.  When every value of both
 * samples is the same, p = 1 (no evidence either way).  Matches SciPy's
 * mannwhitneyu (method "exact" / "asymptotic", use_continuity=True).
 */
int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		       struct test_result *out);

/*
 * Hodges-Lehmann estimate of the shift between log(y) and log(x) — the
 * median of all pairwise differences log(y_j) - log(x_i) — and its
 * distribution-free CI from the Mann-Whitney distribution (Hollander &
 * Wolfe 1999, 4.2/4.3; Bauer 1972), returned as a ratio exp(shift) with
 * ratio CI.  Values must be > 0 (-EDOM otherwise).  Critical values exact
 * while they are cheap (min(m,n) m n / 2 <= 1e8: 200 + 200 runs and well
 * beyond; ci.level the coverage achieved, >= conf), normal approximation
 * above; no CI (reason set) when too few runs, e.g. 2 + 2.  Any size: the
 * needed order statistics of the nx ny differences are selected without
 * forming them (see rank.c), so 10^6 x 10^6 pairs need no fallback.
 */
struct hl_ratio {
	double ratio;
	struct interval ci;	/* of the ratio */
};
int stats_hodges_lehmann_ratio(const double *x, size_t nx, const double *y,
			       size_t ny, double conf, struct hl_ratio *out);

/* Two-sample Kolmogorov-Smirnov, two-sided: D = sup |F_x - F_y|, p from
 * the exact distribution conditional on the ties (Hodges 1958 lattice
 * paths, D read at the ends of groups of equal values; the upper tail
 * summed directly, so p keeps its relative precision down to 1e-300) when
 * nx ny <= 10000, otherwise the asymptotic Kolmogorov distribution with
 * Stephens' (1970) small-sample correction (an approximation, not a bound,
 * with ties).  Valid for any n >= 1.
 *
 * There is no t test: the mean's question is answered by the interval of
 * its dilation (stats_dilation), and a second verdict on the same question
 * from a t test could only disagree with it. */
int stats_ks2(const double *x, size_t nx, const double *y, size_t ny,
	      struct test_result *out);

/*
 * Wilcoxon signed-rank test of paired differences d[0..n-1] (Wilcoxon
 * 1945), two-sided, as SciPy's wilcoxon (zero_method "wilcox", no
 * continuity correction): zeros dropped, statistic = min(W+, W-); p from
 * the exact null distribution with no ties and at most 50 non-zero
 * differences, else the normal approximation with the tie correction.  Not
 * valid (reason) with 1 to 5 non-zero differences; p = 1 when all are 0.  -EINVAL (n == 0),
 * -EDOM (NaN/inf), -ENOMEM.
 */
int stats_wilcoxon_signed_rank(const double *d, size_t n, struct test_result *out);

/* Holm-Bonferroni step-down adjustment (Holm 1979): adjusted[i] for p[i],
 * monotone, capped at 1.  NaN entries are skipped and stay NaN.  On
 * allocation failure every adjusted[i] is NaN. */
void stats_holm(const double *p, size_t n, double *adjusted);

/*
 * The power formula of a two-sided test at level alpha, in the normal
 * approximation (Chow, Shao & Wang, "Sample Size Calculations in Clinical
 * Research", 2nd ed., 2008, sec. 3.1; Cohen, "Statistical Power Analysis
 * for the Behavioral Sciences", 2nd ed., 1988, ch. 2):
 *   k = z(1 - alpha/2) + z(power),
 * z the standard normal quantile.  An estimate of standard error se
 * detects a true effect of k se with probability power (the minimum
 * detectable effect, MDE = k se); and since se shrinks like 1 / sqrt(n),
 * the runs that would detect an effect d are N = n (k se_n / d)^2, se_n
 * the standard error at n runs.  Returns k; NaN unless alpha and power
 * are in (0, 1).
 */
double stats_power_z(double alpha, double power);

/* ---- outliers: labelled, never dropped ---- */

/* Tukey's fences (Tukey 1977): flag[i] = 1 when x[i] < q1 - k iqr or
 * x[i] > q3 + k iqr (k = 1.5 usual); returns the count.  Both outlier
 * functions return (size_t)-1 with nothing flagged on NaN/inf input or
 * allocation failure. */
size_t stats_outliers_tukey(const double *x, size_t n, double k, unsigned char *flag);
/* Modified z-score (Iglewicz & Hoaglin 1993): 0.6745 (x - median) / MAD,
 * flag when |z| > threshold (3.5 usual); MAD == 0 flags nothing. */
size_t stats_outliers_mad(const double *x, size_t n, double threshold, unsigned char *flag);

/*
 * ---- the same on samples sorted once ----
 * A report computes many statistics of the same samples, and the functions
 * above each sort their own copies of them.  These take the sorted values
 * (e.g. from stats_sorted_copy()) instead, and return what the function
 * of the same name without _sorted / _summary returns on the unsorted
 * sample, to the bit: where a result depends on the order of summation
 * (mean, variance), they take x as well and sum it in its order.  The
 * caller's contract: sorted holds exactly the values of x, ascending.
 */

/* x as measured and its values ascending; sum optional (NULL): the
 * summary of x (stats_summary*()), whose mean and variance are then used
 * rather than computed again (they are computed the same way). */
struct stats_sample {
	const double *x;
	const double *sorted;
	size_t n;
	const struct summary *sum;
};

int stats_summary_sorted(const double *x, const double *sorted, size_t n,
			 struct summary *out);
int stats_dilation_sorted(const struct stats_sample *base, const struct stats_sample *var,
			  enum stat_kind kind, double p, const struct boot_opts *o,
			  struct dilation *out);
int stats_mann_whitney_sorted(const double *xs, size_t nx, const double *ys, size_t ny,
			      struct test_result *out);
int stats_ks2_sorted(const double *xs, size_t nx, const double *ys, size_t ny,
		     struct test_result *out);
int stats_hodges_lehmann_ratio_sorted(const double *xs, size_t nx, const double *ys,
				      size_t ny, double conf, struct hl_ratio *out);
/* The outlier labels from a summary of x (stats_summary() or
 * stats_summary_sorted() of the same x: its quartiles, median and MAD)
 * without sorting or selecting again; (size_t)-1 as above, and when sum is
 * not of n values. */
size_t stats_outliers_tukey_summary(const double *x, size_t n, const struct summary *sum,
				    double k, unsigned char *flag);
size_t stats_outliers_mad_summary(const double *x, size_t n, const struct summary *sum,
				  double threshold, unsigned char *flag);

/* ---- statistic names (names.c) ---- */

/*
 * A statistic of a sample by name, one grammar for the experiment file
 * (gate: statistic:, docs/experiment.md) and the command line (--statistic):
 * "mean", "median" (the same as "p50"), or "pN", the N-th percentile, N a
 * plain decimal in [0, 100] ("p0", "p99", "p99.9"; no sign, no exponent, no
 * spaces).  Case matters.
 */
struct stats_statistic {
	int is_mean;		/* 1: the mean; 0: the percentile p */
	double p;		/* in [0, 100]; 0 for the mean */
};
/* Returns 0 and fills *out, or -1 (nothing printed, *out untouched). */
int stats_statistic_parse(const char *name, struct stats_statistic *out);

/* ---- shared by the two-sample tests (rank.c, tests.c) ---- */

/* out as "not computed": all zero, statistic, p and df NaN. */
void stats_test_result_init(struct test_result *out);
/* The tests' argument checks: -EINVAL when a side is NULL or empty, -EDOM
 * when a value is not finite, else 0. */
int stats_check_two_samples(const double *x, size_t nx, const double *y, size_t ny);
/* test (a *_sorted function above) on sorted copies of x and y; -ENOMEM
 * with out as "not computed" when the copies cannot be had. */
typedef int stats_sorted_test(const double *xs, size_t nx, const double *ys, size_t ny,
			      struct test_result *out);
int stats_test_sorted_copies(stats_sorted_test *test, const double *x, size_t nx,
			     const double *y, size_t ny, struct test_result *out);

#endif
