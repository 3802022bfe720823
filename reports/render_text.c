/*
 * render_text.c - the terminal report, at most 100 columns wide.
 *
 * For each workload and metric:
 *   1. dilation at percentiles (KTAU Table 1): a row per variant, a column
 *      per percentile; the baseline in absolute units, the others as
 *      "+0.38 s (+0.58 %)" with the CI of the % dilation on a second line;
 *   2. moments (KTAU Table 2): n, mean, variance, sd, % mean dilation with
 *      CI, Holm-adjusted Mann-Whitney p-value and significance mark;
 *   3. shift and shape: Hodges-Lehmann ratio with CI, KS D and p, outliers
 *      (labelled, not dropped) and failed runs.
 * Then the configurations table (LTT: one line per variant, the chosen
 * statistic and % difference, a column per workload), the tracer
 * accounting table (kernel variants: events, lost events and bytes per run,
 * cost per traced event with its CI; a warning when runs lost events), the
 * Markers table for per-operation metrics, and notes saying what every
 * interval and mark is.
 * Tables wider than 100 columns are split by columns, the variant column
 * repeated.  Colour (significance marks) only when report_opts.color.
 */
#include "report.h"
#include "fmt.h"
#include "lib/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 100
#define GAP 2

/* ---- notes: distinct footnote texts, numbered in order of use ---- */

struct notes {
	char **text;
	size_t n, alloc;
};

static size_t note_add(struct notes *ns, const char *text)
{
	for (size_t i = 0; i < ns->n; i++)
		if (!strcmp(ns->text[i], text))
			return i + 1;
	ALLOC_GROW(ns->text, ns->n + 1, ns->alloc);
	ns->text[ns->n] = xstrdup(text);
	return ++ns->n;
}

static void notes_release(struct notes *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->text[i]);
	free(ns->text);
}

/* ---- a table of strings, printed aligned and split to fit WIDTH ---- */

enum cell_color { C_NONE, C_SIG, C_DIM };

struct cell {
	char *s;
	enum cell_color color;
};

struct ttable {
	size_t ncols, nrows, alloc;
	struct cell *cells;	/* row-major */
	unsigned char right[REPORT_MAX_PERCENTILES + 16];	/* right-aligned column */
};

static void tt_init(struct ttable *t, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
}

/* Start a row; returns its first cell. */
static struct cell *tt_row(struct ttable *t)
{
	size_t need = (t->nrows + 1) * t->ncols;
	ALLOC_GROW(t->cells, need, t->alloc);
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(struct cell));
	return &t->cells[t->nrows++ * t->ncols];
}

PRINTF(3, 4)
static void tt_set(struct cell *row, size_t col, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(row[col].s);
	row[col].s = strbuf_detach(&sb);
}

/* Start t with its header row: labels (NULL-terminated) give the columns;
 * right[c - 1] == 'r' right-aligns column c (column 0 is left-aligned). */
static void tt_header(struct ttable *t, const char *right, const char *const *labels)
{
	struct cell *row;
	size_t n = 0;

	while (labels[n])
		n++;
	tt_init(t, n);
	for (size_t c = 1; c < n; c++)
		t->right[c] = right[c - 1] == 'r';
	row = tt_row(t);
	for (size_t c = 0; c < n; c++)
		tt_set(row, c, "%s", labels[c]);
}

static void tt_release(struct ttable *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i].s);
	free(t->cells);
}

static const char *cs(const struct cell *c)
{
	return c->s ? c->s : "";
}

