/*
 * render_text.c - the terminal report, at most 100 columns wide: a writer
 * of the report's tables (table.h) and the prose around them.
 *
 * For each workload and metric the tables of table.h: dilation at
 * percentiles (the CI of a % dilation on a second line of its cell), moments,
 * shift and shape, and the runs nested in blocks; then the configurations
 * table, the tracer accounting (a
 * warning when runs lost events), the Markers table for per-operation
 * metrics, and notes saying what every interval and mark is.
 *
 * The writer buffers a table's cells, then prints it: columns as wide as
 * their widest line (the first at most 40), split by columns when wider
 * than 100, the first column repeated; every value keeps its unit, whatever
 * the table's width.  A reason why a
 * value is missing is a numbered note, printed at the end.  Colour
 * (significance marks, warnings, intervals dimmed) only when
 * report_opts.color.
 */
#include "report.h"
#include "fmt.h"
#include "table.h"
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

static void wrapped(FILE *out, const char *first, const char *text);
PRINTF(3, 4)
static void wrappedf(FILE *out, const char *first, const char *fmt, ...);

/* ---- the table writer: cells buffered, then printed aligned ---- */

enum cell_color { C_NONE, C_SIG, C_DIM };

struct cell {
	char *s;
	enum cell_color color;
};

struct text_tw {
	FILE *out;		/* the report's stream, while t->out is buf */
	char *buf;		/* what the walk wrote since begin (or para) */
	size_t len, start;	/* start: of the open cell in buf */
	struct cell *cells;	/* row-major; rows[0] is the header */
	size_t ncols, nrows, col, alloc;
	unsigned char *right;	/* right-aligned columns */
	size_t alloc_right;
	int color;
	struct notes notes;
	struct tags tags;
};

static struct text_tw *tx(struct tw *t)
{
	return t->priv;
}


/* Point t->out at a buffer of the writer's own. */
static void capture(struct tw *t)
{
	struct text_tw *x = tx(t);
	x->out = t->out;
	t->out = fmt_memstream(&x->buf, &x->len);
}

/* Back to the report's stream; returns what was written (malloc'd). */
static char *release(struct tw *t)
{
	struct text_tw *x = tx(t);
	char *s;

	fclose(t->out);
	t->out = x->out;
	s = x->buf;
	x->buf = NULL;
	x->len = 0;
	return s;
}

static void t_begin(struct tw *t)
{
	struct text_tw *x = tx(t);
	x->ncols = x->nrows = x->col = 0;
	capture(t);
	ALLOC_GROW(x->cells, 1, x->alloc);
	x->nrows = 1;
}

static void t_cell_open(struct tw *t)
{
	fflush(t->out);
	tx(t)->start = tx(t)->len;
}

/* Close the open cell: its text is buf from start. */
static void t_cell_close(struct tw *t, enum cell_color color, const char *suffix)
{
	struct text_tw *x = tx(t);
	struct strbuf sb = STRBUF_INIT;
	struct cell *c;

	fflush(t->out);
	strbuf_add(&sb, x->buf + x->start, x->len - x->start);
	strbuf_addstr(&sb, suffix);
	if (x->nrows == 1) {		/* the header row grows a column */
		ALLOC_GROW(x->right, x->ncols + 1, x->alloc_right);
		x->right[x->ncols] = x->ncols < TW_MAX_COLS && t->right[x->ncols];
		x->ncols++;
		ALLOC_GROW(x->cells, x->ncols, x->alloc);
	}
	if (x->col < x->ncols) {
		c = &x->cells[(x->nrows - 1) * x->ncols + x->col];
		c->s = strbuf_detach(&sb);
		c->color = color;
	} else {
		strbuf_release(&sb);
	}
	x->col++;
}

static void t_head(struct tw *t)
{
	t_cell_open(t);
}

static void t_head_end(struct tw *t)
{
	t_cell_close(t, C_NONE, "");
}

