/*
 * render_html.c - the report as one self-contained HTML file: the marks of
 * the HTML format for the report's document (doc.h: its sections, order
 * and prose) and tables (table.h), inline CSS, a table of contents of the
 * level-1 sections (the answer's highlighted), and the figures: per
 * workload x metric of the detail a CDF plot (KTAU Figure 1) as inline
 * SVG: every variant's empirical CDF overlaid as a step function with a
 * legend, labelled axes with units, dashed guides at the report's
 * percentiles, and beside it the histogram of each variant (one row each,
 * on the CDF's x axis); the overhead curves of a study with a matrix, each
 * a plot of the dilation against the parameter with its CIs; the machine
 * provenance at the end.  No script, no font, no image, no link but the
 * contents' anchors: it opens with no network.  Every string from the
 * experiment or the machine is HTML-escaped.
 */
#include "report.h"
#include "fmt.h"
#include "table.h"
#include "doc.h"
#include "lib/util.h"

#include <math.h>
#include <string.h>

/*
 * The eight colours of Okabe & Ito's palette, told apart by readers with
 * every common colour-vision deficiency (M. Okabe and K. Ito, "Color
 * Universal Design (CUD): How to make figures and presentations that are
 * friendly to Colorblind people", 2008, https://jfly.uni-koeln.de/color/).
 * Yellow comes last, being the faintest on white.  After eight variants
 * the colours repeat with a dash pattern.
 */
static const char *const colors[] = {
	"#000000", "#d55e00", "#0072b2", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#f0e442",
};
static const char *const dashes[] = { "", "6 3", "2 2", "8 3 2 3" };

static void esc(FILE *out, const char *s)
{
	fmt_html(out, s);
}

/* ---- the CDF plot ---- */

#define PW 560
#define PH 360
#define ML 78
#define MR 44
#define MT 14
#define MB 52

/* Axis ticks at 1, 2 or 5 times a power of ten, about n of them. */
static double tick_step_n(double range, double n)
{
	double raw = range / n, mag = pow(10, floor(log10(raw))), r = raw / mag;
	return mag * (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10);
}

static double tick_step(double range)
{
	return tick_step_n(range, 6);
}

/* A tick label without trailing zeros: 65.00 -> 65. */
static void trim_zeros(char *v)
{
	if (strchr(v, '.') && !strchr(v, 'e')) {
		char *e = v + strlen(v) - 1;
		while (*e == '0')
			*e-- = '\0';
		if (*e == '.')
			*e = '\0';
	}
}

static void histogram(const struct report_group *g, double x0, double x1, FILE *out);

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
	fprintf(out, "<figure><div class=plots><svg class=cdf viewBox=\"0 0 %d %zu\" width=\"%d\" height=\"%zu\" "
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
		trim_zeros(v);
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
	fputs("</svg>\n", out);
	histogram(g, x0, x1, out);
	fputs("</div><figcaption>Left: the empirical CDF of each variant", out);
	for (size_t i = 0; i < g->n_series; i++)
		if (g->series[i].n && !g->series[i].ecdf_exact) {
			fprintf(out, " (sampled at %d evenly spaced probabilities for large samples)",
				REPORT_ECDF_MAX + 1);
			break;
		}
	fputs("; dashed lines: the report's percentiles.", out);
	if (g->n_bins)
		fprintf(out, " Right: the histogram of each variant, the share of its runs in "
			"each of %zu bins of equal width (Sturges' rule), on the same x axis.",
			g->n_bins);
	fputs("</figcaption></figure>\n", out);
#undef X
#undef Y
}

/* ---- the histogram beside the CDF ---- */

#define HW 470
#define HL 132		/* left margin: the variants' names */
#define HR 12
#define HROW 40		/* one row per variant */

/* The variant's name for a narrow margin: at most max characters. */
static void short_label(FILE *out, const char *s, size_t max)
{
	if (strlen(s) <= max) {
		esc(out, s);
		return;
	}
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*s", (int)(max - 1), s);
	esc(out, buf);
	fputs("&hellip;", out);
}

/* One row of bars per variant, in its colour, on the CDF's x range: the
 * share of its runs in each of the group's bins (report_group.n_bins). */
