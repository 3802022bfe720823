/* changepoint.c - E-divisive means with permutation tests; see changepoint.h */
#include "changepoint.h"

#include <errno.h>
#include <float.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MIN_SEG 2
#define DEFAULT_R 199
#define DEFAULT_SIG 0.05
#define DEFAULT_CONF 0.95

static const char m_edivisive[] = "E-divisive means (Matteson & James 2014), "
	"revisions shuffled within segments";
static const char r_short[] = "fewer than 2 x min_seg revisions or 4 runs: "
	"no split to test";

/* The options with their defaults filled in. */
struct params {
	double alpha, sig, sig_each, min_magnitude;
	size_t min_seg, window, windows;
	unsigned R;
	struct boot_opts boot;
};

/*
 * The revisions of one domain (the series or one window): S[g G + h] =
 * sum over the runs i of g and j of h of |x_i - x_j|^alpha, so that every
 * sum of Q over revisions is a sum of S (S[g G + g] counts each pair of
 * g's runs twice).
 */
struct dom {
	size_t G;
	const size_t *len;	/* runs of each revision */
	double *S;
};

/*
 * Scratch of one search, sized for the largest domain: P the 2-D prefix
 * sums of S in a segment's current order (P[i (L+1) + j] = sum of S over
 * the segment's first i and first j revisions), diag its diagonal, cum the
 * runs before each position, ord the order (identity, or shuffled for a
 * permutation), rec[k] = 1 / k.
 */
struct work {
	double *P, *diag, *rec;
	size_t *cum, *ord;
};

struct split {
	double q;
	size_t tau, kappa;	/* from the segment's start */
};

struct seg {
	size_t a, b;		/* revisions [a, b) of the domain */
	int has;		/* best is a split */
	struct split best;
};

/* changes found so far (not yet by index) */
struct cplist {
	struct changepoint *v;
	size_t n, cap;
};

static inline double dist(double a, double b, double alpha)
{
	double d = fabs(a - b);

	return alpha == 1.0 ? d : pow(d, alpha);
}

static int check_series(const double *x, const size_t *len, size_t G, size_t *N)
{
	*N = 0;
	if (!x || !len || !G)
		return -EINVAL;
	for (size_t g = 0; g < G; g++) {
		if (!len[g])
			return -EINVAL;
		*N += len[g];
	}
	return stats_all_finite(x, *N) ? 0 : -EDOM;
}

/* S of revisions len[0..G-1] whose runs start at x; S has G x G room. */
static void dom_fill(struct dom *d, const double *x, const size_t *len, size_t G,
		     double alpha)
{
	const double *xg = x;

	d->G = G;
	d->len = len;
	for (size_t g = 0; g < G; g++) {
		const double *xh = xg;

		for (size_t h = g; h < G; h++) {
			double s = 0;

			for (size_t i = 0; i < len[g]; i++)
				for (size_t j = 0; j < len[h]; j++)
					s += dist(xg[i], xh[j], alpha);
			d->S[g * G + h] = d->S[h * G + g] = s;
			xh += len[h];
		}
		xg += len[g];
	}
}

static void work_free(struct work *w)
{
	free(w->P);
	free(w->diag);
	free(w->rec);
	free(w->cum);
	free(w->ord);
}

/* Scratch for segments of up to G revisions and N runs. */
static int work_alloc(struct work *w, size_t G, size_t N)
{
	memset(w, 0, sizeof(*w));
	w->P = malloc((G + 1) * (G + 1) * sizeof(*w->P));
	w->diag = malloc((G + 1) * sizeof(*w->diag));
	w->rec = malloc((N + 1) * sizeof(*w->rec));
	w->cum = malloc((G + 1) * sizeof(*w->cum));
	w->ord = malloc(G * sizeof(*w->ord));
	if (!w->P || !w->diag || !w->rec || !w->cum || !w->ord) {
		work_free(w);
		return -ENOMEM;
	}
	w->rec[0] = NAN;
	for (size_t k = 1; k <= N; k++)
		w->rec[k] = 1.0 / (double)k;
	return 0;
}

