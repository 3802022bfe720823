/*
 * changepoint.h - change points in a series of revisions: E-divisive means
 * (Matteson & James, "A nonparametric approach for multiple change point
 * analysis of multivariate data", JASA 109(505), 2014) with significance by
 * permutation, as MongoDB (Daly et al., "The use of change point detection
 * to identify software performance regressions in a continuous integration
 * system", ICPE 2020) and Apache Otava (formerly Hunter: Fleming et al.,
 * "Hunter: using change point detection to hunt for performance
 * regressions", ICPE 2023) use it on performance histories.
 *
 * The series is a list of revisions in order, each with its runs' values
 * (all of them, not only their mean): x[] holds the runs of revision 0,
 * then those of revision 1, ..., group_len[k] runs for revision k.  A
 * change point is an index k: the change lies between revisions k - 1 and
 * k, never inside a revision.
 *
 * The divergence (Matteson & James, section 2: Szekely & Rizzo's energy
 * distance, "Hierarchical clustering via joint between-within distances",
 * J. Classification 22(2), 2005, with U-statistics within the samples):
 * for samples X (n values) and Y (m values) and an exponent alpha in (0, 2),
 *
 *   E(X, Y) = 2/(n m) sum_i sum_j |X_i - Y_j|^alpha
 *             - C(n,2)^-1 sum_{i<k} |X_i - X_k|^alpha
 *             - C(m,2)^-1 sum_{j<k} |Y_j - Y_k|^alpha,
 *   Q(X, Y) = n m / (n + m) E(X, Y).
 *
 * E is 0 in expectation when X and Y have one distribution and > 0 when
 * they differ in any way (location, spread, shape) whose alpha-th moments
 * exist; alpha = 1 is the usual choice, alpha -> 2 sees only the means.
 *
 * The search (Matteson & James, section 3): in a segment of revisions
 * [a, b), X = revisions [a, tau), Y = [tau, kappa) for a < tau < kappa <= b;
 * the segment's best split is (tau^, kappa^) = argmax Q(X, Y), q^ its Q.
 * Starting from the whole series, each step takes the best split over all
 * current segments and tests it: R times, the revisions of every segment
 * are shuffled (each revision keeps its runs together) and q^ is found
 * again, as the largest over the segments; p = (1 + #{q^* >= q^}) / (R + 1)
 * (Davison & Hinkley, "Bootstrap methods and their application", 1997,
 * eq. 4.11; Otava counts without the 1 + and so can give p = 0).  p <= sig
 * makes tau^ a change point and splits its segment; the first p > sig
 * stops the search.  Shuffling revisions rather than single runs keeps the
 * test honest when runs of one build resemble each other more than runs of
 * different builds (a revision is the unit that is exchangeable when
 * nothing changed); with one run per revision it is the paper's test.
 *
 * Each change point is then described by its adjacent segments (between
 * its neighbouring change points or the ends): the medians before and
 * after, the change in % = 100 (after - before) / before, and a
 * percentile-bootstrap interval of that change, the runs of the two
 * segments resampled independently (stats_dilation() with the median,
 * Efron & Tibshirani 1993, ch. 13).  Changes whose |change| is below
 * min_magnitude % are dropped, the smallest first, and their neighbours
 * described again on the merged segments (as Otava's merge step does; a
 * change whose median before is 0 has no % and is kept).  p and q^ stay
 * those of the test that found the change.
 *
 * Conventions are those of stats.h: inputs are never modified; NaN or
 * infinite values give -EDOM; too short a series is a fact (reason set),
 * not an error; the same inputs and seed give the same answer everywhere
 * (GSL MT19937; the seed's low 32 bits count).
 */
#ifndef PERTURB_STATS_CHANGEPOINT_H
#define PERTURB_STATS_CHANGEPOINT_H

#include <stddef.h>
#include <stdint.h>
#include "stats.h"

/* Zero fields take the default in brackets. */
struct cp_opts {
	double alpha;		/* exponent in (0, 2) [1] */
	size_t min_seg;		/* revisions on each side of a split at least [2];
				   a side also needs 2 runs */
	unsigned permutations;	/* R per test [199] */
	double sig;		/* significance level in (0, 1) [0.05] */
	uint64_t seed;		/* of the permutations and the bootstrap */
	/*
	 * window: 0 for the whole series [0], else W >= 2 min_seg revisions:
	 * the search runs on windows of W revisions that overlap by half
	 * ([0, W), [W/2, 3W/2), ..., the last one ending at the series' end;
	 * Otava's split step) and keeps the union of their change points
	 * (where two lie closer than min_seg, the one with the smaller p).
	 * What it trades: a change is judged against W revisions around it
	 * rather than the whole history, so a small step late in a long series
	 * that is drowned by larger old ones (q^ favours long, very different
	 * segments) is seen, and a permutation costs O(G W) instead of O(G^2)
	 * for G revisions.  But a step is seen with W/2 revisions a side at
	 * most (less power for a small step between long flat stretches), and
	 * every window is a test of its own: to keep the false-alarm rate of
	 * a flat series at sig, each runs at sig / windows (Bonferroni), which
	 * needs more permutations (see stats_changepoints()).
	 */
	size_t window;
	double min_magnitude;	/* in %: changes with |change| below it are not
				   reported [0: every significant change] */
	double conf;		/* of the change's interval, in (0, 1) [0.95] */
	unsigned boot_B;	/* bootstrap resamples [2000] */
};

