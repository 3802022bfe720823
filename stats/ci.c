/* ci.c - distribution-free confidence intervals for quantiles; see stats.h */
#include "stats.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char method_os[] = "order statistics (exact binomial)";

/*
 * The largest coverage any order-statistic interval reaches:
 *   P(x(1) <= xi_p <= x(n)) = 1 - p^n - (1-p)^n.
 */
static double max_coverage(size_t n, double p)
{
	return 1.0 - pow(p, (double)n) - pow(1.0 - p, (double)n);
}

/*
 * Smallest n with p^n + (1-p)^n <= 1 - conf.  With m = max(p, 1-p):
 * m^n <= p^n + (1-p)^n <= 2 m^n, so n lies in [log(1-conf)/log m,
 * (log(1-conf) - log 2)/log m]; binary search there (the sum falls with n).
 */
size_t stats_quantile_ci_min_n(double p, double conf)
{
	double m, lo, hi;

	if (!(p > 0.0 && p < 1.0) || !(conf > 0.0 && conf < 1.0))
		return 0;
	m = p > 0.5 ? p : 1.0 - p;
	lo = floor(log1p(-conf) / log(m));
	hi = ceil((log1p(-conf) - log(2.0)) / log(m)) + 1;
	if (lo < 1)
		lo = 1;
	if (!(hi < 1e18))
		return 0;
	/* invariant: max_coverage(lo) < conf <= max_coverage(hi) unless lo works */
	if (max_coverage((size_t)lo, p) >= conf)
		return (size_t)lo;
	while (hi - lo > 1) {
		double mid = floor((lo + hi) / 2);
		if (max_coverage((size_t)mid, p) >= conf)
			hi = mid;
		else
			lo = mid;
	}
	return (size_t)hi;
}

/*
 * Order-statistic interval (Hahn & Meeker 1991, 5.2; Conover 1999, 3.2):
 * with B ~ Binomial(n, p) the number of observations below the true
 * p-quantile xi_p, and F its CDF,
 *   P(x(l) <= xi_p < x(u)) = P(l <= B <= u - 1) = F(u-1) - F(l-1)
 * (1-based order statistics, continuous distribution).  We take the pair
 * with the fewest order statistics between them (u - l smallest) whose
 * coverage is >= conf; among those the one whose two tail probabilities
 * F(l-1) and 1 - F(u-1) are closest (the most symmetric; differences below
 * 1e-12 count as equal), then the lower one (for p = 1/2 the two mirror
 * images tie exactly).  out->level is that exact coverage.
 *
 * Cost: F is evaluated on a window of +-12 sd around np (the whole support
 * for small n): one gsl_cdf_binomial_P call and pmf recurrences outward from
 * the mode, pmf(k+1) = pmf(k) (n-k)/(k+1) p/(1-p); then one two-pointer
 * pass.  O(sqrt(n)) time and memory for a sorted input: no copy is made.
 * Confidence levels beyond 1 - 1e-30 are treated as unreachable outside
 * the window.
 *
 * ci_ranks() chooses the pair: out (has_ci, level, method, reason) and,
 * with has_ci, the 0-based ranks *lo_rank < *hi_rank of its ends, whose
 * values are the caller's: from a sorted array (stats_quantile_ci) or by
 * selection (stats_quantile_ci_select).
 */
