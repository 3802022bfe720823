/*
 * render_html.c - the report as one self-contained HTML file: inline CSS,
 * the tables of the text report, and per workload x metric a CDF plot
 * (KTAU Figure 1) as inline SVG: every variant's empirical CDF overlaid as a
 * step function with a legend, labelled axes with units, dashed guides at
 * the report's percentiles; the machine provenance at the end.  No script,
 * no font, no image, no link: it opens with no network.  Every string from
 * the experiment or the machine is HTML-escaped.
 */
#include "report.h"
#include "fmt.h"
#include "table.h"
#include "lib/util.h"

#include <math.h>
#include <string.h>

/* Okabe & Ito's colour-blind-safe palette; dashes tell apart more lines. */
static const char *const colors[] = {
	"#000000", "#d55e00", "#0072b2", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c6d1f",
};
static const char *const dashes[] = { "", "6 3", "2 2", "8 3 2 3" };

static const char *const html_subst[256] = {
	['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;", ['"'] = "&quot;", ['\''] = "&#39;",
};

static void esc(FILE *out, const char *s)
{
	fmt_escape(out, s, html_subst);
}

/* ---- the CDF plot ---- */

#define PW 720
#define PH 400
#define ML 78
#define MR 44
#define MT 14
#define MB 52

/* Axis ticks at 1, 2 or 5 times a power of ten, about six of them. */
static double tick_step(double range)
{
	double raw = range / 6, mag = pow(10, floor(log10(raw))), r = raw / mag;
	return mag * (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10);
}

static void plot(const struct report_model *m, const struct report_group *g, FILE *out)
{
	double x0 = g->lo, x1 = g->hi, pw = PW - ML - MR, ph = PH - MT - MB, step;
	char v[48];

	if (isnan(x0))
		return;
	if (x1 - x0 <= 0) {
		double d = x0 != 0 ? fabs(x0) * 0.01 : 1;
		x0 -= d;
		x1 += d;
	} else {
		double pad = (x1 - x0) * 0.03;
		x0 -= pad;
		x1 += pad;
	}
#define X(val) (ML + ((val) - x0) / (x1 - x0) * pw)
#define Y(p) (MT + (1 - (p)) * ph)
	fprintf(out, "<figure><svg class=cdf viewBox=\"0 0 %d %zu\" width=\"%d\" height=\"%zu\" "
		"role=\"img\" aria-label=\"CDF of ", PW, PH + 8 + 18 * g->n_series, PW,
		PH + 8 + 18 * g->n_series);
	tw_title(out, esc, g);
	fputs("\">\n", out);
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\" "
		"stroke=\"#888\"/>\n", ML, MT, pw, ph);
	/* x ticks */
	step = tick_step(x1 - x0);
	for (double t = ceil(x0 / step) * step; t <= x1 + step * 1e-9; t += step) {
		double tx = X(t);
		fmt_value(v, sizeof(v), fabs(t) < step * 1e-9 ? 0 : t);
		/* trim trailing zeros of the tick label: 65.00 -> 65 */
		if (strchr(v, '.') && !strchr(v, 'e')) {
			char *e = v + strlen(v) - 1;
			while (*e == '0')
				*e-- = '\0';
			if (*e == '.')
				*e = '\0';
		}
		fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#eee\"/>"
			"<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" class=tick>%s</text>\n",
			tx, MT, tx, MT + ph, tx, MT + ph + 16, v);
	}
	/* y ticks */
	for (int k = 0; k <= 4; k++) {
		double p = k / 4.0;
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" class=tick>%.2f</text>\n",
			ML - 6, Y(p) + 4, p);
	}
	/* percentile guides */
	for (size_t k = 0; k < m->n_percentiles; k++) {
		double p = m->percentiles[k] / 100;
		char l[32];
		report_pct_label(l, sizeof(l), m->percentiles[k]);
		fprintf(out, "<line class=guide x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
			"stroke=\"#999\" stroke-dasharray=\"3 4\"/>"
			"<text x=\"%.0f\" y=\"%.1f\" class=tick>%s</text>\n",
			ML, Y(p), ML + pw, Y(p), ML + pw + 4, Y(p) + 4, l);
	}
	/* one step function per variant */
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		if (!s->n_ecdf)
			continue;
		fprintf(out, "<path class=cdf-line fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"",
			colors[i % ARRAY_SIZE(colors)], s->is_baseline ? "2.2" : "1.6");
		if (*dashes[i / ARRAY_SIZE(colors) % ARRAY_SIZE(dashes)])
			fprintf(out, " stroke-dasharray=\"%s\"",
				dashes[i / ARRAY_SIZE(colors) % ARRAY_SIZE(dashes)]);
		fprintf(out, " d=\"M%.1f %.1f", X(x0), Y(0));
		for (size_t k = 0; k < s->n_ecdf; k++)
			fprintf(out, "H%.1fV%.1f", X(s->ecdf_x[k]), Y(s->ecdf_p[k]));
		fprintf(out, "H%.1f\"><title>", X(x1));
		esc(out, s->label);
		fputs("</title></path>\n", out);
	}
	/* legend, under the x axis: never over a line */
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		double ly = PH + 6 + 18.0 * i;
		fprintf(out, "<line x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\" stroke=\"%s\" "
			"stroke-width=\"2\"", ML, ly - 4, ML + 28, ly - 4,
			colors[i % ARRAY_SIZE(colors)]);
		if (*dashes[i / ARRAY_SIZE(colors) % ARRAY_SIZE(dashes)])
			fprintf(out, " stroke-dasharray=\"%s\"",
				dashes[i / ARRAY_SIZE(colors) % ARRAY_SIZE(dashes)]);
		fprintf(out, "/><text x=\"%d\" y=\"%.0f\" class=legend>", ML + 34, ly);
		esc(out, s->label);
		fprintf(out, "%s (n = %zu)</text>\n", s->is_baseline ? ", baseline" : "", s->n);
	}
	/* axis labels */
	fprintf(out, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\" class=axis>", ML + pw / 2,
		PH - 12);
	esc(out, g->metric);
	if (*g->unit) {
		fputs(" (", out);
		esc(out, g->unit);
		fputc(')', out);
	}
	fprintf(out, "</text>\n<text transform=\"translate(18 %.0f) rotate(-90)\" "
		"text-anchor=\"middle\" class=axis>cumulative probability F(x)</text>\n",
		MT + ph / 2);
	fputs("</svg><figcaption>Empirical CDF of each variant", out);
	for (size_t i = 0; i < g->n_series; i++)
		if (g->series[i].n && !g->series[i].ecdf_exact) {
			fprintf(out, " (sampled at %d evenly spaced probabilities for large samples)",
				REPORT_ECDF_MAX + 1);
			break;
		}
	fputs("; dashed lines: the report's percentiles.</figcaption></figure>\n", out);
