/*
 * cmd_report.c - `perturb report`: tables and plots from a stored run.
 * Option values are checked here (a bad one exits 2 before the database is
 * opened); reports/report.c computes, reports/render_*.c format.
 */
#include "commands.h"
#include "options.h"
#include "pick.h"
#include "reports/report.h"
#include "engine/store.h"
#include "lib/output.h"
#include "lib/util.h"
#include "stats/stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* --percentiles "0,50,80,99" into the report_opts' percentiles, ascending;
 * -1 (printed) on bad input. */
static int parse_percentiles(const struct opt *opt, const char *val)
{
	struct report_opts *o = opt->value;
	char *copy = xstrdup(val), *save = NULL, *tok;
	int ret = -1;

	o->n_percentiles = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		double p;
		while (*tok == ' ')
			tok++;
		if (parse_double(tok, &p) || p < 0 || p > 100) {
			error("--percentiles takes numbers from 0 to 100 separated by commas, got '%s'",
			      tok);
			goto out;
		}
		if (o->n_percentiles == REPORT_MAX_PERCENTILES) {
			error("--percentiles takes at most %d percentiles", REPORT_MAX_PERCENTILES);
			goto out;
		}
		for (size_t i = 0; i < o->n_percentiles; i++)
			if (o->percentiles[i] == p) {
				error("--percentiles: %g is given twice", p);
				goto out;
			}
		o->percentiles[o->n_percentiles++] = p;
	}
	if (!o->n_percentiles) {
		error("--percentiles takes at least one percentile, e.g. 0,50,80,99");
		goto out;
	}
	qsort(o->percentiles, o->n_percentiles, sizeof(double), cmp_double);
	ret = 0;
out:
	free(copy);
	return ret;
}

/* --statistic median | mean | pN (stats_statistic_parse; N one of the
 * percentiles, checked later). */
static int parse_statistic(const struct opt *opt, const char *val)
{
	struct report_opts *o = opt->value;
	struct stats_statistic st;

	if (stats_statistic_parse(val, &st))
		return error("--statistic takes median, mean or pN (a percentile, e.g. p99), got '%s'",
			     val);
	o->statistic = st.is_mean ? REPORT_STAT_MEAN
		     : st.p == 50 ? REPORT_STAT_MEDIAN : REPORT_STAT_PERCENTILE;
	o->statistic_p = st.p;
	return 0;
}

/* Colour: the text report (or summary) on a terminal, unless NO_COLOR
 * (no-color.org) or TERM=dumb says otherwise. */
