/*
 * render_markdown.c - the report as GitHub-flavoured Markdown: the same
 * tables as the text report (KTAU Tables 1 and 2, shift and shape,
 * configurations, tracer accounting, Markers) as pipe tables, and notes saying what each
 * interval is and which method made it.  Strings from the experiment are
 * escaped: Markdown's active characters (\\ ` * _ [ ] | # ~) with a
 * backslash, <, > and & as entities, line breaks as spaces.
 */
#include "report.h"
#include "fmt.h"
#include "util.h"

#include <math.h>
#include <string.h>

static void md(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '\n':
		case '\r':
			fputc(' ', out);
			break;
		case '\\': case '`': case '*': case '_': case '[': case ']':
		case '|': case '#': case '~':
			fputc('\\', out);
			fputc(*s, out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

static void ci(FILE *out, const struct interval *iv, const char *unit)
{
	char lo[32], hi[32];
	if (!iv->has_ci) {
		fputs(" [no CI: ", out);
		md(out, iv->reason ? iv->reason : "no interval");
		fputc(']', out);
		return;
	}
	fmt_pct(lo, sizeof(lo), iv->lo);
	fmt_pct(hi, sizeof(hi), iv->hi);
	fprintf(out, " [%s, %s]%s", lo, hi, unit);
}

static void unit_title(FILE *out, const struct report_group *g)
{
	md(out, g->workload);
	fputs(": ", out);
	md(out, g->metric);
	if (*g->unit) {
		fputs(" (", out);
		md(out, g->unit);
		fputc(')', out);
	}
}

static void table1(const struct report_model *m, const struct report_group *g, FILE *out)
{
	char l[32], a[48], p[48];

	fputs("| variant |", out);
	for (size_t k = 0; k < m->n_percentiles; k++) {
		report_pct_label(l, sizeof(l), m->percentiles[k]);
		fprintf(out, " %s |", l);
	}
	fputs("\n|---|", out);
	for (size_t k = 0; k < m->n_percentiles; k++)
		fputs("---:|", out);
	fputc('\n', out);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		fputs("| ", out);
		md(out, s->variant);
		fputs(" |", out);
		for (size_t k = 0; k < m->n_percentiles; k++) {
			const struct report_dilation *d = &s->pct_dil[k];
			fputc(' ', out);
			if (s->is_baseline || !s->compared) {
				fmt_value(a, sizeof(a), s->pct[k]);
				fputs(a, out);
				if (*g->unit) {
					fputc(' ', out);
					md(out, g->unit);
				}
			} else if (d->ok) {
				fmt_like(a, sizeof(a), d->d.abs, d->d.base, 1);
				fmt_pct(p, sizeof(p), d->d.pct);
				fputs(a, out);
				if (*g->unit) {
					fputc(' ', out);
					md(out, g->unit);
				}
				fprintf(out, " (%s %%)<br>", p);
				ci(out, &d->d.ci_pct, " %");
			} else {
				fputc('-', out);
			}
			fputs(" |", out);
		}
		fputc('\n', out);
	}
}

static void table2(const struct report_model *m, const struct report_group *g, FILE *out)
{
	char mean[48], var[48], sd[48], p[48];

	fputs("| variant | n | mean | variance | sd | % mean dilation | p (Holm) | significant |\n"
	      "|---|---:|---:|---:|---:|---|---:|---|\n", out);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		fputs("| ", out);
		md(out, s->variant);
		fprintf(out, " | %zu |", s->n);
		if (!s->has_summary) {
			fputs(" - | - | - | | | |\n", out);
			continue;
		}
		fmt_value(mean, sizeof(mean), s->sum.mean);
		fmt_value(var, sizeof(var), s->sum.var);
		fmt_value(sd, sizeof(sd), s->sum.sd);
		fprintf(out, " %s | %s | %s |", mean, var, sd);
		if (s->is_baseline) {
			fputs(" baseline | | |\n", out);
			continue;
		}
		if (!s->compared || !s->mean_dil.ok) {
			fputs(" - | | |\n", out);
			continue;
		}
		fmt_pct(p, sizeof(p), s->mean_dil.d.pct);
		fprintf(out, " %s %%", p);
		ci(out, &s->mean_dil.d.ci_pct, "");
		if (s->mw.valid) {
			fmt_p(p, sizeof(p), s->p_holm);
			fprintf(out, " | %s | %s |\n", p, s->significant ? "yes" : "no");
		} else {
			fputs(" | - | ", out);
			md(out, s->mw.reason ? s->mw.reason : "no test");
			fputs(" |\n", out);
		}
	}
}

