/* Plan ordering and seeding (plan.h). */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/config.h"
#include "engine/plan.h"
#include "backends/qemu_config.h"

/* Computed once with this implementation (GSL MT19937 + gsl_ran_shuffle). */
#define GOLDEN_SEED42 "021102012"

/* An experiment with nv variants and nw workloads, built by hand. */
static struct experiment exp;
static struct variant vars[4];
static struct boot_cfg boots[4];

/* Variant i asks for n boots (a boot: variant's qemu block, boots: n). */
static void set_boots(int i, int n)
{
	boots[i].boots = n;
	vars[i].be = &backend_qemu;
	vars[i].cfg = &boots[i];
}

static struct workload wls[3];
static char *vnames[] = { "base", "v1", "v2", "v3" };
static char *wnames[] = { "w0", "w1", "w2" };

static void mk(size_t nv, size_t nw, enum run_order order, int reps, int warm)
{
	memset(&exp, 0, sizeof(exp));
	memset(vars, 0, sizeof(vars));
	memset(boots, 0, sizeof(boots));
	memset(wls, 0, sizeof(wls));
	for (size_t i = 0; i < nv; i++)
		vars[i].name = vnames[i];
	for (size_t i = 0; i < nw; i++)
		wls[i].name = wnames[i];
	exp.path = "t.yaml";
	exp.variants = vars;
	exp.n_variants = nv;
	exp.workloads = wls;
	exp.n_workloads = nw;
	exp.baseline = "base";
	exp.order = order;
	exp.repetitions = reps;
	exp.warmup = warm;
}

/* Every (variant, workload) has exactly warm warm-ups and reps measured
 * runs, numbered 0..n-1, and seq is the position. */
static void check_counts(const struct plan *p, size_t nv, size_t nw, int reps, int warm)
{
	cr_assert_eq(p->n, nv * nw * (size_t)(reps + warm));
	for (size_t v = 0; v < nv; v++)
		for (size_t w = 0; w < nw; w++) {
			int seen_m[64] = { 0 }, seen_w[64] = { 0 };
			for (size_t i = 0; i < p->n; i++) {
				const struct plan_entry *e = &p->e[i];
				cr_assert_eq(e->seq, (int)i);
				if (e->variant != (int)v || e->workload != (int)w)
					continue;
				if (e->warmup)
					seen_w[e->repetition]++;
				else
					seen_m[e->repetition]++;
			}
			for (int r = 0; r < reps; r++)
				cr_assert_eq(seen_m[r], 1, "v%zu w%zu rep %d", v, w, r);
			for (int r = 0; r < warm; r++)
				cr_assert_eq(seen_w[r], 1);
		}
}

Test(plan, sequential_is_variant_by_variant)
{
	struct plan p;
	char err[256];
	mk(3, 2, ORDER_SEQUENTIAL, 3, 1);
	cr_assert_eq(plan_build(&exp, NULL, 1, &p, err, sizeof(err)), 0);
	check_counts(&p, 3, 2, 3, 1);
	/* file order; warm-up first within each pair */
	for (size_t i = 0; i < p.n; i++) {
		cr_assert_eq(p.e[i].variant, (int)(i / 8));
		cr_assert_eq(p.e[i].workload, (int)((i % 8) / 4));
		cr_assert_eq(p.e[i].warmup, i % 4 == 0);
		cr_assert_eq(p.e[i].round, -1);
	}
	plan_release(&p);
}

Test(plan, interleaved_rounds_hold_every_pair_once)
{
	struct plan p;
	char err[256];
	mk(3, 2, ORDER_INTERLEAVED, 4, 2);
	cr_assert_eq(plan_build(&exp, NULL, 42, &p, err, sizeof(err)), 0);
	check_counts(&p, 3, 2, 4, 2);
	for (int round = 0; round < 6; round++) {
		int pairs[3][2] = { { 0 } };
		for (size_t i = 0; i < p.n; i++)
			if (p.e[i].round == round) {
				pairs[p.e[i].variant][p.e[i].workload]++;
				cr_assert_eq(p.e[i].warmup, round < 2);
			}
		for (int v = 0; v < 3; v++)
			for (int w = 0; w < 2; w++)
				cr_assert_eq(pairs[v][w], 1, "round %d v%d w%d", round, v, w);
	}
	/* rounds are contiguous and increasing */
	for (size_t i = 1; i < p.n; i++)
		cr_assert_geq(p.e[i].round, p.e[i - 1].round);
	/* within a round, a variant's runs are contiguous: one switch per variant */
	int switches = 0;
	for (size_t i = 1; i < p.n; i++)
		switches += p.e[i].variant != p.e[i - 1].variant;
	cr_assert_leq(switches, 6 * 3);
	plan_release(&p);
}