static int want_color(const char *format, const char *output)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
	if ((strcmp(format, "text") && strcmp(format, "summary")) || output || (nc && *nc) ||
	    (term && !strcmp(term, "dumb")))
		return 0;
	return isatty(STDOUT_FILENO);
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct report_model m = { 0 };
	struct pick pk = { 0 };
	struct store *st = NULL;
	const char *db = "results/perturb.db", *format = "text", *output = NULL, *run = NULL;
	const struct renderer *r;
	struct output dest = { 0 };
	FILE *out = stdout;
	int ret = EXIT_USAGE, rc, usage_error;
	struct opt opts[] = {
		OPT_STRING(0, "db", &db, "PATH", "results database (default results/perturb.db)"),
		OPT_STRING(0, "run", &run, "ID",
			   "a stored run: its id, latest (the default), or a\nnegative offset: -1 the latest, -2 the one before"),
		OPT_STRING(0, "baseline", &o.baseline, "NAME",
			   "variant to compare against (default: the run's)"),
		OPT_LIST(0, "metric", &o.metrics, &o.n_metrics, "M",
			 "only this metric (repeatable, or M,M)"),
		OPT_LIST(0, "workload", &o.workloads, &o.n_workloads, "W",
			 "only this workload (repeatable, or W,W)"),
		OPT_STRING(0, "format", &format, "F",
			   "text (default), markdown, csv, csv-curves, json, html or summary"),
		OPT_STRING(0, "output", &output, "FILE", "write to FILE instead of standard output"),
		OPT_CALLBACK(0, "percentiles", &o, parse_percentiles, "LIST",
			     "percentiles of the dilation table (default 0,50,80,99)"),
		OPT_LEVEL(0, "confidence", &o.confidence, "C",
			  "level of every interval (default 0.95; also 95%)"),
		OPT_COUNT(0, "bootstrap", &o.bootstrap, R_BOOTSTRAP, "N",
			    "bootstrap resamples (default 2000)"),
		OPT_FLAG(0, "bca", &o.bca, "BCa instead of percentile bootstrap intervals"),
		OPT_COUNT(0, "max-bootstrap-n", &o.max_boot_n, R_MAX_BOOTSTRAP_N, "N",
			    "above this many runs use asymptotic intervals"),
		OPT_CALLBACK(0, "statistic", &o, parse_statistic, "S",
			     "median, mean or pN for the configurations table"),
		OPT_STRING(0, "config-metric", &o.config_metric, "M",
			   "every workload's primary metric, the answer's (default:\nthe workload's primary:, else wall)"),
		OPT_FLAG(0, "all-metrics", &o.all_metrics,
			 "the detail of every metric, not only the primary ones"),
		OPT_FLAG(0, "include-warmup", &o.include_warmup, "csv: include warm-up runs"),
		OPT_FLAG(0, "include-failed", &o.include_failed,
			 "csv: include failed runs, with a status column"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "no warnings"),
		OPT_END(),
	};


	if ((rc = parse_options(argc, argv, opts, "report"))) {
		ret = rc < 0 ? EXIT_USAGE : EXIT_OK;
		goto out;
	}
	if (!(r = renderer_find(format))) {
		error("unknown format '%s' (known: %s)", format, renderer_names());
		goto out;
	}
	if (o.statistic == REPORT_STAT_PERCENTILE) {
		static const double def_pct[] = { 0, 50, 80, 99 };
		const double *ps = o.n_percentiles ? o.percentiles : def_pct;
		size_t n = o.n_percentiles ? o.n_percentiles : ARRAY_SIZE(def_pct), k;
		for (k = 0; k < n && ps[k] != o.statistic_p; k++)
			;
		if (k == n) {
			error("--statistic p%g: %g is not one of the report's percentiles "
			      "(add it to --percentiles)", o.statistic_p, o.statistic_p);
			goto out;
		}
	}
	report_opts_for(&o, r);
	o.color = want_color(format, output);
	o.db = strcmp(db, "results/perturb.db") ? db : NULL;	/* for the commands it suggests */
	if (access(db, F_OK) < 0) {
		error("no results database at '%s' (run 'perturb run' first, or give --db)", db);
		goto out;
	}
	if (output) {
		struct output_inputs in = { 0 };
		output_inputs_add_db(&in, db);
		rc = output_check(output, "--output", &in);
		output_inputs_release(&in);
		if (rc < 0)
			goto out;
	}
	if (store_open(db, STORE_READ, &st) < 0) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	pk.db = db;
	pk.spec = run;
	if ((rc = pick_run(st, &pk))) {
		ret = rc;
		goto out;
	}
	o.run_id = pk.id;
	o.run_status = pk.status;
	/* a name that matches nothing is a typo, not an empty report */
	if ((rc = pick_names_in(st, o.run_id, PICK_METRIC, "--metric", o.metrics, o.n_metrics,
				0)) ||
	    (rc = pick_names_in(st, o.run_id, PICK_WORKLOAD, "--workload", o.workloads,
				o.n_workloads, 0))) {
		ret = rc;
		goto out;
	}
	if (report_build(st, &o, &m, &usage_error) < 0) {
		ret = usage_error ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	ret = EXIT_RUNTIME;
	/* lib/output.h: a file renamed into place, a device written where it is */
	if (output) {
		if (output_open(&dest, output) < 0)
			goto out;
		out = dest.f;
	}
	if (r->render(&m, out) < 0)
		goto out;
	if (output) {
		out = stdout;
		if (output_close(&dest) < 0)
			goto out;
	}
	ret = EXIT_OK;
out:
	output_abort(&dest);
	report_release(&m);
	pick_release(&pk);
	if (st)
		store_close(st);
	free(o.metrics);
	free(o.workloads);
	return ret;
}
