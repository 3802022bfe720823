/* table.c - the report's tables through a table writer; see table.h */
#include "table.h"
#include "fmt.h"
#include "warnings.h"
#include "lib/util.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ---- writer helpers ---- */

static void esc(struct tw *t, const char *s)
{
	t->ops->esc(t->out, s);
}

static void begin(struct tw *t)
{
	t->ncols = 0;
	t->ops->begin(t);
}

/* A header cell: label, or (NULL) content the caller writes before head_end. */
static void head(struct tw *t, int right, const char *label)
{
	if (t->ncols < TW_MAX_COLS)
		t->right[t->ncols] = (unsigned char)right;
	t->ncols++;
	t->ops->head(t);
	if (label) {
		esc(t, label);	/* a variant's name: from the database */
		t->ops->head_end(t);
	}
}

/* Header cells: the first left-aligned, the others right-aligned where
 * right[] (a string of 'r' and 'l' after the first) says. */
static void header(struct tw *t, const char *right, const char *const *labels)
{
	begin(t);
	head(t, 0, labels[0]);
	for (size_t i = 1; labels[i]; i++)
		head(t, right[i - 1] == 'r', labels[i]);
	t->ops->body(t);
}

PRINTF(3, 4)
static void cellf(struct tw *t, unsigned flags, const char *fmt, ...)
{
	va_list ap;

	t->ops->cell(t, flags);
	va_start(ap, fmt);
	vfprintf(t->out, fmt, ap);
	va_end(ap);
	t->ops->cell_end(t, flags);
}

/* Why a value is missing, as the writer shows it. */
static void reason(struct tw *t, const char *why)
{
	if (t->ops->reason)
		t->ops->reason(t, why);
	else
		esc(t, why);
}

static void cell_reason(struct tw *t, unsigned flags, const char *why)
{
	t->ops->cell(t, flags);
	reason(t, why);
	t->ops->cell_end(t, flags);
}

static void cell_esc(struct tw *t, unsigned flags, const char *s)
{
	t->ops->cell(t, flags);
	esc(t, s);
	t->ops->cell_end(t, flags);
}

/* A row that starts with the cell naming it. */
static void row(struct tw *t, const char *name)
{
	t->ops->row(t);
	cell_esc(t, TW_TH, name);
}

void tw_title(FILE *out, void (*e)(FILE *, const char *), const struct report_group *g)
{
	e(out, g->workload);
	fputs(": ", out);
	e(out, g->metric);
	if (*g->unit) {
		fputs(" (", out);
		e(out, g->unit);
		fputc(')', out);
	}
}

/*
 * A dilation's change, "+1.23 %", or without a percentage (report.h,
 * no_pct: the baseline's interval holds 0) the difference in the metric's
 * unit, "+5.00 ns (no %)"; dil_ci its interval, in % or in the unit.
 */
static void dil_text(char *buf, size_t len, const struct report_dilation *d, const char *unit)
{
	char a[48];

	if (!d->no_pct) {
		fmt_pct(a, sizeof(a), d->d.pct);
		snprintf(buf, len, "%s %%", a);
		return;
	}
	fmt_like(a, sizeof(a), d->d.abs, d->d.base, 1);
	snprintf(buf, len, "%s%s%s (no %%)", a, *unit ? " " : "", unit);
}

static void dil_ci(struct tw *t, const struct report_dilation *d, const char *unit,
		   const char *pct_unit)
{
	char u[64];

	if (!d->no_pct) {
		t->ops->ci(t, &d->d.ci_pct, pct_unit);
		return;
	}
	snprintf(u, sizeof(u), "%s%s", *unit ? " " : "", unit);
	t->ops->ci(t, &d->d.ci_abs, u);
}

/* ---- tables ---- */