#undef X
#undef Y
}

/* ---- the table writer ---- */

static void h_begin(struct tw *t)
{
	fputs("<table><tr>", t->out);
}

static void h_head(struct tw *t)
{
	fputs("<th>", t->out);
}

static void h_head_end(struct tw *t)
{
	fputs("</th>", t->out);
}

static void h_row_end(struct tw *t)
{
	fputs("</tr>\n", t->out);
}

static void h_row(struct tw *t)
{
	fputs("<tr>", t->out);
}

static void h_cell(struct tw *t, unsigned flags)
{
	if (flags & TW_TH)
		fputs("<th>", t->out);
	else
		fprintf(t->out, "<td%s>", flags & (TW_MARK | TW_ALERT) ? " class=sig" :
			flags & TW_CI ? " class=ci" : "");
}

static void h_cell_end(struct tw *t, unsigned flags)
{
	fputs(flags & TW_TH ? "</th>" : "</td>", t->out);
}

static void h_empty(struct tw *t)
{
	fputs("<td></td>", t->out);
}

static void h_end(struct tw *t)
{
	fputs("</table>\n", t->out);
}

static void h_span(struct tw *t, int n, const char *text)
{
	fprintf(t->out, "<td colspan=%d>", n);
	esc(t->out, text);
	fputs("</td>", t->out);
}

static void h_ci(struct tw *t, const struct interval *iv, const char *unit)
{
	char lo[32], hi[32];
	if (!iv->has_ci) {
		fputs("<span class=ci>no CI: ", t->out);
		esc(t->out, iv->reason ? iv->reason : "no interval");
		fputs("</span>", t->out);
		return;
	}
	fmt_pct(lo, sizeof(lo), iv->lo);
	fmt_pct(hi, sizeof(hi), iv->hi);
	fprintf(t->out, "<span class=ci title=\"");
	esc(t->out, iv->method);
	fprintf(t->out, "\">[%s, %s]%s</span>", lo, hi, unit);
}

static void h_unit(struct tw *t, const char *unit)
{
	fputc(' ', t->out);
	esc(t->out, unit);
}

static void h_section(struct tw *t, const char *title)
{
	fprintf(t->out, "<h2>%s</h2>\n", title);
}

