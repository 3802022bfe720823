/*
 * series.c - the statistics of the model, computed once for every writer
 * (report.h): each series' summary, percentiles and ECDF, its comparison
 * with the baseline (dilations and their intervals, the rank test, the
 * Hodges-Lehmann ratio, KS), the machine's noise per group, and the Holm
 * families of the verdicts (report_compute()).
 */
#include "report_int.h"
#include "warnings.h"
#include "fmt.h"
#include "stats/stats.h"
#include "lib/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a 64 of s, continuing from h. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	h ^= 0xff;		/* a separator: ("ab", "c") != ("a", "bc") */
	return h * 0x100000001b3ULL;
}

/* splitmix64's finaliser (Steele, Lea & Flood 2014): spreads the bits. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The bootstrap seed of one comparison: the run's stored seed and the names
 * of what is compared, so that a report is the same whatever is filtered. */
static uint64_t comparison_seed(const struct report_model *m, const struct report_group *g,
				const struct report_series *s, unsigned stat)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = fnv1a(h, g->workload);
	h = fnv1a(h, g->metric);
	h = fnv1a(h, s->variant);
	return mix64(m->run.seed ^ mix64(h + stat));
}

static void ecdf(struct report_series *s, const double *sorted)
{
	size_t n = s->n, steps = stats_ecdf_steps(sorted, n);

	if (steps <= REPORT_ECDF_MAX) {
		s->ecdf_x = xmalloc((steps ? steps : 1) * sizeof(double));
		s->ecdf_p = xmalloc((steps ? steps : 1) * sizeof(double));
		s->n_ecdf = stats_ecdf(sorted, n, s->ecdf_x, s->ecdf_p);
		s->ecdf_exact = 1;
		return;
	}
	/* Too many steps to draw or ship: the quantile function sampled at
	 * evenly spaced probabilities (type 7). */
	s->n_ecdf = REPORT_ECDF_MAX + 1;
	s->ecdf_x = xmalloc(s->n_ecdf * sizeof(double));
	s->ecdf_p = xmalloc(s->n_ecdf * sizeof(double));
	for (size_t k = 0; k < s->n_ecdf; k++) {
		double p = (double)k / REPORT_ECDF_MAX;
		s->ecdf_p[k] = p;
		s->ecdf_x[k] = stats_quantile_sorted(sorted, n, p);
	}
	s->ecdf_exact = 0;
}

/* The node level (report.h: has_nodes): boots in nodes, every value's
 * node known. */
static void describe_nodes(const struct report_model *m, struct report_group *g,
			   struct report_series *s)
{
	if (m->n_nodes < 2 || !s->nodes)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->nodes[i] < 0)
			return;
	if (nested3_components(s->values, s->nodes, s->blocks, s->n, &s->nested3) < 0)
		return;
	if (!s->nested3.ok) {
		/* one run per block (an interleaved plan's rounds): a node's runs
		 * are its one block */
		s->node_blocks = 1;
		if (nested3_components(s->values, s->nodes, s->nodes, s->n, &s->nested3) < 0 ||
		    !s->nested3.ok)
			return;
	}
	s->has_nodes = 1;
	g->nodes = 1;
}

/*
 * What every group of the Holm families needs, shown or kept for the
 * families only (so that a verdict does not move with --metric or
 * --workload): the values sorted once into s->sorted (every statistic takes
 * the sorted copy: no function sorts again; report_compute() frees it), the
 * summary, and the nesting of the runs in boots (has_blocks) and nodes
 * (has_nodes) that the dilations resample.
 */
static void prepare(struct report_model *m, struct report_group *g, struct report_series *s)
{
	int several = 0;

	if (!s->n)
		return;
	s->sorted = stats_sorted_copy(s->values, s->n);
	if (!s->sorted) {
		/* the x* allocators' policy: out of memory is fatal */
		fprintf(stderr, "perturb: fatal: out of memory sorting %zu values\n", s->n);
		abort();
	}
	if (stats_summary_sorted(s->values, s->sorted, s->n, &s->sum) == 0)
		s->has_summary = 1;
	for (size_t i = 1; i < s->n && !several; i++)
		several = s->blocks[i] != s->blocks[0];
	/* one run per block (an interleaved plan's rounds) splits nothing */
	if (several &&
	    nested_components(s->values, s->blocks, s->n, m->confidence, &s->nested) == 0 &&
	    s->nested.ok) {
		s->has_blocks = 1;
		m->n_nested_groups += !g->nested && !g->hidden;
		g->nested = 1;
	}
	describe_nodes(m, g, s);
}