void tw_table1(struct tw *t, const struct report_model *m, const struct report_group *g)
{
	char l[32], a[48], p[96];

	begin(t);
	head(t, 0, "variant");
	for (size_t k = 0; k < m->n_percentiles; k++) {
		report_pct_label(l, sizeof(l), m->percentiles[k]);
		head(t, 0, l);	/* left: a value over its interval */
	}
	t->ops->body(t);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		row(t, s->label);
		for (size_t k = 0; k < m->n_percentiles; k++) {
			const struct report_dilation *d = &s->pct_dil[k];
			t->ops->cell(t, 0);
			if (!s->n) {
				fputs("no run", t->out);
			} else if (s->is_baseline || !s->compared) {
				fmt_value(a, sizeof(a), s->pct[k]);
				fputs(a, t->out);
				t->ops->unit(t, g->unit);
				if (!s->is_baseline && k == 0) {
					fprintf(t->out, "%s[not compared: ", t->ops->br);
					reason(t, s->no_compare_reason);
					fputc(']', t->out);
				}
			} else if (d->ok) {
				fmt_like(a, sizeof(a), d->d.abs, d->d.base, 1);
				fputs(a, t->out);
				t->ops->unit(t, g->unit);
				if (d->no_pct) {
					fprintf(t->out, " (no %%)%s", t->ops->br);
				} else {
					fmt_pct(p, sizeof(p), d->d.pct);
					fprintf(t->out, " (%s %%)%s", p, t->ops->br);
				}
				dil_ci(t, d, g->unit, " %");
			} else {
				fputc('-', t->out);
			}
			t->ops->cell_end(t, 0);
		}
		t->ops->row_end(t);
	}
	t->ops->end(t);
}

/* A series' verdict (report.h, struct report_verdict): the interval that
 * decided it, at its level (the Holm step's), then the star. */
static void verdict_cells(struct tw *t, const struct report_series *s)
{
	const struct report_verdict *v = &s->verdict;
	char lvl[16];

	if (!v->tested) {
		cell_reason(t, 0, v->reason ? v->reason : "no interval of the dilation");
		t->ops->empty(t);
		return;
	}
	snprintf(lvl, sizeof(lvl), "%.4g", 100 * v->ci.level);
	t->ops->cell(t, TW_CI);
	t->ops->ci(t, &v->ci, " %");
	fprintf(t->out, " at %s %%", lvl);
	t->ops->cell_end(t, TW_CI);
	if (s->significant)
		cellf(t, TW_MARK, "*");
	else
		t->ops->empty(t);
}

void tw_table2(struct tw *t, const struct report_model *m, const struct report_group *g)
{
	static const char *const labels[] = {
		"mean dilation [CI]", "detectable", NULL, "sig", "rank p", NULL,
	};
	/* the unit in the heading: every number of the column has it */
	static const char *const with_unit[][3] = {
		{ "mean", "mean (", ")" }, { "variance", "var (", "^2)" }, { "sd", "sd (", ")" },
	};
	char mean[48], var[48], sd[48], p[96], stat[32];

	begin(t);
	head(t, 0, "variant");
	head(t, 1, "n");
	for (size_t i = 0; i < ARRAY_SIZE(with_unit); i++) {
		if (!*g->unit) {
			head(t, 1, with_unit[i][0]);
			continue;
		}
		head(t, 1, NULL);
		fputs(with_unit[i][1], t->out);
		esc(t, g->unit);
		fputs(with_unit[i][2], t->out);
		t->ops->head_end(t);
	}
	for (size_t i = 0; i < ARRAY_SIZE(labels) - 1; i++) {
		if (labels[i]) {
			head(t, i == 1 || i == 4, labels[i]);
			continue;
		}
		report_stat_name(m, stat, sizeof(stat));
		head(t, 0, NULL);
		fprintf(t->out, "%s dilation: Holm CI", stat);
		t->ops->head_end(t);
	}
	t->ops->body(t);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		row(t, s->label);
		cellf(t, 0, "%zu", s->n);
		if (!s->has_summary) {
			if (t->ops->span) {
				t->ops->span(t, 8, "no successful run");
			} else {
				for (int c = 0; c < 3; c++)
					cellf(t, 0, "-");
				for (int c = 0; c < 5; c++)
					t->ops->empty(t);
			}
			t->ops->row_end(t);
			continue;
		}
		fmt_value(mean, sizeof(mean), s->sum.mean);
		fmt_value(var, sizeof(var), s->sum.var);
		fmt_value(sd, sizeof(sd), s->sum.sd);
		cellf(t, 0, "%s", mean);
		cellf(t, 0, "%s", var);
		cellf(t, 0, "%s", sd);
		if (s->is_baseline || !s->compared || !s->mean_dil.ok) {
			cellf(t, 0, "%s", s->is_baseline ? "baseline" : "-");
			for (int c = 0; c < 4; c++)
				t->ops->empty(t);
			t->ops->row_end(t);
			continue;
		}
		dil_text(p, sizeof(p), &s->mean_dil, g->unit);
		t->ops->cell(t, 0);
		fprintf(t->out, "%s ", p);
		dil_ci(t, &s->mean_dil, g->unit, "");
		t->ops->cell_end(t, 0);
		if (s->has_mde)
			cellf(t, 0, "%.2f %%", s->mde_pct);
		else
			cell_reason(t, 0, s->mde_reason);
		verdict_cells(t, s);
		if (s->mw.valid) {
			fmt_p(p, sizeof(p), s->mw.p);
			cellf(t, 0, "%s", p);
		} else {
			cell_reason(t, 0, s->mw.reason ? s->mw.reason : "no test");
		}
		t->ops->row_end(t);
	}
	t->ops->end(t);
}