static void h_para(struct tw *t)
{
	fputs("<p>", t->out);
}

static void h_para_end(struct tw *t)
{
	fputs("</p>\n", t->out);
}

static const struct tw_ops html_ops = {
	.esc = esc,
	.begin = h_begin,
	.head = h_head,
	.head_end = h_head_end,
	.body = h_row_end,
	.row = h_row,
	.cell = h_cell,
	.cell_end = h_cell_end,
	.empty = h_empty,
	.row_end = h_row_end,
	.end = h_end,
	.span = h_span,
	.ci = h_ci,
	.unit = h_unit,
	.br = "<br>",
	.section = h_section,
	.para = h_para,
	.para_end = h_para_end,
};

/* ---- sections ---- */

static void tracer(const struct report_model *m, struct tw *t)
{
	char lvl[16];

	if (!m->n_tracer)
		return;
	fmt_level(lvl, sizeof(lvl), m->confidence);
	fprintf(t->out, "<h2>Tracer accounting</h2>\n<p>The tracer's own counts per run (per_cpu "
		"stats, system-wide), medians over runs. Lost runs: runs whose trace_lost "
		"(overwritten + dropped events) &gt; 0. Cost per event: (mean variant wall &minus; "
		"mean baseline wall) / mean events per run, in ns; its %s %% CI is the wall "
		"dilation's CI / the same mean events (the events count is treated as fixed, an "
		"approximation). Events are counted per run, so per-operation metrics get no cost "
		"per event.</p>\n", lvl);
	tw_tracer(t, m);
	if (m->n_tracer_lossy)
		fputs("<p class=sig>Warning: runs that lost events: the tracer could not keep up; "
		      "their dilation understates a lossless trace.</p>\n", t->out);
}

static void notes(const struct report_model *m, FILE *out, const char *lvl)
{
	const char *dm[8], *pm[8], *hm[8];
	size_t ndm = report_methods(m, 1, dm, ARRAY_SIZE(dm));
	size_t npm = report_methods(m, 2, pm, ARRAY_SIZE(pm));
	size_t nhm = report_methods(m, 4, hm, ARRAY_SIZE(hm));

	fputs("<h2>Notes</h2>\n<ul>\n<li>Percentiles are type 7 (linear interpolation between "
	      "order statistics).</li>\n", out);
	for (size_t i = 0; i < ndm; i++) {
		fprintf(out, "<li>[lo, hi] of a dilation: its %s %% confidence interval by ", lvl);
		esc(out, dm[i]);
		if (strstr(dm[i], "bootstrap"))
			fprintf(out, " (B = %u, the two samples resampled independently, seeds derived "
				"from the run's seed %llu)", m->bootstrap,
				(unsigned long long)m->run.seed);
		fputs(ndm > 1 ? "; hover an interval to see its method.</li>\n" : ".</li>\n", out);
	}
	for (size_t i = 0; i < npm; i++) {
		fputs("<li>Percentile CIs (JSON report): ", out);
		esc(out, pm[i]);
		fputs(".</li>\n", out);
	}
	for (size_t i = 0; i < nhm; i++) {
		fputs("<li>HL ratio: Hodges-Lehmann estimate of variant/baseline; its CI by ", out);
		esc(out, hm[i]);
		fputs(".</li>\n", out);
	}
	fprintf(out, "<li>p (Holm): two-sided Mann-Whitney U p-value, Holm-adjusted across the "
		"%zu comparisons of this report; significant at alpha = %g.</li>\n",
		m->n_comparisons, m->alpha);
	fprintf(out, "<li>Outliers: Tukey's fences (k = %g) / modified z-score |z| &gt; %g; "
		"labelled, not dropped.</li>\n</ul>\n", REPORT_TUKEY_K, REPORT_MADZ);
}

static void provenance(const struct report_model *m, FILE *out)
{
	const struct run_header *h = &m->run;

	fputs("<h2>Provenance</h2>\n<table class=prov>\n", out);
	fprintf(out, "<tr><th>run</th><td>%lld</td></tr>\n<tr><th>experiment</th><td>",
		(long long)h->id);
	esc(out, h->experiment);
	fputs("</td></tr>\n<tr><th>file</th><td>", out);
	esc(out, h->path);
	fputs("</td></tr>\n<tr><th>sha256</th><td>", out);
	esc(out, h->sha256);
	fputs("</td></tr>\n<tr><th>started / ended</th><td>", out);
	esc(out, h->started);
	fputs(" / ", out);
	esc(out, h->ended ? h->ended : "-");
	fputs("</td></tr>\n<tr><th>status, order, seed</th><td>", out);
	esc(out, h->status);
	fputs(", ", out);
	esc(out, h->order);
	fprintf(out, ", %llu</td></tr>\n</table>\n<p>Machine:</p>\n<pre>",
		(unsigned long long)h->seed);
	/* one "key": value a line, for reading */
	for (const char *p = h->machine_json ? h->machine_json : "(not recorded)"; *p; p++) {
		char c[2] = { *p, 0 };
		esc(out, c);
		if (*p == ',' && p[1] == ' ' && p[2] == '"') {
			fputc('\n', out);
			p++;
		}
	}
	fputs("</pre>\n", out);
}