/*
 * Per series, after prepare(): percentiles with CIs, outliers, ECDF.
 */
static void describe(struct report_model *m, struct report_group *g, struct report_series *s)
{
	const double *sorted = s->sorted;
	unsigned char *flag;

	s->median = NAN;
	for (size_t k = 0; k < m->n_percentiles; k++) {
		s->pct[k] = NAN;
		s->pct_ci[k] = (struct interval){ .lo = NAN, .hi = NAN,
						  .reason = "no successful run" };
	}
	if (!s->n)
		return;
	s->median = stats_quantile_sorted(sorted, s->n, 0.5);
	for (size_t k = 0; k < m->n_percentiles; k++) {
		double p = m->percentiles[k] / 100.0;
		s->pct[k] = stats_quantile_sorted(sorted, s->n, p);
		if (stats_quantile_ci(sorted, s->n, p, m->confidence, &s->pct_ci[k]) < 0) {
			s->pct_ci[k].has_ci = 0;
			s->pct_ci[k].reason = "not finite values";
		} else if (!s->pct_ci[k].has_ci && report_few_runs(m, m->percentiles[k], s->n)) {
			s->pct_ci[k].reason = report_few_runs(m, m->percentiles[k], s->n);
		}
	}
	if (s->has_summary) {
		flag = xmalloc(s->n);
		s->outliers_tukey = stats_outliers_tukey_summary(s->values, s->n, &s->sum,
								 REPORT_TUKEY_K, flag);
		s->outliers_mad = stats_outliers_mad_summary(s->values, s->n, &s->sum,
							     REPORT_MADZ, flag);
		free(flag);
	} else {
		/* not finite values (or out of memory): what the labellers say */
		s->outliers_tukey = s->outliers_mad = (size_t)-1;
	}
	ecdf(s, sorted);
	if (isnan(g->lo) || sorted[0] < g->lo)
		g->lo = sorted[0];
	if (isnan(g->hi) || sorted[s->n - 1] > g->hi)
		g->hi = sorted[s->n - 1];
}

/* Dilation of the mean on each node alone, and its spread (report.h). */
static void node_dilations(const struct report_model *m, const struct report_series *base,
			   struct report_series *s)
{
	size_t k = m->n_nodes, have = 0;
	double *sum = xcalloc(4 * k, sizeof(double)), mean = 0, ss = 0;

	s->node_dil_pct = xcalloc(k, sizeof(double));
	for (size_t i = 0; i < base->n; i++) {
		sum[base->nodes[i]] += base->values[i];
		sum[k + base->nodes[i]] += 1;
	}
	for (size_t i = 0; i < s->n; i++) {
		sum[2 * k + s->nodes[i]] += s->values[i];
		sum[3 * k + s->nodes[i]] += 1;
	}
	s->node_dil_min = s->node_dil_max = s->node_dil_sd = NAN;
	for (size_t j = 0; j < k; j++) {
		double mb = sum[j] / sum[k + j], mv = sum[2 * k + j] / sum[3 * k + j];
		double d = 100 * (mv - mb) / mb;
		s->node_dil_pct[j] = sum[k + j] > 0 && sum[3 * k + j] > 0 && mb != 0 ? d : NAN;
		if (isnan(s->node_dil_pct[j]))
			continue;
		if (!have || d < s->node_dil_min)
			s->node_dil_min = d;
		if (!have || d > s->node_dil_max)
			s->node_dil_max = d;
		have++;
		mean += d;
	}
	if (have >= 2) {
		mean /= (double)have;
		for (size_t j = 0; j < k; j++)
			if (!isnan(s->node_dil_pct[j]))
				ss += (s->node_dil_pct[j] - mean) * (s->node_dil_pct[j] - mean);
		s->node_dil_sd = sqrt(ss / (double)(have - 1));
	}
	free(sum);
}

/* A percentage only of a baseline on one side of 0 (report.h, no_pct;
 * reports/decide.h, decide_pct_guard): the baseline's interval of the
 * statistic at the report's level, whatever level the dilation is read at,
 * so that a series is no_pct or not at every Holm step. */
static void pct_guard(const struct report_model *m, const struct report_series *base,
		      enum stat_kind kind, double p, struct report_dilation *out)
{
	int sign = stats_one_signed(base->sorted, base->n, kind, p, m->confidence,
				    &out->base_lo, &out->base_hi);
	struct dilation u = { .ci_pct = out->unpaired_ci_pct };

