/*
 * nested: two-level variance components (stats/nested.c).
 *
 * Reference values: NumPy/SciPy are not installed here, so every expected
 * value is derived by hand below, in exact fractions, from a published
 * worked example (Montgomery's looms) or from small integer data chosen so
 * that the arithmetic is exact.  The F tail probabilities use closed forms
 * that are independent of GSL:
 *   - F(2, d2): P(F' > F) = (1 + 2 F / d2)^(-d2 / 2), exactly;
 *   - F(d1, d2), d2 even: P(F' > F) = I_x(d2/2, d1/2), x = d2/(d2 + d1 F),
 *     and for integer a, I_x(a, b) = 1 - (1-x)^b sum_{j<a} (b)_j / j! x^j;
 * and the t quantiles: with 2 df exactly t_p = (2p - 1) / sqrt(2p(1-p));
 * with 3 df the textbook value 3.182446305284263 (t_{0.975,3}).
 * The numbers were checked with a throwaway pure-Python script using
 * fractions.Fraction, and the loom p-value also by numerical integration of
 * the F(3, 12) density's upper tail (1.8779198099318e-4, agreeing to 12
 * digits).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/nested.h"

/* |got - want| <= rel |want| + abs; NaN matches NaN */
static int near(double got, double want, double rel, double abs)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want))
		return got == want;
	return fabs(got - want) <= rel * fabs(want) + abs;
}

#define NEAR(got, want, rel, what)						\
	cr_expect(near((got), (want), (rel), 0), "%s: got %.17g want %.17g", \
		  (what), (double)(got), (double)(want))

#define T975_2 (0.95 / sqrt(2 * 0.975 * 0.025))	/* t_{0.975, 2 df} = 4.30265... */
#define T975_3 3.182446305284263			/* t_{0.975, 3 df} */

/*
 * Montgomery, "Design and Analysis of Experiments" (5th ed. 2001, Example
 * 3-11; the random effects model of ch. 3): fabric strength from 4 looms
 * chosen at random, 4 determinations each.  Montgomery's ANOVA table:
 * SS_looms 89.19, SS_E 22.75, MS 29.73 and 1.90, F0 = 15.68 (P < 0.001),
 * sigma_tau^2 = (29.73 - 1.90)/4 = 6.96, sigma^2 = 1.90.
 * Exactly, with loom means 97.5, 91.5, 95.75, 97 and grand mean 1527/16:
 *   SSB = 4 (2.0625^2 + 3.9375^2 + 0.3125^2 + 1.5625^2) = 1427/16
 *   SSW = 5 + 5 + 2.75 + 10 = 91/4
 *   MSB = 1427/48, MSW = 91/48, F = 1427/91 = 15.681318...
 *   sigma_b^2 = (1427 - 91)/48/4 = 167/24, ICC = 167/24 / (167/24 + 91/48)
 *   = 334/425; n0 = (16 - 64/16)/3 = 4
 *   p = I_x(6, 3/2), x = 12/(12 + 3F) = 0.0001877919809931683
 *   CI: block means' variance 22.296875/3, se^2 = 1427/768, so
 *   95.4375 +- 3.182446305284263 sqrt(1427/768).
 * Looms as "boots": 4 boots of 4 runs.
 */
static const double loom_x[16] = {
	98, 97, 99, 96, 91, 90, 93, 92, 96, 95, 97, 95, 95, 96, 99, 98,
};
static const int loom_b[16] = {
	1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4,
};

static void expect_loom(const struct nested_result *r, double offset, double rel)
{
	cr_expect_eq(r->ok, 1);
	cr_expect_eq(r->n_groups, 4);
	cr_expect_eq(r->n, 16);
	NEAR(r->grand_mean, 1527.0 / 16 + offset, 1e-15, "grand mean");
	NEAR(r->mean_of_means, 1527.0 / 16 + offset, 1e-15, "mean of means");
	NEAR(r->ms_between, 1427.0 / 48, rel, "MSB");
	NEAR(r->ms_within, 91.0 / 48, rel, "MSW");
	cr_expect_eq(r->df_between, 3);
	cr_expect_eq(r->df_within, 12);
	NEAR(r->n0, 4, 1e-15, "n0");
	NEAR(r->var_within, 91.0 / 48, rel, "sigma_w^2");
	NEAR(r->var_between, 167.0 / 24, rel, "sigma_b^2");
	NEAR(r->icc, 334.0 / 425, rel, "ICC");
	NEAR(r->f, 1427.0 / 91, rel, "F");
	NEAR(r->p_value, 0.0001877919809931683, rel > 1e-9 ? rel * 10 : 1e-9, "p");
	cr_expect_eq(r->mean_ci.has_ci, 1);
	NEAR(r->mean_ci.lo, 1527.0 / 16 + offset - T975_3 * sqrt(1427.0 / 768), 1e-12,
	     "CI lo");
	NEAR(r->mean_ci.hi, 1527.0 / 16 + offset + T975_3 * sqrt(1427.0 / 768), 1e-12,
	     "CI hi");
	NEAR(r->mean_ci.level, 0.95, 0, "CI level");
}

