/*
 * test_changepoint.c - change points in a series of revisions
 * (stats/changepoint.h): the energy statistic, the best split and the
 * permutation p against R (tests/reference/gen_changepoint.R: energy's
 * edist and the search and test written out in R); changes found where
 * they were put, and none in flat series more often than the level says;
 * the coverage of the change's interval.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include "stats/changepoint.h"
#include "reference/changepoint_fixtures.h"

/* ---- against R ---- */

static size_t runs_before(const size_t *len, size_t g)
{
	size_t n = 0;

	for (size_t i = 0; i < g; i++)
		n += len[i];
	return n;
}

Test(changepoint, energy_statistic_and_best_split_match_r)
{
	size_t nq = 0, nsplit = 0;
	double worst = 0;

	for (size_t s = 0; s < sizeof(fx_cp_series) / sizeof(fx_cp_series[0]); s++) {
		const struct fx_cp_series *f = &fx_cp_series[s];

		for (size_t i = 0; i < f->nq; i++) {
			const struct fx_cp_q *r = &f->q[i];
			size_t a = runs_before(f->len, r->lo), t = runs_before(f->len, r->tau);
			size_t k = runs_before(f->len, r->kappa);
			double q;

			cr_assert_eq(stats_energy_qhat(f->x + a, t - a, f->x + t, k - t, f->alpha, &q), 0);
			cr_expect(fabs(q - r->q) <= 1e-10 * fmax(1, fabs(r->q)),
				  "%s [%zu, %zu, %zu): %.17g, R %.17g", f->name, r->lo, r->tau,
				  r->kappa, q, r->q);
			worst = fmax(worst, fabs(q - r->q) / fmax(1, fabs(r->q)));
			nq++;
		}
		for (size_t i = 0; i < f->nsplit; i++) {
			const struct fx_cp_split *r = &f->split[i];
			size_t tau, kappa;
			double q;

			cr_assert_eq(stats_energy_split(f->x + runs_before(f->len, r->lo), f->len + r->lo,
							r->hi - r->lo, f->alpha, f->min_seg, &tau,
							&kappa, &q), 0);
			cr_expect(tau == r->tau && kappa == r->kappa, "%s [%zu, %zu): (%zu, %zu), R (%zu, %zu)",
				  f->name, r->lo, r->hi, tau, kappa, r->tau, r->kappa);
			cr_expect(fabs(q - r->q) <= 1e-10 * fmax(1, fabs(r->q)),
				  "%s [%zu, %zu): q %.17g, R %.17g", f->name, r->lo, r->hi, q, r->q);
			worst = fmax(worst, fabs(q - r->q) / fmax(1, fabs(r->q)));
			nsplit++;
		}
	}
	cr_log_info("energy statistic: %zu Q and %zu best splits against R, "
		    "largest relative difference %.3g", nq, nsplit, worst);
	cr_expect(nq >= 50 && nsplit >= 20);
}

/*
 * Both p are Monte-Carlo estimates of the same exact permutation p from
 * R = FX_CP_REF_R shuffles each (independent streams): their difference
 * has sd sqrt(p (1 - p) 2 / R); 4 sd (+ 2 / R for the discreteness) is
 * exceeded by chance once in 15000 comparisons.  Where R's tests all
 * decide clearly (p not within that tolerance of 0.05), the change
 * points must be the same, in the same order.
 */