void tw_table3(struct tw *t, const struct report_group *g)
{
	static const char *const labels[] = {
		"variant", "HL ratio [CI]", "KS D", "KS p", "outliers IQR/MAD", "failed", NULL,
	};
	char p[48];

	header(t, "lrrrr", labels);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		row(t, s->label);
		if (s->is_baseline || !s->compared) {
			cellf(t, 0, "%s", s->is_baseline ? "baseline" : "-");
			t->ops->empty(t);
			t->ops->empty(t);
		} else {
			t->ops->cell(t, 0);
			if (s->has_hl && s->hl.ci.has_ci)
				fprintf(t->out, "%.4f [%.4f, %.4f]", s->hl.ratio, s->hl.ci.lo,
					s->hl.ci.hi);
			else if (s->has_hl) {
				fprintf(t->out, "%.4f [no CI: ", s->hl.ratio);
				reason(t, s->hl.ci.reason ? s->hl.ci.reason : "no interval");
				fputc(']', t->out);
			} else {
				reason(t, s->hl_reason);
			}
			t->ops->cell_end(t, 0);
			if (s->ks.valid) {
				fmt_p(p, sizeof(p), s->ks.p);
				cellf(t, 0, "%.3f", s->ks.statistic);
				cellf(t, 0, "%s", p);
			} else {
				cellf(t, 0, "-");
				cell_reason(t, 0, s->ks.reason ? s->ks.reason : "no test");
			}
		}
		cellf(t, 0, "%zu/%zu", s->outliers_tukey, s->outliers_mad);
		cellf(t, 0, "%d", s->failed);
		t->ops->row_end(t);
	}
	t->ops->end(t);
}

/* Has g a series whose boots disagree (report_boots_disagree_note())? */
static int boots_disagree(const struct report_model *m, const struct report_group *g)
{
	for (size_t i = 0; i < g->n_series; i++)
		if (report_boots_disagree_note(&g->series[i], m->alpha, NULL, 0))
			return 1;
	return 0;
}