Test(nested, balanced_matches_montgomery_looms)
{
	struct nested_result r;

	cr_assert_eq(nested_components(loom_x, loom_b, 16, 0.95, &r), 0);
	expect_loom(&r, 0, 1e-12);
	/* Montgomery's rounded table, to its 2 decimals */
	cr_expect(fabs(r.ms_between - 29.73) < 0.005);
	cr_expect(fabs(r.ms_within - 1.90) < 0.005);
	cr_expect(fabs(r.f - 15.68) < 0.005);
	cr_expect(fabs(r.var_between - 6.96) < 0.005);
	cr_expect(r.p_value < 0.001);
}

/* Timings in ns with a large offset: the shifted sums keep the digits. */
Test(nested, large_offset_keeps_precision)
{
	double x[16];
	struct nested_result r;

	for (int i = 0; i < 16; i++)
		x[i] = loom_x[i] + 1e9;
	cr_assert_eq(nested_components(x, loom_b, 16, 0.95, &r), 0);
	expect_loom(&r, 1e9, 1e-6);
}

/*
 * Unbalanced, by hand.  Blocks A = {1, 2, 3}, B = {4, 6}, C = {6, 7, 8, 11}:
 * n = 3, 2, 4, N = 9, k = 3, means 2, 5, 8, grand mean 48/9 = 16/3.
 *   SSB = 3 (2 - 16/3)^2 + 2 (5 - 16/3)^2 + 4 (8 - 16/3)^2
 *       = (300 + 2 + 256)/9 = 62,                    MSB = 62/2 = 31
 *   SSW = (1 + 0 + 1) + (1 + 1) + (4 + 1 + 0 + 9) = 18, MSW = 18/6 = 3
 *   F = 31/3,  p = (1 + 2 (31/3)/6)^(-3) = (40/9)^(-3) = 729/64000
 *   n0 = (9 - (9 + 4 + 16)/9)/2 = 26/9
 *   sigma_b^2 = (31 - 3)/(26/9) = 126/13,  ICC = 126/(126 + 39) = 42/55
 *   block means 2, 5, 8: mean 5 (not 16/3), sd 3, se sqrt(3):
 *   CI 5 +- t_{0.975,2} sqrt(3) = 5 +- 7.452413135...
 * Given in scrambled order with arbitrary ids (A = 42, B = -7, C = 1000).
 */
static const double unb_x[9] = { 8, 1, 6, 11, 2, 4, 7, 3, 6 };
static const int unb_b[9] = { 1000, 42, -7, 1000, 42, -7, 1000, 42, 1000 };

static void expect_unbalanced(const struct nested_result *r)
{
	cr_expect_eq(r->ok, 1);
	cr_expect_eq(r->n_groups, 3);
	cr_expect_eq(r->n, 9);
	NEAR(r->grand_mean, 16.0 / 3, 1e-15, "grand mean");
	NEAR(r->mean_of_means, 5, 1e-15, "mean of means");
	NEAR(r->ms_between, 31, 1e-13, "MSB");
	NEAR(r->ms_within, 3, 1e-13, "MSW");
	cr_expect_eq(r->df_between, 2);
	cr_expect_eq(r->df_within, 6);
	NEAR(r->n0, 26.0 / 9, 1e-15, "n0");
	NEAR(r->var_within, 3, 1e-13, "sigma_w^2");
	NEAR(r->var_between, 126.0 / 13, 1e-13, "sigma_b^2");
	NEAR(r->icc, 42.0 / 55, 1e-13, "ICC");
	NEAR(r->f, 31.0 / 3, 1e-13, "F");
	NEAR(r->p_value, 729.0 / 64000, 1e-10, "p");
	cr_expect_eq(r->mean_ci.has_ci, 1);
	NEAR(r->mean_ci.lo, 5 - T975_2 * sqrt(3), 1e-10, "CI lo");
	NEAR(r->mean_ci.hi, 5 + T975_2 * sqrt(3), 1e-10, "CI hi");
}

