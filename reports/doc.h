/*
 * doc.h - the report as one document, built once from the report model
 * (report.h) and written by every format (text, Markdown, HTML) through
 * its marks (table.h's struct tw_ops).  Which sections exist, their order,
 * headings, purpose lines and prose are here, in doc.c, and nowhere else;
 * a format supplies only how a heading, a paragraph, a list, a table cell
 * and a figure are spelled.
 *
 * The order, top to bottom, answer first:
 *   1. What was run: one paragraph, then what makes the numbers
 *      untrustworthy: failed runs, variants without a run, the machine's
 *      noise verdict per primary metric, how many warnings there are;
 *   2. The answer: one table, variants x workloads, of each workload's
 *      primary metric (report_group.primary): dilation, interval, verdict;
 *   3. where the study has them: cost per event by tracer, overhead
 *      compensation, the Markers table, overhead curves;
 *   4. Detail: per workload its primary metric's percentiles, moments,
 *      shift and shape, CDF and histogram (a figure), nested variance and
 *      nodes; every metric with report_opts.all_metrics;
 *   5. Other metrics: the tracer's accounting, counters, cgroup and
 *      bookkeeping metrics (not a workload's answer), one table; their
 *      detail with all_metrics;
 *   6. Warnings, then Notes (methods, references, the provenance figure).
 */
#ifndef PERTURB_REPORTS_DOC_H
#define PERTURB_REPORTS_DOC_H

#include <stddef.h>
#include "report.h"

enum doc_kind {
	DOC_PARA,	/* text: one paragraph */
	DOC_LIST,	/* items: a bulleted list */
	DOC_PRE,	/* text: lines of a program's output, as they are */
	DOC_TABLE,	/* table: one of table.h's walks */
	DOC_FIGURE,	/* figure: drawn by formats that can (HTML) */
};

enum doc_table {
	DT_ANSWER,	/* tw_answer */
	DT_PERCENTILES,	/* tw_table1(g) */
	DT_MOMENTS,	/* tw_table2(g) */
	DT_SHAPE,	/* tw_table3(g) */
	DT_NESTED,	/* tw_nested(g) */
	DT_NODES,	/* tw_nodes(g) */
	DT_TRACER,	/* tw_tracer */
	DT_MARKERS,	/* tw_markers */
	DT_CURVE,	/* tw_curve(c) */
	DT_CALIB,	/* tw_calib */
	DT_COMP,	/* tw_comp */
	DT_OTHER,	/* tw_other */
};

enum doc_figure {
	DF_CDF,		/* the CDF and histogram of g */
	DF_CURVE,	/* the plot of c */
	DF_PROVENANCE,	/* the run's provenance and machine */
};

struct doc_block {
	enum doc_kind kind;
	char *text;			/* DOC_PARA, DOC_PRE */
	char **items;			/* DOC_LIST */
	size_t n_items, alloc_items;
	int alert;			/* DOC_PARA: a warning (HTML, Markdown: marked) */
	enum doc_table table;
	enum doc_figure figure;
	const struct report_group *g;	/* DT_PERCENTILES .. DT_NODES, DF_CDF */
	const struct report_curve *c;	/* DT_CURVE, DF_CURVE */
};

struct doc_section {
	char *title;
	int level;		/* 1: a part of the report, 2 and 3 within it */
	const char *id;		/* an anchor of level-1 sections ("answer"), or NULL */
	char *purpose;		/* one line: what the section is for; NULL: none */
	struct doc_block *blocks;
	size_t n_blocks, alloc_blocks;
};

struct doc {
	char *title;		/* "perturb report: EXPERIMENT" */
	struct doc_section *sections;
	size_t n_sections, alloc_sections;
};

/* Build d from m (nothing computed: the model's values and its
 * sentences); doc_release() frees it. */
void doc_build(const struct report_model *m, struct doc *d);
void doc_release(struct doc *d);

/* The section with anchor id, or NULL. */
const struct doc_section *doc_find(const struct doc *d, const char *id);

struct tw;
/* Write d's sections through t's marks (t->ops); figures through
 * t->ops->figure when the format has one. */
void doc_write(const struct doc *d, const struct report_model *m, struct tw *t);
/* One section of it (perturb run's closing screen: the answer). */
void doc_write_section(const struct doc_section *s, const struct report_model *m, struct tw *t);

#endif