/* Print columns [c0, c1) plus column 0; rows[0] is the header. */
static void tt_print_cols(const struct ttable *t, FILE *out, const size_t *w,
			  size_t c0, size_t c1, int color)
{
	for (size_t r = 0; r < t->nrows; r++) {
		const struct cell *row = &t->cells[r * t->ncols];
		struct strbuf line = STRBUF_INIT;
		for (size_t c = 0; c < c1; c++) {
			if (c && c < c0)
				continue;
			const struct cell *x = &row[c];
			const char *on = "", *off = "";
			int len = (int)strlen(cs(x)), pad;
			if (len > (int)w[c])
				len = (int)w[c];	/* only column 0 is capped */
			pad = (int)w[c] - len;
			if (color && x->color == C_SIG) {
				on = "\033[1;31m";
				off = "\033[0m";
			} else if (color && x->color == C_DIM) {
				on = "\033[2m";
				off = "\033[0m";
			}
			if (c)
				strbuf_addf(&line, "%*s", GAP, "");
			if (t->right[c])
				strbuf_addf(&line, "%*s%s%.*s%s", pad, "", on, len, cs(x), off);
			else
				strbuf_addf(&line, "%s%.*s%s%*s", on, len, cs(x), off, pad, "");
		}
		/* no trailing blanks */
		while (line.len && line.buf[line.len - 1] == ' ')
			line.buf[--line.len] = '\0';
		fprintf(out, "  %s\n", line.buf ? line.buf : "");
		strbuf_release(&line);
	}
}

static void tt_print(const struct ttable *t, FILE *out, int color)
{
	size_t w[REPORT_MAX_PERCENTILES + 16] = { 0 };
	size_t c0 = 1;

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t l = strlen(cs(&t->cells[r * t->ncols + c]));
			if (l > w[c])
				w[c] = l;
		}
	if (w[0] > 40)
		w[0] = 40;
	while (c0 < t->ncols || t->ncols == 1) {
		size_t used = 2 + w[0], c1 = c0;
		while (c1 < t->ncols && (c1 == c0 || used + GAP + w[c1] <= WIDTH))
			used += GAP + w[c1++];
		if (c0 > 1)
			fputc('\n', out);
		tt_print_cols(t, out, w, c0, c1, color);
		if (t->ncols == 1)
			break;
		c0 = c1;
	}
}

/* ---- cells ---- */

/* "[+0.21, +0.55] %" or "[no CI: note 2]"; tag marks the method. */
static void ci_text(char *buf, size_t len, const struct interval *iv, struct notes *ns,
		    const char *unit, const char *tag)
{
	char lo[32], hi[32];
	if (!iv->has_ci) {
		snprintf(buf, len, "[no CI: note %zu]",
			 note_add(ns, iv->reason ? iv->reason : "no interval"));
		return;
	}
	fmt_pct(lo, sizeof(lo), iv->lo);
	fmt_pct(hi, sizeof(hi), iv->hi);
	snprintf(buf, len, "[%s, %s]%s%s%s", lo, hi, unit, *tag ? " " : "", tag);
}

/* The tag of an interval's method when the report mixes methods. */
struct tags {
	const char *methods[8];
	size_t n;
};

static const char *tag_of(const struct tags *tg, const struct interval *iv)
{
	static const char *const letters[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	if (tg->n < 2 || !iv->has_ci || !iv->method)
		return "";
	for (size_t i = 0; i < tg->n; i++)
		if (!strcmp(tg->methods[i], iv->method))
			return letters[i];
	return "";
}

static const char *unit_sp(const char *unit)
{
	return *unit ? " " : "";
}

static void wrapped(FILE *out, const char *first, const char *text);
PRINTF(3, 4)
static void wrappedf(FILE *out, const char *first, const char *fmt, ...);

/* ---- per group ---- */

static void table1(const struct report_model *m, const struct report_group *g, FILE *out,
		   struct notes *ns, const struct tags *tg, int with_unit)
{
	struct ttable t;
	struct cell *row;
	const char *u = with_unit ? g->unit : "";

	tt_init(&t, 1 + m->n_percentiles);
	row = tt_row(&t);
	tt_set(row, 0, "variant");
	for (size_t k = 0; k < m->n_percentiles; k++) {
		char l[32];
		report_pct_label(l, sizeof(l), m->percentiles[k]);
		tt_set(row, 1 + k, "%s", l);
	}
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		row = tt_row(&t);
		tt_set(row, 0, "%s", s->label);
		if (s->is_baseline || !s->compared) {
			for (size_t k = 0; k < m->n_percentiles; k++) {
				char v[48];
				fmt_value(v, sizeof(v), s->pct[k]);
				if (s->n)
					tt_set(row, 1 + k, "%s%s%s", v, unit_sp(u), u);
				else
					tt_set(row, 1 + k, "no run");
			}
			if (!s->is_baseline && s->n) {
				row = tt_row(&t);
				tt_set(row, 1, "[not compared: note %zu]",
				       note_add(ns, s->no_compare_reason));
			}
			continue;
		}
		struct cell *row2 = tt_row(&t);
		row = row2 - t.ncols;
		for (size_t k = 0; k < m->n_percentiles; k++) {
			const struct report_dilation *d = &s->pct_dil[k];
			char a[48], p[48], ci[96];
			if (!d->ok) {
				tt_set(row, 1 + k, "-");
				continue;
			}
			fmt_like(a, sizeof(a), d->d.abs, d->d.base, 1);
			fmt_pct(p, sizeof(p), d->d.pct);
			if (isnan(d->d.pct))
				tt_set(row, 1 + k, "%s%s%s (- %%)", a, unit_sp(u), u);
			else
				tt_set(row, 1 + k, "%s%s%s (%s %%)", a, unit_sp(u), u, p);
			ci_text(ci, sizeof(ci), &d->d.ci_pct, ns, " %", tag_of(tg, &d->d.ci_pct));
			tt_set(row2, 1 + k, "%s", ci);
			row2[1 + k].color = C_DIM;
		}
	}
	tt_print(&t, out, m->opts->color);
	tt_release(&t);
}

