/* report.c - building the report model from the store; see report.h */
#include "report.h"
#include "warnings.h"
#include "fmt.h"
#include "stats/stats.h"
#include "lib/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct renderer *renderers[] = {
	&render_text,
	&render_markdown,
	&render_csv,
	&render_csv_curves,
	&render_json,
	&render_html,
	&render_summary,
};

const struct renderer *renderer_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(renderers); i++)
		if (!strcmp(renderers[i]->name, name))
			return renderers[i];
	return NULL;
}

const char *renderer_names(void)
{
	static char buf[256];
	if (!buf[0])
		for (size_t i = 0; i < ARRAY_SIZE(renderers); i++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
				 i ? ", " : "", renderers[i]->name);
	return buf;
}

/* Strings of the model: interned so that pointers can be compared. */
static const char *intern(struct report_model *m, const char *s)
{
	return report_intern(m, s);
}

static int in_list(char **list, size_t n, const char *s)
{
	if (!n)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return 1;
	return 0;
}

/* What the values of one (metric, workload) pair are for: decided on the
 * pair's first value. */
struct slot {
	int seen;		/* 0: no value yet, the rest is unset */
	int wanted;		/* passes --workload/--metric */
	const char *workload, *metric;	/* interned */
	size_t group;		/* index in m->groups, or SIZE_MAX before the
				   pair's first measured, successful value */
};

struct build_ctx {
	struct report_model *m;
	char **variants, **workloads;	/* stored order */
	size_t n_variants, n_workloads;
	const char **variant_names;	/* interned, by variant idx */
	int *virtual_time;		/* by variant idx */
	const char **labels;		/* interned, by variant idx */
	struct slot **slots;	/* [metric_idx][workload_idx] */
	size_t n_slot_metrics;
	size_t **alloc_values;	/* per group, per series: capacity of values */
	size_t n_alloc_values;	/* groups made (the model may drop some later) */
	size_t alloc_caps;
	struct store_shard *shards;	/* a study run in shards: by seq range */
	size_t n_shards;
	int *shard_node;		/* by shard: its node index, -1 unknown */
};

/* The node of plan entry seq: its shard's (-1 when not known). */
static int node_of(const struct build_ctx *b, int seq)
{
	size_t lo = 0, hi = b->n_shards;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (seq < b->shards[mid].seq_lo)
			hi = mid;
		else if (seq >= b->shards[mid].seq_hi)
			lo = mid + 1;
		else
			return b->shard_node[mid];
	}
	return -1;
}

/* Nodes of a study run in shards, each named once. */
static int load_nodes(struct store *st, int64_t id, struct build_ctx *b)
{
	struct report_model *m = b->m;

	if (store_load_shards(st, id, &b->shards, &b->n_shards) < 0)
		return -1;
	b->shard_node = xcalloc(b->n_shards + 1, sizeof(int));
	for (size_t k = 0; k < b->n_shards; k++) {
		const char *name = b->shards[k].node;
		size_t j;
		b->shard_node[k] = -1;
		if (!name)
			continue;
		for (j = 0; j < m->n_nodes && strcmp(m->node_names[j], name); j++)
			;
		if (j == m->n_nodes) {
			m->node_names = xrealloc(m->node_names, (j + 1) * sizeof(char *));
			m->node_names[m->n_nodes++] = intern(m, name);
		}
		b->shard_node[k] = (int)j;
	}
	return 0;
}

static struct slot *slot_for(struct build_ctx *b, const struct stored_value *v)
{
	const struct report_opts *o = b->m->opts;
	struct slot *sl;

