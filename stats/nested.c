/* nested.c - two-level variance components (runs nested in boots); see nested.h */
#include "nested.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char m_t_means[] = "Student t on the block means (k - 1 df)";
static const char r_one_block[] = "one block: the between-block variance needs "
	"at least 2 blocks (boots)";
static const char r_one_value[] = "one value per block: the within-block "
	"variance needs a block with at least 2 values (runs)";
static const char r_ci_one_block[] = "one block: a CI from block means needs "
	"at least 2 blocks";

/*
 * The values grouped by block: idx[start[j]] .. idx[start[j+1] - 1] are the
 * indices into x of block j, blocks in ascending id order, indices
 * ascending within a block.
 */
struct groups {
	size_t k;
	size_t *idx;		/* n */
	size_t *start;		/* k + 1 */
	size_t max_n;		/* largest block */
};

struct id_index {
	int id;
	size_t i;
};

static int cmp_id_index(const void *a, const void *b)
{
	const struct id_index *p = a, *q = b;

	if (p->id != q->id)
		return p->id < q->id ? -1 : 1;
	return p->i < q->i ? -1 : p->i > q->i;
}

static void groups_free(struct groups *g)
{
	free(g->idx);
	free(g->start);
	g->idx = NULL;
	g->start = NULL;
}

/* Are ids[0..n-1] in ascending order (ties allowed)?  Then their stable
 * sort by id is the identity. */
static int ids_ascending(const int *ids, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (ids[i] < ids[i - 1])
			return 0;
	return 1;
}

/* n >= 1.  -ENOMEM on allocation failure (g zeroed). */
static int groups_make(const int *block, size_t n, struct groups *g)
{
	struct id_index *p;
	size_t k, j;

	memset(g, 0, sizeof(*g));
	if (n > SIZE_MAX / sizeof(*p) - 1)
		return -ENOMEM;
	p = malloc(n * sizeof(*p));
	g->idx = malloc(n * sizeof(size_t));
	if (!p || !g->idx)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		p[i].id = block[i];
		p[i].i = i;
	}
	/* a plan stores its blocks in order: no sort to do then */
	if (!ids_ascending(block, n))
		qsort(p, n, sizeof(*p), cmp_id_index);
	k = 1;
	for (size_t i = 1; i < n; i++)
		k += p[i].id != p[i - 1].id;
	g->start = malloc((k + 1) * sizeof(size_t));
	if (!g->start)
		goto nomem;
	j = 0;
	g->start[0] = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && p[i].id != p[i - 1].id)
			g->start[++j] = i;
		g->idx[i] = p[i].i;
	}
	g->start[k] = n;
	g->k = k;
	for (j = 0; j < k; j++)
		if (g->start[j + 1] - g->start[j] > g->max_n)
			g->max_n = g->start[j + 1] - g->start[j];
	free(p);
	return 0;
nomem:
	free(p);
	groups_free(g);
	return -ENOMEM;
}

static void result_init(struct nested_result *out)
{
	memset(out, 0, sizeof(*out));
	out->grand_mean = out->mean_of_means = NAN;
	out->ms_between = out->ms_within = NAN;
	out->n0 = NAN;
	out->var_within = out->var_between = out->icc = NAN;
	out->f = out->p_value = NAN;
	out->mean_ci.lo = out->mean_ci.hi = NAN;
	out->mean_ci.level = NAN;
	out->mean_ci.method = m_t_means;
}

/*
 * One-way ANOVA with random block effects (Searle, Casella & McCulloch
 * 1992, ch. 3; Montgomery, "Design and Analysis of Experiments", the
 * random effects model):
 *   SSW = sum_j sum_i (x_ji - m_j)^2,  MSW = SSW / (N - k),
 *   SSB = sum_j n_j (m_j - m)^2,       MSB = SSB / (k - 1),
 *   E[MSW] = sigma_w^2,  E[MSB] = sigma_w^2 + n0 sigma_b^2,
 * so the moment (ANOVA) estimates are sigma_w^2 = MSW and sigma_b^2 =
 * (MSB - MSW) / n0, clamped at 0.  Means are taken about each block's
 * first value (shifted data): exact for constant blocks and accurate for
 * timings with a large offset.
 */
int nested_components(const double *x, const int *block, size_t n, double conf,
		      struct nested_result *out)
{
	struct groups g;
	double *mean;
	double ssw = 0, ssb = 0, sbm = 0, sum_nj2 = 0, gm, mom, base;
	size_t k;
	int rc;

	if (!out)
		return -EINVAL;
	result_init(out);
	if (!x || !block || n == 0 || !(conf > 0 && conf < 1)) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	if (!stats_all_finite(x, n)) {
		memset(out, 0, sizeof(*out));
		return -EDOM;
	}
	rc = groups_make(block, n, &g);
	if (rc == 0 && !(mean = malloc(g.k * sizeof(double)))) {
		groups_free(&g);
		rc = -ENOMEM;
	}
	if (rc) {
		memset(out, 0, sizeof(*out));
		return rc;
	}
	k = g.k;