struct changepoint {
	size_t index;		/* the change lies between revisions index - 1 and index */
	size_t lo, hi;		/* the adjacent segments: revisions [lo, index)
				   before, [index, hi) after */
	/* how it was found: q^ = Q(revisions [search_lo, index),
	   [index, kappa)), the best split when it was tested; order 1 for the
	   first change accepted (in its window) */
	double qhat;
	size_t search_lo, kappa;
	unsigned order;
	double p;		/* permutation p of that test, <= sig_each */
	unsigned permutations;	/* R behind p */
	double median_before, median_after;	/* type 7, of the adjacent segments' runs */
	double pct;		/* 100 (after - before) / before; NaN when before is 0 */
	struct interval ci;	/* of pct (percentile bootstrap; has_ci 0 and
				   reason when a side has fewer than 2 runs or a
				   resampled median before is 0) */
};

struct changepoints {
	struct changepoint *cp;	/* n entries by index, malloc'd (NULL when n is 0) */
	size_t n;
	size_t windows;		/* windows searched; 1: the whole series */
	double sig_each;	/* the level each test ran at: sig / windows */
	size_t dropped_small;	/* significant changes dropped by min_magnitude */
	const char *reason;	/* why nothing was searched, else NULL */
	const char *method;
};

/*
 * The change points of a series of n_groups revisions (see above): x holds
 * sum(group_len) values, revision k's runs at x[group_len[0] + ... +
 * group_len[k-1]] on.  o NULL: every default.  Fills *out (release it with
 * stats_changepoints_release(); zeroed on error).
 *
 * Edge cases: a series with fewer than 2 min_seg revisions or 4 runs has no
 * split to test: n = 0 and reason says so.  A constant series has q^ = 0
 * at every split and every shuffle ties it: p = 1, no change point.
 *
 * Cost: sum(group_len)^2 distances once (the sums per pair of revisions),
 * then O(L^2) per segment of L revisions per permutation (2-D prefix sums
 * over the revisions' pairwise sums give each Q in O(1)), so a test of
 * the whole series is O(R G^2) with 2 (G + 1)^2 doubles of memory, and
 * with a window O(R G W) and 2 (W + 1)^2.  A test stops early once its p
 * is certain to exceed the level (at most R permutations).
 *
 * Errors: -EINVAL (x, group_len or out NULL, n_groups 0, a revision
 * without runs, an option out of range, or R + 1 < 1 / sig_each: no p could
 * reach the level, e.g. sig 0.05 in 10 windows needs R >= 199), -EDOM
 * (a value NaN or infinite), -ENOMEM.
 */
int stats_changepoints(const double *x, const size_t *group_len, size_t n_groups,
		       const struct cp_opts *o, struct changepoints *out);
void stats_changepoints_release(struct changepoints *cps);

/*
 * The best split of one segment, the whole series of n_groups revisions:
 * *tau, *kappa and *qhat as defined above over every tau, kappa with at
 * least min_seg revisions (>= 1) and 2 runs on each side; the first
 * maximum in (tau, kappa) order.  No split possible: 0, *tau = *kappa = 0,
 * *qhat NaN.  Errors as stats_changepoints() (alpha must be in (0, 2)).
 */
int stats_energy_split(const double *x, const size_t *group_len, size_t n_groups,
		       double alpha, size_t min_seg, size_t *tau, size_t *kappa,
		       double *qhat);

/*
 * Is the newest revision different from the others pooled (perturb gate
 * --history)?  The statistic is Q(X = revisions [0, G - 1) pooled, Y =
 * revision G - 1), as above.  When nothing changed the revisions are
 * exchangeable, and the newest is any of the G with the same chance: its
 * null distribution is that of Q with each revision held out in turn
 * against the other G - 1 pooled, all G of them (an exact permutation test
 * of the held-out revision, no random draws), so
 *   p = #{g : Q_g >= Q_(G-1)} / G,
 * at least 1 / G: G >= 20 revisions reach 0.05.  A revision with fewer
 * than 2 runs is not held out.  All pairwise distances once: O(N^2) for N
 * runs.  The change is described as a change point at index G - 1 with lo
 * 0 and hi G (median before and after, the % change and its bootstrap
 * interval as stats_changepoints() describes one), qhat Q_(G-1),
 * permutations G and order 1.  With fewer than 2 runs on a side: p, qhat
 * and pct NaN, ci.reason set.  o: alpha, conf, boot_B and seed count
 * (NULL: defaults).  Errors: -EINVAL (NULL, n_groups < 2, an empty
 * revision, an option out of range), -EDOM, -ENOMEM.
 */
int stats_newest_change(const double *x, const size_t *group_len, size_t n_groups,
			const struct cp_opts *o, struct changepoint *out);

/*
 * Q(X, Y) of two samples directly from the definition above, O((n + m)^2).
 * n, m >= 2, alpha in (0, 2).  -EINVAL, -EDOM; *q NaN then.
 */
int stats_energy_qhat(const double *x, size_t n, const double *y, size_t m,
		      double alpha, double *q);

#endif