	if ((size_t)v->metric_idx >= b->n_slot_metrics) {
		size_t n = v->metric_idx + 1;
		b->slots = xrealloc(b->slots, n * sizeof(*b->slots));
		for (size_t i = b->n_slot_metrics; i < n; i++)
			b->slots[i] = xcalloc(b->n_workloads, sizeof(**b->slots));
		b->n_slot_metrics = n;
	}
	sl = &b->slots[v->metric_idx][v->workload_idx];
	if (!sl->seen) {
		sl->seen = 1;
		sl->wanted = in_list(o->workloads, o->n_workloads, v->workload) &&
			in_list(o->metrics, o->n_metrics, v->metric);
		sl->workload = intern(b->m, v->workload);
		sl->metric = intern(b->m, v->metric);
		sl->group = SIZE_MAX;
	}
	return sl;
}

/* The group of a pair, made on its first measured, successful value. */
static struct report_group *group_for(struct build_ctx *b, struct slot *sl,
				      const struct stored_value *v)
{
	struct report_model *m = b->m;
	struct report_group *g;

	if (sl->group != SIZE_MAX)
		return &m->groups[sl->group];
	ALLOC_GROW(m->groups, m->n_groups + 1, m->alloc_groups);
	ALLOC_GROW(b->alloc_values, m->n_groups + 1, b->alloc_caps);
	b->alloc_values[m->n_groups] = xcalloc(b->n_variants, sizeof(size_t));
	b->n_alloc_values = m->n_groups + 1;
	sl->group = m->n_groups;
	g = &m->groups[m->n_groups++];
	memset(g, 0, sizeof(*g));
	g->workload = sl->workload;
	g->metric = sl->metric;
	g->unit = intern(m, v->unit ? v->unit : "");
	g->n_series = b->n_variants;
	g->series = xcalloc(b->n_variants, sizeof(*g->series));
	for (size_t i = 0; i < b->n_variants; i++) {
		g->series[i].variant = b->variant_names[i];
		g->series[i].is_baseline = !strcmp(b->variants[i], m->baseline);
		g->series[i].virtual_time = b->virtual_time[i];
		g->series[i].label = b->labels[i];
		g->series[i].median = NAN;
	}
	return g;
}

/*
 * One value of the store's walk (any order): to the rows when asked, and
 * to its series when measured and successful.  Strings are compared once
 * per (metric, workload) pair, not per value: the pair's slot and the
 * variant come by index.
 */
static int collect(const struct stored_value *v, void *vctx)
{
	struct build_ctx *b = vctx;
	struct report_model *m = b->m;
	struct report_group *g;
	struct report_series *s;
	struct slot *sl;
	size_t vi = v->variant_idx;

	if (v->workload_idx < 0 || (size_t)v->workload_idx >= b->n_workloads ||
	    v->variant_idx < 0 || vi >= b->n_variants || v->metric_idx < 0)
		return error("run %lld: a value of an unknown workload or variant (seq %d)",
			     (long long)m->run.id, v->seq);
	sl = slot_for(b, v);
	if (m->opts->want_rows && sl->wanted) {
		ALLOC_GROW(m->rows, m->n_rows + 1, m->alloc_rows);
		struct report_row *r = &m->rows[m->n_rows++];
		r->seq = v->seq;
		r->repetition = v->repetition;
		r->warmup = v->warmup;
		r->variant = b->variant_names[vi];
		r->workload = sl->workload;
		r->metric = sl->metric;
		r->unit = intern(m, v->unit ? v->unit : "");
		r->status = intern(m, v->status ? v->status : "ok");
		r->value = v->value;
		r->workload_idx = v->workload_idx;
		r->variant_idx = v->variant_idx;
		r->block = v->block;
		r->virtual_time = b->virtual_time[vi];
	}

	/* Statistics take measured, successful runs only. */
	if (v->warmup || (v->status && strcmp(v->status, "ok")))
		return 0;
	g = group_for(b, sl, v);
	g->hidden = !sl->wanted;	/* kept for the Holm family only */
	s = &g->series[vi];
	size_t cap = b->alloc_values[sl->group][vi];
	grow_array((void **)&s->values, &b->alloc_values[sl->group][vi], s->n + 1,
		   sizeof(double));
	if (cap != b->alloc_values[sl->group][vi]) {
		s->blocks = xrealloc(s->blocks, b->alloc_values[sl->group][vi] * sizeof(int));
		s->seqs = xrealloc(s->seqs, b->alloc_values[sl->group][vi] * sizeof(int));
		if (b->n_shards)
			s->nodes = xrealloc(s->nodes, b->alloc_values[sl->group][vi] * sizeof(int));
	}
	s->blocks[s->n] = v->block;
	s->seqs[s->n] = v->seq;
	if (b->n_shards)
		s->nodes[s->n] = node_of(b, v->seq);
	s->values[s->n++] = v->value;
	return 0;
}

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
 * the sorted copy: no function sorts again; compute() frees it), the
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

	memset(no, 0, sizeof(*no));
	no->resolution_pct = NAN;
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
	if (d.ci_pct.has_ci && isfinite(d.ci_pct.lo) && isfinite(d.ci_pct.hi)) {
		no->ok = 1;
		no->method = d.ci_pct.method;
		no->resolution_pct = (d.ci_pct.hi - d.ci_pct.lo) / 2 / sqrt(2.0);
	} else {
		no->reason = "no interval of the A/A median dilation";
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
	if (base->median != 0.0) {
		s->has_change = 1;
		s->median_change_pct = stats_pct_change(base->median, s->median);
	}
	dilate_stat(m, g, base, s, STATK_MEAN, 0, 0, m->confidence, &s->mean_dil);
	for (size_t k = 0; k < m->n_percentiles; k++)
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

static void release_group(struct report_group *g)
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
			release_group(&m->groups[gi]);
		else
			m->groups[k++] = m->groups[gi];
	m->n_groups = k;
}