static size_t table_width(const struct report_model *m, const struct report_group *g,
			  struct notes *ns, const struct tags *tg)
{
	/* A dry run of table 1's widest line: the sum of its column widths. */
	size_t total = 2;
	for (size_t k = 0; k <= m->n_percentiles; k++) {
		size_t w = k ? strlen("p99.9") : strlen("variant");
		for (size_t i = 0; i < g->n_series; i++) {
			const struct report_series *s = &g->series[i];
			char a[48], p[48], ci[96], cell[200];
			size_t l;
			if (!k) {
				l = strlen(s->label);
				l = l > 40 ? 40 : l;
			} else if (s->is_baseline || !s->compared) {
				fmt_value(a, sizeof(a), s->pct[k - 1]);
				l = strlen(a) + 1 + strlen(g->unit);
			} else if (s->pct_dil[k - 1].ok) {
				const struct report_dilation *d = &s->pct_dil[k - 1];
				fmt_like(a, sizeof(a), d->d.abs, d->d.base, 1);
				fmt_pct(p, sizeof(p), d->d.pct);
				snprintf(cell, sizeof(cell), "%s %s (%s %%)", a, g->unit, p);
				l = strlen(cell);
				ci_text(ci, sizeof(ci), &d->d.ci_pct, ns, " %", tag_of(tg, &d->d.ci_pct));
				if (strlen(ci) > l)
					l = strlen(ci);
			} else {
				l = 1;
			}
			if (l > w)
				w = l;
		}
		total += w + (k ? GAP : 0);
	}
	return total;
}

static void table2(const struct report_model *m, const struct report_group *g, FILE *out,
		   struct notes *ns, const struct tags *tg)
{
	struct ttable t;
	struct cell *row;

	static const char *const labels[] = {
		"variant", "n", "mean", "variance", "sd", "mean dilation [CI]", "detectable",
		"p (Holm)", "sig", NULL,
	};

