/*
 * render_markdown.c - the report as GitHub-flavoured Markdown: the marks of
 * the Markdown format for the report's document (doc.h: its sections,
 * order and prose) and tables (table.h): headings by level, pipe tables,
 * lists, indented code blocks; figures are not drawn (--format html).
 * Strings from the experiment are escaped: Markdown's active characters
 * (\\ ` * _ [ ] | # ~) with a backslash, <, > and & as entities, line
 * breaks as spaces.
 */
#include "report.h"
#include "fmt.h"
#include "table.h"
#include "doc.h"
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

static void md_section(struct tw *t, int level, const char *id, const char *title)
{
	(void)id;
	fprintf(t->out, "%.*s ", level + 1, "####");
	md(t->out, title);
	fputs("\n\n", t->out);
}

static void md_para(struct tw *t)
{
	if (t->alert)
		fputs("**Warning:** ", t->out);
}

static void md_list(struct tw *t, char *const *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fputs("- ", t->out);
		md(t->out, items[i]);
		fputc('\n', t->out);
	}
	fputc('\n', t->out);
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
	.end = md_row_end,	/* a blank line after a table */
	.ci = md_ci,
	.unit = md_unit,
	.br = "<br> ",
	.section = md_section,
	.list = md_list,
	.para = md_para,
	.para_end = md_para_end,
	.pre = md_pre,
};

static int markdown(const struct report_model *m, FILE *out)
{
	struct tw t = { .out = out, .ops = &md_ops };
	struct doc d;

	doc_build(m, &d);
	fputs("# ", out);
	md(out, d.title);
	fputs("\n\n", out);
	doc_write(&d, m, &t);
	doc_release(&d);
	return 0;
}

const struct renderer render_markdown = {
	.name = "markdown",
	.render = markdown,
};