void tw_nested(struct tw *t, const struct report_model *m, const struct report_group *g)
{
	static const char *const labels[] = {
		"variant", "blocks", "runs", "mean of block means [CI]", "sd within",
		"sd between", "between share", "F p", "runs/boot (best)", NULL,
	};
	char a[160], note[512];
	int disagree = 0;

	/* before the table (Markdown would take a line right after it for a
	 * row): the series whose boots disagree, and once what that means */
	for (size_t i = 0; i < g->n_series; i++) {
		if (!report_boots_disagree_note(&g->series[i], m->alpha, note, sizeof(note)))
			continue;
		t->ops->para(t);
		esc(t, note);
		t->ops->para_end(t);
		disagree = 1;
	}
	/* what that means, once a report: at the first table that has such a series */
	for (const struct report_group *e = m->groups; disagree && e < g; e++)
		disagree = !e->nested || !boots_disagree(m, e);
	if (disagree) {
		t->ops->para(t);
		esc(t, report_boots_disagree_advice);
		t->ops->para_end(t);
	}
	/* what the last column says, where there is an answer */
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		if (!s->has_blocks || (!s->rpb.optimal && !s->rpb.no_boot_effect))
			continue;
		report_runs_per_boot_note(s, note, sizeof(note));
		t->ops->para(t);
		esc(t, note);
		t->ops->para_end(t);
	}
	header(t, "rrrrrrrr", labels);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		const struct nested_result *r = &s->nested;
		if (!s->has_blocks)
			continue;
		row(t, s->label);
		cellf(t, 0, "%zu", r->n_groups);
		cellf(t, 0, "%zu", r->n);
		fmt_value_ci(a, sizeof(a), r->mean_of_means, r->mean_ci.has_ci, r->mean_ci.lo,
			     r->mean_ci.hi);
		cellf(t, 0, "%s", a);
		fmt_value(a, sizeof(a), sqrt(r->var_within));
		cellf(t, 0, "%s", a);
		fmt_value(a, sizeof(a), sqrt(r->var_between));
		cellf(t, 0, "%s", a);
		cellf(t, 0, "%.0f %%", 100 * r->icc);
		if (isnan(r->p_value)) {
			cellf(t, 0, "-");
		} else {
			fmt_p(a, sizeof(a), r->p_value);
			cellf(t, r->p_value < m->alpha ? TW_MARK : 0, "%s", a);
		}
		/* runs per boot: used (best), "more" without a boot effect */
		t->ops->cell(t, 0);
		fprintf(t->out, "%.3g (", s->rpb.used);
		if (s->rpb.optimal)
			fprintf(t->out, "%u", s->rpb.optimal);
		else if (s->rpb.no_boot_effect)
			fputs("more", t->out);
		else
			reason(t, s->rpb.reason ? s->rpb.reason : "no optimum");
		fputc(')', t->out);
		t->ops->cell_end(t, 0);
		t->ops->row_end(t);
	}
	t->ops->end(t);
}

void tw_nodes(struct tw *t, const struct report_model *m, const struct report_group *g)
{
	static const char *const labels[] = {
		"variant", "nodes", "boots", "runs", "sd node", "sd boot", "sd within",
		"shares node/boot/within", "mean dilation per node", "spread (sd)", NULL,
	};
	char a[160];

	header(t, "rrrrrrrrr", labels);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		const struct nested3_result *r = &s->nested3;
		struct strbuf sb = STRBUF_INIT;
		if (!s->has_nodes)
			continue;
		row(t, s->label);
		cellf(t, 0, "%zu", r->n_nodes);
		/* one boot per node: no boot level (nested.h) */
		if (isnan(r->var_boot))
			cellf(t, 0, "-");
		else
			cellf(t, 0, "%zu", r->n_boots);
		cellf(t, 0, "%zu", r->n);
		fmt_value(a, sizeof(a), sqrt(r->var_node));
		cellf(t, 0, "%s", a);
		if (isnan(r->var_boot)) {
			cellf(t, 0, "-");
		} else {
			fmt_value(a, sizeof(a), sqrt(r->var_boot));
			cellf(t, 0, "%s", a);
		}
		fmt_value(a, sizeof(a), sqrt(r->var_within));
		cellf(t, 0, "%s", a);
		if (isnan(r->share_boot))
			cellf(t, 0, "%.0f/-/%.0f %%", 100 * r->share_node, 100 * r->share_within);
		else
			cellf(t, 0, "%.0f/%.0f/%.0f %%", 100 * r->share_node, 100 * r->share_boot,
			      100 * r->share_within);
		for (size_t j = 0; s->node_dil_pct && j < m->n_nodes; j++)
			if (!isnan(s->node_dil_pct[j]))
				strbuf_addf(&sb, "%s%s %+.2f %%", sb.len ? ", " : "", m->node_names[j],
					    s->node_dil_pct[j]);
		cellf(t, 0, "%s", sb.len ? sb.buf : s->is_baseline ? "baseline" : "-");
		if (!s->node_dil_pct || isnan(s->node_dil_sd))
			cellf(t, 0, "-");
		else
			cellf(t, 0, "%.2f %% [%+.2f, %+.2f]", s->node_dil_sd, s->node_dil_min,
			      s->node_dil_max);
		strbuf_release(&sb);
		t->ops->row_end(t);
	}
	t->ops->end(t);
}

