/*
 * render_text.c - the terminal report, at most 100 columns wide: the marks
 * of the text format for the report's document (doc.h: its sections,
 * order and prose) and tables (table.h).  A level-1 heading is underlined
 * with "=", a paragraph is indented one column ("!" before a warning), a
 * list item is "  - ", a program's output "    | "; figures are not drawn
 * (--format html).
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
#include "doc.h"
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

static void wrapped(FILE *out, const char *first, const char *text);

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

/* "[+0.21, +0.55] %" or "[no CI: note 2]". */
static void t_ci(struct tw *t, const struct interval *iv, const char *unit)
{
	char lo[32], hi[32];

	if (!iv->has_ci) {
		fputs("[no CI: ", t->out);
		t_reason(t, iv->reason ? iv->reason : "no interval");
		fputc(']', t->out);
		return;
	}
	fmt_ci_bounds(lo, hi, sizeof(lo), iv, unit);
	fprintf(t->out, "[%s, %s]%s", lo, hi, unit);
}

static void t_unit(struct tw *t, const char *unit)
{
	if (*unit)
		fprintf(t->out, " %s", unit);
}

static void t_section(struct tw *t, int level, const char *id, const char *title)
{
	char *shown = fmt_text_dup(title);	/* a name: from the database */
	size_t n = strlen(shown);

	(void)id;
	fprintf(t->out, "\n%s%s\n", level <= 2 ? "" : " ", shown);
	free(shown);
	if (level == 1) {
		while (n--)
			fputc('=', t->out);
		fputc('\n', t->out);
	}
}

static void t_list(struct tw *t, char *const *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		wrapped(t->out, "  - ", items[i]);
}

static void t_para(struct tw *t)
{
	capture(t);
}

static void t_para_end(struct tw *t)
{
	char *s = release(t);
	wrapped(t->out, t->alert ? " ! " : " ", s);
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
	.list = t_list,
	.para = t_para,
	.para_end = t_para_end,
	.pre = t_pre,
};

/* Print text as indented lines of at most WIDTH columns (escaped). */
static void wrapped(FILE *out, const char *first, const char *text)
{
	fmt_wrap(out, first, text, WIDTH);
}


/* The numbered notes the tables' cells refer to ("note N"). */
static void footnotes(FILE *out, const struct notes *ns)
{
	for (size_t i = 0; i < ns->n; i++) {
		char first[32];
		snprintf(first, sizeof(first), "  note %zu: ", i + 1);
		wrapped(out, first, ns->text[i]);
	}
}

static int text(const struct report_model *m, FILE *out)
{
	struct text_tw x = { .color = m->opts->color };
	struct tw t = { .out = out, .ops = &text_ops, .priv = &x };
	struct doc d;

	doc_build(m, &d);
	fmt_text(out, d.title);	/* the study's name: from the database */
	fputc('\n', out);
	doc_write(&d, m, &t);
	footnotes(out, &x.notes);
	doc_release(&d);
	notes_release(&x.notes);
	free(x.cells);
	free(x.right);
	return 0;
}

void tw_text(FILE *out, const struct report_model *m, const struct doc_section *s,
	     size_t max_rows, size_t max_cols)
{
	struct text_tw x = { .color = m->opts->color };
	struct tw t = { .out = out, .ops = &text_ops, .priv = &x, .max_rows = max_rows,
			.max_cols = max_cols };

	doc_write_section(s, m, &t);
	footnotes(out, &x.notes);
	notes_release(&x.notes);
	free(x.cells);
	free(x.right);
}

const struct renderer render_text = {
	.name = "text",
	.render = text,
};
