/* rank.c - Mann-Whitney U and the Hodges-Lehmann shift; see stats.h */
#include "stats.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest side for the exact p-value of the U test (as SciPy's "exact"). */
#define MW_EXACT_MAX 50

static const char m_mw_exact[] = "Mann-Whitney U, exact null distribution";
static const char m_mw_normal[] = "Mann-Whitney U, normal approximation "
	"(tie and continuity corrections)";
static const char m_hl_exact[] = "Hodges-Lehmann on log values, exact "
	"Mann-Whitney critical values";
static const char m_hl_normal[] = "Hodges-Lehmann on log values, normal-"
	"approximation Mann-Whitney critical values";

/* Hodges-Lehmann takes exact critical values while mw_null_cdf's work,
 * min(m,n) m n / 2 multiply-adds, stays below this (0.1 s or so): every
 * 200 + 200 study (4e6), up to about 580 + 580. */
#define HL_EXACT_MAX_WORK 1e8

/*
 * The exact null CDF of U for sample sizes m and n, P(U <= u) for
 * u = 0..floor(mn/2) (the lower half: the null is symmetric, U ~ mn - U),
 * into a malloc'd array (NULL on allocation failure).  The counts of U are
 * the coefficients of the Gaussian binomial coefficient
 *   [m+n choose m]_q = prod_{i=1..k} (1 - q^(l+i)) / (1 - q^i),
 * k = min(m, n), l = max(m, n) (Mann & Whitney 1947; Andrews, "The Theory
 * of Partitions", 1976, Theorem 3.1; the product form of the recursion is
 * Harding's, Applied Statistics 33, 1984), taken one factor at a time:
 * multiply by (1 - q^(l+i)), divide by (1 - q^i) (a running sum with
 * stride i), and scale by i / (l+i) so that the coefficients stay a
 * probability distribution (the step's sum goes from C(l+i-1, i-1) to
 * C(l+i, i)).  The coefficients below u only depend on those below u, so
 * the lower half is all that is kept.  O(k m n / 2) time, O(m n / 2)
 * memory; the differences of the multiplication cost a relative error of
 * about 1e-16 u / l.
 */
static double *mw_null_cdf(size_t m, size_t n)
{
	size_t k = m < n ? m : n, l = m < n ? n : m, K = m * n / 2 + 1;
	double *a = calloc(K, sizeof(double));

	if (!a)
		return NULL;
	a[0] = 1.0;
	for (size_t i = 1; i <= k; i++) {
		double s = (double)i / (double)(l + i);

		for (size_t u = K; u-- > l + i;)
			a[u] -= a[u - l - i];
		for (size_t u = i; u < K; u++)
			a[u] += a[u - i];
		for (size_t u = 0; u < K; u++)
			a[u] *= s;
	}
	for (size_t u = 1; u < K; u++)
		a[u] += a[u - 1];
	return a;
}

/*
 * Walk the two sorted samples in step, by groups of equal values:
 *   U = sum over x of #{y < x} + #{y == x} / 2,
 *   ties = sum over groups of (t^3 - t), t the group size in x and y.
 * Returns 1 when any value occurs more than once (in either sample).
 */
static int u_and_ties(const double *xs, size_t m, const double *ys, size_t n,
		      double *U, double *ties)
{
	size_t i = 0, j = 0;
	int tied = 0;

	*U = 0;
	*ties = 0;
	while (i < m || j < n) {
		double v = j >= n || (i < m && xs[i] < ys[j]) ? xs[i] : ys[j];
		size_t cx = 0, cy = 0, t;

		while (i < m && xs[i] == v)
			i++, cx++;
		while (j < n && ys[j] == v)
			j++, cy++;
		/* j - cy values of y lie below v */
		*U += (double)cx * (double)(j - cy) + 0.5 * (double)cx * (double)cy;
		t = cx + cy;
		if (t > 1) {
			tied = 1;
			*ties += (double)t * (double)t * (double)t - (double)t;
		}
	}
	return tied;
}