static int html(const struct report_model *m, FILE *out)
{
	const struct run_header *h = &m->run;
	char lvl[16];
	struct tw t = { .out = out, .ops = &html_ops };

	fmt_level(lvl, sizeof(lvl), m->confidence);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
	      "perturb report: ", out);
	esc(out, h->experiment);
	fputs("</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;color:#222;"
	      "padding:0 1em}\n"
	      "table{border-collapse:collapse;margin:.6em 0 1.2em}\n"
	      "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right;"
	      "vertical-align:top;font-variant-numeric:tabular-nums}\n"
	      "th{background:#f4f4f4}tr th:first-child{text-align:left}\n"
	      ".ci{color:#555;font-size:.9em}.sig{color:#b00;font-weight:bold}\n"
	      "svg{font-family:sans-serif;max-width:100%;height:auto}\n"
	      "svg .tick{font-size:12px;fill:#333}svg .axis{font-size:14px;fill:#000}\n"
	      "svg .legend{font-size:13px;fill:#000}\n"
	      "figure{margin:.5em 0 1.5em}figcaption{font-size:.9em;color:#555}\n"
	      "pre{background:#f8f8f8;padding:.6em;white-space:pre-wrap;word-break:break-all}\n"
	      "</style></head><body>\n<h1>perturb report: ", out);
	esc(out, h->experiment);
	fprintf(out, "</h1>\n<p>Run %lld, started ", (long long)h->id);
	esc(out, h->started);
	fputs(". Baseline: <b>", out);
	esc(out, m->baseline);
	fprintf(out, "</b>. Confidence %s %%. Dilation = variant &minus; baseline, in %% of the "
		"baseline.</p>\n", lvl);
	if (m->n_virtual) {
		fputs("<p class=virtual>", out);
		tw_virtual(out, esc, m, " &mdash; ");
		fputs("</p>\n", out);
	}
	if (!m->n_groups)
		fputs("<p>No successful measured run to report.</p>\n", out);
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		fputs("<section>\n<h2>", out);
		tw_title(out, esc, g);
		fputs("</h2>\n", out);
		plot(m, g, out);
		fprintf(out, "<h3>Dilation at percentiles (KTAU Table 1)</h3>\n<p>[lo, hi]: %s %% "
			"CI of the %% dilation.</p>\n", lvl);
		tw_table1(&t, m, g);
		fprintf(out, "<h3>Moments (KTAU Table 2)</h3>\n<p>Variance: sample (n &minus; 1). "
			"Mean dilation in %% with its %s %% CI. Detectable: the smallest mean "
			"dilation these runs could detect (power %.0f %%).</p>\n", lvl,
			100 * REPORT_MDE_POWER);
		tw_table2(&t, g);
		fputs("<h3>Shift and shape</h3>\n", out);
		tw_table3(&t, g);
		if (g->nested) {
			fprintf(out, "<h3>Runs nested in blocks</h3>\n<p>A block is one boot of a "
				"boot: variant. Variance split by one-way random-effects ANOVA "
				"(Kalibera &amp; Jones 2013); [CI]: %s %% Student t interval over the "
				"block means; F p: is there a block effect?</p>\n", lvl);
			tw_nested(&t, m, g);
		}
		if (g->nodes) {
			fputs("<h3>Runs on several nodes</h3>\n<p>", out);
			esc(out, report_nodes_note);
			fputs("</p>\n", out);
			tw_nodes(&t, m, g);
		}
		fputs("</section>\n", out);
	}
	tw_configurations(&t, m);
	tracer(m, &t);
	tw_markers(&t, m);
	notes(m, out, lvl);
	provenance(m, out);
	fprintf(out, "<p class=ci>perturb %s</p>\n</body></html>\n", PERTURB_VERSION);
	return 0;
}

const struct renderer render_html = {
	.name = "html",
	.render = html,
};