Test(plan, seed_decides_order_reproducibly)
{
	struct plan a, b, c;
	char err[256];
	mk(4, 3, ORDER_INTERLEAVED, 10, 1);
	cr_assert_eq(plan_build(&exp, NULL, 7, &a, err, sizeof(err)), 0);
	cr_assert_eq(plan_build(&exp, NULL, 7, &b, err, sizeof(err)), 0);
	cr_assert_eq(plan_build(&exp, NULL, 8, &c, err, sizeof(err)), 0);
	cr_assert_eq(a.n, b.n);
	cr_assert(!memcmp(a.e, b.e, a.n * sizeof(*a.e)));
	cr_assert(memcmp(a.e, c.e, a.n * sizeof(*a.e)) != 0);
	/* the shuffle is not the identity over all rounds */
	int moved = 0;
	for (size_t i = 1; i < a.n; i++)
		moved += a.e[i].variant < a.e[i - 1].variant && a.e[i].round == a.e[i - 1].round;
	cr_assert_gt(moved, 0);
	plan_release(&a);
	plan_release(&b);
	plan_release(&c);
}

/* Golden order for one seed: guards against an accidental change of the
 * shuffle (a stored seed must give the same plan in every version). */
Test(plan, golden_order_seed_42)
{
	struct plan p;
	char err[256];
	mk(3, 1, ORDER_INTERLEAVED, 3, 0);
	cr_assert_eq(plan_build(&exp, NULL, 42, &p, err, sizeof(err)), 0);
	char got[64] = "";
	for (size_t i = 0; i < p.n; i++)
		got[i] = (char)('0' + p.e[i].variant);
	cr_assert_str_eq(got, GOLDEN_SEED42);
	plan_release(&p);
}

Test(plan, random_numbers_warmups_first)
{
	struct plan p;
	char err[256];
	mk(2, 3, ORDER_RANDOM, 5, 2);
	cr_assert_eq(plan_build(&exp, NULL, 3, &p, err, sizeof(err)), 0);
	check_counts(&p, 2, 3, 5, 2);
	for (size_t v = 0; v < 2; v++)
		for (size_t w = 0; w < 3; w++) {
			int k = 0;
			for (size_t i = 0; i < p.n; i++) {
				if (p.e[i].variant != (int)v || p.e[i].workload != (int)w)
					continue;
				cr_assert_eq(p.e[i].warmup, k < 2);
				cr_assert_eq(p.e[i].repetition, k < 2 ? k : k - 2);
				k++;
			}
		}
	plan_release(&p);
}

Test(plan, per_workload_repetitions_and_override)
{
	struct plan p;
	char err[256];
	mk(2, 2, ORDER_INTERLEAVED, 3, 0);
	wls[1].repetitions = 5;
	cr_assert_eq(plan_build(&exp, NULL, 1, &p, err, sizeof(err)), 0);
	cr_assert_eq(p.n, 2 * 3 + 2 * 5);
	plan_release(&p);
	struct plan_filter f = { .repetitions = 2 };
	cr_assert_eq(plan_build(&exp, &f, 1, &p, err, sizeof(err)), 0);
	cr_assert_eq(p.n, 2 * 2 * 2);
	plan_release(&p);
}

