/*
 * nested3: three-level variance components and the three-stage bootstrap
 * (stats/nested.c: runs in boots in nodes, docs/distributed.md).
 * Expected values worked out by hand from small integer data.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "stats/nested.h"

/* 2 nodes x 2 boots x 2 runs:
 *   node 0: boot 0: 1, 3   boot 1: 5, 7     node 1: boot 2: 11, 13   boot 3: 15, 17
 * boot means 2, 6, 12, 16; node means 4, 14; grand mean 9.
 * SSW = 8 (df 4, MSW 2); SSB = 2 (4 + 4 + 4 + 4) = 32 (df 2, MSB 16);
 * SSN = 4 (25 + 25) = 200 (df 1, MSN 200).
 * c1 = (8 - (8/4 + 8/4)) / 2 = 2, c2 = (4 - 16/8) / 1 = 2, c3 = (8 - 32/8) / 1 = 4:
 * s_w^2 = 2, s_b^2 = (16 - 2) / 2 = 7, s_n^2 = (200 - 2 - 2 * 7) / 4 = 46. */
static const double x8[] = { 1, 3, 5, 7, 11, 13, 15, 17 };
static const int node8[] = { 0, 0, 0, 0, 1, 1, 1, 1 };
static const int boot8[] = { 0, 0, 1, 1, 2, 2, 3, 3 };

Test(nested3, balanced_components_by_hand)
{
	struct nested3_result r;

	cr_assert_eq(nested3_components(x8, node8, boot8, 8, &r), 0);
	cr_assert(r.ok, "%s", r.reason);
	cr_expect_eq(r.n_nodes, 2);
	cr_expect_eq(r.n_boots, 4);
	cr_expect_float_eq(r.ms_within, 2, 1e-12);
	cr_expect_float_eq(r.ms_boot, 16, 1e-12);
	cr_expect_float_eq(r.ms_node, 200, 1e-12);
	cr_expect_float_eq(r.var_within, 2, 1e-12);
	cr_expect_float_eq(r.var_boot, 7, 1e-12);
	cr_expect_float_eq(r.var_node, 46, 1e-12);
	cr_expect_float_eq(r.share_node, 46.0 / 55, 1e-12);
	cr_expect_float_eq(r.share_boot, 7.0 / 55, 1e-12);
	cr_expect_float_eq(r.share_within, 2.0 / 55, 1e-12);
}

/* The order of the input does not matter, nor the ids' values. */
Test(nested3, order_and_ids_do_not_matter)
{
	const double x[] = { 17, 1, 13, 5, 3, 15, 7, 11 };
	const int node[] = { 9, -4, 9, -4, -4, 9, -4, 9 };
	const int boot[] = { 7, 1, 5, 2, 1, 7, 2, 5 };
	struct nested3_result r;

	cr_assert_eq(nested3_components(x, node, boot, 8, &r), 0);
	cr_expect_float_eq(r.var_node, 46, 1e-12);
	cr_expect_float_eq(r.var_boot, 7, 1e-12);
	cr_expect_float_eq(r.var_within, 2, 1e-12);
}

/* Unbalanced: node 0 has boots of 2 and 1 runs, node 1 one boot of 3:
 * x = 1, 3 | 8 ; 10, 12, 14.  n_kb = 2, 1, 3; n_k = 3, 3; N = 6, B = 3, K = 2.
 * boot means 2, 8, 12; node means 4, 12; grand mean 8.
 * SSW = 2 + 0 + 8 = 10 (df 3); SSB = 2 * 4 + 1 * 16 + 0 = 24 (df 1);
 * SSN = 3 * 16 + 3 * 16 = 96 (df 1).
 * S_0 = 5, S_1 = 9: c1 = (6 - 5/3 - 9/3) / 1 = 4/3; c2 = (14/3 - 14/6) / 1 = 7/3;
 * c3 = (6 - 18/6) / 1 = 3.  s_w^2 = 10/3, s_b^2 = (24 - 10/3) * 3/4 = 15.5,
 * s_n^2 = (96 - 10/3 - 7/3 * 15.5) / 3 = (96 - 10/3 - 108.5/3) / 3. */
