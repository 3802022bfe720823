/* stats: type-7 quantiles against R's quantile(x, p, type = 7). */
#include <criterion/criterion.h>
#include <math.h>

#include "stats.h"

/* R: quantile(1:10, c(0, .5, .8, .99, 1)) -> 1, 5.5, 8.2, 9.91, 10 */
Test(stats, type7_quantiles_match_r)
{
	double x[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	cr_assert_float_eq(stats_quantile_sorted(x, 10, 0.0), 1.0, 1e-12);
	cr_assert_float_eq(stats_quantile_sorted(x, 10, 0.5), 5.5, 1e-12);
	cr_assert_float_eq(stats_quantile_sorted(x, 10, 0.8), 8.2, 1e-12);
	cr_assert_float_eq(stats_quantile_sorted(x, 10, 0.99), 9.91, 1e-12);
	cr_assert_float_eq(stats_quantile_sorted(x, 10, 1.0), 10.0, 1e-12);
}

/* KTAU Table 1 style: R quantile(c(64.47,65.23,65.51,67.07), .5) = 65.37 */
Test(stats, sorted_copy_then_median)
{
	double x[4] = { 67.07, 64.47, 65.51, 65.23 };
	double *s = stats_sorted_copy(x, 4);
	cr_assert_float_eq(s[0], 64.47, 1e-12);
	cr_assert_float_eq(stats_quantile_sorted(s, 4, 0.5), 65.37, 1e-9);
	cr_assert_float_eq(x[0], 67.07, 1e-12, "input left intact");
	free(s);
}

Test(stats, edge_cases)
{
	double one[1] = { 3.5 };
	cr_assert(isnan(stats_quantile_sorted(one, 0, 0.5)));
	cr_assert_float_eq(stats_quantile_sorted(one, 1, 0.99), 3.5, 1e-12);
	cr_assert(isnan(stats_quantile_sorted(one, 1, 1.5)));
	cr_assert(isnan(stats_pct_change(0.0, 1.0)));
	cr_assert_float_eq(stats_pct_change(64.47, 64.85), 100.0 * 0.38 / 64.47, 1e-9);
}
