/*
 * render_text.c - the terminal report: for each workload and metric, one line
 * per variant with n, the median, and the change of the median against the
 * baseline in %.  The median is the type-7 sample quantile at 0.5.
 */
#include "report.h"

#include <math.h>
#include <string.h>

static void num(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.6g", v);
}

static int text(const struct report_model *m, FILE *out)
{
	const struct run_header *h = &m->run;

	fprintf(out, "run %lld: '%s', started %s, %s, seed %llu, status %s\n",
		(long long)h->id, h->experiment, h->started, h->order,
		(unsigned long long)h->seed, h->status);
	fprintf(out, "baseline: %s; median = type-7 sample quantile at 0.5; "
		"change = 100 x (median - baseline median) / baseline median\n",
		m->baseline);
	if (!m->n_groups) {
		fprintf(out, "\nno successful measured run to report\n");
		return 0;
	}
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		size_t vw = strlen("variant");
		for (size_t i = 0; i < g->n_series; i++)
			if (strlen(g->series[i].variant) > vw)
				vw = strlen(g->series[i].variant);
		if (vw > 40)
			vw = 40;
		fprintf(out, "\n%s: %s%s%s%s\n", g->workload, g->metric,
			*g->unit ? " (" : "", g->unit, *g->unit ? ")" : "");
		fprintf(out, "  %-*s %6s %7s %14s %10s\n", (int)vw, "variant", "n",
			"failed", "median", "change");
		for (size_t i = 0; i < g->n_series; i++) {
			const struct report_series *s = &g->series[i];
			char med[32], chg[32];
			num(med, sizeof(med), s->median);
			if (s->is_baseline)
				snprintf(chg, sizeof(chg), "baseline");
			else if (s->has_change)
				snprintf(chg, sizeof(chg), "%+.2f %%", s->median_change_pct);
			else
				snprintf(chg, sizeof(chg), "-");
			fprintf(out, "  %-*.*s %6zu %7d %14s %10s\n", (int)vw, (int)vw,
				s->variant, s->n, s->failed, med, chg);
		}
	}
	return 0;
}

const struct renderer render_text = {
	.name = "text",
	.render = text,
};