void tw_virtual(FILE *out, void (*e)(FILE *, const char *), const struct report_model *m,
		const char *dash)
{
	for (size_t i = 0; i < m->n_virtual; i++) {
		fputs(i ? ", " : "", out);
		e(out, m->virtual_variants[i]);
	}
	fputs(dash, out);
	e(out, report_virtual_time_note);
}

void tw_tracer(struct tw *t, const struct report_model *m)
{
	static const char *const labels[] = {
		"workload", "variant", "events/run", "lost runs", "lost/run", "bytes/run", NULL,
	};
	char v[48];

	header(t, "lrrrr", labels);
	for (size_t i = 0; i < m->n_tracer; i++) {
		const struct report_tracer *tr = &m->tracer[i];
		t->ops->row(t);
		cell_esc(t, 0, tr->workload);
		cell_esc(t, TW_TH, tr->variant);
		fmt_count(v, sizeof(v), tr->events_median);
		cellf(t, 0, "%s", v);
		if (tr->lost_n) {
			fmt_count(v, sizeof(v), tr->lost_median);
			cellf(t, tr->lost_runs ? TW_ALERT : 0, "%zu of %zu", tr->lost_runs, tr->lost_n);
			cellf(t, 0, "%s", v);
		} else {
			cellf(t, 0, "-");
			cellf(t, 0, "-");
		}
		fmt_count(v, sizeof(v), tr->bytes_median);
		cellf(t, 0, "%s", v);
		t->ops->row_end(t);
	}
	t->ops->end(t);
}

void tw_markers(struct tw *t, const struct report_model *m)
{
	static const char *const labels[] = {
		"workload", "metric", "variant", "cost/op", "added/op", "[CI] of added/op", NULL,
	};
	header(t, "llrrl", labels);
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		if (!g->micro)
			continue;
		for (size_t i = 0; i < g->n_series; i++) {
			const struct report_series *s = &g->series[i];
			const struct report_dilation *d = report_stat_dilation(m, s);
			t->ops->row(t);
			cell_esc(t, 0, g->workload);
			cell_esc(t, 0, g->metric);
			cell_esc(t, TW_TH, s->label);
			if (s->n)
				cellf(t, 0, "%.2f", report_stat_value(m, s));
			else
				cellf(t, 0, "-");
			if (s->is_baseline || !d) {
				cellf(t, 0, "%s", s->is_baseline ? "baseline" : "-");
				t->ops->empty(t);
			} else {
				/* ci() prints "%+.2f" bounds (fmt_pct): here in the metric's unit */
				cellf(t, 0, "%+.2f", d->d.abs);
				t->ops->cell(t, 0);
				t->ops->ci(t, &d->d.ci_abs, "");
				t->ops->cell_end(t, 0);
			}
			t->ops->row_end(t);
		}
	}
	t->ops->end(t);
}

/* ---- the overhead curve ---- */

void tw_curve_title(FILE *out, void (*e)(FILE *, const char *), const struct report_model *m,
		    const struct report_curve *c)
{
	char stat[32];

	report_stat_name(m, stat, sizeof(stat));
	fprintf(out, "%s ", stat);
	e(out, c->metric);
	fputs(" dilation of ", out);
	e(out, c->of_variant ? c->base : c->variant);
	fputs(" on ", out);
	e(out, c->of_variant ? c->workload : c->base);
	fputs(" against ", out);
	e(out, c->param);
	if (c->is_list)
		fputs(" (number of items)", out);
	if (*c->fixed) {
		fputs(", ", out);
		e(out, c->fixed);
	}
}