int report_primary_metric(const char *metric)
{
	return !strcmp(metric, "wall") || micro_metric(metric);
}

static void compute(struct report_model *m)
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

/* ---- runs per boot (struct report_runs_per_boot) ---- */

#define RPB_STORED_BEFORE " not recorded (the study was stored before perturb measured it)"

/* s's runs per boot, from its variant's block costs vc and its runs' rc
 * (NULL: none). */
static void size_runs_per_boot(struct report_series *s, const struct store_block_cost *vc,
			       const struct store_run_cost *rc)
{
	struct report_runs_per_boot *p = &s->rpb;
	int no_boot = !vc->entries, no_run = !rc || !rc->n;

	p->used = (double)s->nested.n / (double)s->nested.n_groups;
	p->boot_cost_s = no_boot ? NAN : (vc->switch_s + vc->warmup_s) / (double)vc->entries;
	p->run_cost_s = no_run ? NAN : rc->sum_s / (double)rc->n;
	p->optimal = 0;
	p->reason = NULL;
	p->no_boot_effect = s->nested.var_between == 0;
	if (p->no_boot_effect)
		p->reason = "no measurable boot effect (between-boot variance 0): fewer boots, "
			    "more runs each";
	else if (no_boot && no_run)
		p->reason = "the costs of a boot and of a run are" RPB_STORED_BEFORE;
	else if (no_boot)
		p->reason = "the cost of a boot is" RPB_STORED_BEFORE;
	else if (no_run)
		p->reason = "the cost of a run is" RPB_STORED_BEFORE;
	else if (!(p->optimal = nested_optimal_runs(&s->nested, p->boot_cost_s, p->run_cost_s)))
		p->reason = "a cost of 0 s gives no optimum";
}

/* The runs per boot of every series with blocks, from the costs the
 * engine stored (store_block_costs()).  0, or -1 (printed). */
