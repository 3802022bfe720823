/* outliers.c - label outliers, never drop them; see stats.h */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * What every entry point does first: clear flag, then 1 when x can be
 * tested (n > 0, all finite).  *ret is what to return when it cannot, or
 * when the caller's own checks fail: 0 for no values, else (size_t)-1.
 */
static int testable(const double *x, size_t n, unsigned char *flag, size_t *ret)
{
	if (n)
		memset(flag, 0, n);
	*ret = n ? (size_t)-1 : 0;
	return n && stats_all_finite(x, n);
}

/*
 * Tukey's fences (Tukey, "Exploratory Data Analysis", 1977, 2C): outside
 * [q1 - k IQR, q3 + k IQR], quartiles of type 7.  One sorted copy.
 * Non-finite input or allocation failure: nothing flagged, (size_t)-1.
 */
static size_t tukey(const double *x, size_t n, double q1, double q3, double k,
		    unsigned char *flag)
{
	double lo = q1 - k * (q3 - q1), hi = q3 + k * (q3 - q1);
	size_t count = 0;

	for (size_t i = 0; i < n; i++)
		if (x[i] < lo || x[i] > hi) {
			flag[i] = 1;
			count++;
		}
	return count;
}

size_t stats_outliers_tukey(const double *x, size_t n, double k, unsigned char *flag)
{
	double *s, q1, q3;
	size_t ret;

	if (!testable(x, n, flag, &ret) || !(s = stats_sorted_copy(x, n)))
		return ret;
	q1 = stats_quantile_sorted(s, n, 0.25);
	q3 = stats_quantile_sorted(s, n, 0.75);
	free(s);
	return tukey(x, n, q1, q3, k, flag);
}

size_t stats_outliers_tukey_summary(const double *x, size_t n, const struct summary *sum,
				    double k, unsigned char *flag)
{
	size_t ret;

	if (!testable(x, n, flag, &ret) || sum->n != n)
		return ret;
	return tukey(x, n, sum->q1, sum->q3, k, flag);
}

/*
 * Modified z-score (Iglewicz & Hoaglin, "How to Detect and Handle
 * Outliers", 1993, 3.3): M_i = 0.6745 (x_i - median) / MAD, MAD unscaled
 * (0.6745 = Phi^-1(3/4) makes it the normal-consistent z); flag when
 * |M_i| > threshold.  MAD == 0 (more than half the values equal) flags
 * nothing.  Non-finite input or allocation failure: nothing flagged,
 * (size_t)-1.
 */
static size_t modified_z(const double *x, size_t n, double med, double mad,
			 double threshold, unsigned char *flag)
{
	size_t count = 0;

	if (mad == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (fabs(0.6745 * (x[i] - med) / mad) > threshold) {
			flag[i] = 1;
			count++;
		}
	return count;
}

size_t stats_outliers_mad(const double *x, size_t n, double threshold, unsigned char *flag)
{
	double *w, med, mad;
	size_t ret;

	if (!testable(x, n, flag, &ret) || !(w = malloc(n * sizeof(*w))))
		return ret;
	memcpy(w, x, n * sizeof(*w));
	med = stats_quantile_select(w, n, 0.5);
	for (size_t i = 0; i < n; i++)
		w[i] = fabs(x[i] - med);
	mad = stats_quantile_select(w, n, 0.5);
	free(w);
	return modified_z(x, n, med, mad, threshold, flag);
}

size_t stats_outliers_mad_summary(const double *x, size_t n, const struct summary *sum,
				  double threshold, unsigned char *flag)
{
	size_t ret;

	if (!testable(x, n, flag, &ret) || sum->n != n)
		return ret;
	return modified_z(x, n, sum->median, sum->mad, threshold, flag);
}