static void histogram(const struct report_group *g, double x0, double x1, FILE *out)
{
	double pw = HW - HL - HR, top = 0;
	size_t h = MT + HROW * g->n_series + MB;

	if (!g->n_bins)
		return;
	for (size_t i = 0; i < g->n_series; i++)
		for (size_t b = 0; b < g->n_bins && g->series[i].n; b++)
			top = fmax(top, (double)g->series[i].hist[b] / (double)g->series[i].n);
	if (!(top > 0))
		return;
#define HX(val) (HL + ((val) - x0) / (x1 - x0) * pw)
	fprintf(out, "<svg class=hist viewBox=\"0 0 %d %zu\" width=\"%d\" height=\"%zu\" "
		"role=\"img\" aria-label=\"histogram of ", HW, h, HW, h);
	tw_title(out, esc, g);
	fputs("\">\n", out);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		double base = MT + HROW * (i + 1.0) - 4;
		const char *c = colors[i % ARRAY_SIZE(colors)];
		fprintf(out, "<line x1=\"%d\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#bbb\"/>"
			"<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\" class=tick>", HL, base,
			HL + pw, base, HL - 6, base - 4);
		short_label(out, s->label, 15);
		fputs("</text>\n", out);
		for (size_t b = 0; b < g->n_bins && s->n; b++) {
			double lo = g->lo + g->bin_w * (double)b, share, bh;
			double bx = g->n_bins > 1 ? HX(lo) : HX(g->lo) - 4;
			double bw = g->n_bins > 1 ? HX(lo + g->bin_w) - bx : 8;
			if (!s->hist[b])
				continue;
			share = (double)s->hist[b] / (double)s->n;
			bh = share / top * (HROW - 8);
			fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\" stroke=\"#333\" stroke-width=\"0.5\">"
				"<title>", bx, base - bh, bw > 1 ? bw - 0.5 : bw, bh, c);
			esc(out, s->label);
			fprintf(out, ": %zu of %zu runs</title></rect>\n", s->hist[b], s->n);
		}
	}
	/* x ticks: the CDF's */
	double step = tick_step_n(x1 - x0, 3), y = MT + HROW * (double)g->n_series;
	char v[48];
	for (double t = ceil(x0 / step) * step; t <= x1 + step * 1e-9; t += step) {
		fmt_value(v, sizeof(v), fabs(t) < step * 1e-9 ? 0 : t);
		trim_zeros(v);
		fprintf(out, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" class=tick>%s</text>\n",
			HX(t), y + 16, v);
	}
	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" class=axis>", HL + pw / 2,
		y + 40);
	esc(out, g->metric);
	if (*g->unit) {
		fputs(" (", out);
		esc(out, g->unit);
		fputc(')', out);
	}
	fputs("</text>\n</svg>", out);
#undef HX
}

/* ---- the overhead curve ---- */

#define CW 640
#define CH 300
#define CL 70
#define CR 20
#define CT 14
#define CB 56

static void curve_plot(const struct report_model *m, const struct report_curve *c, FILE *out)
{
	double pw = CW - CL - CR, ph = CH - CT - CB, y0 = 0, y1 = 0, x0 = 0, x1 = 1, step;
	char v[48];

	for (size_t i = 0; i < c->n; i++) {
		const struct report_curve_point *p = &c->pts[i];
		if (!p->ok)
			continue;
		y0 = fmin(y0, p->ci.has_ci ? fmin(p->ci.lo, p->pct) : p->pct);
		y1 = fmax(y1, p->ci.has_ci ? fmax(p->ci.hi, p->pct) : p->pct);
	}
	if (y1 - y0 < 1) {
		y0 -= 0.5;
		y1 += 0.5;
	}
	y0 -= (y1 - y0) * 0.06;
	y1 += (y1 - y0) * 0.06;
	if (c->numeric) {
		x0 = c->log_x ? log10(c->pts[0].x) : c->pts[0].x;
		x1 = c->log_x ? log10(c->pts[c->n - 1].x) : c->pts[c->n - 1].x;
		if (!(x1 > x0))
			x1 = x0 + 1;
	}
	/* a margin of 6 % a side: no point on the frame */
#define PX(i) (CL + pw * (0.06 + 0.88 * (c->numeric ? ((c->log_x ? log10(c->pts[i].x) : \
		c->pts[i].x) - x0) / (x1 - x0) : c->n > 1 ? (double)(i) / (double)(c->n - 1) : 0.5)))