/*
 * Two-sided p-value, as SciPy's mannwhitneyu (method "exact" and
 * "asymptotic" with use_continuity=True):
 *  exact:  p = min(1, 2 P(U <= min(U, mn - U)))  (the null is symmetric);
 *  normal: mu = mn/2,
 *          sigma^2 = mn/12 ((N + 1) - sum(t^3 - t) / (N (N - 1))),
 *          z = (max(U, mn - U) - mu - 1/2) / sigma, p = min(1, 2 (1 - Phi(z)))
 *          (Hollander & Wolfe 1999, (4.15) with the tie correction (4.16)).
 *  When every value is the same (sigma = 0) there is no evidence: p = 1.
 */
int stats_mann_whitney_sorted(const double *xs, size_t nx, const double *ys, size_t ny,
			      struct test_result *out)
{
	double *cdf = NULL, U, ties, mn, N;
	int ret = 0, tied;

	stats_test_result_init(out);
	if ((ret = stats_check_two_samples(xs, nx, ys, ny)) < 0)
		goto out;
	if (nx < 4 || ny < 4) {
		out->reason = "a U test at alpha = 0.05 needs n >= 4 a side";
		goto out;
	}
	tied = u_and_ties(xs, nx, ys, ny, &U, &ties);
	mn = (double)nx * (double)ny;
	N = (double)nx + (double)ny;
	out->statistic = U;
	out->valid = 1;
	if (!tied && nx <= MW_EXACT_MAX && ny <= MW_EXACT_MAX) {
		double lo = U < mn - U ? U : mn - U;

		cdf = mw_null_cdf(nx, ny);
		if (!cdf) {
			ret = -ENOMEM;
			goto out;
		}
		out->p = fmin(1.0, 2.0 * cdf[(size_t)lo]);
		out->exact = 1;
		out->method = m_mw_exact;
	} else {
		double s2 = mn / 12.0 * ((N + 1) - ties / (N * (N - 1)));
		double hi = U > mn - U ? U : mn - U;

		out->method = m_mw_normal;
		if (s2 > 0)
			out->p = fmin(1.0, 2.0 * gsl_cdf_ugaussian_Q((hi - mn / 2 - 0.5) / sqrt(s2)));
		else
			out->p = 1.0;
	}
out:
	free(cdf);
	if (ret < 0)
		stats_test_result_init(out);
	return ret;
}

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		       struct test_result *out)
{
	/* the argument checks first, so that nothing is sorted for nothing */
	if (stats_check_two_samples(x, nx, y, ny) || nx < 4 || ny < 4)
		return stats_mann_whitney_sorted(x, nx, y, ny, out);
	return stats_test_sorted_copies(stats_mann_whitney_sorted, x, nx, y, ny, out);
}

/* ---- Hodges-Lehmann ---- */

#define PAIR_SAMPLES 4096

/* Work space for selecting among the m n differences y[j] - x[i]. */
struct pairs {
	const double *x, *y;	/* ascending */
	size_t m, n;
	uint32_t *L, *R;	/* candidates of row i: columns [L[i], R[i]) */
	uint32_t *lt, *le;
	uint64_t *pre;		/* pre[i] = candidates in rows 0..i */
	double *buf;		/* gather space, cap doubles (>= PAIR_SAMPLES) */
	size_t cap;
	gsl_rng *rng;
};

enum { PIV_FOUND, PIV_BELOW, PIV_ABOVE };

/*
 * Count the differences below and up to piv with one two-pointer pass
 * (#{j : d(i,j) < v} never decreases with i, as x is ascending), then keep
 * in each row only the candidates on the side of piv that holds rank k.
 * All comparisons use the same floating-point expression y[j] - x[i].
 */
