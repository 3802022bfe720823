/*
 * plan.h - the expanded, ordered list of runs of a study.
 *
 * A plan is built once from an experiment and a seed, stored before the first
 * run (so that --resume knows what is left), and walked by the executor.
 * Orders:
 *  - interleaved: rounds; round r holds every (variant, workload) pair that
 *    still has runs left, once.  Within a round the variant order is
 *    shuffled, and within each variant's block the workload order is
 *    shuffled (one variant switch per variant per round, not per run).  The
 *    first `warmup` rounds are warm-up runs.
 *  - sequential: variant by variant (in file order); within a variant,
 *    workload by workload: its warm-ups, then its measured repetitions.
 *  - random: all runs shuffled; for each (variant, workload) the first
 *    `warmup` runs in plan order are the warm-ups.
 *  - duet: rounds of pairs: round r runs the baseline and one other variant
 *    at the same time (the executor starts the two entries of a pair
 *    together, each on a CPU of its own: engine/study.c), once per
 *    workload (workloads shuffled within the round; in each pair the
 *    baseline's entry comes first).  The variants other than the baseline
 *    take the rounds in turn (file order: A B C A B C ...), so each gets
 *    (warmup + repetitions) pairs per workload and the baseline
 *    that many times the number of other variants; the first `warmup`
 *    turns are warm-ups.  The round is the block, so that the report's
 *    paired analysis pairs the two runs of a pair.  Which CPU each side
 *    gets is plan_duet_slot(): the CPUs swap from one pair of a variant
 *    to its next.  Variants must change only their own process (engine/config.c
 *    refuses the rest); boots: cannot happen (boot: is refused).
 *  - boots: N (a boot: variant's, see below) splits every variant's runs
 *    into N blocks, ordered ABBA: block b takes the variants in an order P
 *    (shuffled by the seed for interleaved, file order for sequential) when
 *    b is even and in reverse when odd, so that drift of the machine over
 *    the study falls on every variant alike (A B | B A | A B ...).  A
 *    variant's measured repetition r goes to block floor(r * N / reps);
 *    each block starts with its own `warmup` warm-ups (a fresh boot is
 *    cold).  Within a block the workloads run in rounds (interleaved) or
 *    one after the other (sequential).  All boot: variants that give boots:
 *    must give the same N; variants without it (host ones too) get N
 *    blocks.  order: random does not take boots.
 * A block is what the executor enters and leaves at once: a boot: variant
 * boots once per block.  Blocks: the round (interleaved, duet), 0 (sequential,
 * random: the variant is entered whenever the plan switches to it), the
 * boot (boots: N).
 * Shuffles use GSL's MT19937 (gsl_rng_mt19937) seeded with the seed and
 * gsl_ran_shuffle (Fisher-Yates), so a seed gives the same plan everywhere.
 */
#ifndef PERTURB_PLAN_H
#define PERTURB_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "core/experiment.h"

struct plan_entry {
	int seq;		/* 0-based position in the plan */
	int variant;		/* index into experiment->variants */
	int workload;		/* index into experiment->workloads */
	int repetition;		/* 0-based among measured runs; warm-ups count from 0 too */
	int warmup;		/* 1 = not counted */
	int round;		/* interleaved round (0-based); -1 for other orders;
				 * the block with boots: N */
	int block;		/* entered at once (a boot); see above */
};

struct plan {
	struct plan_entry *e;
	size_t n, alloc;
};

/* Subsets given on the command line: names of variants/workloads to keep
 * (NULL/0 = all).  The baseline is always kept when variants are filtered. */
struct plan_filter {
	char **variants;
	size_t n_variants;
	char **workloads;
	size_t n_workloads;
	int repetitions;	/* > 0 overrides every workload's repetitions */
	int has_warmup;		/* 1: warmup overrides the experiment's */
	int warmup;
};

/* The most runs a plan holds (seqs are ints; every entry is stored). */
#define PLAN_MAX_RUNS 10000000

/* Returns 0, or -1 with err set (unknown name in the filter, a plan of
 * more than PLAN_MAX_RUNS runs). */
int plan_build(const struct experiment *exp, const struct plan_filter *filter,
	       uint64_t seed, struct plan *out, char *err, size_t errlen);
void plan_release(struct plan *p);

/*
 * Append one measured round to p (perturb run --target-ci): every
 * (variant, workload) pair that has a measured entry in p runs once more,
 * its repetition one past its last.  The variant order is shuffled, and
 * the workload order within each variant's block, by MT19937 seeded with
 * seed + round (round = the largest round in p plus one; 0 when p holds no
 * round, i.e. another order), so a seed gives the same extension
 * everywhere.  New entries get seqs p->n, p->n + 1, ..., and the block
 * one past the largest block of p.  Returns how many
 * entries were added (0 when p has no measured entry, or when the round
 * would take p past PLAN_MAX_RUNS).
 */
size_t plan_add_round(struct plan *p, size_t n_variants, size_t n_workloads, uint64_t seed);

/* order: duet: which of the two CPUs the baseline of the pair whose other
 * entry is e (the variant's) runs on, 0 or 1; the variant runs on the
 * other.  The variant's repetition's parity: its warm-ups and its measured
 * runs alternate each on their own. */
int plan_duet_slot(const struct plan_entry *e);

/* A seed drawn from getrandom(2) (never 0). */
uint64_t plan_draw_seed(void);

#endif
