/* bootstrap.c - dilation of a statistic with its CI; see stats.h */
#include "stats.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_B 2000
#define DEFAULT_MAX_BOOT_N 20000

static const char m_pct[] = "percentile bootstrap";
static const char m_bca[] = "BCa bootstrap";
static const char m_bca_undef[] = "percentile bootstrap (BCa undefined: bias "
	"correction infinite)";
static const char m_asym_mean[] = "asymptotic normal (Welch standard error)";
static const char m_asym_mean_pct[] = "asymptotic normal (Welch standard error, "
	"delta method)";
static const char m_asym_q[] = "asymptotic normal (order-statistic standard errors)";
static const char m_asym_q_pct[] = "asymptotic normal (order-statistic standard "
	"errors, delta method)";
/* the same, each side's variance times its design effect (nested.h) */
static const char m_asym_mean_deff[] = "asymptotic normal (Welch standard error times "
	"the design effect of runs nested in blocks, Kish 1965)";
static const char m_asym_mean_pct_deff[] = "asymptotic normal (Welch standard error times "
	"the design effect of runs nested in blocks, Kish 1965; delta method)";
static const char m_asym_q_deff[] = "asymptotic normal (order-statistic standard errors "
	"times the design effect of runs nested in blocks, Kish 1965)";
static const char m_asym_q_pct_deff[] = "asymptotic normal (order-statistic standard "
	"errors times the design effect of runs nested in blocks, Kish 1965; delta method)";

/* The size above which an interval is asymptotic (struct boot_opts). */
static size_t max_boot_n(const struct boot_opts *o)
{
	return o && o->max_boot_n ? o->max_boot_n : DEFAULT_MAX_BOOT_N;
}

/* One of the two samples. */
struct side {
	const double *x;	/* as given (the mean and variance sum in this order) */
	size_t n;
	const double *sorted;	/* ascending, or NULL: then work */
	double *work;		/* the values in any order, reordered by
				   selection (the asymptotic quantile path) */
	double T;		/* the statistic on the whole sample */
	double var;		/* sample variance (mean, asymptotic path) */
};

/*
 * The 64-bit report seed to MT19937's 32-bit seed: GSL's mt19937 keeps
 * only the low 32 bits, so fold all 64 through the SplitMix64 finaliser
 * (Steele, Lea & Flood, OOPSLA 2014) first.  Integer-only: the same on
 * every machine.
 */
static unsigned long seed32(uint64_t s)
{
	s += 0x9e3779b97f4a7c15ULL;
	s = (s ^ (s >> 30)) * 0xbf58476d1ce4e5b9ULL;
	s = (s ^ (s >> 27)) * 0x94d049bb133111ebULL;
	s ^= s >> 31;
	return (unsigned long)(s & 0xffffffffUL);
}

/*
 * Uniform integers in [0, n) without bias from MT19937's 32-bit outputs:
 * Lemire's multiply-shift with rejection ("Fast random integer generation
 * in an interval", ACM TOMACS 29(1), 2019): x n / 2^w, rejecting x when
 * (x n mod 2^w) < 2^w mod n.  For n <= 2^16 each output gives two 16-bit
 * x (w = 16), halving the calls to the generator, which dominate the
 * bootstrap's time; w = 32 otherwise.  Integer-only, so reproducible.
 */
struct draws {
	gsl_rng *r;
	uint32_t half;		/* the unused upper half of the last output */
	int have;
};

static inline uint32_t draw16(struct draws *d, uint32_t n, uint32_t t)
{
	for (;;) {
		uint32_t x, m;

		if (d->have) {
			x = d->half;
			d->have = 0;
		} else {
			uint32_t w = (uint32_t)gsl_rng_get(d->r);
			x = w & 0xffff;
			d->half = w >> 16;
			d->have = 1;
		}
		m = x * n;
		if ((m & 0xffff) >= t)
			return m >> 16;
	}
}

static inline uint32_t draw32(struct draws *d, uint32_t n, uint32_t t)
{
	for (;;) {
		uint64_t m = (uint64_t)(uint32_t)gsl_rng_get(d->r) * n;
		if ((uint32_t)m >= t)
			return (uint32_t)(m >> 32);
	}
}

/*
 * T of one resample of s.  Indices are drawn into the sorted copy, so the
 * interval does not depend on the order of the input, and index order is
 * value order: for a quantile the resample is kept as counts per index
 * (cnt, n words) and its quantile read by stats_quantile_counts(), the
 * same value to the bit as stats_quantile_select on the resample.
 */