static int pair_shrink(struct pairs *P, double piv, uint64_t k)
{
	const double *x = P->x, *y = P->y;
	size_t m = P->m, n = P->n, jl = 0, je = 0;
	uint64_t nlt = 0, nle = 0;

	for (size_t i = 0; i < m; i++) {
		while (jl < n && y[jl] - x[i] < piv)
			jl++;
		if (je < jl)
			je = jl;
		while (je < n && y[je] - x[i] <= piv)
			je++;
		P->lt[i] = (uint32_t)jl;
		P->le[i] = (uint32_t)je;
		nlt += jl;
		nle += je;
	}
	if (nlt < k && k <= nle)
		return PIV_FOUND;
	if (k <= nlt) {
		for (size_t i = 0; i < m; i++)
			if (P->lt[i] < P->R[i])
				P->R[i] = P->lt[i] > P->L[i] ? P->lt[i] : P->L[i];
		return PIV_BELOW;
	}
	for (size_t i = 0; i < m; i++)
		if (P->le[i] > P->L[i])
			P->L[i] = P->le[i] < P->R[i] ? P->le[i] : P->R[i];
	return PIV_ABOVE;
}

/*
 * The k-th smallest (1-based) of the m n differences d(i,j) = y[j] - x[i]
 * without forming them: selection in the sorted X + Y matrix, after
 * Monahan ("Fast computation of the Hodges-Lehmann location estimator",
 * ACM TOMS 10(3), 1984; two-sample form: Johnson & Mizoguchi, SIAM J.
 * Comput. 7(2), 1978), with the pivots of Floyd & Rivest (CACM 18(3),
 * 1975): draw 4096 of the remaining candidates at random, take the two
 * sample order statistics 2 sqrt(4096) either side of where rank k should
 * fall, and cut every row's candidate range to the part between them
 * (two O(m + n) passes).  Each round keeps about 1/16 of the candidates;
 * once at most cap remain they are gathered and selected directly.
 * Expected O((m + n) log(mn) / log 16).  Exact whatever the draws: the
 * RNG only affects the speed.
 */
static double pair_kth(struct pairs *P, uint64_t k)
{
	const double *x = P->x, *y = P->y;
	size_t m = P->m;

	for (size_t i = 0; i < m; i++) {
		P->L[i] = 0;
		P->R[i] = (uint32_t)P->n;
	}
	for (;;) {
		uint64_t cand = 0, below = 0;
		size_t g = 0, s = PAIR_SAMPLES, ia, ib;
		double q, half = 2 * sqrt((double)PAIR_SAMPLES), plo, phi;
		int res;

		for (size_t i = 0; i < m; i++) {
			cand += P->R[i] - P->L[i];
			below += P->L[i];
			P->pre[i] = cand;
		}
		if (cand <= P->cap) {
			for (size_t i = 0; i < m; i++)
				for (size_t j = P->L[i]; j < P->R[i]; j++)
					P->buf[g++] = y[j] - x[i];
			return stats_select(P->buf, g, (size_t)(k - below - 1));
		}
		for (size_t t = 0; t < s; t++) {
			uint64_t r = (((uint64_t)gsl_rng_get(P->rng) << 32) |
				      gsl_rng_get(P->rng)) % cand;
			size_t lo = 0, hi = m - 1;	/* first row with pre > r */

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (P->pre[mid] > r)
					hi = mid;
				else
					lo = mid + 1;
			}
			r -= lo ? P->pre[lo - 1] : 0;
			P->buf[t] = y[P->L[lo] + r] - x[lo];
		}
		q = (double)(k - below) / (double)cand * s;
		ia = q - half > 0 ? (size_t)(q - half) : 0;
		ib = q + half < s - 1 ? (size_t)(q + half) : s - 1;
		phi = stats_select(P->buf, s, ib);
		plo = stats_select(P->buf, ib + 1, ia);	/* buf[0..ib] <= phi */
		res = pair_shrink(P, plo, k);
		if (res == PIV_FOUND)
			return plo;
		if (res == PIV_BELOW)
			continue;	/* the sample missed low: go again */
		res = pair_shrink(P, phi, k);
		if (res == PIV_FOUND)
			return phi;
	}
}