static void table3(const struct report_model *m, const struct report_group *g, FILE *out)
{
	char p[48];

	fputs("| variant | HL ratio [CI] | KS D | KS p | outliers (Tukey / MAD) | failed |\n"
	      "|---|---|---:|---:|---:|---:|\n", out);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		fputs("| ", out);
		md(out, s->variant);
		fputs(" | ", out);
		if (s->is_baseline)
			fputs("baseline | | |", out);
		else if (!s->compared)
			fputs("- | | |", out);
		else {
			if (s->has_hl && s->hl.ci.has_ci)
				fprintf(out, "%.4f [%.4f, %.4f]", s->hl.ratio, s->hl.ci.lo, s->hl.ci.hi);
			else if (s->has_hl)
				fprintf(out, "%.4f", s->hl.ratio);
			else
				md(out, s->hl_reason);
			if (s->ks.valid) {
				fmt_p(p, sizeof(p), s->ks.p);
				fprintf(out, " | %.3f | %s |", s->ks.statistic, p);
			} else {
				fputs(" | - | - |", out);
			}
		}
		fprintf(out, " %zu / %zu | %d |\n", s->outliers_tukey, s->outliers_mad, s->failed);
	}
}

static void configurations(const struct report_model *m, FILE *out)
{
	char stat[32], v[48], p[48];
	const struct report_group *cols[64];
	size_t nc = 0;

	for (size_t gi = 0; gi < m->n_groups && nc < ARRAY_SIZE(cols); gi++) {
		const struct report_group *g = &m->groups[gi], *best = NULL;
		int seen = 0;
		for (size_t c = 0; c < nc; c++)
			seen |= cols[c]->workload == g->workload;
		if (seen)
			continue;
		for (size_t gj = gi; gj < m->n_groups; gj++)
			if (m->groups[gj].workload == g->workload &&
			    !strcmp(m->groups[gj].metric, m->config_metric))
				best = &m->groups[gj];
		cols[nc++] = best ? best : g;
	}
	if (!nc)
		return;
	report_stat_name(m, stat, sizeof(stat));
	fprintf(out, "\n## Configurations (LTT)\n\nThe %s of each workload's ", stat);
	md(out, m->config_metric);
	fputs(" (else its first metric) and its % difference from ", out);
	md(out, m->baseline);
	fputs(".\n\n| configuration |", out);
	for (size_t c = 0; c < nc; c++) {
		fputc(' ', out);
		unit_title(out, cols[c]);
		fputs(" |", out);
	}
	fputs("\n|---|", out);
	for (size_t c = 0; c < nc; c++)
		fputs("---:|", out);
	fputc('\n', out);
	for (size_t i = 0; i < cols[0]->n_series; i++) {
		fputs("| ", out);
		md(out, cols[0]->series[i].variant);
		fputs(" |", out);
		for (size_t c = 0; c < nc; c++) {
			const struct report_series *s = &cols[c]->series[i];
			const struct report_dilation *d = report_stat_dilation(m, s);
			fmt_value(v, sizeof(v), report_stat_value(m, s));
			fprintf(out, " %s", v);
			if (d && !isnan(d->d.pct)) {
				fmt_pct(p, sizeof(p), d->d.pct);
				fprintf(out, " (%s %%)", p);
			}
			fputs(" |", out);
		}
		fputc('\n', out);
	}
}

