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
#include "table.h"
#include "lib/util.h"

#include <math.h>
#include <string.h>

static void md(FILE *out, const char *s)
{
	fmt_markdown(out, s);
}

/* ---- the table writer: pipe tables ---- */

static void md_begin(struct tw *t)
{
	fputc('|', t->out);
}

static void md_head(struct tw *t)
{
	fputc(' ', t->out);
}

static void md_head_end(struct tw *t)
{
	fputs(" |", t->out);
}

static void md_body(struct tw *t)
{
	fputs("\n|", t->out);
	for (size_t c = 0; c < t->ncols; c++)
		fputs(c < TW_MAX_COLS && t->right[c] ? "---:|" : "---|", t->out);
	fputc('\n', t->out);
}

static void md_cell(struct tw *t, unsigned flags)
{
	fputs(flags & TW_ALERT ? " **" : " ", t->out);
}

static void md_cell_end(struct tw *t, unsigned flags)
{
	fputs(flags & TW_ALERT ? "** |" : " |", t->out);
}

static void md_empty(struct tw *t)
{
	fputs(" |", t->out);
}

static void md_row_end(struct tw *t)
{
	fputc('\n', t->out);
}

static void md_none(struct tw *t)
{
	(void)t;
}

static void md_ci(struct tw *t, const struct interval *iv, const char *unit)
{
	char lo[32], hi[32];
	if (!iv->has_ci) {
		fputs("[no CI: ", t->out);
		md(t->out, iv->reason ? iv->reason : "no interval");
		fputc(']', t->out);
		return;
	}
	fmt_ci_bounds(lo, hi, sizeof(lo), iv, unit);
	fprintf(t->out, "[%s, %s]%s", lo, hi, unit);
}

static void md_unit(struct tw *t, const char *unit)
{
	if (*unit) {
		fputc(' ', t->out);
		md(t->out, unit);
	}
}

static void md_section(struct tw *t, const char *title)
{
	fprintf(t->out, "\n## %s\n\n", title);
}

static void md_para_end(struct tw *t)
{
	fputs("\n\n", t->out);
}

/* An indented code block: shown as it is, nothing to escape. */
static void md_pre(struct tw *t, const char *text)
{
	put_lines(t->out, text, "    ", fmt_text);
	fputc('\n', t->out);
}

static const struct tw_ops md_ops = {
	.esc = md,
	.begin = md_begin,
	.head = md_head,
	.head_end = md_head_end,
	.body = md_body,
	.row = md_begin,
	.cell = md_cell,
	.cell_end = md_cell_end,
	.empty = md_empty,
	.row_end = md_row_end,
	.end = md_none,
	.ci = md_ci,
	.unit = md_unit,
	.br = "<br> ",
	.section = md_section,
	.para = md_none,
	.para_end = md_para_end,
	.pre = md_pre,
};

/* ---- sections ---- */

static void tracer(const struct report_model *m, struct tw *t)
{
	if (!m->n_tracer)
		return;
	fputs("\n## Tracer accounting\n\nThe tracer's own counts per run (per\\_cpu "
	      "stats, system-wide), medians over runs. Lost runs: runs whose trace\\_lost "
	      "(overwritten + dropped events) > 0. A cost per event needs a calibration "
	      "workload (docs/experiment.md, \"calibration\").\n\n", t->out);
	tw_tracer(t, m);
	if (m->n_tracer_lossy)
		fputs("\n**Warning:** runs that lost events: the tracer could not keep up; their "
		      "dilation understates a lossless trace.\n", t->out);
}

static void curves(const struct report_model *m, struct tw *t)
{
	char lvl[16];

	if (!m->n_curves)
		return;
	fmt_level(lvl, sizeof(lvl), m->confidence);
	fprintf(t->out, "\n## Overhead curves\n\nThe dilation of each instance of a matrix "
		"(docs/experiment.md, \"Matrices\") against its parameter, the others fixed; "
		"%s %% CI; \\*: significant (its interval at the Holm level excludes 0).\n", lvl);
	for (size_t i = 0; i < m->n_curves; i++) {
		fputs("\n### ", t->out);
		tw_curve_title(t->out, md, m, &m->curves[i]);
		fputs("\n\n", t->out);
		tw_curve(t, m, &m->curves[i]);
	}
}

