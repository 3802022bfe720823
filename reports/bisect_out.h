/*
 * bisect_out.h - what perturb bisect reads from the reports: the verdict
 * on a commit's stored run (the gate's, reports/gate.h) and the closing
 * lines (engine/bisect.h runs the bisect).
 */
#ifndef PERTURB_REPORTS_BISECT_OUT_H
#define PERTURB_REPORTS_BISECT_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "gate.h"
#include "engine/bisect.h"

/*
 * The gate's judgement of run_id by one rule (gate_expand(), gate_judge():
 * Holm over the (variant, workload) pairs the rule matches): GATE_FAIL when
 * one fails, GATE_PASS when every one passes, else GATE_INCONCLUSIVE.
 * *judged (may be NULL): the judgements.  0, or -1 (printed).
 */
int bisect_gate_verdict(struct store *st, int64_t run_id, const struct gate_rule *rule,
			enum gate_verdict *v, size_t *judged);

/*
 * The level at which each look at a commit is judged so that all its
 * looks together keep conf: a commit is judged after its first round and
 * again after each round added while it is undecided, up to max_rounds
 * more, and stopping at the first interval that leaves the threshold
 * would otherwise err more often than 1 - conf (optional stopping: four
 * looks at 95 % each decide wrongly about 12 % of the time at the
 * threshold, Pocock 1977).  Bonferroni over the max_rounds + 1 looks:
 * 1 - (1 - conf) / (max_rounds + 1), e.g. 98.75 % for 95 % and 3 rounds.
 */
double bisect_look_confidence(double conf, int max_rounds);

/*
 * The end of a bisect: each commit measured with its verdict and run; the
 * first bad commit and, for each (workload, variant) of the rule, the
 * change of the dilation from the last good commit measured to it in
 * percentage points with its bootstrap interval (stats_dilation_change(),
 * the rule's statistic and level), or the commits git could not tell
 * apart; what it cost.  st NULL (no database: nothing was run): no
 * dilation change.  0.
 */
int bisect_print(FILE *out, struct store *st, const struct bisect_result *r,
		 const struct gate_rule *rule, const char *repo);

#endif