/*
 * The best split of the L revisions ord[0..L-1] of d, in that order: 1 and
 * *best, or 0 when no split leaves min_seg revisions and 2 runs a side.
 *
 * With the prefix sums P over the revisions in this order, for X the
 * first tau revisions (n runs) and Y the next kappa - tau (m runs):
 *   sx = 2 sum_{X pairs} = P[tau][tau],
 *   sy = 2 sum_{Y pairs} = P[kappa][kappa] - 2 P[tau][kappa] + P[tau][tau],
 *   sxy = sum_{X x Y} = P[tau][kappa] - P[tau][tau],
 * and Q = n m / (n + m) (2 sxy / (n m) - sx / (n (n-1)) - sy / (m (m-1)))
 *       = (2 sxy - m sx / (n-1) - n sy / (m-1)) / (n + m),
 * each in O(1): O(L^2) for the segment, the prefix sums included.  *tol is
 * set to a bound of the rounding in such a Q (16 eps L times the segment's
 * mean sum per run), for the permutation test's ties.
 */
static int seg_best(const struct dom *d, const size_t *ord, size_t L, size_t min_seg,
		    const struct work *w, struct split *best, double *tol)
{
	size_t stride = L + 1, *cum = w->cum;
	double *P = w->P, *diag = w->diag;
	const double *rec = w->rec;
	int found = 0;

	cum[0] = 0;
	for (size_t i = 0; i < L; i++)
		cum[i + 1] = cum[i] + d->len[ord[i]];
	memset(P, 0, stride * sizeof(*P));
	diag[0] = 0;
	for (size_t i = 0; i < L; i++) {
		const double *srow = d->S + ord[i] * d->G, *prev = P + i * stride;
		double *row = P + (i + 1) * stride, acc = 0;

		row[0] = 0;
		for (size_t j = 0; j < L; j++) {
			acc += srow[ord[j]];
			row[j + 1] = prev[j + 1] + acc;
		}
		diag[i + 1] = row[i + 1];
	}
	if (tol)
		*tol = 16 * DBL_EPSILON * (double)L * diag[L] * rec[cum[L]];

	for (size_t t = min_seg; t + min_seg <= L; t++) {
		const double *rowt = P + t * stride;
		double ptt = diag[t], a;
		size_t n = cum[t];

		if (n < 2)
			continue;
		a = ptt * rec[n - 1];
		for (size_t k = t + min_seg; k <= L; k++) {
			size_t m = cum[k] - n;
			double sxy, sy, q;

			if (m < 2)
				continue;
			sxy = rowt[k] - ptt;
			sy = diag[k] - 2 * rowt[k] + ptt;
			q = (2 * sxy - (double)m * a - (double)n * sy * rec[m - 1]) * rec[n + m];
			if (!found || q > best->q) {
				best->q = q;
				best->tau = t;
				best->kappa = k;
				found = 1;
			}
		}
	}
	return found;
}

static void identity(size_t *ord, size_t a, size_t b)
{
	for (size_t i = a; i < b; i++)
		ord[i] = i;
}

static int cplist_add(struct cplist *l, const struct changepoint *c)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct changepoint *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *c;
	return 0;
}

/*
 * E-divisive on domain d (revisions first.. of the series): each accepted
 * change goes to found with index, search_lo, kappa, qhat, p, permutations
 * and order.  segs has room for d->G segments.
 */
static int edivisive(const struct dom *d, size_t first, const struct params *pr,
		     gsl_rng *rng, struct work *w, struct seg *segs, struct cplist *found)
{
	size_t nseg = 1;
	unsigned order = 0;

	identity(w->ord, 0, d->G);
	segs[0] = (struct seg){ .a = 0, .b = d->G };
	segs[0].has = seg_best(d, w->ord, d->G, pr->min_seg, w, &segs[0].best, NULL);
	for (;;) {
		struct seg *s = NULL;
		struct changepoint c = { 0 };
		unsigned r, b = 0;
		double q, tol = 0;

		for (size_t i = 0; i < nseg; i++)
			if (segs[i].has && (!s || segs[i].best.q > s->best.q))
				s = &segs[i];
		if (!s)
			return 0;
		q = s->best.q;

		/* the permutation test: p = (1 + b) / (R + 1), stopped as soon
		   as 1 + b > sig (R + 1), when p > sig is certain */
		for (r = 0; r < pr->R && 1 + b <= pr->sig_each * (pr->R + 1); r++) {
			double qmax = -INFINITY;

			for (size_t i = 0; i < nseg; i++) {
				size_t L = segs[i].b - segs[i].a;
				struct split sp;
				double t;

				if (L < 2 * pr->min_seg)
					continue;
				gsl_ran_shuffle(rng, w->ord + segs[i].a, L, sizeof(*w->ord));
				if (seg_best(d, w->ord + segs[i].a, L, pr->min_seg, w, &sp, &t) &&
				    sp.q > qmax) {
					qmax = sp.q;
					tol = t > tol ? t : tol;
				}
			}
			b += qmax >= q - tol;
		}
		identity(w->ord, 0, d->G);
		if (r < pr->R || (1.0 + b) / (pr->R + 1.0) > pr->sig_each)
			return 0;

		c.index = first + s->a + s->best.tau;
		c.search_lo = first + s->a;
		c.kappa = first + s->a + s->best.kappa;
		c.qhat = q;
		c.p = (1.0 + b) / (pr->R + 1.0);
		c.permutations = pr->R;
		c.order = ++order;
		if (cplist_add(found, &c))
			return -ENOMEM;

		segs[nseg] = (struct seg){ .a = s->a + s->best.tau, .b = s->b };
		s->b = segs[nseg].a;
		s->has = seg_best(d, w->ord + s->a, s->b - s->a, pr->min_seg, w, &s->best, NULL);
		segs[nseg].has = seg_best(d, w->ord + segs[nseg].a, segs[nseg].b - segs[nseg].a,
					  pr->min_seg, w, &segs[nseg].best, NULL);
		nseg++;
	}
}