static double resample(const struct side *s, enum stat_kind kind, double p,
		       struct draws *d, uint32_t *cnt)
{
	uint32_t n = (uint32_t)s->n, t;
	int small = n <= 65536;
	double sum = 0;

	t = small ? (uint32_t)(65536 % n) : (uint32_t)(-n) % n;
	if (kind == STATK_MEAN) {
		for (uint32_t i = 0; i < n; i++)
			sum += s->sorted[small ? draw16(d, n, t) : draw32(d, n, t)];
		return sum / n;
	}
	memset(cnt, 0, n * sizeof(*cnt));
	for (uint32_t i = 0; i < n; i++)
		cnt[small ? draw16(d, n, t) : draw32(d, n, t)]++;
	return stats_quantile_counts(s->sorted, cnt, n, n, p);
}

unsigned stats_boot_replicates(unsigned B, double conf)
{
	double tail = (1 - (conf > 0 && conf < 1 ? conf : 0.95)) / 2, need;

	B = B ? B : DEFAULT_B;
	need = ceil(STATS_BOOT_TAIL / tail - 1e-9);
	if (need > STATS_BOOT_MAX_B)
		need = STATS_BOOT_MAX_B;
	return need > B ? (unsigned)need : B;
}

/* theta(Tb, Tv) for the absolute (pct = 0) or relative (pct = 1) dilation */
static double theta(double tb, double tv, int pct)
{
	return pct ? 100.0 * (tv - tb) / tb : tv - tb;
}

/*
 * T of s without its observation i (the jackknife), O(1) each:
 *  - mean: (sum - x_i) / (n - 1);
 *  - type-7 quantile: the sorted sample without position i is
 *    r[k] = s[k] (k < i), s[k+1] (k >= i), and Q = (1-d) r[j] + d r[j+1]
 *    with h = (n-2)p, j = floor(h), d = h - j.
 * So the jackknife costs O(n) after the one sort, never O(n^2).
 */
static double leave_one_out(const struct side *s, enum stat_kind kind, double p,
			    double sum, size_t i)
{
	const double *v = s->sorted;
	size_t m = s->n - 1, j;
	double h, d, lo, up;

	if (kind == STATK_MEAN)
		return (sum - v[i]) / (double)m;
	h = (double)(m - 1) * p;
	j = (size_t)h;
	d = h - (double)j;
	lo = v[j < i ? j : j + 1];
	if (j == m - 1)
		return lo;
	up = v[j + 1 < i ? j + 1 : j + 2];
	return (1 - d) * lo + d * up;
}

/*
 * BCa acceleration from jackknife influence values, for two independent
 * samples (Davison & Hinkley, "Bootstrap Methods and their Application",
 * 1997, 3.2.1 and 5.3.2; Efron & Tibshirani 1993, (14.15) for one sample):
 *   l_si = (n_s - 1) (mean_i theta_(s,i) - theta_(s,i)),
 *   a = sum_s n_s^-3 sum_i l_si^3 / (6 (sum_s n_s^-2 sum_i l_si^2)^(3/2)).
 * Leaving out one observation of the baseline changes Tb only, of the
 * variant Tv only.  0 when all l are 0.
 */
static double acceleration(const struct side *b, const struct side *v,
			   enum stat_kind kind, double p, int pct, double *jk)
{
	const struct side *sd[2] = { b, v };
	double num = 0, den = 0;

	for (int k = 0; k < 2; k++) {
		const struct side *s = sd[k];
		double sum = 0, mean = 0, n = (double)s->n, s2 = 0, s3 = 0;

		if (kind == STATK_MEAN)
			for (size_t i = 0; i < s->n; i++)
				sum += s->sorted[i];
		for (size_t i = 0; i < s->n; i++) {
			double t = leave_one_out(s, kind, p, sum, i);
			jk[i] = k == 0 ? theta(t, v->T, pct) : theta(b->T, t, pct);
			mean += jk[i];
		}
		mean /= n;
		for (size_t i = 0; i < s->n; i++) {
			double l = (n - 1) * (mean - jk[i]);
			s2 += l * l;
			s3 += l * l * l;
		}
		num += s3 / (n * n * n);
		den += s2 / (n * n);
	}
	if (!(den > 0) || !isfinite(num))
		return 0;
	return num / (6.0 * pow(den, 1.5));
}