Test(nested3, unbalanced_by_hand)
{
	const double x[] = { 1, 3, 8, 10, 12, 14 };
	const int node[] = { 0, 0, 0, 1, 1, 1 };
	const int boot[] = { 0, 0, 1, 2, 2, 2 };
	struct nested3_result r;

	cr_assert_eq(nested3_components(x, node, boot, 6, &r), 0);
	cr_assert(r.ok, "%s", r.reason);
	cr_expect_float_eq(r.var_within, 10.0 / 3, 1e-12);
	cr_expect_float_eq(r.var_boot, 15.5, 1e-12);
	cr_expect_float_eq(r.var_node, (96 - 10.0 / 3 - 108.5 / 3) / 3, 1e-12);
}

Test(nested3, too_little_data_is_said)
{
	struct nested3_result r;
	const int one_node[] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	const int boot_per_node[] = { 0, 0, 0, 0, 1, 1, 1, 1 };

	cr_assert_eq(nested3_components(x8, one_node, boot8, 8, &r), 0);
	cr_expect(!r.ok && strstr(r.reason, "one node"));
	/* one boot per node: two levels.  Node means 4, 14, grand 9: MSN =
	 * 4 (25 + 25) / 1 = 200, MSW = (20 + 20) / 6, c3 = (8 - 32/8) / 1 = 4:
	 * s_n^2 = (200 - 40/6) / 4. */
	cr_assert_eq(nested3_components(x8, node8, boot_per_node, 8, &r), 0);
	cr_expect(r.ok && strstr(r.reason, "one boot per node"));
	cr_expect_float_eq(r.var_within, 40.0 / 6, 1e-12);
	cr_expect_float_eq(r.var_node, (200 - 40.0 / 6) / 4, 1e-12);
	cr_expect(isnan(r.var_boot) && isnan(r.share_boot));
	cr_expect_float_eq(r.share_node + r.share_within, 1, 1e-12);
	cr_assert_eq(nested3_components(x8, node8, (const int[]){ 0, 1, 2, 3, 4, 5, 6, 7 }, 8, &r), 0);
	cr_expect(!r.ok && strstr(r.reason, "one run per boot"));
	const double bad[] = { 1, NAN };
	cr_expect_eq(nested3_components(bad, node8, boot8, 2, &r), -EDOM);
	cr_expect_eq(nested3_components(NULL, node8, boot8, 2, &r), -EINVAL);
}

/* A variant 10 % slower on every node: the interval holds 10 %; with
 * nodes that differ a lot, resampling nodes widens it over the two-stage
 * interval that ignores them. */
Test(nested3, dilation_ci_resamples_nodes)
{
	enum { K = 4, NB = 3, R = 5, N = K * NB * R };
	double b[N], v[N];
	int node[N], boot[N];
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct boot_opts o = { .B = 2000, .seed = 1, .conf = 0.95 };
	struct dilation d3 = { .pct = 10 }, d2 = { .pct = 10 };

	gsl_rng_set(rng, 42);
	for (int i = 0; i < N; i++) {
		int k = i / (NB * R), bt = i / R;
		double base = 100 + 20 * k + 2 * gsl_rng_uniform(rng) + (bt % 2);
		node[i] = k;
		boot[i] = bt;
		b[i] = base + gsl_rng_uniform(rng);
		v[i] = 1.1 * (base + gsl_rng_uniform(rng));
	}
	cr_assert_eq(nested3_dilation_ci(b, node, boot, N, v, node, boot, N, STATK_MEAN, 0, &o,
					 &d3), 0);
	cr_assert(d3.ci_pct.has_ci);
	cr_expect(d3.ci_pct.lo < 10 && d3.ci_pct.hi > 10, "[%g, %g]", d3.ci_pct.lo, d3.ci_pct.hi);
	cr_assert_eq(nested_dilation_ci(b, boot, N, v, boot, N, STATK_MEAN, 0, &o, &d2), 0);
	cr_expect_gt(d3.ci_pct.hi - d3.ci_pct.lo, d2.ci_pct.hi - d2.ci_pct.lo,
		     "three-stage [%g, %g], two-stage [%g, %g]", d3.ci_pct.lo, d3.ci_pct.hi,
		     d2.ci_pct.lo, d2.ci_pct.hi);
	cr_expect(strstr(d3.ci_pct.method, "nodes drawn"));
	gsl_rng_free(rng);
}