	out->no_pct = decide_pct_guard(&out->d, sign);
	if (out->paired) {
		decide_pct_guard(&u, sign);
		out->unpaired_ci_pct = u.ci_pct;
	}
}

static void dilate(const struct report_model *m, const struct report_group *g,
		   const struct report_series *base, const struct report_series *s,
		   enum stat_kind kind, double p, unsigned stat, double conf,
		   struct report_dilation *out)
{
	struct boot_opts bo = {
		.B = m->bootstrap, .conf = conf, .bca = m->bca,
		.max_boot_n = m->max_boot_n,
		.seed = comparison_seed(m, g, s, stat),
	};
	struct stats_sample bs = {
		.x = base->values, .sorted = base->sorted, .n = base->n,
		.sum = base->has_summary ? &base->sum : NULL,
	};
	struct stats_sample vs = {
		.x = s->values, .sorted = s->sorted, .n = s->n,
		.sum = s->has_summary ? &s->sum : NULL,
	};

	int big = base->n > m->max_boot_n || s->n > m->max_boot_n;

	memset(out, 0, sizeof(*out));
	/* above the size limit the interval is asymptotic: runs nested in
	 * boots (and nodes) widen it by their design effect (nested.h) */
	if (big) {
		bo.deff_base = base->has_nodes && s->has_nodes ?
			nested3_design_effect(&base->nested3) :
			base->has_blocks ? nested_design_effect(&base->nested) : 1;
		bo.deff_var = base->has_nodes && s->has_nodes ?
			nested3_design_effect(&s->nested3) :
			s->has_blocks ? nested_design_effect(&s->nested) : 1;
	}
	if (stats_dilation_sorted(&bs, &vs, kind, p, &bo, &out->d) < 0) {
		out->reason = "not finite values";
		return;
	}
	out->ok = 1;
	/* runs nested in boots are not independent: resample boots, then runs
	 * (as the plain bootstrap, up to max_boot_n runs a side) */
	if (base->has_nodes && s->has_nodes && !big) {
		/* runs on several nodes: resample nodes, then boots, then runs */
		if (nested3_dilation_ci(base->values, base->nodes,
					base->node_blocks ? base->nodes : base->blocks, base->n,
					s->values, s->nodes, s->node_blocks ? s->nodes : s->blocks,
					s->n, kind, p, &bo, &out->d) < 0)
			out->d.ci_abs = out->d.ci_pct = (struct interval){
				.lo = NAN, .hi = NAN, .reason = "three-stage bootstrap failed" };
	} else if ((base->has_blocks || s->has_blocks) && !big &&
	    nested_dilation_ci(base->values, base->blocks, base->n, s->values, s->blocks, s->n,
			       kind, p, &bo, &out->d) < 0) {
		out->d.ci_abs = out->d.ci_pct = (struct interval){
			.lo = NAN, .hi = NAN, .reason = "two-stage bootstrap failed" };
	}
	if (isnan(out->d.pct) && !out->d.ci_pct.has_ci && !out->d.ci_pct.reason)
		out->d.ci_pct.reason = "baseline statistic is 0: no % dilation";
	/* both sides measured in the same blocks: the interval from the pairs
	 * (above the size limit, the asymptotic one of the sides apart, wider
	 * where the pairs share noise) */
	struct dilation pd;
	size_t K = 0;
	if (!big && nested_paired_dilation(base->values, base->blocks, base->n, s->values, s->blocks,
				   s->n, kind, p, &bo, &pd, &K) == 0 && K >= NESTED_MIN_PAIRS) {
		out->unpaired_ci_pct = out->d.ci_pct;
		out->d = pd;
		out->paired = 1;
		out->pairs = K;
		if (m->run.order && !strcmp(m->run.order, "duet")) {
			out->duet = 1;
			out->d.ci_abs.method = out->d.ci_pct.method = REPORT_DUET_METHOD;
		}
	}
	pct_guard(m, base, kind, p, out);
}

