/*
 * nested.h - two-level variance components: runs nested in boots (blocks).
 *
 * A study boots a kernel (or starts a VM, or a process) k times - level 2,
 * the blocks - and runs the workload n_j times in boot j - level 1, the
 * runs.  The runs of one boot share its state (layout, caches, frequency
 * governor, ...), so they are not independent: the variance splits into a
 * within-boot part sigma_w^2 and a between-boot part sigma_b^2 (Kalibera &
 * Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013; Kalibera &
 * Jones, "Quantifying Performance Changes with Effect Size Confidence
 * Intervals", technical report, University of Kent, 2012).
 *
 * Conventions are those of stats.h: inputs are never modified; NaN or
 * infinite values give -EDOM (and *out zeroed); too little data is a fact
 * reported in the result (ok = 0, reason set), not an error.
 */
#ifndef PERTURB_STATS_NESTED_H
#define PERTURB_STATS_NESTED_H

#include <gsl/gsl_rng.h>
#include <stddef.h>

#include "stats.h"

struct nested_result {
	size_t n_groups;	/* k: blocks with >= 1 value */
	size_t n;		/* N: values */
	double grand_mean;	/* mean of all N values (weighted by block size) */
	double mean_of_means;	/* unweighted mean of the k block means; equals
				   grand_mean when the design is balanced */
	/* One-way ANOVA table: MSB = sum_j n_j (m_j - m)^2 / (k - 1),
	 * MSW = sum_j sum_i (x_ji - m_j)^2 / (N - k). */
	double ms_between, ms_within;
	double df_between, df_within;	/* k - 1, N - k */
	/* Unbalanced one-way random-effects ANOVA, method of moments
	 * (Searle, Casella & McCulloch, "Variance Components", 1992, ch. 3,
	 * the 1-way classification): n0 = (N - sum_j n_j^2 / N) / (k - 1),
	 * the block size when balanced. */
	double n0;
	double var_within;	/* sigma_w^2 = MSW (pooled within-block variance) */
	double var_between;	/* sigma_b^2 = max(0, (MSB - MSW) / n0): clamped,
				   the moment estimate can be negative */
	double icc;		/* var_between / (var_between + var_within); 0
				   when both are 0 (no variance at all) */
	/* F = MSB / MSW with (k - 1, N - k) df, p = P(F' > F) from
	 * gsl_cdf_fdist_Q: is there a boot effect?  MSW = 0 < MSB gives
	 * F = +inf, p = 0; MSW = MSB = 0 (all values equal) gives F = p =
	 * NaN: undefined. */
	double f, p_value;
	/* CI of the mean from the k block means, Student t with k - 1 df,
	 * centred on mean_of_means: the honest interval when boots differ,
	 * as the runs of a boot are not independent (KJ 2013; KJ 2012).
	 * Needs k >= 2 (whatever the block sizes); method and reason as in
	 * stats.h. */
	struct interval mean_ci;
	int ok;			/* variance components estimated: k >= 2 and
				   some block has >= 2 values (N > k) */
	const char *reason;	/* when !ok (static storage) */
};

/*
 * The components of x[0..n-1], x[i] measured in block block[i].  Block ids
 * are arbitrary ints in any order; blocks are those ids that occur.
 * conf in (0, 1) for mean_ci, e.g. 0.95.
 *
 * Too little data (ok = 0, reason set), never an error:
 *  - one block: var_within is still MSW (NaN when N = 1), with
 *    df_within = N - 1; the between-block quantities and the CI are NaN;
 *  - k >= 2 blocks of one value each: within variance not estimable:
 *    var_within, var_between, icc, f, p_value NaN; mean_ci still given.
 * Errors: -EINVAL (x or block NULL, n == 0, conf outside (0, 1)), -EDOM
 * (NaN/inf value), -ENOMEM; *out is zeroed then.
 */
int nested_components(const double *x, const int *block, size_t n, double conf,
		      struct nested_result *out);

/*
 * KJ 2013's optimal repetition count for two levels, r_1 =
 * ceil(sqrt(c_2 T_1^2 / (c_1 T_2^2))), as Cochran's optimal two-stage
 * sample ("Sampling Techniques", 3rd ed., 1977, ch. 10): with
 * c_boot the cost of a boot (seconds, without its runs) and c_run the cost
 * of one run, the runs per boot that give the narrowest CI of the mean for
 * a given total time are
 *   r = ceil(sqrt(c_boot * sigma_w^2 / (c_run * sigma_b^2))),
 * at least 1 (sigma_w^2 = 0: one run per boot suffices).  UINT_MAX when r
 * does not fit.
 * Returns 0 - "no finite optimum" - when sigma_b^2 = 0 (no measurable boot
 * effect: boots add nothing, so one boot with as many runs as the budget
 * allows), and 0 as well when there is no answer: r is NULL, !r->ok, or a
 * cost is not finite and > 0.  Tell the two apart with r->ok and
 * r->var_between.
 */