static void tracer(const struct report_model *m, FILE *out)
{
	char lvl[16], v[48], lo[48], hi[48];

	if (!m->n_tracer)
		return;
	fmt_level(lvl, sizeof(lvl), m->confidence);
	fprintf(out, "\n## Tracer accounting\n\nThe tracer's own counts per run (per\\_cpu "
		"stats, system-wide), medians over runs. Lost runs: runs whose trace\\_lost "
		"(overwritten + dropped events) > 0. Cost per event: (mean variant wall - mean "
		"baseline wall) / mean events per run, in ns; its %s %% CI is the wall dilation's "
		"CI / the same mean events (the events count is treated as fixed, an "
		"approximation). Events are counted per run, so per-operation metrics get no "
		"cost per event.\n\n"
		"| workload | variant | events/run | lost runs | lost/run | bytes/run | "
		"ns/event | CI of ns/event |\n|---|---|---:|---:|---:|---:|---:|---|\n", lvl);
	for (size_t i = 0; i < m->n_tracer; i++) {
		const struct report_tracer *t = &m->tracer[i];
		fputs("| ", out);
		md(out, t->workload);
		fputs(" | ", out);
		md(out, t->variant);
		fmt_count(v, sizeof(v), t->events_median);
		fprintf(out, " | %s |", v);
		if (t->lost_n) {
			fmt_count(v, sizeof(v), t->lost_median);
			fprintf(out, " %s%zu of %zu%s | %s |", t->lost_runs ? "**" : "", t->lost_runs,
				t->lost_n, t->lost_runs ? "**" : "", v);
		} else {
			fputs(" - | - |", out);
		}
		fmt_count(v, sizeof(v), t->bytes_median);
		fprintf(out, " %s |", v);
		if (t->is_baseline) {
			fputs(" baseline | |\n", out);
			continue;
		}
		if (!t->has_cost) {
			fputs(" - | ", out);
			md(out, t->no_cost_reason);
			fputs(" |\n", out);
			continue;
		}
		fmt_cost(v, sizeof(v), t->cost_ns, t->cost_ns);
		fprintf(out, " %s |", v);
		if (t->cost_ci.has_ci) {
			fmt_cost(lo, sizeof(lo), t->cost_ci.lo, t->cost_ns);
			fmt_cost(hi, sizeof(hi), t->cost_ci.hi, t->cost_ns);
			fprintf(out, " [%s, %s] |\n", lo, hi);
		} else {
			fputs(" no CI: ", out);
			md(out, t->cost_ci.reason);
			fputs(" |\n", out);
		}
	}
	if (m->n_tracer_lossy)
		fputs("\n**Warning:** runs that lost events: the tracer could not keep up; their "
		      "dilation understates a lossless trace.\n", out);
}

static void markers(const struct report_model *m, FILE *out)
{
	char stat[32];
	int header = 0;

	report_stat_name(m, stat, sizeof(stat));
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		if (!g->micro)
			continue;
		if (!header) {
			fprintf(out, "\n## Markers: cost per operation\n\nThe %s over runs; added = "
				"variant - baseline, with its CI.\n\n"
				"| workload | metric | variant | cost/op | added/op | CI of added/op |\n"
				"|---|---|---|---:|---:|---|\n", stat);
			header = 1;
		}
		for (size_t i = 0; i < g->n_series; i++) {
			const struct report_series *s = &g->series[i];
			const struct report_dilation *d = report_stat_dilation(m, s);
			fputs("| ", out);
			md(out, g->workload);
			fputs(" | ", out);
			md(out, g->metric);
			fputs(" | ", out);
			md(out, s->variant);
			fprintf(out, " | %.2f |", report_stat_value(m, s));
			if (s->is_baseline)
				fputs(" baseline | |\n", out);
			else if (!d)
				fputs(" - | |\n", out);
			else if (d->d.ci_abs.has_ci)
				fprintf(out, " %+.2f | [%+.2f, %+.2f] |\n", d->d.abs, d->d.ci_abs.lo,
					d->d.ci_abs.hi);
			else {
				fprintf(out, " %+.2f | no CI: ", d->d.abs);
				md(out, d->d.ci_abs.reason ? d->d.ci_abs.reason : "no interval");
				fputs(" |\n", out);
			}
		}
	}
}