/* The A/A resolution of the group's baseline (report.h, struct report_noise). */
static void noise(const struct report_model *m, struct report_group *g)
{
	const struct report_series *base = report_baseline(g);
	struct report_noise *no = &g->noise;
	struct boot_opts bo = { .B = m->bootstrap, .conf = m->confidence,
				.max_boot_n = m->max_boot_n };
	double *h[2] = { NULL, NULL };
	int *pair[2] = { NULL, NULL }, one_block = 1, one_run = 1;
	size_t nh[2] = { 0, 0 }, K = 0;
	struct dilation d;
	double lo, hi;

	memset(no, 0, sizeof(*no));
	no->resolution_pct = NAN;
	if (m->opts->skip_noise) {
		no->reason = REPORT_NOISE_SKIPPED;
		return;
	}
	if (!base || base->n < 4 || !stats_all_finite(base->values, base->n)) {
		no->reason = "fewer than 4 baseline runs: no A/A estimate of the noise";
		return;
	}
	bo.seed = comparison_seed(m, g, base, 1000);
	for (size_t i = 1; i < base->n; i++) {
		one_block &= base->blocks[i] == base->blocks[0];
		one_run &= base->blocks[i] != base->blocks[i - 1];
	}
	for (int k = 0; k < 2; k++) {
		h[k] = xmalloc(base->n * sizeof(double));
		pair[k] = xmalloc(base->n * sizeof(int));
	}
	for (size_t i = 0; i < base->n; i++) {
		long key = one_block ? (long)i : base->blocks[i];
		int side = (int)(key & 1);
		h[side][nh[side]] = base->values[i];
		pair[side][nh[side]++] = (int)(key >> 1);
	}
	no->half = nh[0] < nh[1] ? nh[0] : nh[1];
	/* the pairs: neighbouring runs when the plan has no blocks (orders
	 * sequential and random), rounds when a block is one run of the
	 * baseline (interleaved, duet), boots otherwise */
	no->paired_by = one_block ? "neighbouring runs" : one_run ? "neighbouring rounds" :
		"neighbouring boots";
	/* above the size limit: the asymptotic interval of the halves apart */
	if (nh[0] <= m->max_boot_n && nh[1] <= m->max_boot_n &&
	    nested_paired_dilation(h[0], pair[0], nh[0], h[1], pair[1], nh[1], STATK_QUANTILE,
				   0.5, &bo, &d, &K) == 0 && K >= NESTED_MIN_PAIRS)
		no->paired = 1;
	else if (stats_dilation(h[0], nh[0], h[1], nh[1], STATK_QUANTILE, 0.5, &bo, &d) < 0)
		d.ci_pct.has_ci = 0;
	else if (decide_pct_guard(&d, stats_one_signed(base->sorted, base->n, STATK_QUANTILE, 0.5,
						       m->confidence, &lo, &hi)))
		no->reason = DECIDE_NO_PCT;
	if (d.ci_pct.has_ci && isfinite(d.ci_pct.lo) && isfinite(d.ci_pct.hi)) {
		no->ok = 1;
		no->method = d.ci_pct.method;
		no->resolution_pct = (d.ci_pct.hi - d.ci_pct.lo) / 2 / sqrt(2.0);
	} else {
		no->reason = no->reason ? no->reason : "no interval of the A/A median dilation";
	}
	for (int k = 0; k < 2; k++) {
		free(h[k]);
		free(pair[k]);
	}
}

/* The noise floor of a compared series (see report.h). */
static void noise_floor(const struct report_model *m, const struct report_series *base,
			struct report_series *s)
{
	double z, se;

	s->p50_resolution_pct = NAN;
	for (size_t k = 0; k < m->n_percentiles; k++) {
		const struct interval *iv = &s->pct_dil[k].d.ci_pct;
		if (m->percentiles[k] == 50 && s->pct_dil[k].ok && iv->has_ci)
			s->p50_resolution_pct = (iv->hi - iv->lo) / 2;
	}
	if (base->n < 2 || s->n < 2) {
		s->mde_reason = "needs at least 2 runs a side";
		return;
	}
	if (base->sum.mean == 0.0) {
		s->mde_reason = "baseline mean is 0: no % dilation";
		return;
	}
	if (s->mean_dil.no_pct) {
		s->mde_reason = DECIDE_NO_PCT;
		return;
	}
	z = stats_power_z(m->alpha, REPORT_MDE_POWER);
	se = sqrt(base->sum.var / (double)base->n + s->sum.var / (double)s->n);
	s->mde_pct = 100 * z * se / fabs(base->sum.mean);
	s->has_mde = isfinite(s->mde_pct);
	if (!s->has_mde)
		s->mde_reason = "not finite";
}

/* Does the group measure time (or cycles), which a virtual-time variant
 * counts in instructions? */
static int time_like(const struct report_group *g)
{
	static const char *const units[] = { "s", "ms", "us", "ns" };

	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(g->unit, units[i]))
			return 1;
	return strstr(g->metric, "cycles") != NULL;
}

