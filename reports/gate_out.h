/*
 * gate_out.h - the judgements of `perturb gate` (reports/gate.h judges
 * them) and their outputs: the text table on standard output, JUnit XML (a
 * testcase per judgement) and a Markdown summary.
 *
 * A judgement compares the confidence interval of a dilation in % with a
 * rule's threshold: FAIL when the lower bound is above it, PASS when the
 * upper bound is below it, INCONCLUSIVE otherwise or without an interval.
 * The outputs print the interval of the step of Holm's procedure that
 * decided the judgement, with its level; when that level is not the rule's
 * own (Holm widened it), a footnote says why (gate_print, the Markdown).
 */
#ifndef PERTURB_REPORTS_GATE_OUT_H
#define PERTURB_REPORTS_GATE_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "engine/config.h"

enum gate_verdict { GATE_PASS, GATE_FAIL, GATE_INCONCLUSIVE };
/* "PASS", "FAIL", "INCONCLUSIVE" */
extern const char *const gate_verdict_names[];

struct gate_judgement {
	const struct gate_rule *rule;
	const char *variant, *workload;	/* the run's names */
	double thr;			/* threshold in % */
	double alpha;			/* 1 - rule confidence */
	/* result */
	int has_ci, decided;
	const char *reason;		/* no interval: why */
	double est, lo, hi, level;
	size_t n;			/* the smaller side */
	enum gate_verdict verdict;
	double runs_needed;		/* inconclusive: gate_runs_needed() */
	/* no_pct: the baseline's interval of the statistic holds 0, so the
	 * dilation has no percentage (reports/report.h, no_pct): the judgement
	 * is INCONCLUSIVE with reason DECIDE_NO_PCT, fails the gate (exit 1)
	 * with or without --strict, and abs is the difference in the metric's
	 * unit */
	int no_pct;
	double abs;
};

/* Does j fail the gate: FAIL, or INCONCLUSIVE with strict or no_pct? */
int gate_fails(const struct gate_judgement *j, int strict);

/*
 * Runs a side that would likely decide an inconclusive judgement: its
 * interval [lo, hi] at level (a fraction) from n runs a side (the smaller
 * side) around the estimate est contains the threshold thr.  The interval's
 * half-width shrinks like 1 / sqrt(n), so with the half-width h on the
 * threshold's side of the estimate (hi - est when thr > est, else est - lo:
 * bootstrap intervals need not be symmetric) and the distance d = |thr -
 * est|, the normal-approximation sample size for a test of level 1 - level
 * and the given power (stats_power_z(), stats/stats.h: the power formula
 * the report's detectable effect uses too, reports/report.h) is
 *   N = n (h / d)^2 ((z(1 - (1 - level)/2) + z(power)) / z(1 - (1 - level)/2))^2
 * runs a side, rounded up; power 0.5 gives n (h / d)^2, the n at which the
 * interval would just reach the threshold.  It assumes the estimate and
 * the spread stay as measured.  INFINITY when d = 0 (no number of runs
 * decides it unless the estimate moves), NaN when it cannot be estimated
 * (n = 0, no finite interval, or h <= 0).
 */
double gate_runs_needed(size_t n, double est, double lo, double hi, double thr, double level,
			double power);
/* The power gate_runs_needed() is asked for by perturb gate. */
#define GATE_POWER 0.8
/* Above this many times the runs done, gate_more_runs() says only "more
 * than" that many: an estimate that far out says the threshold is too
 * close to decide, not how many runs it takes. */
#define GATE_RUNS_CAP_FACTOR 100
/* What an inconclusive judgement would need, one clause for messages
 * (malloc'd): "about 36 more runs a side (46 in all, now 10) would decide it
 * with 80 % probability if ...", "more than 1000 runs a side (now 10) ...",
 * or why it cannot be said. */
char *gate_more_runs(const struct gate_judgement *j);

/* What the outputs show: the judgements of one run; strict: inconclusive
 * judgements count as failed. */
struct gate_outcome {
	int64_t run_id;
	const struct gate_judgement *j;
	size_t n;
	int strict;
	/* a run whose plan is not all stored, judged as asked
	 * (--allow-incomplete): how much is missing, said under the table, in
	 * Markdown and in JUnit; NULL for a complete run */
	const char *incomplete;
};

/* The table of judgements, one line each, with a header line. */
void gate_print(FILE *f, const struct gate_outcome *o);
/* One sentence describing a judgement, for messages (malloc'd). */
char *gate_describe(const struct gate_judgement *j);
/* Write JUnit XML, or the Markdown summary, to path: through a temporary
 * file beside it and a rename, never a half-written file.  0, or -1
 * (printed). */
int gate_write_junit(const char *path, const struct gate_outcome *o);
int gate_write_markdown(const char *path, const struct gate_outcome *o);

#endif