Test(plan, filters_keep_baseline_and_reject_unknown_names)
{
	struct plan p;
	char err[256];
	char *only_v[] = { "v2" }, *only_w[] = { "w1" }, *bad[] = { "nope" };
	mk(3, 2, ORDER_SEQUENTIAL, 2, 0);
	struct plan_filter f = { .variants = only_v, .n_variants = 1,
				 .workloads = only_w, .n_workloads = 1 };
	cr_assert_eq(plan_build(&exp, &f, 1, &p, err, sizeof(err)), 0);
	cr_assert_eq(p.n, 2 * 1 * 2);
	for (size_t i = 0; i < p.n; i++) {
		cr_assert(p.e[i].variant == 0 || p.e[i].variant == 2);
		cr_assert_eq(p.e[i].workload, 1);
	}
	plan_release(&p);
	struct plan_filter g = { .variants = bad, .n_variants = 1 };
	cr_assert_eq(plan_build(&exp, &g, 1, &p, err, sizeof(err)), -1);
	cr_assert(strstr(err, "no variant named 'nope'"), "%s", err);
	cr_assert(strstr(err, "known: base, v1, v2"), "%s", err);
	cr_assert_eq(p.n, 0);
}

Test(plan, drawn_seed_is_nonzero_and_json_safe)
{
	for (int i = 0; i < 100; i++) {
		uint64_t s = plan_draw_seed();
		cr_assert_neq(s, 0);
		cr_assert_lt(s, 1ULL << 53);
	}
}

/* boots: N - every (variant, block) is one contiguous stretch: warm-ups
 * first, then its share of the repetitions; the variant order of block b
 * is the reverse of block b - 1's (ABBA). */
static void check_blocks(const struct plan *p, size_t nv, size_t nw, int reps, int warm,
			 int nb)
{
	int first[4][8];

	check_counts(p, nv, nw, reps, warm * nb);
	memset(first, -1, sizeof(first));
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->e[i];
		cr_assert_eq(e->round, e->block);
		cr_assert(e->block >= 0 && e->block < nb);
		if (first[e->variant][e->block] < 0)
			first[e->variant][e->block] = (int)i;
		/* contiguous: the entry before is the same block or another variant's */
		if (i && p->e[i - 1].variant == e->variant && p->e[i - 1].block != e->block)
			cr_assert_eq(first[e->variant][e->block], (int)i);
		if (i && first[e->variant][e->block] != (int)i)
			cr_assert(p->e[i - 1].variant == e->variant &&
				  p->e[i - 1].block == e->block, "seq %zu breaks its block", i);
		/* repetition r of reps is in block floor(r * nb / reps) */
		if (!e->warmup)
			cr_assert_eq(e->block, e->repetition * nb / reps, "seq %zu", i);
		else
			cr_assert_eq(e->block, e->repetition / warm);
	}
	for (int b = 0; b + 1 < nb; b++)
		for (size_t v = 0; v < nv; v++)
			for (size_t u = 0; u < nv; u++)
				if (first[v][b] < first[u][b])
					cr_assert_gt(first[v][b + 1], first[u][b + 1],
						     "block %d: v%zu before v%zu, and again", b, v, u);
	/* within a block, a workload's warm-ups come before its measured runs */
	for (size_t i = 0; i < p->n; i++)
		for (size_t k = i + 1; k < p->n && p->e[i].warmup == 0; k++)
			if (p->e[k].variant == p->e[i].variant && p->e[k].block == p->e[i].block &&
			    p->e[k].workload == p->e[i].workload)
				cr_assert(!p->e[k].warmup, "seq %zu: warm-up after run %zu", k, i);
}

Test(plan, boots_sequential_is_abba)
{
	struct plan p;
	char err[256];
	mk(2, 2, ORDER_SEQUENTIAL, 10, 1);
	set_boots(1, 3);
	cr_assert_eq(plan_build(&exp, NULL, 1, &p, err, sizeof(err)), 0, "%s", err);
	check_blocks(&p, 2, 2, 10, 1, 3);
	/* file order first: base v1 | v1 base | base v1 */
	cr_assert_eq(p.e[0].variant, 0);
	const int want[] = { 0, 1, 1, 0, 0, 1 };
	for (size_t i = 0, k = 0; i < p.n; i++)
		if (!i || p.e[i].variant != p.e[i - 1].variant || p.e[i].block != p.e[i - 1].block)
			cr_assert_eq(p.e[i].variant, want[k++], "stretch at seq %zu", i);
	/* 10 repetitions over 3 boots: 4, 3, 3 */
	int per[3] = { 0 };
	for (size_t i = 0; i < p.n; i++)
		per[p.e[i].block] += p.e[i].variant == 0 && p.e[i].workload == 0 && !p.e[i].warmup;
	cr_assert(per[0] == 4 && per[1] == 3 && per[2] == 3);
	plan_release(&p);
}