static int markdown(const struct report_model *m, FILE *out)
{
	const struct run_header *h = &m->run;
	const char *dm[8], *pm[8], *hm[8];
	char note[1024];
	size_t ndm = report_methods(m, 1, dm, ARRAY_SIZE(dm));
	size_t npm = report_methods(m, 2, pm, ARRAY_SIZE(pm));
	size_t nhm = report_methods(m, 4, hm, ARRAY_SIZE(hm));
	char lvl[16];
	struct tw t = { .out = out, .ops = &md_ops };

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
	if (m->n_virtual) {
		fputs("\n", out);
		tw_virtual(out, md, m, " - ");
		fputs("\n", out);
	}
	tw_failures(&t, m);
	if (!m->n_groups)
		fputs("\nNo successful measured run to report.\n", out);
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		fputs("\n## ", out);
		tw_title(out, md, g);
		fprintf(out, "\n\n### Dilation at percentiles\n\n"
			"[lo, hi]: %s %% CI of the %% dilation.\n\n", lvl);
		tw_table1(&t, m, g);
		fprintf(out, "\n### Moments\n\nVariance: sample (n - 1). "
			"Mean dilation in %% with its %s %% CI. Detectable: the smallest mean "
			"dilation these runs could detect (power %.0f %%).\n\n", lvl,
			100 * REPORT_MDE_POWER);
		tw_table2(&t, m, g);
		fputs("\n### Shift and shape\n\nHL: Hodges-Lehmann ratio variant/baseline. "
		      "KS: two-sample Kolmogorov-Smirnov.\n\n", out);
		tw_table3(&t, g);
		if (g->nested) {
			fprintf(out, "\n### Runs nested in blocks\n\nA block is one boot of a boot: "
				"variant. Variance split by one-way random-effects ANOVA (Kalibera & "
				"Jones 2013); [CI]: %s %% Student t interval over the block means; F p: "
				"is there a block effect? ", lvl);
			fputs(report_runs_per_boot_column, out);	/* ours: nothing to escape */
			fputs("\n\n", out);
			tw_nested(&t, m, g);
		}
		if (g->nodes) {
			fprintf(out, "\n### Runs on several nodes\n\n%s\n\n", report_nodes_note);
			tw_nodes(&t, m, g);
		}
	}
	tw_configurations(&t, m);
	tracer(m, &t);
	curves(m, &t);
	tw_markers(&t, m);
	tw_calibration(&t, m);	/* reports/calib.h */
	tw_warnings(&t, m);
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
	report_holm_note(m, note, sizeof(note));
	fprintf(out, "- %s.\n", note);
	for (size_t gi = 0; gi < m->n_groups; gi++)
		if (report_primary_metric(m->groups[gi].metric)) {
			report_noise_verdict(m, &m->groups[gi], note, sizeof(note));
			fputs("- noise: ", out);
			md(out, note);
			fputs(".\n", out);
		}
	if (report_paired_note(m, note, sizeof(note))) {
		fputs("- ", out);
		md(out, note);
		fputs(".\n", out);
	}
	for (size_t i = 0; i < m->n_quiet; i++) {
		report_quiet_line(&m->quiet[i], note, sizeof(note));
		fputs("- quieter metric: ", out);
		md(out, note);
		fputs(".\n", out);
	}
	fprintf(out, "- Outliers IQR/MAD: Tukey's fences (k = %g interquartile ranges) / "
		"modified z-score from the median absolute deviation |z| > %g; labelled, not "
		"dropped.\n- ", REPORT_TUKEY_K, REPORT_MADZ);
	md(out, report_papers_note);
	fputc('\n', out);
	return 0;
}

const struct renderer render_markdown = {
	.name = "markdown",
	.render = markdown,
};