static int params_from(const struct cp_opts *o, size_t G, struct params *pr)
{
	struct cp_opts def = { 0 };

	if (!o)
		o = &def;
	pr->alpha = o->alpha ? o->alpha : 1;
	pr->min_seg = o->min_seg ? o->min_seg : DEFAULT_MIN_SEG;
	pr->R = o->permutations ? o->permutations : DEFAULT_R;
	pr->sig = o->sig ? o->sig : DEFAULT_SIG;
	pr->window = o->window;
	pr->min_magnitude = o->min_magnitude;
	pr->boot = (struct boot_opts){ .B = o->boot_B, .seed = o->seed,
				       .conf = o->conf ? o->conf : DEFAULT_CONF };
	if (!(pr->alpha > 0 && pr->alpha < 2) || !(pr->sig > 0 && pr->sig < 1) ||
	    !(pr->boot.conf > 0 && pr->boot.conf < 1) || !(pr->min_magnitude >= 0) ||
	    isinf(pr->min_magnitude) || (pr->window && pr->window < 2 * pr->min_seg))
		return -EINVAL;
	pr->windows = 1;
	if (pr->window && pr->window < G)	/* starts 0, W/2, ... below G - W, then G - W */
		pr->windows = (G - pr->window + pr->window / 2 - 1) / (pr->window / 2) + 1;
	else
		pr->window = G;
	pr->sig_each = pr->sig / (double)pr->windows;
	return (pr->R + 1.0) * pr->sig_each < 1 ? -EINVAL : 0;
}

