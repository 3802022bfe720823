/*
 * model.c - the report model's lookups (report.h): its interned strings,
 * a group and a series by name, the baseline, and the statistic the
 * configurations table shows.  What builds the model (report.c) and what
 * derives from it (calib.c, curve.c, warnings.c) use these; this file
 * calls none of theirs.
 */
#include "report.h"
#include "lib/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *report_intern(struct report_model *m, const char *s)
{
	for (size_t i = m->n_strings; i-- > 0;)
		if (!strcmp(m->strings[i], s))
			return m->strings[i];
	ALLOC_GROW(m->strings, m->n_strings + 1, m->alloc_strings);
	m->strings[m->n_strings] = xstrdup(s);
	return m->strings[m->n_strings++];
}

const struct report_group *report_find_group(const struct report_model *m, const char *workload,
					     const char *metric)
{
	for (size_t gi = 0; gi < m->n_groups; gi++)
		if (m->groups[gi].workload == workload && !strcmp(m->groups[gi].metric, metric))
			return &m->groups[gi];
	return NULL;
}

const struct report_series *report_find_series(const struct report_group *g, const char *variant)
{
	for (size_t i = 0; g && i < g->n_series; i++)
		if (g->series[i].variant == variant)
			return &g->series[i];
	return NULL;
}

double report_ns_per_unit(const char *unit)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(unit, units[i].unit))
			return units[i].ns;
	return 0;
}

const struct report_series *report_baseline(const struct report_group *g)
{
	for (size_t i = 0; i < g->n_series; i++)
		if (g->series[i].is_baseline)
			return &g->series[i];
	return NULL;
}

int report_pct_extreme(double p, size_t n)
{
	double h = (double)(n - 1) * p / 100;	/* type 7: order statistics h, h + 1 */

	return n >= 2 && p > 0 && p < 100 && (h >= (double)n - 2 || h <= 1);
}

void report_pct_label(char *buf, size_t len, double p)
{
	snprintf(buf, len, "p%g", p);
}

static int stat_index(const struct report_model *m, double p)
{
	for (size_t k = 0; k < m->n_percentiles; k++)
		if (m->percentiles[k] == p)
			return (int)k;
	return -1;
}

double report_stat_value(const struct report_model *m, const struct report_series *s)
{
	const struct report_opts *o = m->opts;
	int k;

	if (!s->n)
		return NAN;
	switch (o->statistic) {
	case REPORT_STAT_MEAN:
		return s->sum.mean;
	case REPORT_STAT_PERCENTILE:
		k = stat_index(m, o->statistic_p);
		return k >= 0 ? s->pct[k] : NAN;
	default:
		k = stat_index(m, 50);
		return k >= 0 ? s->pct[k] : s->median;
	}
}

const struct report_dilation *report_stat_dilation(const struct report_model *m,
						   const struct report_series *s)
{
	const struct report_opts *o = m->opts;
	int k;

	if (!s->compared)
		return NULL;
	if (o->statistic == REPORT_STAT_MEAN)
		return s->mean_dil.ok ? &s->mean_dil : NULL;
	k = stat_index(m, o->statistic == REPORT_STAT_PERCENTILE ? o->statistic_p : 50);
	return k >= 0 && s->pct_dil[k].ok ? &s->pct_dil[k] : NULL;
}

void report_stat_name(const struct report_model *m, char *buf, size_t len)
{
	const struct report_opts *o = m->opts;

	if (o->statistic == REPORT_STAT_MEAN)
		snprintf(buf, len, "mean");
	else if (o->statistic == REPORT_STAT_PERCENTILE)
		report_pct_label(buf, len, o->statistic_p);
	else
		snprintf(buf, len, "median");
}