void tw_curve(struct tw *t, const struct report_model *m, const struct report_curve *c)
{
	char stat[32], v[48], lvl[16];

	report_stat_name(m, stat, sizeof(stat));
	fmt_level(lvl, sizeof(lvl), m->confidence);
	begin(t);
	head(t, 0, c->param);
	if (c->is_list)
		head(t, 1, "items");
	head(t, 0, c->of_variant ? "variant" : "workload");
	head(t, 1, NULL);
	fputs(stat, t->out);
	if (*c->unit) {
		fputs(" (", t->out);
		esc(t, c->unit);
		fputs(")", t->out);
	}
	t->ops->head_end(t);
	head(t, 1, "dilation");
	head(t, 0, NULL);
	fprintf(t->out, "%s %% CI", lvl);
	t->ops->head_end(t);
	head(t, 0, "sig");
	t->ops->body(t);
	for (size_t i = 0; i < c->n; i++) {
		const struct report_curve_point *p = &c->pts[i];
		row(t, p->label);
		if (c->is_list)
			cellf(t, 0, "%.0f", p->x);
		cell_esc(t, 0, c->of_variant ? p->variant : p->workload);
		fmt_value(v, sizeof(v), p->value);
		cellf(t, 0, "%s", v);
		if (!p->ok) {
			cellf(t, 0, "-");
			cell_reason(t, 0, p->reason);
			t->ops->empty(t);
			t->ops->row_end(t);
			continue;
		}
		fmt_pct(v, sizeof(v), p->pct);
		cellf(t, p->significant ? TW_MARK : 0, "%s %%", v);
		t->ops->cell(t, TW_CI);
		t->ops->ci(t, &p->ci, "");
		t->ops->cell_end(t, TW_CI);
		if (p->significant)
			cellf(t, TW_MARK, "*");
		else
			t->ops->empty(t);
		t->ops->row_end(t);
	}
	t->ops->end(t);
}

/* ---- cost per event and overhead compensation (reports/calib.h) ---- */

/* "v [lo, hi]" of a value in ns shown in ms (times), or its interval's
 * reason. */
static void cell_ms_ci(struct tw *t, double v, const struct interval *iv, int sign)
{
	char a[48], lo[48], hi[48];

	fmt_like(a, sizeof(a), v / 1e6, v / 1e6, sign);
	t->ops->cell(t, 0);
	fprintf(t->out, "%s ms", a);
	if (iv->has_ci) {
		fmt_like(lo, sizeof(lo), iv->lo / 1e6, v / 1e6, sign);
		fmt_like(hi, sizeof(hi), iv->hi / 1e6, v / 1e6, sign);
		fprintf(t->out, "%s[%s, %s]", t->ops->br, lo, hi);
	}
	t->ops->cell_end(t, 0);
}

void tw_calib(struct tw *t, const struct report_model *m)
{
	static const char *const labels[] = {
		"tracer", "attach", "variant", "calibration", "hits", "events/hit", "ns/event",
		"[CI] of ns/event", "published ns/event", NULL,
	};
	char v[48], lo[48], hi[48];

	header(t, "lllrrrlr", labels);
	for (size_t i = 0; i < m->n_calib; i++) {
		const struct report_calib *r = &m->calib[i];
		row(t, r->tracer);
		cell_esc(t, 0, r->attach);
		cell_esc(t, 0, r->variant);
		if (r->workload) {
			t->ops->cell(t, 0);
			esc(t, r->workload);
			fputs(" (", t->out);
			esc(t, r->metric);
			fputs(")", t->out);
			t->ops->cell_end(t, 0);
			fmt_count(v, sizeof(v), r->hits);
			cellf(t, 0, "%s/%s", v, r->hits_per_run ? "run" : "op");
			if (isnan(r->events_per_hit)) {
				cellf(t, 0, "%s", r->eph_reason ? "not measured: taken as 1" : "-");
			} else {
				fmt_value(v, sizeof(v), r->events_per_hit);
				cellf(t, 0, "%s", v);
			}
		} else {
			cellf(t, 0, "-");
			cellf(t, 0, "-");
			cellf(t, 0, "-");
		}
		if (!r->ok) {
			cellf(t, 0, "-");
			cell_reason(t, 0, r->reason);
		} else {
			fmt_cost(v, sizeof(v), r->cost_ns, r->cost_ns);
			cellf(t, 0, "%s", v);
			if (r->ci.has_ci) {
				fmt_cost(lo, sizeof(lo), r->ci.lo, r->cost_ns);
				fmt_cost(hi, sizeof(hi), r->ci.hi, r->cost_ns);
				cellf(t, TW_CI, "[%s, %s]%s", lo, hi, r->paired ? " paired" : "");
			} else {
				cell_reason(t, 0, r->ci.reason);
			}
		}
		if (r->published) {
			double ns = report_published_ns(r->published);
			fmt_cost(v, sizeof(v), ns, ns);
			t->ops->cell(t, 0);
			fprintf(t->out, "%s (", isnan(ns) ? "not given" : v + (v[0] == '+'));
			esc(t, r->published->source);
			fputs(")", t->out);
			t->ops->cell_end(t, 0);
		} else {
			cellf(t, 0, "not given");
		}
		t->ops->row_end(t);
	}
	t->ops->end(t);
}

