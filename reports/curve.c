/*
 * curve.c - the shapes the report draws, computed once here for every
 * writer: the histograms of the series (report.h: report_group.n_bins) and
 * the overhead curves of a run's matrices (struct report_curve), from the
 * stored parameters of every instance (table matrix, engine/store.h) and
 * the model's dilations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "lib/util.h"

void report_histograms(struct report_model *m)
{
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		struct report_group *g = &m->groups[gi];
		size_t nmax = 0;

		if (isnan(g->lo))
			continue;
		for (size_t i = 0; i < g->n_series; i++)
			if (g->series[i].n > nmax)
				nmax = g->series[i].n;
		g->n_bins = (size_t)ceil(log2((double)(nmax ? nmax : 1))) + 1;
		if (g->n_bins < REPORT_HIST_MIN_BINS)
			g->n_bins = REPORT_HIST_MIN_BINS;
		if (g->n_bins > REPORT_HIST_MAX_BINS)
			g->n_bins = REPORT_HIST_MAX_BINS;
		if (!(g->hi > g->lo))
			g->n_bins = 1;
		g->bin_w = g->n_bins > 1 ? (g->hi - g->lo) / (double)g->n_bins : 0;
		for (size_t i = 0; i < g->n_series; i++) {
			struct report_series *s = &g->series[i];
			s->hist = xcalloc(g->n_bins, sizeof(*s->hist));
			for (size_t k = 0; k < s->n; k++) {
				size_t b = g->bin_w > 0 ? (size_t)((s->values[k] - g->lo) / g->bin_w) : 0;
				s->hist[b < g->n_bins ? b : g->n_bins - 1]++;
			}
		}
	}
}

/* One instance: its rows in the stored matrix. */
struct instance {
	int is_variant;
	const char *name, *base;	/* interned */
	const struct store_matrix_row *rows;
	size_t n;
};

/* A curve's key: the instances of one matrix with every parameter but
 * param the same. */
struct key {
	int is_variant;
	const char *base, *param, *fixed;	/* interned */
	size_t *members;	/* indices of instances, in stored order */
	size_t n;
};

/* "q=w,r=u": the parameters of in but param (sorted as stored). */
static const char *fixed_of(struct report_model *m, const struct instance *in, const char *param)
{
	struct strbuf sb = STRBUF_INIT;
	const char *ret;

	for (size_t i = 0; i < in->n; i++)
		if (strcmp(in->rows[i].param, param))
			strbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", in->rows[i].param, in->rows[i].value);
	ret = report_intern(m, sb.buf ? sb.buf : "");
	strbuf_release(&sb);
	return ret;
}

static const struct store_matrix_row *param_of(const struct instance *in, const char *param)
{
	for (size_t i = 0; i < in->n; i++)
		if (!strcmp(in->rows[i].param, param))
			return &in->rows[i];
	return NULL;
}

static void point(const struct report_model *m, const struct report_series *s,
		  const struct store_matrix_row *r, const char *label,
		  struct report_curve_point *p)
{
	const struct report_dilation *d = report_stat_dilation(m, s);

	memset(p, 0, sizeof(*p));
	p->label = label;
	p->x = r->x;
	p->variant = s->variant;
	p->value = report_stat_value(m, s);
	p->significant = s->significant;
	if (d && d->no_pct) {
		p->reason = d->d.ci_pct.reason;	/* no percentage (report.h) */
		p->pct = NAN;
		p->ci.lo = p->ci.hi = NAN;
	} else if (d) {
		p->ok = 1;
		p->pct = d->d.pct;
		p->ci = d->d.ci_pct;
	} else {
		p->reason = !s->compared ? s->no_compare_reason : "no value of the statistic";
		p->pct = NAN;
		p->ci.lo = p->ci.hi = NAN;
	}
}

/* Sort by x (numeric curves), stable. */
static void sort_points(struct report_curve *c)
{
	for (size_t i = 1; i < c->n; i++)
		for (size_t j = i; j > 0 && c->pts[j - 1].x > c->pts[j].x; j--) {
			struct report_curve_point t = c->pts[j];
			c->pts[j] = c->pts[j - 1];
			c->pts[j - 1] = t;
		}
}

/* Keep curve c when it has two points or more; fills its axis kind. */
static void finish_curve(struct report_model *m, struct report_curve *c)
{
	double lo = INFINITY, hi = -INFINITY;

	if (c->n < 2) {
		free(c->pts);
		return;
	}
	c->numeric = 1;
	for (size_t i = 0; i < c->n; i++) {
		c->numeric &= isfinite(c->pts[i].x);
		lo = fmin(lo, c->pts[i].x);
		hi = fmax(hi, c->pts[i].x);
	}
	if (c->numeric) {
		sort_points(c);
		c->log_x = lo > 0 && hi / lo > 10;
	} else {
		for (size_t i = 0; i < c->n; i++)
			c->pts[i].x = NAN;
		c->is_list = 0;
	}
	ALLOC_GROW(m->curves, m->n_curves + 1, m->alloc_curves);
	m->curves[m->n_curves++] = *c;
}

