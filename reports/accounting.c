/*
 * accounting.c - what the model derives from its computed groups: the
 * tracer's accounting per workload and variant (report_tracer()) and the
 * quieter metrics (report_quieter()).
 */
#include "report_int.h"
#include "warnings.h"
#include "fmt.h"
#include "stats/stats.h"
#include "lib/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/*
 * Per workload (report order) and variant (run order) with trace_events
 * values: events, lost and bytes per run.  After report_compute(): takes the
 * series' summaries and medians.
 */
void report_tracer(struct report_model *m)
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
void report_quieter(struct report_model *m)
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
