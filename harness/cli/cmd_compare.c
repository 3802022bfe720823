/*
 * cmd_compare.c - `perturb compare A B [C ...]`: stored runs side by side,
 * in the spirit of benchstat.
 *
 * What is computed and printed (medians with their spread, changes over A
 * with their intervals, a geomean row, each variant's dilation against its
 * own run's baseline, the differences between the runs): reports/compare.h.
 * Verdicts come from the intervals alone, as `perturb gate`'s
 * (reports/decide.h, the same code): "~" when the interval of a change
 * holds 0, at the level of Holm's step-down over every change shown.
 *
 * A regression is a raw change of a run over A whose interval lies above
 * the --fail-on-regression threshold t (Holm's step-down over every raw
 * change with the hypotheses "change = t"): the same rule as gate's FAIL,
 * so that compare and gate cannot disagree on the same data.  Every metric
 * is taken as lower-is-better (times, counters, sizes).
 *
 * This command parses the options, opens the runs and judges the
 * regressions.
 */
#include "commands.h"
#include "options.h"
#include "pick.h"
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

/* Open db, pick the run spec names (an id, a label, latest, -N: pick.h)
 * into *pk; an exit status (printed) or 0. */
static int open_run(const char *db, const char *spec, struct store **st, struct pick *pk)
{
	if (access(db, F_OK) < 0) {
		error("no results database at '%s' (run 'perturb run' first, or give --db)", db);
		return EXIT_USAGE;
	}
	if (store_open(db, STORE_READ, st) < 0)
		return EXIT_RUNTIME;
	pk->db = db;
	pk->spec = spec;
	pk->refuse_incomplete = 1;
	return pick_run(*st, pk);
}