static int runs_per_boot(struct store *st, int64_t id, struct report_model *m,
			 const struct build_ctx *b)
{
	struct store_block_cost *vc;
	struct store_run_cost *rc;
	int ret = -1;

	if (!m->n_nested_groups)
		return 0;
	vc = xcalloc(b->n_variants + 1, sizeof(*vc));
	rc = xcalloc(b->n_workloads * b->n_variants + 1, sizeof(*rc));
	if (store_block_costs(st, id, b->n_variants, b->n_workloads, vc, rc) < 0)
		goto out;
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		struct report_group *g = &m->groups[gi];
		size_t wi = 0;

		if (!g->nested)
			continue;
		while (wi < b->n_workloads && strcmp(b->workloads[wi], g->workload))
			wi++;
		/* a group's series are the variants in stored order (group_for) */
		for (size_t vi = 0; vi < g->n_series && vi < b->n_variants; vi++)
			if (g->series[vi].has_blocks)
				size_runs_per_boot(&g->series[vi], &vc[vi],
						   wi < b->n_workloads ?
						   &rc[wi * b->n_variants + vi] : NULL);
	}
	ret = 0;
out:
	free(vc);
	free(rc);
	return ret;
}

/* ---- tracer accounting ---- */

/*
 * Per workload (report order) and variant (run order) with trace_events
 * values: events, lost and bytes per run.  After compute(): takes the
 * series' summaries and medians.
 */
static void tracer(struct report_model *m)
{
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *ev = &m->groups[gi], *lost, *bytes;

		if (strcmp(ev->metric, REPORT_TRACE_EVENTS))
			continue;
		lost = report_find_group(m, ev->workload, REPORT_TRACE_LOST);
		bytes = report_find_group(m, ev->workload, REPORT_TRACE_BYTES);
		for (size_t i = 0; i < ev->n_series; i++) {
			const struct report_series *s = &ev->series[i], *ls, *bs;
			struct report_tracer *t;

			if (!s->n)
				continue;
			ALLOC_GROW(m->tracer, m->n_tracer + 1, m->alloc_tracer);
			t = &m->tracer[m->n_tracer++];
			memset(t, 0, sizeof(*t));
			t->workload = ev->workload;
			t->variant = s->variant;
			t->is_baseline = s->is_baseline;
			t->n = s->n;
			t->events_median = s->has_summary ? s->median : NAN;
			t->events_mean = s->has_summary ? s->sum.mean : NAN;
			t->lost_median = t->bytes_median = NAN;
			if ((ls = report_find_series(lost, s->variant)) && ls->n) {
				t->lost_n = ls->n;
				t->lost_median = ls->median;
				for (size_t k = 0; k < ls->n; k++)
					t->lost_runs += ls->values[k] > 0;
				m->n_tracer_lossy += t->lost_runs > 0;
			}
			if ((bs = report_find_series(bytes, s->variant)) && bs->n) {
				t->bytes_n = bs->n;
				t->bytes_median = bs->median;
			}
		}
	}
}

int report_quiet_metric(const char *metric)
{
	static const char *const cost[] = {
		"wall", "cgroup_cpu_s", "task-clock", "cycles", "instructions", "PAPI_TOT_CYC",
		"PAPI_TOT_INS", "ref-cycles",
	};
	for (size_t i = 0; i < ARRAY_SIZE(cost); i++)
		if (!strcmp(metric, cost[i]))
			return 1;
	return 0;
}

/* The half-width in % of the decisive dilation's interval of variant in
 * g, or NaN. */
static double half_width(const struct report_model *m, const struct report_group *g,
			 const char *variant)
{
	const struct report_series *s = report_find_series(g, variant);
	const struct report_dilation *d = s ? report_stat_dilation(m, s) : NULL;

	if (!d || !d->d.ci_pct.has_ci || !isfinite(d->d.ci_pct.lo) || !isfinite(d->d.ci_pct.hi))
		return NAN;
	return (d->d.ci_pct.hi - d->d.ci_pct.lo) / 2;
}