void tw_comp(struct tw *t, const struct report_model *m)
{
	static const char *const labels[] = {
		"workload", "variant", "events/run", "measured dilation", "predicted",
		"explained", "compensated", "baseline", NULL,
	};
	char v[48], lo[48], hi[48];

	header(t, "lrllllr", labels);
	for (size_t i = 0; i < m->n_comp; i++) {
		const struct report_comp *r = &m->comp[i];
		row(t, r->workload);
		cell_esc(t, 0, r->variant);
		fmt_count(v, sizeof(v), r->events_mean);
		cellf(t, 0, "%s", v);
		if (!r->ok) {
			cell_reason(t, 0, r->reason);
			for (int k = 0; k < 4; k++)
				t->ops->empty(t);
			t->ops->row_end(t);
			continue;
		}
		cell_ms_ci(t, r->measured_ns, &r->measured_ci, 1);
		cell_ms_ci(t, r->predicted_ns, &r->predicted_ci, 1);
		fmt_like(v, sizeof(v), r->share_pct, r->share_pct, 0);
		t->ops->cell(t, 0);
		fprintf(t->out, "%s %%", v);
		if (r->share_ci.has_ci) {
			fmt_like(lo, sizeof(lo), r->share_ci.lo, r->share_pct, 0);
			fmt_like(hi, sizeof(hi), r->share_ci.hi, r->share_pct, 0);
			fprintf(t->out, "%s[%s, %s]", t->ops->br, lo, hi);
		}
		t->ops->cell_end(t, 0);
		cell_ms_ci(t, r->compensated_ns, &r->compensated_ci, 0);
		fmt_like(v, sizeof(v), r->base_ns / 1e6, r->base_ns / 1e6, 0);
		cellf(t, r->compensated_ci.has_ci && !r->fits ? TW_ALERT : 0, "%s ms%s", v,
		      r->compensated_ci.has_ci && !r->fits ? " (outside)" : "");
		t->ops->row_end(t);
	}
	t->ops->end(t);
}

/* ---- the answer, and the metrics that are not a workload's answer ---- */

/* "+12.3" of a % dilation: one decimal, the answer's cells are narrow. */
static void pct1(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f", fabs(v) < 0.05 ? 0.0 : v);
}

/* The primary group of each workload, in report order (at most max). */
static size_t answer_cols(const struct report_model *m, const struct report_group **cols,
			  size_t max)
{
	size_t nc = 0;

	for (size_t gi = 0; gi < m->n_groups && nc < max; gi++)
		if (m->groups[gi].primary)
			cols[nc++] = &m->groups[gi];
	return nc;
}

size_t tw_answer_rows(const struct report_model *m, size_t *n_cols)
{
	const struct report_group *cols[64];
	size_t nc = answer_cols(m, cols, ARRAY_SIZE(cols));

	*n_cols = nc;
	return nc ? cols[0]->n_series : 0;
}