static void t_row(struct tw *t)
{
	struct text_tw *x = tx(t);
	ALLOC_GROW(x->cells, (x->nrows + 1) * x->ncols, x->alloc);
	memset(&x->cells[x->nrows * x->ncols], 0, x->ncols * sizeof(struct cell));
	x->nrows++;
	x->col = 0;
}

static void t_cell(struct tw *t, unsigned flags)
{
	t_cell_open(t);
}

static void t_cell_end(struct tw *t, unsigned flags)
{
	if (flags & TW_ALERT)
		t_cell_close(t, C_SIG, " !");
	else
		t_cell_close(t, flags & TW_MARK ? C_SIG : flags & TW_CI ? C_DIM : C_NONE, "");
}

static void t_empty(struct tw *t)
{
	t_cell_open(t);
	t_cell_close(t, C_NONE, "");
}

static void t_none(struct tw *t)
{
	(void)t;
}

static const char *cs(const struct cell *c)
{
	return c->s ? c->s : "";
}

/* Line k of a cell's text, its length in *len; NULL past the last. */
static const char *line_of(const char *s, size_t k, size_t *len)
{
	while (k--) {
		s = strchr(s, '\n');
		if (!s)
			return NULL;
		s++;
	}
	*len = strcspn(s, "\n");
	return s;
}