/* The quieter-metric entries (report.h, struct report_quiet). */
static void quieter(struct report_model *m)
{
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *wall = &m->groups[gi];

		if (strcmp(wall->metric, "wall"))
			continue;
		for (size_t i = 0; i < wall->n_series; i++) {
			struct report_quiet q = {
				.workload = wall->workload, .variant = wall->series[i].variant,
				.wall_hw = half_width(m, wall, wall->series[i].variant),
				.alt_hw = NAN,
			};
			if (isnan(q.wall_hw))
				continue;
			q.candidates = 1;
			for (size_t gj = 0; gj < m->n_groups; gj++) {
				const struct report_group *g = &m->groups[gj];
				double hw;
				if (g->workload != wall->workload || g == wall ||
				    !report_quiet_metric(g->metric) ||
				    isnan(hw = half_width(m, g, q.variant)))
					continue;
				q.candidates++;
				if (!q.alt || hw < q.alt_hw) {
					q.alt = g->metric;
					q.alt_hw = hw;
				}
			}
			if (!q.alt)
				continue;
			ALLOC_GROW(m->quiet, m->n_quiet + 1, m->alloc_quiet);
			m->quiet[m->n_quiet++] = q;
		}
	}
}

int report_metric_rank(const char *metric)
{
	static const char *const builtin[] = { "wall", "user", "sys", "maxrss" };
	for (size_t i = 0; i < ARRAY_SIZE(builtin); i++)
		if (!strcmp(metric, builtin[i]))
			return (int)i;
	return (int)ARRAY_SIZE(builtin);
}

struct order_ctx {
	char **workloads;
	size_t n;
};

static size_t workload_rank(const struct order_ctx *c, const char *w)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->workloads[i], w))
			return i;
	return c->n;
}

static int cmp_group(const void *a, const void *b, void *vctx)
{
	const struct report_group *x = a, *y = b;
	const struct order_ctx *c = vctx;
	size_t wx = workload_rank(c, x->workload), wy = workload_rank(c, y->workload);
	int mx = report_metric_rank(x->metric), my = report_metric_rank(y->metric);

	if (wx != wy)
		return wx < wy ? -1 : 1;
	if (mx != my)
		return mx - my;
	return strcmp(x->metric, y->metric);
}

/* Groups in the order the report shows them, whatever order the values
 * came in: workloads as in the experiment, then wall, user, sys, maxrss,
 * then the other metrics by name. */
static void order_groups(struct report_model *m, char **workloads, size_t n)
{
	struct order_ctx c = { .workloads = workloads, .n = n };

	qsort_r(m->groups, m->n_groups, sizeof(*m->groups), cmp_group, &c);
}