Test(changepoint, permutation_p_and_change_points_match_r)
{
	size_t np = 0;
	double worst = 0;

	for (size_t s = 0; s < sizeof(fx_cp_series) / sizeof(fx_cp_series[0]); s++) {
		const struct fx_cp_series *f = &fx_cp_series[s];
		struct cp_opts o = { .alpha = f->alpha, .min_seg = f->min_seg,
				     .permutations = FX_CP_REF_R, .sig = 0.05, .seed = 7 };
		struct changepoints c;
		int clear = 1;

		cr_assert_eq(stats_changepoints(f->x, f->len, f->groups, &o, &c), 0);
		for (size_t i = 0; i < f->np; i++) {
			double tol = 4 * sqrt(f->p[i] * (1 - f->p[i]) * 2.0 / FX_CP_REF_R) +
				     2.0 / FX_CP_REF_R;

			clear &= fabs(f->p[i] - 0.05) > tol;
			for (size_t j = 0; j < c.n; j++)
				if (c.cp[j].order == i + 1) {
					cr_expect(fabs(c.cp[j].p - f->p[i]) <= tol,
						  "%s test %zu: p %g, R %g (tolerance %g)", f->name,
						  i + 1, c.cp[j].p, f->p[i], tol);
					worst = fmax(worst, fabs(c.cp[j].p - f->p[i]));
					np++;
				}
		}
		if (clear) {
			cr_expect_eq(c.n, f->ncps, "%s: %zu change points, R %zu", f->name, c.n, f->ncps);
			for (size_t j = 0; j < c.n && c.n == f->ncps; j++)
				cr_expect_eq(c.cp[j].index, f->cps[c.cp[j].order - 1], "%s", f->name);
		}
		stats_changepoints_release(&c);

		/* the first test's p also where it is not significant: sig 0.999
		   lets every test run all its permutations */
		o.sig = 0.999;
		cr_assert_eq(stats_changepoints(f->x, f->len, f->groups, &o, &c), 0);
		for (size_t j = 0; j < c.n; j++)
			if (c.cp[j].order == 1 && f->np) {
				double tol = 4 * sqrt(f->p[0] * (1 - f->p[0]) * 2.0 / FX_CP_REF_R) +
					     2.0 / FX_CP_REF_R;

				cr_expect(fabs(c.cp[j].p - f->p[0]) <= tol, "%s first test: p %g, R %g",
					  f->name, c.cp[j].p, f->p[0]);
				worst = fmax(worst, fabs(c.cp[j].p - f->p[0]));
				np++;
			}
		stats_changepoints_release(&c);
	}
	cr_log_info("permutation p: %zu against R, largest difference %.4f", np, worst);
	cr_expect(np >= 10);
}

/* ---- synthetic series with known changes ---- */

struct series {
	double *x;
	size_t *len;
	size_t G, N;
};

struct step {
	size_t at;		/* the first revision of the new level */
	double factor;
};

/*
 * G revisions of lo..hi runs each (uniform), value level (1 + sd z) with z
 * standard normal, the level 100 times the factors of the steps reached;
 * a revision effect of sd rev_sd (relative) shifts all of a revision's
 * runs alike.
 */
static struct series make(gsl_rng *r, size_t G, size_t lo, size_t hi, double sd,
			  double rev_sd, const struct step *steps, size_t nsteps)
{
	struct series s = { .G = G };

	s.len = malloc(G * sizeof(*s.len));
	s.x = malloc(G * hi * sizeof(*s.x));
	cr_assert(s.len && s.x);
	for (size_t g = 0; g < G; g++) {
		double level = 100, eff = rev_sd ? gsl_ran_gaussian(r, rev_sd) : 0;

		for (size_t k = 0; k < nsteps; k++)
			if (g >= steps[k].at)
				level *= steps[k].factor;
		s.len[g] = lo + gsl_rng_uniform_int(r, hi - lo + 1);
		for (size_t i = 0; i < s.len[g]; i++)
			s.x[s.N++] = level * (1 + eff + gsl_ran_gaussian(r, sd));
	}
	return s;
}

static void series_free(struct series *s)
{
	free(s->x);
	free(s->len);
}

Test(changepoint, one_step_is_found_between_the_right_revisions)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	struct step st = { 23, 1.05 };
	struct cp_opts o = { .seed = 1 };
	struct changepoints c;
	struct series s;

	gsl_rng_set(r, 11);
	s = make(r, 40, 2, 6, 0.01, 0, &st, 1);
	cr_assert_eq(stats_changepoints(s.x, s.len, s.G, &o, &c), 0);
	cr_assert_eq(c.n, 1, "found %zu", c.n);
	/* a revision's index, not a run's (23 revisions hold about 90 runs) */
	cr_expect_eq(c.cp[0].index, 23);
	cr_expect(c.cp[0].lo == 0 && c.cp[0].hi == 40);
	/* no shuffle comes near this step: p = (1 + 0) / (R + 1), never 0 */
	cr_expect(c.cp[0].p == 1.0 / 200 && c.cp[0].permutations == 199 && c.cp[0].order == 1,
		  "p %g", c.cp[0].p);
	cr_expect(c.cp[0].search_lo == 0 && c.cp[0].kappa > 23 && c.cp[0].qhat > 0);
	cr_expect(fabs(c.cp[0].median_before - 100) < 1, "%g", c.cp[0].median_before);
	cr_expect(fabs(c.cp[0].median_after - 105) < 1, "%g", c.cp[0].median_after);
	cr_expect(fabs(c.cp[0].pct - 5) < 1, "%g", c.cp[0].pct);
	cr_expect(c.cp[0].ci.has_ci && c.cp[0].ci.lo < 5 && 5 < c.cp[0].ci.hi,
		  "[%g, %g]", c.cp[0].ci.lo, c.cp[0].ci.hi);
	cr_expect(c.windows == 1 && c.sig_each == 0.05 && !c.reason && c.method);
	stats_changepoints_release(&c);
	series_free(&s);
	gsl_rng_free(r);
}

