/*
 * test_trend.c - the tests behind the report's drift and spread warnings
 * (stats/trend.h), on samples whose answer was computed independently
 * (the rank formula rho = 1 - 6 sum d^2 / (n (n^2 - 1)) and the regularized
 * incomplete beta function of mpmath for the t and F tails).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "stats/trend.h"

Test(trend, spearman_against_run_order_matches_the_rank_formula)
{
	/* no ties: sum d^2 = 42, rho = 1 - 6 * 42 / (12 * 143) = 0.853147;
	 * t with 10 df: p = 0.000418118 */
	static const double x[] = { 5.1, 4.9, 5.3, 5.0, 5.6, 5.2, 5.8, 5.5, 6.0, 5.7, 6.1, 5.9 };
	struct test_result t;

	cr_assert_eq(stats_trend(x, 12, &t), 0);
	cr_assert(t.valid);
	cr_assert_float_eq(t.statistic, 0.8531468531, 1e-9);
	cr_assert_float_eq(t.p, 0.000418117940, 1e-9);
	cr_assert_float_eq(t.df, 10, 0);
}

Test(trend, a_monotone_sample_is_a_sure_trend_and_a_flat_one_none)
{
	double up[20], down[20], flat[20];
	struct test_result t;

	for (int i = 0; i < 20; i++) {
		up[i] = 1 + i * 0.01;
		down[i] = -up[i];
		flat[i] = 3;
	}
	cr_assert_eq(stats_trend(up, 20, &t), 0);
	cr_assert_float_eq(t.statistic, 1, 1e-12);
	cr_assert_eq(t.p, 0);
	cr_assert_eq(stats_trend(down, 20, &t), 0);
	cr_assert_float_eq(t.statistic, -1, 1e-12);
	cr_assert_eq(stats_trend(flat, 20, &t), 0);
	cr_assert(t.valid);
	cr_assert_eq(t.statistic, 0);
	cr_assert_eq(t.p, 1);
}

Test(trend, ties_take_mid_ranks)
{
	/* ranks of x: 1.5 1.5 3 4 ... 10 against 1..10: rho from the Pearson
	 * correlation of the ranks; by hand: sxy = 82, sxx = 82.0, syy = 82.5 */
	static const double x[] = { 1, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct test_result t;

	cr_assert_eq(stats_trend(x, 10, &t), 0);
	cr_assert_float_eq(t.statistic, 82.0 / sqrt(82.0 * 82.5), 1e-12);
}

Test(trend, too_few_or_bad_values)
{
	static const double x[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	double bad[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, NAN };
	struct test_result t;

	cr_assert_eq(stats_trend(x, 9, &t), 0);
	cr_assert_not(t.valid);
	cr_assert_str_eq(t.reason, "a trend test needs at least 10 runs");
	cr_assert_eq(stats_trend(bad, 10, &t), -EDOM);
	cr_assert_eq(stats_trend(NULL, 10, &t), -EINVAL);
}

Test(trend, brown_forsythe_matches_levene_on_medians)
{
	/* deviations from the medians (10; 11): F = 9.270866 with (1, 14) df,
	 * p = 0.008739343 (the F tail by the incomplete beta function) */
	static const double a[] = { 10, 11, 9, 10, 12, 10, 11, 9 };
	static const double b[] = { 10, 15, 5, 12, 20, 2, 9, 14 };
	const double *x[] = { a, b };
	size_t n[] = { 8, 8 };
	struct test_result t;

	cr_assert_eq(stats_brown_forsythe(x, n, 2, &t), 0);
	cr_assert(t.valid);
	cr_assert_float_eq(t.statistic, 9.270866141732, 1e-9);
	cr_assert_float_eq(t.p, 0.008739343208, 1e-9);
}

Test(trend, brown_forsythe_edges)
{
	static const double a[] = { 1, 1, 1, 1 }, b[] = { 2, 2, 2, 2 }, c[] = { 1, 2 };
	const double *x[] = { a, b }, *y[] = { a, c };
	size_t n[] = { 4, 4 }, m[] = { 4, 2 };
	struct test_result t;

	/* no spread on either side: the same spread */
	cr_assert_eq(stats_brown_forsythe(x, n, 2, &t), 0);
	cr_assert(t.valid);
	cr_assert_eq(t.p, 1);
	cr_assert_eq(stats_brown_forsythe(y, m, 2, &t), 0);
	cr_assert_not(t.valid);
	cr_assert_str_eq(t.reason, "the spread test needs at least 3 runs a side");
	cr_assert_eq(stats_brown_forsythe(x, n, 1, &t), 0);
	cr_assert_not(t.valid);
}