Test(nested, unbalanced_by_hand_any_ids_any_order)
{
	double x2[9];
	int b2[9];
	struct nested_result r;

	cr_assert_eq(nested_components(unb_x, unb_b, 9, 0.95, &r), 0);
	expect_unbalanced(&r);
	/* reversed order, other ids: the same answer */
	for (int i = 0; i < 9; i++) {
		x2[i] = unb_x[8 - i];
		b2[i] = unb_b[8 - i] == 1000 ? INT_MIN : unb_b[8 - i] == 42 ? INT_MAX : 0;
	}
	cr_assert_eq(nested_components(x2, b2, 9, 0.95, &r), 0);
	expect_unbalanced(&r);
}

/*
 * MSB < MSW: the moment estimate of sigma_b^2 is negative and clamped.
 * Blocks {1, 5}, {2, 5}, {1, 6}: means 3, 3.5, 3.5, grand mean 10/3,
 *   SSB = 2 (1/3)^2 + 2 (1/6)^2 + 2 (1/6)^2 = 1/3, MSB = 1/6
 *   SSW = 8 + 4.5 + 12.5 = 25,                   MSW = 25/3
 *   (MSB - MSW)/n0 = (1/6 - 25/3)/2 < 0 -> sigma_b^2 = 0, ICC = 0
 *   F = (1/6)/(25/3) = 1/50, p = (1 + 2 (1/50)/3)^(-3/2) = (76/75)^(-3/2)
 *   = 0.98032822480...
 *   CI: means' sd^2 = (1/9 + 1/36 + 1/36)/2 = 1/12, se^2 = 1/36:
 *   10/3 +- t_{0.975,2}/6.
 */
Test(nested, between_variance_clamped_to_zero)
{
	static const double x[6] = { 1, 5, 2, 5, 1, 6 };
	static const int b[6] = { 0, 0, 1, 1, 2, 2 };
	struct nested_result r;

	cr_assert_eq(nested_components(x, b, 6, 0.95, &r), 0);
	cr_expect_eq(r.ok, 1);
	NEAR(r.ms_between, 1.0 / 6, 1e-13, "MSB");
	NEAR(r.ms_within, 25.0 / 3, 1e-13, "MSW");
	cr_expect_eq(r.var_between, 0, "clamped, not negative: %g", r.var_between);
	cr_expect_eq(r.icc, 0);
	NEAR(r.var_within, 25.0 / 3, 1e-13, "sigma_w^2");
	NEAR(r.f, 0.02, 1e-12, "F");
	NEAR(r.p_value, pow(76.0 / 75, -1.5), 1e-10, "p");
	NEAR(r.mean_ci.lo, 10.0 / 3 - T975_2 / 6, 1e-10, "CI lo");
	NEAR(r.mean_ci.hi, 10.0 / 3 + T975_2 / 6, 1e-10, "CI hi");
	cr_expect_eq(nested_optimal_runs(&r, 60, 1), 0, "no boot effect: no optimum");
}

/* The CI at another level: 0.90 with 3 df, t_{0.95,3} = 2.353363434801823. */
Test(nested, mean_ci_other_level)
{
	struct nested_result r;

	cr_assert_eq(nested_components(loom_x, loom_b, 16, 0.90, &r), 0);
	NEAR(r.mean_ci.hi - r.mean_ci.lo, 2 * 2.353363434801823 * sqrt(1427.0 / 768), 1e-9,
	     "90 % width");
	NEAR(r.mean_ci.level, 0.90, 0, "level");
}

