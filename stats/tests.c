/* tests.c - Kolmogorov-Smirnov, Welch's t, Holm; see stats.h */
#include "stats.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest m n for the exact two-sample KS distribution (as SciPy's "auto"). */
#define KS_EXACT_MAX_MN 10000

static const char m_ks_exact[] = "two-sample Kolmogorov-Smirnov, exact (Hodges 1958)";
static const char m_ks_asym[] = "two-sample Kolmogorov-Smirnov, asymptotic "
	"(Kolmogorov distribution, Stephens' correction)";
static const char m_welch[] = "Welch's t (Welch-Satterthwaite df)";

void stats_test_result_init(struct test_result *out)
{
	memset(out, 0, sizeof(*out));
	out->statistic = out->p = out->df = NAN;
}

int stats_check_two_samples(const double *x, size_t nx, const double *y, size_t ny)
{
	if (!x || !y || !nx || !ny)
		return -EINVAL;
	if (!stats_all_finite(x, nx) || !stats_all_finite(y, ny))
		return -EDOM;
	return 0;
}

int stats_test_sorted_copies(stats_sorted_test *test, const double *x, size_t nx,
			     const double *y, size_t ny, struct test_result *out)
{
	double *xs = stats_sorted_copy(x, nx), *ys = stats_sorted_copy(y, ny);
	int ret;

	if (xs && ys) {
		ret = test(xs, nx, ys, ny, out);
	} else {
		stats_test_result_init(out);
		ret = -ENOMEM;
	}
	free(xs);
	free(ys);
	return ret;
}

/*
 * P(D < d) for the two-sample statistic, no ties: the fraction of the
 * C(m+n, m) monotone lattice paths from (0,0) to (m,n) that stay strictly
 * inside |i n - j m| < dnum (dnum = d m n, an integer), Hodges ("The
 * significance probability of the Smirnov two-sample test", Arkiv for
 * Matematik 3, 1958).  In probabilities, q(i,j) = c(i,j) / C(i+j, i):
 *   q(i,j) = i/(i+j) q(i-1,j) + j/(i+j) q(i,j-1), q = 0 outside.
 * O(m n) time, O(n) memory.  NaN on allocation failure.
 */
static double ks_exact_cdf(size_t m, size_t n, uint64_t dnum)
{
	double *q = malloc((n + 1) * sizeof(*q)), r;

	if (!q)
		return NAN;
#define INSIDE(i, j) ((uint64_t)((i) * n > (j) * m ? (i) * n - (j) * m : (j) * m - (i) * n) < dnum)
	q[0] = 1.0;
	for (size_t j = 1; j <= n; j++)
		q[j] = INSIDE((size_t)0, j) ? q[j - 1] : 0.0;
	for (size_t i = 1; i <= m; i++) {
		q[0] = INSIDE(i, (size_t)0) ? q[0] : 0.0;
		for (size_t j = 1; j <= n; j++)
			q[j] = INSIDE(i, j) ? ((double)i * q[j] + (double)j * q[j - 1]) /
					(double)(i + j) : 0.0;
	}
#undef INSIDE
	r = q[n];
	free(q);
	return r;
}

/*
 * Q_KS(lambda) = P(K > lambda) for Kolmogorov's limiting distribution
 * (Kolmogorov 1933; Smirnov 1948):
 *   Q = 2 sum_{k>=1} (-1)^(k-1) exp(-2 k^2 lambda^2)                (lambda >= 1.18)
 *   Q = 1 - sqrt(2 pi)/lambda sum_{k>=1} exp(-(2k-1)^2 pi^2 / (8 lambda^2))  (else)
 * both alternating/positive series converge in a few terms in their range
 * (Press et al., "Numerical Recipes", 3rd ed., 2007, 6.14.12-13).
 */
static double kolmogorov_Q(double lambda)
{
	double s = 0;

	if (lambda <= 0)
		return 1.0;
	if (lambda < 1.18) {
		double y = M_PI * M_PI / (8 * lambda * lambda);
		for (int k = 1; k <= 20; k++)
			s += exp(-(double)(2 * k - 1) * (2 * k - 1) * y);
		s = 1.0 - sqrt(2 * M_PI) / lambda * s;
	} else {
		for (int k = 1; k <= 100; k++) {
			double t = exp(-2.0 * k * k * lambda * lambda);
			s += k % 2 ? t : -t;
			if (t < 1e-300)
				break;
		}
		s *= 2;
	}
	return s < 0 ? 0 : s > 1 ? 1 : s;
}

/*
 * D = max over t of |F_x(t) - F_y(t)|, evaluated after each group of
 * equal values, in integers: D m n = max |i n - j m|.  Then
 *  - exact (no ties, m n <= 10000): p = 1 - P(D < d) (ks_exact_cdf);
 *  - otherwise: p = Q_KS((sqrt(e) + 0.12 + 0.11 / sqrt(e)) D),
 *    e = m n / (m + n), Stephens' small-sample correction (Stephens, JRSS B
 *    32, 1970; Press et al. 2007, 14.3.18).  With ties the asymptotic p is
 *    conservative.
 */