/* The smallest difference strictly above v (one two-pointer pass);
 * v must be below the largest difference. */
static double pair_next_above(const struct pairs *P, double v)
{
	double best = INFINITY;
	size_t j = 0;

	for (size_t i = 0; i < P->m; i++) {
		while (j < P->n && P->y[j] - P->x[i] <= v)
			j++;
		if (j < P->n && P->y[j] - P->x[i] < best)
			best = P->y[j] - P->x[i];
	}
	return best;
}

/* #{(i,j) : d(i,j) <= v} */
static uint64_t pair_count_le(const struct pairs *P, double v)
{
	uint64_t c = 0;
	size_t j = 0;

	for (size_t i = 0; i < P->m; i++) {
		while (j < P->n && P->y[j] - P->x[i] <= v)
			j++;
		c += j;
	}
	return c;
}

/*
 * log of every x (each > 0) into *out (malloc'd), ascending.  From a
 * sorted x the logs come in order already but for where log's rounding
 * might tie-break otherwise: a check, and a sort only then, so the result
 * is the same array either way.
 */
static int logs_sorted(const double *x, size_t n, int x_sorted, double **out)
{
	double *l;
	int in_order = 1;

	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]) || !(x[i] > 0))
			return -EDOM;
	l = malloc(n * sizeof(*l));
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		l[i] = log(x[i]);
		if (i && l[i] < l[i - 1])
			in_order = 0;
	}
	if (!x_sorted || !in_order)
		stats_sort(l, n);
	*out = l;
	return 0;
}

/*
 * Hodges-Lehmann two-sample shift (Hodges & Lehmann 1963) of log y against
 * log x: with D(1) <= ... <= D(N) the N = m n differences
 * log y_j - log x_i, the estimate is their median, ratio = exp(median).
 * CI (Hollander & Wolfe 1999, 4.3; Bauer, JASA 67, 1972): [D(c), D(N+1-c)]
 * with coverage 1 - 2 P(U <= c - 1) under the Mann-Whitney null, c the
 * largest integer with P(U <= c - 1) <= (1 - conf)/2:
 *  - exact null CDF (mw_null_cdf) while that is cheap (min(m,n) m n / 2 <=
 *    HL_EXACT_MAX_WORK: 200 + 200 runs a side and well beyond), where the
 *    normal approximation below can be an order statistic off (at 200 +
 *    200 and 95 %); out->ci.level is the coverage actually achieved,
 *    1 - 2 P(U <= c - 1) (at least conf: c is an integer);
 *  - otherwise the normal approximation with continuity correction,
 *    sigma^2 = m n (m + n + 1) / 12, c = floor(N/2 + 1/2 - z sigma),
 *    level = 1 - 2 Phi((c - 1/2 - N/2) / sigma).
 * Ties are not corrected for (the interval assumes continuous data).
 * No CI when c < 1 (reason set), e.g. 3 + 3 runs at 95 %.  Any sample size:
 * the order statistics come from pair_kth, O((m + n) log(mn)) time and
 * O(m + n) memory (about 40 bytes a value), never the N differences.
 * -EINVAL: n == 0, conf outside (0, 1), or a side above 2^32 - 1.
 */