static int cmp_row(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int mx, my, c;

	if (x->workload_idx != y->workload_idx)
		return x->workload_idx < y->workload_idx ? -1 : 1;
	if (x->metric != y->metric) {	/* interned */
		mx = report_metric_rank(x->metric);
		my = report_metric_rank(y->metric);
		if (mx != my)
			return mx - my;
		if ((c = strcmp(x->metric, y->metric)))
			return c;
	}
	if (x->variant_idx != y->variant_idx)
		return x->variant_idx < y->variant_idx ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The bucket of a row: its (workload, metric, variant), the metric interned. */
static uint64_t row_hash(const struct report_row *r)
{
	uint64_t h = (uint64_t)(uintptr_t)r->metric * 0x9e3779b97f4a7c15ULL;

	h ^= ((uint64_t)(uint32_t)r->workload_idx << 32 | (uint32_t)r->variant_idx) *
	     0xc2b2ae3d27d4eb4fULL;
	return h ^ h >> 29;
}

static int same_bucket(const struct report_row *x, const struct report_row *y)
{
	return x->workload_idx == y->workload_idx && x->metric == y->metric &&
	       x->variant_idx == y->variant_idx;
}

static int cmp_rep(const void *a, const void *b, void *ctx)
{
	const struct report_row *rows = ctx;

	return cmp_row(&rows[*(const size_t *)a], &rows[*(const size_t *)b]);
}

/* Rows (tidy formats) by workload (experiment order), metric (as groups),
 * variant (experiment order), seq.  A study has few (workload, metric,
 * variant) buckets and millions of rows: the buckets are sorted, the rows
 * placed by a counting sort (stable, O(n)), and a bucket sorted by seq only
 * where the walk did not give it in seq order (issue 25: a full qsort of
 * 4·10^6 rows was most of `report --format csv`'s time). */
static void order_rows(struct report_model *m)
{
	size_t n = m->n_rows, cap = 64, nb = 0;
	size_t *slot, *rep, *bucket, *start, *rank;
	struct report_row *out;

	if (n < 2)
		return;
	while (cap < 2 * n && cap < 2 * 65536)
		cap <<= 1;
	slot = xmalloc(cap * sizeof(*slot));
	memset(slot, 0xff, cap * sizeof(*slot));
	rep = xmalloc(cap * sizeof(*rep));
	bucket = xmalloc(n * sizeof(*bucket));
	for (size_t i = 0; i < n; i++) {
		size_t h = row_hash(&m->rows[i]) & (cap - 1);

		while (slot[h] != SIZE_MAX && !same_bucket(&m->rows[rep[slot[h]]], &m->rows[i]))
			h = (h + 1) & (cap - 1);
		if (slot[h] == SIZE_MAX) {
			if (nb + 1 >= cap / 2) {	/* more buckets than the table holds */
				free(slot), free(rep), free(bucket);
				qsort(m->rows, n, sizeof(*m->rows), cmp_row);
				return;
			}
			rep[nb] = i;
			slot[h] = nb++;
		}
		bucket[i] = slot[h];
	}
	/* rep[k] the first row of bucket k; the buckets in report order */
	size_t *order = xmalloc(nb * sizeof(*order));
	for (size_t k = 0; k < nb; k++)
		order[k] = rep[k];
	qsort_r(order, nb, sizeof(*order), cmp_rep, m->rows);
	rank = xcalloc(nb + 1, sizeof(*rank));
	start = xcalloc(nb + 1, sizeof(*start));
	for (size_t k = 0; k < nb; k++)
		rank[bucket[order[k]]] = k;
	for (size_t i = 0; i < n; i++)
		start[rank[bucket[i]] + 1]++;
	for (size_t k = 0; k < nb; k++)
		start[k + 1] += start[k];
	out = xmalloc(n * sizeof(*out));
	{
		size_t *next = xmalloc(nb * sizeof(*next));
		memcpy(next, start, nb * sizeof(*next));
		for (size_t i = 0; i < n; i++)
			out[next[rank[bucket[i]]]++] = m->rows[i];
		free(next);
	}
	for (size_t k = 0; k < nb; k++) {
		struct report_row *b = out + start[k];
		size_t len = start[k + 1] - start[k];

		for (size_t i = 1; i < len; i++)
			if (b[i - 1].seq > b[i].seq) {
				qsort(b, len, sizeof(*b), cmp_seq);
				break;
			}
	}
	free(m->rows);
	m->rows = out;
	m->alloc_rows = n;
	free(slot), free(rep), free(bucket), free(order), free(rank), free(start);
}

/* Each series' failed runs, from the walk's counts per (workload, variant). */
static void set_failed(struct report_model *m, const struct build_ctx *b,
		       const int *failed)
{
	struct order_ctx c = { .workloads = b->workloads, .n = b->n_workloads };

	for (size_t gi = 0; gi < m->n_groups; gi++) {
		struct report_group *g = &m->groups[gi];
		size_t wi = workload_rank(&c, g->workload);

		for (size_t i = 0; i < g->n_series && wi < b->n_workloads; i++)
			g->series[i].failed = failed[wi * b->n_variants + i];
	}
}

/* store_each_failure(): one struct report_failure per (workload, variant). */
static int add_failure(const struct stored_failure *f, void *ctx)
{
	struct report_model *m = ctx;
	const struct report_opts *o = m->opts;
	struct report_failure *r;
	char *tail;

	if (o->n_workloads && !in_list(o->workloads, o->n_workloads, f->workload))
		return 0;
	for (size_t i = 0; i < m->n_failures; i++) {
		r = &m->failures[i];
		if (!strcmp(r->workload, f->workload) && !strcmp(r->variant, f->variant)) {
			r->n++;
			return 0;
		}
	}
	ALLOC_GROW(m->failures, m->n_failures + 1, m->alloc_failures);
	r = &m->failures[m->n_failures++];
	tail = last_lines(f->output_tail, REPORT_TAIL_LINES);
	*r = (struct report_failure){
		.workload = intern(m, f->workload), .variant = intern(m, f->variant), .n = 1,
		.seq = f->seq, .repetition = f->repetition, .warmup = f->warmup,
		.status = intern(m, f->status ? f->status : "failed"),
		.reason = intern(m, f->reason ? f->reason : ""), .tail = intern(m, tail),
	};
	free(tail);
	return 0;
}

static void settings(struct report_model *m, const struct report_opts *o)
{
	static const double def_pct[] = { 0, 50, 80, 99 };

	if (o->n_percentiles) {
		memcpy(m->percentiles, o->percentiles, o->n_percentiles * sizeof(double));
		m->n_percentiles = o->n_percentiles;
	} else {
		memcpy(m->percentiles, def_pct, sizeof(def_pct));
		m->n_percentiles = ARRAY_SIZE(def_pct);
	}
	m->confidence = o->confidence > 0 ? o->confidence : 0.95;
	m->alpha = 1.0 - m->confidence;
	m->bootstrap = o->bootstrap ? o->bootstrap : 2000;
	m->max_boot_n = o->max_boot_n ? o->max_boot_n : 20000;
	m->bca = o->bca;
	m->config_metric = o->config_metric ? o->config_metric : "wall";
}

/* ---- helpers for renderers ---- */

/* report_group.primary: per workload its primary metric's group (stored:
 * names[] by workload, n of them; --config-metric first, wall last), else
 * its first. */
static void set_primary(struct report_model *m, const struct build_ctx *b, char **names,
			size_t n)
{
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		struct report_group *g = &m->groups[gi];
		const char *want = m->config_metric;
		int seen = 0;
		for (size_t w = 0; !m->opts->config_metric && w < b->n_workloads && w < n; w++)
			if (names[w] && !strcmp(b->workloads[w], g->workload))
				want = names[w];
		for (size_t k = 0; k < gi; k++)
			seen |= m->groups[k].workload == g->workload;
		if (seen)
			continue;
		if (!report_find_group(m, g->workload, want))
			g->primary = 1;
		else
			((struct report_group *)report_find_group(m, g->workload, want))->primary = 1;
	}
}