	/* block means, SSW */
	for (size_t j = 0; j < k; j++) {
		size_t a = g.start[j], b = g.start[j + 1], nj = b - a;
		double x0 = x[g.idx[a]], s = 0;

		for (size_t i = a; i < b; i++)
			s += x[g.idx[i]] - x0;
		mean[j] = x0 + s / (double)nj;
		for (size_t i = a; i < b; i++) {
			double d = x[g.idx[i]] - mean[j];
			ssw += d * d;
		}
		sum_nj2 += (double)nj * (double)nj;
	}
	/* grand mean (weighted) and mean of block means (unweighted) */
	base = x[g.idx[0]];
	gm = 0;
	mom = 0;
	for (size_t j = 0; j < k; j++) {
		double nj = (double)(g.start[j + 1] - g.start[j]);
		gm += nj * (mean[j] - base);
		mom += mean[j] - base;
	}
	gm = base + gm / (double)n;
	mom = base + mom / (double)k;
	for (size_t j = 0; j < k; j++) {
		double nj = (double)(g.start[j + 1] - g.start[j]);
		double d = mean[j] - gm, e = mean[j] - mom;
		ssb += nj * d * d;
		sbm += e * e;
	}

	out->n_groups = k;
	out->n = n;
	out->grand_mean = gm;
	out->mean_of_means = mom;
	out->df_between = (double)(k - 1);
	out->df_within = (double)(n - k);

	if (k == 1) {
		/* within variance of the single block only */
		out->df_within = (double)(n - 1);
		if (n >= 2)
			out->ms_within = out->var_within = ssw / (double)(n - 1);
		out->reason = r_one_block;
		out->mean_ci.reason = r_ci_one_block;
		goto done;
	}

	out->ms_between = ssb / (double)(k - 1);
	out->n0 = ((double)n - sum_nj2 / (double)n) / (double)(k - 1);

	/* CI of the mean from the k block means: t with k - 1 df (KJ 2013) */
	{
		double t = gsl_cdf_tdist_Pinv(1 - (1 - conf) / 2, (double)(k - 1));
		double se = sqrt(sbm / (double)(k - 1) / (double)k);

		out->mean_ci.has_ci = 1;
		out->mean_ci.lo = mom - t * se;
		out->mean_ci.hi = mom + t * se;
		out->mean_ci.level = conf;
	}

	if (n == k) {
		out->reason = r_one_value;
		goto done;
	}

	out->ms_within = ssw / (double)(n - k);
	out->var_within = out->ms_within;
	out->var_between = (out->ms_between - out->ms_within) / out->n0;
	if (!(out->var_between > 0))
		out->var_between = 0;
	if (out->var_between + out->var_within > 0)
		out->icc = out->var_between / (out->var_between + out->var_within);
	else
		out->icc = 0;
	if (out->ms_within > 0) {
		out->f = out->ms_between / out->ms_within;
		out->p_value = gsl_cdf_fdist_Q(out->f, out->df_between, out->df_within);
	} else if (out->ms_between > 0) {
		out->f = INFINITY;
		out->p_value = 0;
	}			/* else: 0 / 0, F and p stay NaN */
	out->ok = 1;
done:
	free(mean);
	groups_free(&g);
	return 0;
}

unsigned nested_optimal_runs(const struct nested_result *r, double boot_cost_s,
			     double run_cost_s)
{
	double ratio, root, c;

	if (!r || !r->ok)
		return 0;
	if (!(isfinite(boot_cost_s) && boot_cost_s > 0) ||
	    !(isfinite(run_cost_s) && run_cost_s > 0))
		return 0;
	if (!(r->var_between > 0) || !(r->var_within >= 0))
		return 0;
	ratio = boot_cost_s * r->var_within / (run_cost_s * r->var_between);
	if (isnan(ratio))
		return 0;
	root = sqrt(ratio);
	/* an exact square root (e.g. sqrt(400)) must not round up to the next
	 * integer through rounding error in the ratio: tolerance 1e-9 */
	c = ceil(root - 1e-9 * root);
	if (c < 1)
		return 1;
	if (!(c < (double)UINT_MAX))
		return UINT_MAX;
	return (unsigned)c;
}

size_t nested_resample_size(const int *block, size_t n)
{
	struct groups g;
	size_t cap;

	if (!block || n == 0)
		return 0;
	if (groups_make(block, n, &g))
		return SIZE_MAX;
	cap = g.k > SIZE_MAX / g.max_n ? SIZE_MAX : g.k * g.max_n;
	groups_free(&g);
	return cap;
}

/*
 * One side of a resample kept as counts (a quantile's bootstraps: paired,
 * and the walk's): the runs it draws from ascending (sorted, n of them)
 * and, in the order the resampling knows them, each run's index there
 * (rank; for the paired bootstrap, block k's runs at [off[k], off[k + 1])).
 * A resample counts the indices of the runs it draws (cnt) and reads its
 * quantile by stats_quantile_counts(): the value stats_quantile_select()
 * gives on the gathered runs, to the bit, without gathering or selecting.
 */
struct ranked {
	double *sorted;
	uint32_t *rank, *cnt;
	size_t *off, n;
};