static int cmp_strength(const void *pa, const void *pb)
{
	const struct changepoint *a = pa, *b = pb;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	if (a->qhat != b->qhat)
		return a->qhat > b->qhat ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

/* runs of revisions [a, b) */
static size_t runs(const size_t *off, size_t a, size_t b)
{
	return off[b] - off[a];
}

/*
 * The union of the windows' changes, strongest first (smaller p, then
 * larger q^): a change is kept when it leaves min_seg revisions and 2 runs
 * between it and each kept neighbour.  out->cp gets them by index.
 */
static int keep_apart(struct cplist *found, const size_t *off, size_t G, size_t min_seg,
		      struct changepoints *out)
{
	if (!found->n)
		return 0;
	qsort(found->v, found->n, sizeof(*found->v), cmp_strength);
	out->cp = malloc(found->n * sizeof(*out->cp));
	if (!out->cp)
		return -ENOMEM;
	for (size_t i = 0; i < found->n; i++) {
		const struct changepoint *c = &found->v[i];
		size_t pos = 0, left, right;

		while (pos < out->n && out->cp[pos].index < c->index)
			pos++;
		left = pos ? out->cp[pos - 1].index : 0;
		right = pos < out->n ? out->cp[pos].index : G;
		if (c->index - left < min_seg || right - c->index < min_seg ||
		    (pos < out->n && out->cp[pos].index == c->index) ||
		    runs(off, left, c->index) < 2 || runs(off, c->index, right) < 2)
			continue;
		memmove(out->cp + pos + 1, out->cp + pos, (out->n - pos) * sizeof(*out->cp));
		out->cp[pos] = *c;
		out->n++;
	}
	return 0;
}

/* cps[i]'s adjacent segments, medians, change and interval. */
static int describe(const double *x, const size_t *off, size_t G, const struct params *pr,
		    struct changepoints *out, size_t i)
{
	struct changepoint *c = &out->cp[i];
	struct dilation dl;
	int ret;

	c->lo = i ? out->cp[i - 1].index : 0;
	c->hi = i + 1 < out->n ? out->cp[i + 1].index : G;
	ret = stats_dilation(x + off[c->lo], runs(off, c->lo, c->index), x + off[c->index],
			     runs(off, c->index, c->hi), STATK_QUANTILE, 0.5, &pr->boot, &dl);
	if (ret)
		return ret;
	c->median_before = dl.base;
	c->median_after = dl.var;
	c->pct = dl.pct;
	c->ci = dl.ci_pct;
	return 0;
}

/* Drop the smallest change below min_magnitude while there is one. */
static int drop_small(const double *x, const size_t *off, size_t G, const struct params *pr,
		      struct changepoints *out)
{
	int ret;

	for (;;) {
		size_t k = out->n;

		for (size_t i = 0; i < out->n; i++)
			if (fabs(out->cp[i].pct) < pr->min_magnitude &&
			    (k == out->n || fabs(out->cp[i].pct) < fabs(out->cp[k].pct)))
				k = i;
		if (k == out->n)
			return 0;
		memmove(out->cp + k, out->cp + k + 1, (out->n - k - 1) * sizeof(*out->cp));
		out->n--;
		out->dropped_small++;
		if (k && (ret = describe(x, off, G, pr, out, k - 1)))
			return ret;
		if (k < out->n && (ret = describe(x, off, G, pr, out, k)))
			return ret;
	}
}

int stats_changepoints(const double *x, const size_t *group_len, size_t n_groups,
		       const struct cp_opts *o, struct changepoints *out)
{
	struct params pr;
	struct dom d = { 0 };
	struct work w = { 0 };
	struct cplist found = { 0 };
	struct seg *segs = NULL;
	size_t N, *off = NULL;
	gsl_rng *rng = NULL;
	int ret;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->method = m_edivisive;
	if ((ret = check_series(x, group_len, n_groups, &N)) ||
	    (ret = params_from(o, n_groups, &pr)))
		goto out;
	out->windows = pr.windows;
	out->sig_each = pr.sig_each;
	if (n_groups < 2 * pr.min_seg || N < 4) {
		out->reason = r_short;
		goto out;
	}

	ret = -ENOMEM;
	off = malloc((n_groups + 1) * sizeof(*off));
	d.S = malloc(pr.window * pr.window * sizeof(*d.S));
	segs = malloc(pr.window * sizeof(*segs));
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!off || !d.S || !segs || !rng || work_alloc(&w, pr.window, N))
		goto out;
	gsl_rng_set(rng, (unsigned long)pr.boot.seed);
	off[0] = 0;
	for (size_t g = 0; g < n_groups; g++)
		off[g + 1] = off[g] + group_len[g];

	for (size_t k = 0; k < pr.windows; k++) {
		size_t first = k + 1 < pr.windows ? k * (pr.window / 2) : n_groups - pr.window;

		dom_fill(&d, x + off[first], group_len + first, pr.window, pr.alpha);
		if ((ret = edivisive(&d, first, &pr, rng, &w, segs, &found)))
			goto out;
	}
	if ((ret = keep_apart(&found, off, n_groups, pr.min_seg, out)))
		goto out;
	for (size_t i = 0; i < out->n; i++)
		if ((ret = describe(x, off, n_groups, &pr, out, i)))
			goto out;
	ret = drop_small(x, off, n_groups, &pr, out);
out:
	gsl_rng_free(rng);
	work_free(&w);
	free(d.S);
	free(segs);
	free(off);
	free(found.v);
	if (ret) {
		stats_changepoints_release(out);
		memset(out, 0, sizeof(*out));
	}
	return ret;
}

void stats_changepoints_release(struct changepoints *cps)
{
	free(cps->cp);
	cps->cp = NULL;
	cps->n = 0;
}

int stats_energy_split(const double *x, const size_t *group_len, size_t n_groups,
		       double alpha, size_t min_seg, size_t *tau, size_t *kappa,
		       double *qhat)
{
	struct dom d = { 0 };
	struct work w = { 0 };
	struct split sp;
	size_t N;
	int ret;

	*tau = *kappa = 0;
	*qhat = NAN;
	if ((ret = check_series(x, group_len, n_groups, &N)))
		return ret;
	if (!(alpha > 0 && alpha < 2) || !min_seg)
		return -EINVAL;
	d.S = malloc(n_groups * n_groups * sizeof(*d.S));
	if (!d.S || work_alloc(&w, n_groups, N)) {
		free(d.S);
		return -ENOMEM;
	}
	dom_fill(&d, x, group_len, n_groups, alpha);
	identity(w.ord, 0, n_groups);
	if (seg_best(&d, w.ord, n_groups, min_seg, &w, &sp, NULL)) {
		*tau = sp.tau;
		*kappa = sp.kappa;
		*qhat = sp.q;
	}
	work_free(&w);
	free(d.S);
	return 0;
}