/*
 * KJ 2013's optimal runs per boot, r = ceil(sqrt(c_boot sw2 / (c_run sb2))):
 *   sw2 = 3, sb2 = 0.5, 60 s a boot, 2 s a run: sqrt(180) = 13.42 -> 14;
 *   sw2 = 4, sb2 = 1, 100 s, 1 s: sqrt(400) = 20 exactly -> 20, not 21;
 *   sw2 = 2.7, sb2 = 0.3, 0.1 s, 0.1 s: sqrt(9) = 3 (not 4 from rounding);
 *   looms, 10 s a boot, 1 s a run: sqrt(10 (91/48)/(167/24)) =
 *   sqrt(455/167) = 1.65 -> 2; 120 s a boot:
 *   sqrt(32.695) = 5.72 -> 6.
 */
Test(nested, optimal_runs_worked_examples)
{
	struct nested_result r;

	memset(&r, 0, sizeof(r));
	r.ok = 1;
	r.var_within = 3;
	r.var_between = 0.5;
	cr_expect_eq(nested_optimal_runs(&r, 60, 2), 14);
	cr_expect_eq(nested_optimal_runs(&r, 2, 60), 1, "cheap boots: one run each");
	r.var_within = 4;
	r.var_between = 1;
	cr_expect_eq(nested_optimal_runs(&r, 100, 1), 20);
	/* 0.1 s a boot, 0.1 s a run, sw2 = 2.7, sb2 = 0.3: sqrt(9) = 3, but in
	 * doubles the ratio is 9.000000000000002 and its root 3.0000000000000004:
	 * a plain ceil() would say 4 */
	r.var_within = 2.7;
	r.var_between = 0.3;
	cr_expect_eq(nested_optimal_runs(&r, 0.1, 0.1), 3, "rounding error, not 4");
	r.var_within = 0;
	cr_expect_eq(nested_optimal_runs(&r, 100, 1), 1, "no run noise: one run a boot");
	r.var_within = 1e30;
	r.var_between = 1e-30;
	cr_expect_eq(nested_optimal_runs(&r, 100, 1), UINT_MAX);

	/* no answer */
	r.var_within = 4;
	r.var_between = 1;
	cr_expect_eq(nested_optimal_runs(&r, 0, 1), 0);
	cr_expect_eq(nested_optimal_runs(&r, 100, -1), 0);
	cr_expect_eq(nested_optimal_runs(&r, NAN, 1), 0);
	cr_expect_eq(nested_optimal_runs(&r, INFINITY, 1), 0);
	cr_expect_eq(nested_optimal_runs(NULL, 100, 1), 0);
	r.ok = 0;
	cr_expect_eq(nested_optimal_runs(&r, 100, 1), 0);

	cr_assert_eq(nested_components(loom_x, loom_b, 16, 0.95, &r), 0);
	cr_expect_eq(nested_optimal_runs(&r, 10, 1), 2);
	cr_expect_eq(nested_optimal_runs(&r, 120, 1), 6);
}