unsigned nested_optimal_runs(const struct nested_result *r, double boot_cost_s,
			     double run_cost_s);

/*
 * The capacity nested_resample() needs: k * max_j n_j (n when balanced);
 * 0 when n == 0 or a pointer is NULL, SIZE_MAX on overflow or allocation
 * failure.
 */
size_t nested_resample_size(const int *block, size_t n);

/*
 * One two-stage (hierarchical) bootstrap resample (Davison & Hinkley,
 * "Bootstrap Methods and their Application", 1997, sec. 3.8, hierarchical
 * data; KJ 2013 resample at every level): draw k blocks with replacement,
 * then for each drawn block j draw n_j of its values with replacement.
 * When balanced (k blocks of m) the resampled grand means average to the
 * grand mean and their variance is (1/k) ((k-1)/k s_b^2 + (m-1)/m^2 MSW),
 * s_b^2 the variance of the block means: the within part enters twice,
 * once through s_b^2 (D&H 3.8 discuss this bias).
 * Blocks are taken in ascending id order and values in input order, so the
 * result depends on the input order only within a block.
 * out[i] is a value of x, out_block[i] (may be NULL) the draw it belongs
 * to, 0..k-1 (a block drawn twice gives two distinct output blocks).
 * *out_n = the sum of the drawn blocks' sizes: n when balanced, at most
 * nested_resample_size(); out and out_block hold cap >= that many.
 * Randomness only from rng (gsl_rng_uniform_int): the same rng state gives
 * the same resample.  Values are copied, not checked (no -EDOM).
 * Sorts the block ids on every call: O(n log n).
 * Errors: -EINVAL (NULL pointer, n == 0, more blocks or a larger block than
 * rng draws from, more than INT_MAX blocks), -ENOSPC (cap too small:
 * checked before drawing, whatever the draw), -ENOMEM; *out_n = 0 then.
 */
int nested_resample(const double *x, const int *block, size_t n, gsl_rng *rng,
		    double *out, int *out_block, size_t cap, size_t *out_n);

/*
 * The CIs of a dilation (stats_dilation()) when runs are nested in blocks
 * (boots): the two-stage percentile bootstrap, each replicate drawing each
 * side's blocks with replacement and then runs within each drawn block
 * (nested_resample(); Davison & Hinkley 1997, sec. 3.8; Kalibera & Jones
 * 2013 resample at every level), T* = mean or type-7 quantile p of the
 * resample, abs* = T(var*) - T(base*), pct* = 100 abs* / T(base*); the
 * interval is the (1 - conf)/2 and (1 + conf)/2 type-7 quantiles of the B
 * replicates.  A side whose values are all in one block is resampled as
 * runs only.  The point estimates in *d (from stats_dilation()) are kept;
 * ci_abs, ci_pct (no interval, reason set, when a resampled baseline
 * statistic is 0 or d->pct is NaN) and B are replaced.  o: B (0 = 2000),
 * conf (0 = 0.95) and seed; bca and max_boot_n do not apply.
 * Errors: -EINVAL, -ENOMEM; *d untouched then.  Values must be finite
 * (the caller's check).
 */
int nested_dilation_ci(const double *bx, const int *bb, size_t nb, const double *vx,
		       const int *vb, size_t nv, enum stat_kind kind, double p,
		       const struct boot_opts *o, struct dilation *d);

/* The fewest blocks on both sides for a paired analysis. */
#define NESTED_MIN_PAIRS 5

/*
 * The dilation from pairs of blocks: when the two samples were measured in
 * the same blocks - an interleaved plan's rounds (one run of each variant
 * a round, close in time), or an ABBA plan's boots (block b of the
 * baseline next to block b of the variant) - the noise of the moment falls
 * on both sides of a block alike, and resampling the blocks as pairs keeps
 * that shared part out of the interval.  The paired (cluster) bootstrap
 * (Davison & Hinkley 1997, sec. 3.8 and 6.3's block resampling; Efron &
 * Tibshirani 1993, sec. 9.3 on paired data): with K the block ids present
 * on both sides, each replicate draws K of them with replacement and takes
 * every run of each drawn block on each side; T* = mean or type-7 quantile
 * p of each side's runs, abs* = T(var*) - T(base*), pct* = 100 abs* /
 * T(base*); the intervals are the (1 - conf)/2 and (1 + conf)/2 type-7
 * quantiles of the B replicates.  The point estimates are those of the
 * runs in the K common blocks (the runs of a block present on one side
 * only are left out: *pairs says how many blocks remain).
 * With fewer than NESTED_MIN_PAIRS common blocks there is no paired
 * analysis: returns 0 with *pairs set and *d untouched.  Otherwise *d is
 * filled (its method names the paired bootstrap).  o: B (0 = 2000), conf
 * (0 = 0.95) and seed.  Errors: -EINVAL, -ENOMEM; *d untouched then.
 */
