/*
 * table.h - the report's tables, each defined once here and walked once,
 * written through a table writer: the cell syntax of one format
 * (render_text.c, render_markdown.c, render_html.c).  The walk decides what
 * each cell says; the writer how a table, a row and a cell are spelled, how
 * a string is escaped, how an interval and a reason are shown; and, for
 * the document around them (doc.h, which alone decides its sections,
 * their order and prose), how a heading, a paragraph, a list and a
 * figure are spelled.
 *
 * A writer may buffer: the text writer points t->out at a buffer of its own
 * from begin to end (and from para to para_end), collects the cells, and
 * prints the table with its column widths, folded at 100 columns.  So the
 * walk writes a cell's content to t->out between cell and cell_end (or
 * head and head_end), and nothing else between begin and end.
 */
#ifndef PERTURB_REPORTS_TABLE_H
#define PERTURB_REPORTS_TABLE_H

#include <stdio.h>
#include "report.h"

#define TW_MAX_COLS 80

/* Cell flags. */
#define TW_TH 1u	/* the cell that names its row (HTML <th>) */
#define TW_MARK 2u	/* a significant result (HTML: highlighted) */
#define TW_ALERT 4u	/* a warning (HTML: highlighted; Markdown: bold) */
#define TW_CI 8u	/* an interval (HTML: dimmed) */

struct tw;
struct doc_block;

struct tw_ops {
	void (*esc)(FILE *out, const char *s);
	/* header row: begin, one head cell (content written between
	 * head/head_end), end */
	void (*begin)(struct tw *t);
	void (*head)(struct tw *t);
	void (*head_end)(struct tw *t);
	void (*body)(struct tw *t);
	void (*row)(struct tw *t);
	void (*cell)(struct tw *t, unsigned flags);
	void (*cell_end)(struct tw *t, unsigned flags);
	void (*empty)(struct tw *t);
	void (*row_end)(struct tw *t);
	void (*end)(struct tw *t);
	/* one cell over n columns saying text; NULL: the format has none */
	void (*span)(struct tw *t, int n, const char *text);
	/* an interval of a % dilation, in a cell */
	void (*ci)(struct tw *t, const struct interval *iv, const char *unit);
	/* the unit after a value */
	void (*unit)(struct tw *t, const char *unit);
	/* why a value is missing; NULL: the escaped text (text: "note N") */
	void (*reason)(struct tw *t, const char *why);
	const char *br;		/* a line break in a cell, before an interval */
	/* the document (doc.h): a section heading of a level (1: a part of
	 * the report; id: its anchor or NULL), a paragraph (alert: a
	 * warning), a bulleted list, a figure (NULL: the format draws none) */
	void (*section)(struct tw *t, int level, const char *id, const char *title);
	void (*list)(struct tw *t, char *const *items, size_t n);
	void (*figure)(struct tw *t, const struct report_model *m, const struct doc_block *b);
	void (*para)(struct tw *t);
	void (*para_end)(struct tw *t);
	/* lines of a program's output, shown as they are (escaped) */
	void (*pre)(struct tw *t, const char *text);
};

struct tw {
	FILE *out;
	const struct tw_ops *ops;
	void *priv;		/* the writer's own state */
	size_t ncols;
	unsigned char right[TW_MAX_COLS];	/* right-aligned columns */
	int alert;		/* the open paragraph is a warning */
	size_t max_rows;	/* tw_answer: at most this many variants, */
	size_t max_cols;	/* and workloads; 0: all */
};

/* "workload: metric (unit)", escaped. */
void tw_title(FILE *out, void (*esc)(FILE *, const char *), const struct report_group *g);

/* Dilation at percentiles (KTAU's Table 1, report_papers_note). */
void tw_table1(struct tw *t, const struct report_model *m, const struct report_group *g);
/* Moments (KTAU's Table 2), and the verdict: the decisive dilation's
 * Holm interval with its star (struct report_verdict), the rank test's p
 * for information. */
void tw_table2(struct tw *t, const struct report_model *m, const struct report_group *g);
/* Shift and shape: HL ratio, KS, outliers, failed runs. */
void tw_table3(struct tw *t, const struct report_group *g);
/* The virtual-time variants, "a, b", then dash and what virtual time is,
 * escaped by e (m->n_virtual > 0). */
void tw_virtual(FILE *out, void (*e)(FILE *, const char *), const struct report_model *m,
		const char *dash);
/* Runs nested in blocks (g->nested): the between/within-block variance. */
void tw_nested(struct tw *t, const struct report_model *m, const struct report_group *g);
/* Runs on several nodes (g->nodes): the between-node, between-boot and
 * within-boot shares, the dilation of the mean on each node and its
 * spread; the caller's text before it is report_nodes_note. */
void tw_nodes(struct tw *t, const struct report_model *m, const struct report_group *g);

/* The tracer accounting table (m->n_tracer > 0). */
void tw_tracer(struct tw *t, const struct report_model *m);
/* The calibrated cost per event, a row per traced variant (m->calib), and
 * the overhead compensation, a row per workload and variant (m->comp;
 * reports/calib.h). */
void tw_calib(struct tw *t, const struct report_model *m);
void tw_comp(struct tw *t, const struct report_model *m);
/* The Markers table: a row per variant of each per-operation metric. */
void tw_markers(struct tw *t, const struct report_model *m);

/* An overhead curve (report.h: struct report_curve): its title, escaped
 * by e ("median wall dilation of ftrace on gzip against buffer_size_kb"),
 * and its table, one row per point. */
void tw_curve_title(FILE *out, void (*e)(FILE *, const char *), const struct report_model *m,
		    const struct report_curve *c);
void tw_curve(struct tw *t, const struct report_model *m, const struct report_curve *c);
/*
 * The answer (doc.h): a row per variant (at most t->max_rows when set), a
 * column per workload (at most t->max_cols), of its primary group (report_group.primary): the
 * baseline's value of the configurations-table statistic with its unit,
 * every other variant's dilation of it in % with its interval and "*"
 * when its verdict is significant (marked), or why there is none.
 * tw_answer_rows(): how many rows and (*n_cols) columns it has without a
 * limit.
 */
void tw_answer(struct tw *t, const struct report_model *m);
size_t tw_answer_rows(const struct report_model *m, size_t *n_cols);
/* The metrics that are not a workload's answer (!primary): a row per
 * workload and metric, a column per variant: its value of the statistic
 * and its dilation in % ("*": significant). */
void tw_other(struct tw *t, const struct report_model *m);

/*
 * One section of the document (doc.h) through the text writer
 * (render_text.c) onto out, for text that is not the text report
 * (summary.c): its tables as the text report prints them (tw_answer at
 * most max_rows rows and max_cols columns; 0: all), then the notes their
 * cells refer to ("note N: why").
 */
struct doc_section;
void tw_text(FILE *out, const struct report_model *m, const struct doc_section *s,
	     size_t max_rows, size_t max_cols);

#endif
