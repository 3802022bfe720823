/* report.c - building the report model from the store; see report.h */
#include "report.h"
#include "stats.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct renderer *renderers[] = {
	&render_text,
	&render_csv,
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
	for (size_t i = m->n_strings; i-- > 0;)
		if (!strcmp(m->strings[i], s))
			return m->strings[i];
	ALLOC_GROW(m->strings, m->n_strings + 1, m->alloc_strings);
	m->strings[m->n_strings] = xstrdup(s);
	return m->strings[m->n_strings++];
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

struct build_ctx {
	struct report_model *m;
	char **variants;
	size_t n_variants;
	size_t *alloc_values;	/* per series of the current group */
};

static struct report_group *group_for(struct build_ctx *b, const struct stored_value *v)
{
	struct report_model *m = b->m;
	const char *w = intern(m, v->workload), *met = intern(m, v->metric);
	if (m->n_groups) {
		struct report_group *g = &m->groups[m->n_groups - 1];
		if (g->workload == w && g->metric == met)
			return g;
	}
	ALLOC_GROW(m->groups, m->n_groups + 1, m->alloc_groups);
	struct report_group *g = &m->groups[m->n_groups++];
	g->workload = w;
	g->metric = met;
	g->unit = intern(m, v->unit ? v->unit : "");
	g->n_series = b->n_variants;
	g->series = xcalloc(b->n_variants, sizeof(*g->series));
	for (size_t i = 0; i < b->n_variants; i++) {
		g->series[i].variant = intern(m, b->variants[i]);
		g->series[i].is_baseline = !strcmp(b->variants[i], m->baseline);
		g->series[i].median = NAN;
	}
	free(b->alloc_values);
	b->alloc_values = xcalloc(b->n_variants, sizeof(size_t));
	return g;
}

static int collect(const struct stored_value *v, void *vctx)
{
	struct build_ctx *b = vctx;
	struct report_model *m = b->m;
	const struct report_opts *o = m->opts;

	if (!in_list(o->workloads, o->n_workloads, v->workload) ||
	    !in_list(o->metrics, o->n_metrics, v->metric))
		return 0;
	const char *variant = intern(m, v->variant);
	if (o->want_rows) {
		ALLOC_GROW(m->rows, m->n_rows + 1, m->alloc_rows);
		struct report_row *r = &m->rows[m->n_rows++];
		r->seq = v->seq;
		r->repetition = v->repetition;
		r->warmup = v->warmup;
		r->variant = variant;
		r->workload = intern(m, v->workload);
		r->metric = intern(m, v->metric);
		r->unit = intern(m, v->unit ? v->unit : "");
		r->status = intern(m, v->status ? v->status : "ok");
		r->value = v->value;
	}

	/* Statistics take measured, successful runs only. */
	if (v->warmup || (v->status && strcmp(v->status, "ok")))
		return 0;
	struct report_group *g = group_for(b, v);
	for (size_t i = 0; i < g->n_series; i++) {
		struct report_series *s = &g->series[i];
		if (s->variant != variant)
			continue;
		grow_array((void **)&s->values, &b->alloc_values[i], s->n + 1, sizeof(double));
		s->values[s->n++] = v->value;
		break;
	}
	return 0;
}

static void compute(struct store *st, struct report_model *m)
{
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		struct report_group *g = &m->groups[gi];
		const struct report_series *base = NULL;
		for (size_t i = 0; i < g->n_series; i++) {
			struct report_series *s = &g->series[i];
			int failed = 0, total = 0;
			if (store_count_failed(st, m->run.id, s->variant, g->workload,
					       &failed, &total) == 0)
				s->failed = failed;
			if (s->n) {
				double *sorted = stats_sorted_copy(s->values, s->n);
				s->median = stats_quantile_sorted(sorted, s->n, 0.5);
				free(sorted);
			}
			if (s->is_baseline)
				base = s;
		}
		for (size_t i = 0; i < g->n_series; i++) {
			struct report_series *s = &g->series[i];
			if (!base || s->is_baseline || !base->n || !s->n || base->median == 0.0)
				continue;
			s->has_change = 1;
			s->median_change_pct = stats_pct_change(base->median, s->median);
		}
	}
}

int report_build(struct store *st, const struct report_opts *o,
		 struct report_model *m, int *usage_error)
{
	struct build_ctx b = { 0 };
	int64_t id = o->run_id;
	int ret = -1;

	memset(m, 0, sizeof(*m));
	m->opts = o;
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
	b.m = m;
	if (store_each_value(st, id, o->include_warmup, o->include_failed, collect, &b) < 0)
		goto out;
	compute(st, m);
	ret = 0;
out:
	free(b.alloc_values);
	for (size_t i = 0; i < b.n_variants; i++)
		free(b.variants[i]);
	free(b.variants);
	return ret;
}

void report_release(struct report_model *m)
{
	for (size_t g = 0; g < m->n_groups; g++) {
		for (size_t i = 0; i < m->groups[g].n_series; i++)
			free(m->groups[g].series[i].values);
		free(m->groups[g].series);
	}
	free(m->groups);
	free(m->rows);
	for (size_t i = 0; i < m->n_strings; i++)
		free(m->strings[i]);
	free(m->strings);
	run_header_release(&m->run);
	memset(m, 0, sizeof(*m));
}