Test(changepoint, two_steps_are_found_where_they_are)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	struct step st[] = { { 20, 1.04 }, { 41, 0.97 } };
	struct cp_opts o = { .seed = 2 };
	struct changepoints c;
	struct series s;

	gsl_rng_set(r, 12);
	s = make(r, 60, 3, 3, 0.01, 0, st, 2);
	cr_assert_eq(stats_changepoints(s.x, s.len, s.G, &o, &c), 0);
	cr_assert_eq(c.n, 2, "found %zu", c.n);
	cr_expect(c.cp[0].index == 20 && c.cp[1].index == 41, "%zu %zu", c.cp[0].index,
		  c.cp[1].index);
	/* each described on its adjacent segments */
	cr_expect(c.cp[0].lo == 0 && c.cp[0].hi == 41 && c.cp[1].lo == 20 && c.cp[1].hi == 60);
	cr_expect(fabs(c.cp[0].pct - 4) < 1 && fabs(c.cp[1].pct + 3) < 1, "%g %g",
		  c.cp[0].pct, c.cp[1].pct);
	cr_expect(c.cp[0].ci.lo < 4 && 4 < c.cp[0].ci.hi);
	cr_expect(c.cp[1].ci.lo < -3 && -3 < c.cp[1].ci.hi);
	stats_changepoints_release(&c);
	series_free(&s);
	gsl_rng_free(r);
}

/*
 * 100 flat series: the search's first test is at level sig = 0.05, so a
 * series has a false change point with probability <= 0.05 and their
 * number X is at most Bin(100, 0.05): P(X >= 12) = 0.0043, so more than
 * 11 fails.  With a revision effect as large as the runs' noise (builds
 * differ), revisions are still exchangeable and the bound holds; shuffling
 * single runs (every run passed as a revision of its own) breaks it, and
 * this test must see that.  Windows of 40 in 120 revisions (5 windows,
 * each at 0.01) keep the same bound.
 */
static size_t false_alarms(size_t G, double rev_sd, size_t window, int runs_alone,
			   size_t *windows)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	size_t alarms = 0;

	gsl_rng_set(r, 100 + G + window);
	for (int k = 0; k < 100; k++) {
		struct cp_opts o = { .seed = (uint64_t)k, .window = window };
		struct series s = make(r, G, 2, 4, 0.02, rev_sd, NULL, 0);
		struct changepoints c;

		if (runs_alone) {	/* every run a revision of its own */
			s.len = realloc(s.len, s.N * sizeof(*s.len));
			cr_assert(s.len);
			for (size_t i = 0; i < s.N; i++)
				s.len[i] = 1;
			s.G = s.N;
		}
		cr_assert_eq(stats_changepoints(s.x, s.len, s.G, &o, &c), 0);
		alarms += c.n > 0;
		*windows = c.windows;
		stats_changepoints_release(&c);
		series_free(&s);
	}
	gsl_rng_free(r);
	return alarms;
}

Test(changepoint, flat_series_raise_no_more_false_alarms_than_the_level)
{
	size_t w, plain = false_alarms(30, 0, 0, 0, &w), builds = false_alarms(30, 0.02, 0, 0, &w);
	size_t runs = false_alarms(30, 0.02, 0, 1, &w), windowed = false_alarms(120, 0, 40, 0, &w);

	cr_log_info("false alarms in 100 flat series at sig 0.05: %zu, with revision "
		    "effects %zu (%zu if runs were shuffled alone), in %zu windows %zu",
		    plain, builds, runs, w, windowed);
	cr_expect(plain <= 11, "%zu of 100", plain);
	cr_expect(builds <= 11, "%zu of 100 with revision effects", builds);
	cr_expect(runs > 11, "%zu of 100 with runs shuffled alone", runs);
	cr_expect_eq(w, 5);
	cr_expect(windowed <= 11, "%zu of 100 in windows", windowed);
}