/*
 * The interval from B sorted replicates: the percentile interval
 * [Q(alpha/2), Q(1-alpha/2)] (Efron & Tibshirani 1993, 13.3), or BCa
 * (Efron 1987; Efron & Tibshirani 1993, 14.3):
 *   z0 = Phi^-1(#{theta* < theta} + #{theta* = theta} / 2) / B),
 *   alpha1 = Phi(z0 + (z0 + z_(alpha/2)) / (1 - a (z0 + z_(alpha/2)))),
 *   alpha2 = the same with z_(1-alpha/2), interval [Q(alpha1), Q(alpha2)];
 * Q is the type-7 quantile of the replicates.  The half-count of ties is
 * a standard refinement for the discrete bootstrap distributions of
 * quantiles (Davison & Hinkley 1997, 5.3.2 note).  When z0 is infinite
 * (theta outside all replicates) BCa is undefined: percentile is used.
 */
static void interval_from(double *rep, unsigned B, double est, double conf, int bca,
			  double a, struct interval *ci)
{
	double alpha = 1 - conf, p1 = alpha / 2, p2 = 1 - alpha / 2;

	ci->method = m_pct;
	if (bca) {
		size_t below = 0, equal = 0;
		double lo = rep[0], hi = rep[0], z0, zl, zh;

		/* BCa's counts and the replicates' range in one pass, no
		 * sort: the two quantiles below are selected */
		for (unsigned i = 0; i < B; i++) {
			if (rep[i] < est)
				below++;
			else if (rep[i] == est)
				equal++;
			lo = rep[i] < lo ? rep[i] : lo;
			hi = rep[i] > hi ? rep[i] : hi;
		}
		if (lo != hi) {	/* else every replicate the same: percentile */
			z0 = gsl_cdf_ugaussian_Pinv((below + 0.5 * equal) / B);
			if (isfinite(z0)) {
				zl = z0 + gsl_cdf_ugaussian_Pinv(p1);
				zh = z0 + gsl_cdf_ugaussian_Pinv(p2);
				p1 = gsl_cdf_ugaussian_P(z0 + zl / (1 - a * zl));
				p2 = gsl_cdf_ugaussian_P(z0 + zh / (1 - a * zh));
				ci->method = m_bca;
			} else {
				ci->method = m_bca_undef;
			}
		}
	}
	ci->has_ci = 1;
	ci->level = conf;
	/* each by selection (stats_quantile_select): the sorted quantile to
	 * the bit, in O(B), where a sort of B replicates was O(B log B) */
	ci->lo = stats_quantile_select(rep, B, p1);
	ci->hi = stats_quantile_select(rep, B, p2);
}

/* A side's order-statistic CI of its p-quantile: from its sorted values, or
 * by selection in its work copy. */
static int side_quantile_ci(const struct side *s, double p, double conf, struct interval *q)
{
	return s->sorted ? stats_quantile_ci(s->sorted, s->n, p, conf, q) :
		stats_quantile_ci_select(s->work, s->n, p, conf, q);
}

/*
 * Asymptotic normal intervals (for large samples):
 *  mean:     se^2 = s_b^2 / n_b + s_v^2 / n_v (Welch 1947);
 *  quantile: se_s = (hi_s - lo_s) / (2 z(level_s)) from each side's
 *            order-statistic CI (its exact level), se^2 = se_b^2 + se_v^2;
 *  abs:      d +- z(1 - alpha/2) se;
 *  pct:      delta method (Casella & Berger, "Statistical Inference",
 *            2002, 5.5.4) for 100 (Tv / Tb - 1):
 *            se_pct = 100 sqrt(se_v^2 / Tb^2 + Tv^2 se_b^2 / Tb^4);
 *  nested:   se_b^2 and se_v^2 times their design effects (deff > 1).
 */