	tt_header(&t, "rrrrlrrl", labels);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		char mean[48], var[48], sd[48], p[48], ci[96];
		row = tt_row(&t);
		tt_set(row, 0, "%s", s->label);
		tt_set(row, 1, "%zu", s->n);
		if (!s->has_summary) {
			tt_set(row, 2, "-");
			continue;
		}
		fmt_value(mean, sizeof(mean), s->sum.mean);
		fmt_value(var, sizeof(var), s->sum.var);
		fmt_value(sd, sizeof(sd), s->sum.sd);
		tt_set(row, 2, "%s", mean);
		tt_set(row, 3, "%s", var);
		tt_set(row, 4, "%s", sd);
		if (s->is_baseline) {
			tt_set(row, 5, "baseline");
			continue;
		}
		if (!s->compared || !s->mean_dil.ok) {
			tt_set(row, 5, "-");
			continue;
		}
		fmt_pct(p, sizeof(p), s->mean_dil.d.pct);
		ci_text(ci, sizeof(ci), &s->mean_dil.d.ci_pct, ns, "",
			tag_of(tg, &s->mean_dil.d.ci_pct));
		tt_set(row, 5, "%s %% %s", p, ci);
		if (s->has_mde) {
			tt_set(row, 6, "%.2f %%", s->mde_pct);
		} else {
			tt_set(row, 6, "note %zu", note_add(ns, s->mde_reason));
		}
		if (s->mw.valid) {
			fmt_p(p, sizeof(p), s->p_holm);
			tt_set(row, 7, "%s", p);
			tt_set(row, 8, "%s", s->significant ? "*" : "");
			row[8].color = C_SIG;
		} else {
			tt_set(row, 7, "note %zu", note_add(ns, s->mw.reason ? s->mw.reason :
							   "no test"));
		}
	}
	tt_print(&t, out, m->opts->color);
	tt_release(&t);
}

/* Runs nested in blocks (boots): the variance split (report.h). */
static void table4(const struct report_model *m, const struct report_group *g, FILE *out)
{
	struct ttable t;
	struct cell *row;
	char lvl[16];

	static const char *const labels[] = {
		"variant", "blocks", "runs", "mean of block means [CI]", "sd within",
		"sd between", "between share", "F p", NULL,
	};

	fmt_level(lvl, sizeof(lvl), m->confidence);
	fputc('\n', out);
	wrappedf(out, " ", "Runs nested in blocks (a block: one boot of a boot: variant); "
		 "variance split by one-way random-effects ANOVA (Kalibera & Jones 2013); "
		 "[CI]: %s %% Student t interval over the block means; F p: is there a block "
		 "effect?", lvl);
	tt_init(&t, 8);
	tt_header(&t, "rrrrrrr", labels);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		const struct nested_result *r = &s->nested;
		char a[160], b[48], c[48];
		if (!s->has_blocks)
			continue;
		row = tt_row(&t);
		tt_set(row, 0, "%s", s->label);
		tt_set(row, 1, "%zu", r->n_groups);
		tt_set(row, 2, "%zu", r->n);
		fmt_value_ci(a, sizeof(a), r->mean_of_means, r->mean_ci.has_ci, r->mean_ci.lo,
			     r->mean_ci.hi);
		tt_set(row, 3, "%s", a);
		fmt_value(b, sizeof(b), sqrt(r->var_within));
		fmt_value(c, sizeof(c), sqrt(r->var_between));
		tt_set(row, 4, "%s", b);
		tt_set(row, 5, "%s", c);
		tt_set(row, 6, "%.0f %%", 100 * r->icc);
		if (isnan(r->p_value)) {
			tt_set(row, 7, "-");
		} else {
			fmt_p(a, sizeof(a), r->p_value);
			tt_set(row, 7, "%s", a);
		}
	}
	tt_print(&t, out, m->opts->color);
	tt_release(&t);
}

static void table3(const struct report_model *m, const struct report_group *g, FILE *out,
		   struct notes *ns)
{
	struct ttable t;
	struct cell *row;

	static const char *const labels[] = {
		"variant", "HL ratio [CI]", "KS D", "KS p", "outliers T/M", "failed", NULL,
	};