Test(nested, errors_and_too_little_data)
{
	static const double bad[4] = { 1, NAN, 2, 3 }, inf[4] = { 1, 2, INFINITY, 3 };
	static const int b4[4] = { 0, 0, 1, 1 };
	struct nested_result r;

	cr_expect_eq(nested_components(bad, b4, 4, 0.95, &r), -EDOM);
	cr_expect_eq(r.n, 0, "zeroed on error");
	cr_expect_eq(r.ok, 0);
	cr_expect_eq(nested_components(inf, b4, 4, 0.95, &r), -EDOM);
	cr_expect_eq(nested_components(loom_x, loom_b, 0, 0.95, &r), -EINVAL);
	cr_expect_eq(nested_components(NULL, loom_b, 16, 0.95, &r), -EINVAL);
	cr_expect_eq(nested_components(loom_x, NULL, 16, 0.95, &r), -EINVAL);
	cr_expect_eq(nested_components(loom_x, loom_b, 16, 1.0, &r), -EINVAL);
	cr_expect_eq(nested_components(loom_x, loom_b, 16, 0.0, &r), -EINVAL);
	cr_expect_eq(nested_components(loom_x, loom_b, 16, NAN, &r), -EINVAL);
	cr_expect_eq(nested_components(loom_x, loom_b, 16, 0.95, NULL), -EINVAL);

	/* one block: within variance = the sample variance of 98 97 99 96 = 5/3 */
	cr_assert_eq(nested_components(loom_x, loom_b, 4, 0.95, &r), 0);
	cr_expect_eq(r.ok, 0);
	cr_expect_not_null(r.reason);
	cr_expect_eq(r.n_groups, 1);
	NEAR(r.var_within, 5.0 / 3, 1e-13, "one block: sigma_w^2");
	cr_expect_eq(r.df_within, 3);
	NEAR(r.grand_mean, 97.5, 1e-15, "one block: mean");
	cr_expect(isnan(r.var_between) && isnan(r.icc) && isnan(r.f) && isnan(r.p_value));
	cr_expect_eq(r.mean_ci.has_ci, 0);
	cr_expect_not_null(r.mean_ci.reason);
	cr_expect(isnan(r.mean_ci.lo) && isnan(r.mean_ci.hi));

	/* a single value */
	cr_assert_eq(nested_components(loom_x, loom_b, 1, 0.95, &r), 0);
	cr_expect_eq(r.ok, 0);
	cr_expect(isnan(r.var_within));
	NEAR(r.grand_mean, 98, 0, "one value");

	/* one value per block: components not separable, the CI still given:
	 * 98, 91 (ids 1, 2): mean 94.5, se = 3.5, t_{0.975,1} = 12.706204736174698 */
	{
		static const double x[2] = { 98, 91 };
		static const int b[2] = { 1, 2 };

		cr_assert_eq(nested_components(x, b, 2, 0.95, &r), 0);
		cr_expect_eq(r.ok, 0);
		cr_expect_not_null(r.reason);
		cr_expect(isnan(r.var_within) && isnan(r.var_between) && isnan(r.p_value));
		NEAR(r.ms_between, 24.5, 1e-14, "MSB");
		cr_expect_eq(r.mean_ci.has_ci, 1);
		NEAR(r.mean_ci.lo, 94.5 - 12.706204736174698 * 3.5, 1e-9, "CI lo");
		NEAR(r.mean_ci.hi, 94.5 + 12.706204736174698 * 3.5, 1e-9, "CI hi");
	}
}

/* No variance at all: zeros, F = 0/0 undefined -> NaN, no division by 0. */
Test(nested, all_equal_values)
{
	double x[12];
	int b[12];
	struct nested_result r;

	for (int i = 0; i < 12; i++) {
		x[i] = 0.1;	/* not exact in binary: still exactly 0 variance */
		b[i] = i % 3;
	}
	cr_assert_eq(nested_components(x, b, 12, 0.95, &r), 0);
	cr_expect_eq(r.ok, 1);
	cr_expect_eq(r.grand_mean, 0.1);
	cr_expect_eq(r.ms_between, 0);
	cr_expect_eq(r.ms_within, 0);
	cr_expect_eq(r.var_within, 0);
	cr_expect_eq(r.var_between, 0);
	cr_expect_eq(r.icc, 0);
	cr_expect(isnan(r.f) && isnan(r.p_value), "F = 0/0: NaN");
	cr_expect_eq(r.mean_ci.lo, 0.1);
	cr_expect_eq(r.mean_ci.hi, 0.1);
	cr_expect_eq(nested_optimal_runs(&r, 60, 1), 0);
}

/* Constant within each boot, boots differ: all variance is between boots. */
Test(nested, constant_blocks_that_differ)
{
	static const double x[6] = { 5, 5, 7, 7, 9, 9 };
	static const int b[6] = { 3, 3, 2, 2, 1, 1 };
	struct nested_result r;

	cr_assert_eq(nested_components(x, b, 6, 0.95, &r), 0);
	cr_expect_eq(r.ok, 1);
	cr_expect_eq(r.var_within, 0);
	/* SSB = 2 (4 + 0 + 4) = 16, MSB = 8, sigma_b^2 = 8/2 = 4 */
	NEAR(r.var_between, 4, 1e-14, "sigma_b^2");
	cr_expect_eq(r.icc, 1);
	cr_expect(isinf(r.f) && r.f > 0);
	cr_expect_eq(r.p_value, 0);
	cr_expect_eq(nested_optimal_runs(&r, 60, 1), 1);
}

/* ---- the two-stage bootstrap resampler ---- */

static gsl_rng *mt(unsigned long seed)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);

	cr_assert_not_null(rng);
	gsl_rng_set(rng, seed);
	return rng;
}

/* the block (id) of the input value v; values of x all distinct */
static int source_block(const double *x, const int *b, size_t n, double v)
{
	for (size_t i = 0; i < n; i++)
		if (x[i] == v)
			return b[i];
	return INT_MIN;
}