static int asymptotic(const struct side *b, const struct side *v, enum stat_kind kind,
		      double p, const struct boot_opts *o, struct dilation *out)
{
	double conf = o->conf;
	int deff = o->deff_base > 1 || o->deff_var > 1;
	double z = gsl_cdf_ugaussian_Pinv(1 - (1 - conf) / 2), seb2, sev2, se, sep;
	const char *m_abs, *m_rel;

	if (kind == STATK_MEAN) {
		seb2 = b->var / (double)b->n;
		sev2 = v->var / (double)v->n;
		m_abs = deff ? m_asym_mean_deff : m_asym_mean;
		m_rel = deff ? m_asym_mean_pct_deff : m_asym_mean_pct;
	} else {
		struct interval qb, qv;
		int ret;

		ret = side_quantile_ci(b, p, conf, &qb);
		if (ret < 0)
			return ret;
		ret = side_quantile_ci(v, p, conf, &qv);
		if (ret < 0)
			return ret;
		if (!qb.has_ci || !qv.has_ci) {
			out->ci_abs.reason = out->ci_pct.reason =
				!qb.has_ci ? qb.reason : qv.reason;
			return 0;
		}
		se = (qb.hi - qb.lo) / (2 * gsl_cdf_ugaussian_Pinv(1 - (1 - qb.level) / 2));
		seb2 = se * se;
		se = (qv.hi - qv.lo) / (2 * gsl_cdf_ugaussian_Pinv(1 - (1 - qv.level) / 2));
		sev2 = se * se;
		m_abs = deff ? m_asym_q_deff : m_asym_q;
		m_rel = deff ? m_asym_q_pct_deff : m_asym_q_pct;
	}
	if (o->deff_base > 1)
		seb2 *= o->deff_base;
	if (o->deff_var > 1)
		sev2 *= o->deff_var;
	se = sqrt(seb2 + sev2);
	out->ci_abs = (struct interval){ .has_ci = 1, .lo = out->abs - z * se,
		.hi = out->abs + z * se, .level = conf, .method = m_abs };
	if (b->T != 0.0) {
		sep = 100.0 * sqrt(sev2 / (b->T * b->T) +
				   v->T * v->T * seb2 / (b->T * b->T * b->T * b->T));
		out->ci_pct = (struct interval){ .has_ci = 1, .lo = out->pct - z * sep,
			.hi = out->pct + z * sep, .level = conf, .method = m_rel };
	}
	return 0;
}

/* -EINVAL's cases of stats_dilation(), but for NULL arrays. */
static int bad_args(size_t nb, size_t nv, enum stat_kind kind, double p,
		    const struct boot_opts *o)
{
	return !nb || !nv || !(o->conf > 0 && o->conf < 1) ||
		(kind == STATK_QUANTILE && !(p >= 0 && p <= 1)) ||
		(kind != STATK_MEAN && kind != STATK_QUANTILE) ||
		nb > UINT32_MAX || nv > UINT32_MAX;
}

static void side_init(struct side *s, const struct stats_sample *x, enum stat_kind kind,
		      double p)
{
	s->x = x->x;
	s->n = x->n;
	s->sorted = x->sorted;
	if (kind == STATK_MEAN && x->sum) {
		s->T = x->sum->mean;	/* the same GSL calls below, done once */
		s->var = s->n > 1 ? x->sum->var : NAN;
	} else if (kind == STATK_MEAN) {
		s->T = gsl_stats_mean(s->x, 1, s->n);
		s->var = s->n > 1 ? gsl_stats_variance_m(s->x, 1, s->n, s->T) : NAN;
	} else {
		s->T = stats_quantile_sorted(s->sorted, s->n, p);
		s->var = NAN;
	}
}

/* The estimates of a dilation whose sides' statistics are set, its
 * intervals still to come: 1 when a side is too small for any (said), else
 * 0. */
static int dilation_estimate(const struct side *b, const struct side *v,
			     const struct boot_opts *o, struct dilation *out)
{
	out->base = b->T;
	out->var = v->T;
	out->abs = v->T - b->T;
	out->pct = stats_pct_change(b->T, v->T);
	out->ci_abs.lo = out->ci_abs.hi = out->ci_pct.lo = out->ci_pct.hi = NAN;
	out->ci_abs.level = out->ci_pct.level = o->conf;
	if (b->n < 2 || v->n < 2) {
		out->ci_abs.reason = out->ci_pct.reason =
			"n < 2 on a side: no interval for a dilation";
		return 1;
	}
	if (b->T == 0.0)
		out->ci_pct.reason = "baseline statistic is 0: no % dilation";
	return 0;
}