int cmd_compare(int argc, char **argv)
{
	struct compare t = { 0 };
	struct pick pk[COMPARE_MAX_RUNS] = { 0 };
	char *notes[COMPARE_MAX_RUNS] = { 0 };
	int allow_incomplete = 0;
	struct decide_item *reg = NULL;
	const char *db = "results/perturb.db", *db_b = NULL, *ids[2] = { 0 };
	char **more = NULL;
	size_t n_more = 0;
	double conf = 0.95, max_reg = NAN;
	long n_reg = 0;
	int ret = EXIT_USAGE, rc;
	struct opt opts[] = {
		OPT_ARG("RUN_A", &ids[0], "the run compared against: an id, latest, or a negative\noffset after --: perturb compare -- -2 -1"),
		OPT_ARG("RUN_B", &ids[1], "the run compared"),
		OPT_ARGS("RUN...", &more, &n_more, "more runs compared with A, one column each"),
		OPT_STRING(0, "db", &db, "PATH",
			   "results database of the runs (default results/perturb.db)"),
		OPT_STRING(0, "db-b", &db_b, "PATH", "results database of B and the runs after it"),
		OPT_LIST(0, "metric", &t.metrics, &t.n_metrics, "M",
			 "only this metric (repeatable, or M,M)"),
		OPT_LEVEL(0, "confidence", &conf, "C",
			  "family-wise level of the intervals' verdicts (default 0.95)"),
		OPT_PERCENT(0, "fail-on-regression", &max_reg, 0, INFINITY, 0, "X",
			    "exit 1 when the interval of a change lies above X\n"
			    "(5% or 0.05), as gate's FAIL; every metric is taken as\n"
			    "lower-is-better"),
		OPT_FLAG(0, "allow-incomplete", &allow_incomplete,
			 "compare runs whose plan is not all stored (killed,\ninterrupted); the output says how much is missing"),
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
		error("compare takes two run ids or more: perturb compare A B [C ...]");
		goto out;
	}
	if (2 + n_more > COMPARE_MAX_RUNS) {
		error("compare takes at most %d runs, got %zu", COMPARE_MAX_RUNS, 2 + n_more);
		goto out;
	}
	t.n_runs = 2 + n_more;
	for (size_t k = 0; k < t.n_runs; k++) {
		const char *s = k < 2 ? ids[k] : more[k - 2];
		pk[k].allow_incomplete = allow_incomplete;
		if ((rc = open_run(k && db_b ? db_b : db, s, &t.runs[k].st, &pk[k]))) {
			ret = rc;
			goto out;
		}
		t.runs[k].id = pk[k].id;
		if ((notes[k] = pick_incomplete_note(&pk[k]))) {
			warning("%s; compared as asked (--allow-incomplete)", notes[k]);
			t.runs[k].incomplete = notes[k];
		}
	}
	/* --metric: a name no run has is a typo (pick.h) */
	if (t.n_metrics) {
		char **have = NULL;
		size_t nh = 0;
		for (size_t k = 0; k < t.n_runs && !rc; k++)
			rc = pick_load_names(t.runs[k].st, t.runs[k].id, PICK_METRIC, &have, &nh);
		if (!rc) {
			struct strbuf where = STRBUF_INIT;
			strbuf_addstr(&where, "runs ");
			for (size_t k = 0; k < t.n_runs; k++)
				strbuf_addf(&where, "%s%" PRId64, !k ? "" : k + 1 < t.n_runs ?
					    ", " : " and ", t.runs[k].id);
			rc = pick_names("--metric", "metric", t.metrics, t.n_metrics, have, nh, 0,
					where.buf);
			strbuf_release(&where);
		}
		pick_names_free(have, nh);
		if (rc) {
			ret = rc;
			goto out;
		}
	}
	ret = EXIT_RUNTIME;
	t.confidence = conf;
	if (compare_build(&t) < 0)
		goto out;
	compare_print(&t, stdout);
	if (isfinite(max_reg)) {
		reg = xcalloc(t.n_rows * t.n_runs + 1, sizeof(*reg));
		if ((n_reg = compare_regressions(&t, max_reg, reg)) < 0)
			goto out;
		for (size_t i = 0; i < t.n_rows; i++)
			for (size_t k = 1; k < t.n_runs; k++) {
				const struct compare_row *c = &t.rows[i];
				const struct decide_item *d = &reg[i * t.n_runs + k];
				if (d->verdict != DECIDE_ABOVE)
					continue;
				warning("regression: %s on %s, %s, run %lld over run %lld: %+.2f%%, "
					"its %.4g%% interval [%+.2f%%, %+.2f%%] above %.2f%%",
					c->variant, c->workload, c->metric, (long long)t.runs[k].id,
					(long long)t.runs[0].id, c->change[k], 100 * d->level, d->lo,
					d->hi, max_reg);
			}
		/* a percentage threshold cannot judge a change that has no
		 * percentage: it fails the comparison, as it fails a gate */
		for (size_t i = 0; i < t.n_rows; i++)
			for (size_t k = 1; k < t.n_runs; k++) {
				const struct compare_row *c = &t.rows[i];
				if (!c->no_pct || !c->has_change[k])
					continue;
				warning("inconclusive (%s): %s on %s, %s, run %lld over run %lld: "
					"difference %+.4g in the metric's unit; %s; "
					"--fail-on-regression %.2f%% cannot judge it",
					DECIDE_NO_PCT_KIND, c->variant, c->workload, c->metric,
					(long long)t.runs[k].id, (long long)t.runs[0].id, c->diff[k],
					DECIDE_NO_PCT, max_reg);
				n_reg++;
			}
	}
	if (!t.n_common)
		warning("the runs have no (workload, variant, metric) in common");
	ret = n_reg ? EXIT_OVERHEAD : EXIT_OK;
out:
	compare_release(&t);
	free(reg);
	free(more);
	free(t.metrics);
	for (size_t k = 0; k < COMPARE_MAX_RUNS; k++) {
		store_close(t.runs[k].st);
		pick_release(&pk[k]);
		free(notes[k]);
	}
	return ret;
}
