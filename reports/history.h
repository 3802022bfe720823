/*
 * history.h - a study's overhead across revisions (`perturb history`,
 * `perturb gate --history`, docs/history.md).
 *
 * The runs of one study (by name or experiment hash) in the order of their
 * revisions: commit order (`git rev-list --topo-order --reverse --all` in
 * the runs' repository, the study's `revision:` work tree) when every run
 * has a commit that repository knows, else the order they were started.
 * Consecutive runs of the same revision (commit, else label, else the run
 * itself) make one revision of the series.
 *
 * Each run is read through the report model (report_build(),
 * reports/report.h) with the options given: the dilation of its
 * configurations-table statistic, its interval and verdict are the ones
 * `perturb report --run ID` prints; nothing is computed a second way.  Per
 * (workload, variant, metric), a series: one point per run.
 *
 * Change points (stats/changepoint.h, E-divisive means with permutation
 * p): over the revisions of each series, on the per-run samples of each
 * revision, each sample the variant's value over the median of its own
 * run's baseline (a ratio: 1.05 is a dilation of +5 %), so that a change
 * of the machine between revisions that moves the baseline too is not a
 * change point.  The medians before and after are such ratios; the change
 * in % is of the ratio (100 (after - before) / before), with the
 * changepoint's bootstrap interval.
 */
#ifndef PERTURB_REPORTS_HISTORY_H
#define PERTURB_REPORTS_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"
#include "stats/changepoint.h"

struct history_opts {
	const char *study;	/* a study's name or an experiment hash (>= 6 hex
				   digits, a prefix) */
	const char *workload, *variant, *metric;	/* filters; NULL: all
							   (metric: NULL = wall) */
	size_t last;		/* 0: every run; else the last `last` runs only */
	int64_t upto;		/* 0: every run; else runs up to this id only */
	struct report_opts ro;	/* the report model's options (run_id,
				   metrics and workloads are set per run) */
	struct cp_opts cp;	/* the change points' (zero: the defaults) */
	int no_changepoints;
	int time_order;		/* order by start time even when the runs have
				   commits (perturb gate --history) */
	int newest;		/* instead of the search: the newest revision
				   against the others pooled (gate --history) */
};

/* A stored run of the study, in revision order. */
struct history_run {
	int64_t id;
	char *label, *revision, *commit, *started;	/* NULL: none */
	size_t rev;		/* its revision: index into history.revs */
};

/* One run's dilation of one series. */
struct history_point {
	size_t run;		/* index into history.runs */
	int ok;			/* the run has this series compared */
	const char *reason;	/* when !ok (the model's) */
	double value;		/* the statistic of the variant (NaN when none) */
	double pct;		/* its dilation in % */
	struct interval ci;	/* of pct, the report's */
	size_t n;		/* the variant's measured runs */
	enum decide_verdict verdict;	/* the report's verdict */
	int tested;
	double *ratios;		/* the variant's values / its baseline's median */
	size_t n_ratios;
};

struct history_series {
	char *workload, *variant, *metric, *unit;
	struct history_point *pts;	/* by run, n_pts of them */
	size_t n_pts, alloc_pts;
	size_t *cp_rev;		/* the series' revisions (into history.revs)
				   as the change points index them */
	size_t n_cp_rev;
	struct changepoints cps;	/* index: into cp_rev */
	/* history_opts.newest: the newest revision against the others pooled
	   (stats_newest_change()) */
	int has_newest;
	struct changepoint newest;
};

struct history {
	char *study;		/* the study's name */
	const char *order;	/* "commit" or "time" */
	char *repo;		/* the repository ordered by, or NULL */
	const char *statistic;	/* the dilation's statistic: "median", ... */
	double confidence;
	double sig;		/* the change points' level */
	double min_change;	/* in %: o.cp.min_magnitude */
	struct history_run *runs;
	size_t n_runs;
	char **revs;		/* a revision's name: describe, label or "run N" */
	size_t n_revs;
	struct history_series *series;
	size_t n_series, alloc_series;
};

/*
 * Build the history of o->study.  0, or -1 (printed; *usage_error set
 * when it is the input's fault: no such study, no run of it, a filter
 * that matches nothing).  h is released with history_release() either way.
 */
int history_build(struct store *st, const struct history_opts *o, struct history *h,
		  int *usage_error);
/* history_build() in two steps, for a caller that checks names against the
 * picked runs (h->runs) in between: history_pick() finds and orders the
 * study's runs, history_measure() their series and change points. */
int history_pick(struct store *st, const struct history_opts *o, struct history *h,
		 int *usage_error);
int history_measure(struct store *st, const struct history_opts *o, struct history *h,
		    int *usage_error);
void history_release(struct history *h);

/* The writers: format "text", "markdown", "csv", "json" or "html".  0, or
 * -1 for an unknown format (nothing written). */
int history_write(const struct history *h, const char *format, FILE *out);
#define HISTORY_FORMATS "text, markdown, csv, json or html"

/* One sentence, without a full stop, of change point c of s: the
 * revisions on either side, the dilation before and after, the change with
 * its interval and p. */
void history_cp_sentence(const struct history *h, const struct history_series *s,
			 const struct changepoint *c, char *buf, size_t len);
/* perturb gate --history's lines: per series PASS, or FAIL when a change
 * point at the newest run raises the dilation (history_newest_change()).
 * Returns the FAILs. */
size_t history_gate_write(const struct history *h, FILE *out);

/* A change point's revision names: before (index - 1) and at. */
const char *history_cp_before(const struct history *h, const struct history_series *s,
			      const struct changepoint *c);
const char *history_cp_at(const struct history *h, const struct history_series *s,
			  const struct changepoint *c);

/*
 * perturb gate --history N: the change at the newest run, or NULL when it
 * is not significant at o.cp's level or smaller than o.cp.min_magnitude %.  The history is built with o.last =
 * N + 1, o.upto = the judged run, time order and o.newest: each series'
 * newest revision (the judged run's, and runs of its commit just before
 * it) against the N runs before it pooled, by stats_newest_change(): an
 * exact permutation test whose p is at least 1/(revisions).
 */
const struct changepoint *history_newest_change(const struct history *h,
						const struct history_series *s);
/* The point of s of the history's newest run, or NULL when s has none. */
const struct history_point *history_newest_point(const struct history *h,
						 const struct history_series *s);

#endif
