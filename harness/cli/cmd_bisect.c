/*
 * cmd_bisect.c - `perturb bisect`: find the commit that made a variant's
 * overhead cross a threshold, by git bisect (engine/bisect.h does the
 * bisect, reports/bisect_out.h the judging and the closing lines;
 * docs/history.md).  Exit status: 0 a first bad commit named, 1 undecided
 * (the commits git could not tell apart named), 2 usage, 3 a failure or a
 * stop.
 */
#include "commands.h"
#include "options.h"
#include "pick.h"
#include "engine/bisect.h"
#include "engine/store.h"
#include "reports/bisect_out.h"
#include "lib/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The command's rule, and whether its names were checked against a run. */
struct judging {
	struct gate_rule *rule;
	const struct opt *opts;
	int checked, typo;
	int max_rounds;
};

/* bisect_judge_fn: the gate's verdict by the command's rule.  Its names
 * are checked as perturb gate checks them (pick.h), against the first run
 * measured: a typo ends the bisect at once with exit 2, rather than after
 * every commit was built and run, "undecided". */
static int judge(struct store *st, int64_t run_id, enum bisect_verdict *v, void *arg)
{
	struct judging *j = arg;
	struct gate_rule *r = j->rule, look;
	enum gate_verdict g;

	if (!j->checked++ &&
	    ((opt_given(j->opts, &r->variant) &&
	      pick_names_in(st, run_id, PICK_VARIANT, "--variant", (char *const *)&r->variant,
			    1, 1)) ||
	     (opt_given(j->opts, &r->workload) &&
	      pick_names_in(st, run_id, PICK_WORKLOAD, "--workload", (char *const *)&r->workload,
			    1, 1)) ||
	     (opt_given(j->opts, &r->metric) &&
	      pick_names_in(st, run_id, PICK_METRIC, "--metric", (char *const *)&r->metric,
			    1, 0)))) {
		j->typo = 1;
		return -1;
	}
	/* each look at the level that keeps the rule's over all of them */
	look = *r;
	look.confidence = bisect_look_confidence(r->confidence, j->max_rounds);
	if (bisect_gate_verdict(st, run_id, &look, &g, NULL) < 0)
		return -1;
	*v = g == GATE_FAIL ? BISECT_BAD : g == GATE_PASS ? BISECT_GOOD : BISECT_UNDECIDED;
	return 0;
}

static int parse_statistic(const struct opt *o, const char *val)
{
	if (statistic_parse(val, o->value))
		return error("--statistic takes one of " STATISTIC_NAMES ", got '%s'", val);
	return 0;
}

int cmd_bisect(int argc, char **argv)
{
	struct bisect_opts bo = { .db = "results/perturb.db", .max_rounds = 3 };
	struct bisect_result r = { 0 };
	struct gate_rule rule = { 0 };
	struct judging j;
	struct store *st = NULL;
	int ret = EXIT_USAGE, rc;
	struct opt opts[] = {
		OPT_ARG("STUDY.yaml", &bo.file, "the study run at each commit"),
		OPT_STRING(0, "repo", &bo.repo, "DIR", "the git work tree to bisect (required)"),
		OPT_STRING(0, "good", &bo.good, "REV", "a commit whose overhead is under the threshold"),
		OPT_STRING(0, "bad", &bo.bad, "REV", "a later commit whose overhead is over it"),
		OPT_STRING(0, "build", &bo.build, "CMD",
			   "shell command run in DIR at each commit before the study\n"
			   "(a failure skips the commit)"),
		OPT_STRING(0, "db", &bo.db, "PATH", "results database (default results/perturb.db)"),
		OPT_STRING(0, "variant", (const char **)&rule.variant, "V",
			   "variant name or glob (default *)"),
		OPT_STRING(0, "workload", (const char **)&rule.workload, "W",
			   "workload name or glob (default *)"),
		OPT_STRING(0, "metric", (const char **)&rule.metric, "M", "metric (default wall)"),
		OPT_CALLBACK(0, "statistic", &rule.statistic, parse_statistic, "S",
			     "p0, p50 (default), p80, p99 or mean"),
		OPT_PERCENT(0, "max-dilation", &rule.max_dilation, 0, INFINITY, 0, "X",
			    "the threshold, as perturb gate's (required): a commit\n"
			    "is bad when the interval is above it, good when below"),
		OPT_LEVEL(0, "confidence", &rule.confidence, "C", "level (default 0.95)"),
		OPT_INTEGER(0, "max-rounds", &bo.max_rounds, 0, 1000, "K",
			    "rounds added to an undecided commit (default 3); still\n"
			    "undecided: git bisect skip"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "print only errors and the result"),
		OPT_END(),
	};

	gate_rule_default(&rule);
	if ((rc = parse_options(argc, argv, opts, "bisect"))) {
		ret = rc < 0 ? EXIT_USAGE : EXIT_OK;
		goto out;
	}
	if (!bo.file || !bo.repo || !bo.good || !bo.bad || !bo.build ||
	    !opt_given(opts, &rule.max_dilation)) {
		error("bisect needs STUDY.yaml, --repo, --good, --bad, --build and --max-dilation "
		      "(perturb help bisect)");
		goto out;
	}
	j = (struct judging){ .rule = &rule, .opts = opts, .max_rounds = bo.max_rounds };
	bo.judge = judge;
	bo.judge_arg = &j;
	rc = bisect_run(&bo, &r);
	if (rc > 0 || j.typo)
		goto out;
	ret = EXIT_RUNTIME;
	if (rc < 0 || (access(bo.db, F_OK) == 0 && store_open(bo.db, STORE_READ, &st) < 0))
		goto out;	/* no database: no commit was built */
	bisect_print(stdout, st, &r, &rule, bo.repo);
	ret = r.found ? EXIT_OK : EXIT_OVERHEAD;
out:
	bisect_release(&r);
	if (st)
		store_close(st);
	return ret;
}