/* A curve of the key's instances, varied as variants on workload w or as
 * workloads under variant v. */
static void make_curve(struct report_model *m, const struct instance *ins, const struct key *k,
		       const char *workload, const char *variant)
{
	struct report_curve c = { 0 };

	c.of_variant = k->is_variant;
	c.base = k->base;
	c.param = k->param;
	c.fixed = k->fixed;
	c.workload = workload;
	c.variant = variant;
	c.metric = m->config_metric;
	c.is_list = 1;
	c.pts = xcalloc(k->n, sizeof(*c.pts));
	for (size_t i = 0; i < k->n; i++) {
		const struct instance *in = &ins[k->members[i]];
		const char *w = k->is_variant ? workload : in->name;
		const char *v = k->is_variant ? in->name : variant;
		const struct report_group *g = report_find_group(m, w, c.metric);
		const struct report_series *s = report_find_series(g, v);
		const struct store_matrix_row *r = param_of(in, k->param);
		if (!s || s->is_baseline || !r)
			continue;
		c.unit = g->unit;
		c.is_list &= r->is_list;
		point(m, s, r, report_intern(m, r->value), &c.pts[c.n]);
		c.pts[c.n++].workload = w;
	}
	finish_curve(m, &c);
}

/* The distinct workloads of the config metric's groups, in report order. */
static size_t curve_workloads(const struct report_model *m, const char **out)
{
	size_t n = 0;
	for (size_t g = 0; g < m->n_groups; g++) {
		const struct report_group *gr = &m->groups[g];
		size_t i;
		if (strcmp(gr->metric, m->config_metric))
			continue;
		for (i = 0; i < n && out[i] != gr->workload; i++)
			;
		if (i == n)
			out[n++] = gr->workload;
	}
	return n;
}

int report_curves(struct store *st, int64_t run_id, struct report_model *m)
{
	struct store_matrix_row *rows;
	struct instance *ins = NULL;
	struct key *keys = NULL;
	size_t nrows, nins = 0, nkeys = 0, alloc_ins = 0, alloc_keys = 0;
	const char **workloads = NULL;

	if (store_matrix(st, run_id, &rows, &nrows) < 0)
		return -1;
	for (size_t i = 0; i < nrows; i++) {
		if (!nins || strcmp(ins[nins - 1].name, rows[i].name) ||
		    ins[nins - 1].is_variant != rows[i].is_variant) {
			ALLOC_GROW(ins, nins + 1, alloc_ins);
			ins[nins].is_variant = rows[i].is_variant;
			ins[nins].name = report_intern(m, rows[i].name);
			ins[nins].base = report_intern(m, rows[i].base);
			ins[nins].rows = &rows[i];
			ins[nins++].n = 0;
		}
		ins[nins - 1].n++;
	}
	for (size_t i = 0; i < nins; i++)
		for (size_t p = 0; p < ins[i].n; p++) {
			const char *param = report_intern(m, ins[i].rows[p].param);
			const char *fixed = fixed_of(m, &ins[i], param);
			size_t k;
			for (k = 0; k < nkeys; k++)
				if (keys[k].is_variant == ins[i].is_variant && keys[k].base == ins[i].base &&
				    keys[k].param == param && keys[k].fixed == fixed)
					break;
			if (k == nkeys) {
				ALLOC_GROW(keys, nkeys + 1, alloc_keys);
				memset(&keys[nkeys], 0, sizeof(keys[0]));
				keys[nkeys].is_variant = ins[i].is_variant;
				keys[nkeys].base = ins[i].base;
				keys[nkeys].param = param;
				keys[nkeys++].fixed = fixed;
			}
			keys[k].members = xrealloc(keys[k].members, (keys[k].n + 1) * sizeof(size_t));
			keys[k].members[keys[k].n++] = i;
		}

	workloads = xcalloc(m->n_groups + 1, sizeof(*workloads));
	size_t nw = curve_workloads(m, workloads);
	for (size_t k = 0; k < nkeys; k++) {
		if (keys[k].n < 2)
			continue;
		if (keys[k].is_variant) {
			for (size_t w = 0; w < nw; w++)
				make_curve(m, ins, &keys[k], workloads[w], NULL);
			continue;
		}
		/* every variant of the first instance's group but the baseline */
		const struct report_group *g = report_find_group(m, ins[keys[k].members[0]].name,
								 m->config_metric);
		for (size_t s = 0; g && s < g->n_series; s++)
			if (!g->series[s].is_baseline)
				make_curve(m, ins, &keys[k], NULL, g->series[s].variant);
	}
	for (size_t k = 0; k < nkeys; k++)
		free(keys[k].members);
	free(keys);
	free(ins);
	free(workloads);
	store_matrix_free(rows, nrows);
	return 0;
}