static int hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny,
			  int sorted, double conf, struct hl_ratio *out)
{
	struct pairs P = { 0 };
	double *lx = NULL, *ly = NULL, *cdf = NULL, est, alpha = 1 - conf;
	uint64_t N, c = 0, k;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->ratio = out->ci.lo = out->ci.hi = out->ci.level = NAN;
	if (!x || !y || !nx || !ny || !(conf > 0 && conf < 1) ||
	    nx > UINT32_MAX || ny > UINT32_MAX) {
		ret = -EINVAL;
		goto out;
	}
	if ((ret = logs_sorted(x, nx, sorted, &lx)) < 0 ||
	    (ret = logs_sorted(y, ny, sorted, &ly)) < 0)
		goto out;
	P.x = lx;
	P.y = ly;
	P.m = nx;
	P.n = ny;
	P.cap = nx + ny + PAIR_SAMPLES;
	P.L = malloc(nx * sizeof(*P.L));
	P.R = malloc(nx * sizeof(*P.R));
	P.lt = malloc(nx * sizeof(*P.lt));
	P.le = malloc(nx * sizeof(*P.le));
	P.pre = malloc(nx * sizeof(*P.pre));
	P.buf = malloc(P.cap * sizeof(*P.buf));
	P.rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!P.L || !P.R || !P.lt || !P.le || !P.pre || !P.buf || !P.rng) {
		ret = -ENOMEM;
		goto out;
	}
	gsl_rng_set(P.rng, 1);
	N = (uint64_t)nx * ny;

	/* the median of the N differences */
	k = (N + 1) / 2;
	est = pair_kth(&P, k);
	if (N % 2 == 0) {
		double up = pair_count_le(&P, est) >= k + 1 ? est : pair_next_above(&P, est);
		est = (est + up) / 2;
	}
	out->ratio = exp(est);

	/* the critical value c */
	if ((double)(nx < ny ? nx : ny) * (double)N / 2 <= HL_EXACT_MAX_WORK) {
		cdf = mw_null_cdf(nx, ny);
		if (!cdf) {
			ret = -ENOMEM;
			goto out;
		}
		while (c <= N / 2 && cdf[c] <= alpha / 2)	/* cdf holds u <= N/2 */
			c++;
		out->ci.method = m_hl_exact;
		out->ci.level = c ? 1 - 2 * cdf[c - 1] : NAN;
	} else {
		double sigma = sqrt((double)N * ((double)nx + ny + 1) / 12.0);
		double cc = floor((double)N / 2 + 0.5 -
				  gsl_cdf_ugaussian_Pinv(1 - alpha / 2) * sigma);

		c = cc > 0 ? (uint64_t)cc : 0;
		out->ci.method = m_hl_normal;
		out->ci.level = c ? 1 - 2 * gsl_cdf_ugaussian_P(((double)c - 0.5 -
								  (double)N / 2) / sigma) : NAN;
	}
	if (c < 1) {
		out->ci.level = NAN;
		out->ci.reason = "too few runs for a Hodges-Lehmann CI at this level";
		goto out;
	}
	out->ci.has_ci = 1;
	out->ci.lo = exp(pair_kth(&P, c));
	out->ci.hi = exp(pair_kth(&P, N + 1 - c));
out:
	free(lx);
	free(ly);
	free(cdf);
	free(P.L);
	free(P.R);
	free(P.lt);
	free(P.le);
	free(P.pre);
	free(P.buf);
	gsl_rng_free(P.rng);
	if (ret < 0) {
		memset(out, 0, sizeof(*out));
		out->ratio = out->ci.lo = out->ci.hi = out->ci.level = NAN;
	}
	return ret;
}

int stats_hodges_lehmann_ratio(const double *x, size_t nx, const double *y,
			       size_t ny, double conf, struct hl_ratio *out)
{
	return hodges_lehmann(x, nx, y, ny, 0, conf, out);
}

int stats_hodges_lehmann_ratio_sorted(const double *xs, size_t nx, const double *ys,
				      size_t ny, double conf, struct hl_ratio *out)
{
	return hodges_lehmann(xs, nx, ys, ny, 1, conf, out);
}

/* ---- Wilcoxon signed-rank ---- */

static const char m_wsr_exact[] = "Wilcoxon signed-rank on the pairs, exact null distribution";
static const char m_wsr_normal[] = "Wilcoxon signed-rank on the pairs, normal approximation "
	"(tie correction)";

/* Largest number of non-zero differences for the exact null (as SciPy). */
#define WSR_EXACT_MAX 50

static int cmp_abs(const void *a, const void *b)
{
	double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
	return (x > y) - (x < y);
}