/*
 * The change's interval, as printed: 200 series of 30 revisions x 4 runs,
 * noise 2 %, a +5 % step at revision 15 (true change of the medians: 5 %
 * exactly).  It must be found at 15 in at least 95 % of the series (a
 * further change found elsewhere is a false alarm, tested above), and
 * where it is, its 95 % interval must cover 5 as often as coverage 0.95
 * allows: at least found 0.95 - 3.09 sd of Bin(found, 0.95), the 0.1 %
 * quantile in the normal approximation (177 of 196; exactly 176).
 */
Test(changepoint, the_change_interval_covers_the_true_change)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	struct step st = { 15, 1.05 };
	size_t found = 0, cover = 0;

	gsl_rng_set(r, 2025);
	for (int k = 0; k < 200; k++) {
		struct cp_opts o = { .seed = (uint64_t)k };
		struct series s = make(r, 30, 4, 4, 0.02, 0, &st, 1);
		struct changepoints c;

		cr_assert_eq(stats_changepoints(s.x, s.len, s.G, &o, &c), 0);
		for (size_t i = 0; i < c.n; i++)
			if (c.cp[i].index == 15) {
				found++;
				cover += c.cp[i].ci.has_ci && c.cp[i].ci.lo <= 5 && 5 <= c.cp[i].ci.hi;
			}
		stats_changepoints_release(&c);
		series_free(&s);
	}
	cr_log_info("change interval: found at the step in %zu of 200, covers 5 %% in %zu",
		    found, cover);
	cr_expect(found >= 190, "found in %zu of 200", found);
	cr_expect((double)cover >= 0.95 * (double)found - 3.09 * sqrt(found * 0.95 * 0.05),
		  "covered %zu of %zu", cover, found);
	gsl_rng_free(r);
}

Test(changepoint, min_magnitude_drops_small_significant_changes)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	struct step st[] = { { 15, 1.015 }, { 30, 1.08 } };
	struct cp_opts o = { .seed = 3 };
	struct changepoints c;
	struct series s;

	gsl_rng_set(r, 13);
	s = make(r, 45, 5, 5, 0.005, 0, st, 2);
	cr_assert_eq(stats_changepoints(s.x, s.len, s.G, &o, &c), 0);
	cr_assert_eq(c.n, 2);
	cr_expect(c.cp[0].index == 15 && fabs(c.cp[0].pct - 1.5) < 0.5, "%g", c.cp[0].pct);
	stats_changepoints_release(&c);

	o.min_magnitude = 2;
	cr_assert_eq(stats_changepoints(s.x, s.len, s.G, &o, &c), 0);
	cr_assert_eq(c.n, 1);
	cr_expect_eq(c.dropped_small, 1);
	/* the +8 % step is now described against everything before it */
	cr_expect(c.cp[0].index == 30 && c.cp[0].lo == 0 && c.cp[0].hi == 45);
	cr_expect(c.cp[0].pct > 7 && c.cp[0].pct < 10, "%g", c.cp[0].pct);
	stats_changepoints_release(&c);
	series_free(&s);
	gsl_rng_free(r);
}

Test(changepoint, windows_find_each_change_once)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	struct step st[] = { { 50, 1.05 }, { 120, 0.95 }, { 170, 1.04 } };
	struct cp_opts o = { .seed = 4, .window = 60 };
	struct changepoints c;
	struct series s;

	gsl_rng_set(r, 14);
	s = make(r, 200, 2, 2, 0.01, 0, st, 3);
	cr_assert_eq(stats_changepoints(s.x, s.len, s.G, &o, &c), 0);
	cr_expect_eq(c.windows, 6);	/* 0, 30, ..., 120, then 140 */
	cr_expect(fabs(c.sig_each - 0.05 / 6) < 1e-15);
	cr_assert_eq(c.n, 3, "found %zu", c.n);
	for (size_t i = 0; i < 3; i++)
		cr_expect_eq(c.cp[i].index, st[i].at);
	cr_expect(c.cp[1].lo == 50 && c.cp[1].hi == 170);
	stats_changepoints_release(&c);
	series_free(&s);
	gsl_rng_free(r);
}