int report_time_like(const struct report_group *g)
{
	return time_like(g);
}

/* Whether s can be compared with base: NULL, or why not.  The same for
 * the groups shown and those kept for the Holm family only. */
static const char *not_comparable(const struct report_group *g,
				  const struct report_series *base,
				  const struct report_series *s)
{
	if (!base || !base->n)
		return "the baseline has no successful run";
	if (!s->n)
		return "no successful run";
	if (!stats_all_finite(base->sorted, base->n) || !stats_all_finite(s->sorted, s->n))
		return "values that are not finite numbers";
	if (base->virtual_time != s->virtual_time && time_like(g))
		return s->virtual_time ?
			"virtual time (QEMU -icount: instructions) against a baseline in real "
			"time: not comparable; compare it with a deterministic baseline" :
			"real time against a baseline in virtual time (QEMU -icount: "
			"instructions): not comparable";
	return NULL;
}

/*
 * The rank test of s against base (s->mw; p NaN when not valid): on the
 * pairs when the plan measured both in the same blocks (rounds, ABBA boot
 * pairs; NESTED_MIN_PAIRS of them or more) and they are enough for the
 * test to reach alpha, the Wilcoxon signed-rank test of the differences of
 * the block means (runs nested in a block are averaged first, so each pair
 * counts once); the Mann-Whitney U test of the runs otherwise.  The exact
 * two-sided signed-rank p of K pairs is at least 2 / 2^K (every sign the
 * same; Hollander & Wolfe 1999, sec. 3.1): with 5 pairs 0.0625, so at
 * alpha 0.05 it could never decide, while U on the same 5 + 5 runs can.
 * The choice depends on the design and alpha only: the same for the
 * groups shown and those kept for the Holm family.
 */
static void rank_test(const struct report_series *base, struct report_series *s,
		      double alpha)
{
	size_t m = base->n < s->n ? base->n : s->n;
	double *mb = xmalloc(m * sizeof(double)), *mv = xmalloc(m * sizeof(double));
	int K = nested_paired_means(base->values, base->blocks, base->n, s->values, s->blocks,
				    s->n, mb, mv);

	if (K >= NESTED_MIN_PAIRS && 2 * pow(0.5, K) < alpha) {
		/* named so whether or not it could run (its reason says why) */
		s->rank_test = REPORT_TEST_SIGNED_RANK;
		for (int k = 0; k < K; k++)
			mb[k] = mv[k] - mb[k];
		if (stats_wilcoxon_signed_rank(mb, (size_t)K, &s->mw) < 0)
			s->mw.valid = 0;
	} else {
		s->rank_test = REPORT_TEST_MANN_WHITNEY;
		if (stats_mann_whitney_sorted(s->sorted, s->n, base->sorted, base->n, &s->mw) < 0)
			s->mw.valid = 0;
	}
	if (!s->mw.valid)
		s->mw.p = NAN;
	free(mb);
	free(mv);
}

/*
 * Why p0 or p100 (the smallest or the largest run) has no interval of its
 * dilation, whatever the number of runs.  A bootstrap of a sample extreme
 * is inconsistent (Bickel & Freedman, "Some asymptotic theory for the
 * bootstrap", Annals of Statistics 9(6), 1981, sec. 6; a resampled
 * minimum is the sample's own minimum with probability 1 - (1 - 1/n)^n,
 * about 63 %): it covered 77.5 % at a nominal 95 %.  And no
 * distribution-free interval exists for the smallest possible value: the
 * order statistics cover the p-quantile with probability
 * 1 - p^n - (1 - p)^n (stats_quantile_ci_min_n), 0 at p = 0 for every n.
 * The nearest percentile that has one is named with the runs it needs.
 */
static const char *extreme_reason(struct report_model *m, double pct)
{
	double near = pct <= 0 ? 1 : 99;
	size_t need = stats_quantile_ci_min_n(near / 100, m->confidence);
	char lvl[16], *s;
	const char *ret;

	fmt_level(lvl, sizeof(lvl), m->confidence);
	s = xasprintf("p%g is the %s run: a bootstrap of it covers far less than its level and "
		      "no number of runs gives a distribution-free %s %% interval of the %s "
		      "possible value; p%g has one from %zu runs", pct, pct <= 0 ? "smallest" :
		      "largest", lvl, pct <= 0 ? "smallest" : "largest", near, need);
	ret = report_intern(m, s);
	free(s);
	return ret;
}