/*
 * Wilcoxon ("Individual comparisons by ranking methods", Biometrics
 * Bulletin 1, 1945; Hollander & Wolfe 1999, 3.1), two-sided, as SciPy's
 * wilcoxon(zero_method="wilcox", correction=False): zeros are dropped, the
 * n remaining |d| ranked (ties: average ranks), W+ and W- the rank sums of
 * the positive and the negative d, statistic T = min(W+, W-);
 *  exact (no ties, n <= 50): p = min(1, 2 P(W <= T)), P from the counts of
 *    the subsets of {1..n} by their sum (the null: each sign equally
 *    likely), c_k(w) = c_{k-1}(w) + c_{k-1}(w - k), over 2^n;
 *  normal: mu = n(n+1)/4, sigma^2 = n(n+1)(2n+1)/24 - sum(t^3 - t)/48,
 *    z = (T - mu)/sigma, p = 2 Phi(z) (Hollander & Wolfe (3.13)-(3.14)).
 * Not valid with 1 to 5 non-zero differences (the smallest two-sided p is
 * then 2/2^5 > 0.05); p = 1 when every difference is 0 or sigma = 0.
 */
int stats_wilcoxon_signed_rank(const double *d, size_t n, struct test_result *out)
{
	double *a = NULL, *c = NULL, wp = 0, wm = 0, ties = 0, T, N;
	size_t m = 0;
	int ret = 0, tied = 0;

	stats_test_result_init(out);
	if (!d || !n) {
		ret = -EINVAL;
		goto out;
	}
	if (!stats_all_finite(d, n)) {
		ret = -EDOM;
		goto out;
	}
	if (!(a = malloc(n * sizeof(*a)))) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0)
			a[m++] = d[i];
	if (!m) {		/* every pair equal: no evidence either way */
		out->valid = 1;
		out->statistic = 0;
		out->p = 1.0;
		out->method = m_wsr_exact;
		out->exact = 1;
		goto out;
	}
	if (m < 6) {
		out->reason = "a signed-rank test at alpha = 0.05 needs 6 non-zero pairs";
		goto out;
	}
	qsort(a, m, sizeof(*a), cmp_abs);
	for (size_t i = 0; i < m;) {
		size_t j = i;
		double r;
		while (j < m && fabs(a[j]) == fabs(a[i]))
			j++;
		r = (double)(i + 1 + j) / 2;	/* the average of ranks i+1..j */
		for (size_t k = i; k < j; k++)
			if (a[k] > 0)
				wp += r;
			else
				wm += r;
		if (j - i > 1) {
			double t = (double)(j - i);
			tied = 1;
			ties += t * t * t - t;
		}
		i = j;
	}
	T = wp < wm ? wp : wm;
	N = (double)m;
	out->statistic = T;
	out->valid = 1;
	if (!tied && m <= WSR_EXACT_MAX) {
		size_t W = m * (m + 1) / 2;
		double s = 0;
		if (!(c = calloc(W + 1, sizeof(*c)))) {
			ret = -ENOMEM;
			goto out;
		}
		c[0] = 1;
		for (size_t k = 1; k <= m; k++)
			for (size_t w = W; w >= k; w--)
				c[w] += c[w - k];
		for (size_t w = 0; w <= (size_t)T; w++)
			s += c[w];
		out->p = fmin(1.0, 2 * ldexp(s, -(int)m));
		out->exact = 1;
		out->method = m_wsr_exact;
	} else {
		double s2 = N * (N + 1) * (2 * N + 1) / 24 - ties / 48;
		out->method = m_wsr_normal;
		out->p = s2 > 0 ? fmin(1.0, 2 * gsl_cdf_ugaussian_P((T - N * (N + 1) / 4) /
								  sqrt(s2))) : 1.0;
	}
out:
	free(a);
	free(c);
	if (ret < 0)
		stats_test_result_init(out);
	return ret;
}