int stats_energy_qhat(const double *x, size_t n, const double *y, size_t m,
		      double alpha, double *q)
{
	double sxy = 0, sx = 0, sy = 0;

	*q = NAN;
	if (!x || !y || n < 2 || m < 2 || !(alpha > 0 && alpha < 2))
		return -EINVAL;
	if (!stats_all_finite(x, n) || !stats_all_finite(y, m))
		return -EDOM;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < m; j++)
			sxy += dist(x[i], y[j], alpha);
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			sx += dist(x[i], x[k], alpha);
	for (size_t j = 0; j < m; j++)
		for (size_t k = j + 1; k < m; k++)
			sy += dist(y[j], y[k], alpha);
	/* Q = n m / (n + m) (2 sxy / (n m) - sx / C(n,2) - sy / C(m,2)) */
	*q = (double)n * (double)m / (double)(n + m) *
	     (2 * sxy / ((double)n * (double)m) - 2 * sx / ((double)n * (double)(n - 1)) -
	      2 * sy / ((double)m * (double)(m - 1)));
	return 0;
}

int stats_newest_change(const double *x, const size_t *group_len, size_t n_groups,
			const struct cp_opts *o, struct changepoint *out)
{
	struct params pr;
	double *W = NULL, *B = NULL, S = 0;
	size_t *rev = NULL, N = 0, ge = 0, last;
	struct dilation dl;
	double q_last;
	int ret;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!x || !group_len || !out || n_groups < 2)
		return -EINVAL;
	if ((ret = params_from(o, n_groups, &pr)) < 0)
		return ret;
	for (size_t g = 0; g < n_groups; g++) {
		if (!group_len[g])
			return -EINVAL;
		N += group_len[g];
	}
	if (!stats_all_finite(x, N))
		return -EDOM;
	last = n_groups - 1;
	if (group_len[last] < 2 || N - group_len[last] < 2) {
		out->index = last;
		out->p = NAN;
		out->qhat = NAN;
		out->pct = NAN;
		out->ci.reason = "fewer than 2 runs on a side";
		return 0;
	}
	W = calloc(n_groups, sizeof(*W));
	B = calloc(n_groups, sizeof(*B));
	rev = malloc(N * sizeof(*rev));
	if (!W || !B || !rev) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t g = 0, i = 0; g < n_groups; g++)
		for (size_t k = 0; k < group_len[g]; k++)
			rev[i++] = g;
	/* the sums of distances within each revision (W) and from it to the
	 * others (B), and over every pair (S): one pass over the pairs */
	for (size_t i = 0; i < N; i++)
		for (size_t k = i + 1; k < N; k++) {
			double d = dist(x[i], x[k], pr.alpha);
			S += d;
			if (rev[i] == rev[k]) {
				W[rev[i]] += d;
			} else {
				B[rev[i]] += d;
				B[rev[k]] += d;
			}
		}
	/* Q of each revision held out against the others pooled */
	q_last = NAN;
	for (size_t g = n_groups; g-- > 0;) {
		double m = (double)group_len[g], n = (double)(N - group_len[g]), q;
		if (m < 2 || n < 2)
			continue;
		q = n * m / (n + m) * (2 * B[g] / (n * m) - 2 * (S - W[g] - B[g]) / (n * (n - 1)) -
				       2 * W[g] / (m * (m - 1)));
		if (g == last)
			q_last = q;
		/* ties count against the newest revision (a conservative p) */
		ge += q >= q_last * (1 - 1e-12);
	}
	out->index = last;
	out->lo = 0;
	out->hi = n_groups;
	out->search_lo = 0;
	out->kappa = n_groups;
	out->order = 1;
	out->qhat = q_last;
	out->permutations = (unsigned)n_groups;
	out->p = (double)ge / (double)n_groups;
	ret = stats_dilation(x, N - group_len[last], x + (N - group_len[last]), group_len[last],
			     STATK_QUANTILE, 0.5, &pr.boot, &dl);
	if (ret)
		goto out;
	out->median_before = dl.base;
	out->median_after = dl.var;
	out->pct = dl.pct;
	out->ci = dl.ci_pct;
out:
	free(W);
	free(B);
	free(rev);
	return ret;
}