static void ranked_free(struct ranked *r)
{
	free(r->sorted);
	free(r->rank);
	free(r->cnt);
	free(r->off);
	memset(r, 0, sizeof(*r));
}

/* The ranked side of x's blocks [s[k], e[k]) of idx, k < K, ordered by
 * stats_order() (ties in block order). */
static int ranked_make(const double *x, const size_t *idx, const size_t *s, const size_t *e,
		       size_t K, struct ranked *r)
{
	size_t n = 0, m, *order = NULL;
	double *v = NULL;

	memset(r, 0, sizeof(*r));
	for (size_t k = 0; k < K; k++)
		n += e[k] - s[k];
	if (n > UINT32_MAX)
		return -ENOMEM;
	r->n = n;
	m = n ? n : 1;
	r->sorted = malloc(m * sizeof(*r->sorted));
	r->rank = malloc(m * sizeof(*r->rank));
	r->cnt = malloc(m * sizeof(*r->cnt));
	r->off = malloc((K + 1) * sizeof(*r->off));
	order = malloc(m * sizeof(*order));
	v = malloc(m * sizeof(*v));
	if (!r->sorted || !r->rank || !r->cnt || !r->off || !order || !v)
		goto fail;
	n = 0;		/* the values in block order */
	for (size_t k = 0; k < K; k++) {
		r->off[k] = n;
		for (size_t i = s[k]; i < e[k]; i++)
			v[n++] = x[idx[i]];
	}
	r->off[K] = n;
	if (n && stats_order(v, n, order) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		r->sorted[i] = v[order[i]];
		r->rank[order[i]] = (uint32_t)i;
	}
	free(order);
	free(v);
	return 0;
fail:
	free(order);
	free(v);
	ranked_free(r);
	return -ENOMEM;
}

/* A new resample: no run counted. */
static void ranked_clear(struct ranked *r)
{
	memset(r->cnt, 0, r->n * sizeof(*r->cnt));
}

/* The p-quantile of r's resample of m runs. */
static double ranked_quantile(const struct ranked *r, size_t m, double p)
{
	return stats_quantile_counts(r->sorted, r->cnt, r->n, m, p);
}

/* Count block j's runs into r's resample; their number. */
static size_t ranked_add(struct ranked *r, size_t j)
{
	for (size_t t = r->off[j]; t < r->off[j + 1]; t++)
		r->cnt[r->rank[t]]++;
	return r->off[j + 1] - r->off[j];
}

/*
 * A hierarchy for the resampling walk: `levels` stages (2: blocks, runs;
 * 3: nodes, boots, runs), k units at the top.  Unit u of stage s < levels - 1
 * holds units off[s][u] .. off[s][u + 1] - 1 of stage s + 1; unit u of the
 * last stage is the value x[idx[u]].
 */
struct walk {
	unsigned levels;
	size_t k, n;		/* n: the values (units of the last stage) */
	const size_t *idx;
	const size_t *off[2];
};

static struct walk walk2(const struct groups *g)
{
	return (struct walk){ .levels = 2, .k = g->k, .n = g->start[g->k], .idx = g->idx,
			      .off = { g->start } };
}

/* Stage s of the walk: n draws with replacement among units a .. a + n - 1,
 * then the same within each drawn unit down to the values (Davison &
 * Hinkley 1997, sec. 3.8).  A value's out_block (may be NULL) is the top
 * draw it belongs to (tag below the top).  With q, a value is counted
 * (q->cnt at its rank among the values, unit order) instead of written to
 * out.  Returns the new size of out. */
static size_t walk_draw(const double *x, const struct walk *w, unsigned s, size_t a, size_t n,
			gsl_rng *rng, double *out, int *out_block, struct ranked *q, int tag,
			size_t o)
{
	for (size_t d = 0; d < n; d++) {
		size_t u = a + gsl_rng_uniform_int(rng, n);

		if (s + 1 < w->levels) {
			o = walk_draw(x, w, s + 1, w->off[s][u], w->off[s][u + 1] - w->off[s][u],
				      rng, out, out_block, q, s ? tag : (int)d, o);
			continue;
		}
		if (q) {
			q->cnt[q->rank[u]]++;
			o++;
			continue;
		}
		if (out_block)
			out_block[o] = tag;
		out[o++] = x[w->idx[u]];
	}
	return o;
}

/* One resample of the whole hierarchy into out; its size. */
static size_t walk_resample(const double *x, const struct walk *w, gsl_rng *rng, double *out,
			    int *out_block)
{
	return walk_draw(x, w, 0, 0, w->k, rng, out, out_block, NULL, 0, 0);
}

/* Davison & Hinkley 1997, sec. 3.8: stage 1 draws blocks, stage 2 values. */
int nested_resample(const double *x, const int *block, size_t n, gsl_rng *rng,
		    double *out, int *out_block, size_t cap, size_t *out_n)
{
	struct groups g;
	struct walk w;
	unsigned long range;
	int rc;

	if (out_n)
		*out_n = 0;
	if (!x || !block || n == 0 || !rng || !out || !out_n)
		return -EINVAL;
	rc = groups_make(block, n, &g);
	if (rc)
		return rc;
	/* gsl_rng_uniform_int(r, m) needs m <= max - min */
	range = gsl_rng_max(rng) - gsl_rng_min(rng);
	if (g.k > range || g.max_n > range || g.k > INT_MAX) {
		groups_free(&g);
		return -EINVAL;
	}
	if (g.k > SIZE_MAX / g.max_n || cap < g.k * g.max_n) {
		groups_free(&g);
		return -ENOSPC;
	}
	w = walk2(&g);
	*out_n = walk_resample(x, &w, rng, out, out_block);
	groups_free(&g);
	return 0;
}