	tt_header(&t, "lrrrr", labels);
	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		char a[48], b[48];
		row = tt_row(&t);
		tt_set(row, 0, "%s", s->label);
		tt_set(row, 4, "%zu/%zu", s->outliers_tukey, s->outliers_mad);
		tt_set(row, 5, "%d", s->failed);
		if (s->is_baseline) {
			tt_set(row, 1, "baseline");
			continue;
		}
		if (!s->compared) {
			tt_set(row, 1, "-");
			continue;
		}
		if (s->has_hl && s->hl.ci.has_ci)
			tt_set(row, 1, "%.4f [%.4f, %.4f]", s->hl.ratio, s->hl.ci.lo, s->hl.ci.hi);
		else if (s->has_hl)
			tt_set(row, 1, "%.4f [no CI: note %zu]", s->hl.ratio,
			       note_add(ns, s->hl.ci.reason ? s->hl.ci.reason : "no interval"));
		else
			tt_set(row, 1, "note %zu", note_add(ns, s->hl_reason));
		if (s->ks.valid) {
			snprintf(a, sizeof(a), "%.3f", s->ks.statistic);
			fmt_p(b, sizeof(b), s->ks.p);
			tt_set(row, 2, "%s", a);
			tt_set(row, 3, "%s", b);
		} else {
			tt_set(row, 2, "-");
			tt_set(row, 3, "note %zu", note_add(ns, s->ks.reason ? s->ks.reason :
							   "no test"));
		}
	}
	tt_print(&t, out, m->opts->color);
	tt_release(&t);
}

static void group(const struct report_model *m, const struct report_group *g, FILE *out,
		  struct notes *ns, const struct tags *tg)
{
	char lvl[16];

	fmt_level(lvl, sizeof(lvl), m->confidence);
	fprintf(out, "\n%s: %s%s%s%s\n", g->workload, g->metric,
		*g->unit ? " (" : "", g->unit, *g->unit ? ")" : "");
	fprintf(out, "\n Dilation at percentiles vs %s (KTAU Table 1); [lo, hi]: %s %% CI of the "
		"%% dilation\n", m->baseline, lvl);
	table1(m, g, out, ns, tg, table_width(m, g, ns, tg) <= WIDTH);
	fprintf(out, "\n Moments (KTAU Table 2); variance: sample (n - 1); "
		"mean dilation in %% with %s %% CI\n", lvl);
	fprintf(out, " detectable: the smallest mean dilation these runs could detect "
		"(power %.0f %%, alpha %g)\n", 100 * REPORT_MDE_POWER, m->alpha);
	table2(m, g, out, ns, tg);
	fprintf(out, "\n Shift and shape; HL: Hodges-Lehmann ratio variant/%s with %s %% CI; "
		"KS: Kolmogorov-Smirnov\n", m->baseline, lvl);
	table3(m, g, out, ns);
	if (g->nested)
		table4(m, g, out);
}

/* ---- across groups ---- */

/* The group of workload w that the configurations table shows: the chosen
 * metric, else the workload's first. */
static const struct report_group *config_group(const struct report_model *m, const char *w)
{
	const struct report_group *first = NULL;
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		if (g->workload != w)
			continue;
		if (!strcmp(g->metric, m->config_metric))
			return g;
		if (!first)
			first = g;
	}
	return first;
}

static void configurations(const struct report_model *m, FILE *out)
{
	const struct report_group *cols[64];
	size_t nc = 0;
	struct ttable t;
	struct cell *row;
	char stat[32];

	for (size_t gi = 0; gi < m->n_groups && nc < ARRAY_SIZE(cols); gi++) {
		const struct report_group *g = config_group(m, m->groups[gi].workload);
		int seen = 0;
		for (size_t c = 0; c < nc; c++)
			seen |= cols[c] == g;
		if (!seen)
			cols[nc++] = g;
	}
	if (!nc)
		return;
	report_stat_name(m, stat, sizeof(stat));
	fprintf(out, "\nConfigurations (LTT): the %s of each workload's %s (else its first metric) "
		"and\n its %% difference from %s\n", stat, m->config_metric, m->baseline);
	tt_init(&t, 1 + (nc > REPORT_MAX_PERCENTILES + 15 ? REPORT_MAX_PERCENTILES + 15 : nc));
	nc = t.ncols - 1;
	row = tt_row(&t);
	tt_set(row, 0, "configuration");
	for (size_t c = 0; c < nc; c++) {
		t.right[1 + c] = 1;
		tt_set(row, 1 + c, "%s %s%s%s%s", cols[c]->workload, cols[c]->metric,
		       *cols[c]->unit ? " (" : "", cols[c]->unit, *cols[c]->unit ? ")" : "");
	}
	for (size_t i = 0; i < cols[0]->n_series; i++) {
		row = tt_row(&t);
		tt_set(row, 0, "%s", cols[0]->series[i].variant);
		for (size_t c = 0; c < nc; c++) {
			const struct report_series *s = &cols[c]->series[i];
			const struct report_dilation *d = report_stat_dilation(m, s);
			char v[48], p[48];
			fmt_value(v, sizeof(v), report_stat_value(m, s));
			if (s->is_baseline)
				tt_set(row, 1 + c, "%s", v);
			else if (d && !isnan(d->d.pct)) {
				fmt_pct(p, sizeof(p), d->d.pct);
				tt_set(row, 1 + c, "%s (%s %%)", v, p);
			} else
				tt_set(row, 1 + c, "%s", v);
		}
	}
	tt_print(&t, out, m->opts->color);
	tt_release(&t);
}

