/*
 * gate_out.h - the judgements of `perturb gate` (harness/cli/cmd_gate.c
 * judges them) and their outputs: the text table on standard output, JUnit
 * XML (a testcase per judgement) and a Markdown summary.
 *
 * A judgement compares the confidence interval of a dilation in % with a
 * rule's threshold: FAIL when the lower bound is above it, PASS when the
 * upper bound is below it, INCONCLUSIVE otherwise or without an interval.
 * The outputs print the interval of the step of Holm's procedure that
 * decided the judgement, with its level.
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
	double more_runs;		/* inconclusive: estimate, NaN when unknown */
};

/* What the outputs show: the judgements of one run; strict: inconclusive
 * judgements count as failed. */
struct gate_outcome {
	int64_t run_id;
	const struct gate_judgement *j;
	size_t n;
	int strict;
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