static const char m_two_stage[] = "two-stage percentile bootstrap (boots drawn, then runs "
	"within each; Davison & Hinkley 1997, sec. 3.8)";

/* T of one side's resample (reordered in place for a quantile: selected,
 * not sorted, stats_quantile_select(), expected O(n)). */
static double statistic(double *x, size_t n, enum stat_kind kind, double p)
{
	double sum = 0;

	if (kind == STATK_QUANTILE)
		return stats_quantile_select(x, n, p);
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	return sum / (double)n;
}

/* The percentile intervals of B replicates (Efron & Tibshirani 1993,
 * ch. 13) into d->ci_abs and d->ci_pct (none, reason set, when no_pct:
 * a resampled baseline statistic was 0 or d's pct is NaN).  Their two
 * quantiles each by selection (stats_quantile_select: the sorted
 * quantile to the bit, in O(B); a sort of the 200,000 replicates of a
 * 99.99 % interval was a third of a bisect's CPU); reorders both. */
static void replicate_cis(double *abs_rep, double *pct_rep, unsigned B, double conf,
			  const char *method, int no_pct, struct dilation *d)
{
	d->ci_abs = (struct interval){
		.has_ci = 1, .level = conf, .method = method,
		.lo = stats_quantile_select(abs_rep, B, (1 - conf) / 2),
		.hi = stats_quantile_select(abs_rep, B, 1 - (1 - conf) / 2),
	};
	if (no_pct) {
		d->ci_pct = (struct interval){ .lo = NAN, .hi = NAN, .method = method,
			.reason = "a resampled baseline statistic is 0: no % interval" };
	} else {
		d->ci_pct = (struct interval){
			.has_ci = 1, .level = conf, .method = method,
			.lo = stats_quantile_select(pct_rep, B, (1 - conf) / 2),
			.hi = stats_quantile_select(pct_rep, B, 1 - (1 - conf) / 2),
		};
	}
}

/*
 * The hierarchical percentile bootstrap of a dilation, for any number of
 * levels: B replicates, each resampling both sides' whole hierarchies
 * (walk_resample(); cb, cv: the largest resample of each side), into
 * d->ci_abs, d->ci_pct and d->B (nested_dilation_ci()'s contract).
 * Every unit count of wb and wv must be drawable (<= the rng's range).
 */
static int walk_dilation(const double *bx, const struct walk *wb, size_t cb, const double *vx,
			 const struct walk *wv, size_t cv, enum stat_kind kind, double p,
			 const struct boot_opts *o, const char *method, struct dilation *d)
{
	double conf = o && o->conf > 0 ? o->conf : 0.95;
	unsigned B = stats_boot_replicates(o ? o->B : 0, conf);
	double *rb = malloc(cb * sizeof(double)), *rv = malloc(cv * sizeof(double));
	double *abs_rep = malloc(B * sizeof(double)), *pct_rep = malloc(B * sizeof(double));
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct ranked qb = { 0 }, qv = { 0 };
	size_t all_b[2] = { 0, wb->n }, all_v[2] = { 0, wv->n };
	int rc = -ENOMEM, zero_base = 0, counted = kind == STATK_QUANTILE;

	if (!rb || !rv || !abs_rep || !pct_rep || !rng)
		goto out;
	/* a quantile's resamples are counted, not gathered (struct ranked) */
	if (counted && (ranked_make(bx, wb->idx, &all_b[0], &all_b[1], 1, &qb) ||
			ranked_make(vx, wv->idx, &all_v[0], &all_v[1], 1, &qv)))
		goto out;
	gsl_rng_set(rng, (unsigned long)(o ? o->seed : 0));
	for (unsigned r = 0; r < B; r++) {
		size_t mb, mv;
		double tb, tv;

		if (counted) {
			ranked_clear(&qb);
			ranked_clear(&qv);
			mb = walk_draw(bx, wb, 0, 0, wb->k, rng, NULL, NULL, &qb, 0, 0);
			mv = walk_draw(vx, wv, 0, 0, wv->k, rng, NULL, NULL, &qv, 0, 0);
			tb = ranked_quantile(&qb, mb, p);
			tv = ranked_quantile(&qv, mv, p);
		} else {
			mb = walk_resample(bx, wb, rng, rb, NULL);
			mv = walk_resample(vx, wv, rng, rv, NULL);
			tb = statistic(rb, mb, kind, p);
			tv = statistic(rv, mv, kind, p);
		}

		abs_rep[r] = tv - tb;
		pct_rep[r] = 100 * (tv - tb) / tb;
		zero_base |= tb == 0;
	}
	replicate_cis(abs_rep, pct_rep, B, conf, method, zero_base || isnan(d->pct), d);
	d->B = B;
	rc = 0;
out:
	ranked_free(&qb);
	ranked_free(&qv);
	free(rb);
	free(rv);
	free(abs_rep);
	free(pct_rep);
	if (rng)
		gsl_rng_free(rng);
	return rc;
}

