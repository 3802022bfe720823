/*
 * report.h - what a report shows, computed once (report_build), and the
 * renderers that format it.  A renderer formats; it computes nothing.
 *
 * Adding a report format: write reports/render_NAME.c defining
 * `const struct renderer render_NAME`, add one row to renderers[] in
 * report.c.
 */
#ifndef PERTURB_REPORT_H
#define PERTURB_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "store.h"

/* One variant's values of one (workload, metric). */
struct report_series {
	const char *variant;
	double *values;		/* measured, successful runs, in plan order */
	size_t n;
	int failed;		/* measured runs of this variant/workload that failed */
	int is_baseline;
	/* computed by report_build */
	double median;		/* type-7 quantile at 0.5; NaN when n == 0 */
	int has_change;		/* baseline exists with n > 0 and median != 0 */
	double median_change_pct;	/* 100 (median - base median) / base median */
};

struct report_group {
	const char *workload, *metric, *unit;
	struct report_series *series;	/* in the run's variant order */
	size_t n_series;
};

/* A stored value, for tidy formats (CSV). */
struct report_row {
	int seq, repetition, warmup;
	const char *variant, *workload, *metric, *unit, *status;
	double value;
};

struct report_opts {
	int64_t run_id;		/* 0 = latest */
	const char *baseline;	/* NULL = the run's */
	char **metrics;		/* filters; NULL/0 = all */
	size_t n_metrics;
	char **workloads;
	size_t n_workloads;
	int want_rows;		/* fill rows[] (tidy formats) */
	int include_warmup, include_failed;	/* tidy rows only */
	int color;		/* text: colour allowed */
};

struct report_model {
	struct run_header run;
	const char *baseline;
	struct report_group *groups;
	size_t n_groups;
	struct report_row *rows;
	size_t n_rows;
	const struct report_opts *opts;
	/* private */
	char **strings;
	size_t n_strings, alloc_strings;
	size_t alloc_groups, alloc_rows;
};

/* Returns 0, or -1 (printed) for a database error or a bad option value
 * (unknown baseline): *usage_error is set in the latter case. */
int report_build(struct store *st, const struct report_opts *o,
		 struct report_model *m, int *usage_error);
void report_release(struct report_model *m);

struct renderer {
	const char *name;
	int tidy;		/* needs report_model.rows */
	int (*render)(const struct report_model *m, FILE *out);
};
const struct renderer *renderer_find(const char *name);
/* "text, csv" - for messages. */
const char *renderer_names(void);

extern const struct renderer render_text;
extern const struct renderer render_csv;

#endif