int report_build(struct store *st, const struct report_opts *o,
		 struct report_model *m, int *usage_error)
{
	struct build_ctx b = { 0 };
	struct store_walk w = {
		.include_warmup = o->include_warmup,
		.include_failed = o->include_failed,
		.fn = collect,
		.ctx = &b,
	};
	int64_t id = o->run_id;
	int *total = NULL, *failed = NULL, ret = -1;
	char **timebases = NULL, **primaries = NULL;
	size_t n_timebases = 0, n_primaries = 0;

	memset(m, 0, sizeof(*m));
	m->opts = o;
	settings(m, o);
	*usage_error = 0;
	if (!id) {
		if (store_latest_run(st, &id) < 0)
			return -1;
		if (!id) {
			*usage_error = 1;
			return error("the results database holds no run yet");
		}
	}
	if (store_run_header(st, id, &m->run) < 0) {
		*usage_error = 1;
		return -1;
	}
	if (store_variant_names(st, id, &b.variants, &b.n_variants) < 0)
		goto out;
	m->baseline = intern(m, o->baseline ? o->baseline : m->run.baseline);
	if (!in_list(b.variants, b.n_variants, m->baseline) || !b.n_variants) {
		*usage_error = 1;
		error("run %lld has no variant named '%s'", (long long)id, m->baseline);
		goto out;
	}
	if (store_workload_names(st, id, &b.workloads, &b.n_workloads) < 0)
		goto out;
	b.m = m;
	b.variant_names = xcalloc(b.n_variants, sizeof(*b.variant_names));
	for (size_t i = 0; i < b.n_variants; i++)
		b.variant_names[i] = intern(m, b.variants[i]);
	if (store_variant_timebases(st, id, &timebases, &n_timebases) < 0)
		goto out;
	b.virtual_time = xcalloc(b.n_variants, sizeof(int));
	b.labels = xcalloc(b.n_variants, sizeof(*b.labels));
	for (size_t i = 0; i < b.n_variants; i++) {
		b.labels[i] = b.variant_names[i];
		if (i >= n_timebases || strcmp(timebases[i], "virtual"))
			continue;
		char *l = xasprintf("%s (virtual time)", b.variants[i]);
		b.labels[i] = intern(m, l);
		free(l);
		b.virtual_time[i] = 1;
		ALLOC_GROW(m->virtual_variants, m->n_virtual + 1, m->alloc_virtual);
		m->virtual_variants[m->n_virtual++] = b.variant_names[i];
	}
	/* the series' failed runs, counted on the walk (not a query each) */
	w.total = total = xcalloc(b.n_workloads * b.n_variants + 1, sizeof(*total));
	w.failed = failed = xcalloc(b.n_workloads * b.n_variants + 1, sizeof(*failed));
	w.n_workloads = b.n_workloads;
	w.n_variants = b.n_variants;
	if (load_nodes(st, id, &b) < 0 || store_walk_values(st, id, &w) < 0)
		goto out;
	if (store_each_failure(st, id, add_failure, m) < 0)
		goto out;
	order_groups(m, b.workloads, b.n_workloads);
	order_rows(m);
	set_failed(m, &b, failed);
	compute(m);
	if (runs_per_boot(st, id, m, &b) < 0)
		goto out;
	tracer(m);
	quieter(m);
	report_histograms(m);
	if (report_curves(st, id, m) < 0)
		goto out;
	if (report_calibration(st, id, m) < 0)	/* reports/calib.c */
		goto out;
	report_warnings(m);
	if (store_workload_primaries(st, id, &primaries, &n_primaries) < 0)
		goto out;
	set_primary(m, &b, primaries, n_primaries);
	ret = 0;
out:
	for (size_t i = 0; i < b.n_alloc_values; i++)
		free(b.alloc_values[i]);
	free(b.alloc_values);
	store_shards_free(b.shards, b.n_shards);
	free(b.shard_node);
	for (size_t i = 0; i < b.n_slot_metrics; i++)
		free(b.slots[i]);
	free(b.slots);
	free(b.variant_names);
	free(b.virtual_time);
	free(b.labels);
	for (size_t i = 0; i < n_timebases; i++)
		free(timebases[i]);
	free(timebases);
	for (size_t i = 0; i < n_primaries; i++)
		free(primaries[i]);
	free(primaries);
	for (size_t i = 0; i < b.n_variants; i++)
		free(b.variants[i]);
	free(b.variants);
	for (size_t i = 0; i < b.n_workloads; i++)
		free(b.workloads[i]);
	free(b.workloads);
	free(total);
	free(failed);
	return ret;
}

void report_release(struct report_model *m)
{
	for (size_t g = 0; g < m->n_groups; g++)
		release_group(&m->groups[g]);
	free(m->groups);
	free(m->rows);
	free(m->tracer);
	for (size_t i = 0; i < m->n_curves; i++)
		free(m->curves[i].pts);
	free(m->curves);
	free(m->failures);
	report_calib_release(m);
	free(m->quiet);
	free(m->virtual_variants);
	for (size_t i = 0; i < m->n_warnings; i++)
		free(m->warnings[i].seqs);
	free(m->warnings);
	free(m->node_names);
	for (size_t i = 0; i < m->n_strings; i++)
		free(m->strings[i]);
	free(m->strings);
	run_header_release(&m->run);
	memset(m, 0, sizeof(*m));
}