/* dilate() of the mean (kind STATK_MEAN) or of the pct-th percentile at
 * level conf; a percentile that interpolates an extreme run of fewer runs
 * than its own CI needs gets no interval (report_pct_extreme), nor do p0
 * and p100 (extreme_reason). */
static void dilate_stat(struct report_model *m, const struct report_group *g,
			const struct report_series *base, const struct report_series *s,
			enum stat_kind kind, double pct, unsigned stat, double conf,
			struct report_dilation *out)
{
	struct dilation *d = &out->d;
	size_t fewest = base->n < s->n ? base->n : s->n;
	const char *few = kind != STATK_QUANTILE ? NULL :
		pct <= 0 || pct >= 100 ? extreme_reason(m, pct) :
		report_pct_extreme(pct, fewest) ? report_few_runs(m, pct, fewest) : NULL;

	dilate(m, g, base, s, kind, kind == STATK_QUANTILE ? pct / 100.0 : 0, stat, conf, out);
	/* an extreme run resampled looks precise and is not: no interval */
	if (few && out->ok) {
		d->ci_abs.has_ci = d->ci_pct.has_ci = 0;
		d->ci_abs.lo = d->ci_abs.hi = d->ci_pct.lo = d->ci_pct.hi = NAN;
		d->ci_abs.reason = d->ci_pct.reason = few;
	}
}

/* Is the dilation of this statistic (the mean, else the quantile pct)
 * computed (report_opts.want_mean, want_pcts)?  Else out says why not. */
static int dilation_wanted(const struct report_model *m, enum stat_kind kind, double pct,
			   struct report_dilation *out)
{
	const struct report_opts *o = m->opts;
	int wanted = !o->no_verdicts || (!o->want_mean && !o->n_want_pcts);

	if (kind == STATK_MEAN)
		wanted |= o->want_mean;
	for (size_t k = 0; kind != STATK_MEAN && k < o->n_want_pcts; k++)
		wanted |= o->want_pcts[k] == pct;
	if (!wanted) {
		memset(out, 0, sizeof(*out));
		out->reason = REPORT_NOT_COMPUTED;
	}
	return wanted;
}

/* Against the baseline: dilations, U test, KS test, Hodges-Lehmann. */
static void compare(struct report_model *m, const struct report_group *g,
		    const struct report_series *base, struct report_series *s)
{
	s->mw.p = s->ks.p = NAN;
	if (s->is_baseline)
		return;
	if ((s->no_compare_reason = not_comparable(g, base, s)))
		return;
	s->compared = 1;
	if (base->has_nodes && s->has_nodes)
		node_dilations(m, base, s);
	if (dilation_wanted(m, STATK_MEAN, 0, &s->mean_dil))
		dilate_stat(m, g, base, s, STATK_MEAN, 0, 0, m->confidence, &s->mean_dil);
	if (s->mean_dil.no_pct && s->node_dil_pct) {
		for (size_t j = 0; j < m->n_nodes; j++)
			s->node_dil_pct[j] = NAN;
		s->node_dil_sd = s->node_dil_min = s->node_dil_max = NAN;
	}
	{
		double lo, hi;
		if (stats_one_signed(base->sorted, base->n, STATK_QUANTILE, 0.5, m->confidence,
				     &lo, &hi)) {
			s->has_change = 1;
			s->median_change_pct = 100 * (s->median - base->median) /
					       fabs(base->median);
		}
	}
	for (size_t k = 0; k < m->n_percentiles; k++)
		if (dilation_wanted(m, STATK_QUANTILE, m->percentiles[k], &s->pct_dil[k]))
			dilate_stat(m, g, base, s, STATK_QUANTILE, m->percentiles[k], 1 + k,
				    m->confidence, &s->pct_dil[k]);
	noise_floor(m, base, s);
	rank_test(base, s, m->alpha);
	if (stats_ks2_sorted(s->sorted, s->n, base->sorted, base->n, &s->ks) < 0)
		s->ks.valid = 0;
	if (!s->ks.valid)
		s->ks.p = NAN;
	if ((double)base->n * (double)s->n > REPORT_HL_MAX_PAIRS)
		s->hl_reason = "skipped: more than 2.5e7 pairs of runs";
	else if (!(base->sorted[0] > 0) || !(s->sorted[0] > 0))	/* the minima */
		s->hl_reason = "values must be > 0 for a ratio";
	else if (stats_hodges_lehmann_ratio_sorted(base->sorted, base->n, s->sorted, s->n,
						   m->confidence, &s->hl) < 0)
		s->hl_reason = "not computable";
	else
		s->has_hl = 1;
}