static int markdown(const struct report_model *m, FILE *out)
{
	const struct run_header *h = &m->run;
	const char *dm[8], *pm[8], *hm[8];
	size_t ndm = report_methods(m, 1, dm, ARRAY_SIZE(dm));
	size_t npm = report_methods(m, 2, pm, ARRAY_SIZE(pm));
	size_t nhm = report_methods(m, 4, hm, ARRAY_SIZE(hm));
	char lvl[16];

	fmt_level(lvl, sizeof(lvl), m->confidence);
	fputs("# perturb report: ", out);
	md(out, h->experiment);
	fprintf(out, "\n\nRun %lld, started %s, ", (long long)h->id, h->started);
	md(out, h->order);
	fprintf(out, " order, seed %llu, status ", (unsigned long long)h->seed);
	md(out, h->status);
	fputs(". Baseline: **", out);
	md(out, m->baseline);
	fprintf(out, "**. Confidence %s %%. Dilation = variant - baseline, in %% of the "
		"baseline.\n", lvl);
	if (!m->n_groups)
		fputs("\nNo successful measured run to report.\n", out);
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		fputs("\n## ", out);
		unit_title(out, g);
		fprintf(out, "\n\n### Dilation at percentiles (KTAU Table 1)\n\n"
			"[lo, hi]: %s %% CI of the %% dilation.\n\n", lvl);
		table1(m, g, out);
		fprintf(out, "\n### Moments (KTAU Table 2)\n\nVariance: sample (n - 1). "
			"Mean dilation in %% with its %s %% CI.\n\n", lvl);
		table2(m, g, out);
		fputs("\n### Shift and shape\n\nHL: Hodges-Lehmann ratio variant/baseline. "
		      "KS: two-sample Kolmogorov-Smirnov.\n\n", out);
		table3(m, g, out);
	}
	configurations(m, out);
	tracer(m, out);
	markers(m, out);
	fputs("\n## Notes\n\n- Percentiles are type 7 (linear interpolation between order "
	      "statistics).\n", out);
	for (size_t i = 0; i < ndm; i++) {
		fprintf(out, "- Intervals of dilations: %s %% CI by ", lvl);
		md(out, dm[i]);
		if (strstr(dm[i], "bootstrap"))
			fprintf(out, " (B = %u, seeds derived from the run's seed %llu)", m->bootstrap,
				(unsigned long long)m->run.seed);
		fputs(ndm > 1 ? "; the JSON report gives the method of each interval.\n" : ".\n",
		      out);
	}
	for (size_t i = 0; i < npm; i++) {
		fputs("- Percentile CIs (JSON): ", out);
		md(out, pm[i]);
		fputs(".\n", out);
	}
	for (size_t i = 0; i < nhm; i++) {
		fputs("- HL ratio CI: ", out);
		md(out, hm[i]);
		fputs(".\n", out);
	}
	fprintf(out, "- p (Holm): two-sided Mann-Whitney U p-value, Holm-adjusted across the "
		"%zu comparisons of this report; significant at alpha = %g.\n",
		m->n_comparisons, m->alpha);
	fprintf(out, "- Outliers: Tukey's fences (k = %g) / modified z-score |z| > %g; "
		"labelled, not dropped.\n", REPORT_TUKEY_K, REPORT_MADZ);
	return 0;
}

const struct renderer render_markdown = {
	.name = "markdown",
	.render = markdown,
};