/* The arguments both dilation CIs refuse: -EINVAL, else 0. */
static int dilation_args(const struct boot_opts *o, enum stat_kind kind, double p)
{
	double conf = o && o->conf > 0 ? o->conf : 0.95;

	if (!(conf > 0 && conf < 1) || (kind == STATK_QUANTILE && !(p >= 0 && p <= 1)))
		return -EINVAL;
	return 0;
}

/* The largest value gsl_rng_uniform_int() draws among with walk_dilation()'s
 * generator. */
static unsigned long walk_range(void)
{
	return gsl_rng_mt19937->max - gsl_rng_mt19937->min;
}

int nested_dilation_ci(const double *bx, const int *bb, size_t nb, const double *vx,
		       const int *vb, size_t nv, enum stat_kind kind, double p,
		       const struct boot_opts *o, struct dilation *d)
{
	struct groups gb = { 0 }, gv = { 0 };
	struct walk wb, wv;
	size_t cb, cv;
	int rc;

	if (!bx || !vx || !bb || !vb || !d || !nb || !nv || dilation_args(o, kind, p))
		return -EINVAL;
	if ((rc = groups_make(bb, nb, &gb)) || (rc = groups_make(vb, nv, &gv)))
		goto out;
	rc = -ENOMEM;
	if (gb.k > SIZE_MAX / gb.max_n || gv.k > SIZE_MAX / gv.max_n)
		goto out;
	cb = gb.k * gb.max_n;
	cv = gv.k * gv.max_n;
	rc = -EINVAL;
	if (gb.k > walk_range() || gb.max_n > walk_range() || gb.k > INT_MAX ||
	    gv.k > walk_range() || gv.max_n > walk_range() || gv.k > INT_MAX)
		goto out;
	wb = walk2(&gb);
	wv = walk2(&gv);
	rc = walk_dilation(bx, &wb, cb, vx, &wv, cv, kind, p, o, m_two_stage, d);
out:
	groups_free(&gb);
	groups_free(&gv);
	return rc;
}
static const char m_paired[] = "paired percentile bootstrap (blocks measured on both sides "
	"drawn together: rounds, or ABBA boot pairs; Davison & Hinkley 1997, sec. 3.8)";

/* A side's runs ordered by block: idx[] into x, by block id then input
 * order. */
struct by_block {
	const int *block;
	size_t *idx, n;
};

static int cmp_by_block(const void *a, const void *b, void *ctx)
{
	const int *ids = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int bx = ids[x], byy = ids[y];
	return bx != byy ? (bx > byy) - (bx < byy) : (x > y) - (x < y);
}