int stats_dilation_sorted(const struct stats_sample *base, const struct stats_sample *var,
			  enum stat_kind kind, double p, const struct boot_opts *o,
			  struct dilation *out)
{
	struct boot_opts def = { .conf = 0.95 };
	struct side b = { 0 }, v = { 0 };
	double *rep_abs = NULL, *rep_pct = NULL, *jk = NULL;
	uint32_t *work = NULL;
	gsl_rng *rng = NULL;
	struct draws dr = { 0 };
	size_t max_n, nb, nv;
	unsigned B;
	int ret = 0, pct_ok;

	memset(out, 0, sizeof(*out));
	if (!o)
		o = &def;
	if (!base || !var || !base->x || !base->sorted || !var->x || !var->sorted ||
	    bad_args(base->n, var->n, kind, p, o) ||
	    (base->sum && base->sum->n != base->n) || (var->sum && var->sum->n != var->n))
		return -EINVAL;
	nb = base->n;
	nv = var->n;
	if (!stats_sorted_finite(base->sorted, nb) || !stats_sorted_finite(var->sorted, nv))
		return -EDOM;
	B = stats_boot_replicates(o->B, o->conf);
	max_n = max_boot_n(o);

	side_init(&b, base, kind, p);
	side_init(&v, var, kind, p);
	if (dilation_estimate(&b, &v, o, out))
		goto out;
	if (nb > max_n || nv > max_n) {
		ret = asymptotic(&b, &v, kind, p, o, out);
		goto out;
	}

	rep_abs = malloc(B * sizeof(*rep_abs));
	rep_pct = malloc(B * sizeof(*rep_pct));
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (kind == STATK_QUANTILE)
		work = malloc((nb > nv ? nb : nv) * sizeof(*work));
	if (!rep_abs || !rep_pct || !rng || (kind == STATK_QUANTILE && !work)) {
		ret = -ENOMEM;
		goto out;
	}
	gsl_rng_set(rng, seed32(o->seed));
	dr.r = rng;
	pct_ok = b.T != 0.0;
	for (unsigned i = 0; i < B; i++) {
		double tb = resample(&b, kind, p, &dr, work);
		double tv = resample(&v, kind, p, &dr, work);

		rep_abs[i] = tv - tb;
		if (tb == 0.0)
			pct_ok = 0;
		else
			rep_pct[i] = 100.0 * (tv - tb) / tb;
	}
	out->B = B;

	if (o->bca) {
		jk = malloc((nb > nv ? nb : nv) * sizeof(*jk));
		if (!jk) {
			ret = -ENOMEM;
			goto out;
		}
	}
	interval_from(rep_abs, B, out->abs, o->conf, o->bca,
		      o->bca ? acceleration(&b, &v, kind, p, 0, jk) : 0, &out->ci_abs);
	if (pct_ok)
		interval_from(rep_pct, B, out->pct, o->conf, o->bca,
			      o->bca ? acceleration(&b, &v, kind, p, 1, jk) : 0,
			      &out->ci_pct);
	else if (b.T != 0.0)
		out->ci_pct.reason = "a resample's baseline statistic is 0: "
			"no % interval";
out:
	gsl_rng_free(rng);
	free(rep_abs);
	free(rep_pct);
	free(work);
	free(jk);
	if (ret < 0)
		memset(out, 0, sizeof(*out));
	return ret;
}

/*
 * stats_dilation() of a quantile above the size limit: the asymptotic
 * interval reads four order statistics a side (the quantile's two and its
 * CI's two), had by selection in a copy instead of a sorted copy - the
 * same values, so the same interval to the bit, in expected O(n) (the A/A
 * noise estimate's halves of a 10^6-run baseline were two sorts).
 */
static int dilation_selected(const double *base, size_t nb, const double *var, size_t nv,
			     double p, const struct boot_opts *o, struct dilation *out)
{
	struct side b = { .x = base, .n = nb, .var = NAN }, v = { .x = var, .n = nv, .var = NAN };
	int ret = -ENOMEM;

	b.work = malloc(nb * sizeof(double));
	v.work = malloc(nv * sizeof(double));
	if (b.work && v.work) {
		memcpy(b.work, base, nb * sizeof(double));
		memcpy(v.work, var, nv * sizeof(double));
		b.T = stats_quantile_select(b.work, nb, p);
		v.T = stats_quantile_select(v.work, nv, p);
		ret = dilation_estimate(&b, &v, o, out) ? 0 :
			asymptotic(&b, &v, STATK_QUANTILE, p, o, out);
	}
	free(b.work);
	free(v.work);
	if (ret < 0)
		memset(out, 0, sizeof(*out));
	return ret;
}

