/* quantile.c - see stats.h */
#include "stats.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double stats_quantile_sorted(const double *sorted, size_t n, double p)
{
	if (!n || !(p >= 0.0 && p <= 1.0))
		return NAN;
	return gsl_stats_quantile_from_sorted_data(sorted, 1, n, p);
}

double *stats_sorted_copy(const double *x, size_t n)
{
	double *c = malloc((n ? n : 1) * sizeof(*c));
	if (!c)
		return NULL;
	memcpy(c, x, n * sizeof(*c));
	gsl_sort(c, 1, n);
	return c;
}

double stats_pct_change(double a, double b)
{
	if (a == 0.0)
		return NAN;
	return 100.0 * (b - a) / a;
}