/* Tracer accounting: a row per workload and variant with trace_events. */
static void tracer_table(const struct report_model *m, FILE *out, struct notes *ns)
{
	struct ttable t;
	struct cell *row;
	const char *prev = NULL;
	char lvl[16];
	static const char *const labels[] = {
		"workload", "variant", "events", "lost runs", "lost", "bytes", "ns/event", "[CI]", NULL,
	};

	if (!m->n_tracer)
		return;
	fmt_level(lvl, sizeof(lvl), m->confidence);
	wrappedf(out, "\n", "Tracer accounting: the tracer's own counts, medians per run; "
		 "ns/event: cost per traced event = mean wall dilation / mean events per run, "
		 "with its %s %% CI", lvl);
	tt_header(&t, "lrrrrrl", labels);
	for (size_t i = 0; i < m->n_tracer; i++) {
		const struct report_tracer *tr = &m->tracer[i];
		char v[48], lo[48], hi[48];

		row = tt_row(&t);
		tt_set(row, 0, "%s", tr->workload == prev ? "" : tr->workload);
		prev = tr->workload;
		tt_set(row, 1, "%s", tr->variant);
		fmt_count(v, sizeof(v), tr->events_median);
		tt_set(row, 2, "%s", v);
		if (tr->lost_n) {
			tt_set(row, 3, "%zu of %zu%s", tr->lost_runs, tr->lost_n,
			       tr->lost_runs ? " !" : "");
			if (tr->lost_runs)
				row[3].color = C_SIG;
			fmt_count(v, sizeof(v), tr->lost_median);
			tt_set(row, 4, "%s", v);
		} else {
			tt_set(row, 3, "-");
			tt_set(row, 4, "-");
		}
		fmt_count(v, sizeof(v), tr->bytes_median);
		tt_set(row, 5, "%s", v);
		if (tr->is_baseline) {
			tt_set(row, 6, "baseline");
			continue;
		}
		if (!tr->has_cost) {
			tt_set(row, 6, "-");
			tt_set(row, 7, "note %zu", note_add(ns, tr->no_cost_reason));
			continue;
		}
		fmt_cost(v, sizeof(v), tr->cost_ns, tr->cost_ns);
		tt_set(row, 6, "%s", v);
		if (tr->cost_ci.has_ci) {
			fmt_cost(lo, sizeof(lo), tr->cost_ci.lo, tr->cost_ns);
			fmt_cost(hi, sizeof(hi), tr->cost_ci.hi, tr->cost_ns);
			tt_set(row, 7, "[%s, %s]", lo, hi);
		} else {
			tt_set(row, 7, "[no CI: note %zu]", note_add(ns, tr->cost_ci.reason));
		}
	}
	tt_print(&t, out, m->opts->color);
	tt_release(&t);
	if (m->n_tracer_lossy)
		fprintf(out, "\n ! runs that lost events: the tracer could not keep up; their dilation "
			"understates a lossless trace\n");
}