int stats_dilation(const double *base, size_t nb, const double *var, size_t nv,
		   enum stat_kind kind, double p, const struct boot_opts *o,
		   struct dilation *out)
{
	struct boot_opts def = { .conf = 0.95 };
	struct stats_sample b = { .x = base, .n = nb }, v = { .x = var, .n = nv };
	double *bs = NULL, *vs = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!base || !var || bad_args(nb, nv, kind, p, o ? o : &def))
		return -EINVAL;
	if (!stats_all_finite(base, nb) || !stats_all_finite(var, nv))
		return -EDOM;
	if (kind == STATK_QUANTILE &&
	    (nb > max_boot_n(o) || nv > max_boot_n(o)))
		return dilation_selected(base, nb, var, nv, p, o ? o : &def, out);
	b.sorted = bs = stats_sorted_copy(base, nb);
	v.sorted = vs = stats_sorted_copy(var, nv);
	ret = bs && vs ? stats_dilation_sorted(&b, &v, kind, p, o, out) : -ENOMEM;
	free(bs);
	free(vs);
	return ret;
}

/*
 * The change of a dilation between two studies (stats.h): four independent
 * samples, each resampled on its own as in stats_dilation (the same draws
 * from sorted copies), pct* = 100 (Tv1* / Tb1* - Tv0* / Tb0*), the
 * percentile interval of the B replicates (Efron & Tibshirani 1993, ch. 13).
 */
int stats_dilation_change(const double *const x[4], const size_t n[4], enum stat_kind kind,
			  double p, const struct boot_opts *o, double *est, struct interval *ci)
{
	struct boot_opts def = { .conf = 0.95 };
	struct side s[4] = { 0 };
	double *sorted[4] = { 0 }, *rep = NULL, T[4];
	uint32_t *work = NULL;
	gsl_rng *rng = NULL;
	struct draws dr = { 0 };
	size_t max_n = 0;
	unsigned B;
	int ret = 0;

	memset(ci, 0, sizeof(*ci));
	ci->lo = ci->hi = *est = NAN;
	if (!o)
		o = &def;
	for (int k = 0; k < 4; k++) {
		if (!x[k] || bad_args(n[k], n[k], kind, p, o))
			return -EINVAL;
		if (!stats_all_finite(x[k], n[k]))
			return -EDOM;
		if (n[k] > max_n)
			max_n = n[k];
	}
	B = stats_boot_replicates(o->B, o->conf);
	ci->level = o->conf;
	for (int k = 0; k < 4; k++) {
		struct stats_sample sm = { .x = x[k], .n = n[k] };
		if (!(sorted[k] = stats_sorted_copy(x[k], n[k]))) {
			ret = -ENOMEM;
			goto out;
		}
		sm.sorted = sorted[k];
		side_init(&s[k], &sm, kind, p);
		T[k] = s[k].T;
	}
	if (T[0] == 0 || T[2] == 0) {
		ci->reason = "a baseline statistic is 0: no % dilation";
		goto out;
	}
	*est = 100 * (T[3] / T[2] - T[1] / T[0]);
	for (int k = 0; k < 4; k++)
		if (n[k] < 2) {
			ci->reason = "n < 2 on a side: no interval for a dilation";
			goto out;
		}
	rep = malloc(B * sizeof(*rep));
	work = malloc(max_n * sizeof(*work));
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!rep || !work || !rng) {
		ret = -ENOMEM;
		goto out;
	}
	gsl_rng_set(rng, seed32(o->seed));
	dr.r = rng;
	for (unsigned i = 0; i < B; i++) {
		double t[4];
		for (int k = 0; k < 4; k++)
			t[k] = resample(&s[k], kind, p, &dr, work);
		if (t[0] == 0 || t[2] == 0) {
			ci->reason = "a resample's baseline statistic is 0: no % interval";
			goto out;
		}
		rep[i] = 100 * (t[3] / t[2] - t[1] / t[0]);
	}
	interval_from(rep, B, *est, o->conf, 0, 0, ci);
out:
	gsl_rng_free(rng);
	free(rep);
	free(work);
	for (int k = 0; k < 4; k++)
		free(sorted[k]);
	if (ret < 0) {
		memset(ci, 0, sizeof(*ci));
		ci->lo = ci->hi = *est = NAN;
	}
	return ret;
}