int nested_paired_dilation(const double *bx, const int *bb, size_t nb, const double *vx,
			   const int *vb, size_t nv, enum stat_kind kind, double p,
			   const struct boot_opts *o, struct dilation *d, size_t *pairs);

/*
 * The block means of the K blocks present on both sides, in ascending
 * block id: mb[k], mv[k] (each holding min(nb, nv) doubles).  Returns K.
 * -ENOMEM on allocation failure.
 */
int nested_paired_means(const double *bx, const int *bb, size_t nb, const double *vx,
			const int *vb, size_t nv, double *mb, double *mv);

/*
 * Three levels: runs nested in boots nested in nodes (machines), as a
 * study run in shards on a cluster gives them (docs/distributed.md).
 * x[i] was measured in boot block[i] on node node[i]; a boot is a
 * (node, block) pair, ids arbitrary ints.
 * Nested ANOVA with random effects, unbalanced, method of moments
 * (Sokal & Rohlf, "Biometry", 3rd ed., 1995, sec. 10.3, Box 10.5; Searle,
 * Casella & McCulloch 1992, ch. 5): with n_kb the runs of boot b of node
 * k, n_k those of node k, N all, B boots, K nodes,
 *   MSW = sum (x - m_kb)^2 / (N - B)
 *   MSB = sum n_kb (m_kb - m_k)^2 / (B - K)
 *   MSN = sum n_k (m_k - m)^2 / (K - 1)
 *   E[MSW] = s_w^2
 *   E[MSB] = s_w^2 + c1 s_b^2,           c1 = (N - sum_k S_k / n_k) / (B - K)
 *   E[MSN] = s_w^2 + c2 s_b^2 + c3 s_n^2, c2 = (sum_k S_k / n_k - S / N) / (K - 1),
 *                                        c3 = (N - sum_k n_k^2 / N) / (K - 1)
 * (S_k = sum_b n_kb^2, S = sum_k S_k), so s_w^2 = MSW, s_b^2 = (MSB -
 * MSW) / c1 and s_n^2 = (MSN - MSW - c2 s_b^2) / c3, each clamped at 0
 * (s_n^2 uses the clamped s_b^2).  The shares are each component over
 * their sum (0 each when the sum is 0).
 * ok = 0 with reason when K < 2 or no boot has two runs (N = B); the
 * components that can be estimated are still given, the others NaN.
 * One boot per node (B = K: a node's runs are one block, as an
 * interleaved study's nodes) gives two levels, ok = 1 with reason set:
 * s_n^2 = (MSN - MSW) / c3 (one-way, Searle et al. ch. 3), var_boot and
 * share_boot NaN, the shares over node and within.
 * Errors as nested_components(): -EINVAL, -EDOM, -ENOMEM (*out zeroed).
 */
struct nested3_result {
	size_t n_nodes, n_boots, n;
	double ms_node, ms_boot, ms_within;
	double df_node, df_boot, df_within;
	double var_node, var_boot, var_within;
	double share_node, share_boot, share_within;	/* fractions, sum 1 */
	int ok;
	const char *reason;
};
int nested3_components(const double *x, const int *node, const int *block, size_t n,
		       struct nested3_result *out);

/*
 * nested_dilation_ci() one level deeper: each replicate draws each side's
 * nodes with replacement, then within each drawn node its boots with
 * replacement, then within each drawn boot its runs with replacement
 * (Davison & Hinkley 1997, sec. 3.8, applied at three stages).  Same
 * statistic, interval, options and errors as nested_dilation_ci().
 */
int nested3_dilation_ci(const double *bx, const int *bn, const int *bb, size_t nb,
			const double *vx, const int *vn, const int *vb, size_t nv,
			enum stat_kind kind, double p, const struct boot_opts *o,
			struct dilation *d);

/*
 * The design effect of runs nested in blocks (Kish, "Survey Sampling",
 * 1965, sec. 5.4; Kish, "Methods for design effects", J. Official
 * Statistics 11(1), 1995): the variance of the mean of N runs in k blocks
 * over that of N independent runs,
 *   deff = N (s_b^2 / k + s_w^2 / N) / (s_b^2 + s_w^2) = 1 + (N/k - 1) icc,
 * exact for the mean of a balanced design, N/k the mean block size
 * otherwise.  Three levels (B boots in K nodes): deff = 1 + (N/B - 1)
 * share_boot + (N/K - 1) share_node.  Where the hierarchical bootstrap
 * is too costly (report: above --max-bootstrap-n runs), the asymptotic
 * standard error of a side's statistic is sqrt(deff) times the one of
 * independent runs (for a quantile, as for the mean: the Woodruff
 * interval under a cluster design, Francisco & Fuller, "Quantile
 * estimation with a complex survey design", Annals of Statistics 19(1),
 * 1991, with the mean's design effect as that of the quantile).  1 when
 * the components are not estimated (!ok) or no larger than the
 * within part.
 */
double nested_design_effect(const struct nested_result *r);
double nested3_design_effect(const struct nested3_result *r);

#endif