static int by_block_make(const int *block, size_t n, struct by_block *s)
{
	s->block = block;
	s->n = n;
	if (!(s->idx = malloc(n * sizeof(*s->idx))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s->idx[i] = i;
	if (!ids_ascending(block, n))
		qsort_r(s->idx, n, sizeof(*s->idx), cmp_by_block, (void *)block);
	return 0;
}

/* The common blocks: ranges [bs[k], be[k]) of b->idx and [vs[k], ve[k])
 * of v->idx, K of them (arrays of min(nb, nv) entries). */
static size_t common_blocks(const struct by_block *b, const struct by_block *v,
			    size_t *bs, size_t *be, size_t *vs, size_t *ve)
{
	size_t i = 0, j = 0, K = 0;

	while (i < b->n && j < v->n) {
		int x = b->block[b->idx[i]], y = v->block[v->idx[j]];
		size_t i2 = i, j2 = j;

		while (i2 < b->n && b->block[b->idx[i2]] == x)
			i2++;
		while (j2 < v->n && v->block[v->idx[j2]] == y)
			j2++;
		if (x == y) {
			bs[K] = i;
			be[K] = i2;
			vs[K] = j;
			ve[K++] = j2;
		}
		if (x <= y)
			i = i2;
		if (y <= x)
			j = j2;
	}
	return K;
}

struct pairing {
	struct by_block b, v;
	size_t *bs, *be, *vs, *ve, K;
};

static void pairing_free(struct pairing *P)
{
	free(P->b.idx);
	free(P->v.idx);
	free(P->bs);
	free(P->be);
	free(P->vs);
	free(P->ve);
}

static int pairing_make(const int *bb, size_t nb, const int *vb, size_t nv, struct pairing *P)
{
	size_t m = nb < nv ? nb : nv;

	memset(P, 0, sizeof(*P));
	P->bs = malloc(m * sizeof(size_t));
	P->be = malloc(m * sizeof(size_t));
	P->vs = malloc(m * sizeof(size_t));
	P->ve = malloc(m * sizeof(size_t));
	if (!P->bs || !P->be || !P->vs || !P->ve || by_block_make(bb, nb, &P->b) ||
	    by_block_make(vb, nv, &P->v)) {
		pairing_free(P);
		return -ENOMEM;
	}
	P->K = common_blocks(&P->b, &P->v, P->bs, P->be, P->vs, P->ve);
	return 0;
}

/* Append the runs of ranges [s[k], e[k]) of side (x, idx) to out. */
static size_t gather(const double *x, const size_t *idx, size_t s, size_t e, double *out,
		     size_t at)
{
	for (size_t i = s; i < e; i++)
		out[at++] = x[idx[i]];
	return at;
}

int nested_paired_means(const double *bx, const int *bb, size_t nb, const double *vx,
			const int *vb, size_t nv, double *mb, double *mv)
{
	struct pairing P;

	if (pairing_make(bb, nb, vb, nv, &P))
		return -ENOMEM;
	for (size_t k = 0; k < P.K; k++) {
		double sb = 0, sv = 0;
		for (size_t i = P.bs[k]; i < P.be[k]; i++)
			sb += bx[P.b.idx[i]];
		for (size_t i = P.vs[k]; i < P.ve[k]; i++)
			sv += vx[P.v.idx[i]];
		mb[k] = sb / (double)(P.be[k] - P.bs[k]);
		mv[k] = sv / (double)(P.ve[k] - P.vs[k]);
	}
	pairing_free(&P);
	return (int)P.K;
}

int nested_paired_dilation(const double *bx, const int *bb, size_t nb, const double *vx,
			   const int *vb, size_t nv, enum stat_kind kind, double p,
			   const struct boot_opts *o, struct dilation *d, size_t *pairs)
{
	double conf = o && o->conf > 0 ? o->conf : 0.95;
	unsigned B = stats_boot_replicates(o ? o->B : 0, conf);
	double *rb = NULL, *rv = NULL, *abs_rep = NULL, *pct_rep = NULL, tb, tv;
	size_t mb = 0, mv = 0;
	struct pairing P;
	struct ranked qb = { 0 }, qv = { 0 };
	gsl_rng *rng = NULL;
	int rc = -ENOMEM, zero_base = 0, counted = kind == STATK_QUANTILE;

	*pairs = 0;
	if (!bx || !vx || !bb || !vb || !d || !nb || !nv || !(conf > 0 && conf < 1) ||
	    (kind == STATK_QUANTILE && !(p >= 0 && p <= 1)))
		return -EINVAL;
	if (pairing_make(bb, nb, vb, nv, &P))
		return -ENOMEM;
	*pairs = P.K;
	if (P.K < NESTED_MIN_PAIRS) {
		rc = 0;
		goto out;
	}
	/* a resample takes at most K times the largest block of a side */
	for (size_t k = 0; k < P.K; k++) {
		if (P.be[k] - P.bs[k] > mb)
			mb = P.be[k] - P.bs[k];
		if (P.ve[k] - P.vs[k] > mv)
			mv = P.ve[k] - P.vs[k];
	}
	rb = malloc(P.K * mb * sizeof(*rb));
	rv = malloc(P.K * mv * sizeof(*rv));
	abs_rep = malloc(B * sizeof(*abs_rep));
	pct_rep = malloc(B * sizeof(*pct_rep));
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!rb || !rv || !abs_rep || !pct_rep || !rng)
		goto out;
	/* the estimate: every run of the common blocks */
	mb = mv = 0;
	for (size_t k = 0; k < P.K; k++) {
		mb = gather(bx, P.b.idx, P.bs[k], P.be[k], rb, mb);
		mv = gather(vx, P.v.idx, P.vs[k], P.ve[k], rv, mv);
	}
	tb = statistic(rb, mb, kind, p);
	tv = statistic(rv, mv, kind, p);
	memset(d, 0, sizeof(*d));
	d->base = tb;
	d->var = tv;
	d->abs = tv - tb;
	d->pct = tb != 0 ? 100 * (tv - tb) / tb : NAN;
	/* a quantile's resamples are counted, not gathered (struct ranked) */
	if (counted &&
	    (ranked_make(bx, P.b.idx, P.bs, P.be, P.K, &qb) ||
	     ranked_make(vx, P.v.idx, P.vs, P.ve, P.K, &qv))) {
		rc = -ENOMEM;
		goto out;
	}
	gsl_rng_set(rng, (unsigned long)(o ? o->seed : 0));
	for (unsigned r = 0; r < B; r++) {
		mb = mv = 0;
		if (counted) {
			ranked_clear(&qb);
			ranked_clear(&qv);
		}
		for (size_t k = 0; k < P.K; k++) {
			size_t j = gsl_rng_uniform_int(rng, P.K);
			if (counted) {
				mb += ranked_add(&qb, j);
				mv += ranked_add(&qv, j);
			} else {
				mb = gather(bx, P.b.idx, P.bs[j], P.be[j], rb, mb);
				mv = gather(vx, P.v.idx, P.vs[j], P.ve[j], rv, mv);
			}
		}
		if (counted) {
			tb = ranked_quantile(&qb, mb, p);
			tv = ranked_quantile(&qv, mv, p);
		} else {
			tb = statistic(rb, mb, kind, p);
			tv = statistic(rv, mv, kind, p);
		}
		abs_rep[r] = tv - tb;
		pct_rep[r] = 100 * (tv - tb) / tb;
		zero_base |= tb == 0;
	}
	replicate_cis(abs_rep, pct_rep, B, conf, m_paired, zero_base || isnan(d->pct), d);
	d->B = B;
	rc = 0;
out:
	pairing_free(&P);
	ranked_free(&qb);
	ranked_free(&qv);
	free(rb);
	free(rv);
	free(abs_rep);
	free(pct_rep);
	if (rng)
		gsl_rng_free(rng);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Three levels: nodes, boots, runs */

/*
 * The values grouped by node, then by boot within a node: node j holds
 * boots nb[j] .. nb[j+1]-1, boot b holds idx[bs[b]] .. idx[bs[b+1]-1].
 */
struct groups3 {
	size_t k, nboots;
	size_t *idx;		/* n */
	size_t *bs;		/* nboots + 1 */
	size_t *nb;		/* k + 1 */
	size_t max_boots, max_runs;
};

struct id3 {
	int node, block;
	size_t i;
};

static int cmp_id3(const void *a, const void *b)
{
	const struct id3 *p = a, *q = b;

	if (p->node != q->node)
		return p->node < q->node ? -1 : 1;
	if (p->block != q->block)
		return p->block < q->block ? -1 : 1;
	return p->i < q->i ? -1 : p->i > q->i;
}

static void groups3_free(struct groups3 *g)
{
	free(g->idx);
	free(g->bs);
	free(g->nb);
	memset(g, 0, sizeof(*g));
}

static int groups3_make(const int *node, const int *block, size_t n, struct groups3 *g)
{
	struct id3 *p;
	size_t b = 0, k = 0;

	memset(g, 0, sizeof(*g));
	if (n > SIZE_MAX / sizeof(*p) - 1)
		return -ENOMEM;
	p = malloc(n * sizeof(*p));
	g->idx = malloc(n * sizeof(size_t));
	g->bs = malloc((n + 1) * sizeof(size_t));
	g->nb = malloc((n + 1) * sizeof(size_t));
	if (!p || !g->idx || !g->bs || !g->nb) {
		free(p);
		groups3_free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (struct id3){ node[i], block[i], i };
	qsort(p, n, sizeof(*p), cmp_id3);
	for (size_t i = 0; i < n; i++) {
		int new_node = !i || p[i].node != p[i - 1].node;
		if (new_node || p[i].block != p[i - 1].block)
			g->bs[b++] = i;
		if (new_node)
			g->nb[k++] = b - 1;
		g->idx[i] = p[i].i;
	}
	g->bs[b] = n;
	g->nb[k] = b;
	g->k = k;
	g->nboots = b;
	for (size_t j = 0; j < k; j++)
		if (g->nb[j + 1] - g->nb[j] > g->max_boots)
			g->max_boots = g->nb[j + 1] - g->nb[j];
	for (size_t j = 0; j < b; j++)
		if (g->bs[j + 1] - g->bs[j] > g->max_runs)
			g->max_runs = g->bs[j + 1] - g->bs[j];
	free(p);
	return 0;
}

static const char r3_one_node[] = "one node: the between-node variance needs at least 2 nodes";
static const char r3_one_boot[] = "one boot per node: the between-boot variance needs a "
	"node with at least 2 boots";
static const char r3_one_run[] = "one run per boot: the within-boot variance needs a boot "
	"with at least 2 runs";

int nested3_components(const double *x, const int *node, const int *block, size_t n,
		       struct nested3_result *out)
{
	struct groups3 g;
	double *mb = NULL, *mk = NULL, base, m = 0, ssw = 0, ssb = 0, ssn = 0;
	double sum_sk_nk = 0, s_all = 0, sum_nk2 = 0, c1, c2, c3, tot;
	int rc;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!x || !node || !block || !n)
		return -EINVAL;
	if (!stats_all_finite(x, n))
		return -EDOM;
	if ((rc = groups3_make(node, block, n, &g)))
		return rc;
	mb = malloc(g.nboots * sizeof(double));
	mk = malloc(g.k * sizeof(double));
	if (!mb || !mk) {
		rc = -ENOMEM;
		goto out;
	}
	/* means about the first value (as nested_components()) */
	base = x[g.idx[0]];
	for (size_t j = 0; j < g.k; j++) {
		double sk = 0, nk = 0, sq = 0;
		for (size_t b = g.nb[j]; b < g.nb[j + 1]; b++) {
			double s = 0, nb = (double)(g.bs[b + 1] - g.bs[b]);
			for (size_t i = g.bs[b]; i < g.bs[b + 1]; i++)
				s += x[g.idx[i]] - base;
			mb[b] = s / nb;
			for (size_t i = g.bs[b]; i < g.bs[b + 1]; i++) {
				double d = x[g.idx[i]] - base - mb[b];
				ssw += d * d;
			}
			sk += s;
			nk += nb;
			sq += nb * nb;
		}
		mk[j] = sk / nk;
		m += sk;
		sum_sk_nk += sq / nk;
		s_all += sq;
		sum_nk2 += nk * nk;
	}
	m /= (double)n;
	for (size_t j = 0; j < g.k; j++) {
		double nk = (double)(g.bs[g.nb[j + 1]] - g.bs[g.nb[j]]);
		for (size_t b = g.nb[j]; b < g.nb[j + 1]; b++) {
			double d = mb[b] - mk[j];
			ssb += (double)(g.bs[b + 1] - g.bs[b]) * d * d;
		}
		ssn += nk * (mk[j] - m) * (mk[j] - m);
	}
	out->n_nodes = g.k;
	out->n_boots = g.nboots;
	out->n = n;
	out->df_node = (double)g.k - 1;
	out->df_boot = (double)(g.nboots - g.k);
	out->df_within = (double)(n - g.nboots);
	out->ms_node = out->ms_boot = out->ms_within = NAN;
	out->var_node = out->var_boot = out->var_within = NAN;
	out->share_node = out->share_boot = out->share_within = NAN;
	if (n > g.nboots)
		out->ms_within = out->var_within = ssw / out->df_within;
	if (g.nboots > g.k)
		out->ms_boot = ssb / out->df_boot;
	if (g.k > 1)
		out->ms_node = ssn / out->df_node;
	if (g.k < 2) {
		out->reason = r3_one_node;
		goto out;
	}
	if (n == g.nboots) {
		out->reason = r3_one_run;
		goto out;
	}
	if (g.nboots == g.k) {
		/* two levels: nodes and the runs within them */
		c3 = ((double)n - sum_nk2 / (double)n) / out->df_node;
		out->var_node = (out->ms_node - out->ms_within) / c3;
		if (!(out->var_node > 0))
			out->var_node = 0;
		tot = out->var_node + out->var_within;
		out->share_node = tot > 0 ? out->var_node / tot : 0;
		out->share_within = tot > 0 ? out->var_within / tot : 0;
		out->reason = r3_one_boot;
		out->ok = 1;
		goto out;
	}
	c1 = ((double)n - sum_sk_nk) / out->df_boot;
	c2 = (sum_sk_nk - s_all / (double)n) / out->df_node;
	c3 = ((double)n - sum_nk2 / (double)n) / out->df_node;
	out->var_boot = (out->ms_boot - out->ms_within) / c1;
	if (!(out->var_boot > 0))
		out->var_boot = 0;
	out->var_node = (out->ms_node - out->ms_within - c2 * out->var_boot) / c3;
	if (!(out->var_node > 0))
		out->var_node = 0;
	tot = out->var_node + out->var_boot + out->var_within;
	out->share_node = tot > 0 ? out->var_node / tot : 0;
	out->share_boot = tot > 0 ? out->var_boot / tot : 0;
	out->share_within = tot > 0 ? out->var_within / tot : 0;
	out->ok = 1;
out:
	free(mb);
	free(mk);
	groups3_free(&g);
	return rc;
}

static const char m_three_stage[] = "three-stage percentile bootstrap (nodes drawn, then "
	"boots within each, then runs; Davison & Hinkley 1997, sec. 3.8)";

int nested3_dilation_ci(const double *bx, const int *bn, const int *bb, size_t nb,
			const double *vx, const int *vn, const int *vb, size_t nv,
			enum stat_kind kind, double p, const struct boot_opts *o,
			struct dilation *d)
{
	struct groups3 gb = { 0 }, gv = { 0 };
	struct walk wb, wv;
	int rc;

	if (!bx || !bn || !bb || !vx || !vn || !vb || !d || !nb || !nv ||
	    dilation_args(o, kind, p))
		return -EINVAL;
	if ((rc = groups3_make(bn, bb, nb, &gb)) || (rc = groups3_make(vn, vb, nv, &gv)))
		goto out;
	rc = -EINVAL;
	if (nb > walk_range() || nv > walk_range())
		goto out;
	wb = (struct walk){ .levels = 3, .k = gb.k, .n = nb, .idx = gb.idx,
			    .off = { gb.nb, gb.bs } };
	wv = (struct walk){ .levels = 3, .k = gv.k, .n = nv, .idx = gv.idx,
			    .off = { gv.nb, gv.bs } };
	rc = walk_dilation(bx, &wb, gb.k * gb.max_boots * gb.max_runs, vx, &wv,
			   gv.k * gv.max_boots * gv.max_runs, kind, p, o, m_three_stage, d);
out:
	groups3_free(&gb);
	groups3_free(&gv);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Design effects */

double nested_design_effect(const struct nested_result *r)
{
	double d;

	if (!r || !r->ok || !r->n_groups || !isfinite(r->icc))
		return 1;
	d = 1 + ((double)r->n / (double)r->n_groups - 1) * r->icc;
	return d > 1 ? d : 1;
}

double nested3_design_effect(const struct nested3_result *r)
{
	double d = 1;

	if (!r || !r->ok || !r->n_nodes || !r->n_boots)
		return 1;
	if (isfinite(r->share_boot))
		d += ((double)r->n / (double)r->n_boots - 1) * r->share_boot;
	if (isfinite(r->share_node))
		d += ((double)r->n / (double)r->n_nodes - 1) * r->share_node;
	return d > 1 ? d : 1;
}
