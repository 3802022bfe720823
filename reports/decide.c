/* decide.c - verdicts from intervals, Holm's step-down; see decide.h */
#include "decide.h"
#include "stats/stats.h"

#include <math.h>

enum decide_verdict decide_interval(int has_ci, double lo, double hi, double t)
{
	if (!has_ci || !isfinite(lo) || !isfinite(hi))
		return DECIDE_UNDECIDED;
	if (lo > t)
		return DECIDE_ABOVE;
	if (hi < t)
		return DECIDE_BELOW;
	return DECIDE_UNDECIDED;
}

int decide_holm(struct decide_item *items, size_t m, decide_interval_fn *fn, void *ctx)
{
	size_t k = 0;

	for (size_t i = 0; i < m; i++) {
		items[i].verdict = DECIDE_UNDECIDED;
		items[i].has_ci = 0;
		items[i].lo = items[i].hi = NAN;
		items[i].level = NAN;
	}
	for (;;) {
		size_t newly = 0;

		for (size_t i = 0; i < m; i++) {
			struct decide_item *it = &items[i];
			double level = 1 - it->alpha / (double)(m - k), lo, hi;
			int rc;

			if (it->verdict != DECIDE_UNDECIDED)
				continue;
			if ((rc = fn(ctx, i, level, &lo, &hi)) < 0)
				return -1;
			it->level = level;
			it->has_ci = rc > 0;
			it->lo = rc > 0 ? lo : NAN;
			it->hi = rc > 0 ? hi : NAN;
			it->verdict = decide_interval(it->has_ci, it->lo, it->hi, it->t);
			newly += it->verdict != DECIDE_UNDECIDED;
		}
		k += newly;
		if (!newly || k == m)
			break;
	}
	return 0;
}

static void negate(struct interval *iv)
{
	double lo = iv->lo;

	iv->lo = -iv->hi;
	iv->hi = -lo;
}

int decide_pct_guard(struct dilation *d, int sign)
{
	if (sign > 0)
		return 0;
	if (sign < 0) {
		d->pct = -d->pct;
		negate(&d->ci_pct);
		return 0;
	}
	d->pct = NAN;
	d->ci_pct.has_ci = 0;
	d->ci_pct.lo = d->ci_pct.hi = NAN;
	if (!(d->base == 0.0 && d->ci_pct.reason))	/* "baseline statistic is 0" stays */
		d->ci_pct.reason = DECIDE_NO_PCT;
	return 1;
}