Test(changepoint, the_seed_decides_the_p)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	struct step st = { 12, 1.02 };
	struct cp_opts o = { .seed = 5, .sig = 0.5 };
	struct changepoints a, b;
	struct series s;

	gsl_rng_set(r, 15);
	s = make(r, 24, 2, 2, 0.02, 0, &st, 1);
	cr_assert_eq(stats_changepoints(s.x, s.len, s.G, &o, &a), 0);
	cr_assert_eq(stats_changepoints(s.x, s.len, s.G, &o, &b), 0);
	cr_assert(a.n >= 1 && a.n == b.n);
	for (size_t i = 0; i < a.n; i++)
		cr_expect(a.cp[i].index == b.cp[i].index && a.cp[i].p == b.cp[i].p &&
			  a.cp[i].ci.lo == b.cp[i].ci.lo);
	stats_changepoints_release(&b);
	o.seed = 6;
	cr_assert_eq(stats_changepoints(s.x, s.len, s.G, &o, &b), 0);
	cr_expect(b.n >= 1 && (a.cp[0].p != b.cp[0].p || a.cp[0].ci.lo != b.cp[0].ci.lo));
	stats_changepoints_release(&a);
	stats_changepoints_release(&b);
	series_free(&s);
	gsl_rng_free(r);
}

Test(changepoint, edges_and_bad_input)
{
	double x[40], bad[6] = { 1, 2, NAN, 4, 5, 6 };
	size_t one[40], zero[3] = { 1, 0, 1 }, tau, kappa;
	struct cp_opts o = { 0 };
	struct changepoints c;
	double q;

	for (size_t i = 0; i < 40; i++) {
		x[i] = 7;
		one[i] = 1;
	}
	/* constant: Q is 0 everywhere, every shuffle ties it */
	cr_assert_eq(stats_changepoints(x, one, 40, NULL, &c), 0);
	cr_expect(c.n == 0 && !c.reason && !c.cp);
	stats_changepoints_release(&c);
	/* too short: 3 revisions, min_seg 2 */
	cr_assert_eq(stats_changepoints(x, one, 3, NULL, &c), 0);
	cr_expect(c.n == 0 && c.reason);
	/* 4 revisions of 1 run: min_seg 2 and 2 runs a side fit exactly */
	x[2] = x[3] = 8;
	cr_assert_eq(stats_energy_split(x, one, 4, 1, 2, &tau, &kappa, &q), 0);
	cr_expect(tau == 2 && kappa == 4 && q > 0);
	cr_assert_eq(stats_energy_split(x, one, 3, 1, 1, &tau, &kappa, &q), 0);
	cr_expect(tau == 0 && kappa == 0 && isnan(q), "no side of 2 runs in 3");

	cr_expect_eq(stats_changepoints(bad, one, 6, NULL, &c), -EDOM);
	cr_expect(c.n == 0 && !c.cp);
	cr_expect_eq(stats_changepoints(x, zero, 3, NULL, &c), -EINVAL);
	cr_expect_eq(stats_changepoints(x, one, 0, NULL, &c), -EINVAL);
	cr_expect_eq(stats_changepoints(NULL, one, 4, NULL, &c), -EINVAL);
	cr_expect_eq(stats_changepoints(x, one, 4, NULL, NULL), -EINVAL);
	o.alpha = 2;
	cr_expect_eq(stats_changepoints(x, one, 40, &o, &c), -EINVAL);
	o.alpha = 0;
	o.sig = 1;
	cr_expect_eq(stats_changepoints(x, one, 40, &o, &c), -EINVAL);
	o.sig = 0;
	o.min_magnitude = -1;
	cr_expect_eq(stats_changepoints(x, one, 40, &o, &c), -EINVAL);
	o.min_magnitude = 0;
	o.window = 3;		/* < 2 min_seg */
	cr_expect_eq(stats_changepoints(x, one, 40, &o, &c), -EINVAL);
	/* 40 revisions in windows of 4: 19 windows at 0.05 / 19 need R >= 379 */
	o.window = 4;
	cr_expect_eq(stats_changepoints(x, one, 40, &o, &c), -EINVAL);
	o.permutations = 379;
	cr_assert_eq(stats_changepoints(x, one, 40, &o, &c), 0);
	cr_expect_eq(c.windows, 19);
	stats_changepoints_release(&c);
	o = (struct cp_opts){ .sig = 0.001, .permutations = 998 };
	cr_expect_eq(stats_changepoints(x, one, 40, &o, &c), -EINVAL);

	cr_expect_eq(stats_energy_qhat(x, 1, x, 4, 1, &q), -EINVAL);
	cr_expect(isnan(q));
	cr_expect_eq(stats_energy_qhat(bad, 3, x, 3, 1, &q), -EDOM);
	cr_expect_eq(stats_energy_split(x, one, 4, 0, 2, &tau, &kappa, &q), -EINVAL);
	cr_expect_eq(stats_energy_split(x, one, 4, 1, 0, &tau, &kappa, &q), -EINVAL);
}