/* Distinct values: 5 boots of 6 runs, value = 100 boot + run + 0.5 */
#define RB_K 5
#define RB_M 6
#define RB_N (RB_K * RB_M)

static void distinct_data(double *x, int *b)
{
	for (int i = 0; i < RB_N; i++) {
		b[i] = 10 * (i % RB_K) - 7;		/* interleaved boots */
		x[i] = 100.0 * (i % RB_K) + i / RB_K + 0.5;
	}
}

Test(nested, resample_shape_and_membership)
{
	double x[RB_N], out[RB_N];
	int b[RB_N], ob[RB_N];
	size_t on, dup_blocks = 0;
	gsl_rng *rng = mt(1);

	distinct_data(x, b);
	cr_assert_eq(nested_resample_size(b, RB_N), RB_N, "balanced: k * m = n");
	for (int rep = 0; rep < 200; rep++) {
		cr_assert_eq(nested_resample(x, b, RB_N, rng, out, ob, RB_N, &on), 0);
		cr_assert_eq(on, RB_N, "same length as the input");
		for (size_t i = 0; i < on; i++) {
			int src = source_block(x, b, RB_N, out[i]);

			cr_assert_neq(src, INT_MIN, "out[%zu] = %g is not an input value",
				      i, out[i]);
			cr_assert(ob[i] >= 0 && ob[i] < RB_K);
			/* the draws come in runs of m: draw d is out[d m ..] */
			cr_assert_eq(ob[i], (int)(i / RB_M));
			/* a drawn block holds values of one input block */
			cr_assert_eq(src, source_block(x, b, RB_N, out[ob[i] * RB_M]),
				     "drawn block %d mixes input blocks", ob[i]);
		}
		/* stage 2 draws with replacement: some drawn block repeats a value */
		for (int d = 0; d < RB_K; d++)
			for (int i = 0; i < RB_M; i++)
				for (int j = i + 1; j < RB_M; j++)
					if (out[d * RB_M + i] == out[d * RB_M + j]) {
						dup_blocks++;
						i = j = RB_M;
					}
	}
	/* P(6 draws from 6 all distinct) = 6!/6^6 = 1.5 %: nearly every
	 * drawn block has a repeat */
	cr_expect_gt(dup_blocks, 900, "within-block resampling: %zu of 1000 blocks "
		     "have a repeat", dup_blocks);
	gsl_rng_free(rng);
}

Test(nested, resample_deterministic_for_seed)
{
	double x[RB_N], o1[RB_N], o2[RB_N], o3[RB_N], xp[RB_N];
	int b[RB_N], b1[RB_N], b2[RB_N], b3[RB_N], bp[RB_N];
	size_t n1, n2, n3, np = 0;
	gsl_rng *r1 = mt(20240601), *r2 = mt(20240601), *r3 = mt(20240602);

	distinct_data(x, b);
	for (int rep = 0; rep < 5; rep++) {
		cr_assert_eq(nested_resample(x, b, RB_N, r1, o1, b1, RB_N, &n1), 0);
		cr_assert_eq(nested_resample(x, b, RB_N, r2, o2, b2, RB_N, &n2), 0);
		cr_assert_eq(n1, n2);
		cr_assert_eq(memcmp(o1, o2, sizeof(o1)), 0, "same seed, same resample");
		cr_assert_eq(memcmp(b1, b2, sizeof(b1)), 0);
	}
	cr_assert_eq(nested_resample(x, b, RB_N, r3, o3, b3, RB_N, &n3), 0);
	cr_expect_neq(memcmp(o1, o3, sizeof(o1)), 0, "another seed, another resample");

	/* the order of the blocks in the input does not matter, only the
	 * order within a block: the same data listed boot by boot */
	for (int k = 0; k < RB_K; k++)
		for (int i = 0; i < RB_N; i++)
			if (i % RB_K == RB_K - 1 - k) {
				xp[np] = x[i];
				bp[np++] = b[i];
			}
	gsl_rng_set(r1, 7);
	gsl_rng_set(r2, 7);
	cr_assert_eq(nested_resample(x, b, RB_N, r1, o1, NULL, RB_N, &n1), 0);
	cr_assert_eq(nested_resample(xp, bp, RB_N, r2, o2, NULL, RB_N, &n2), 0);
	cr_expect_eq(memcmp(o1, o2, sizeof(o1)), 0, "block order in the input is irrelevant");
	gsl_rng_free(r1);
	gsl_rng_free(r2);
	gsl_rng_free(r3);
}

