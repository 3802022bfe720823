/*
 * cmd_compare.c - `perturb compare A B`: two stored runs side by side, in
 * the spirit of benchstat.
 *
 * For every (workload, variant, metric) that both runs measured (measured,
 * successful runs only): the median of A and of B, the change of the
 * median of B over A in % with its confidence interval (stats_dilation:
 * percentile bootstrap of the two independent samples, quantile 0.5,
 * seeded by the names, so the same databases print the same numbers), and
 * the two-sided Mann-Whitney U p-value (stats_mann_whitney).  The change
 * is printed as "~" when p >= alpha = 1 - confidence (no Holm correction:
 * as benchstat, each row is read on its own).
 *
 * A regression is a significant change whose estimate is above the
 * --fail-on-regression threshold: every metric is taken as lower-is-better
 * (times, counters, sizes).
 *
 * The provenance columns of the two runs (perturb version, kernel release,
 * kernel command line, CPU model, cores, governor, SMT, ASLR) are compared
 * first and every difference is printed above the table: a change of the
 * machine is a change of the result.
 *
 * The rows and their output: reports/compare.h; this command parses the
 * options, opens the runs and judges the regressions.
 */
#include "commands.h"
#include "options.h"
#include "engine/store.h"
#include "reports/compare.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Open db, resolve the run spec (an id, latest, -N) into *id; an exit
 * status (printed) or 0. */
static int open_run(const char *db, const char *spec, struct store **st, int64_t *id)
{
	int usage;

	if (access(db, F_OK) < 0) {
		error("no results database at '%s' (run 'perturb run' first, or give --db)", db);
		return EXIT_USAGE;
	}
	if (store_open(db, STORE_READ, st) < 0)
		return EXIT_RUNTIME;
	if (store_resolve_run(*st, spec, id, &usage) < 0)
		return usage ? EXIT_USAGE : EXIT_RUNTIME;
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	struct store *sa = NULL, *sb = NULL;
	struct compare t = { 0 };
	const char *db = "results/perturb.db", *db_b = NULL, *ids[2] = { 0 };
	int64_t id[2];
	double conf = 0.95, max_reg = NAN;
	size_t n_reg = 0;
	int ret = EXIT_USAGE, rc;
	struct opt opts[] = {
		OPT_ARG("RUN_A", &ids[0], "the run compared against: an id, latest, or a negative\noffset after --: perturb compare -- -2 -1"),
		OPT_ARG("RUN_B", &ids[1], "the run compared"),
		OPT_STRING(0, "db", &db, "PATH",
			   "results database of A (and B; default results/perturb.db)"),
		OPT_STRING(0, "db-b", &db_b, "PATH", "results database of B"),
		OPT_LIST(0, "metric", &t.metrics, &t.n_metrics, "M",
			 "only this metric (repeatable, or M,M)"),
		OPT_LEVEL(0, "confidence", &conf, "C",
			  "level of the intervals and the tests (default 0.95)"),
		OPT_PERCENT(0, "fail-on-regression", &max_reg, 0, INFINITY, 0, "X",
			    "exit 1 when a significant change is above X (5% or\n"
			    "0.05); every metric is taken as lower-is-better"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "no warnings"),
		OPT_END(),
	};

	if ((rc = parse_options(argc, argv, opts, "compare"))) {
		ret = rc < 0 ? EXIT_USAGE : EXIT_OK;
		goto out;
	}
	if (!isnan(max_reg))
		max_reg *= 100;	/* in % */
	if (!ids[1]) {
		error("compare takes two run ids: perturb compare A B");
		goto out;
	}
	if ((rc = open_run(db, ids[0], &sa, &id[0]))) {
		ret = rc;
		goto out;
	}
	if ((rc = open_run(db_b ? db_b : db, ids[1], &sb, &id[1]))) {
		ret = rc;
		goto out;
	}
	ret = EXIT_RUNTIME;
	t.confidence = conf;
	if (compare_build(&t, sa, id[0], sb, id[1]) < 0)
		goto out;
	compare_print(&t, stdout);
	for (size_t i = 0; i < t.n_rows; i++) {
		const struct compare_row *c = &t.rows[i];
		if (c->n[0] && c->n[1] && c->significant && isfinite(max_reg) &&
		    isfinite(c->d.pct) && c->d.pct > max_reg) {
			n_reg++;
			warning("regression: %s on %s, %s: %+.2f%% (over %.2f%%, p=%.3g)",
				c->variant, c->workload, c->metric, c->d.pct, max_reg, c->mw.p);
		}
	}
	if (!t.n_common)
		warning("runs %" PRId64 " and %" PRId64 " have no (workload, variant, metric) in common",
			id[0], id[1]);
	ret = n_reg ? EXIT_OVERHEAD : EXIT_OK;
out:
	compare_release(&t);
	free(t.metrics);
	store_close(sa);
	store_close(sb);
	return ret;
}
