/*
 * decide.h - one way of deciding from intervals, for `perturb gate` and
 * `perturb compare`: a verdict reads the confidence interval of a change in
 * % against a threshold t, and nothing else (no separate test whose
 * p-value could disagree with the interval printed):
 *   ABOVE      lower bound > t   (gate: FAIL; compare: a regression over t,
 *                                 or, t = 0, a significant increase)
 *   BELOW      upper bound < t   (gate: PASS; compare with t = 0: a
 *                                 significant decrease)
 *   UNDECIDED  the interval holds t, or there is no interval.
 *
 * Several verdicts at once: Holm's step-down procedure (Holm, "A simple
 * sequentially rejective multiple test procedure", Scand. J. Statist. 6,
 * 1979) on the tests obtained by inverting the intervals.  Each verdict is
 * one hypothesis, "the change equals t"; with m hypotheses of which k are
 * decided so far, every undecided one is read from its interval at level
 * 1 - alpha_i / (m - k); the newly decided raise k and the step repeats
 * until a step decides nothing.  When the intervals of one hypothesis are
 * nested in the level (a bootstrap seeded the same at every level reads
 * the same replicates), this is Holm's procedure on the inverted-test
 * p-values and keeps the family-wise error rate at alpha.
 */
#ifndef PERTURB_REPORTS_DECIDE_H
#define PERTURB_REPORTS_DECIDE_H

#include <stddef.h>

enum decide_verdict { DECIDE_UNDECIDED, DECIDE_ABOVE, DECIDE_BELOW };

/* The verdict of one interval [lo, hi] against t (see above); UNDECIDED
 * when has_ci is 0 or a bound is not finite. */
enum decide_verdict decide_interval(int has_ci, double lo, double hi, double t);

/*
 * The interval of hypothesis i at level (in (0, 1)): fills *lo, *hi and
 * returns 1, or returns 0 when there is none, or -1 on an error (printed).
 */
typedef int decide_interval_fn(void *ctx, size_t i, double level, double *lo, double *hi);

struct decide_item {
	double t;		/* the threshold, in % */
	double alpha;		/* the family-wise level of its rule, e.g. 0.05 */
	/* filled by decide_holm */
	enum decide_verdict verdict;
	double level;		/* the level of the interval that decided it, or
				   of the last step's for an undecided one */
	int has_ci;
	double lo, hi;		/* that interval (NaN without one) */
};

/* Holm's step-down over items[0..m-1] (see above).  0, or -1 when fn
 * failed. */
int decide_holm(struct decide_item *items, size_t m, decide_interval_fn *fn, void *ctx);

/*
 * A percentage only of a baseline on one side of 0 (sign: stats_one_signed
 * of the baseline's statistic).  sign 1: d unchanged.  sign -1: d's % and
 * its interval are turned into the change over the baseline's magnitude,
 * 100 (var - base) / |base| (a ratio to a negative baseline has its sign
 * flipped: "+5 ns" over -10 ns would read "-50 %").  sign 0: d->pct NaN,
 * d->ci_pct without interval, reason DECIDE_NO_PCT.  Returns 1 when d has
 * no percentage (sign 0), else 0.  The one rule of the report model, gate
 * and compare.
 */
#define DECIDE_NO_PCT_KIND "no-percent"
#define DECIDE_NO_PCT "no-percent: the baseline's interval holds 0, so a ratio to it is " \
	"not a percentage; the difference is in the metric's unit"
struct dilation;
int decide_pct_guard(struct dilation *d, int sign);

#endif
