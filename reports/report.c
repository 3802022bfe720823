/* report.c - building the report model from the store; see report.h */
#include "report_int.h"
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

void report_opts_for(struct report_opts *o, const struct renderer *r)
{
	o->want_rows = o->rows_only = r->tidy;
	o->skip_noise = r->skip_noise;
	o->answer_only = o->wanted_families = r->answer_only;
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
	const char *unit;	/* interned: the unit of its last row */
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
	const char *ok;			/* "ok", interned */
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

/* The row set of value v's (metric, workload, variant), made on its first
 * row. */
static struct report_row_set *row_set(struct build_ctx *b, const struct slot *sl,
				      const struct stored_value *v)
{
	struct report_model *m = b->m;
	size_t vi = (size_t)v->variant_idx;
	size_t k = ((size_t)v->metric_idx * b->n_workloads + (size_t)v->workload_idx) *
		   b->n_variants + vi;
	struct report_row_set *rs;

	if (k >= m->n_row_sets) {
		size_t n = k + 1 > 2 * m->n_row_sets ? k + 1 : 2 * m->n_row_sets;

		m->row_sets = xrealloc(m->row_sets, n * sizeof(*m->row_sets));
		memset(m->row_sets + m->n_row_sets, 0, (n - m->n_row_sets) * sizeof(*m->row_sets));
		m->n_row_sets = n;
	}
	rs = &m->row_sets[k];
	if (!rs->metric) {
		rs->variant = b->variant_names[vi];
		rs->workload = sl->workload;
		rs->metric = sl->metric;
		rs->workload_idx = v->workload_idx;
		rs->variant_idx = v->variant_idx;
		rs->virtual_time = b->virtual_time[vi];
	}
	return rs;
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
		struct report_row_set *rs = row_set(b, sl, v);
		ALLOC_GROW(rs->rows, rs->n + 1, rs->alloc);
		struct report_row *r = &rs->rows[rs->n++];
		r->seq = v->seq;
		r->repetition = v->repetition;
		r->warmup = v->warmup;
		const char *unit = v->unit ? v->unit : "", *status = v->status ? v->status : "ok";
		/* a pair's rows have one unit, most have status ok: one strcmp */
		if (!sl->unit || strcmp(sl->unit, unit))
			sl->unit = intern(m, unit);
		r->unit = sl->unit;
		r->status = !strcmp(status, "ok") ? b->ok : intern(m, status);
		r->value = v->value;
		r->block = v->block;
	}

	/* Statistics take measured, successful runs only. */
	if (m->opts->rows_only || v->warmup || (v->status && strcmp(v->status, "ok")))
		return 0;
	/* a group filtered out is kept for its Holm family only */
	if (!sl->wanted && m->opts->no_verdicts)
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

/* Each series' failed runs, from the walk's counts per (workload, variant). */
static void set_failed(struct report_model *m, const struct build_ctx *b,
		       const int *failed)
{
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		struct report_group *g = &m->groups[gi];
		size_t wi = report_workload_rank(b->workloads, b->n_workloads, g->workload);

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

/* The name of workload's primary metric (stored: names[] by workload, n
 * of them; --config-metric first, wall last). */
static const char *primary_name(const struct report_model *m, const struct build_ctx *b,
				char **names, size_t n, const char *workload)
{
	const char *want = m->config_metric;

	for (size_t w = 0; !m->opts->config_metric && w < b->n_workloads && w < n; w++)
		if (names[w] && !strcmp(b->workloads[w], workload))
			want = names[w];
	return want;
}

/* report_opts.answer_only: the groups neither an answer nor read by the
 * warnings are kept for their Holm family only (hidden); none of a
 * workload whose answer's group is missing or filtered out (--metric:
 * set_primary() then takes its first shown group, which must be the
 * same). */
static void answer_only(struct report_model *m, const struct build_ctx *b, char **names,
			size_t n)
{
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		struct report_group *g = &m->groups[gi];
		const char *want = primary_name(m, b, names, n, g->workload);
		const struct report_group *answer = report_find_group(m, g->workload, want);

		if (answer && !answer->hidden && strcmp(g->metric, want) &&
		    !report_metric_matters(g->metric))
			g->hidden = 1;
	}
}

/* report_group.primary: per workload its primary metric's group
 * (primary_name()), else its first. */
static void set_primary(struct report_model *m, const struct build_ctx *b, char **names,
			size_t n)
{
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		struct report_group *g = &m->groups[gi];
		const char *want = primary_name(m, b, names, n, g->workload);
		int seen = 0;
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
	size_t n_timebases = 0, n_primaries = 0, not_ok = 0;

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
	if (o->run_status && (!m->run.status || strcmp(o->run_status, m->run.status))) {
		free(m->run.status);	/* as listed: "interrupted" (report.h) */
		m->run.status = xstrdup(o->run_status);
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
	b.ok = intern(m, "ok");
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
	w.not_ok = &not_ok;
	if (load_nodes(st, id, &b) < 0 || store_walk_values(st, id, &w) < 0)
		goto out;
	if (o->rows_only) {
		report_order_rows(m);
		ret = 0;
		goto out;
	}
	/* the failures' own query reads every result: only when there are any */
	if (not_ok && store_each_failure(st, id, add_failure, m) < 0)
		goto out;
	report_order_groups(m, b.workloads, b.n_workloads);
	report_order_rows(m);
	set_failed(m, &b, failed);
	if (store_workload_primaries(st, id, &primaries, &n_primaries) < 0)
		goto out;
	if (o->answer_only)
		answer_only(m, &b, primaries, n_primaries);
	report_compute(m);
	if (runs_per_boot(st, id, m, &b) < 0)
		goto out;
	report_tracer(m);
	report_quieter(m);
	report_histograms(m);
	if (report_curves(st, id, m) < 0)
		goto out;
	if (report_calibration(st, id, m) < 0)	/* reports/calib.c */
		goto out;
	report_warnings(m);
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
		report_release_group(&m->groups[g]);
	free(m->groups);
	for (size_t k = 0; k < m->n_row_sets; k++)
		free(m->row_sets[k].rows);
	free(m->row_sets);
	free(m->row_set_order);
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