static void markers(const struct report_model *m, FILE *out, struct notes *ns,
		    const struct tags *tg)
{
	static const char *const per_op[] = { "ns_per_op", "tsc_cycles_per_op", "cycles_per_op" };
	static const char *const labels[] = {
		"workload", "variant", "cost/op", "added/op", "[CI] of added/op", NULL,
	};
	char stat[32], lvl[16];

	report_stat_name(m, stat, sizeof(stat));
	fmt_level(lvl, sizeof(lvl), m->confidence);
	for (size_t mi = 0; mi < ARRAY_SIZE(per_op); mi++) {
		struct ttable t;
		struct cell *row;
		int any = 0;

		for (size_t gi = 0; gi < m->n_groups; gi++)
			any |= m->groups[gi].micro && !strcmp(m->groups[gi].metric, per_op[mi]);
		if (!any)
			continue;
		fprintf(out, "\nMarkers: %s, the %s over runs; added = variant - %s, with its %s %% "
			"CI\n", per_op[mi], stat, m->baseline, lvl);
		tt_header(&t, "lrrl", labels);
		for (size_t gi = 0; gi < m->n_groups; gi++) {
			const struct report_group *g = &m->groups[gi];
			if (!g->micro || strcmp(g->metric, per_op[mi]))
				continue;
			for (size_t i = 0; i < g->n_series; i++) {
				const struct report_series *s = &g->series[i];
				const struct report_dilation *d = report_stat_dilation(m, s);
				char v[48], a[48], lo[48], hi[48];
				row = tt_row(&t);
				tt_set(row, 0, "%s", i ? "" : g->workload);
				tt_set(row, 1, "%s", s->label);
				snprintf(v, sizeof(v), "%.2f", report_stat_value(m, s));
				tt_set(row, 2, "%s", s->n ? v : "-");
				if (s->is_baseline) {
					tt_set(row, 3, "baseline");
					continue;
				}
				if (!d) {
					tt_set(row, 3, "-");
					continue;
				}
				tt_set(row, 3, "%+.2f", d->d.abs);
				if (d->d.ci_abs.has_ci) {
					snprintf(lo, sizeof(lo), "%+.2f", d->d.ci_abs.lo);
					snprintf(hi, sizeof(hi), "%+.2f", d->d.ci_abs.hi);
					const char *tag = tag_of(tg, &d->d.ci_abs);
					tt_set(row, 4, "[%s, %s]%s%s", lo, hi, *tag ? " " : "", tag);
				} else {
					tt_set(row, 4, "[no CI: note %zu]",
					       note_add(ns, d->d.ci_abs.reason ? d->d.ci_abs.reason :
							"no interval"));
				}
				(void)a;
			}
		}
		tt_print(&t, out, m->opts->color);
		tt_release(&t);
	}
}

