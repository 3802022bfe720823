/* summary.c - moments, quartiles, MAD and the ECDF; see stats.h */
#include "stats.h"

#include <errno.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The type-7 median of the deviations |s[i] - med| of a sorted s, without
 * forming them: they fall along s up to med and rise after it (rounding is
 * monotone), so the two runs out of the split at med, each ascending, merge
 * in order, and the j-th and (j+1)-th smallest (j = floor((n-1)/2)) come
 * from a merge walk of about n/2 steps, with no work array.  The same value
 * as stats_quantile_select() on the deviations, to the bit.
 */
static double mad_sorted(const double *s, size_t n, double med)
{
	double h = (double)(n - 1) * 0.5, d, a = NAN, b = NAN;
	size_t lo = 0, hi = n, j, l, r;

	while (lo < hi) {	/* the first s[i] >= med */
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid] < med)
			lo = mid + 1;
		else
			hi = mid;
	}
	l = r = lo;		/* next from the left run: s[l - 1]; right: s[r] */
	j = (size_t)h;
	d = h - (double)j;
	for (size_t k = 0; k <= j + 1 && k < n; k++) {
		double v;

		if (r >= n || (l > 0 && fabs(s[l - 1] - med) <= fabs(s[r] - med)))
			v = fabs(s[--l] - med);
		else
			v = fabs(s[r++] - med);
		if (k == j)
			a = v;
		else if (k == j + 1)
			b = v;
	}
	if (j == n - 1)
		return a;
	return (1 - d) * a + d * b;
}

/*
 * mean = sum x / n and var = sum (x - mean)^2 / (n - 1) by GSL
 * (gsl_stats_mean, gsl_stats_variance: running-mean recurrences, West,
 * CACM 22(9), 1979) over x in its order; quartiles of type 7 (Hyndman &
 * Fan 1996) from the sorted values; MAD = median |x - median| (Hampel
 * 1974), unscaled, by a merge of the deviations in order (mad_sorted).
 * O(n) given the sorted values.
 */
int stats_summary_sorted(const double *x, const double *sorted, size_t n,
			 struct summary *out)
{
	memset(out, 0, sizeof(*out));
	if (!n || !x || !sorted)
		return -EINVAL;
	if (!stats_sorted_finite(sorted, n))
		return -EDOM;
	out->n = n;
	out->mean = gsl_stats_mean(x, 1, n);
	if (n >= 2) {
		out->var = gsl_stats_variance_m(x, 1, n, out->mean);
		out->sd = sqrt(out->var);
		out->cv = out->mean != 0.0 ? out->sd / out->mean : NAN;
	} else {
		out->var = out->sd = out->cv = NAN;
	}
	out->min = sorted[0];
	out->max = sorted[n - 1];
	out->median = stats_quantile_sorted(sorted, n, 0.5);
	out->q1 = stats_quantile_sorted(sorted, n, 0.25);
	out->q3 = stats_quantile_sorted(sorted, n, 0.75);
	out->iqr = out->q3 - out->q1;
	out->mad = mad_sorted(sorted, n, out->median);
	return 0;
}

/* One sorted copy, then stats_summary_sorted(). */
int stats_summary(const double *x, size_t n, struct summary *out)
{
	double *s;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!n || !x)
		return -EINVAL;
	if (!stats_all_finite(x, n))
		return -EDOM;
	s = stats_sorted_copy(x, n);
	if (!s)
		return -ENOMEM;
	ret = stats_summary_sorted(x, s, n, out);
	free(s);
	return ret;
}

/*
 * The empirical distribution function F_n(t) = #{x_i <= t} / n, as its
 * steps: one per distinct value, at the last copy of each value.
 */
size_t stats_ecdf(const double *sorted, size_t n, double *xs, double *ps)
{
	size_t steps = 0;

	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && sorted[i + 1] == sorted[i])
			continue;
		xs[steps] = sorted[i];
		ps[steps] = (double)(i + 1) / (double)n;
		steps++;
	}
	return steps;
}

size_t stats_ecdf_steps(const double *sorted, size_t n)
{
	size_t steps = 0;

	for (size_t i = 0; i < n; i++)
		steps += i + 1 == n || sorted[i + 1] != sorted[i];
	return steps;
}
