/*
 * trend.h - is a sample stable over the runs, and is its spread the same
 * as another's?  The tests behind the report's warnings of drift and of
 * unequal variance (reports/warnings.h).
 *
 * Conventions are those of stats.h: inputs are never modified; NaN or
 * infinite values give -EDOM (out as "not computed"); too few values is a
 * fact reported in the result (valid = 0, reason set), not an error.
 */
#ifndef PERTURB_STATS_TREND_H
#define PERTURB_STATS_TREND_H

#include <stddef.h>
#include "stats.h"

/* The fewest values stats_trend() tests. */
#define STATS_TREND_MIN_N 10

/*
 * A monotone trend of x over its order (x[0] measured first): Spearman's
 * rank correlation rho between x[i] and i (Spearman 1904), the ranks of x
 * averaged over ties, rho the Pearson correlation of the two rank vectors;
 * two-sided p from Student's t with n - 2 df,
 *   t = rho sqrt((n - 2) / (1 - rho^2)),
 * which is accurate from n = 10 on (Zar, "Significance testing of the
 * Spearman rank correlation coefficient", JASA 67(339), 1972).
 * statistic = rho (> 0: the values grow over the runs).  Not valid (reason
 * set) with n < STATS_TREND_MIN_N; every value equal gives rho 0, p 1.
 */
int stats_trend(const double *x, size_t n, struct test_result *out);

/*
 * Do k samples have the same spread?  The Brown-Forsythe test (Brown &
 * Forsythe, "Robust tests for the equality of variances", JASA 69(346),
 * 1974): Levene's one-way ANOVA on the absolute deviations from each
 * sample's median, z_ij = |x_ij - median_i|,
 *   F = (N - k) sum_i n_i (zbar_i - zbar)^2 / ((k - 1) sum_ij (z_ij - zbar_i)^2),
 * p = P(F(k - 1, N - k) > F) (GSL).  Robust to non-normal data, as run
 * times are.  x[i] holds n[i] values.  Not valid (reason set) with k < 2
 * or a sample of fewer than 3 values; when every deviation is 0 the
 * spreads are equal: F 0, p 1.
 */
int stats_brown_forsythe(const double *const *x, const size_t *n, size_t k,
			 struct test_result *out);

#endif