/* Print text as indented lines of at most WIDTH columns. */
static void wrapped(FILE *out, const char *first, const char *text)
{
	size_t ind = strlen(first), col = ind;
	const char *p = text;

	fputs(first, out);
	while (*p) {
		size_t wl = strcspn(p, " ");
		if (col > ind && col + 1 + wl > WIDTH) {
			fprintf(out, "\n%*s", (int)ind, "");
			col = ind;
		} else if (col > ind) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, wl, out);
		col += wl;
		p += wl;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

PRINTF(3, 4)
static void wrappedf(FILE *out, const char *first, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	wrapped(out, first, sb.buf ? sb.buf : "");
	strbuf_release(&sb);
}

static void footer(const struct report_model *m, FILE *out, const struct notes *ns,
		   const struct tags *tg)
{
	const char *pm[8], *hm[8];
	size_t npm = report_methods(m, 2, pm, ARRAY_SIZE(pm));
	size_t nhm = report_methods(m, 4, hm, ARRAY_SIZE(hm));
	char lvl[16];

	fmt_level(lvl, sizeof(lvl), m->confidence);
	fprintf(out, "\nNotes\n");
	wrapped(out, "  - ", "percentiles are type 7 (linear interpolation between order statistics, "
		"as R's default and GSL's gsl_stats_quantile_from_sorted_data).");
	if (tg->n == 0)
		wrappedf(out, "  - ", "[lo, hi]: %s %% confidence interval of the dilation "
			 "(none could be computed).", lvl);
	for (size_t i = 0; i < tg->n; i++) {
		static const char *const letters[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
		char extra[200] = ".";
		if (strstr(tg->methods[i], "bootstrap"))
			snprintf(extra, sizeof(extra), " (B = %u resamples, the two samples resampled "
				 "independently, seeds derived from the run's seed %llu: the same "
				 "database gives the same intervals).", m->bootstrap,
				 (unsigned long long)m->run.seed);
		wrappedf(out, "  - ", "[lo, hi]%s%s: %s %% confidence interval of the dilation by %s%s",
			 tg->n > 1 ? " " : "", tg->n > 1 ? letters[i] : "", lvl, tg->methods[i],
			 extra);
	}
	wrappedf(out, "  - ", "p (Holm): two-sided Mann-Whitney U p-value, Holm-adjusted across "
		 "the %zu comparisons of this report; * = significant at alpha = %g.",
		 m->n_comparisons, m->alpha);
	for (size_t i = 0; i < nhm; i++)
		wrappedf(out, "  - ", "HL ratio: median of the pairwise ratios variant/baseline; "
			 "its %s %% CI by %s.", lvl, hm[i]);
	for (size_t i = 0; i < npm; i++)
		wrappedf(out, "  - ", "percentile CIs (JSON, HTML) by %s.", pm[i]);
	wrappedf(out, "  - ", "outliers T/M: runs outside Tukey's fences (k = %g) / with a "
		 "modified z-score |z| > %g; labelled, not dropped.", REPORT_TUKEY_K, REPORT_MADZ);
	wrapped(out, "  - ", "failed: measured runs that failed, timed out or crashed; not in "
		"the statistics. CDFs: --format html (plot) or json/csv (data).");
	if (m->n_tracer) {
		wrapped(out, "  - ", "tracer accounting: the tracer's own per-run counts "
			"(per_cpu/cpuN/stats, read before and after each run), system-wide: events "
			"of other processes count too. events: median events written during a run; lost runs: runs with trace_lost (overwritten + dropped events) > 0, of "
			"the runs with a count (! marks them); lost: median events lost per run; "
			"bytes: median growth of the buffer's contents per run.");
		wrappedf(out, "  - ", "ns/event: the cost per traced event, (mean variant wall - mean "
			 "%s wall) / mean events per run, in ns; [CI]: the %s %% CI of that wall "
			 "dilation divided by the same mean events: the events count is treated as "
			 "fixed, an approximation. Events are counted per run, so per-operation "
			 "metrics (ns_per_op) get no cost per event.", m->baseline, lvl);
	}
	for (size_t i = 0; i < ns->n; i++) {
		char first[32];
		snprintf(first, sizeof(first), "  note %zu: ", i + 1);
		wrapped(out, first, ns->text[i]);
	}
}

static int text(const struct report_model *m, FILE *out)
{
	const struct run_header *h = &m->run;
	struct notes ns = { 0 };
	struct tags tg = { .n = 0 };
	char lvl[16];

	tg.n = report_methods(m, 1, tg.methods, ARRAY_SIZE(tg.methods));
	fmt_level(lvl, sizeof(lvl), m->confidence);
	wrappedf(out, "", "run %lld: '%s', started %s, %s order, seed %llu, status %s",
		 (long long)h->id, h->experiment, h->started, h->order,
		 (unsigned long long)h->seed, h->status);
	wrappedf(out, "", "baseline: %s; confidence %s %%; dilation = variant - baseline, "
		 "in %% of the baseline", m->baseline, lvl);
	if (m->n_virtual) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < m->n_virtual; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "", m->virtual_variants[i]);
		wrappedf(out, "", "%s - %s", sb.buf, report_virtual_time_note);
		strbuf_release(&sb);
	}
	if (!m->n_groups) {
		fprintf(out, "\nno successful measured run to report\n");
		return 0;
	}
	for (size_t gi = 0; gi < m->n_groups; gi++)
		group(m, &m->groups[gi], out, &ns, &tg);
	configurations(m, out);
	tracer_table(m, out, &ns);
	markers(m, out, &ns, &tg);
	footer(m, out, &ns, &tg);
	notes_release(&ns);
	return 0;
}

const struct renderer render_text = {
	.name = "text",
	.render = text,
};
