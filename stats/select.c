/* select.c - selection and quantiles without a full sort; see stats.h */
#include "stats.h"

#include <math.h>

int stats_all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

int stats_sorted_finite(const double *sorted, size_t n)
{
	return !n || (isfinite(sorted[0]) && isfinite(sorted[n - 1]));
}

static inline void swap(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/*
 * Hoare's FIND with a median-of-3 pivot and Hoare's partition (equal keys
 * stop both scans, so runs of ties split evenly instead of degrading to
 * O(n^2)); insertion sort below 16 elements.  The median-of-3 keeps sorted
 * and reversed inputs linear; an adversarial input can still take O(n^2)
 * (not a concern for measured data).
 */
double stats_select(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;	/* a[k] lies in a[lo..hi] */

	while (hi - lo >= 16) {
		size_t mid = lo + (hi - lo) / 2, i, j;
		double pivot;

		/* order a[lo] <= a[mid] <= a[hi]: sentinels for both scans */
		if (a[mid] < a[lo])
			swap(&a[mid], &a[lo]);
		if (a[hi] < a[lo])
			swap(&a[hi], &a[lo]);
		if (a[hi] < a[mid])
			swap(&a[hi], &a[mid]);
		pivot = a[mid];
		i = lo;
		j = hi;
		for (;;) {
			do
				i++;
			while (a[i] < pivot);
			do
				j--;
			while (a[j] > pivot);
			if (i >= j)
				break;
			swap(&a[i], &a[j]);
		}
		/* a[lo..j] <= pivot <= a[j+1..hi] */
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
	for (size_t i = lo + 1; i <= hi; i++) {
		double v = a[i];
		size_t j = i;
		while (j > lo && a[j - 1] > v) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
	return a[k];
}

/*
 * Type 7 (Hyndman & Fan 1996), computed as GSL's
 * gsl_stats_quantile_from_sorted_data does: h = (n-1)p, j = floor(h),
 * d = h - j, Q = (1-d) x(j) + d x(j+1), so that both paths agree to the bit.
 * x(j+1) is the minimum of the part above j after selecting j.
 */
double stats_quantile_select(double *work, size_t n, double p)
{
	double h, d, lo, up;
	size_t j;

	if (!n || !(p >= 0.0 && p <= 1.0))
		return NAN;
	h = (double)(n - 1) * p;
	j = (size_t)h;
	d = h - (double)j;
	lo = stats_select(work, n, j);
	if (j == n - 1)
		return lo;
	up = work[j + 1];
	for (size_t i = j + 2; i < n; i++)
		if (work[i] < up)
			up = work[i];
	return (1 - d) * lo + d * up;
}

double stats_quantile_counts(const double *sorted, const uint32_t *cnt, size_t n, size_t m,
			     double p)
{
	double h, d, lo, up = NAN;
	size_t j, cum = 0, k;

	if (!n || !m || !(p >= 0.0 && p <= 1.0))
		return NAN;
	h = (double)(m - 1) * p;
	j = (size_t)h;
	d = h - (double)j;
	if (p <= 0.5) {
		/* the values at index < k hold positions [0, cum) */
		for (k = 0; cum <= j; k++)
			cum += cnt[k];
		lo = sorted[k - 1];
		if (j == m - 1)
			return lo;
		for (; cum <= j + 1; k++)
			cum += cnt[k];
		up = sorted[k - 1];
	} else {
		/* the values at index >= k hold positions [m - cum, m) */
		for (k = n; cum < m - j - 1; k--)
			cum += cnt[k - 1];
		if (k < n)
			up = sorted[k];		/* position j + 1 (when j < m - 1) */
		for (; cum < m - j; k--)
			cum += cnt[k - 1];
		lo = sorted[k];
		if (j == m - 1)
			return lo;
	}
	return (1 - d) * lo + d * up;
}
