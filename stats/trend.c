/* trend.c - Spearman's trend over the runs, Brown-Forsythe; see trend.h */
#include "trend.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char m_spearman[] = "Spearman's rho against run order, t approximation (Zar 1972)";
static const char m_bf[] = "Brown-Forsythe (Levene on deviations from the median)";

int stats_trend(const double *x, size_t n, struct test_result *out)
{
	double *rank, mean, sxy = 0, sxx = 0, syy = 0, rho, t;

	stats_test_result_init(out);
	out->method = m_spearman;
	if (!x || !n)
		return -EINVAL;
	if (!stats_all_finite(x, n))
		return -EDOM;
	if (n < STATS_TREND_MIN_N) {
		out->reason = "a trend test needs at least 10 runs";
		return 0;
	}
	rank = malloc(n * sizeof(*rank));
	if (!rank || stats_ranks(x, n, rank)) {
		free(rank);
		return -ENOMEM;
	}
	mean = (double)(n + 1) / 2;
	for (size_t i = 0; i < n; i++) {
		double a = rank[i] - mean, b = (double)(i + 1) - mean;
		sxy += a * b;
		sxx += a * a;
		syy += b * b;
	}
	free(rank);
	out->valid = 1;
	if (sxx == 0) {		/* every value equal: no trend */
		out->statistic = 0;
		out->p = 1;
		return 0;
	}
	rho = sxy / sqrt(sxx * syy);
	if (rho > 1)
		rho = 1;
	if (rho < -1)
		rho = -1;
	out->statistic = rho;
	out->df = (double)n - 2;
	if (fabs(rho) == 1) {
		out->p = 0;
		return 0;
	}
	t = rho * sqrt(out->df / (1 - rho * rho));
	out->p = 2 * gsl_cdf_tdist_Q(fabs(t), out->df);
	if (out->p > 1)
		out->p = 1;
	return 0;
}

int stats_brown_forsythe(const double *const *x, const size_t *n, size_t k,
			 struct test_result *out)
{
	double zbar = 0, between = 0, within = 0, *zmean = NULL;
	size_t N = 0;
	int ret = 0;

	stats_test_result_init(out);
	out->method = m_bf;
	if (!x || !n)
		return -EINVAL;
	for (size_t i = 0; i < k; i++) {
		if (!x[i] && n[i])
			return -EINVAL;
		if (!stats_all_finite(x[i], n[i]))
			return -EDOM;
	}
	if (k < 2) {
		out->reason = "the spread test needs two samples";
		return 0;
	}
	for (size_t i = 0; i < k; i++) {
		if (n[i] < 3) {
			out->reason = "the spread test needs at least 3 runs a side";
			return 0;
		}
		N += n[i];
	}
	zmean = calloc(k, sizeof(*zmean));
	if (!zmean)
		return -ENOMEM;
	/* the deviations z_ij, summed per sample; then their squares about
	 * the sample's mean deviation */
	for (size_t i = 0; i < k; i++) {
		/* the median by selection, not a sort (issue 25) */
		double *s = malloc(n[i] * sizeof(*s)), med;
		if (!s) {
			ret = -ENOMEM;
			goto out;
		}
		memcpy(s, x[i], n[i] * sizeof(*s));
		med = stats_quantile_select(s, n[i], 0.5);
		free(s);
		for (size_t j = 0; j < n[i]; j++)
			zmean[i] += fabs(x[i][j] - med);
		zbar += zmean[i];
		zmean[i] /= (double)n[i];
		for (size_t j = 0; j < n[i]; j++) {
			double d = fabs(x[i][j] - med) - zmean[i];
			within += d * d;
		}
	}
	zbar /= (double)N;
	for (size_t i = 0; i < k; i++)
		between += (double)n[i] * (zmean[i] - zbar) * (zmean[i] - zbar);
	out->valid = 1;
	out->df = (double)(N - k);
	if (within == 0) {
		out->statistic = between == 0 ? 0 : INFINITY;
		out->p = between == 0 ? 1 : 0;
		goto out;
	}
	out->statistic = ((double)(N - k) * between) / ((double)(k - 1) * within);
	out->p = gsl_cdf_fdist_Q(out->statistic, (double)(k - 1), (double)(N - k));
out:
	free(zmean);
	return ret;
}
