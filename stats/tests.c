/* tests.c - Kolmogorov-Smirnov, Holm; see stats.h */
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

static const char m_ks_exact[] = "two-sample Kolmogorov-Smirnov, exact (Hodges 1958; "
	"conditional on ties)";
static const char m_ks_asym[] = "two-sample Kolmogorov-Smirnov, asymptotic "
	"(Kolmogorov distribution, Stephens' correction)";

void stats_test_result_init(struct test_result *out)
{
	memset(out, 0, sizeof(*out));
	out->statistic = out->p = NAN;
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
 * The exact two-sided p = P(D >= d) of the two-sample statistic, conditional
 * on the pattern of ties (the permutation distribution: every one of the
 * C(m+n, m) ways of labelling the pooled, sorted values as x or y equally
 * likely).  A labelling is a monotone lattice path from (0,0) to (m,n); D is
 * read only where the pooled sample changes value: at the ends of the groups
 * of equal values (ends[] holds the pooled counts i + j there, ascending,
 * the last m + n).  Without ties every step is such an end and this is
 * Hodges' count ("The significance probability of the Smirnov two-sample
 * test", Arkiv for Matematik 3, 1958); with ties it is the exact
 * conditional test that Hodges' paths give when only the group ends count.
 *
 * The upper tail is summed directly, a sum of positive terms, so that tiny
 * p-values keep their relative precision (1 - P(D < d) loses every digit
 * below about 1e-16: complete separation of 50 + 50 is 2 / C(100, 50) =
 * 1.98e-29):
 *   q(i,j) = the fraction of the C(i+j, i) paths to (i,j) that never met
 *            |i' n - j' m| >= dnum at a group end, by
 *            f(i,j) = i/(i+j) q(i-1,j) + j/(i+j) q(i,j-1),
 *            q(i,j) = 0 at a group end outside, f(i,j) otherwise;
 *   p = sum over group ends (i,j) outside of f(i,j) h(i,j), h(i,j) =
 *       C(i+j, i) C(m+n-i-j, m-i) / C(m+n, m) the share of all paths that
 *       pass through (i,j) (hypergeometric, by lgamma).
 * O(m n) time, O(n) memory.  NaN on allocation failure.
 */
static double ks_exact_sf(size_t m, size_t n, uint64_t dnum, const unsigned char *end)
{
	double *q = malloc((n + 1) * sizeof(*q)), p = 0;
	double lc = lgamma((double)(m + n) + 1) - lgamma((double)m + 1) - lgamma((double)n + 1);

	if (!q)
		return NAN;
	for (size_t i = 0; i <= m; i++)
		for (size_t j = 0; j <= n; j++) {
			uint64_t a = (uint64_t)i * n, b = (uint64_t)j * m;
			double f;

			if (!i && !j) {
				q[0] = 1;
				continue;
			}
			f = ((i ? (double)i * q[j] : 0) + (j ? (double)j * q[j - 1] : 0)) /
				(double)(i + j);
			if (end[i + j] && (a > b ? a - b : b - a) >= dnum) {
				if (f > 0)
					p += f * exp(lgamma((double)(i + j) + 1) -
						     lgamma((double)i + 1) - lgamma((double)j + 1) +
						     lgamma((double)(m + n - i - j) + 1) -
						     lgamma((double)(m - i) + 1) -
						     lgamma((double)(n - j) + 1) - lc);
				f = 0;
			}
			q[j] = f;
		}
	free(q);
	return p;
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
 *  - exact (m n <= 10000, ties or not): p = P(D >= d) summed over the
 *    paths that reach d (ks_exact_sf), conditional on the ties;
 *  - otherwise: p = Q_KS((sqrt(e) + 0.12 + 0.11 / sqrt(e)) D),
 *    e = m n / (m + n), Stephens' small-sample correction (Stephens, JRSS B
 *    32, 1970; Press et al. 2007, 14.3.18).  With ties this p is only an
 *    approximation, and not a conservative one in general: on the tied
 *    5 + 5 sample of tests/test_stats.c (stats/ks_ties_permutation) it is
 *    0.036 where the exact conditional p is 20/252 = 0.079; hence the exact
 *    test whenever m n is small enough for it.
 */
int stats_ks2_sorted(const double *xs, size_t nx, const double *ys, size_t ny,
		     struct test_result *out)
{
	size_t i = 0, j = 0;
	uint64_t dnum = 0;
	unsigned char *end = NULL;
	int ret = 0, exact;

	stats_test_result_init(out);
	if ((ret = stats_check_two_samples(xs, nx, ys, ny)) < 0)
		goto out;
	exact = (uint64_t)nx * ny <= KS_EXACT_MAX_MN;
	if (exact && !(end = calloc(nx + ny + 1, 1))) {
		ret = -ENOMEM;
		goto out;
	}
	while (i < nx || j < ny) {
		double v = j >= ny || (i < nx && xs[i] < ys[j]) ? xs[i] : ys[j];
		uint64_t a, b;

		while (i < nx && xs[i] == v)
			i++;
		while (j < ny && ys[j] == v)
			j++;
		if (end)
			end[i + j] = 1;
		a = (uint64_t)i * ny;
		b = (uint64_t)j * nx;
		if ((a > b ? a - b : b - a) > dnum)
			dnum = a > b ? a - b : b - a;
	}
	out->statistic = (double)dnum / ((double)nx * (double)ny);
	out->valid = 1;
	if (!dnum) {
		out->p = 1.0;	/* D = 0: every labelling has D >= 0 */
		out->exact = exact;
		out->method = exact ? m_ks_exact : m_ks_asym;
	} else if (exact) {
		double p = ks_exact_sf(nx, ny, dnum, end);
		if (isnan(p)) {
			ret = -ENOMEM;
			goto out;
		}
		out->p = fmin(1.0, p);
		out->exact = 1;
		out->method = m_ks_exact;
	} else {
		double e = sqrt((double)nx * (double)ny / ((double)nx + (double)ny));
		out->p = kolmogorov_Q((e + 0.12 + 0.11 / e) * out->statistic);
		out->method = m_ks_asym;
	}
out:
	free(end);
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
