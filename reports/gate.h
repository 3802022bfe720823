/*
 * gate.h - the judging of `perturb gate`: a stored run against dilation
 * thresholds (harness/cli/cmd_gate.c: the command's options, outputs and
 * exit status; the judgements and their outputs: gate_out.h).
 *
 * Each rule is expanded over the run's variants (not the baseline) and
 * workloads its names or globs (fnmatch) match: one judgement per (rule,
 * variant, workload).
 *
 * A judgement compares the confidence interval of the dilation in % of the
 * rule's statistic (report_build: reports/report.h; the intervals are the
 * report's, nothing is recomputed here) with the threshold t:
 *   FAIL          lower bound > t
 *   PASS          upper bound < t
 *   INCONCLUSIVE  the interval contains t, or there is no interval.
 *
 * Multiple judgements: Holm's step-down procedure (Holm, "A simple
 * sequentially rejective multiple test procedure", Scand. J. Statist. 6,
 * 1979) applied to the tests obtained by inverting the intervals.  Each
 * judgement is one hypothesis, "the dilation equals the threshold"; it is
 * rejected at level a (and the judgement decided: PASS or FAIL) when the
 * threshold lies outside the 1 - a interval.  With m judgements of which k
 * are decided so far, every undecided judgement is tested with the
 * interval at level 1 - alpha / (m - k) (alpha = 1 - the rule's
 * confidence); the newly decided ones raise k and the step repeats until a
 * step decides nothing.  Because the intervals of one comparison are
 * nested in the level (the bootstrap resamples are seeded by the run and
 * the comparison's names, so every level reads the same replicates), this
 * is exactly Holm's procedure on the inverted-test p-values, and it keeps
 * the family-wise error rate at alpha.  The first step is Bonferroni
 * (1 - alpha / m); with one judgement the interval is the rule's own.
 * The interval printed is the one of the step that decided the judgement
 * (or of the last step for undecided ones), with its level.
 *
 * More runs for an inconclusive judgement: gate_runs_needed()
 * (reports/gate_out.h), from the half-width on the threshold's side of the
 * estimate and the distance to the threshold, at the judgement's (Holm)
 * level and power GATE_POWER; worded by gate_more_runs().
 */
#ifndef PERTURB_REPORTS_GATE_H
#define PERTURB_REPORTS_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "gate_out.h"
#include "report.h"
#include "engine/config.h"
#include "engine/store.h"

struct gate_model;

/* The judging of one run.  The caller sets st, run_id and o.run_id (the
 * rest zeroed); gate_release() frees the rest (not st). */
struct gate {
	struct store *st;
	int64_t run_id;
	struct report_opts o;		/* the models': the rules' metrics and workloads */
	struct gate_model *cache;	/* the model at each level asked for */
	size_t n_cache, alloc_cache;
	struct gate_judgement *j;	/* the judgements, n_j of them */
	size_t n_j, alloc_j;
};

/* Expand rules over the run's variants (but baseline) and workloads: the
 * judgements g->j, undecided; a rule that matches nothing is warned about. */
void gate_expand(struct gate *g, const struct gate_rule *rules, size_t n_rules,
		 char **variants, size_t nv, char **workloads, size_t nw,
		 const char *baseline);
/* Judge every judgement of g by Holm's step-down: its verdict, interval
 * and level, and for an inconclusive one the runs that would decide it.
 * 0, or -1 (printed; *usage_error set when the store's run is bad input). */
int gate_judge(struct gate *g, int *usage_error);
void gate_release(struct gate *g);
/* A rule from options before they are read: every variant and workload
 * ("*"), wall, p50, level 0.95; no threshold. */
void gate_rule_default(struct gate_rule *r);

#endif