static int ci_ranks(size_t n, double p, double conf, int finite, struct interval *out,
		    size_t *lo_rank, size_t *hi_rank)
{
	double mean, sd, half, *F = NULL, pmf_mode, best_bal = INFINITY, best_cov = 0;
	size_t k0, k1, mode, len, best_a = 0, best_b = 0, best_w = (size_t)-1, b;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->lo = out->hi = out->level = NAN;
	out->method = method_os;
	if (!n || !(p >= 0.0 && p <= 1.0) || !(conf > 0.0 && conf < 1.0)) {
		ret = -EINVAL;
		goto out;
	}
	if (!finite) {
		ret = -EDOM;
		goto out;
	}
	if (p == 0.0 || p == 1.0) {
		out->reason = "the minimum and the maximum (p = 0, 1) have no "
			"distribution-free CI";
		goto out;
	}
	if (n < 2 || max_coverage(n, p) < conf) {
		if (p == 0.5 && conf == 0.95)
			out->reason = "n < 6: a 95 % median CI needs at least 6 runs";
		else
			out->reason = "too few runs for an order-statistic CI at this "
				"level: even (min, max) covers less";
		goto out;
	}

	mean = (double)n * p;
	sd = sqrt(mean * (1.0 - p));
	half = ceil(12.0 * sd + 12.0);
	k0 = mean - half > 0 ? (size_t)(mean - half) : 0;
	k1 = mean + half < (double)n ? (size_t)(mean + half) : n;
	mode = (size_t)floor((double)(n + 1) * p);
	if (mode > n)
		mode = n;
	if (mode < k0)
		mode = k0;
	if (mode > k1)
		mode = k1;
	/* F[i] = P(B <= k0 - 1 + i), i = 0 .. len - 1 */
	len = k1 - k0 + 2;
	F = malloc(len * sizeof(*F));
	if (!F) {
		ret = -ENOMEM;
		goto out;
	}
	/* the pmf into F[1..], from the mode outwards (never underflows there) */
	pmf_mode = gsl_ran_binomial_pdf((unsigned)mode, p, (unsigned)n);
	F[mode - k0 + 1] = pmf_mode;
	for (size_t k = mode; k > k0; k--)
		F[k - k0] = F[k - k0 + 1] * ((double)k / (double)(n - k + 1)) * ((1.0 - p) / p);
	for (size_t k = mode; k < k1; k++)
		F[k - k0 + 2] = F[k - k0 + 1] * ((double)(n - k) / (double)(k + 1)) * (p / (1.0 - p));
	F[0] = k0 ? gsl_cdf_binomial_P((unsigned)(k0 - 1), p, (unsigned)n) : 0.0;
	for (size_t i = 1; i < len; i++)
		F[i] += F[i - 1];

	/*
	 * a = l - 1 and b = u - 1 (0-based indices of the order statistics):
	 * coverage F(b) - F(a), a in [0, n-2], b in [a+1, n-1]; the smallest
	 * b for each a never decreases with a.
	 */
	b = 0;
	for (size_t a = k0 ? k0 - 1 : 0; a + 1 <= n - 1 && a <= k1; a++) {
		double Fa = F[a + 1 - k0], cov, bal;	/* P(B <= a) */

		if (b < a + 1)
			b = a + 1;
		while (b <= k1 && b <= n - 1 && F[b - k0 + 1] - Fa < conf)
			b++;
		if (b > k1 || b > n - 1)
			break;
		cov = F[b - k0 + 1] - Fa;
		bal = fabs(Fa - (1.0 - F[b - k0 + 1]));
		if (b - a < best_w || (b - a == best_w && bal < best_bal - 1e-12)) {
			best_w = b - a;
			best_bal = bal;
			best_cov = cov;
			best_a = a;
			best_b = b;
		}
	}
	if (best_w == (size_t)-1) {
		out->reason = "confidence level too close to 1 for an "
			"order-statistic CI";
		goto out;
	}
	out->has_ci = 1;
	*lo_rank = best_a;
	*hi_rank = best_b;
	out->level = best_cov;
out:
	free(F);
	if (ret < 0) {
		memset(out, 0, sizeof(*out));
		out->lo = out->hi = out->level = NAN;
	}
	return ret;
}

/* The interval of the sorted array sorted, or else by selection in work
 * (NULL both: -EINVAL, as ci_ranks() says it of n == 0). */
static int quantile_ci_of(const double *sorted, double *work, size_t n, double p,
			  double conf, struct interval *out)
{
	int finite = sorted ? stats_sorted_finite(sorted, n) : work && stats_all_finite(work, n);
	size_t a = 0, b = 0;
	int ret = ci_ranks(sorted || work ? n : 0, p, conf, finite, out, &a, &b);

	if (ret < 0 || !out->has_ci)
		return ret;
	if (sorted) {
		out->lo = sorted[a];
		out->hi = sorted[b];
	} else {	/* after selecting rank a, the ranks above it are in work[a+1..] */
		out->lo = stats_select(work, n, a);
		out->hi = stats_select(work + a + 1, n - a - 1, b - a - 1);
	}
	return 0;
}

int stats_quantile_ci(const double *sorted, size_t n, double p, double conf,
		      struct interval *out)
{
	return quantile_ci_of(sorted, NULL, n, p, conf, out);
}

int stats_quantile_ci_select(double *work, size_t n, double p, double conf,
			     struct interval *out)
{
	return quantile_ci_of(NULL, work, n, p, conf, out);
}

int stats_one_signed(const double *sorted, size_t n, enum stat_kind kind, double p,
		     double conf, double *lo, double *hi)
{
	struct interval iv = { 0 };

	*lo = *hi = NAN;
	if (!n || !sorted)
		return 0;
	/* the whole sample: the interval when no narrower one exists, and
	 * when it is on one side of 0 every statistic of it is too (a t
	 * interval of the mean of a skewed positive sample can cross 0) */
	*lo = sorted[0];
	*hi = sorted[n - 1];
	if (*lo > 0 || *hi < 0)
		return *lo > 0 ? 1 : -1;
	if (kind == STATK_MEAN && n >= 2) {
		double mean = 0, ss = 0, t;
		for (size_t i = 0; i < n; i++)
			mean += sorted[i];
		mean /= (double)n;
		for (size_t i = 0; i < n; i++)
			ss += (sorted[i] - mean) * (sorted[i] - mean);
		t = gsl_cdf_tdist_Pinv(1 - (1 - conf) / 2, (double)(n - 1));
		*lo = mean - t * sqrt(ss / (double)(n - 1) / (double)n);
		*hi = mean + t * sqrt(ss / (double)(n - 1) / (double)n);
	} else if (kind == STATK_QUANTILE && p > 0 && p < 1 &&
		   stats_quantile_ci(sorted, n, p, conf, &iv) == 0 && iv.has_ci) {
		*lo = iv.lo;
		*hi = iv.hi;
	}
	if (*lo > 0 && *hi > 0)
		return 1;
	if (*lo < 0 && *hi < 0)
		return -1;
	return 0;
}