static size_t lines_of(const char *s)
{
	size_t n = 1;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The width of each column (the first at most 40): the longest line of its
 * cells. */
static void widths(const struct text_tw *x, size_t *w)
{
	for (size_t c = 0; c < x->ncols; c++) {
		w[c] = 0;
		for (size_t r = 0; r < x->nrows; r++) {
			const char *s = cs(&x->cells[r * x->ncols + c]);
			size_t l = 0;
			for (; *s; s++) {
				if (*s == '\n') {
					l = 0;
					continue;
				}
				l++;
				if (l > w[c])
					w[c] = l;
			}
		}
	}
	if (x->ncols && w[0] > 40)
		w[0] = 40;
}

/* Print columns [c0, c1) plus column 0, a line per line of a cell (lines
 * after a cell's first are its interval: dimmed). */
static void print_cols(const struct text_tw *x, FILE *out, const size_t *w, size_t c0, size_t c1)
{
	for (size_t r = 0; r < x->nrows; r++) {
		const struct cell *row = &x->cells[r * x->ncols];
		size_t nl = 1;
		for (size_t c = 0; c < x->ncols; c++)
			if (lines_of(cs(&row[c])) > nl)
				nl = lines_of(cs(&row[c]));
		for (size_t k = 0; k < nl; k++) {
			struct strbuf line = STRBUF_INIT;
			for (size_t c = 0; c < c1; c++) {
				const char *on = "", *off = "", *s;
				size_t len = 0;
				int pad;
				enum cell_color color = k ? C_DIM : row[c].color;
				if (c && c < c0)
					continue;
				s = line_of(cs(&row[c]), k, &len);
				if (!s)
					s = "";
				if (len > w[c])
					len = w[c];	/* only column 0 is capped */
				pad = (int)(w[c] - len);
				if (x->color && len && color == C_SIG) {
					on = "\033[1;31m";
					off = "\033[0m";
				} else if (x->color && len && color == C_DIM) {
					on = "\033[2m";
					off = "\033[0m";
				}
				if (c)
					strbuf_addf(&line, "%*s", GAP, "");
				if (x->right[c])
					strbuf_addf(&line, "%*s%s%.*s%s", pad, "", on, (int)len, s, off);
				else
					strbuf_addf(&line, "%s%.*s%s%*s", on, (int)len, s, off, pad, "");
			}
			/* no trailing blanks */
			while (line.len && line.buf[line.len - 1] == ' ')
				line.buf[--line.len] = '\0';
			fprintf(out, "  %s\n", line.buf ? line.buf : "");
			strbuf_release(&line);
		}
	}
}

static void t_end(struct tw *t)
{
	struct text_tw *x = tx(t);
	size_t *w = xcalloc(x->ncols ? x->ncols : 1, sizeof(*w));
	size_t c0 = 1;

	free(release(t));
	widths(x, w);
	while (c0 < x->ncols || x->ncols == 1) {
		size_t used = 2 + w[0], c1 = c0;
		while (c1 < x->ncols && (c1 == c0 || used + GAP + w[c1] <= WIDTH))
			used += GAP + w[c1++];
		if (c0 > 1)
			fputc('\n', t->out);
		print_cols(x, t->out, w, c0, c1);
		if (x->ncols == 1)
			break;
		c0 = c1;
	}
	for (size_t i = 0; i < x->nrows * x->ncols; i++)
		free(x->cells[i].s);
	x->nrows = x->ncols = 0;
	free(w);
}

static void t_esc(FILE *out, const char *s)
{
	fmt_text(out, s);
}

static void t_reason(struct tw *t, const char *why)
{
	fprintf(t->out, "note %zu", note_add(&tx(t)->notes, why ? why : "no reason"));
}

/* "[+0.21, +0.55] %" or "[no CI: note 2]"; a tag marks the method when
 * the report mixes methods. */
static void t_ci(struct tw *t, const struct interval *iv, const char *unit)
{
	const char *tag = tag_of(&tx(t)->tags, iv);
	char lo[32], hi[32];

	if (!iv->has_ci) {
		fputs("[no CI: ", t->out);
		t_reason(t, iv->reason ? iv->reason : "no interval");
		fputc(']', t->out);
		return;
	}
	fmt_ci_bounds(lo, hi, sizeof(lo), iv, unit);
	fprintf(t->out, "[%s, %s]%s%s%s", lo, hi, unit, *tag ? " " : "", tag);
}

static void t_unit(struct tw *t, const char *unit)
{
	if (*unit)
		fprintf(t->out, " %s", unit);
}

static void t_section(struct tw *t, const char *title)
{
	fprintf(t->out, "\n%s\n", title);
}

static void t_para(struct tw *t)
{
	capture(t);
}

static void t_para_end(struct tw *t)
{
	char *s = release(t);
	wrapped(t->out, " ", s);
	free(s);
}

/* Each line indented and marked: "    | line". */
static void t_pre(struct tw *t, const char *text)
{
	put_lines(t->out, text, "    | ", t->ops->esc);
}

static const struct tw_ops text_ops = {
	.esc = t_esc,
	.begin = t_begin,
	.head = t_head,
	.head_end = t_head_end,
	.body = t_none,
	.row = t_row,
	.cell = t_cell,
	.cell_end = t_cell_end,
	.empty = t_empty,
	.row_end = t_none,
	.end = t_end,
	.ci = t_ci,
	.unit = t_unit,
	.reason = t_reason,
	.br = "\n",
	.section = t_section,
	.para = t_para,
	.para_end = t_para_end,
	.pre = t_pre,
};

/* ---- prose ---- */

static void group(const struct report_model *m, const struct report_group *g, struct tw *t)
{
	FILE *out = t->out;
	char lvl[16];

	fmt_level(lvl, sizeof(lvl), m->confidence);
	fputc('\n', out);
	tw_title(out, t_esc, g);
	fprintf(out, "\n\n Dilation at percentiles vs %s; [lo, hi]: %s %% CI of the "
		"%% dilation\n", m->baseline, lvl);
	tw_table1(t, m, g);
	fprintf(out, "\n Moments; var: sample variance (n - 1); "
		"mean dilation in %% with %s %% CI\n", lvl);
	fprintf(out, " detectable: the smallest mean dilation these runs could detect "
		"(power %.0f %%, alpha %g)\n", 100 * REPORT_MDE_POWER, m->alpha);
	tw_table2(t, m, g);
	fprintf(out, "\n Shift and shape; HL: Hodges-Lehmann ratio variant/%s with %s %% CI; "
		"KS: Kolmogorov-Smirnov\n", m->baseline, lvl);
	tw_table3(t, g);
	if (g->nested) {
		fputc('\n', out);
		wrappedf(out, " ", "Runs nested in blocks (a block: one boot of a boot: variant); "
			 "variance split by one-way random-effects ANOVA (Kalibera & Jones 2013); "
			 "[CI]: %s %% Student t interval over the block means; F p: is there a block "
			 "effect? %s", lvl, report_runs_per_boot_column);
		tw_nested(t, m, g);
	}
	if (g->nodes) {
		fputc('\n', out);
		wrappedf(out, " ", "%s", report_nodes_note);
		tw_nodes(t, m, g);
	}
}

/* Tracer accounting: a row per workload and variant with trace_events. */
static void tracer(const struct report_model *m, struct tw *t)
{
	if (!m->n_tracer)
		return;
	wrapped(t->out, "\n", "Tracer accounting: the tracer's own counts, medians per run; a "
		"calibration workload gives the cost per event (docs/experiment.md)");
	tw_tracer(t, m);
	if (m->n_tracer_lossy)
		fprintf(t->out, "\n ! runs that lost events: the tracer could not keep up; their "
			"dilation understates a lossless trace\n");
}

/* The overhead curves of the run's matrices: one table each. */
static void curves(const struct report_model *m, struct tw *t)
{
	char lvl[16];

	if (!m->n_curves)
		return;
	fmt_level(lvl, sizeof(lvl), m->confidence);
	wrappedf(t->out, "\n", "Overhead curves: the dilation of each instance of a matrix, "
		 "against its parameter; %s %% CI; *: significant (its interval at the Holm level "
		 "excludes 0)", lvl);
	for (size_t i = 0; i < m->n_curves; i++) {
		fputs("\n ", t->out);
		tw_curve_title(t->out, t_esc, m, &m->curves[i]);
		fputs("\n", t->out);
		tw_curve(t, m, &m->curves[i]);
	}
}

/* Print text as indented lines of at most WIDTH columns. */
static void wrapped(FILE *out, const char *first, const char *text)
{
	fmt_wrap(out, first, text, WIDTH);
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
	char lvl[16], note[1024];

	fmt_level(lvl, sizeof(lvl), m->confidence);
	fprintf(out, "\nNotes\n");
	for (size_t gi = 0; gi < m->n_groups; gi++)
		if (report_primary_metric(m->groups[gi].metric)) {
			report_noise_verdict(m, &m->groups[gi], note, sizeof(note));
			wrappedf(out, "  - ", "noise: %s.", note);
		}
	if (report_paired_note(m, note, sizeof(note)))
		wrappedf(out, "  - ", "%s.", note);
	for (size_t i = 0; i < m->n_quiet; i++) {
		report_quiet_line(&m->quiet[i], note, sizeof(note));
		wrappedf(out, "  - ", "quieter metric: %s.", note);
	}
	wrapped(out, "  - ", "percentiles are type 7 (linear interpolation between order statistics, "
		"as R's default and GSL's gsl_stats_quantile_from_sorted_data).");
	if (tg->n == 0)
		wrappedf(out, "  - ", "[lo, hi]: %s %% confidence interval of the dilation "
			 "(none could be computed).", lvl);
	for (size_t i = 0; i < tg->n; i++) {
		static const char *const letters[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
		char extra[200] = ".";
		if (strstr(tg->methods[i], "bootstrap"))
			snprintf(extra, sizeof(extra), " (B = %u resamples, %s, seeds derived from "
				 "the run's seed %llu: the same database gives the same intervals).",
				 m->bootstrap, strstr(tg->methods[i], "paired") ?
				 "the blocks of the two samples drawn together" :
				 "the two samples resampled independently",
				 (unsigned long long)m->run.seed);
		wrappedf(out, "  - ", "[lo, hi]%s%s: %s %% confidence interval of the dilation by %s%s",
			 tg->n > 1 ? " " : "", tg->n > 1 ? letters[i] : "", lvl, tg->methods[i],
			 extra);
	}
	report_holm_note(m, note, sizeof(note));
	wrappedf(out, "  - ", "%s (*).", note);
	for (size_t i = 0; i < nhm; i++)
		wrappedf(out, "  - ", "HL ratio: median of the pairwise ratios variant/baseline; "
			 "its %s %% CI by %s.", lvl, hm[i]);
	for (size_t i = 0; i < npm; i++)
		wrappedf(out, "  - ", "percentile CIs (JSON, HTML) by %s.", pm[i]);
	wrappedf(out, "  - ", "outliers IQR/MAD: runs more than %g interquartile ranges beyond "
		 "the quartiles (Tukey's fences) / with a modified z-score, from the median "
		 "absolute deviation, above %g; labelled, not dropped.", REPORT_TUKEY_K,
		 REPORT_MADZ);
	wrapped(out, "  - ", "failed: measured runs that failed, timed out or crashed; not in "
		"the statistics. CDFs: --format html (plot) or json/csv (data).");
	wrapped(out, "  - ", report_papers_note);
	if (m->n_tracer) {
		wrapped(out, "  - ", "tracer accounting: the tracer's own per-run counts "
			"(per_cpu/cpuN/stats, read before and after each run), system-wide: events "
			"of other processes count too. events: median events written during a run; lost runs: runs with trace_lost (overwritten + dropped events) > 0, of "
			"the runs with a count (! marks them); lost: median events lost per run; "
			"bytes: median growth of the buffer's contents per run.");
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
	struct text_tw x = { .color = m->opts->color };
	struct tw t = { .out = out, .ops = &text_ops, .priv = &x };
	char lvl[16];

	x.tags.n = report_methods(m, 1, x.tags.methods, ARRAY_SIZE(x.tags.methods));
	fmt_level(lvl, sizeof(lvl), m->confidence);
	wrappedf(out, "", "run %lld: '%s', started %s, %s order, seed %llu, status %s",
		 (long long)h->id, h->experiment, h->started, h->order,
		 (unsigned long long)h->seed, h->status);
	wrappedf(out, "", "baseline: %s; confidence %s %%; dilation = variant - baseline, "
		 "in %% of the baseline", m->baseline, lvl);
	if (m->n_virtual) {
		char *s = NULL;
		size_t len = 0;
		FILE *f = fmt_memstream(&s, &len);
		tw_virtual(f, t_esc, m, " - ");
		fclose(f);
		wrapped(out, "", s);
		free(s);
	}
	tw_failures(&t, m);
	if (!m->n_groups) {
		fprintf(out, "\nno successful measured run to report\n");
		goto out;
	}
	for (size_t gi = 0; gi < m->n_groups; gi++)
		group(m, &m->groups[gi], &t);
	tw_configurations(&t, m);
	tracer(m, &t);
	curves(m, &t);
	tw_markers(&t, m);
	tw_calibration(&t, m);	/* reports/calib.h */
	tw_warnings(&t, m);
	footer(m, out, &x.notes, &x.tags);
out:
	notes_release(&x.notes);
	free(x.cells);
	free(x.right);
	return 0;
}

void tw_text(FILE *out, const struct report_model *m, tw_walk_fn *walk)
{
	struct text_tw x = { .color = m->opts->color };
	struct tw t = { .out = out, .ops = &text_ops, .priv = &x };

	x.tags.n = report_methods(m, 1, x.tags.methods, ARRAY_SIZE(x.tags.methods));
	walk(&t, m);
	for (size_t i = 0; i < x.notes.n; i++) {
		char first[32];
		snprintf(first, sizeof(first), "  note %zu: ", i + 1);
		wrapped(out, first, x.notes.text[i]);
	}
	notes_release(&x.notes);
	free(x.cells);
	free(x.right);
}

const struct renderer render_text = {
	.name = "text",
	.render = text,
};