/*
 * Over B resamples of the looms (balanced, k = 4, m = 4) the resampled
 * grand means average to the grand mean 95.4375, and their variance is
 * that of the two-stage bootstrap (Davison & Hinkley 1997, 3.8):
 *   var* = (1/k) [ (k-1)/k s_b^2 + (m-1)/m^2 MSW ]
 * with s_b^2 = 22.296875/3 the variance of the block means: = 1.482421875
 * = (5.57421875 + 0.35546875)/4.  Without stage 1 it would be 0.089, without
 * stage 2 1.394 (6 % less): a 3 % tolerance tells them apart
 * (B = 20000: the relative sd of the variance is about 1 %).
 */
Test(nested, resample_means_converge)
{
	enum { B = 20000 };
	double out[16], s = 0, ss = 0, want_var;
	size_t on;
	gsl_rng *rng = mt(42);

	want_var = (0.75 * 22.296875 / 3 + 3.0 / 16 * 91.0 / 48) / 4;
	NEAR(want_var, 1.482421875, 1e-15, "var* by hand");
	for (int rep = 0; rep < B; rep++) {
		double m = 0;

		cr_assert_eq(nested_resample(loom_x, loom_b, 16, rng, out, NULL, 16, &on), 0);
		cr_assert_eq(on, 16);
		for (int i = 0; i < 16; i++)
			m += out[i];
		m /= 16;
		s += m;
		ss += m * m;
	}
	s /= B;
	ss = ss / B - s * s;
	cr_expect(fabs(s - 95.4375) < 5 * sqrt(want_var / B),
		  "mean of resampled means %.6f vs 95.4375 (5 se = %.4f)", s,
		  5 * sqrt(want_var / B));
	cr_expect(fabs(ss / want_var - 1) < 0.03, "variance %.5f vs %.5f", ss, want_var);
	gsl_rng_free(rng);
}

/* Unbalanced: blocks keep their sizes, so the length varies, <= k max n_j. */
Test(nested, resample_unbalanced_and_errors)
{
	double out[12];
	int ob[12];
	size_t on, cap = nested_resample_size(unb_b, 9), lens[13] = { 0 };
	gsl_rng *rng = mt(3);

	cr_assert_eq(cap, 12, "3 blocks x 4 values at most");
	for (int rep = 0; rep < 500; rep++) {
		size_t start = 0;

		cr_assert_eq(nested_resample(unb_x, unb_b, 9, rng, out, ob, cap, &on), 0);
		cr_assert(on >= 6 && on <= 12);
		lens[on]++;
		/* each drawn block has its source's size: 3 (id 42), 2 (-7), 4 (1000) */
		for (size_t i = 1; i <= on; i++) {
			if (i < on && ob[i] == ob[start])
				continue;
			{
				size_t len = i - start;
				int src = source_block(unb_x, unb_b, 9, out[start]);

				/* 6 is in both -7 and 1000: check by size only then */
				if (out[start] != 6)
					cr_assert_eq(len, src == 42 ? 3u : src == -7 ? 2u : 4u);
				cr_assert(len == 2 || len == 3 || len == 4);
			}
			start = i;
		}
	}
	cr_expect_gt(lens[9], 0);
	cr_expect_neq(lens[9], 500, "the length varies with the draw");

	cr_expect_eq(nested_resample(unb_x, unb_b, 9, rng, out, ob, 11, &on), -ENOSPC);
	cr_expect_eq(on, 0);
	cr_expect_eq(nested_resample(unb_x, unb_b, 0, rng, out, ob, cap, &on), -EINVAL);
	cr_expect_eq(nested_resample(unb_x, unb_b, 9, NULL, out, ob, cap, &on), -EINVAL);
	cr_expect_eq(nested_resample(unb_x, unb_b, 9, rng, NULL, ob, cap, &on), -EINVAL);
	cr_expect_eq(nested_resample(unb_x, unb_b, 9, rng, out, ob, cap, NULL), -EINVAL);
	cr_expect_eq(nested_resample_size(NULL, 9), 0);
	cr_expect_eq(nested_resample_size(unb_b, 0), 0);
	gsl_rng_free(rng);
}