/* ---- the newest revision against the others (perturb gate --history) ---- */

/*
 * Its Q is stats_energy_qhat() of the others pooled against the newest,
 * and its p the exact rank of that Q among every revision held out, both
 * computed here directly from the definition.
 */
Test(changepoint, newest_change_is_the_held_out_energy_rank)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	struct step st = { 24, 1.04 };
	struct cp_opts o = { .seed = 3 };
	struct changepoint c;
	struct series s;

	gsl_rng_set(r, 21);
	s = make(r, 25, 3, 5, 0.01, 0, &st, 1);
	cr_assert_eq(stats_newest_change(s.x, s.len, s.G, &o, &c), 0);
	{
		size_t N = s.N, m_last = s.len[s.G - 1], ge = 0;
		double q_last, *rest = malloc(N * sizeof(double));
		cr_assert(rest);
		cr_assert_eq(stats_energy_qhat(s.x, N - m_last, s.x + N - m_last, m_last, 1, &q_last),
			     0);
		cr_expect(fabs(c.qhat - q_last) <= 1e-9 * fabs(q_last), "%.17g vs %.17g", c.qhat,
			  q_last);
		for (size_t g = 0, off = 0; g < s.G; off += s.len[g++]) {
			size_t k = 0;
			double q;
			for (size_t i = 0; i < N; i++)
				if (i < off || i >= off + s.len[g])
					rest[k++] = s.x[i];
			cr_assert_eq(stats_energy_qhat(rest, k, s.x + off, s.len[g], 1, &q), 0);
			ge += q >= q_last * (1 - 1e-12);
		}
		cr_expect_eq(c.p, (double)ge / (double)s.G);
		free(rest);
	}
	/* a clear step at the newest: the smallest p there is, 1/G */
	cr_expect_eq(c.p, 1.0 / 25, "p %g", c.p);
	cr_expect(c.index == 24 && c.lo == 0 && c.hi == 25 && c.permutations == 25);
	cr_expect(fabs(c.pct - 4) < 2.5 && c.ci.has_ci && c.ci.lo < 4 && 4 < c.ci.hi, "%g [%g, %g]",
		  c.pct, c.ci.lo, c.ci.hi);
	series_free(&s);
	gsl_rng_free(r);
}

/* 100 flat series of 20 revisions: the test is exact, a false alarm (p <=
 * 0.05, i.e. the newest has the largest Q) has probability 1/20; more
 * than 11 of 100 has probability 0.0043.  With revision effects too. */
Test(changepoint, newest_change_false_alarms_stay_at_the_level)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	size_t alarms[2] = { 0, 0 };

	gsl_rng_set(r, 22);
	for (int e = 0; e < 2; e++)
		for (int k = 0; k < 100; k++) {
			struct series s = make(r, 20, 2, 4, 0.02, e ? 0.02 : 0, NULL, 0);
			struct changepoint c;
			cr_assert_eq(stats_newest_change(s.x, s.len, s.G, NULL, &c), 0);
			alarms[e] += c.p <= 0.05;
			series_free(&s);
		}
	cr_log_info("newest-change false alarms in 100 flat series: %zu, %zu with revision "
		    "effects", alarms[0], alarms[1]);
	cr_expect(alarms[0] <= 11 && alarms[1] <= 11, "%zu, %zu of 100", alarms[0], alarms[1]);
	cr_expect(alarms[0] + alarms[1] >= 1, "an exact test at 0.05 does alarm sometimes");
	{
		double x[] = { 1, 2, 3 };
		size_t len[] = { 3 };
		struct changepoint c;
		cr_expect_eq(stats_newest_change(x, len, 1, NULL, &c), -EINVAL);
	}
	gsl_rng_free(r);
}
