/* gate.c - the judging of `perturb gate`; see gate.h */
#include "gate.h"
#include "decide.h"
#include "lib/util.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The model at one level (report_build() with that confidence). */
struct gate_model {
	double level;
	struct report_model m;
};

static void push_unique(char ***list, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*list)[i], s))
			return;
	*list = xrealloc(*list, (*n + 1) * sizeof(char *));
	(*list)[(*n)++] = (char *)s;
}

static int statistic_percentile(enum statistic s, double *p)
{
	switch (s) {
	case STAT_P0: *p = 0; return 1;
	case STAT_P50: *p = 50; return 1;
	case STAT_P80: *p = 80; return 1;
	case STAT_P99: *p = 99; return 1;
	case STAT_MEAN: break;
	}
	return 0;
}

/* The models compute the dilation of s (report_opts.want_mean, want_pcts). */
static void want_statistic(struct report_opts *o, enum statistic s)
{
	double p;

	if (!statistic_percentile(s, &p)) {
		o->want_mean = 1;
		return;
	}
	for (size_t k = 0; k < o->n_want_pcts; k++)
		if (o->want_pcts[k] == p)
			return;
	if (o->n_want_pcts < ARRAY_SIZE(o->want_pcts))
		o->want_pcts[o->n_want_pcts++] = p;
}

/* The model at this level, built once; NULL (printed) on error. */
static const struct report_model *model_at(struct gate *g, double level, int *usage_error)
{
	for (size_t i = 0; i < g->n_cache; i++)
		if (g->cache[i].level == level)
			return &g->cache[i].m;
	ALLOC_GROW(g->cache, g->n_cache + 1, g->alloc_cache);
	struct gate_model *c = &g->cache[g->n_cache];
	memset(c, 0, sizeof(*c));
	c->level = level;
	g->o.confidence = level;
	g->o.skip_noise = 1;	/* no verdict reads it */
	g->o.no_verdicts = 1;	/* the gate's Holm judges, over its rules, */
	/* each reading the dilation of its statistic (want_statistic()) */
	if (report_build(g->st, &g->o, &c->m, usage_error) < 0) {
		report_release(&c->m);
		return NULL;
	}
	g->n_cache++;
	return &c->m;
}

/* Fill j's interval from model m. */
static void judge_with(struct gate_judgement *j, const struct report_model *m)
{
	const struct report_series *s = NULL, *b = NULL;
	const struct report_dilation *d = NULL;
	double p;

	j->has_ci = 0;
	j->reason = "the run has no values of this metric";
	for (size_t gi = 0; gi < m->n_groups && !s; gi++) {
		const struct report_group *grp = &m->groups[gi];
		if (strcmp(grp->workload, j->workload) || strcmp(grp->metric, j->rule->metric))
			continue;
		b = report_baseline(grp);
		for (size_t si = 0; si < grp->n_series; si++)
			if (!strcmp(grp->series[si].variant, j->variant))
				s = &grp->series[si];
	}
	if (!s)
		return;
	j->n = s->n;
	if (b && b->n < j->n)
		j->n = b->n;
	if (!s->compared) {
		j->reason = s->no_compare_reason ? s->no_compare_reason : "not compared";
		return;
	}
	if (statistic_percentile(j->rule->statistic, &p)) {
		for (size_t k = 0; k < m->n_percentiles; k++)
			if (m->percentiles[k] == p)
				d = &s->pct_dil[k];
	} else {
		d = &s->mean_dil;
	}
	if (!d) {
		j->reason = "the statistic is not in the report";
		return;
	}
	if (!d->ok) {
		j->reason = d->reason ? d->reason : "no dilation";
		return;
	}
	j->est = d->d.pct;
	j->no_pct = d->no_pct;
	j->abs = d->d.abs;
	if (!d->d.ci_pct.has_ci || !isfinite(d->d.ci_pct.lo) || !isfinite(d->d.ci_pct.hi)) {
		j->reason = d->d.ci_pct.reason ? d->d.ci_pct.reason : "no interval";
		return;
	}
	j->has_ci = 1;
	j->reason = NULL;
	j->lo = d->d.ci_pct.lo;
	j->hi = d->d.ci_pct.hi;
	j->level = m->confidence;
}