/*
 * The two-stage bootstrap of a dilation (nested_dilation_ci).  The looms
 * have a strong loom (boot) effect (share 334/425): their mean, compared
 * with itself shifted by +2 %, has a two-stage interval around the +2 %
 * that is wider than the independent-runs bootstrap's (stats_dilation)
 * by about the square root of the design effect,
 * which ignores that the runs of a loom hang together.  With one block a
 * side, two-stage is the plain bootstrap of runs: the same kind of width.
 */
Test(nested, dilation_ci_is_wider_when_boots_differ)
{
	double shifted[16];
	int one[16];
	struct boot_opts o = { .B = 4000, .seed = 7, .conf = 0.95 };
	struct dilation flat, two, again;

	for (size_t i = 0; i < 16; i++) {
		shifted[i] = loom_x[i] * 1.02;
		one[i] = 0;
	}
	cr_assert_eq(stats_dilation(loom_x, 16, shifted, 16, STATK_MEAN, 0, &o, &flat), 0);
	two = flat;
	cr_assert_eq(nested_dilation_ci(loom_x, loom_b, 16, shifted, loom_b, 16, STATK_MEAN, 0,
					&o, &two), 0);
	cr_assert_float_eq(two.pct, 2.0, 1e-9, "the point estimate is kept");
	cr_assert(two.ci_pct.has_ci && two.ci_abs.has_ci);
	cr_assert(two.ci_pct.lo < 2.0 && two.ci_pct.hi > 2.0, "[%g, %g]", two.ci_pct.lo,
		  two.ci_pct.hi);
	/* Kish's design effect (Survey Sampling, 1965): the variance of a mean
	 * of m runs in each of k clusters is 1 + (m - 1) ICC times that of
	 * independent runs; here sqrt(1 + 3 * 334/425) = 1.83 in width */
	double ratio = (two.ci_pct.hi - two.ci_pct.lo) / (flat.ci_pct.hi - flat.ci_pct.lo);
	cr_assert(ratio > 1.5 && ratio < 2.3, "two-stage [%g, %g] vs runs [%g, %g]: %g",
		  two.ci_pct.lo, two.ci_pct.hi, flat.ci_pct.lo, flat.ci_pct.hi, ratio);
	cr_assert(strstr(two.ci_pct.method, "two-stage"));
	cr_assert_eq(two.B, 4000);

	/* seeded: the same interval again */
	again = flat;
	cr_assert_eq(nested_dilation_ci(loom_x, loom_b, 16, shifted, loom_b, 16, STATK_MEAN, 0,
					&o, &again), 0);
	cr_assert(again.ci_pct.lo == two.ci_pct.lo && again.ci_pct.hi == two.ci_pct.hi);

	/* one block a side: resampling runs only, about as wide as the plain one */
	again = flat;
	cr_assert_eq(nested_dilation_ci(loom_x, one, 16, shifted, one, 16, STATK_MEAN, 0, &o,
					&again), 0);
	double w1 = again.ci_pct.hi - again.ci_pct.lo, w0 = flat.ci_pct.hi - flat.ci_pct.lo;
	cr_assert(w1 > 0.8 * w0 && w1 < 1.25 * w0, "one block: %g vs %g", w1, w0);

	/* the median too, and a baseline of zeros has no % interval */
	again = flat;
	cr_assert_eq(nested_dilation_ci(loom_x, loom_b, 16, shifted, loom_b, 16, STATK_QUANTILE,
					0.5, &o, &again), 0);
	cr_assert(again.ci_abs.has_ci && again.ci_abs.lo <= again.ci_abs.hi);
	double zeros[4] = { 0, 0, 0, 0 }, ones[4] = { 1, 1, 1, 1 };
	int b4[4] = { 0, 0, 1, 1 };
	struct dilation z = { .pct = NAN };
	cr_assert_eq(nested_dilation_ci(zeros, b4, 4, ones, b4, 4, STATK_MEAN, 0, &o, &z), 0);
	cr_assert(z.ci_abs.has_ci && z.ci_abs.lo == 1 && z.ci_abs.hi == 1);
	cr_assert(!z.ci_pct.has_ci && z.ci_pct.reason);
	cr_assert_eq(nested_dilation_ci(NULL, b4, 4, ones, b4, 4, STATK_MEAN, 0, &o, &z), -EINVAL);
}