static int micro_metric(const char *metric)
{
	static const char *const per_op[] = { "ns_per_op", "tsc_cycles_per_op", "cycles_per_op" };
	for (size_t i = 0; i < ARRAY_SIZE(per_op); i++)
		if (!strcmp(metric, per_op[i]))
			return 1;
	return 0;
}

/* The decisive statistic (report.h, struct report_verdict): its kind, its
 * percentile and the id of its bootstrap seed (the table's, when the
 * percentile is one of the report's). */
static void decisive_stat(const struct report_model *m, enum stat_kind *kind, double *pct,
			  unsigned *stat)
{
	const struct report_opts *o = m->opts;

	*kind = STATK_MEAN;
	*pct = 0;
	*stat = 0;
	if (o->statistic == REPORT_STAT_MEAN)
		return;
	*kind = STATK_QUANTILE;
	*pct = o->statistic == REPORT_STAT_PERCENTILE ? o->statistic_p : 50;
	*stat = 1 + REPORT_MAX_PERCENTILES;
	for (size_t k = 0; k < m->n_percentiles; k++)
		if (m->percentiles[k] == *pct)
			*stat = 1 + (unsigned)k;
}

/* One hypothesis of a Holm family: a compared series. */
struct hyp {
	const struct report_group *g;
	struct report_series *s;
};

struct family {
	struct report_model *m;
	struct hyp *h;
};

/* decide_holm's interval of hypothesis i at level: the decisive dilation's,
 * the same replicates at every level (the comparison's seed). */
static int verdict_at(void *vctx, size_t i, double level, double *lo, double *hi)
{
	struct family *f = vctx;
	const struct hyp *h = &f->h[i];
	struct report_dilation d;
	enum stat_kind kind;
	unsigned stat;
	double pct;

	decisive_stat(f->m, &kind, &pct, &stat);
	/* at the report's level a shown series has it already (compare():
	 * the same function of the same arguments) */
	if (level == f->m->confidence && !h->g->hidden && h->s->compared && kind == STATK_MEAN)
		d = h->s->mean_dil;
	else if (level == f->m->confidence && !h->g->hidden && h->s->compared &&
		 stat >= 1 && stat <= f->m->n_percentiles)
		d = h->s->pct_dil[stat - 1];
	else
		dilate_stat(f->m, h->g, report_baseline(h->g), h->s, kind, pct, stat, level, &d);
	h->s->verdict.ci = d.d.ci_pct;
	if (!d.ok || !d.d.ci_pct.has_ci || !isfinite(d.d.ci_pct.lo) ||
	    !isfinite(d.d.ci_pct.hi)) {
		h->s->verdict.reason = d.ok ? d.d.ci_pct.reason : d.reason;
		if (!h->s->verdict.reason)
			h->s->verdict.reason = "no interval of the dilation";
		return 0;
	}
	*lo = d.d.ci_pct.lo;
	*hi = d.d.ci_pct.hi;
	return 1;
}

/*
 * The verdicts (report.h: struct report_verdict) in two Holm families, the
 * primary metrics (report_primary_metric) and the rest, each over every
 * compared series of the stored run, shown or filtered out, whose
 * decisive dilation has an interval at the report's level.  A verdict is
 * then a property of the data, not of --metric or --workload.
 */