struct judge_ctx {
	struct gate *g;
	int *usage_error;
};

/* decide_holm's interval: judgement i's from the model at level. */
static int judge_at(void *vctx, size_t i, double level, double *lo, double *hi)
{
	struct judge_ctx *c = vctx;
	struct gate_judgement *j = &c->g->j[i];
	const struct report_model *model = model_at(c->g, level, c->usage_error);

	if (!model)
		return -1;
	judge_with(j, model);
	*lo = j->lo;
	*hi = j->hi;
	return j->has_ci;
}

/* Holm's step-down (gate.h; reports/decide.h, shared with compare). */
int gate_judge(struct gate *g, int *usage_error)
{
	struct judge_ctx c = { .g = g, .usage_error = usage_error };
	struct decide_item *items = xcalloc(g->n_j ? g->n_j : 1, sizeof(*items));
	size_t m = g->n_j;

	for (size_t i = 0; i < m; i++) {
		items[i].t = g->j[i].thr;
		items[i].alpha = g->j[i].alpha;
	}
	if (decide_holm(items, m, judge_at, &c) < 0) {
		free(items);
		return -1;
	}
	for (size_t i = 0; i < m; i++) {
		struct gate_judgement *j = &g->j[i];
		j->decided = items[i].verdict != DECIDE_UNDECIDED;
		if (j->decided)
			j->verdict = items[i].verdict == DECIDE_ABOVE ? GATE_FAIL : GATE_PASS;
	}
	free(items);
	for (size_t i = 0; i < m; i++) {
		struct gate_judgement *j = &g->j[i];
		if (j->decided)
			continue;
		j->verdict = GATE_INCONCLUSIVE;
		j->runs_needed = j->has_ci ? gate_runs_needed(j->n, j->est, j->lo, j->hi, j->thr,
							      j->level, GATE_POWER) : NAN;
	}
	return 0;
}

void gate_expand(struct gate *g, const struct gate_rule *rules, size_t n_rules,
		 char **variants, size_t nv, char **workloads, size_t nw,
		 const char *baseline)
{
	for (size_t r = 0; r < n_rules; r++) {
		const struct gate_rule *rule = &rules[r];
		size_t before = g->n_j;
		for (size_t v = 0; v < nv; v++) {
			if (baseline && !strcmp(variants[v], baseline))
				continue;
			/* literally first: an instance's name, "x[p=v]", is
			 * also a glob that does not match itself */
			if (strcmp(rule->variant, variants[v]) && fnmatch(rule->variant, variants[v], 0))
				continue;
			for (size_t w = 0; w < nw; w++) {
				struct gate_judgement *j;
				if (strcmp(rule->workload, workloads[w]) &&
				    fnmatch(rule->workload, workloads[w], 0))
					continue;
				ALLOC_GROW(g->j, g->n_j + 1, g->alloc_j);
				j = &g->j[g->n_j++];
				memset(j, 0, sizeof(*j));
				j->rule = rule;
				j->variant = variants[v];
				j->workload = workloads[w];
				j->thr = 100 * rule->max_dilation;
				j->alpha = 1 - rule->confidence;
				push_unique(&g->o.metrics, &g->o.n_metrics, rule->metric);
				want_statistic(&g->o, rule->statistic);
				push_unique(&g->o.workloads, &g->o.n_workloads, workloads[w]);
			}
		}
		if (g->n_j == before)
			warning("gate rule %zu (variant '%s', workload '%s') matches nothing in run %lld",
				r + 1, rule->variant, rule->workload, (long long)g->run_id);
	}
}

void gate_release(struct gate *g)
{
	for (size_t i = 0; i < g->n_cache; i++)
		report_release(&g->cache[i].m);
	free(g->cache);
	free(g->j);
	free(g->o.metrics);
	free(g->o.workloads);
}

void gate_rule_default(struct gate_rule *r)
{
	r->variant = "*";
	r->workload = "*";
	r->metric = "wall";
	r->statistic = STAT_P50;
	r->confidence = 0.95;
}