Test(plan, boots_interleaved_is_abba_and_seeded)
{
	struct plan p, q;
	char err[256];
	mk(3, 3, ORDER_INTERLEAVED, 4, 1);
	set_boots(0, 4);
	set_boots(2, 4);
	cr_assert_eq(plan_build(&exp, NULL, 9, &p, err, sizeof(err)), 0, "%s", err);
	check_blocks(&p, 3, 3, 4, 1, 4);
	cr_assert_eq(plan_build(&exp, NULL, 9, &q, err, sizeof(err)), 0);
	cr_assert_eq(memcmp(p.e, q.e, p.n * sizeof(*p.e)), 0, "same seed, same plan");
	plan_release(&p);
	plan_release(&q);
}

Test(plan, boots_must_agree_and_not_be_random)
{
	struct plan p;
	char err[256];
	mk(2, 1, ORDER_SEQUENTIAL, 4, 0);
	set_boots(0, 2);
	vars[0].cfg_pos = (struct pos){ "t.yaml", 4, 11 };
	set_boots(1, 3);
	vars[1].cfg_pos = (struct pos){ "t.yaml", 7, 11 };
	cr_assert_eq(plan_build(&exp, NULL, 1, &p, err, sizeof(err)), -1);
	cr_assert(strstr(err, "t.yaml:7:11: variant 'v1' asks for boots: 3 and variant 'base' "
			 "for boots: 2"), "%s", err);
	set_boots(1, 2);
	exp.order = ORDER_RANDOM;
	cr_assert_eq(plan_build(&exp, NULL, 1, &p, err, sizeof(err)), -1);
	cr_assert(strstr(err, "boots: 2 needs order: interleaved or sequential"), "%s", err);
}

Test(plan, target_ci_rounds_get_a_new_block)
{
	struct plan p;
	char err[256];
	mk(2, 1, ORDER_SEQUENTIAL, 2, 0);
	cr_assert_eq(plan_build(&exp, NULL, 1, &p, err, sizeof(err)), 0);
	for (size_t i = 0; i < p.n; i++)
		cr_assert_eq(p.e[i].block, 0);
	cr_assert_eq(plan_add_round(&p, 2, 1, 1), 2);
	cr_assert_eq(p.e[p.n - 1].block, 1);
	cr_assert_eq(p.e[p.n - 2].block, 1);
	plan_release(&p);
}

/*
 * A plan past PLAN_MAX_RUNS is refused before it is built, its size
 * counted in 64 bits: INT_MAX repetitions (once taken, and added to the
 * warm-ups in an int) and a product of counts each within its range.
 */
Test(plan, a_plan_too_big_is_refused_before_it_is_built)
{
	static const struct { size_t nv, nw; int reps, warm, boots; } big[] = {
		{ 1, 1, 2147483647, 1, 1 },
		{ 4, 3, 1000000, 1000000, 1 },
		{ 2, 1, 1000000, 1000000, 10000 },
	};
	struct plan p;
	char err[256];

	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		for (enum run_order o = ORDER_INTERLEAVED; o <= ORDER_RANDOM; o++) {
			mk(big[i].nv, big[i].nw, o, big[i].reps, big[i].warm);
			if (big[i].boots > 1) {
				if (o == ORDER_RANDOM)
					continue;
				set_boots(0, big[i].boots);
				set_boots(1, big[i].boots);
			}
			err[0] = 0;
			cr_assert_eq(plan_build(&exp, NULL, 1, &p, err, sizeof(err)), -1,
				     "case %zu order %d was built", i, (int)o);
			cr_expect(strstr(err, "t.yaml: the plan has ") &&
				  strstr(err, "runs (variants x workloads x (warmup + "
					 "repetitions)), more than 10000000"), "%s", err);
			cr_assert_eq(p.n, 0);
		}
	}
}