static void holm(struct report_model *m)
{
	size_t n = 0;
	struct hyp *h;
	struct decide_item *items;

	for (size_t gi = 0; gi < m->n_groups; gi++)
		n += m->groups[gi].n_series;
	h = xcalloc(n + 1, sizeof(*h));
	items = xcalloc(n + 1, sizeof(*items));
	for (int fam = 0; fam < 2; fam++) {
		struct family f = { .m = m, .h = h };
		size_t k = 0;
		int shown = 0;

		/* report_opts.wanted_families: no shown group in this family */
		for (size_t gi = 0; gi < m->n_groups && m->opts->wanted_families; gi++)
			shown |= !m->groups[gi].hidden &&
				 report_primary_metric(m->groups[gi].metric) == !fam;
		if (m->opts->wanted_families && !shown) {
			m->n_family[fam] = 0;
			continue;
		}

		for (size_t gi = 0; gi < m->n_groups; gi++) {
			const struct report_group *g = &m->groups[gi];
			if (report_primary_metric(g->metric) != !fam)
				continue;
			for (size_t i = 0; i < g->n_series; i++) {
				struct report_series *s = &g->series[i];
				double lo, hi;

				s->verdict.v = DECIDE_UNDECIDED;
				s->verdict.ci = (struct interval){ .lo = NAN, .hi = NAN };
				if (!s->compared) {
					s->verdict.reason = s->is_baseline ? "the baseline" :
						s->no_compare_reason;
					continue;
				}
				h[k] = (struct hyp){ g, s };
				if (verdict_at(&f, k, m->confidence, &lo, &hi) > 0)
					k++;
			}
		}
		m->n_family[fam] = k;
		for (size_t i = 0; i < k; i++)
			items[i] = (struct decide_item){ .t = 0, .alpha = m->alpha };
		/* the intervals of the last step are kept in verdict.ci */
		if (decide_holm(items, k, verdict_at, &f) < 0)
			k = 0;
		for (size_t i = 0; i < k; i++) {
			struct report_series *s = h[i].s;
			s->verdict.tested = 1;
			s->verdict.reason = NULL;
			s->verdict.v = items[i].verdict;
			s->verdict.ci.level = items[i].level;
			s->significant = items[i].verdict != DECIDE_UNDECIDED;
		}
	}
	m->n_comparisons = m->n_family[0] + m->n_family[1];
	free(h);
	free(items);
}

/* report_opts.no_verdicts: instead of holm(), every verdict untested. */
static void not_judged(struct report_model *m)
{
	for (size_t gi = 0; gi < m->n_groups; gi++)
		for (size_t i = 0; i < m->groups[gi].n_series; i++) {
			struct report_verdict *v = &m->groups[gi].series[i].verdict;
			*v = (struct report_verdict){ .v = DECIDE_UNDECIDED,
						       .reason = REPORT_NOT_JUDGED };
			v->ci.lo = v->ci.hi = NAN;
		}
	m->n_family[0] = m->n_family[1] = m->n_comparisons = 0;
}

/* A group kept for the Holm families only: what prepare() gives, then
 * compared as when shown (its dilations are computed by holm() alone). */
static void family_only(struct report_model *m, struct report_group *g)
{
	const struct report_series *base = report_baseline(g);

	for (size_t i = 0; i < g->n_series; i++)
		prepare(m, g, &g->series[i]);
	for (size_t i = 0; i < g->n_series; i++) {
		struct report_series *s = &g->series[i];
		s->mw.p = NAN;
		if (s->is_baseline || not_comparable(g, base, s))
			continue;
		s->compared = 1;
	}
}

void report_release_group(struct report_group *g)
{
	for (size_t i = 0; i < g->n_series; i++) {
		free(g->series[i].values);
		free(g->series[i].blocks);
		free(g->series[i].seqs);
		free(g->series[i].nodes);
		free(g->series[i].node_dil_pct);
		free(g->series[i].sorted);
		free(g->series[i].ecdf_x);
		free(g->series[i].ecdf_p);
		free(g->series[i].hist);
	}
	free(g->series);
}

/* After holm(): the groups filtered out leave the model. */
static void drop_hidden(struct report_model *m)
{
	size_t k = 0;

	for (size_t gi = 0; gi < m->n_groups; gi++)
		if (m->groups[gi].hidden)
			report_release_group(&m->groups[gi]);
		else
			m->groups[k++] = m->groups[gi];
	m->n_groups = k;
}

int report_primary_metric(const char *metric)
{
	return !strcmp(metric, "wall") || micro_metric(metric);
}

void report_compute(struct report_model *m)
{
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		struct report_group *g = &m->groups[gi];
		const struct report_series *base = report_baseline(g);

		g->lo = g->hi = NAN;
		g->micro = micro_metric(g->metric);
		if (g->hidden) {
			family_only(m, g);
			continue;
		}
		for (size_t i = 0; i < g->n_series; i++) {
			prepare(m, g, &g->series[i]);
			describe(m, g, &g->series[i]);
		}
		for (size_t i = 0; i < g->n_series; i++)
			compare(m, g, base, &g->series[i]);
		noise(m, g);
	}
	if (m->opts->no_verdicts)
		not_judged(m);
	else
		holm(m);
	report_warning_tests(m);	/* their families too: every group */
	drop_hidden(m);
	/* the verdicts read the sorted values until here */
	for (size_t gi = 0; gi < m->n_groups; gi++)
		for (size_t i = 0; i < m->groups[gi].n_series; i++) {
			free(m->groups[gi].series[i].sorted);
			m->groups[gi].series[i].sorted = NULL;
		}
}

