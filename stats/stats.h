/*
 * stats.h - the statistics library: pure functions over arrays of doubles,
 * no I/O, no globals (GSL underneath).  The full reporter (confidence
 * intervals, rank tests) builds on these.
 */
#ifndef PERTURB_STATS_H
#define PERTURB_STATS_H

#include <stddef.h>

/*
 * Quantile of type 7 in Hyndman & Fan's taxonomy ("Sample quantiles in
 * statistical packages", The American Statistician 50(4), 1996): linear
 * interpolation between order statistics, h = (n-1)p, as R's default and
 * GSL's gsl_stats_quantile_from_sorted_data.
 * sorted: ascending, n >= 1; 0 <= p <= 1.  Returns NaN when n == 0.
 */
double stats_quantile_sorted(const double *sorted, size_t n, double p);

/* Sort a copy of x ascending (malloc'd) - for callers that keep x intact. */
double *stats_sorted_copy(const double *x, size_t n);

/* 100 * (b - a) / a: the dilation of b over a in %.  NaN when a == 0. */
double stats_pct_change(double a, double b);

#endif