#define PY(val) (CT + (y1 - (val)) / (y1 - y0) * ph)
	fprintf(out, "<figure><svg class=curve viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		"role=\"img\" aria-label=\"", CW, CH, CW, CH);
	tw_curve_title(out, esc, m, c);
	fputs("\">\n", out);
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\" "
		"stroke=\"#888\"/>\n", CL, CT, pw, ph);
	step = tick_step(y1 - y0);
	for (double t = ceil(y0 / step) * step; t <= y1 + step * 1e-9; t += step) {
		double ty = PY(t);
		fmt_pct(v, sizeof(v), t);
		trim_zeros(v);
		if (fabs(t) < step * 1e-9)
			snprintf(v, sizeof(v), "0");
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"%s\"%s/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" class=tick>%s</text>\n",
			CL, ty, CL + pw, ty, fabs(t) < step * 1e-9 ? "#666" : "#eee",
			fabs(t) < step * 1e-9 ? " stroke-dasharray=\"4 3\"" : "", CL - 6, ty + 4, v);
	}
	/* the line through the points, then each point's CI and mark */
	fputs("<path fill=\"none\" stroke=\"#0072b2\" stroke-width=\"1.6\" d=\"", out);
	for (size_t i = 0, first = 1; i < c->n; i++)
		if (c->pts[i].ok) {
			fprintf(out, "%s%.1f %.1f", first ? "M" : "L", PX(i), PY(c->pts[i].pct));
			first = 0;
		}
	fputs("\"/>\n", out);
	for (size_t i = 0; i < c->n; i++) {
		const struct report_curve_point *p = &c->pts[i];
		double x = PX(i);
		fprintf(out, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" class=tick>", x,
			CT + ph + 16);
		short_label(out, p->label, 18);
		if (c->is_list)
			fprintf(out, " (%.0f)", p->x);
		fputs("</text>\n", out);
		if (!p->ok)
			continue;
		if (p->ci.has_ci)
			fprintf(out, "<path stroke=\"#0072b2\" stroke-width=\"1.4\" d=\"M%.1f %.1fV%.1f"
				"M%.1f %.1fH%.1fM%.1f %.1fH%.1f\"/>\n", x, PY(p->ci.lo), PY(p->ci.hi),
				x - 5, PY(p->ci.lo), x + 5, x - 5, PY(p->ci.hi), x + 5);
		fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\" stroke=\"#0072b2\" "
			"stroke-width=\"1.6\"><title>", x, PY(p->pct),
			p->significant ? "#0072b2" : "#fff");
		esc(out, c->of_variant ? p->variant : p->workload);
		fmt_pct(v, sizeof(v), p->pct);
		fprintf(out, ": %s %%", v);
		if (p->ci.has_ci) {
			char lo[32], hi[32];
			fmt_pct(lo, sizeof(lo), p->ci.lo);
			fmt_pct(hi, sizeof(hi), p->ci.hi);
			fprintf(out, " [%s, %s]", lo, hi);
		}
		fprintf(out, "%s</title></circle>\n", p->significant ? ", significant" : "");
	}
	fprintf(out, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\" class=axis>", CL + pw / 2,
		CH - 14);
	esc(out, c->param);
	fputs(c->is_list ? " (number of items)" : c->log_x ? " (log scale)" :
	      c->numeric ? "" : " (categories)", out);
	fprintf(out, "</text>\n<text transform=\"translate(16 %.0f) rotate(-90)\" "
		"text-anchor=\"middle\" class=axis>dilation (%%)</text>\n</svg>", CT + ph / 2);
	fputs("<figcaption>Dilation of each instance with its confidence interval; filled: "
	      "significant (its interval at the Holm level excludes 0).</figcaption></figure>\n", out);
#undef PX
#undef PY
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
	fmt_ci_bounds(lo, hi, sizeof(lo), iv, unit);
	fprintf(t->out, "<span class=ci title=\"");
	esc(t->out, iv->method);
	fprintf(t->out, "\">[%s, %s]%s</span>", lo, hi, unit);
}

static void h_unit(struct tw *t, const char *unit)
{
	fputc(' ', t->out);
	esc(t->out, unit);
}

/* ---- the table of contents: every h2 after it, with an anchor ---- */

struct toc {
	char **titles;		/* HTML, escaped */
	char **ids;
	size_t n, alloc, alloc_ids;
	int open;		/* a <section> is open */
};

/* <section id=ID><h2>title</h2>, title already HTML; listed in the
 * contents.  id NULL: sN. */
static void toc_h2(struct toc *c, FILE *out, const char *id, const char *title)
{
	ALLOC_GROW(c->titles, c->n + 1, c->alloc);
	ALLOC_GROW(c->ids, c->n + 1, c->alloc_ids);
	c->titles[c->n] = xstrdup(title);
	c->ids[c->n] = id ? xstrdup(id) : xasprintf("s%zu", c->n + 1);
	if (c->open)
		fputs("</section>\n", out);
	c->open = 1;
	fprintf(out, "<section id=%s>\n<h2>%s</h2>\n", c->ids[c->n], title);
	c->n++;
}

