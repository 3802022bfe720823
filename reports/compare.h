/*
 * compare.h - two stored runs side by side (`perturb compare`, in the
 * spirit of benchstat): the model and its text output.
 *
 * For every (workload, variant, metric) that both runs measured (measured,
 * successful runs only): the median of A and of B, the change of the
 * median of B over A in % with its confidence interval (stats_dilation:
 * percentile bootstrap of the two independent samples, quantile 0.5,
 * seeded by the names, so the same databases print the same numbers), and
 * the two-sided Mann-Whitney U p-value (stats_mann_whitney).  The change
 * is significant when p < alpha = 1 - confidence (no Holm correction: as
 * benchstat, each row is read on its own).
 *
 * The provenance columns of the two runs (store_run_provenance) are kept
 * for the output: every difference is printed above the table.
 */
#ifndef PERTURB_REPORTS_COMPARE_H
#define PERTURB_REPORTS_COMPARE_H

#include <stdint.h>
#include <stdio.h>
#include "stats/stats.h"
#include "engine/store.h"

struct compare_row {
	char *workload, *variant, *metric, *unit;
	double *v[2];		/* the values of A and B */
	size_t n[2], alloc[2];
	/* computed by compare_build when both sides have values (n[0] && n[1]) */
	double median[2];
	struct dilation d;	/* d.pct NaN: no change could be computed */
	struct test_result mw;	/* mw.valid = 0: no test */
	int significant;	/* mw.valid && mw.p < 1 - confidence */
};

struct compare {
	/* set by the caller */
	char **metrics;		/* filter; NULL/0 = all (not freed) */
	size_t n_metrics;
	double confidence;	/* 0 = 0.95 */
	/* filled by compare_build: rows by workload, variant, metric (names) */
	int64_t id[2];
	char *prov[2][STORE_N_PROVENANCE];
	struct compare_row *rows;
	size_t n_rows, alloc_rows;
	size_t n_common;	/* rows with values on both sides */
	/* private */
	size_t last;
	int side;
};

/* Read run ida of a and run idb of b and compute every row.  Returns 0,
 * or -1 (printed) on a database error. */
int compare_build(struct compare *c, struct store *a, int64_t ida, struct store *b, int64_t idb);
/* The provenance differences, the table of the rows with values on both
 * sides, and a legend, as text. */
void compare_print(const struct compare *c, FILE *out);
void compare_release(struct compare *c);

#endif