void tw_answer(struct tw *t, const struct report_model *m)
{
	const struct report_group *cols[64];
	size_t nc = answer_cols(m, cols, ARRAY_SIZE(cols)), rows;
	char v[96], lo[48], hi[48];

	if (!nc)
		return;
	rows = cols[0]->n_series;
	if (t->max_rows && t->max_rows < rows)
		rows = t->max_rows;
	if (t->max_cols && t->max_cols < nc)
		nc = t->max_cols;
	begin(t);
	head(t, 0, "variant");
	for (size_t c = 0; c < nc; c++) {
		head(t, 1, NULL);
		esc(t, cols[c]->workload);
		fputs(t->ops->br, t->out);
		esc(t, cols[c]->metric);
		t->ops->head_end(t);
	}
	t->ops->body(t);
	for (size_t i = 0; i < rows; i++) {
		row(t, cols[0]->series[i].label);
		for (size_t c = 0; c < nc; c++) {
			const struct report_series *s = i < cols[c]->n_series ? &cols[c]->series[i] : NULL;
			const struct report_dilation *d = s ? report_stat_dilation(m, s) : NULL;
			if (!s || !s->n) {
				cellf(t, 0, "no run");
				continue;
			}
			if (s->is_baseline) {
				fmt_value(v, sizeof(v), report_stat_value(m, s));
				t->ops->cell(t, 0);
				fputs(v, t->out);
				t->ops->unit(t, cols[c]->unit);
				t->ops->cell_end(t, 0);
				continue;
			}
			if (!s->compared || !d || !d->ok) {
				cell_reason(t, 0, !s->compared ? s->no_compare_reason :
					    d && d->reason ? d->reason : "no dilation");
				continue;
			}
			t->ops->cell(t, s->significant ? TW_MARK : 0);
			if (d->no_pct) {	/* the baseline's interval holds 0 */
				dil_text(v, sizeof(v), d, cols[c]->unit);
				fprintf(t->out, "%s ", v);
				dil_ci(t, d, cols[c]->unit, "");
				fputs(s->significant ? " *" : "", t->out);
				t->ops->cell_end(t, s->significant ? TW_MARK : 0);
				continue;
			}
			pct1(v, sizeof(v), d->d.pct);
			fprintf(t->out, "%s %%", v);
			/* the interval that decides the star: the verdict's, at its
			 * Holm level (the 95 % one only when nothing was judged) */
			if (s->verdict.tested && s->verdict.ci.has_ci) {
				pct1(lo, sizeof(lo), s->verdict.ci.lo);
				pct1(hi, sizeof(hi), s->verdict.ci.hi);
				fprintf(t->out, " [%s, %s]", lo, hi);
			} else if (d->d.ci_pct.has_ci) {
				pct1(lo, sizeof(lo), d->d.ci_pct.lo);
				pct1(hi, sizeof(hi), d->d.ci_pct.hi);
				fprintf(t->out, " [%s, %s]", lo, hi);
			} else {	/* why there is none */
				fputs(" [", t->out);
				reason(t, d->d.ci_pct.reason ? d->d.ci_pct.reason : "no interval");
				fputc(']', t->out);
			}
			fputs(s->significant ? " *" : "", t->out);
			t->ops->cell_end(t, s->significant ? TW_MARK : 0);
		}
		t->ops->row_end(t);
	}
	t->ops->end(t);
}

void tw_other(struct tw *t, const struct report_model *m)
{
	const struct report_group *first = NULL;
	char v[48], p[96];

	for (size_t gi = 0; gi < m->n_groups && !first; gi++)
		if (!m->groups[gi].primary)
			first = &m->groups[gi];
	if (!first)
		return;
	begin(t);
	head(t, 0, "metric");
	for (size_t i = 0; i < first->n_series; i++)
		head(t, 1, first->series[i].label);
	t->ops->body(t);
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		if (g->primary)
			continue;
		t->ops->row(t);
		t->ops->cell(t, TW_TH);
		tw_title(t->out, t->ops->esc, g);
		t->ops->cell_end(t, TW_TH);
		for (size_t i = 0; i < first->n_series; i++) {
			const struct report_series *s = i < g->n_series ? &g->series[i] : NULL;
			const struct report_dilation *d = s ? report_stat_dilation(m, s) : NULL;
			if (!s || !s->n) {
				cellf(t, 0, "-");
				continue;
			}
			fmt_value(v, sizeof(v), report_stat_value(m, s));
			t->ops->cell(t, s->significant ? TW_MARK : 0);
			fputs(v, t->out);
			if (d && d->ok && (d->no_pct || !isnan(d->d.pct))) {
				dil_text(p, sizeof(p), d, g->unit);
				fprintf(t->out, " (%s%s)", p, s->significant ? " *" : "");
			}
			t->ops->cell_end(t, s->significant ? TW_MARK : 0);
		}
		t->ops->row_end(t);
	}
	t->ops->end(t);
}