int stats_ks2_sorted(const double *xs, size_t nx, const double *ys, size_t ny,
		     struct test_result *out)
{
	size_t i = 0, j = 0;
	uint64_t dnum = 0;
	int ret = 0, tied = 0;

	stats_test_result_init(out);
	if ((ret = stats_check_two_samples(xs, nx, ys, ny)) < 0)
		goto out;
	while (i < nx || j < ny) {
		double v = j >= ny || (i < nx && xs[i] < ys[j]) ? xs[i] : ys[j];
		size_t c = 0;
		uint64_t a, b;

		while (i < nx && xs[i] == v)
			i++, c++;
		while (j < ny && ys[j] == v)
			j++, c++;
		if (c > 1)
			tied = 1;
		a = (uint64_t)i * ny;
		b = (uint64_t)j * nx;
		if ((a > b ? a - b : b - a) > dnum)
			dnum = a > b ? a - b : b - a;
	}
	out->statistic = (double)dnum / ((double)nx * (double)ny);
	out->valid = 1;
	if (!tied && (uint64_t)nx * ny <= KS_EXACT_MAX_MN) {
		double cdf = ks_exact_cdf(nx, ny, dnum);
		if (isnan(cdf)) {
			ret = -ENOMEM;
			goto out;
		}
		out->p = fmin(1.0, fmax(0.0, 1.0 - cdf));
		out->exact = 1;
		out->method = m_ks_exact;
	} else {
		double e = sqrt((double)nx * (double)ny / ((double)nx + (double)ny));
		out->p = kolmogorov_Q((e + 0.12 + 0.11 / e) * out->statistic);
		out->method = m_ks_asym;
	}
out:
	if (ret < 0)
		stats_test_result_init(out);
	return ret;
}

int stats_ks2(const double *x, size_t nx, const double *y, size_t ny,
	      struct test_result *out)
{
	if (stats_check_two_samples(x, nx, y, ny))
		return stats_ks2_sorted(x, nx, y, ny, out);
	return stats_test_sorted_copies(stats_ks2_sorted, x, nx, y, ny, out);
}

/*
 * Welch (Biometrika 34, 1947): with a = s_x^2 / n_x, b = s_y^2 / n_y,
 *   t = (mean_x - mean_y) / sqrt(a + b),
 *   df = (a + b)^2 / (a^2 / (n_x - 1) + b^2 / (n_y - 1))  (Satterthwaite 1946),
 *   p = 2 P(T_df > |t|)  (gsl_cdf_tdist_Q).
 * Not valid with n < 2 on a side, nor when both variances are 0.
 */
int stats_welch_t(const double *x, size_t nx, const double *y, size_t ny,
		  struct test_result *out)
{
	double mx, my, a, b;
	int ret;

	stats_test_result_init(out);
	if ((ret = stats_check_two_samples(x, nx, y, ny)) < 0)
		return ret;
	out->method = m_welch;
	if (nx < 2 || ny < 2) {
		out->reason = "Welch's t needs n >= 2 a side";
		return 0;
	}
	mx = gsl_stats_mean(x, 1, nx);
	my = gsl_stats_mean(y, 1, ny);
	a = gsl_stats_variance_m(x, 1, nx, mx) / (double)nx;
	b = gsl_stats_variance_m(y, 1, ny, my) / (double)ny;
	if (!(a + b > 0)) {
		out->reason = "both samples have zero variance: t is undefined";
		return 0;
	}
	out->valid = 1;
	out->statistic = (mx - my) / sqrt(a + b);
	out->df = (a + b) * (a + b) / (a * a / (double)(nx - 1) + b * b / (double)(ny - 1));
	out->p = fmin(1.0, 2.0 * gsl_cdf_tdist_Q(fabs(out->statistic), out->df));
	return 0;
}

/*
 * Holm ("A simple sequentially rejective multiple test procedure", Scand.
 * J. Statist. 6, 1979): with the m non-NaN p-values in ascending order
 * p(1) <= ... <= p(m),
 *   adj(i) = min(1, max_{j <= i} (m - j + 1) p(j)),
 * which is what R's p.adjust(method = "holm") returns (equal p-values get
 * equal adjusted values whatever their order).  On allocation failure
 * every entry is NaN.
 */
void stats_holm(const double *p, size_t n, double *adjusted)
{
	size_t m = 0, *idx = NULL;
	double *v = NULL, run = 0;

	idx = malloc((n ? n : 1) * sizeof(*idx));
	v = calloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		if (!idx || !v || isnan(p[i]))
			adjusted[i] = NAN;
		else
			v[m++] = p[i];
	if (!idx || !v)
		goto out;
	gsl_sort_index(idx, v, 1, m);
	for (size_t r = 0; r < m; r++) {
		double a = (double)(m - r) * v[idx[r]];
		if (a > run)
			run = a;
		v[idx[r]] = run < 1 ? run : 1;	/* v[idx[r]] no longer needed */
	}
	/* back to the input positions, skipping NaNs */
	for (size_t i = 0, k = 0; i < n; i++)
		if (!isnan(p[i]))
			adjusted[i] = v[k++];
out:
	free(idx);
	free(v);
}