static void toc_release(struct toc *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->titles[i]);
		free(c->ids[i]);
	}
	free(c->titles);
	free(c->ids);
}

static void h_section(struct tw *t, int level, const char *id, const char *title)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fmt_memstream(&buf, &len);

	esc(f, title);
	fclose(f);
	if (level == 1)
		toc_h2(t->priv, t->out, id, buf);
	else
		fprintf(t->out, "<h%d>%s</h%d>\n", level + 1, buf, level + 1);
	free(buf);
}

static void h_para(struct tw *t)
{
	fputs(t->alert ? "<p class=sig>" : "<p>", t->out);
}

static void h_list(struct tw *t, char *const *items, size_t n)
{
	fputs("<ul>\n", t->out);
	for (size_t i = 0; i < n; i++) {
		fputs("<li>", t->out);
		esc(t->out, items[i]);
		fputs("</li>\n", t->out);
	}
	fputs("</ul>\n", t->out);
}

static void provenance(const struct report_model *m, FILE *out);

static void h_figure(struct tw *t, const struct report_model *m, const struct doc_block *b)
{
	switch (b->figure) {
	case DF_CDF: plot(m, b->g, t->out); break;
	case DF_CURVE: curve_plot(m, b->c, t->out); break;
	case DF_PROVENANCE: provenance(m, t->out); break;
	}
}

static void h_para_end(struct tw *t)
{
	fputs("</p>\n", t->out);
}

static void h_pre(struct tw *t, const char *text)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fmt_memstream(&buf, &len);

	put_lines(f, text, "", esc);
	fclose(f);
	if (len && buf[len - 1] == '\n')
		buf[--len] = 0;
	fprintf(t->out, "<pre>%s</pre>\n", buf);
	free(buf);
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
	.list = h_list,
	.figure = h_figure,
	.para = h_para,
	.para_end = h_para_end,
	.pre = h_pre,
};

/* ---- the document ---- */

static void provenance(const struct report_model *m, FILE *out)
{
	const struct run_header *h = &m->run;

	fputs("<h3>Provenance</h3>\n<table class=prov>\n", out);
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
	char *body = NULL;
	size_t body_len = 0;
	struct toc toc = { 0 };
	struct tw t = { .ops = &html_ops, .priv = &toc };
	struct doc d;

	doc_build(m, &d);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", out);
	esc(out, d.title);
	fputs("</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;color:#222;"
	      "padding:0 1em}\n"
	      "table{border-collapse:collapse;margin:.6em 0 1.2em}\n"
	      "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right;"
	      "vertical-align:top;font-variant-numeric:tabular-nums}\n"
	      "th{background:#f4f4f4}tr th:first-child{text-align:left}\n"
	      ".ci{color:#555;font-size:.9em}.sig{color:#b00;font-weight:bold}\n"
	      "section#answer{background:#f6f8fa;border-left:4px solid #0072b2;padding:.1em 1em}\n"
	      "nav ol{columns:2;font-size:.95em}\n"
	      ".plots{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}\n"
	      "svg{font-family:sans-serif;max-width:100%;height:auto}\n"
	      "svg .tick{font-size:12px;fill:#333}svg .axis{font-size:14px;fill:#000}\n"
	      "svg .legend{font-size:13px;fill:#000}\n"
	      "figure{margin:.5em 0 1.5em}figcaption{font-size:.9em;color:#555}\n"
	      "pre{background:#f8f8f8;padding:.6em;white-space:pre-wrap;word-break:break-all}\n"
	      "</style></head><body>\n<h1>", out);
	esc(out, d.title);
	fputs("</h1>\n", out);

	/* the body first, into a buffer: the contents list its headings */
	t.out = fmt_memstream(&body, &body_len);
	doc_write(&d, m, &t);
	if (toc.open)
		fputs("</section>\n", t.out);
	fclose(t.out);

	fputs("<nav><h2>Contents</h2>\n<ol>\n", out);
	for (size_t i = 0; i < toc.n; i++)
		fprintf(out, "<li><a href=\"#%s\">%s</a></li>\n", toc.ids[i], toc.titles[i]);
	fputs("</ol></nav>\n", out);
	fwrite(body, 1, body_len, out);
	fprintf(out, "<p class=ci>perturb %s</p>\n</body></html>\n", PERTURB_VERSION);
	free(body);
	toc_release(&toc);
	doc_release(&d);
	return 0;
}

const struct renderer render_html = {
	.name = "html",
	.render = html,
};
